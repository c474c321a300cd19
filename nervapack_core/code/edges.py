"""Node ids and the cross-file edges of the code graph.

:func:`node_id` is stable across ingests while a definition keeps its file, kind and
name. :func:`resolve_edges` recomputes every IMPORTS, CALLS, INHERITS and EXPLAINS edge
from the stored references and doc sections, inside the ingest's write transaction.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict

from .binder import Definition, DefinitionIndex, bind_section
from .imports import ImportResolver

__all__ = ["node_id", "resolve_edges", "CROSS_FILE_EDGES"]

CROSS_FILE_EDGES = ("IMPORTS", "CALLS", "INHERITS", "EXPLAINS")


def node_id(file: str, kind: str, qualified_name: str) -> str:
    """Stable across ingests while the definition keeps its file, kind and name."""
    return hashlib.sha1(f"{file}\0{kind}\0{qualified_name}".encode()).hexdigest()[:16]


def resolve_edges(conn) -> None:
    """Recompute every cross-file edge from the stored references and doc sections."""
    conn.execute(f"DELETE FROM edges WHERE kind IN ({','.join('?' * len(CROSS_FILE_EDGES))})", CROSS_FILE_EDGES)
    languages = dict(conn.execute("SELECT path, language FROM files"))
    file_ids = {path: node_id(path, "file", path) for path in languages}
    defs = conn.execute(
        "SELECT id, kind, name, qualified_name, file, subkind, parent_id FROM nodes"
        " WHERE kind IN ('class', 'function', 'variable')").fetchall()
    by_name: dict[str, list] = defaultdict(list)
    classes_by_name: dict[str, list] = defaultdict(list)
    for d in defs:
        if d["kind"] != "variable":
            by_name[d["name"]].append(d)
        if d["kind"] == "class":
            classes_by_name[d["name"]].append(d)
    qname_of = {d["id"]: d["qualified_name"] for d in defs}

    resolver = ImportResolver(list(languages))
    imports_of: dict[str, set[str]] = defaultdict(set)
    edges = []
    refs = conn.execute("SELECT file, source_id, kind, name, names FROM refs").fetchall()
    for r in refs:
        if r["kind"] != "import":
            continue
        names = tuple(r["names"].split(",")) if r["names"] else ()
        for target in resolver.resolve(languages.get(r["file"], ""), r["file"], r["name"], names):
            if target not in imports_of[r["file"]]:
                imports_of[r["file"]].add(target)
                edges.append((file_ids[r["file"]], file_ids[target], "IMPORTS", 1.0, r["name"]))

    for r in refs:
        kind = r["kind"]
        if kind == "import":
            continue
        pool = classes_by_name if kind == "base" else by_name
        cands = pool.get(r["name"])
        if not cands:
            continue
        target, conf = _pick(r, cands, imports_of[r["file"]], qname_of)
        if target is None or target["id"] == r["source_id"]:
            continue
        edge_kind = "INHERITS" if kind == "base" else "CALLS"
        edges.append((r["source_id"], target["id"], edge_kind, conf, f"{r['name']}"))

    index = DefinitionIndex([
        Definition(d["id"], d["name"], d["qualified_name"], d["file"], d["parent_id"] == file_ids.get(d["file"]))
        for d in defs if d["kind"] in ("class", "function")
    ])
    for doc in conn.execute("SELECT id, name, text FROM nodes WHERE kind='doc'"):
        for b in bind_section(f"{doc['name']}\n{doc['text']}", index):
            edges.append((doc["id"], b.target, "EXPLAINS", b.confidence, b.evidence))
    # keep the most confident edge per (source, target, kind)
    best: dict[tuple, tuple] = {}
    for e in edges:
        key = e[:3]
        if key not in best or e[3] > best[key][3]:
            best[key] = e
    conn.executemany("INSERT OR REPLACE INTO edges VALUES (?, ?, ?, ?, ?)", list(best.values()))


def _pick(ref, cands, imported_files: set[str], qname_of: dict[str, str]):
    """The definition a call or base name most likely means, with a confidence; or (None, 0)."""
    same_file = [c for c in cands if c["file"] == ref["file"]]
    if ref["kind"] == "method" and same_file:
        # self.helper(): prefer a method of the caller's own class
        source_q = qname_of.get(ref["source_id"], "")
        owner = source_q.rsplit(".", 1)[0] if "." in source_q else None
        own = [c for c in same_file if owner and c["qualified_name"].rsplit(".", 1)[0] == owner]
        if len(own) == 1:
            return own[0], 1.0
    if len(same_file) == 1:
        return same_file[0], 0.95
    if same_file:
        return None, 0.0
    imported = [c for c in cands if c["file"] in imported_files]
    if len(imported) == 1:
        return imported[0], 0.9
    if len(cands) == 1:
        return cands[0], 0.6 if ref["kind"] != "method" else 0.4
    return None, 0.0


