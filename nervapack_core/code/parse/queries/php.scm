; PHP. `namespace App\Billing;` qualifies what follows it in the file (see parser.py), and
; `namespace App\Billing { ... }` what it holds.
(namespace_definition name: (namespace_name) @name) @module_block

(class_declaration name: (name) @name) @class
(interface_declaration name: (name) @name) @class
(trait_declaration name: (name) @name) @class
(enum_declaration name: (name) @name) @class

(method_declaration name: (name) @name) @function
(function_definition name: (name) @name) @function

(program (const_declaration (const_element (name) @name)) @variable)

(namespace_use_clause (qualified_name) @module) @import
(namespace_use_clause . (name) @module) @import

(function_call_expression function: (name) @call.name)
(function_call_expression function: (qualified_name (name) @call.name))
(member_call_expression name: (name) @call.method)
(nullsafe_member_call_expression name: (name) @call.method)
(scoped_call_expression name: (name) @call.method)
(object_creation_expression (name) @call.name)
(object_creation_expression (qualified_name (name) @call.name))

(base_clause (name) @base)
(base_clause (qualified_name (name) @base))
(class_interface_clause (name) @base)
(class_interface_clause (qualified_name (name) @base))
