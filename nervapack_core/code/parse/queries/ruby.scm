; Ruby.
(class name: (constant) @name) @class
(class name: (scope_resolution name: (constant) @name)) @class
(module name: (constant) @name) @class
(module name: (scope_resolution name: (constant) @name)) @class

(method name: (_) @name) @function
(singleton_method name: (_) @name) @function

(program (assignment left: (constant) @name) @variable)

(call method: (identifier) @_req arguments: (argument_list (string (string_content) @module)) (#match? @_req "^require(_relative)?$")) @import

(call receiver: (_) method: (identifier) @call.method)
(call !receiver method: (identifier) @call.name)

(superclass (constant) @base)
(superclass (scope_resolution name: (constant) @base))
