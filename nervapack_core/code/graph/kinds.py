"""The code graph's vocabulary, defined once: the kinds of its nodes and edges, and the
groups of them each reader filters on (as tuples; :func:`sql_list` writes one into SQL).

The parser's own syntax groups (``CONTAINER_KINDS`` of :mod:`..parse.parser`: impl blocks,
module blocks) and the kinds of the unresolved references (``call``, ``base``, ``dep`` … in
:mod:`..resolve.edges`) are tree-sitter and resolution details, not graph kinds: they stay there.
"""

from __future__ import annotations

from ...storage import sql_list

__all__ = ["NODE_KINDS", "DEFINITION_KINDS", "CALLABLE_KINDS", "ANSWER_KINDS", "COMMUNITY_KINDS",
           "EMBEDDED_KINDS", "LINKABLE_KINDS", "ENTITY_ALIASES", "EDGE_KINDS", "GUESSABLE_EDGES", "sql_list"]

#: every node kind the graph stores (a file, its definitions, its imports, a doc section)
NODE_KINDS = ("file", "class", "function", "variable", "import", "doc")
#: definitions: what a name in code resolves to
DEFINITION_KINDS = ("class", "function", "variable")
#: what calls and inheritance resolve to, and what health and the LLM shortlist count as code units
CALLABLE_KINDS = ("class", "function")
#: what retrieval answers with (a file or an import is never an answer by itself)
ANSWER_KINDS = ("function", "class", "variable", "doc")
#: what community detection partitions
COMMUNITY_KINDS = ("file", "class", "function")
#: what gets an embedding (tests' definitions excluded where embedded)
EMBEDDED_KINDS = ("class", "function", "doc")
#: what an entity of the memory can name (the bridge's lookup)
LINKABLE_KINDS = ("class", "function", "variable", "file")
#: other names agents give a node kind: the original tool's (its graph had file, class, function,
#: import and markdown nodes) and other common ones: alias -> (kind, subkind or None). Read by
#: the code server's list_entities and by the schema it advertises (mcp/tool_specs.py)
ENTITY_ALIASES = {
    "markdown": ("doc", None), "doc_section": ("doc", None), "section": ("doc", None), "docs": ("doc", None),
    "method": ("function", "method"), "module": ("file", None),
}

#: every edge kind: a file DEFINES its definitions; IMPORTS, CALLS, INHERITS between code;
#: a doc section EXPLAINS the code it names
EDGE_KINDS = ("DEFINES", "IMPORTS", "CALLS", "INHERITS", "EXPLAINS")
#: the edges resolution may guess (each carries a confidence; see :mod:`.confidence`)
GUESSABLE_EDGES = ("CALLS", "INHERITS")
