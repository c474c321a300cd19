"""Import an ADR folder into the memory: each record one decision, idempotently.

Rules (documented in the README, "ADR folders"):

- A record is matched to its decision by the memory id in its front matter
  (``nervapack-id``, as ``export-adr`` writes it), else by ``source`` (the file's path
  from the repository root) in the namespace, else, for a file that moved, by the hash of
  its text among decisions whose file is gone.
- An unchanged file (same SHA-256 as at its last import) changes nothing and is not even
  parsed. An edited file updates its decision **in place** (same id): text, title,
  rationale, alternatives, tags, date. The file is the team's record and git keeps its
  history, so an edit is not a new version; a new version is a new ADR that supersedes it.
- Status: a status changed in the file wins (the change is logged as a review by the
  record's deciders); a review made in NervaPack stands until the file's status changes.
  A missing or unrecognised status imports as ``proposed`` — never passed off as agreed.
  "Superseded by X" stores ``accepted`` plus the supersession (status ``superseded`` is
  derived from it); a record marked superseded whose successor cannot be found is stored
  ``deprecated``, with a warning.
- "Superseded by" / "Supersedes" links become supersessions, "Amends" / "Amended by"
  DERIVED_FROM edges; links are kept (as sources) with the decision, so a link to a file
  imported later is applied then.
- A file that was imported and is gone is reported (``missing``), never deleted.
- Everything is written in one transaction; an import with nothing to do writes nothing.
"""

from __future__ import annotations

import json
import re
import sqlite3

from ...errors import NervapackError
from .. import nodes
from ..provenance import git_head, repo_root
from ..resolve import clean_name
from ..timeutil import new_id, now_iso, to_iso
from .block import derived_id, governs_name, strip_block
from .folder import AdrFile, AdrRecord, base_root, checked_folder, read_records, scan
from .parse import MEMORY_ID, decision_content

__all__ = ["import_folder", "stored_status"]

_SHA = re.compile(r"^[0-9a-f]{40}$|^[0-9a-f]{64}$")
_COLS = "id, namespace, kind, content, rationale, alternatives, metadata, source, valid_from, tombstoned, " \
        "superseded_by, status, author, title, tags, commit_sha"


def stored_status(file_status: str | None) -> str:
    """The review status a record's status is stored as (superseded: accepted + the link)."""
    if file_status == "superseded":
        return "accepted"
    return file_status or "proposed"


