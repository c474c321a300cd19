; Python definitions, imports, calls and base classes.
; Capture names: @class/@function/@variable with @name, @import with @module,
; @call.name, @base. Nesting (methods, inner functions) is derived from positions.

(class_definition name: (identifier) @name) @class

(function_definition name: (identifier) @name) @function

(module (assignment left: (identifier) @name) @variable)
(module (expression_statement (assignment left: (identifier) @name)) @variable)

(import_statement name: (dotted_name) @module) @import
(import_statement name: (aliased_import name: (dotted_name) @module)) @import
(import_from_statement module_name: (_) @module) @import

(call function: (identifier) @call.name)
(call function: (attribute attribute: (identifier) @call.method))

(class_definition superclasses: (argument_list (identifier) @base))
(class_definition superclasses: (argument_list (attribute attribute: (identifier) @base)))
