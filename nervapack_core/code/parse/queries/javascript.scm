; JavaScript, also used for JSX (the javascript grammar parses JSX).
(class_declaration name: (identifier) @name) @class
(class name: (identifier) @name) @class

(function_declaration name: (identifier) @name) @function
(generator_function_declaration name: (identifier) @name) @function
(method_definition name: [(property_identifier) (private_property_identifier)] @name) @function
(variable_declarator name: (identifier) @name value: [(arrow_function) (function_expression)]) @function
(assignment_expression left: (member_expression property: [(property_identifier) (private_property_identifier)] @name) right: [(arrow_function) (function_expression)]) @function
(pair key: (property_identifier) @name value: [(arrow_function) (function_expression)]) @function

(program (lexical_declaration (variable_declarator name: (identifier) @name value: (_) @value)) @variable)
(program (variable_declaration (variable_declarator name: (identifier) @name value: (_) @value)) @variable)
(program (export_statement (lexical_declaration (variable_declarator name: (identifier) @name value: (_) @value)) @variable))

(import_statement source: (string (string_fragment) @module)) @import
(export_statement source: (string (string_fragment) @module)) @import
(call_expression function: (identifier) @_req arguments: (arguments (string (string_fragment) @module)) (#eq? @_req "require")) @import

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

(class_heritage (identifier) @base)
(class_heritage (member_expression property: (property_identifier) @base))
