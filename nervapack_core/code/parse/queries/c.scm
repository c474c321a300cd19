; C.
(struct_specifier name: (type_identifier) @name body: (field_declaration_list)) @class
(enum_specifier name: (type_identifier) @name body: (enumerator_list)) @class
(union_specifier name: (type_identifier) @name body: (field_declaration_list)) @class
(type_definition declarator: (type_identifier) @name) @class

(function_definition declarator: (function_declarator declarator: (identifier) @name)) @function
(function_definition declarator: (pointer_declarator declarator: (function_declarator declarator: (identifier) @name))) @function

(preproc_def name: (identifier) @name) @variable

(preproc_include path: (string_literal (string_content) @module)) @import
(preproc_include path: (system_lib_string) @module) @import

(call_expression function: (identifier) @call.name)
(call_expression function: (field_expression field: (field_identifier) @call.method))
