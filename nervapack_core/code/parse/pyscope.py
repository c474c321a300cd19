"""What the receiver of a Python call is, read from one file's syntax: the *hint* stored with
each call and base-class reference, which :mod:`.pyresolve` turns into an edge.

Resolving ``obj.get()`` by the name ``get`` alone links every ``dict.get`` of a repository to
whatever class defines a ``get``. The parser cannot know types in general, but a few forms
say them plainly, and those are what a reader (or jedi) uses too:

- ``self.m()`` / ``cls.m()`` → ``self:<class>``, the enclosing class (its bases are looked up
  when resolving); ``super().m()`` → ``super:<class>``, its bases only;
- a name given a type in the enclosing function, an outer one or the module: ``s =
  Session()``, ``s: Session``, a parameter ``s: Session``, ``with Session() as s`` →
  ``type:Session`` (the callee or annotation as written, dotted; the resolver checks it
  names a class); ``self.attr`` typed the same way anywhere in the class → its type;
  ``Session().m()`` → ``type:Session``;
- a name no scope binds, or a dotted chain of them (``sessions.Session()``, ``os.path.join()``)
  → ``name:<dotted>``: an imported module or class, a class of the file, or nothing known;
- a literal (``", ".join``, ``[].append``) → ``value``: a builtin type, never an edge;
- anything else (a parameter without annotation, ``a[0].m()``, ``f().m()``) → no hint.

A plain call ``f()`` of a name local to the enclosing function (a parameter, a variable)
gets ``local``: it calls a value, not the module-level ``f``. A base ``models.Model`` gets
``name:models``. A function's return annotation (``-> Session``), or the one class all its
``return`` statements construct (``return Session()``; ``return cls(...)`` → ``self:<class>``),
is its *returns* hint: ``s = requests.session()`` then ``s.get()`` is ``Session.get``. A
module-level variable given one type (``engines = EngineHandler()``) gets one too, so
``template.engines.all()`` is ``EngineHandler.all``.

An attribute chain on a receiver (``self.loader.graph.m()``; ``self.query.m()`` with ``query``
a property; ``x.attr.m()`` with ``x`` typed; ``self.query.chain().m()``, ``chain()`` read as
what that method returns) → ``of:<attributes>:<hint of the receiver>``: the resolver follows
each attribute through the class's typed attributes (stored per class as ``attr``
references: ``graph=type:MigrationGraph``, from a constructor assignment, ``x or Cls()`` or
an annotation) and its properties' returns, in its bases too. A method returning ``self``,
``self.attr`` or a call of that kind gets it as its returns hint.

Scopes are read flow-insensitively: the typed binding of a name in a function nearest
before the call wins (the first one when all come after, as in a loop), and a function's
untyped local hides module-level names of the same spelling.
"""

from __future__ import annotations

import re
from collections import defaultdict
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tree_sitter import Node

__all__ = ["python_hints", "annotation_type", "hint_names"]

_DOTTED = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*")
_WRAPPER = re.compile(r"(?:typing\.)?(?:Optional|Type|type|Final|ClassVar)\[(.+)\]", re.S)
_UNION = re.compile(r"(?:typing\.)?Union\[(.+)\]", re.S)
_LITERALS = {"string", "concatenated_string", "list", "dictionary", "set", "tuple", "integer", "float",
             "list_comprehension", "dictionary_comprehension", "set_comprehension", "generator_expression",
             "true", "false", "none"}
_SELF = ("self", "cls")


def _text(node) -> str:
    return node.text.decode("utf-8", errors="replace")


def annotation_type(text: str) -> str | None:
    """The class an annotation names (``Optional[X]``, ``X | None``, ``"X"`` → ``X``), or None
    for anything that is not one dotted name (``list[X]``, ``Callable[...]``)."""
    t = re.sub(r"\s+", "", text).strip("\"'")
    for _ in range(3):
        m = _WRAPPER.fullmatch(t)
        if m:
            t = m.group(1).strip("\"'")
            continue
        m = _UNION.fullmatch(t)
        parts = m.group(1).split(",") if m else t.split("|")
        parts = [p for p in parts if p != "None"]
        if len(parts) == 1 and parts[0] != t:
            t = parts[0].strip("\"'")
            continue
        break
    return t if _DOTTED.fullmatch(t) else None


