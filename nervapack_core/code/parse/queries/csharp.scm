; C#.
(class_declaration name: (identifier) @name) @class
(interface_declaration name: (identifier) @name) @class
(struct_declaration name: (identifier) @name) @class
(enum_declaration name: (identifier) @name) @class
(record_declaration name: (identifier) @name) @class
(namespace_declaration name: (_) @name) @module_block
(file_scoped_namespace_declaration name: (_) @name) @module_block

(method_declaration name: (identifier) @name) @function
(constructor_declaration name: (identifier) @name) @function
(local_function_statement name: (identifier) @name) @function

(using_directive (qualified_name) @module) @import
(using_directive (identifier) @module) @import

(invocation_expression function: (identifier) @call.name)
(invocation_expression function: (member_access_expression name: (identifier) @call.method))
(object_creation_expression type: (identifier) @call.name)

(base_list (identifier) @base)
