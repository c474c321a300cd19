"""Moving memory in and out: export to JSON-ready data, bulk import (an export with its
ids kept, or a list of node specs) and single-file backups.

Importing is idempotent: an export's nodes already there (same id) are skipped, and a
spec that is already current — the rule ``store`` follows (same namespace, kind,
normalised text and entities: :func:`.writes.find_duplicate`) — adds nothing and reports
the existing id. An importer may fix who wrote what it imports and the status its
decisions land with (``forced``: the MCP server's imports land ``proposed``, authored by
the client), over anything the data says.

Parsing and checking happen before the write transaction (:func:`parse_import`,
:func:`check_specs`, :func:`check_export`); the ``import_*`` functions then run inside
the caller's transaction on the connection they are given.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

from ..errors import NervapackError
from . import nodes, schema
from .ids import resolve as resolve_id
from .nodes import INSERT_NODE, NODE_COLS, node_dict
from .resolve import clean_name, find_entity
from .timeutil import new_id, now_iso, to_iso
from .validate import (
    REVIEW_STATUSES,
    check_confidence,
    check_content,
    check_edge_kind,
    check_kind,
    check_namespace,
    check_status,
    json_dict,
    new_times,
    str_list,
)

__all__ = ["EXPORT_FORMAT", "export", "parse_import", "check_specs", "import_specs", "check_export",
           "import_export", "backup_target", "backup"]

EXPORT_FORMAT = "nervapack-memory"


def export(conn: sqlite3.Connection, ns: str | None) -> dict:
    """Everything in namespace ``ns`` (``None``: all of them) as JSON-ready data."""
    where, params = ("", ()) if ns is None else (" WHERE namespace = ?", (ns,))
    found = [node_dict(r) for r in conn.execute(f"SELECT {NODE_COLS} FROM mem_nodes{where} ORDER BY rid", params)]
    for n in found:
        n.pop("degree", None)
    edges = [{"namespace": r["namespace"], "source": r["src"], "target": r["dst"], "kind": r["kind"],
              "weight": r["weight"], "created_at": r["created_at"], "data": json.loads(r["data"] or "{}")}
             for r in conn.execute(f"SELECT * FROM mem_edges{where} ORDER BY rid", params)]
    aliases = [dict(r) for r in conn.execute(
        f"SELECT namespace, alias, entity_id FROM mem_aliases{where} ORDER BY namespace, alias", params)]
    refs = [dict(r) for r in conn.execute(
        f"SELECT namespace, node_id, entity_id, graph_node_id, code_kind, name, qualified_name, file, start_line, "
        f"end_line, language, file_sha, file_mtime, created_at, node_sha FROM mem_code_refs{where} ORDER BY rid",
        params)]
    return {"format": EXPORT_FORMAT, "version": 1, "schema_version": schema.schema_version(conn),
            "exported_at": now_iso(), "namespace": ns, "nodes": found, "edges": edges, "aliases": aliases,
            "code_refs": refs}


def parse_import(data: Any) -> tuple[str, dict[str, Any] | list[Any]]:
    """``("export", dict)`` or ``("specs", list)`` from JSON text or Python data."""
    if isinstance(data, (str, bytes)):
        try:
            data = json.loads(data)
        except json.JSONDecodeError as exc:
            raise NervapackError(f"import data is not valid JSON: {exc}") from None
        except RecursionError:
            raise NervapackError("import data is nested too deeply (an export is a few levels deep)") from None
    if isinstance(data, dict) and "nodes" in data:
        check_unicode(data)
        return "export", data
    if isinstance(data, dict):
        data = [data]
    if not isinstance(data, list):
        raise NervapackError("import expects a JSON array of node specs or an export object with 'nodes'")
    check_unicode(data)  # after the wrap above: places read [0].content for a single spec too
    return "specs", data


def check_unicode(data) -> None:
    """Refuse import data holding a lone surrogate (JSON may escape half of a UTF-16 pair,
    ``"\\ud800"``, which no UTF-8 text can hold and SQLite cannot store), naming where it is.

    Checked on the whole data before any write: one C-speed ``json.dumps`` and encode when
    all is well, a walk to find the place only when it is not."""
    try:
        json.dumps(data, ensure_ascii=False).encode("utf-8")
        return
    except UnicodeEncodeError:
        pass
    except (TypeError, ValueError, RecursionError):  # not JSON data: the shape checks say so
        return
    found = _first_surrogate(data)
    if found is not None:
        where, char, at = found
        raise NervapackError(f"import data holds a lone surrogate (\\u{ord(char):04x}, character {at}) in {where}: "
                             "it is not Unicode text; nothing was imported (write the character itself, or drop it)")


def _first_surrogate(data) -> tuple[str, str, int] | None:
    """(JSON path such as ``[1].content`` or ``nodes[0].metadata``, the surrogate, its index)
    of the first text in ``data`` (keys included) that cannot be encoded, in document order."""
    stack: list[tuple[str, object]] = [("", data)]
    while stack:  # a stack, not recursion: the data may be deep
        path, value = stack.pop()
        if isinstance(value, str):
            try:
                value.encode("utf-8")
            except UnicodeEncodeError as exc:
                return path or "the data", value[exc.start], exc.start
        elif isinstance(value, dict):
            items = list(value.items())
            for key, _ in items:
                if isinstance(key, str):
                    hit = _first_surrogate(key)
                    if hit is not None:
                        shown = key.encode("utf-8", "backslashreplace").decode()
                        return f"{path or 'the data'} (in the key {shown})", hit[1], hit[2]
            stack.extend((f"{path}.{k}" if path else str(k), v) for k, v in reversed(items))
        elif isinstance(value, list):
            stack.extend((f"{path}[{i}]", v) for i, v in reversed(list(enumerate(value))))
    return None


def check_forced(author: str | None = None, decision_status: str | None = None) -> dict:
    """What an importer fixes over the data: ``{"author"?, "status"?}``, checked."""
    forced: dict = {}
    if author is not None:
        forced["author"] = check_content(author)
    if decision_status is not None:
        forced["status"] = check_status(decision_status)
    return forced


def check_specs(specs: list, prov: dict | None = None, forced: dict | None = None) -> list[dict]:
    """Node specs checked and normalised (``prov``: the importer's provenance, for fields
    a spec does not give; ``forced``: :func:`check_forced`'s, over what a spec gives); an
    error names the item."""
    prepared = []
    for i, spec in enumerate(specs):
        if isinstance(spec, str):
            spec = {"content": spec}
        if not isinstance(spec, dict):
            raise NervapackError(f"import item {i} is not an object")
        try:
            kind = check_kind(spec.get("kind", "fact"))
            if kind == "session":
                raise NervapackError("sessions cannot be imported as specs")
            prepared.append({
                "kind": kind,
                "content": check_content(spec.get("content")),
                "confidence": check_confidence(spec.get("confidence", 1.0)),
                "rationale": spec.get("rationale"),
                "alternatives": str_list(spec.get("alternatives_rejected"), "alternatives_rejected"),
                "metadata": json_dict(spec.get("metadata")),
                "source": spec.get("source"),
                **dict(zip(("valid_from", "expires_at"), new_times(spec.get("valid_from"), spec.get("expires_at")),
                           strict=True)),
                "entities": list(dict.fromkeys(clean_name(e) for e in str_list(spec.get("entities"), "entities"))),
                "supersedes": spec.get("supersedes"),
                "prov": spec_provenance(spec, kind, prov, forced),
            })
        except NervapackError as exc:
            raise NervapackError(f"import item {i}: {exc}") from None
    return prepared


def spec_provenance(spec: dict, kind: str, prov: dict | None, forced: dict | None = None) -> dict:
    """Lifecycle and provenance of one imported spec: its own fields over the importer's,
    and ``forced`` (author, a decision's status) over both — an agent's import cannot name
    itself someone else, nor land its decisions accepted."""
    out = dict(prov or {})
    for key in ("author", "commit_sha", "title"):
        if spec.get(key) is not None:
            if not isinstance(spec[key], str):
                raise NervapackError(f"{key} must be text")
            out[key] = spec[key]
    if spec.get("tags") is not None:
        out["tags"] = str_list(spec.get("tags"), "tags")
    if spec.get("status") is not None:
        out["status"] = check_status(spec["status"]) if kind == "decision" else None
    forced = forced or {}
    if "author" in forced:
        out["author"] = forced["author"]
        out.pop("status_by", None)  # whoever set the status is the forced author (nodes.provenance_values)
    if "status" in forced and kind == "decision":
        out["status"] = forced["status"]
    return out


def _exported_provenance(n: dict, kind: str, forced: dict | None = None) -> tuple:
    """The lifecycle and provenance columns of an exported node (older exports have none:
    their decisions were agreed); ``forced`` (:func:`check_forced`) over what it says."""
    forced = forced or {}
    status = n.get("status")
    status_by, status_at, note = n.get("status_by"), to_iso(n.get("status_at"), field="status_at"), n.get("status_note")
    if kind == "decision":
        # "superseded" is derived from the chain on the way out; store what the review said
        status = n.get("review_status") or (status if status in REVIEW_STATUSES else "accepted")
        if "status" in forced and forced["status"] != status:  # a status this import sets, not a review's
            status, status_by, status_at, note = forced["status"], forced.get("author"), now_iso(), None
    else:
        status = None
    tags = str_list(n.get("tags"), "tags")
    return (status, status_by, status_at, note, forced.get("author", n.get("author")), n.get("origin"),
            n.get("repo_commit"), n.get("commit_sha"), n.get("title"), json.dumps(tags))


_CURRENT = ("n.tombstoned = 0 AND n.valid_until IS NULL AND n.superseded_by IS NULL "
            "AND (n.expires_at IS NULL OR n.expires_at > ?)")


class Existing:
    """Finds the current memory a spec repeats, by ``store``'s rule (same namespace, kind,
    normalised text and entities: :func:`.writes.find_duplicate`), for a whole import.

    Candidates come from the spec's first entity's ABOUT edges (an index seek; an entity that
    does not exist yet means nothing can repeat it), or, for a spec without entities, from the
    full-text index — the text's words as a phrase at the start of ``content`` — among
    memories about no entity. Every candidate is compared, however many share the words
    (thousands of "Status install ok installed" facts, one per package), and entity ids are
    looked up once per import."""

    def __init__(self, conn: sqlite3.Connection, ns: str) -> None:
        self.conn, self.ns, self.now = conn, ns, now_iso()
        self._entity: dict[str, str | None] = {}

    def entity(self, name: str) -> str | None:
        if name not in self._entity:
            self._entity[name] = find_entity(self.conn, self.ns, name)
        return self._entity[name]

    def find(self, kind: str, content: str, names: list[str]) -> str | None:
        from ..text import fts_quote, words
        from .writes import normalised

        want = normalised(content)
        if names:
            eids = [self.entity(n) for n in names]
            if None in eids:
                return None
            rows = self.conn.execute(
                f"SELECT n.id, n.content FROM mem_edges x JOIN mem_nodes n ON n.id = x.src WHERE x.dst = ? "
                f"AND x.kind = 'ABOUT' AND +n.namespace = ? AND +n.kind = ? AND {_CURRENT}",
                (eids[0], self.ns, kind, self.now))
            wanted = sorted({e for e in eids if e is not None})
            for nid, text in rows.fetchall():
                if normalised(text) == want and sorted({r[0] for r in self.conn.execute(
                        "SELECT dst FROM mem_edges WHERE src = ? AND kind = 'ABOUT'", (nid,))}) == wanted:
                    return nid
            return None
        tokens = words(content, limit=32)
        if not tokens:
            return None
        rows = self.conn.execute(
            "SELECT n.id, n.content FROM mem_fts JOIN mem_nodes n ON n.rid = mem_fts.rowid WHERE mem_fts MATCH ? "
            f"AND +n.namespace = ? AND +n.kind = ? AND {_CURRENT} AND NOT EXISTS (SELECT 1 FROM mem_edges x "
            "WHERE x.src = n.id AND x.kind = 'ABOUT') ORDER BY n.rid",
            ("content : ^ " + fts_quote(" ".join(tokens)), self.ns, kind, self.now))
        for nid, text in rows.fetchall():
            if normalised(text) == want:
                return nid
        return None


def import_specs(conn: sqlite3.Connection, ns: str, prepared: list[dict], code: dict,
                 session_hint: str | None = None) -> tuple[list[str], int]:
    """Insert checked specs in one pass (nodes, then entities and edges); returns their ids
    (an existing one's for a spec already there) and how many were already there.

    A spec is already there when ``store`` would return an existing id for it: a current
    memory of the same kind, normalised text and entities (:func:`.writes.find_duplicate`),
    or one given earlier in the same import; an entity when its name resolves. A spec that
    supersedes something is always new, as in ``store``."""
    from .writes import normalised

    stamp = now_iso()
    sid = nodes.active_session(conn, ns, session_hint)
    # what each spec supersedes, resolved before this import adds ids a prefix could also start
    replaced = {idx: resolve_id(conn, ns, str(item["supersedes"])) for idx, item in enumerate(prepared)
                if item["supersedes"]}
    rows: list[tuple] = []
    new_ids: dict[int, str] = {}  # item index -> the new node's id (entities are resolved below)
    present: dict[int, str] = {}  # item index -> the id of the memory already there
    seen: dict[tuple, str] = {}  # (kind, text, entities) of this import -> the id it got
    existing = Existing(conn, ns)
    for idx, item in enumerate(prepared):
        if item["kind"] == "entity":
            if find_entity(conn, ns, clean_name(item["content"])):
                present[idx] = ""  # resolved below, like a new one
            continue
        if not item["supersedes"]:
            key = (item["kind"], normalised(item["content"]), tuple(sorted(n.casefold() for n in item["entities"])))
            same = seen.get(key) or existing.find(item["kind"], item["content"], item["entities"])
            if same:
                present[idx] = same
                continue
        nid = new_ids[idx] = new_id(item["kind"])
        if not item["supersedes"]:
            seen[key] = nid
        rows.append((nid, ns, item["kind"], item["content"], item["confidence"], item["rationale"],
                     json.dumps(item["alternatives"]), item["metadata"], item["source"], sid,
                     item["valid_from"] or stamp, None, stamp, item["expires_at"], None, 0, None, 0, None, None,
                     *nodes.provenance_values(item["kind"], item["prov"], stamp)))
    conn.executemany(INSERT_NODE, rows)
    entity_ids: dict[str, str] = {}
    edges = []
    ids: list[str] = []
    for idx, item in enumerate(prepared):
        if item["kind"] == "entity":
            ids.append(nodes.entity(conn, ns, clean_name(item["content"]), stamp))
            continue
        if idx in present:
            ids.append(present[idx])
            continue
        nid = new_ids[idx]
        ids.append(nid)
        if sid:
            edges.append((ns, nid, sid, "OCCURRED_IN", 1.0, stamp, "{}"))
        for name in item["entities"]:
            eid = entity_ids.get(name)
            if eid is None:
                eid = entity_ids[name] = nodes.entity(conn, ns, name, stamp)
            edges.append((ns, nid, eid, "ABOUT", 1.0, stamp, "{}"))
            if name in code:
                nodes.link_code(conn, ns, nid, eid, code[name], stamp)
    before = conn.total_changes
    conn.executemany("INSERT OR IGNORE INTO mem_edges(namespace, src, dst, kind, weight, created_at, data) "
                     "VALUES (?,?,?,?,?,?,?)", edges)
    if conn.total_changes - before == len(edges):
        bump: dict[str, int] = {}
        for e in edges:
            bump[e[1]] = bump.get(e[1], 0) + 1
            bump[e[2]] = bump.get(e[2], 0) + 1
        conn.executemany("UPDATE mem_nodes SET degree = degree + ? WHERE id = ?",
                         [(c, nid) for nid, c in bump.items()])
    else:  # some edges already existed: count exactly
        nodes.recount_degree(conn, {e[1] for e in edges} | {e[2] for e in edges})
    for idx, item in enumerate(prepared):
        if item["supersedes"]:
            nodes.supersede(conn, ns, ids[idx], replaced[idx])
    return ids, len(present)


def check_export(data: dict, namespace=None, forced: dict | None = None) -> tuple[list[tuple], str | None]:
    """The node rows of an export, checked; ``namespace`` overrides the stored ones,
    ``forced`` (:func:`check_forced`) the author and the decisions' status."""
    found = data.get("nodes") or []
    if not isinstance(found, list):
        raise NervapackError("'nodes' must be a list")
    override = check_namespace(namespace) if namespace is not None else None
    rows = []
    for i, n in enumerate(found):
        if not isinstance(n, dict) or not n.get("id"):
            raise NervapackError(f"export node {i} has no id")
        try:
            kind = check_kind(n.get("kind"))
            rows.append((
                str(n["id"]), override or check_namespace(n.get("namespace", "default")), kind,
                check_content(n.get("content")), check_confidence(n.get("confidence", 1.0)), n.get("rationale"),
                json.dumps(str_list(n.get("alternatives_rejected"), "alternatives_rejected")),
                json_dict(n.get("metadata")), n.get("source"), n.get("session_id"),
                to_iso(n.get("valid_from"), field="valid_from") or now_iso(),
                to_iso(n.get("valid_until"), field="valid_until"),
                to_iso(n.get("recorded_at"), field="recorded_at") or now_iso(),
                to_iso(n.get("expires_at"), field="expires_at"), n.get("superseded_by"),
                1 if n.get("tombstoned") else 0, to_iso(n.get("tombstoned_at"), field="tombstoned_at"),
                int(n.get("access_count") or 0), to_iso(n.get("last_accessed"), field="last_accessed"),
                to_iso(n.get("verified_at"), field="verified_at"),
                *_exported_provenance(n, kind, forced),
            ))
        except NervapackError as exc:
            raise NervapackError(f"export node {i} ({n.get('id')}): {exc}") from None
    return rows, override


def import_export(conn: sqlite3.Connection, data: dict, rows: list[tuple], override: str | None) -> int:
    """Insert an export's nodes (ids kept, existing ones skipped), edges, aliases and code
    references; returns how many nodes were new."""
    edges = data.get("edges") or []
    aliases = data.get("aliases") or []
    refs = data.get("code_refs") or []

    def ns_of(rec):
        return override or rec.get("namespace") or "default"

    before = conn.execute("SELECT COUNT(*) FROM mem_nodes").fetchone()[0]
    conn.executemany(INSERT_NODE.replace("INSERT INTO", "INSERT OR IGNORE INTO"), rows)
    imported = conn.execute("SELECT COUNT(*) FROM mem_nodes").fetchone()[0] - before
    try:
        conn.executemany(
            "INSERT OR IGNORE INTO mem_edges(namespace, src, dst, kind, weight, created_at, data)"
            " VALUES (?,?,?,?,?,?,?)",
            [(ns_of(e), e["source"], e["target"], check_edge_kind(e["kind"]), float(e.get("weight", 1.0)),
              to_iso(e.get("created_at"), field="edge created_at") or now_iso(),
              json.dumps(e.get("data") or {}, sort_keys=True)) for e in edges])
        conn.executemany("INSERT OR IGNORE INTO mem_aliases(namespace, alias, entity_id) VALUES (?,?,?)",
                         [(ns_of(a), a["alias"], a["entity_id"]) for a in aliases])
        conn.executemany(
            "INSERT OR IGNORE INTO mem_code_refs(namespace, node_id, entity_id, graph_node_id, code_kind, name, "
            "qualified_name, file, start_line, end_line, language, file_sha, file_mtime, created_at, node_sha) "
            "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            [(ns_of(r), r["node_id"], r["entity_id"], r["graph_node_id"], r.get("code_kind"), r.get("name"),
              r.get("qualified_name"), r.get("file"), r.get("start_line"), r.get("end_line"), r.get("language"),
              r.get("file_sha"), r.get("file_mtime"), r.get("created_at") or now_iso(), r.get("node_sha"))
             for r in refs])
    except (KeyError, TypeError, ValueError) as exc:
        raise NervapackError(f"malformed edge, alias or code reference in import: {exc!r}") from None
    nodes.recount_degree(conn, {e["source"] for e in edges} | {e["target"] for e in edges})
    return imported


def backup_target(dest, *, overwrite: bool = False) -> Path:
    """Where a backup goes, checked (and an old file removed when ``overwrite``)."""
    target = Path(dest).expanduser()
    if target.exists():
        if not overwrite:
            raise NervapackError(f"{target} already exists; choose another path or overwrite it")
        if target.is_dir():
            raise NervapackError(f"{target} is a directory")
        target.unlink()
    if not target.parent.is_dir():
        raise NervapackError(f"folder {target.parent} does not exist")
    return target


def backup(conn: sqlite3.Connection, target: Path) -> dict:
    """A consistent single-file copy made with ``VACUUM INTO`` (safe while others write)."""
    conn.execute("VACUUM INTO ?", (str(target),))
    return {"path": str(target), "bytes": target.stat().st_size}