def hint_names(hint: str) -> list[str]:
    """The names resolving a hint looks up besides the call's own name (the class of
    ``self:``/``super:``, every part of a ``type:``/``name:`` path): the parser stores them as
    ``dep`` references, so an incremental resolve finds the call when one of them changes."""
    mode, _, path = hint.partition(":")
    if mode == "of":
        chain, _, inner = path.partition(":")
        return [*(part.removesuffix("()") for part in chain.split(".")), *hint_names(inner)]
    if mode in ("self", "super"):
        return [path.rsplit(".", 1)[-1]]
    if mode in ("type", "name"):
        return path.split(".")
    return []


def _dotted(node) -> str | None:
    text = re.sub(r"\s+", "", _text(node))
    return text if node.type in ("identifier", "attribute") and _DOTTED.fullmatch(text) else None


class _Scopes:
    """The typed and local names of each scope of one file (a scope = a function or class
    qualified name, ``None`` for the module)."""

    def __init__(self, spans, binds, bind_where, locals_, local_scopes, values, value_scopes):
        self.kind = {q: k for _s, _e, k, q in spans}
        self.typed: dict[tuple[str | None, str], list[tuple[int, str]]] = defaultdict(list)
        self.attrs: dict[tuple[str, str], set[str]] = defaultdict(set)
        self.local: set[tuple[str | None, str]] = set()
        self.value: set[tuple[str | None, str]] = set()  # *args, **kwargs: a tuple, a dict
        copies = []  # `self.x = x`: read once every typed name is known
        for (name, type_node, obj), (scope, cls) in zip(binds, bind_where):
            parent = type_node.parent
            if type_node.type == "identifier" and parent is not None and parent.type == "assignment":
                if obj is not None and _text(obj) in _SELF and cls:
                    copies.append((cls, scope, _text(name), type_node))
                continue
            type_text = _dotted(type_node) if type_node.type != "type" else annotation_type(_text(type_node))
            if not type_text:
                if obj is None:
                    self.local.add((scope, _text(name)))
                continue
            if obj is not None:
                if _text(obj) in _SELF and cls:
                    self.attrs[(cls, _text(name))].add(type_text)
            elif scope is not None and self.kind.get(scope) == "class":
                self.attrs[(scope, _text(name))].add(type_text)
            else:  # in effect after its statement: `r = s.send(r.prepare())` calls the old `r`
                self.typed[(scope, _text(name))].append((name.parent.end_byte if name.parent else name.end_byte,
                                                         type_text))
        for entries in self.typed.values():
            entries.sort()
        self.local.update((scope, _text(node)) for node, scope in zip(locals_, local_scopes))
        self.value.update((scope, _text(node)) for node, scope in zip(values, value_scopes))
        for cls, scope, name, value in copies:
            how, typ = self.lookup(scope, _text(value), value.start_byte)
            if how == "typed" and typ:
                self.attrs[(cls, name)].add(typ)

    def chain(self, scope: str | None) -> list[str | None]:
        """The function scopes a name is looked up in from ``scope``, innermost first, then the
        module (class bodies are not visible from their methods)."""
        out: list[str | None] = []
        q = scope
        while q:
            if self.kind.get(q) == "function":
                out.append(q)
            q = q.rsplit(".", 1)[0] if "." in q else None
        return [*out, None]

    def lookup(self, scope: str | None, name: str, pos: int) -> tuple[str, str | None]:
        """("typed", type) / ("value", None) / ("local", None) / ("free", None) for ``name`` at ``pos``."""
        for s in self.chain(scope):
            bound = self.typed.get((s, name))
            if bound:
                before = [t for p, t in bound if p < pos]
                return "typed", (before[-1] if before else bound[0][1])
            if (s, name) in self.value:
                return "value", None
            if (s, name) in self.local:
                return "local", None
        return "free", None

    def local_to_function(self, scope: str | None, name: str) -> bool:
        return any((s, name) in self.local or (s, name) in self.typed or (s, name) in self.value
                   for s in self.chain(scope) if s is not None)


