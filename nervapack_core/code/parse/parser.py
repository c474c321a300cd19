"""Turn one source file into entities (classes, functions, variables) and references
(imports, calls, base classes) with tree-sitter.

The patterns live in ``queries/<language>.scm``, one file per language (JSX and TSX
share JavaScript's and TypeScript's), so adding a language is a query file, not code.
Nesting (methods in classes, inner functions) is derived from byte ranges rather than
spelled out per grammar, which keeps the queries small. This module knows nothing about
the graph store: it returns plain data that can cross a process boundary.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from typing import TYPE_CHECKING

from .languages import GRAMMAR, QUERY_FILE
from .pyscope import hint_names, python_hints

if TYPE_CHECKING:
    from tree_sitter import Node

__all__ = ["Entity", "Ref", "REF_KINDS", "ParsedSource", "parse_source"]

CONTAINER_KINDS = ("class", "function", "impl", "module_block")
SIGNATURE_MAX = 240
DOCSTRING_MAX = 600


@dataclass
class Entity:
    kind: str  # class | function | variable
    name: str
    qualified_name: str
    start_line: int
    end_line: int
    signature: str = ""
    docstring: str = ""
    subkind: str = ""  # e.g. method, interface, struct, arrow
    parent: str | None = None  # qualified name of the enclosing entity


#: the kinds of :class:`Ref` (the ``refs`` table's ``kind``)
REF_KINDS = ("import", "call", "method", "base", "dep", "alias", "returns", "attr")


@dataclass
class Ref:
    kind: str  # import | call (plain name) | method (obj.name) | base | dep, alias, returns, attr (Python, see below)
    name: str  # module text for imports, callee / base name otherwise
    source: str | None  # qualified name of the enclosing entity, None = the file
    line: int
    names: tuple[str, ...] = ()  # imported names (Python ``from x import a, b as c, *``: "a", "b as c", "*")
    hint: str = ""  # Python: what the receiver of a call is (see pyscope.py); "as:x" for ``import a.b as x``
    # Python "dep": a name the hints of the calls in ``source`` look up (a receiver's class,
    # the parts of a dotted receiver); "alias": ``from m import name as hint``; "returns": what
    # function ``source`` returns (``hint``), once per name that hint looks up; "attr": what an
    # attribute of class ``source`` holds (``hint`` "attribute=hint"), the same way. None makes an
    # edge: an incremental resolve finds through them the calls a changed name concerns.


@dataclass
class ParsedSource:
    entities: list[Entity] = field(default_factory=list)
    refs: list[Ref] = field(default_factory=list)
    has_errors: bool = False


@cache
def _query_source(language: str) -> str:
    return resources.files(__package__).joinpath("queries", f"{QUERY_FILE[language]}.scm").read_text()


@cache
def _tools(language: str):
    """Parser and compiled query for ``language`` (one per process, built lazily)."""
    import tree_sitter_language_pack as pack
    from tree_sitter import Query

    grammar = GRAMMAR[language]
    ts_language = pack.get_language(grammar)
    return pack.get_parser(grammar), Query(ts_language, _query_source(language))


def _text(node) -> str:
    return node.text.decode("utf-8", errors="replace")


class _Source:
    """The file as written, for what the grammar's copy (:func:`grammar_input`) may not tell
    right: line numbers (tree-sitter counts the line breaks of its copy, which joined some)
    and the text of nodes that may span joined comment lines (docstrings, signatures). Byte
    offsets are the same in both copies."""

    def __init__(self, data: bytes):
        self.data = data
        self._breaks = [m.start() for m in re.finditer(b"\n", data)]

    def row(self, byte: int) -> int:
        """0-based line of ``byte``: the line breaks before it (tree-sitter's row rule)."""
        return bisect_left(self._breaks, byte)

    def text(self, node) -> str:
        return self.data[node.start_byte:node.end_byte].decode("utf-8", errors="replace")

    def at_line_start(self, byte: int) -> bool:
        """Whether ``byte`` is column 0 (the file's start, or just after a line break)."""
        return byte == 0 or self.data[byte - 1] == 0x0A


_COMMENT_INDENT = re.compile(rb"[ \t]*")


def _comment_line_indent(line: bytes) -> int | None:
    """The Python scanner's indent of a comment-only line (a space 1, a tab 8), None for any
    other line and for one ending in a backslash (inside a string that continues the line)."""
    lead = _COMMENT_INDENT.match(line).end()  # type: ignore[union-attr]  # always matches
    if line[lead:lead + 1] != b"#" or line.rstrip(b"\r").endswith(b"\\"):
        return None
    return lead + 7 * line.count(b"\t", 0, lead)


def grammar_input(source: bytes, language: str) -> bytes:
    """The bytes tree-sitter parses for ``source``: the same, except in Python, where the line
    break between two comment lines becomes a ``\\r`` (a space after a ``\\r\\n``'s ``\\r``)
    when the second is indented at least as deep as the first.

    Why: the grammar's indentation scanner, at every line break, reads ahead over all the
    comment lines that follow to find the next line of code. A run of N comment lines costs
    N²/2 line reads (10,000 of them took 97 s to parse); joined they cost N. What is joined
    cannot change the tree's shape: a DEDENT only falls before a comment indented less than
    the block it leaves, never before one at least as deep as the comment above it. Same
    length, same byte offsets; rows and texts come from :class:`_Source`."""
    if language != "python" or b"#" not in source:
        return source
    lines = source.split(b"\n")
    out: bytearray | None = None
    pos = 0
    indent = _comment_line_indent(lines[0])
    for i in range(len(lines) - 1):
        end = pos + len(lines[i])  # the line break after line i
        following = _comment_line_indent(lines[i + 1])
        if indent is not None and following is not None and following >= indent:
            if out is None:
                out = bytearray(source)
            out[end] = 0x20 if lines[i].endswith(b"\r") else 0x0D
        indent, pos = following, end + 1
    return bytes(out) if out is not None else source


_SPACE = re.compile(r"\s+")
_FUNCTION_VALUES = {"arrow_function", "function_expression", "function", "generator_function"}


def _signature(node, source: _Source) -> str:
    """Source from the definition's start to its body (the header), on one line."""
    body = node.child_by_field_name("body")
    if body is None:
        value = node.child_by_field_name("value")
        if value is not None and value.type in _FUNCTION_VALUES:
            body = value.child_by_field_name("body")
    src = source.data[node.start_byte:node.end_byte]
    end = (body.start_byte - node.start_byte) if body is not None else src.find(b"\n")
    header = src[: end if end > 0 else len(src)].decode("utf-8", errors="replace")
    header = _SPACE.sub(" ", header).strip().rstrip("{").strip()
    return header[:SIGNATURE_MAX]


def _python_docstring(node, source: _Source) -> str:
    body = node.child_by_field_name("body")
    if body is None or body.named_child_count == 0:
        return ""
    first = body.named_child(0)
    if first is not None and first.type == "expression_statement" and first.named_child_count:
        first = first.named_child(0)
    if first is not None and first.type == "string":
        raw = source.text(first)
        return _clean_docstring(raw.strip("rRbBuUfF").strip("\"'"))
    return ""


_COMMENT_MARKS = re.compile(r"^\s*(///?|/\*\*?|\*/|\*|#|--)\s?")


_COMMENT_TYPES = ("comment", "line_comment", "block_comment")
_WRAPPERS = ("export_statement", "decorated_definition", "declaration", "lexical_declaration",
             "variable_declaration", "field_declaration")


class _CommentDocs:
    """Comments directly above a definition (or above its export/decorator wrapper), one
    parse's worth. Each parent's named children are listed once and each anchor's answer is
    kept: ``prev_named_sibling`` walks the parent's children from the first each time, so
    walking back over a run of N comments cost N² (16,000 lines took 8 s); here a run is
    looked at once, by the definition under it."""

    def __init__(self, source: _Source):
        self.source = source
        self._children: dict[int, tuple[list, dict[int, int]]] = {}
        self._docs: dict[int, str] = {}

    def __call__(self, node) -> str:
        anchor = node
        while anchor.parent is not None and anchor.parent.type in _WRAPPERS:
            anchor = anchor.parent
        if anchor.id not in self._docs:
            self._docs[anchor.id] = self._above(anchor)
        return self._docs[anchor.id]

    def _above(self, anchor) -> str:
        parent = anchor.parent
        if parent is None:
            return ""
        if parent.id not in self._children:
            children = parent.named_children
            self._children[parent.id] = (children, {c.id: i for i, c in enumerate(children)})
        children, index = self._children[parent.id]
        i = index.get(anchor.id, 0) - 1
        blocks: list[str] = []  # the comments' texts, nearest first
        expected_row = self.source.row(anchor.start_byte)
        while i >= 0:
            prev = children[i]
            if prev.type not in _COMMENT_TYPES or self.source.row(prev.end_byte) < expected_row - 1:
                break
            blocks.append(self.source.text(prev))
            expected_row = self.source.row(prev.start_byte)
            i -= 1
        lines = [line for block in reversed(blocks) for line in block.splitlines()]
        cleaned = [_COMMENT_MARKS.sub("", line).rstrip("*/ ").rstrip() for line in lines]
        return _clean_docstring("\n".join(cleaned))


def _end_line(node, source: _Source) -> int:
    """1-based last line; a node ending with its newline (``#define``) ends on the line before."""
    row = source.row(node.end_byte)
    return row if source.at_line_start(node.end_byte) and row > source.row(node.start_byte) else row + 1


_XML_DOC_TAG = re.compile(r"</?(?:summary|remarks|param|returns|value|example|see|code|para)\b[^>]*>")


def _clean_docstring(text: str) -> str:
    text = _XML_DOC_TAG.sub("", text)
    text = "\n".join(line.strip() for line in text.strip().splitlines()).strip()
    return text[:DOCSTRING_MAX]


# Ruby's compact `class Editions::CreateInteractor`, Rust's `impl billing::Invoice`: the name as a path
_SCOPED_NAMES = ("scope_resolution", "scoped_type_identifier")
_PATH_ROOTS = ("crate", "self", "super")  # Rust paths relative to the crate or module: not part of the name


def _scoped_name(name_node) -> str:
    """The whole path a scoped name is written as, with the graph's ``.``: ``Editions::Create``
    -> ``Editions.Create`` (a leading ``::``, Rust's ``crate::``/``self::``/``super::`` dropped)."""
    outermost = name_node.parent
    while outermost.parent is not None and outermost.parent.type in _SCOPED_NAMES:
        outermost = outermost.parent
    parts = [p.strip() for p in _text(outermost).split("::") if p.strip()]
    while len(parts) > 1 and parts[0] in _PATH_ROOTS:
        parts = parts[1:]
    return ".".join(parts)


def _container_name(kind: str, node, name_node, language: str) -> str:
    """The name under which a definition appears in qualified names."""
    name = _text(name_node)
    if language == "go" and node.type == "method_declaration":
        receiver = node.child_by_field_name("receiver")
        if receiver is not None:
            types = re.findall(r"[A-Za-z_]\w*", _text(receiver))
            if types:
                return f"{types[-1]}.{name}"
    if language == "cpp" and kind == "module_block":  # C++17 `namespace a::b`
        return name.replace("::", ".")
    if language == "php" and kind == "module_block":  # `namespace App\Billing`
        return name.strip("\\").replace("\\", ".")
    if language == "cpp" and name_node.parent is not None and name_node.parent.type == "qualified_identifier":
        outermost = name_node.parent  # `a::B::f` nests: (a :: (B :: f))
        while outermost.parent is not None and outermost.parent.type == "qualified_identifier":
            outermost = outermost.parent
        scope = outermost.text[: name_node.start_byte - outermost.start_byte].decode("utf-8", errors="replace")
        scope = scope.rstrip(": \t").lstrip(":")
        if scope:
            return f"{scope.replace('::', '.')}.{name}"
    if language in ("ruby", "rust") and name_node.parent is not None and name_node.parent.type in _SCOPED_NAMES:
        return _scoped_name(name_node)
    if language == "javascript" or language in ("typescript", "tsx"):
        if node.type == "assignment_expression":
            left = node.child_by_field_name("left")
            obj = left.child_by_field_name("object") if left is not None else None
            if obj is not None and obj.type == "identifier":
                return f"{_text(obj)}.{name}"
    return name


_SUBKIND_BY_TYPE = {
    "interface_declaration": "interface", "enum_declaration": "enum", "enum_item": "enum",
    "struct_item": "struct", "struct_specifier": "struct", "struct_declaration": "struct",
    "trait_item": "trait", "trait_declaration": "trait", "type_alias_declaration": "type",
    "type_definition": "typedef",
    "record_declaration": "record", "module": "module", "union_item": "union",
    "union_specifier": "union", "type_declaration": "type", "arrow_function": "arrow",
}


def _innermost(spans: list[tuple[int, int, str, str]], positions: list[int],
               kinds: tuple[str, ...]) -> list[str | None]:
    """For each byte position (ascending), the qualified name of the innermost span of one of
    ``kinds`` containing it, or ``None``. One sweep with a stack of open spans (they nest, as
    syntax nodes do): linear, where testing every span for every call was quadratic (a file of
    6,000 functions took 3.4 s)."""
    ordered = sorted(((s, e, i, q) for i, (s, e, k, q) in enumerate(spans) if k in kinds),
                     key=lambda t: (t[0], -t[1], t[2]))
    out: list[str | None] = []
    stack: list[tuple[int, int, int, str]] = []
    nxt = 0
    for pos in positions:
        while nxt < len(ordered) and ordered[nxt][0] <= pos:
            while stack and stack[-1][1] <= ordered[nxt][0]:
                stack.pop()
            stack.append(ordered[nxt])
            nxt += 1
        while stack and stack[-1][1] <= pos:
            stack.pop()
        out.append(stack[-1][3] if stack else None)
    return out


def _function_values(values: list[Node], imports: list[tuple[Node, Node]], entities: list[Entity]) -> list[Node]:
    """The names among ``values`` (identifiers used as values in JavaScript/TypeScript) that can only mean a
    function: imported into the file by name or defined at its top level. ``setTimeout(flush)`` and
    ``const add = previous ? addToStart : addToEnd`` call those functions later; without this the graph
    would not link the caller to them. Every other value name (a variable, a parameter) is left out, so a
    local ``query`` never turns into a call of some function named ``query``."""
    known = {e.name for e in entities if e.kind in ("function", "class") and not e.parent}
    for stmt, _module in imports:
        stack = [stmt]
        while stack:
            node = stack.pop()
            if node.type == "import_specifier":
                local = node.child_by_field_name("alias") or node.child_by_field_name("name")
                if local is not None:
                    known.add(_text(local))
            elif node.type == "import_clause":
                known.update(_text(c) for c in node.children if c.type == "identifier")  # a default import
            stack.extend(node.children)
    return [n for n in values if _text(n) in known]


def _php_namespace_spans(defs: list, size: int) -> list:
    """PHP's statement form ``namespace App\\Billing;`` holds nothing in the tree, yet names
    everything after it up to the next ``namespace`` (or the file's end): its span is made so,
    and the qualified names of the classes and functions in it take the namespace, as the
    block form's do."""
    starts = sorted(d[0] for d in defs if d[2] == "module_block")
    out = []
    for start, neg_end, kind, node, name_node in defs:
        if kind == "module_block" and node.child_by_field_name("body") is None:
            neg_end = -next((s for s in starts if s > start), size)
        out.append((start, neg_end, kind, node, name_node))
    return out


def parse_source(source: bytes, language: str) -> ParsedSource:
    """Entities and references of one file in a parsed ``language``."""
    from tree_sitter import QueryCursor

    parser, query = _tools(language)
    tree = parser.parse(grammar_input(source, language))
    result = ParsedSource(has_errors=tree.root_node.has_error)
    written = _Source(source)
    comment_docstring = _CommentDocs(written)

    defs = []  # (start_byte, -end_byte, kind, node, name_node)
    seen = set()
    calls: list[tuple[str, Node]] = []  # ("call", "method" or "value", name node)
    values: list[Node] = []  # JavaScript/TypeScript: names used as values (see _function_values)
    bases, imports = [], []
    binds: list[tuple[Node, Node, Node | None]] = []  # Python: typed names (name, type, self object)
    local_names: list[Node] = []
    value_names: list[Node] = []
    return_statements: list[Node] = []
    return_annotations: list[Node] = []
    for _pattern, caps in QueryCursor(query).matches(tree.root_node):
        name_nodes = caps.get("name")
        for kind in ("class", "function", "variable", "impl", "module_block"):
            if kind in caps and name_nodes:
                node = caps[kind][0]
                if kind == "variable":
                    value = caps.get("value")
                    if value and value[0].type in _FUNCTION_VALUES:
                        continue  # a function assigned to a name is a function
                key = (node.start_byte, node.end_byte, kind)
                if key not in seen:
                    seen.add(key)
                    defs.append((node.start_byte, -node.end_byte, kind, node, name_nodes[0]))
                break
        else:
            if "import" in caps and "module" in caps:
                imports.append((caps["import"][0], caps["module"][0]))
            elif "call.name" in caps:
                calls.extend(("call", n) for n in caps["call.name"])
            elif "call.method" in caps:
                calls.extend(("method", n) for n in caps["call.method"])
            elif "call.value" in caps:
                values.extend(caps["call.value"])
            elif "base" in caps:
                bases.extend(caps["base"])
            elif "bind.name" in caps and "bind.type" in caps:
                obj = caps["bind.object"][0] if "bind.object" in caps else None
                binds.append((caps["bind.name"][0], caps["bind.type"][0], obj))
            elif "local" in caps:
                local_names.extend(caps["local"])
            elif "local.value" in caps:
                value_names.extend(caps["local.value"])
            elif "returns" in caps:
                return_statements.extend(caps["returns"])
            elif "returns.annotation" in caps:
                return_annotations.extend(caps["returns.annotation"])

    if language == "php":
        defs = _php_namespace_spans(defs, len(source))
    defs.sort(key=lambda d: (d[0], d[1]))
    stack: list[tuple[int, str, str, str]] = []  # (end_byte, kind, qualified prefix, qualified name)
    spans: list[tuple[int, int, str, str]] = []  # (start, end, kind, qualified_name) of entities
    used_qnames: dict[str, int] = {}
    for start, neg_end, kind, node, name_node in defs:
        end = -neg_end
        while stack and stack[-1][0] <= start:
            stack.pop()
        display = _container_name(kind, node, name_node, language)
        outer = next((s for s in reversed(stack) if s[1] in ("class", "function", "impl", "variable")), None)
        qname = f"{outer[3]}.{display}" if outer and ("." not in display or language == "ruby") else display
        if language in ("cpp", "rust", "php") and not outer and kind != "variable":  # namespaces, modules qualify names
            namespace = next((s[3] for s in reversed(stack) if s[1] == "module_block"), "")
            if namespace and not qname.startswith(namespace + "."):
                qname = f"{namespace}.{qname}"
            if kind == "module_block":
                stack.append((end, kind, qname, qname))
                continue
        if kind in ("impl", "module_block"):
            if kind == "impl":  # `impl Trait for Type`: the trait is a base of Type (in its module: qname)
                spans.append((start, end, "class", qname))
            stack.append((end, kind, qname, qname if kind == "impl" else (outer[3] if outer else "")))
            if kind == "module_block":
                stack.pop()  # namespaces/modules are transparent for qualified names
            continue
        parent = outer[3] if outer and outer[3] else None
        if "." in display and parent is None:
            parent = qname.rsplit(".", 1)[0]
        n = used_qnames.get(qname, 0)
        used_qnames[qname] = n + 1
        unique_qname = qname if n == 0 else f"{qname}#{n + 1}"  # overloads, redefinitions
        subkind = _SUBKIND_BY_TYPE.get(node.type, "")
        if kind == "function" and (outer and outer[1] in ("class", "impl") or "." in display):
            subkind = "method"
        docstring = (_python_docstring(node, written) if language == "python" and kind != "variable"
                     else comment_docstring(node))
        result.entities.append(Entity(
            kind=kind, name=_text(name_node).split("::")[-1], qualified_name=unique_qname,
            start_line=written.row(node.start_byte) + 1, end_line=_end_line(node, written),
            signature=_signature(node, written), docstring=docstring, subkind=subkind, parent=parent,
        ))
        spans.append((start, end, kind, unique_qname))
        stack.append((end, kind, qname, qname))

    if values:
        calls.extend(("value", n) for n in _function_values(values, imports, result.entities))
    sorted_calls = sorted(calls, key=lambda c: c[1].start_byte)
    sorted_bases = sorted(bases, key=lambda n: n.start_byte)
    call_hints, base_hints = [""] * len(sorted_calls), [""] * len(sorted_bases)
    returned: dict[str, str] = {}
    attributes: dict[tuple[str, str], str] = {}
    if language == "python":
        call_hints, base_hints, returned, attributes = python_hints(
            sorted_calls, sorted_bases, binds, local_names, value_names, return_statements, return_annotations,
            spans, _innermost)
    callers = _innermost(spans, [node.start_byte for _, node in sorted_calls], ("function", "class"))
    deps: dict[str | None, dict[str, int]] = {}  # per caller: the names its hints look up, first line
    for (kind, node), caller, hint in zip(sorted_calls, callers, call_hints):
        if kind == "value":
            if caller is None:
                continue  # `module.exports = Calculator` at the top level exports it, nothing calls it
            kind = "call"
        result.refs.append(Ref(kind, _text(node), caller, written.row(node.start_byte) + 1, hint=hint))
        if hint:
            for name in hint_names(hint):
                deps.setdefault(caller, {}).setdefault(name, written.row(node.start_byte) + 1)
    owners = _innermost(spans, [node.start_byte for node in sorted_bases], ("class",))
    for node, owner, hint in zip(sorted_bases, owners, base_hints):
        result.refs.append(Ref("base", _text(node), owner, written.row(node.start_byte) + 1, hint=hint))
        if hint:
            for name in hint_names(hint):
                deps.setdefault(owner, {}).setdefault(name, written.row(node.start_byte) + 1)
    for caller, names_seen in deps.items():
        result.refs.extend(Ref("dep", name, caller, line) for name, line in names_seen.items())
    line_of = {e.qualified_name: e.start_line for e in result.entities}
    for function, hint in returned.items():  # one per name it depends on, each with the whole hint
        result.refs.extend(Ref("returns", name, function, line_of.get(function, 0), hint=hint)
                           for name in dict.fromkeys(hint_names(hint)))
    for (cls, attribute), hint in attributes.items():  # "attr": what a class's attribute holds, as "name=hint"
        result.refs.extend(Ref("attr", name, cls, line_of.get(cls, 0), hint=f"{attribute}={hint}")
                           for name in dict.fromkeys(hint_names(hint)))
    for stmt, module in sorted(imports, key=lambda p: p[1].start_byte):
        names: tuple[str, ...] = ()
        hint = ""
        if stmt.type == "import_from_statement":
            for imported in stmt.children_by_field_name("name"):
                if imported.type == "dotted_name":
                    names += (_text(imported),)
                elif imported.type == "aliased_import":
                    original, alias = imported.child_by_field_name("name"), imported.child_by_field_name("alias")
                    if original is not None:
                        names += (f"{_text(original)} as {_text(alias)}" if alias is not None else _text(original),)
            if any(c.type == "wildcard_import" for c in stmt.children):
                names += ("*",)
        elif stmt.type == "import_statement" and module.parent is not None and module.parent.type == "aliased_import":
            alias = module.parent.child_by_field_name("alias")
            hint = f"as:{_text(alias)}" if alias is not None else ""
        module_text = _text(module).strip("\"'<>")
        result.refs.append(Ref("import", module_text, None, written.row(stmt.start_byte) + 1, names, hint))
        for entry in names:  # `from m import a as b`: a change to `a` concerns the calls of `b`
            imported_name, _, local_name = entry.partition(" as ")
            if local_name:
                result.refs.append(Ref("alias", imported_name, None, written.row(stmt.start_byte) + 1, hint=local_name))
    return result
