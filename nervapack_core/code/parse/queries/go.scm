; Go.
(type_declaration (type_spec name: (type_identifier) @name)) @class
(function_declaration name: (identifier) @name) @function
(method_declaration name: (field_identifier) @name) @function

(source_file (const_declaration (const_spec name: (identifier) @name)) @variable)
(source_file (var_declaration (var_spec name: (identifier) @name)) @variable)

(import_spec path: (interpreted_string_literal) @module) @import

(call_expression function: (identifier) @call.name)
(call_expression function: (selector_expression field: (field_identifier) @call.method))