def _receiver(obj: Node, scope: str | None, cls: str | None, scopes: _Scopes) -> str:
    t = obj.type
    if t == "identifier":
        name = _text(obj)
        if name in _SELF and cls:
            return f"self:{cls}"
        how, typ = scopes.lookup(scope, name, obj.start_byte)
        if how == "typed":
            # a type read from a local value (`r = s.send()`) is not known here
            head = typ.split(".", 1)[0] if typ else ""
            if head in _SELF or scopes.lookup(scope, head, obj.start_byte)[0] != "free":
                return ""
            return f"type:{typ}"
        return {"value": "value", "local": ""}.get(how, f"name:{name}")
    if t == "attribute":
        dotted = _dotted(obj)
        if not dotted:
            return ""
        head, _, rest = dotted.partition(".")
        if head in _SELF and cls:
            first, _, more = rest.partition(".")
            types = scopes.attrs.get((cls, first), set())
            if len(types) > 1:
                return ""
            if types:
                typ = f"type:{next(iter(types))}"
                return f"of:{more}:{typ}" if more else typ
            # typed nowhere in this file's class: a base's attribute, a property (the resolver looks)
            return f"of:{rest}:self:{cls}"
        how, typ = scopes.lookup(scope, head, obj.start_byte)
        if how == "typed" and typ:  # `loader = MigrationLoader(); loader.graph.m()`
            typ_head = typ.split(".", 1)[0]
            if typ_head in _SELF or scopes.lookup(scope, typ_head, obj.start_byte)[0] != "free":
                return ""
            return f"of:{rest}:type:{typ}"
        return f"name:{dotted}" if how == "free" else ""
    if t == "call":
        fn = obj.child_by_field_name("function")
        if fn is not None and fn.type == "identifier" and _text(fn) == "super":
            return f"super:{cls}" if cls else ""
        return _made(obj, scope, cls, scopes)
    if t in _LITERALS:
        return "value"
    return ""


def _constructed(call: Node, scope: str | None, cls: str | None, scopes: _Scopes) -> str:
    """The hint of the instance a call expression makes when its callee is a dotted name
    free in ``scope`` (``Session()``, ``sessions.Session()``; ``cls()`` → the enclosing class)."""
    fn = call.child_by_field_name("function")
    dotted = _dotted(fn) if fn is not None else None
    if not dotted:
        return ""
    head = dotted.split(".", 1)[0]
    if dotted in ("cls", "self.__class__", "type(self)"):
        return f"self:{cls}" if cls else ""
    if head in _SELF or scopes.lookup(scope, head, call.start_byte)[0] != "free":
        return ""
    return f"type:{dotted}"


def _made(call: Node, scope: str | None, cls: str | None, scopes: _Scopes) -> str:
    """The hint of what a call expression gives: an instance it constructs, else what a method
    of a known receiver returns (``self.query.chain()`` → ``of:query.chain():self:QuerySet``)."""
    made = _constructed(call, scope, cls, scopes)
    fn = call.child_by_field_name("function")
    if made or fn is None or fn.type != "attribute":
        return made
    obj, method = fn.child_by_field_name("object"), fn.child_by_field_name("attribute")
    if obj is None or method is None:
        return ""
    inner = _receiver(obj, scope, cls, scopes)
    mode, _, path = inner.partition(":")
    if mode in ("self", "type"):
        return f"of:{_text(method)}():{inner}"
    if mode == "of":
        chain, _, receiver = path.partition(":")
        return f"of:{chain}.{_text(method)}():{receiver}"
    return ""


def _returned(returns: list[Node], annotations: list[Node], where_returns, where_annotations,
              scopes: _Scopes) -> dict[str, str]:
    """Per function (qualified name): the hint of what it returns, from its annotation, else
    from its return statements when every one that returns a value constructs the same class."""
    out: dict[str, str] = {}
    for node, (scope, _cls) in zip(annotations, where_annotations):
        typ = annotation_type(_text(node))
        if scope and typ and typ != "None":
            out[scope] = f"type:{typ}"
    seen: dict[str, set[str]] = defaultdict(set)
    for node, (scope, cls) in zip(returns, where_returns):
        if not scope or scope in out or scopes.kind.get(scope) != "function":
            continue
        value = node.named_children[0] if node.named_child_count else None
        if value is None or value.type == "none":
            continue
        if value.type == "call":
            seen[scope].add(_made(value, scope, cls, scopes))
        elif value.type in ("identifier", "attribute") and cls and _text(value).split(".", 1)[0] in _SELF:
            # `return self` (a fluent method), `return self._query` (a property of what an attribute holds)
            seen[scope].add(_receiver(value, scope, cls, scopes))
        else:
            seen[scope].add("")
    for scope, hints in seen.items():
        if scope not in out and len(hints) == 1 and "" not in hints:
            out[scope] = hints.pop()
    return out