def _meta(row) -> dict:
    try:
        data = json.loads(row["metadata"] or "{}")
    except (TypeError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _known(conn: sqlite3.Connection, ns: str, prefix: str) -> dict[str, sqlite3.Row]:
    """Decisions of ``ns`` whose source lies in the folder (``prefix``), by source; of two
    with the same source, the one imported from the file (else the newest)."""
    rows = conn.execute(
        f"SELECT {_COLS}, rid FROM mem_nodes WHERE namespace = ? AND kind = 'decision' AND source IS NOT NULL "
        "AND substr(source, 1, ?) = ? ORDER BY (json_extract(metadata, '$.adr.sha') IS NOT NULL), rid",
        (ns, len(prefix), prefix)).fetchall()
    return {r["source"]: r for r in rows}


def _prefix(folder_source: str) -> str:
    return "" if folder_source in ("", ".") else folder_source.rstrip("/") + "/"


def import_folder(store, folder, ns: str) -> dict:
    """Import the ADR files under ``folder`` into namespace ``ns`` of ``store`` (a
    :class:`~..store.MemoryStore`); returns the report (see the module docstring)."""
    path = checked_folder(folder)
    root = base_root(path, store.graph.root)
    try:
        folder_source = path.relative_to(root).as_posix()
    except ValueError:
        folder_source = path.as_posix()
    prefix = _prefix(folder_source)
    files = scan(path, root)
    report: dict = {"folder": str(path), "source_prefix": prefix, "namespace": ns, "files": len(files),
                    "imported": 0, "updated": 0, "unchanged": 0, "skipped": [], "supersessions": 0,
                    "missing": [], "warnings": [], "decisions": []}
    sources = {f.source for f in files}
    known = store._read(lambda conn: _known(conn, ns, prefix))

    to_parse: list[AdrFile] = []
    graph_now = any(_meta(r).get("adr", {}).get("unlinked") for r in known.values()) and store.graph.available()
    for f in files:
        row = known.get(f.source)
        # unchanged, unless code it governs could not be linked before and a code graph is there now
        if row is not None and _meta(row).get("adr", {}).get("sha") == f.sha and f.sha \
                and not (graph_now and _meta(row).get("adr", {}).get("unlinked")):
            if row["tombstoned"]:
                report["skipped"].append((f.source, f"its decision {row['id']} was forgotten in memory"))
            else:
                report["unchanged"] += 1
            continue
        to_parse.append(f)
    records, skipped = read_records(to_parse, path, root, files)
    report["skipped"] += skipped
    commits = _commits(store, records, report)
    mentions = {rec.file.source: code_mentions(rec) for rec in records}
    code = resolve_code(store, [governs_name(g) for rec in records for g in rec.governs]
                        + [name for names in mentions.values() for name in names])
    pinned = pin_code(store, repo_root(path), records, code)
    suggested = _suggestions(records, mentions, code)
    head = git_head(repo_root(path))
    author = store.author
    report["code"] = []
    report["suggested"] = []

    def apply(conn: sqlite3.Connection) -> None:
        _apply(conn, ns, prefix, records, sources, commits, head, author, report, code, pinned, suggested)

    # nothing new or edited and every link already applied: no write transaction at all
    if records or store._read(lambda conn: bool(_link_actions(conn, ns, prefix, sources))):
        store._write(apply)
    else:
        report["missing"] = _missing(known, sources, set())
    report["skipped"] = sorted(report["skipped"])
    return report


def _commits(store, records: list[AdrRecord], report: dict) -> dict[str, str]:
    """``{source: full sha}`` for records naming the commit that implemented them."""
    out: dict[str, str] = {}
    for rec in records:
        ref = rec.adr.commit
        if not ref:
            continue
        if _SHA.match(ref.lower()):
            out[rec.file.source] = ref.lower()
            continue
        try:
            out[rec.file.source] = store.resolve_commit(ref)
        except NervapackError as exc:
            rec.warnings.append(f"commit {ref!r} not recorded: {exc}")
    return out


def _values(rec: AdrRecord, commit: str | None, importer: str | None, code: dict[str, dict]) -> dict:
    """The columns a record gives its decision."""
    a = rec.adr
    content = decision_content(rec.title, a.decision, a.chosen, a.decision_text)
    adr_meta: dict[str, object] = {
        "sha": rec.file.sha, "format": a.format, "status": a.status, "status_text": a.status_text,
        "date_from": rec.date_from, "links": [list(t) for t in rec.targets]}
    if rec.governs:  # the block's as written (export keeps them so; the front matter's are the team's)
        adr_meta["governs"] = rec.block.governs if rec.block else []
        linked = [governs_name(g) for g in rec.governs if code.get(governs_name(g), {}).get("state") == "linked"]
        if linked:  # export drops an entry whose link was removed since (memory link --remove)
            adr_meta["linked"] = linked
        if len(linked) < len(rec.governs):
            adr_meta["unlinked"] = len(rec.governs) - len(linked)
    if a.number is not None:
        adr_meta["number"] = a.number
    if a.options:
        adr_meta["options"] = a.options
    if a.chosen:
        adr_meta["chosen"] = a.chosen
    if a.extra:
        adr_meta["front_matter"] = a.extra
    author = a.author or (", ".join(a.deciders) if a.deciders else None) or rec.git_author or importer
    return {
        "content": content, "title": rec.title, "rationale": a.rationale,
        "alternatives": json.dumps(a.alternatives), "tags": json.dumps(a.tags),
        "valid_from": to_iso(rec.valid_from, field="date"), "source": rec.file.source, "author": author,
        "commit_sha": commit, "adr": adr_meta, "deciders": a.deciders,
        "status_by": recorded_status_by(a),
    }


def recorded_status_by(a) -> str | None:
    """Who set a record's status, when the record says so: its deciders (MADR ``deciders:``, a
    ``Deciders:`` line). None otherwise — the file's git author wrote it, which is not
    having accepted it, so "accepted by" is left unrecorded rather than guessed."""
    return ", ".join(a.deciders) if a.deciders else None


def _merged_metadata(old: dict, v: dict) -> str:
    meta = dict(old)
    meta["adr"] = v["adr"]
    if v["deciders"]:
        meta["deciders"] = v["deciders"]
    else:
        meta.pop("deciders", None)
    return json.dumps(meta, sort_keys=True, ensure_ascii=False)


def _match(conn: sqlite3.Connection, ns: str, rec: AdrRecord, known: dict[str, sqlite3.Row],
           gone: dict[str, sqlite3.Row], used: set[str], sources: set[str]) -> tuple[sqlite3.Row | None, str | None]:
    """(the decision this record is, a warning) by memory id (unless another file of the
    folder holds that decision: a copied file), source, then moved-file hash."""
    mid = rec.adr.memory_id
    warning = None
    if mid:
        row = conn.execute(f"SELECT {_COLS} FROM mem_nodes WHERE id = ?", (mid,)).fetchone()
        if row is not None:
            if row["namespace"] != ns:
                warning = f"memory id {mid} belongs to namespace {row['namespace']!r}; not used here"
            elif row["kind"] != "decision":
                warning = f"memory id {mid} is a {row['kind']}, not a decision; not used"
            elif row["id"] in used or (row["source"] != rec.file.source and row["source"] in sources):
                warning = f"memory id {mid} is another file's in this folder too; not used for this one"
            else:
                return row, None
    row = known.get(rec.file.source)
    if row is not None and row["id"] not in used:
        return row, warning
    for src, old in gone.items():
        if old["id"] not in used and _meta(old).get("adr", {}).get("sha") == rec.file.sha:
            del gone[src]
            return old, warning
    return None, warning


def _apply(conn: sqlite3.Connection, ns: str, prefix: str, records: list[AdrRecord], sources: set[str],
           commits: dict[str, str], head: str | None, importer: str | None, report: dict,
           code: dict[str, dict], pinned: dict[str, dict[str, dict]] | None = None,
           suggested: dict[str, list[dict]] | None = None) -> None:
    stamp = now_iso()
    known = _known(conn, ns, prefix)
    gone = {s: r for s, r in known.items() if s not in sources and _meta(r).get("adr")}
    used: set[str] = set()
    for rec in records:
        v = _values(rec, commits.get(rec.file.source), importer, code)
        proposals = (suggested or {}).get(rec.file.source) or []
        if proposals:  # kept with the decision until someone links them (memory link) or not
            v["adr"]["suggested"] = proposals
        row, warning = _match(conn, ns, rec, known, gone, used, sources)
        if warning:
            rec.warnings.append(warning)
        if row is not None and row["tombstoned"]:
            report["skipped"].append((rec.file.source, f"its decision {row['id']} was forgotten in memory"))
            continue
        if row is None:
            nid = _insert(conn, ns, rec, v, head, stamp)
            action = "imported"
        else:
            nid = row["id"]
            action = "updated" if _update(conn, ns, row, rec, v, stamp) else "unchanged"
        used.add(nid)
        _govern(conn, ns, nid, rec, {**code, **(pinned or {}).get(rec.file.source, {})}, stamp, report)
        report["suggested"] += [{"source": rec.file.source, "id": nid, **x} for x in proposals]
        if _restore_reviews(conn, ns, nid, rec) and action == "unchanged":
            action = "updated"
        report[action] += 1
        if action != "unchanged":
            report["decisions"].append({"source": rec.file.source, "id": nid, "action": action,
                                        "status": stored_status(rec.adr.status), "title": rec.title})
        report["warnings"] += [(rec.file.source, w) for w in rec.warnings]
    for link in _link_actions(conn, ns, prefix, sources):
        _link(conn, ns, link, stamp, report)
    for entry in report["decisions"]:  # as served now: "superseded" when a link replaced it
        row = conn.execute("SELECT kind, status, superseded_by, valid_until FROM mem_nodes WHERE id = ?",
                           (entry["id"],)).fetchone()
        entry["status"] = nodes.effective_status(row["kind"], row["status"], row["superseded_by"], row["valid_until"])
    report["missing"] = _missing(_known(conn, ns, prefix), sources, used)


def _missing(known: dict[str, sqlite3.Row], sources: set[str], used: set[str]) -> list[dict]:
    return [{"source": s, "id": r["id"]} for s, r in sorted(known.items())
            if s not in sources and r["id"] not in used and not r["tombstoned"] and _meta(r).get("adr")]


def _insert(conn: sqlite3.Connection, ns: str, rec: AdrRecord, v: dict, head: str | None, stamp: str) -> str:
    nid = _new_decision_id(conn, ns, rec)
    status = stored_status(rec.adr.status)
    conn.execute(nodes.INSERT_NODE, (
        nid, ns, "decision", v["content"], 1.0, v["rationale"], v["alternatives"], _merged_metadata({}, v),
        v["source"], None, v["valid_from"], None, stamp, None, None, 0, None, 0, None, None,
        status, v["status_by"], v["valid_from"], None, v["author"], "adr", head, v["commit_sha"], v["title"],
        v["tags"]))
    return nid


def _new_decision_id(conn: sqlite3.Connection, ns: str, rec: AdrRecord) -> str:
    """The id of a decision first imported from ``rec``: the one its file names (block ``id``,
    front matter ``nervapack-id``) when free, else the one derived from the file's path (the
    same on every clone: :func:`.block.derived_id`), else (taken, e.g. by a decision whose file
    was copied) a new one."""
    for nid in (rec.adr.memory_id, derived_id(ns, rec.file.source)):
        if nid and conn.execute("SELECT 1 FROM mem_nodes WHERE id = ?", (nid,)).fetchone() is None:
            return nid
    return new_id("decision")


def _update(conn: sqlite3.Connection, ns: str, row: sqlite3.Row, rec: AdrRecord, v: dict, stamp: str) -> bool:
    """Bring a decision in line with its edited file; False when nothing differs."""
    old_meta = _meta(row)
    changes = {
        "content": v["content"], "title": v["title"], "rationale": v["rationale"],
        "alternatives": v["alternatives"], "tags": v["tags"], "valid_from": v["valid_from"],
        "source": v["source"], "author": v["author"], "metadata": _merged_metadata(old_meta, v),
    }
    if v["commit_sha"]:
        changes["commit_sha"] = v["commit_sha"]
    differ = {k: val for k, val in changes.items() if row[k] != val}
    # the file's status wins when it changed since the last import (a NervaPack review stands otherwise)
    before = old_meta["adr"].get("status") if isinstance(old_meta.get("adr"), dict) else None
    new_status = stored_status(rec.adr.status)
    was = stored_status(before) if "adr" in old_meta else row["status"]
    status_changed = new_status != was and new_status != row["status"]
    if not differ and not status_changed:
        return False
    if differ:
        sets = ", ".join(f"{k} = ?" for k in differ)
        conn.execute(f"UPDATE mem_nodes SET {sets} WHERE id = ?", (*differ.values(), row["id"]))
    if status_changed:
        note = f"status set to {rec.adr.status_text or new_status!r} in {rec.file.source}"
        conn.execute("UPDATE mem_nodes SET status = ?, status_by = ?, status_at = ?, status_note = ? WHERE id = ?",
                     (new_status, v["status_by"], stamp, note, row["id"]))
        conn.execute("INSERT INTO mem_reviews(namespace, node_id, status, previous, reviewer, note, created_at) "
                     "VALUES (?,?,?,?,?,?,?)", (ns, row["id"], new_status, row["status"], v["status_by"], note, stamp))
    return True


def _link_actions(conn: sqlite3.Connection, ns: str, prefix: str, sources: set[str]) -> list[tuple]:
    """What the folder's links still ask for: ``("supersede", new, old, source)``,
    ``("derive", src, dst, source)``, ``("orphan", id, None, source)`` (marked superseded,
    successor unknown: stored deprecated)."""
    rows = [r for s, r in _known(conn, ns, prefix).items() if s in sources and not r["tombstoned"]]
    by_source = {r["source"]: r for r in rows}
    actions: list[tuple] = []
    superseded: set[str] = set()
    for r in rows:
        adr = _meta(r).get("adr") or {}
        for said, target in adr.get("links", []):
            kind = said.removeprefix("block:")
            other = by_source.get(target) or _by_id(conn, ns, target)
            if other is None or other["id"] == r["id"]:
                continue
            if kind == "contradicts":
                if conn.execute("SELECT 1 FROM mem_edges WHERE src = ? AND dst = ? AND kind = 'CONTRADICTS'",
                                (r["id"], other["id"])).fetchone() is None:
                    actions.append(("contradict", r["id"], other["id"], r["source"]))
                continue
            if kind in ("superseded", "supersedes"):
                new, old = (other, r) if kind == "superseded" else (r, other)
                superseded.add(old["id"])
                if old["superseded_by"] is None:
                    actions.append(("supersede", new["id"], old["id"], r["source"]))
            elif kind in ("amends", "amended"):
                src, dst = (r, other) if kind == "amends" else (other, r)
                if conn.execute("SELECT 1 FROM mem_edges WHERE src = ? AND dst = ? AND kind = 'DERIVED_FROM'",
                                (src["id"], dst["id"])).fetchone() is None:
                    actions.append(("derive", src["id"], dst["id"], r["source"]))
    for r in rows:
        adr = _meta(r).get("adr") or {}
        if adr.get("status") == "superseded" and r["superseded_by"] is None and r["id"] not in superseded \
                and r["status"] == "accepted":
            actions.append(("orphan", r["id"], None, r["source"]))
    return list(dict.fromkeys(actions))


def _link(conn: sqlite3.Connection, ns: str, action: tuple, stamp: str, report: dict) -> None:
    kind, a, b, source = action
    if kind == "supersede":
        current = conn.execute("SELECT superseded_by FROM mem_nodes WHERE id = ?", (b,)).fetchone()
        if current is not None and current[0] is not None:
            if current[0] != a:
                report["warnings"].append((source, f"{b} is already superseded by {current[0]}; link to {a} "
                                                   "not applied"))
            return
        try:
            nodes.supersede(conn, ns, a, b)
        except NervapackError as exc:  # a cycle in the records' links
            report["warnings"].append((source, f"supersession {a} -> {b} not applied: {exc}"))
            return
        report["supersessions"] += 1
    elif kind == "derive":
        nodes.edge(conn, ns, a, b, "DERIVED_FROM", stamp=stamp)
    elif kind == "contradict":
        nodes.edge(conn, ns, a, b, "CONTRADICTS", stamp=stamp)
    elif kind == "orphan":
        conn.execute("UPDATE mem_nodes SET status = 'deprecated' WHERE id = ?", (a,))
        report["warnings"].append((source, "marked superseded but no record of the folder supersedes it; "
                                           "stored as deprecated"))


def _by_id(conn: sqlite3.Connection, ns: str, target: str) -> sqlite3.Row | None:
    """The live decision of ``ns`` a block's link names by id (None: not an id, or not one)."""
    if not MEMORY_ID.match(target):
        return None
    return conn.execute(f"SELECT {_COLS} FROM mem_nodes WHERE id = ? AND namespace = ? AND kind = 'decision' "
                        "AND tombstoned = 0", (target, ns)).fetchone()


# ---------------------------------------------------------------- the block: code, reviews
def resolve_code(store, names: list[str]) -> dict[str, dict]:
    """What each ``governs`` name links to: ``{name: {"state", "hits", "candidates", "note"}}``,
    state ``linked`` (the definition, or the file), ``ambiguous`` (several: none linked, the
    candidates listed as ``file::qualified name``), ``unknown`` or ``no_graph`` (no code graph
    yet) — :meth:`..bridge.CodeGraph.resolve`, the one place import asks the code graph.

    A name is a file path (``lib/bulk_data/cache.rb``), ``path::Name``, or a qualified name as
    the language writes it (``BulkData::Cache``, ``App\\Models\\User``, ``billing.invoice.Invoice``)."""
    names = list(dict.fromkeys(n for n in names if n))
    out: dict[str, dict] = {}
    for name, r in store.graph.resolve(names).items():
        shown = [f"{c['file']}::{c['qualified_name']}" for c in r["candidates"]]
        more = r["total"] - len(shown) if r["state"] == "ambiguous" else 0
        out[name] = {"state": r["state"], "hits": r["hits"] if r["state"] == "linked" else [],
                     "candidates": shown + ([f"… and {more} more"] if more > 0 else []), "note": r["note"]}
    return out


#: a code name in backticks as a language writes a qualified one: ``BulkData::Cache``,
#: ``App\\Billing\\Invoice``, ``billing.invoice.Invoice`` (a bare word is too often not code)
_MENTION = re.compile(r"`([A-Za-z_]\w{0,80}(?:(?:::|\\|\.)[A-Za-z_]\w{0,80}){1,8})`")
MAX_MENTIONS = 20  # per file: the names looked up in the code graph for suggestions


def code_mentions(rec: AdrRecord) -> list[str]:
    """Qualified code names the record's text shows in backticks and its ``governs`` does not
    name: what import may suggest linking (at most :data:`MAX_MENTIONS`, in order of appearance)."""
    governed = {governs_name(g).casefold() for g in rec.governs}
    out: list[str] = []
    for m in _MENTION.finditer(strip_block(rec.file.text or "")):
        name = m.group(1)
        if name.casefold() not in governed and name not in out:
            out.append(name)
            if len(out) >= MAX_MENTIONS:
                break
    return out


def _suggestions(records: list[AdrRecord], mentions: dict[str, list[str]],
                 code: dict[str, dict]) -> dict[str, list[dict]]:
    """Per record, the mentioned names that resolve to exactly one definition its ``governs``
    does not already link: ``{source: [{code, linked}]}``, suggested, not linked — a mention in
    prose is not a claim that the decision governs the code, so a person confirms it with
    ``memory link ID --code …``."""
    out: dict[str, list[dict]] = {}
    for rec in records:
        governed = {h["graph_node_id"] for g in rec.governs
                    for h in code.get(governs_name(g), {}).get("hits", [])}
        for name in mentions.get(rec.file.source, []):
            found = code.get(name) or {}
            hits = found.get("hits") or []
            if found.get("state") == "linked" and not {h["graph_node_id"] for h in hits} <= governed:
                out.setdefault(rec.file.source, []).append(
                    {"code": name, "linked": sorted({f"{h['file']}::{h['qualified_name']}" for h in hits})})
    return out


def pin_code(store, root, records: list[AdrRecord], code: dict[str, dict]) -> dict[str, dict[str, dict]]:
    """Per record, its linked ``governs`` entries with the content hash each link is recorded
    at — the same on every clone, so ``memory stale`` agrees everywhere: the ``sha`` NervaPack
    wrote into the block (the hash when the link was made), else, for an entry a person wrote,
    the definition as the commit that last changed the ADR file has it (the code the decision
    was written against). ``{source: {name: resolution with pinned hits}}``; an entry whose
    definition that commit lacks keeps today's hash."""
    from ...gitrepo import git

    out: dict[str, dict[str, dict]] = {}
    revs: dict[str, str | None] = {}
    hashes: dict[tuple[str, str], dict | None] = {}
    for rec in records:
        for entry in rec.governs:
            name = governs_name(entry)
            found = code.get(name)
            if not found or found["state"] != "linked":
                continue
            given = entry.get("sha") if isinstance(entry, dict) else None
            hits = []
            for hit in found["hits"]:
                sha = str(given) if given else None
                if sha is None and root is not None and hit.get("code_kind") != "file":
                    source = rec.file.source
                    if source not in revs:
                        done = git(root, "log", "-1", "--format=%H", "--", source)
                        revs[source] = done.stdout.decode().strip() or None if done.returncode == 0 else None
                    rev = revs[source]
                    if rev is not None:
                        if (rev, hit["file"]) not in hashes:
                            hashes[(rev, hit["file"])] = store.graph.hashes_at(rev, hit["file"])
                        sha = (hashes[(rev, hit["file"])] or {}).get((hit["code_kind"], hit["qualified_name"]))
                hits.append({**hit, "node_sha": sha} if sha else hit)
            out.setdefault(rec.file.source, {})[name] = {**found, "hits": hits}
    return out


def _govern(conn: sqlite3.Connection, ns: str, nid: str, rec: AdrRecord, code: dict[str, dict], stamp: str,
            report: dict) -> None:
    """The record's ``governs`` entries as the decision's entities (ABOUT), TOUCHES the code
    each names when it resolves to exactly one definition; the report says which."""
    for entry in rec.governs:
        name = governs_name(entry)
        try:
            name = clean_name(name)
        except NervapackError as exc:
            rec.warnings.append(f"governs {name[:60]!r}: {exc}")
            continue
        found = code.get(name) or code.get(governs_name(entry)) or {"state": "unknown", "hits": [], "candidates": []}
        eid = nodes.entity(conn, ns, name, stamp)
        nodes.edge(conn, ns, nid, eid, "ABOUT", stamp=stamp)
        if found["state"] == "linked":
            nodes.link_code(conn, ns, nid, eid, found["hits"], stamp)
        report["code"].append({
            "source": rec.file.source, "id": nid, "code": name, "state": found["state"],
            "linked": sorted({f"{h['file']}::{h['qualified_name']}" for h in found["hits"]}),
            "candidates": found["candidates"] if found["state"] == "ambiguous" else [],
            "note": found.get("note") or ""})


def _restore_reviews(conn: sqlite3.Connection, ns: str, nid: str, rec: AdrRecord) -> bool:
    """The block's reviews as the decision's review history (each once); the last one sets
    its status, unless the team changed the file's status since NervaPack wrote the block
    (``file_status``) or a later review was made here. True when anything changed."""
    block = rec.block
    if block is None or not block.reviews:
        return False
    have = {(r[0], r[1], r[2]) for r in conn.execute(
        "SELECT status, reviewer, created_at FROM mem_reviews WHERE node_id = ?", (nid,))}
    changed = False
    previous = None
    reviews = []
    for r in block.reviews:
        try:
            at = to_iso(r["at"], field="review time") if r["at"] else None
        except NervapackError:
            rec.warnings.append(f"NervaPack block: review time {r['at']!r} is not a time; review not restored")
            continue
        reviews.append({**r, "at": at or to_iso(rec.valid_from, field="date")})  # the same on every import
    for r in reviews:
        if (r["status"], r["by"], r["at"]) not in have:
            conn.execute("INSERT INTO mem_reviews(namespace, node_id, status, previous, reviewer, note, created_at) "
                         "VALUES (?,?,?,?,?,?,?)", (ns, nid, r["status"], previous, r["by"], r["note"], r["at"]))
            changed = True
        previous = r["status"]
    if not reviews or (block.file_status is not None and block.file_status != rec.adr.status):
        return changed
    last = reviews[-1]
    newest = conn.execute("SELECT max(created_at) FROM mem_reviews WHERE node_id = ?", (nid,)).fetchone()[0]
    row = conn.execute("SELECT status, status_by, status_at, status_note FROM mem_nodes WHERE id = ?",
                       (nid,)).fetchone()
    want = (last["status"], last["by"], last["at"], last["note"])
    if newest == last["at"] and tuple(row) != want:
        conn.execute("UPDATE mem_nodes SET status = ?, status_by = ?, status_at = ?, status_note = ? WHERE id = ?",
                     (*want, nid))
        changed = True
    return changed
