; Rust.
(struct_item name: (type_identifier) @name) @class
(enum_item name: (type_identifier) @name) @class
(trait_item name: (type_identifier) @name) @class
(union_item name: (type_identifier) @name) @class
(impl_item type: (type_identifier) @name) @impl
(impl_item type: (generic_type type: (type_identifier) @name)) @impl
(impl_item type: (scoped_type_identifier name: (type_identifier) @name)) @impl
(impl_item type: (generic_type type: (scoped_type_identifier name: (type_identifier) @name))) @impl
(mod_item name: (identifier) @name body: (declaration_list)) @module_block

(function_item name: (identifier) @name) @function
(function_signature_item name: (identifier) @name) @function

(source_file (const_item name: (identifier) @name) @variable)
(source_file (static_item name: (identifier) @name) @variable)

(use_declaration argument: (_) @module) @import
(mod_item name: (identifier) @module !body) @import

(call_expression function: (identifier) @call.name)
(call_expression function: (scoped_identifier name: (identifier) @call.name))
(call_expression function: (field_expression field: (field_identifier) @call.method))
(macro_invocation macro: (identifier) @call.name)

(impl_item trait: (type_identifier) @base)