def _module_variables(scopes: _Scopes) -> dict[str, str]:
    """Per module-level variable given one type (``engines = EngineHandler()``, ``codes:
    LookupDict``): the hint of its value, as for a function's return."""
    out = {}
    for (scope, name), bound in scopes.typed.items():
        types = {t for _, t in bound}
        if scope is None and len(types) == 1:
            typ = types.pop()
            head = typ.split(".", 1)[0]
            if head not in _SELF and scopes.lookup(None, head, 0)[0] == "free":
                out[name] = f"type:{typ}"
    return out


def _attribute_types(scopes: _Scopes) -> dict[tuple[str, str], str]:
    """Per (class, attribute) given one type in the class (``self.loader = MigrationLoader()``,
    ``self.query = query or sql.Query(model)``, ``graph: MigrationGraph``): the hint of its
    value, stored so that code of other files can follow ``executor.loader.graph.m()``."""
    out = {}
    for (cls, name), types in scopes.attrs.items():
        if len(types) == 1:
            typ = next(iter(types))
            head = typ.split(".", 1)[0]
            if head not in _SELF and scopes.lookup(None, head, 0)[0] == "free":
                out[(cls, name)] = f"type:{typ}"
    return out


def python_hints(calls: list[tuple[str, Node]], bases: list[Node], binds: list[tuple[Node, Node, Node | None]],
                 locals_: list[Node], values: list[Node], returns: list[Node], annotations: list[Node],
                 spans: list[tuple[int, int, str, str]], innermost
                 ) -> tuple[list[str], list[str], dict[str, str], dict[tuple[str, str], str]]:
    """The hint of each call (``calls`` in ascending position, as (kind, name node)), of each
    base (``bases`` ascending), of what each function returns or module-level variable
    holds (by qualified name), and of what each typed attribute of a class holds (by (class,
    attribute)).
    ``binds``: (name, callee or annotation, ``self`` object or None) of the typed names;
    ``locals_``: the other local names, ``values`` those holding a builtin value (``*args``,
    ``**kwargs``); ``returns``: the return statements; ``annotations``: the return
    annotations; ``spans``/``innermost``: the parser's entity spans and its innermost-span sweep."""
    # where each name, statement and call is (its innermost function or class, and class): two sweeps
    groups = [[b[0] for b in binds], locals_, values, returns, annotations, [node for _, node in calls]]
    nodes = [n for group in groups for n in group]
    order = sorted(range(len(nodes)), key=lambda i: nodes[i].start_byte)
    ordered = [nodes[i].start_byte for i in order]
    where: list[tuple[str | None, str | None]] = [(None, None)] * len(nodes)
    for i, scope, cls in zip(order, innermost(spans, ordered, ("function", "class")),
                             innermost(spans, ordered, ("class",))):
        where[i] = (scope, cls)
    parts, start = [], 0
    for group in groups:
        parts.append(where[start:start + len(group)])
        start += len(group)
    w_binds, w_locals, w_values, w_returns, w_annotations, w_calls = parts
    scopes = _Scopes(spans, binds, w_binds, locals_, [w[0] for w in w_locals], values, [w[0] for w in w_values])
    in_scope, in_class = [w[0] for w in w_calls], [w[1] for w in w_calls]
    call_hints = []
    for (kind, node), scope, cls in zip(calls, in_scope, in_class):
        if kind == "call":
            call_hints.append("local" if scopes.local_to_function(scope, _text(node)) else "")
            continue
        attribute = node.parent
        obj = attribute.child_by_field_name("object") if attribute is not None else None
        call_hints.append(_receiver(obj, scope, cls, scopes) if obj is not None else "")
    base_hints = []
    for node in bases:
        parent = node.parent
        if parent is not None and parent.type == "attribute":
            obj = parent.child_by_field_name("object")
            dotted = _dotted(obj) if obj is not None else None
            base_hints.append(f"name:{dotted}" if dotted else "")
        else:
            base_hints.append("")
    return call_hints, base_hints, {**_module_variables(scopes),
                                    **_returned(returns, annotations, w_returns, w_annotations, scopes)}, \
        _attribute_types(scopes)
