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

; What a method call's receiver is (code/pyscope.py): names given a type by a constructor
; assignment, an annotation or `with X() as name` (@bind.type is the call's callee or the
; annotation), attributes of `self` typed the same way, and the other local names (parameters,
; assignments, loop and `as` targets), which hide a module-level name of the same spelling;
; @local.value: `*args` and `**kwargs`, a tuple and a dict.
(assignment left: (identifier) @bind.name right: (call function: [(identifier) (attribute)] @bind.type))
(assignment left: (identifier) @bind.name type: (type) @bind.type)
(typed_parameter (identifier) @bind.name type: (type) @bind.type)
(typed_default_parameter name: (identifier) @bind.name type: (type) @bind.type)
(with_item value: (as_pattern (call function: [(identifier) (attribute)] @bind.type)
                              alias: (as_pattern_target (identifier) @bind.name)))
(assignment left: (attribute object: (identifier) @bind.object attribute: (identifier) @bind.name)
            right: (call function: [(identifier) (attribute)] @bind.type))
(assignment left: (attribute object: (identifier) @bind.object attribute: (identifier) @bind.name)
            type: (type) @bind.type)
; `self.x = x`: the attribute holds what a typed name of the method holds (a parameter `x: Cls`)
(assignment left: (attribute object: (identifier) @bind.object attribute: (identifier) @bind.name)
            right: (identifier) @bind.type)
; `x = given or Cls(...)`: a default constructed when nothing was given
(assignment left: (identifier) @bind.name
            right: (boolean_operator operator: "or" right: (call function: [(identifier) (attribute)] @bind.type)))
(assignment left: (attribute object: (identifier) @bind.object attribute: (identifier) @bind.name)
            right: (boolean_operator operator: "or" right: (call function: [(identifier) (attribute)] @bind.type)))
(assignment left: (identifier) @local)
(assignment left: (pattern_list (identifier) @local))
(parameters (identifier) @local)
(default_parameter name: (identifier) @local)
(list_splat_pattern (identifier) @local.value)
(dictionary_splat_pattern (identifier) @local.value)
(for_statement left: (identifier) @local)
(for_statement left: (pattern_list (identifier) @local))
(as_pattern_target (identifier) @local)
(for_in_clause left: (identifier) @local)
(for_in_clause left: (pattern_list (identifier) @local))

; What a function returns (code/pyscope.py): its annotation, or the class every one of its
; return statements constructs.
(function_definition return_type: (type) @returns.annotation)
(return_statement) @returns
