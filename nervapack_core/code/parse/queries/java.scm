; Java.
(class_declaration name: (identifier) @name) @class
(interface_declaration name: (identifier) @name) @class
(enum_declaration name: (identifier) @name) @class
(record_declaration name: (identifier) @name) @class
(annotation_type_declaration name: (identifier) @name) @class

(method_declaration name: (identifier) @name) @function
(constructor_declaration name: (identifier) @name) @function

(import_declaration (scoped_identifier) @module) @import

(method_invocation object: (_) name: (identifier) @call.method)
(method_invocation !object name: (identifier) @call.name)
(object_creation_expression type: (type_identifier) @call.name)

(superclass (type_identifier) @base)
(super_interfaces (type_list (type_identifier) @base))
(extends_interfaces (type_list (type_identifier) @base))
