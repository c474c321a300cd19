; TypeScript, also used for TSX (the tsx grammar has the same node types).
(class_declaration name: (type_identifier) @name) @class
(abstract_class_declaration name: (type_identifier) @name) @class
(interface_declaration name: (type_identifier) @name) @class
(enum_declaration name: (identifier) @name) @class
(type_alias_declaration name: (type_identifier) @name) @class

(function_declaration name: (identifier) @name) @function
(generator_function_declaration name: (identifier) @name) @function
(function_signature name: (identifier) @name) @function
(method_definition name: [(property_identifier) (private_property_identifier)] @name) @function
(method_signature name: (property_identifier) @name) @function
(abstract_method_signature name: (property_identifier) @name) @function
(variable_declarator name: (identifier) @name value: [(arrow_function) (function_expression)]) @function
(assignment_expression left: (member_expression property: [(property_identifier) (private_property_identifier)] @name) right: [(arrow_function) (function_expression)]) @function
(pair key: (property_identifier) @name value: [(arrow_function) (function_expression)]) @function
(public_field_definition name: (property_identifier) @name value: [(arrow_function) (function_expression)]) @function

(program (lexical_declaration (variable_declarator name: (identifier) @name value: (_) @value)) @variable)
(program (export_statement (lexical_declaration (variable_declarator name: (identifier) @name value: (_) @value)) @variable))

(import_statement source: (string (string_fragment) @module)) @import
(export_statement source: (string (string_fragment) @module)) @import

(call_expression function: (identifier) @call.name)
(call_expression function: (member_expression property: (property_identifier) @call.method))
(new_expression constructor: (identifier) @call.name)

; a function named as a value (a callback, `const add = previous ? addToStart : addToEnd`): a reference the
; parser keeps only when the name is imported into the file or defined at its top level
(arguments (identifier) @call.value)
(ternary_expression consequence: (identifier) @call.value)
(ternary_expression alternative: (identifier) @call.value)
(variable_declarator value: (identifier) @call.value)
(pair value: (identifier) @call.value)
(assignment_expression right: (identifier) @call.value)
(array (identifier) @call.value)
(return_statement (identifier) @call.value)

(extends_clause value: (identifier) @base)
(implements_clause (type_identifier) @base)
(extends_type_clause type: (type_identifier) @base)
