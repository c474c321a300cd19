"""``nervapack memory …`` / ``nervapack-memory …``: a thin command line over ``MemoryStore``.

Human-readable output by default, ``--json`` on every command; ``--db PATH`` and
``--namespace NS`` on every command (or once, before the command name). The options and
``emit`` are the ones both CLIs share (``cli.common``). User errors print a message and
exit 1, never a traceback.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from ..errors import NervapackError
from ..memory.kinds import STORABLE_KINDS
from ..settings import env_value
from ..workspace import MEMORY_DB_ENV
from .common import (
    UserErrorGroup,
    console,
    db_option,
    echo,
    emit,
    json_mode,
    json_option,
    memory_db,
    memory_namespace,
    memory_options,
    namespace_option,
    read_stdin,
    text_arg,
)

__all__ = ["memory_cli", "main"]

_KINDS = list(STORABLE_KINDS)


def _store(*, create: bool = True):
    """The store of ``--db``/``--namespace``; ``create=False`` for a command that reads: a database
    that is not there (a mistyped ``--db``) is an error naming the path, and no file is made."""
    from ..memory.store import MemoryStore

    store = MemoryStore(memory_db(), namespace=memory_namespace(), on_wait=_say_waiting, origin="cli",
                        create=create)
    click.get_current_context().call_on_close(store.close)
    return store


def _reader():
    """The store for a command that only reads (recall, show, stats …): never creates a database."""
    return _store(create=False)


def _say_waiting(message: str) -> None:
    echo(message, err=True)


def _warned(write):
    """``write()``'s result, each time warning it raised (a past expiry stored as history:
    :class:`~nervapack_core.memory.validate.PastExpiryWarning`) said on stderr as ``Warning: …``."""
    import warnings

    from ..memory.validate import PastExpiryWarning

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", PastExpiryWarning)
        result = write()
    for w in caught:
        if issubclass(w.category, PastExpiryWarning):
            echo(f"Warning: {w.message}", err=True)
        else:  # not ours: as Python would have shown it
            warnings.showwarning(w.message, w.category, w.filename, w.lineno)
    return result


def _day(iso) -> str:
    return iso[:10] if iso else "now"


def _node_line(n: dict) -> str:
    status = []
    if n.get("tombstoned"):
        status.append("forgotten")
    if n.get("superseded_by"):
        status.append(f"superseded by {n['superseded_by']}")
    elif n.get("valid_until"):
        status.append(f"closed {_day(n['valid_until'])}")
    tail = f"  [{'; '.join(status)}]" if status else ""
    # a decision says where it stands; a proposed one is never passed off as agreed
    kind = f"{n['kind']} ({n['status']})" if n.get("kind") == "decision" and n.get("status") else n["kind"]
    return (f"[{n['id']}] {kind} · {_day(n['valid_from'])} · conf {float(n.get('confidence', 1)):.2f} — "
            f"{' '.join(str(n['content']).split())}{tail}")


def _decision_line(d: dict) -> str:
    """One line of ``memory decisions --oneline``: what a lead scans, the id whole to paste."""
    what = " ".join(str(d.get("title") or d["content"]).split())
    where = f"  ({d['source']})" if d.get("source") else ""
    return f"{d['id']}  {d['status'] or 'accepted':<10} {_day(d['valid_from'])}  {what}{where}"


def _provenance_lines(n: dict) -> list[str]:
    """Who wrote it, through what, against which commit; who reviewed it."""
    lines = []
    if n.get("title"):
        lines.append(f"  title: {n['title']}")
    written = " · ".join(x for x in (n.get("author"), f"via {n['origin']}" if n.get("origin") else None,
                                     f"at commit {n['repo_commit'][:12]}" if n.get("repo_commit") else None) if x)
    if written:
        lines.append(f"  written by: {written}")
    if n.get("commit_sha"):
        lines.append(f"  implemented in: {n['commit_sha']}")
    status = _status_line(n)
    if status:
        lines.append(status)
    if n.get("tags"):
        lines.append(f"  tags: {', '.join(n['tags'])}")
    return lines


def _status_line(n: dict) -> str | None:
    """``  status: accepted by NAME on DAY — note`` of a decision: by whom only when it is recorded
    (a review, an ADR's deciders), else "by whom not recorded" — a file's author is not its reviewer."""
    if n.get("kind") not in ("decision", None) or not n.get("status_at"):
        return None
    note = f" — {n['status_note']}" if n.get("status_note") else ""
    by = n.get("status_by") or "whom not recorded"
    return f"  status: {n.get('review_status') or n.get('status')} by {by} on {_day(n['status_at'])}{note}"


def _node_block(n: dict) -> str:
    lines = [_node_line(n), *_provenance_lines(n)]
    for key in ("rationale", "source"):
        if n.get(key):
            lines.append(f"  {key}: {n[key]}")
    if n.get("alternatives_rejected"):
        lines.append(f"  rejected: {', '.join(n['alternatives_rejected'])}")
    lines.append(f"  valid {n['valid_from']} → {n.get('valid_until') or 'now'} · recorded {n['recorded_at']}")
    if n.get("session_id"):
        lines.append(f"  session: {n['session_id']}")
    if n.get("expires_at"):
        lines.append(f"  expires: {n['expires_at']}")
    if n.get("metadata"):
        lines.append(f"  metadata: {json.dumps(n['metadata'], ensure_ascii=False)}")
    for e in n.get("edges", []):
        lines.append(f"  {e['source']} -[{e['kind']}]-> {e['target']}")
    if n.get("aliases"):
        lines.append(f"  aliases: {', '.join(n['aliases'])}")
    return "\n".join(lines)


@click.group(cls=UserErrorGroup, context_settings={"help_option_names": ["-h", "--help"]})
@db_option("Memory database file for every command.")
@namespace_option("Namespace for every command.")
@json_option("JSON output for every command.", expose=False)
def memory_cli():
    """Bi-temporal decision memory: store, recall under a token budget, trace history."""


@memory_cli.command("init")
@click.option("--global", "global_", is_flag=True, help="Create ~/.nervapack/memory.db instead of a project store.")
@memory_options
def init_cmd(global_):
    """Create the memory database (schema and migrations) and print where it is."""
    from ..memory.store import MemoryStore
    from ..workspace import Workspace, find_workspace, global_memory_db

    db: str | Path | None = memory_db() or env_value(MEMORY_DB_ENV)
    if not db:
        if global_:
            db = global_memory_db()
        else:
            ws = find_workspace()
            db = ws.memory_db if ws is not None else Workspace(Path.cwd()).memory_db
    empty = Path(db).expanduser()
    if empty.is_file() and empty.stat().st_size == 0 and not Path(f"{empty}-wal").exists():
        empty.unlink()  # init on purpose: a 0-byte file holds nothing; other commands refuse it (damaged)
    store = MemoryStore(db, namespace=memory_namespace(), on_wait=_say_waiting)
    click.get_current_context().call_on_close(store.close)
    data = {"path": str(store.path), "schema_version": store.schema_version()}
    emit(data, lambda d: f"✓ Memory store initialised at {d['path']} (schema v{d['schema_version']})")


@memory_cli.command("start-session")
@click.argument("name")
@memory_options
def start_session_cmd(name):
    """Open a named session; later `store` commands in this namespace attach to it."""
    sid = _store().start_session(name)
    emit({"session_id": sid, "name": name}, lambda d: f"✓ Session {d['session_id']} started: {name}")


@memory_cli.command("end-session")
@click.argument("summary", required=False)
@click.option("--session-id", default=None, help="Session to close (default: the active one).")
@memory_options
def end_session_cmd(summary, session_id):
    """Close the active session with an optional outcome SUMMARY and queue consolidation."""
    data = _store().end_session(summary, session_id=session_id)
    emit(data, lambda d: f"✓ Session {d['session_id']} ended" + (f"; summary stored as {d['summary_id']}"
                                                                   if d["summary_id"] else ""))


@memory_cli.command("store")
@click.argument("text")
@click.option("--kind", "-k", type=click.Choice(_KINDS, case_sensitive=False), default="fact", show_default=True,
              help="Kind of memory.")
@click.option("--entity", "-e", "entities", multiple=True, help="Entity this is about (repeatable).")
@click.option("--confidence", type=float, default=1.0, show_default=True, help="Confidence between 0 and 1.")
@click.option("--rationale", default=None, help="Why (for decisions).")
@click.option("--alternative", "alternatives", multiple=True, help="A rejected alternative (repeatable).")
@click.option("--supersedes", default=None, metavar="ID", help="Id of the memory this one replaces.")
@click.option("--valid-from", default=None, metavar="TIME",
              help="When it became true (ISO-8601; default now). A bare number is refused: Unix seconds, "
                   "milliseconds and a year look alike.")
@click.option("--expires-at", default=None, metavar="TIME",
              help="When it stops being recalled (TTL). Not after --valid-from (default now) is refused: the "
                   "memory would never be recalled; in the past but after a past --valid-from is stored as history "
                   "(recalled only with --as-of before it), with a warning.")
@click.option("--expires-in", default=None, metavar="DURATION",
              help="Stop recalling it after this long: 30m, 12h, 7d, 2w (not with --expires-at).")
@click.option("--source", default=None, help="Where this came from (provenance).")
@click.option("--metadata", default=None, metavar="JSON", help="Extra JSON object to keep with the memory.")
@click.option("--caused-by", default=None, metavar="ID", help="Decision or action that caused this outcome.")
@click.option("--contradicts", multiple=True, metavar="ID", help="A memory this one contradicts (repeatable).")
@click.option("--derived-from", multiple=True, metavar="ID", help="A memory this one is derived from (repeatable).")
@click.option("--status", type=click.Choice(["accepted", "proposed"], case_sensitive=False), default=None,
              help="A decision's status (default: accepted; proposed puts it in the review queue).")
@click.option("--commit", default=None, metavar="SHA", help="The commit that implemented it (sha, HEAD, HEAD~1 …).")
@click.option("--title", default=None, help="A short title (decisions).")
@click.option("--tag", "tags", multiple=True, help="A tag (repeatable).")
@click.option("--author", default=None, help="Who wrote it (default: git user.name <user.email>, else the OS user).")
@memory_options
def store_cmd(text, kind, entities, confidence, rationale, alternatives, supersedes, valid_from, expires_at,
              expires_in, source, metadata, caused_by, contradicts, derived_from, status, commit, title, tags, author):
    """Store TEXT (use - to read stdin) as one atomic memory.

    Storing what is already current (same kind, text and entities) returns the existing id.
    Each entity says what it linked to in the code graph: the one definition it names, or
    "ambiguous" with the candidates (none linked: use `memory link`), or no code.
    """
    store = _store()
    nid = _warned(lambda: store.store(
        text_arg(text), kind=kind.lower(), entities=list(entities), confidence=confidence, rationale=rationale,
        alternatives_rejected=list(alternatives), supersedes=supersedes, valid_from=valid_from, expires_at=expires_at,
        expires_in=expires_in, source=source, metadata=metadata, caused_by=caused_by, contradicts=list(contradicts),
        derived_from=list(derived_from), status=status, commit=commit, title=title, tags=list(tags), author=author))
    n = store.get_node(nid)
    emit({"id": nid, "status": n.get("status"), "recorded_at": n["recorded_at"], "links": nid.links},
         lambda d: f"✓ Stored {d['id']}" + (f" ({d['status']})" if d["status"] else "")
         + (f" (supersedes {supersedes})" if supersedes else "") + _link_lines(d["links"]))


def _link_lines(links: dict) -> str:
    """One line per entity name: what it linked to in the code graph, or why nothing."""
    from ..memory.bridge import link_sentence

    return "".join(f"\n  {name}: {link_sentence(summary)}" for name, summary in links.items())


@memory_cli.command("link")
@click.argument("node_id")
@click.option("--code", "codes", multiple=True, required=True, metavar="PATH[::NAME]",
              help="Code to link: a file, a definition in it (PATH::NAME) or a qualified name (repeatable). "
                   "Each must resolve to exactly one definition.")
@click.option("--remove", is_flag=True, help="Remove these code links instead of adding them.")
@memory_options
def link_cmd(node_id, codes, remove):
    """Add (or --remove) code links on the existing memory NODE_ID, e.g. a decision whose entity
    names were ambiguous: `memory link ID --code lib/bulk_data/cache.rb::BulkData::Cache`."""
    from ..memory.bridge import link_sentence

    d = _store().link_code(node_id, list(codes), remove=remove)
    verb = "removed" if remove else "added"

    def human(d):
        lines = [f"✓ {d['id']}: {len(d[verb])} code link(s) {verb}"]
        lines += [f"  {code}: {link_sentence(s)}" for code, s in d[verb].items()]
        lines.append(f"  now linked to {len(d['code'])} code location(s)")
        return "\n".join(lines)

    emit(d, human)


@memory_cli.command("recall")
@click.argument("query")
@click.option("--budget", "-b", type=int, default=500, show_default=True, help="Token budget (hard cap).")
@click.option("--as-of", default=None, metavar="TIME", help="Recall what was true at this time (valid time).")
@click.option("--known-at", default=None, metavar="TIME",
              help="Recall what had been recorded by this time (transaction time); combines with --as-of.")
@click.option("--min-confidence", type=float, default=0.0, show_default=True, help="Drop memories below this.")
@memory_options
def recall_cmd(query, budget, as_of, known_at, min_confidence):
    """Recall memories relevant to QUERY as Markdown that fits the token budget."""
    r = _reader().recall(query, budget_tokens=budget, as_of=as_of, min_confidence=min_confidence, known_at=known_at)
    emit(r.to_dict(), lambda d: d["text"] or f"(nothing fits in {budget} tokens)")


@memory_cli.command("timeline")
@click.argument("topic")
@click.option("--include-forgotten", is_flag=True, help="Also show tombstoned memories.")
@click.option("--limit", type=click.IntRange(1, 10_000), default=50, show_default=True, help="Versions per page.")
@click.option("--offset", type=click.IntRange(0), default=0, show_default=True, help="Versions to skip (paging).")
@click.option("--known-at", default=None, metavar="TIME",
              help="As recorded by this time (transaction time): later memories and changes left out.")
@memory_options
def timeline_cmd(topic, include_forgotten, limit, offset, known_at):
    """Every version about TOPIC, oldest first, superseded ones marked, one page at a time.

    TOPIC is an entity (the memories linked to it and their supersession chains) or, when
    no entity has that name, any text (the memories that mention it)."""
    page = _reader().timeline(topic, include_tombstoned=include_forgotten, limit=limit, offset=offset,
                             known_at=known_at)

    def human(page):
        rows, total = page["items"], page["total"]
        what = f"entity {page['entity']}" if page["mode"] == "entity" else f"text {topic!r} (no entity of that name)"
        known = f", as known at {page['known_at']}" if page["known_at"] else ""
        if not total:
            return f"No memories about {what}{known}."
        out = [f"Timeline of {what}{known}: {total:,} version(s)"]
        for n in rows:
            mark = f"  [superseded by {n['superseded_by']}]" if n["superseded_by"] else ""
            if n["tombstoned"]:
                mark += "  [forgotten]"
            kind = f"{n['kind']} ({n['status']})" if n["kind"] == "decision" and n.get("status") else n["kind"]
            out.append(f"{_day(n['valid_from'])} → {_day(n['valid_until']):<10}  [{n['id']}] {kind} · "
                       f"{' '.join(n['content'].split())}{mark}")
        if rows:
            out.append(f"showing {offset + 1:,}–{offset + len(rows):,} of {total:,}"
                       + (f" (next: --offset {offset + len(rows)})" if offset + len(rows) < total else ""))
        else:
            out.append(f"showing none of {total:,} (--offset {offset:,} is past the end)")
        return "\n".join(out)

    emit(page, human)


@memory_cli.command("about")
@click.argument("entity")
@memory_options
def about_cmd(entity):
    """Dossier of ENTITY: aliases, current and past memories, code locations."""
    d = _reader().about(entity)

    def human(d):
        out = [f"Entity {d['entity']['content']} [{d['entity']['id']}]", f"  aliases: {', '.join(d['aliases'])}"]
        if d["current"]:
            out.append("Current:")
            out += ["  " + _node_line(n) for n in d["current"]]
        if d["past"]:
            out.append("Past:")
            out += ["  " + _node_line(n) for n in d["past"]]
        for c in d["code"]:
            out.append(f"  code: {c['file']}:{c['start_line']}-{c['end_line']} {c['code_kind']} {c['qualified_name']}")
        return "\n".join(out)

    emit(d, human)


@memory_cli.command("why")
@click.argument("node_id")
@memory_options
def why_cmd(node_id):
    """Explain a decision: rationale, rejected alternatives, outcomes, history."""
    d = _reader().why(node_id)

    def human(d):
        out = [_node_line(d["node"])]
        out.append(f"  rationale: {d['rationale'] or '(none recorded)'}")
        if d["alternatives_rejected"]:
            out.append(f"  rejected: {', '.join(d['alternatives_rejected'])}")
        for label in ("outcomes", "caused_by", "entities", "supersedes", "superseded_by", "contradicts",
                      "derived_from"):
            for n in d[label]:
                out.append(f"  {label.replace('_', ' ')}: {_node_line(n)}")
        if d["session"]:
            out.append(f"  session: {d['session']['content']} [{d['session']['id']}]")
        out += _provenance_lines(d["node"])
        for r in d.get("reviews", []):
            note = f" — {r['note']}" if r["note"] else ""
            out.append(f"  review: {_day(r['created_at'])} {r['previous'] or '-'} → {r['status']} "
                       f"by {r['reviewer'] or 'unknown'}{note}")
        for c in d.get("open_contradictions", []):
            other = c["target"] if c["source"]["id"] == d["node"]["id"] else c["source"]
            out.append(f"  open contradiction: {_node_line(other)}")
        return "\n".join(out)

    emit(d, human)


@memory_cli.command("stats")
@memory_options
def stats_cmd():
    """Counts by kind, edges, sessions, database size and top entities."""
    d = _reader().stats()

    def human(d):
        out = [f"Memory {d['db_path']} · namespace {d['namespace']} · {d['db_size_bytes'] / 1024:.0f} KiB · "
               f"schema v{d['schema_version']}",
               f"nodes: {d['total_nodes']} ({d['current']} current, {d['superseded']} superseded, "
               f"{d['tombstoned']} forgotten)",
               "  " + ", ".join(f"{k} {v}" for k, v in d["nodes"].items()),
               "edges: " + ", ".join(f"{k} {v}" for k, v in d["edges"].items()),
               f"sessions: {d['sessions']} (active: {d['active_session'] or 'none'}) · recalls logged: {d['recalls']}"]
        if d["top_entities"]:
            out.append("top entities: " + ", ".join(f"{e['name']} ({e['memories']})" for e in d["top_entities"]))
        return "\n".join(out)

    emit(d, human)


@memory_cli.command("sessions")
@memory_options
def sessions_cmd():
    """List sessions with their node counts."""
    rows = _reader().list_sessions()

    def human(rows):
        if not rows:
            return "No sessions."
        return "\n".join(f"{'*' if s['active'] else ' '} [{s['id']}] {_day(s['started_at'])} → {_day(s['ended_at'])} "
                         f"· {s['nodes']} nodes · {s['name']}" + (f" — {s['summary']}" if s["summary"] else "")
                         for s in rows)

    emit(rows, human)


@memory_cli.command("namespaces")
@memory_options
def namespaces_cmd():
    """List namespaces with node counts."""
    rows = _reader().namespaces()
    emit(rows, lambda rows: "\n".join(
        f"{r['namespace']}: {r['nodes']} nodes ({r['current']} current, {r['decisions']} decisions, "
        f"{r['sessions']} sessions, {r['entities']} entities)" for r in rows) or "No namespaces yet.")


@memory_cli.command("search")
@click.argument("query")
@click.option("--limit", type=int, default=20, show_default=True, help="Maximum results.")
@click.option("--history", is_flag=True, help="Include superseded and closed memories.")
@click.option("--known-at", default=None, metavar="TIME", help="Search what had been recorded by this time.")
@memory_options
def search_cmd(query, limit, history, known_at):
    """Full-text search (no budget, no ranking beyond BM25)."""
    rows = _reader().search(query, limit=limit, include_history=history, known_at=known_at)
    emit(rows, lambda rows: "\n".join(f"{r['score']:.2f}  {_node_line(r)}" for r in rows) or "No matches.")


@memory_cli.command("show")
@click.argument("node_id")
@memory_options
def show_cmd(node_id):
    """Show one memory node with its edges."""
    n = _reader().get_node(node_id, with_edges=True)
    emit(n, _node_block)


@memory_cli.command("verify")
@click.argument("node_id")
@click.argument("verdict", type=click.Choice(["confirm", "refute"], case_sensitive=False), default="confirm")
@memory_options
def verify_cmd(node_id, verdict):
    """Confirm (confidence +0.1) or refute (close now, confidence x0.5) a memory."""
    n = _store().verify(node_id, verdict.lower())
    emit(n, lambda n: f"✓ {verdict.lower()}ed: " + _node_line(n))


@memory_cli.command("forget")
@click.option("--node-id", default=None, metavar="ID", help="Memory to forget.")
@click.option("--entity", default=None, help="Entity to forget, with every memory about it.")
@click.option("--purge", is_flag=True, help="Hard-delete instead of tombstoning.")
@memory_options
def forget_cmd(node_id, entity, purge):
    """Tombstone (default) or purge a memory or an entity."""
    if not node_id and not entity:
        raise NervapackError("give --node-id ID or --entity NAME")
    d = _store().forget(node_id, entity=entity, purge=purge)
    emit(d, lambda d: f"✓ {'Purged' if purge else 'Tombstoned'} {len(d['ids'])} node(s): {', '.join(d['ids'])}")


@memory_cli.command("export")
@click.option("--out", "-o", default=None, metavar="FILE", help="Write to FILE instead of standard output.")
@click.option("--all-namespaces", is_flag=True, help="Export every namespace.")
@memory_options
def export_cmd(out, all_namespaces):
    """Export memory as JSON (nodes, edges, aliases, code references)."""
    data = _reader().export(all_namespaces=all_namespaces)
    text = json.dumps(data, indent=2, ensure_ascii=False)
    if out:
        try:
            Path(out).write_text(text + "\n", encoding="utf-8")
        except OSError as exc:
            raise NervapackError(f"cannot write {out}: {exc}") from None
        emit({"path": out, "nodes": len(data["nodes"]), "edges": len(data["edges"])},
              lambda d: f"✓ Exported {d['nodes']} nodes and {d['edges']} edges to {d['path']}")
    else:
        emit(data, lambda _: text)  # the export is JSON for people too


@memory_cli.command("import")
@click.argument("file")
@memory_options
def import_cmd(file):
    """Import FILE: an export, or a JSON array of node specs ({"content", "kind", "entities", ...}).

    Importing the same file again adds nothing: an export's nodes already there (same id) and
    specs already current (same kind, text and entities, as `store` sees it) are skipped and
    counted as already there."""
    path = Path(file)
    if file != "-" and not path.is_file():
        raise NervapackError(f"file not found: {file}")
    try:
        raw = read_stdin() if file == "-" else path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise NervapackError(f"cannot read {file}: {exc}") from None
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise NervapackError(f"{file} is not valid JSON: {exc}") from None
    except RecursionError:
        raise NervapackError(f"{file} is nested too deeply to be an import (an export is a few levels deep).") from None
    d = _warned(lambda: _store().import_nodes(data))
    d.pop("ids", None) if not json_mode() else None
    emit(d, lambda d: f"✓ Imported {d['imported']} node(s)" + (f", skipped {d['skipped']} already there"
                                                                 if d.get("skipped") else ""))


@memory_cli.command("consolidate")
@click.option("--dry-run", is_flag=True, help="Show what would be tombstoned without changing anything.")
@click.option("--session", "session_id", default=None, metavar="ID", help="Consolidate this session only.")
@memory_options
def consolidate_cmd(dry_run, session_id):
    """Tombstone near-duplicate memories (Jaccard > 0.9) within sessions; keeps the later one."""
    d = (_reader() if dry_run else _store()).consolidate(session_id=session_id, dry_run=dry_run)

    def human(d):
        verb = "Would tombstone" if d["dry_run"] else "Tombstoned"
        out = [f"{verb} {len(d['tombstoned'])} duplicate(s) in {len(d['sessions'])} session(s)"]
        out += [f"  {t['id']} (duplicate of {t['duplicate_of']}, similarity {t['similarity']:.2f})"
                for t in d["tombstoned"]]
        return "\n".join(out)

    emit(d, human)


@memory_cli.command("backup")
@click.argument("dest")
@click.option("--overwrite", is_flag=True, help="Replace DEST if it exists.")
@memory_options
def backup_cmd(dest, overwrite):
    """Write a consistent copy of the database to DEST (VACUUM INTO; safe while in use)."""
    d = _reader().backup(dest, overwrite=overwrite)
    emit(d, lambda d: f"✓ Backup written to {d['path']} ({d['bytes'] / 1024:.0f} KiB)")


@memory_cli.command("recall-log")
@click.option("--limit", type=int, default=20, show_default=True, help="How many recent recalls.")
@memory_options
def recall_log_cmd(limit):
    """Recent recalls (telemetry): query, candidates, returned ids, tokens, latency."""
    rows = _reader().recall_log(limit)
    emit(rows, lambda rows: "\n".join(
        f"{r['created_at'][:19]}  {r['latency_ms']:7.2f} ms  {r['tokens']:>5}/{r['budget_tokens']} tok  "
        f"{len(r['returned_ids'])}/{r['candidates']} items  {r['query']!r}" for r in rows) or "No recalls logged.")


@memory_cli.command("clear-session")
@click.argument("session_id")
@memory_options
def clear_session_cmd(session_id):
    """Delete a session and every memory recorded in it."""
    d = _store().clear_session(session_id)
    emit(d, lambda d: f"✓ Deleted session {d['session_id']} and {d['deleted_nodes']} node(s)")


@memory_cli.command("for-code")
@click.argument("file")
@click.option("--line", type=int, default=None, help="Only memories about the definition spanning this line.")
@memory_options
def for_code_cmd(file, line):
    """Memories that touch a source FILE (via the code graph)."""
    rows = _reader().for_code(file, line)
    emit(rows, lambda rows: "\n".join(
        f"{r['code']['file']}:{r['code']['start_line']}-{r['code']['end_line']}  {_node_line(r)}" for r in rows)
        or f"No memories touch {file}.")


@memory_cli.command("to-code")
@click.argument("node_id")
@memory_options
def to_code_cmd(node_id):
    """Code locations a memory touches."""
    rows = _reader().to_code(node_id)
    emit(rows, lambda rows: "\n".join(
        f"{r['file']}:{r['start_line']}-{r['end_line']}  {r['kind']} {r['qualified_name'] or r['name']}" for r in rows)
        or "No code locations.")


@memory_cli.command("staleness")
@memory_options
def staleness_cmd():
    """Memories whose code changed since they were stored."""
    d = _reader().verify_staleness()

    def human(d):
        if not d["available"]:
            return "No code graph found (.nervapack/graph.db); nothing to check."
        out = [f"Checked {d['checked']} code reference(s); {len(d['stale'])} stale"]
        out += [f"  [{s['node_id']}] {s['file']}: {s['reason']}" for s in d["stale"]]
        return "\n".join(out)

    emit(d, human)


@memory_cli.command("decisions")
@click.option("--status", "statuses", multiple=True,
              type=click.Choice(["proposed", "accepted", "rejected", "deprecated", "superseded"]),
              help="Only decisions with this status (repeatable).")
@click.option("--author", default=None, help="Only decisions by this author.")
@click.option("--entity", default=None, help="Only decisions about this entity (name or alias).")
@click.option("--code-area", default=None, metavar="PATH", help="Only decisions touching code in this file or folder.")
@click.option("--tag", default=None, help="Only decisions with this tag.")
@click.option("--since", default=None, metavar="DATE", help="valid_from on or after DATE.")
@click.option("--until", default=None, metavar="DATE", help="valid_from on or before DATE (a bare date: that day too).")
@click.option("--text", default=None, help="Only decisions matching every word of this text.")
@click.option("--session", "session_id", default=None, metavar="ID", help="Only this session's decisions.")
@click.option("--current", is_flag=True, help="Hide superseded and closed decisions.")
@click.option("--oneline", is_flag=True,
              help="One line a decision: its whole id, status, date, title and file (no rationale).")
@click.option("--limit", type=click.IntRange(1, 1000), default=50, show_default=True, help="Page size.")
@click.option("--offset", type=click.IntRange(0), default=0, show_default=True, help="Page start.")
@memory_options
def decisions_cmd(statuses, author, entity, code_area, tag, since, until, text, session_id, current, oneline, limit,
                  offset):
    """Decision log, newest first, one page with the total: status, provenance, rationale,
    rejected alternatives, outcomes (--oneline: one line each). Counts by status are over
    every match."""
    page = _reader().decisions(status=list(statuses) or None, author=author, entity=entity, code_area=code_area,
                              tag=tag, since=since, until=until, text=text, session_id=session_id, current=current,
                              limit=limit, offset=offset)

    def human(page):
        if not page["total"]:
            return "No decisions."
        first, last = page["offset"] + 1, page["offset"] + len(page["decisions"])
        counts = ", ".join(f"{n} {s}" for s, n in page["by_status"].items() if n)
        out = [f"{page['total']} decision(s) ({counts}); showing {first}–{last}" if page["decisions"]
               else f"{page['total']} decision(s) ({counts}); none at offset {page['offset']}"]
        for d in page["decisions"]:
            if oneline:
                out.append(_decision_line(d))
                continue
            out.append(_node_line(d))
            status = _status_line(d)
            if status:
                out.append(status)
            if d["rationale"]:
                out.append(f"  why: {d['rationale']}")
            if d["alternatives_rejected"]:
                out.append(f"  rejected: {', '.join(d['alternatives_rejected'])}")
            for o in d.get("outcomes", []):
                out.append(f"  outcome: {o['content']}")
        return "\n".join(out)

    emit(page, human)


_VERDICTS = {"accept": "accepted", "reject": "rejected", "deprecate": "deprecated", "propose": "proposed"}


@memory_cli.command("review")
@click.argument("node_id", required=False)
@click.option("--accept", "verdict", flag_value="accept", help="Agree to the decision.")
@click.option("--reject", "verdict", flag_value="reject", help="Turn the decision down.")
@click.option("--deprecate", "verdict", flag_value="deprecate", help="It no longer applies (nothing replaces it).")
@click.option("--propose", "verdict", flag_value="propose", help="Send it back to the review queue.")
@click.option("--note", default=None, help="Why (kept with the review).")
@click.option("--reviewer", default=None, help="Who reviews (default: git user.name <user.email>, else the OS user).")
@click.option("--limit", type=click.IntRange(1, 1000), default=50, show_default=True, help="Queue page size.")
@click.option("--offset", type=click.IntRange(0), default=0, show_default=True, help="Queue page start.")
@memory_options
def review_cmd(node_id, verdict, note, reviewer, limit, offset):
    """Review decision NODE_ID (--accept, --reject, --deprecate, --propose), or, without an
    id, list the review queue: proposed decisions, oldest first."""
    store = _reader() if node_id is None else _store()
    if node_id is None:
        if verdict or note:
            raise NervapackError("give the id of the decision to review (nervapack memory review ID --accept)")
        q = store.review_queue(limit=limit, offset=offset)

        def human(q):
            if not q["total"]:
                return "The review queue is empty: no proposed decisions."
            first, last = q["offset"] + 1, q["offset"] + len(q["decisions"])
            out = [f"Review queue: {q['total']} proposed decision(s); showing {first}–{last}"]
            for n in q["decisions"]:
                out.append(_node_line(n))
                out += _provenance_lines(n)
            return "\n".join(out)

        emit(q, human)
        return
    if not verdict:
        raise NervapackError("say what the review decides: --accept, --reject, --deprecate or --propose")
    n = store.review(node_id, _VERDICTS[verdict], note=note, reviewer=reviewer)
    emit(n, lambda n: f"✓ {n['id']} is now {n['status']}" + (f" (by {n['status_by']})" if n.get("status_by") else ""))


@memory_cli.command("reconfirm")
@click.argument("node_id")
@click.option("--note", required=True, help="Why the decision still holds (kept with the review).")
@click.option("--reviewer", default=None,
              help="Who re-confirms (default: git user.name <user.email>, else the OS user).")
@memory_options
def reconfirm_cmd(node_id, note, reviewer):
    """Say that decision NODE_ID still holds although its code moved on (`memory stale` listed
    it): its code links take the definitions' current hashes, and a review keeping its status
    records who, when and why. Churn is counted from then on; `export-adr` carries it."""
    n = _store().reconfirm(node_id, note, reviewer=reviewer)
    emit(n, lambda n: f"✓ {n['id']} still holds ({n['status']}, re-confirmed by {n['status_by'] or 'whom not recorded'}"
                      f"): {len(n['reconfirmed'])} code link(s) now at their current hashes")


@memory_cli.command("link-commit")
@click.argument("node_id")
@click.argument("commit")
@memory_options
def link_commit_cmd(node_id, commit):
    """Record COMMIT (sha, HEAD, HEAD~1 …) as the commit that implemented NODE_ID."""
    n = _store().set_commit(node_id, commit)
    emit(n, lambda n: f"✓ {n['id']} implemented in {n['commit_sha']}")


@memory_cli.command("stale")
@click.option("--min-commits", type=click.IntRange(1), default=None,
              help="Commits to a touched file since the decision that count as churn (default 5).")
@click.option("--min-lines", type=click.IntRange(1), default=None,
              help="Lines changed in a touched file since the decision that count as churn (default 200).")
@memory_options
def stale_cmd(min_commits, min_lines):
    """Standing decisions that may be stale: the code they touch changed (content hash),
    is gone, or its files churned since the decision. Checks the graph as the last
    ingest/sync left it: run `nervapack sync` first."""
    from ..memory import stale

    d = _reader().stale_decisions(min_commits=min_commits or stale.CHURN_COMMITS,
                                 min_lines=min_lines or stale.CHURN_LINES)

    def human(d):
        if not d["available"]:
            return "No code graph found (.nervapack/graph.db): run `nervapack ingest` first; nothing to check."
        out = [f"Checked {d['checked']} decision(s) touching code; {len(d['stale'])} may be stale"
               + ("" if d["history"] else " (no git history: churn not checked)")]
        for s in d["stale"]:
            out.append(f"[{s['id']}] decision ({s['status']}) · {_day(s['valid_from'])} — "
                       f"{' '.join(str(s['content']).split())}")
            for r in s["reasons"]:
                where = f"{r['qualified_name']} ({r['file']})" if r["qualified_name"] else r["file"]
                out.append(f"  {r['reason']}: {where} — {r['detail']}")
        return "\n".join(out)

    emit(d, human)


# ---------------------------------------------------------------- ADR folders (import-adr, export-adr)
def _print_adr_import(d: dict) -> None:
    from rich.markup import escape

    out = console()
    n_skipped = len(d["skipped"])
    out.print(f"[green]✓[/] {escape(d['folder'])} → namespace {escape(d['namespace'])}: {d['imported']} imported, "
              f"{d['updated']} updated, {d['unchanged']} unchanged, {n_skipped} skipped, "
              f"{d['supersessions']} supersession(s)", soft_wrap=True)
    for r in d["decisions"]:
        out.print(f"  {r['action']:<8} {r['status']:<10} {r['id']}  {escape(r['source'])} — {escape(r['title'] or '')}",
                  soft_wrap=True)
    for c in d.get("code", []):
        out.print(f"  governs  {escape(c['source'])}: {escape(_governs_line(c))}", soft_wrap=True)
    for c in d.get("suggested", []):
        out.print(f"  [cyan]suggest[/]  {escape(c['source'])}: mentions {escape(c['code'])} -> "
                  f"{escape(', '.join(c['linked']))}; link it: nervapack memory link {c['id']} --code "
                  f"{escape(c['linked'][0])}", soft_wrap=True)
    for source, reason in d["skipped"]:
        out.print(f"  [dim]skipped[/]  {escape(source)}: {escape(reason)}", soft_wrap=True)
    for source, message in d["warnings"]:
        out.print(f"  [yellow]warning[/]  {escape(source)}: {escape(message)}", soft_wrap=True)
    for m in d["missing"]:
        out.print(f"  [yellow]gone[/]     {escape(m['source'])} (decision {m['id']} kept; forget it to drop it)",
                  soft_wrap=True)


def _governs_line(c: dict) -> str:
    """What one ``governs`` entry of an ADR linked to, or why it links to no code."""
    if c["state"] == "linked":
        return f"{c['code']} -> {', '.join(c['linked'])}"
    why = {"ambiguous": "ambiguous, names " + ", ".join(c["candidates"][:5])
           + (f" and {len(c['candidates']) - 5} more" if len(c["candidates"]) > 5 else ""),
           "unknown": c.get("note") or "no definition or file of that name in the code graph",
           "no_graph": "no code graph yet (run nervapack ingest, then import again)"}.get(c["state"], c["state"])
    return f"{c['code']} links to no code: {why}"


@memory_cli.command("import-adr")
@click.argument("folder", type=click.Path(path_type=str))
@memory_options
def import_adr_cmd(folder):
    """Import FOLDER of Markdown ADRs (Nygard/adr-tools, MADR, log4brains) as decisions.

    Templates and indexes are skipped. Re-running is cheap and idempotent: unchanged
    files change nothing, an edited file updates its decision in place, "Superseded
    by" links become supersessions, files that disappeared are reported, not deleted.
    A file's NervaPack block (an HTML comment at its end; `governs:` also in MADR front
    matter) gives the decision its code links, reviews, links and id; the report says
    what each governed name linked to, or why it links to no code.
    """
    d = _store().import_adr(folder)
    emit(d, _print_adr_import)


@memory_cli.command("export-adr")
@click.argument("folder", type=click.Path(path_type=str))
@click.option("--new-only", is_flag=True, help="Write only decisions that have no ADR file yet (no blocks).")
@click.option("--overwrite", is_flag=True, hidden=True,
              help="Refused: export-adr no longer rewrites a team's files.")
@memory_options
def export_adr_cmd(folder, new_only, overwrite):
    """Write the namespace's decisions into FOLDER, touching only what NervaPack adds.

    A decision that came from a file of the folder gets only its NervaPack block (an HTML
    comment at the end: the code it governs, its reviews, its links, its id) — the team's
    prose is never touched, and no block is written when there is nothing to carry. A
    decision from another folder's file is copied under the same name (its number kept).
    A decision without a file gets a new file with the folder's next number, in the
    folder's format (Nygard or MADR). A decision already there (by id, source or text) is
    never written twice. --new-only writes only decisions without a file."""
    d = _reader().export_adr(folder, new_only=new_only, overwrite=overwrite)

    def human(d):
        lines = [f"✓ {d['decisions']} decision(s) in {d['folder']} ({d['format']}): {d['written']} new file(s), "
                 f"{d['blocks']} block(s) written, {d['unchanged']} unchanged, {d['present']} already there, "
                 f"{d['skipped']} skipped"]
        lines += [f"  {f['action']:<9} {f['file'] or '-'}  ({f['status']}, {f['id']})"
                  + (f": {f['reason']}" if f.get("reason") else "")
                  for f in d["files"] if f["action"] not in ("unchanged", "present")]
        return "\n".join(lines)

    emit(d, human)


def main(argv=None):
    """Entry point of the ``nervapack-memory`` console script."""
    return memory_cli.main(args=argv, prog_name="nervapack-memory")


if __name__ == "__main__":
    sys.exit(main())
