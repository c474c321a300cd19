; C++.
(class_specifier name: (type_identifier) @name body: (field_declaration_list)) @class
(struct_specifier name: (type_identifier) @name body: (field_declaration_list)) @class
(enum_specifier name: (type_identifier) @name body: (enumerator_list)) @class
(namespace_definition name: (namespace_identifier) @name) @module_block
(namespace_definition name: (nested_namespace_specifier) @name) @module_block

(function_definition declarator: (function_declarator declarator: (identifier) @name)) @function
(function_definition declarator: (function_declarator declarator: (field_identifier) @name)) @function
(function_definition declarator: (function_declarator declarator: (qualified_identifier name: (identifier) @name))) @function
(function_definition declarator: (function_declarator declarator: (qualified_identifier name: (qualified_identifier name: (identifier) @name)))) @function
(function_definition declarator: (function_declarator declarator: (qualified_identifier name: (qualified_identifier name: (qualified_identifier name: (identifier) @name))))) @function
(function_definition declarator: (function_declarator declarator: (destructor_name) @name)) @function
(function_definition declarator: (reference_declarator (function_declarator declarator: (identifier) @name))) @function
(function_definition declarator: (pointer_declarator declarator: (function_declarator declarator: (identifier) @name))) @function
(field_declaration_list (declaration declarator: (function_declarator declarator: (field_identifier) @name)) @function)
(field_declaration_list (field_declaration declarator: (function_declarator declarator: (field_identifier) @name)) @function)

(preproc_def name: (identifier) @name) @variable

(preproc_include path: (string_literal (string_content) @module)) @import
(preproc_include path: (system_lib_string) @module) @import

(call_expression function: (identifier) @call.name)
(call_expression function: (field_expression field: (field_identifier) @call.method))
(call_expression function: (qualified_identifier name: (identifier) @call.name))

(base_class_clause (type_identifier) @base)
