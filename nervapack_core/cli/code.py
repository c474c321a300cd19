"""CLI commands of the code graph: ``ingest``, ``sync``, ``status``, ``export``.

Thin: each command calls the library and hands the result to ``emit`` (rich for people,
``--json`` for machines); the options are the shared ones of ``cli.common``.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from ..errors import NervapackError, NoGraphError
from ..workspace import Workspace, find_workspace
from .common import console as _rich_console
from .common import echo, emit, existing_folder, json_option, path_option
from .common import markup_escape as _escape

__all__ = ["register", "require_workspace", "read_graph"]


def require_workspace(path: str | None = None) -> Workspace:
    if path:
        ws = Workspace(existing_folder(path))
        if not ws.graph_db.exists():
            raise NoGraphError(f"No code graph in {ws.root}. Run `nervapack ingest {path}` first.")
        return ws
    found = find_workspace()
    if found is None or not found.graph_db.exists():
        raise NoGraphError("No NervaPack workspace here. Run `nervapack ingest PATH` first.")
    return found


def read_graph(ws: Workspace):
    """The workspace's graph, read-only (:class:`~nervapack_core.code.analysis.reader.GraphReader`):
    what every read command uses."""
    from ..code.analysis.reader import GraphReader

    return GraphReader(ws.graph_db, root=ws.root)


def _console():
    return _rich_console()


def llm_options(f):
    """``--llm PROVIDER``, ``--llm-model NAME`` and ``--yes`` of ingest and sync."""
    f = click.option("--yes", "-y", "assume_yes", is_flag=True,
                     help="Agree to send doc sections to a remote --llm endpoint without asking (scripts, CI).")(f)
    f = click.option("--llm-model", metavar="NAME", default=None,
                     help="Model for --llm (default: llama3, gpt-4o-mini, claude-haiku-4-5; or [llm] model in "
                          ".nervapack/config.toml, or $NERVAPACK_LLM_MODEL).")(f)
    f = click.option("--llm", type=click.Choice(["ollama", "openai", "claude", "mcp"]), default=None,
                     help="After the deterministic doc binding, ask an LLM which candidate code entities each "
                          "doc section explains (Ollama: $OLLAMA_HOST; OpenAI-compatible: $OPENAI_BASE_URL, "
                          "$OPENAI_API_KEY; Claude: $ANTHROPIC_API_KEY). Nothing is sent without it. `mcp` is "
                          "the MCP server's bind_docs tool.")(f)
    return f


def _llm_setup(llm: str | None, model: str | None, path: str, assume_yes: bool):
    """The provider and settings for ``--llm`` (None without it), checked before any work:
    package installed, key set, and for a remote endpoint without --yes and without a
    terminal to ask, a refusal now (nothing parsed, nothing sent)."""
    if not llm:
        if model:
            raise NervapackError("--llm-model needs --llm ollama|openai|claude.")
        return None
    from ..code.llm.binding import LLMSettings
    from ..code.llm.providers import make_provider
    from ..settings import setting

    ws = Workspace(Path(path).expanduser().resolve())
    settings = LLMSettings.for_workspace(ws, llm)
    if not model:
        configured = setting(ws, "llm", "model")
        model = str(configured.value) if configured else None
    provider = make_provider(llm, model, timeout=settings.timeout, max_reply_bytes=settings.max_reply_bytes)
    if provider.remote and not assume_yes and not sys.stdin.isatty() and not _consented(ws, provider):
        raise NervapackError(
            f"--llm {llm} sends doc sections to {provider.host}, outside this machine, and this workspace has not "
            "agreed to that yet; there is no terminal to ask. Pass --yes to agree (scripts, CI). Nothing was done.")
    return provider, settings


def _consented(ws: Workspace, provider) -> bool:
    if not ws.graph_db.is_file():
        return False
    from ..code.llm.consent import CONSENT_KEY, consent_key

    try:
        with read_graph(ws) as graph:
            return consent_key(provider) in (graph.meta(CONSENT_KEY) or {})
    except NervapackError:
        return False


def _run_llm(setup, root: str, assume_yes: bool, show_progress: bool):
    """The LLM pass after an ingest or sync; its report (the CLI prints it with the summary)."""
    from ..code.llm.binding import bind_docs

    provider, settings = setup
    err = _console_err()

    def announce(summary) -> bool:
        err.print(summary.describe(), markup=False, highlight=False)
        if not summary.needs_consent or assume_yes:
            return True
        if not sys.stdin.isatty():
            from ..code.llm.consent import ConsentRefused

            raise ConsentRefused(summary)
        return click.confirm(f"Send them to {summary.host}?", default=False, err=True)

    return _with_progress(show_progress, lambda progress, on_wait: bind_docs(
        root, provider, settings=settings, assume_yes=assume_yes, announce=announce, progress=progress,
        on_wait=on_wait))


def _print_llm(console, llm: dict) -> None:
    """The summary's lines about the LLM pass."""
    from rich.markup import escape

    if llm["error"]:
        console.print(f"[yellow]warning:[/] LLM binding stopped: {escape(llm['error'])} The graph keeps its "
                      f"deterministic doc links ({llm['answered']} answer(s) received before were kept).")
    for w in llm["warnings"]:
        console.print(f"[yellow]warning:[/] LLM: {escape(w)}")
    tokens = (f"{llm['input_tokens']:,} in + {llm['output_tokens']:,} out"
              if llm["tokens_reported"] else "not reported by the endpoint")
    cost = ", local" if not llm["remote"] else "" if llm["cost_usd"] is None else f", ${llm['cost_usd']:.4f}"
    console.print(
        f"LLM binding ({escape(llm['binder'])}): {llm['sections']:,} sections ({llm['release_notes']:,} release "
        f"notes and {llm['too_short']:,} too short not asked about), {llm['cached']:,} answered from the "
        f"cache, {llm['to_ask']:,} to ask; {llm['requests']:,} requests ({llm['retried']:,} retries), "
        f"{llm['answered']:,} answered, {llm['malformed']:,} malformed, {llm['failed']:,} failed, "
        f"{llm['unanswered']:,} unanswered; {llm['hallucinated']:,} unknown names dropped; LLM edges "
        f"{llm['edges']:,} (+{llm['edges_added']:,} / -{llm['edges_removed']:,}); tokens: estimated "
        f"{llm['estimated_input_tokens']:,} in + {llm['estimated_output_tokens']:,} out, actual {tokens}{cost}; "
        f"{llm['elapsed_s']:.1f}s", highlight=False)


@click.command()
@click.argument("path", default=".", type=click.Path(file_okay=False, path_type=str))
@click.option("--no-embed", is_flag=True, help="Skip the ChromaDB embeddings (graph and FTS only).")
@click.option("--embedder", type=click.Choice(["minilm", "hashing"]), default="minilm", show_default=True,
              help="Embedding model: offline MiniLM (int8 ONNX) or the deterministic hashing fallback.")
@click.option("--rebuild", is_flag=True,
              help="Parse every file again and replace the whole graph (queries see the old one until it commits).")
@click.option("--workers", type=click.IntRange(1, 64), default=None, help="Parser processes (default: all cores).")
@click.option("--max-file-size", type=click.IntRange(1_000), default=None,
              help="Skip source files larger than this many bytes (default 1,000,000).")
@llm_options
@json_option("Print the summary as JSON.")
@click.option("--quiet", "-q", is_flag=True, help="No progress bar.")
def ingest(path, no_embed, embedder, rebuild, workers, max_file_size, llm, llm_model, assume_yes, as_json, quiet):
    """Build or update the code graph of the repository at PATH.

    Honours .gitignore and .nervapackignore; skips binary, minified, generated and
    oversized files (and says so); re-parses only files whose content changed.

    One ingest runs at a time per workspace: a second one waits for the first
    (and says so). Environment: NERVAPACK_LOCK_TIMEOUT=SECONDS bounds how long it
    waits for another ingest (default 900) or for the graph's write lock (default 60)
    before it stops with an error.

    With --llm, an LLM is then asked which code entities each changed doc section
    explains (answers are cached: unchanged sections are not asked again). A remote
    endpoint is used only after you agree (once per workspace), or with --yes. An
    unreachable endpoint leaves the deterministic doc links and exits 0 with a warning.
    """
    from ..code.ingest.pipeline import ingest as run_ingest

    setup = _llm_setup(llm, llm_model, path, assume_yes)
    report = _with_progress(not (as_json or quiet), lambda progress, on_wait: run_ingest(
        path, embed=not no_embed, embedder=embedder, rebuild=rebuild, workers=workers, progress=progress,
        max_file_bytes=max_file_size, on_wait=on_wait))
    data = _ingest_json(report)
    if setup:
        data["llm"] = _run_llm(setup, report.root, assume_yes, not (as_json or quiet)).as_dict()
    emit(data, lambda _: _print_ingest(_console(), report, data.get("llm")))


def _with_progress(wanted: bool, run):
    """Call ``run(progress, on_wait)`` with a rich progress bar on stderr when ``wanted``
    and stderr is a terminal; waiting messages go to stderr either way."""
    err = _console_err()
    if not (wanted and sys.stderr.isatty()):
        return run(None, lambda message: err.print(f"[yellow]{_escape(message)}[/]"))
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeElapsedColumn

    bar = Progress(TextColumn("[bold]{task.description:<9}"), BarColumn(), MofNCompleteColumn(),
                   TimeElapsedColumn(), console=err, transient=False)
    tasks: dict[str, TaskID] = {}

    def progress(phase, done, total):
        if phase not in tasks:
            tasks[phase] = bar.add_task(phase, total=max(total, 1))
        bar.update(tasks[phase], completed=done, total=max(total, 1))

    with bar:
        return run(progress, lambda message: bar.console.print(f"[yellow]{_escape(message)}[/]"))


@click.command()
@click.argument("path", default=".", type=click.Path(file_okay=False, path_type=str))
@click.option("--no-embed", is_flag=True, help="Leave the vectors as they are (they catch up at the next sync).")
@click.option("--embedder", type=click.Choice(["minilm", "hashing"]), default="minilm", show_default=True,
              help="Embedding model for the changed nodes.")
@click.option("--workers", type=click.IntRange(1, 64), default=None, help="Parser processes (default: all cores).")
@llm_options
@json_option("Print the summary as JSON.")
@click.option("--quiet", "-q", is_flag=True, help="No progress bar.")
def sync(path, no_embed, embedder, workers, llm, llm_model, assume_yes, as_json, quiet):
    """Bring the graph of PATH up to date with what changed since the last ingest or sync.

    In a git repository the changed files come from git: the commits since the
    graph's commit (renames included), the index and the working tree. After a branch
    switch or a rebase, or in a folder without git, every file's content hash is
    compared instead. Only changed files are parsed, their edges resolved again and
    their nodes embedded; the result equals a fresh ingest. The summary lists the
    memories whose code changed or vanished.

    With --llm (see `nervapack ingest --help`), only doc sections whose text or
    candidates changed are sent; the others keep their cached answers.
    """
    from ..flows.sync import sync as run_sync

    setup = _llm_setup(llm, llm_model, path, assume_yes)
    report = _with_progress(not (as_json or quiet), lambda progress, on_wait: run_sync(
        path, embed=not no_embed, embedder=embedder, workers=workers, progress=progress, on_wait=on_wait))
    data = _sync_json(report)
    if setup:
        data["llm"] = _run_llm(setup, report.root, assume_yes, not (as_json or quiet)).as_dict()
    emit(data, lambda _: _print_sync(_console(), report, data.get("llm")))


def _sync_json(report) -> dict:
    data = _ingest_json(report)
    data["nodes_delta"] = report.nodes - report.nodes_before
    data["edges_delta"] = report.edges - report.edges_before
    return data


def _print_sync(console, report, llm: dict | None = None) -> None:
    from rich.markup import escape
    from rich.table import Table

    for w in report.warnings:
        console.print(f"[yellow]warning:[/] {escape(w)}")
    if report.mode == "git":
        commits = f"{(report.from_commit or '')[:10]}..{(report.to_commit or '')[:10]} ({report.commits} commit(s))"
        source = f"git: {commits} + working tree" if report.commits else "git: working tree (no new commit)"
    else:
        source = f"content hashes ({report.reason})" if report.reason else "content hashes"
    t = Table(title=escape(f"Synced {report.root}"), show_header=False, box=None)
    t.add_row("changes from", source)
    t.add_row("files", f"{len(report.added):,} added, {len(report.modified):,} modified, {len(report.removed):,} "
                       f"removed, {len(report.renamed):,} renamed; {report.files:,} in the graph")
    t.add_row("nodes", f"{report.nodes:,} ({report.nodes - report.nodes_before:+,})")
    t.add_row("edges", f"{report.edges:,} ({report.edges - report.edges_before:+,}; resolved: {report.resolve_mode})")
    _history_row(t, report)
    if report.embedder:
        t.add_row("embeddings", f"{report.embedded:,} new or changed ({report.embedder})")
    if report.adr:
        a = report.adr
        t.add_row("decisions", escape(f"{a['folder']}: {a['imported']} new, {a['updated']} updated, {a['unchanged']} "
                                      f"unchanged, {len(a['skipped'])} skipped, {len(a['warnings'])} warning(s)"))
    t.add_row("time", "  ".join(f"{k} {v.wall_s:.2f}s" for k, v in report.phases.items()))
    console.print(t)
    for old, new in report.renamed[:20]:
        console.print(f"  renamed {old} -> {new}", markup=False, highlight=False)
    if len(report.renamed) > 20:
        console.print(f"  … and {len(report.renamed) - 20} more renamed (see --json)", style="dim")
    if llm:
        _print_llm(console, llm)
    for r in getattr(report, "reconfirmed", []):
        console.print(f"  re-confirmed {r['id']} (still holds, by {r['by']}, Decision-Reviewed in {r['commit'][:12]})",
                      markup=False, highlight=False)
    if report.memory_note:
        console.print(f"[yellow]{_escape(report.memory_note)}[/]")
    if report.adr_note:
        console.print(f"[yellow]{escape(report.adr_note)}[/]")
    skipped_adrs = report.adr.get("skipped", []) if report.adr else []
    for source, reason in skipped_adrs[:20]:  # each with its reason: a link out of the repository among them
        console.print(f"  ADR skipped {source}: {reason}", markup=False, highlight=False)
    if len(skipped_adrs) > 20:
        console.print(f"  … and {len(skipped_adrs) - 20} more ADR files skipped (see --json)", style="dim")
    if report.memories:
        mt = Table(title=f"{len(report.memories)} memory reference(s) to code that changed or vanished",
                   title_justify="left")
        for col in ("state", "namespace", "memory", "kind", "code", "content"):
            # the whole id, never cut or wrapped: it is what `memory reconfirm` / `memory show` take
            mt.add_column(col, no_wrap=col == "memory", overflow="fold" if col != "memory" else "ignore")
        for m in report.memories:
            mt.add_row(m["state"], escape(m["namespace"]), m["node_id"], m["kind"],
                       escape(f"{m['qualified_name'] or m['name']} ({m['file']})"), escape(m["content"][:80]))
        console.print(mt)


def _ingest_json(report) -> dict:
    """The ``--json`` summary of an ingest: the report's fields plus skipped files counted by reason."""
    from dataclasses import asdict

    data = asdict(report)
    data["skipped_by_reason"] = report.skipped_by_reason
    return data


def _console_err():
    return _rich_console(stderr=True)


def _history_row(table, report) -> None:
    """The summary's "git history" row: commits read by this run, or why there is none."""
    from rich.text import Text

    h = report.history
    if h:
        table.add_row("git history", Text(f"{h['new_commits']:,} new commits read ({h['mode']}), {h['commits']:,} "
                                          "in all" if h.get("available") else f"none: {h.get('reason', '')}"))


def _print_ingest(console, report, llm: dict | None = None) -> None:
    from rich.table import Table

    for w in report.warnings:
        console.print(f"[yellow]warning:[/] {_escape(w)}")
    if report.changed == 0 and report.deleted == 0:
        console.print(f"[green]Up to date[/]: {report.files:,} files unchanged since the last ingest.")
    t = Table(title=f"Ingested {report.root}", show_header=False, box=None)
    t.add_row("files", f"{report.files:,} ({report.changed:,} parsed, {report.unchanged:,} unchanged, "
                       f"{report.deleted:,} removed)")
    t.add_row("nodes", f"{report.nodes:,}  " + ", ".join(f"{k} {v:,}" for k, v in sorted(report.node_kinds.items())))
    t.add_row("edges", f"{report.edges:,}  " + ", ".join(f"{k} {v:,}" for k, v in sorted(report.edge_kinds.items())))
    t.add_row("languages", ", ".join(f"{k} {v:,}" for k, v in sorted(report.languages.items(), key=lambda kv: -kv[1])))
    _history_row(t, report)
    if report.embedder:
        from ..code.vectors.collection import LOCAL, store_name

        where = "" if report.vectors_at in ("", LOCAL) else f", {store_name(report.vectors_at)}"
        t.add_row("embeddings", f"{report.embedded:,} new or changed ({report.embedder}{where})")
    skipped = report.skipped_by_reason
    t.add_row("skipped", ", ".join(f"{k}: {v}" for k, v in sorted(skipped.items())) or "none")
    if report.unrecognised:
        t.add_row("not indexed", f"{report.unrecognised:,} files of unrecognised types")
    t.add_row("time", "  ".join(f"{k} {v.wall_s:.2f}s" for k, v in report.phases.items()))
    console.print(t)
    problems = report.parse_problems
    if problems:
        console.print(f"[yellow]{len(problems)} file(s) with parse notes[/] (first 10):")
        for path, msg in problems[:10]:
            console.print(f"  {path}: {msg}", markup=False)
    for path, reason in report.skipped[:10]:
        console.print(f"  skipped {path}: {reason}", markup=False, style="dim")
    if len(report.skipped) > 10:
        console.print(f"  … and {len(report.skipped) - 10} more skipped (see `nervapack status --detailed`)",
                      style="dim")
    if llm:
        _print_llm(console, llm)


def status_data(ws: Workspace, detailed: bool) -> dict:
    """``nervapack status`` data: :meth:`GraphReader.status` (shared with MCP and the dashboard)."""
    from ..code.vectors.collection import vector_state
    from ..code.vectors.embed_step import EMBED_FAILURE

    with read_graph(ws) as graph:
        data: dict[str, Any] = dict(graph.status(detailed=detailed))
        # whether vector search works, from the files (a deleted or damaged store is said, never silent),
        # and whether all of the graph is embedded (changes left by `sync --no-embed`, a failed embedding step)
        row = graph.one("SELECT count(*) FROM pending_embeddings") if graph.has_table("pending_embeddings") else None
        pending = row[0] if row else 0
        data["vectors"] = vector_state(ws, graph.meta("embedder"), graph.meta("vectors_at"), pending=pending,
                                       failure=graph.meta(EMBED_FAILURE))
        return data


@click.command()
@click.option("--detailed", "-d", is_flag=True,
              help="Health score with its components, languages, top files, coverage.")
@json_option()
@path_option()
def status(detailed, as_json, path):
    """Show the code graph: counts, freshness and (with --detailed) health."""
    ws = require_workspace(path)
    data = status_data(ws, detailed)
    emit(data, lambda d: _print_status(_console(), d, detailed))


def _bar(ratio: float, width: int = 20) -> str:
    filled = round(ratio * width)
    return "█" * filled + "░" * (width - filled)


def _print_status(console, d: dict, detailed: bool) -> None:
    from rich.panel import Panel
    from rich.table import Table

    t = Table(show_header=False, box=None)
    t.add_row("Nodes", f"{d['nodes']:,}")
    t.add_row("Edges", f"{d['edges']:,}")
    t.add_row("Files", f"{d['files']:,}")
    t.add_row("Functions", f"{d['functions']:,}")
    t.add_row("Classes", f"{d['classes']:,}")
    ex = d.get("explains")
    if ex:
        binders = ", ".join(f"{b} {n:,}" for b, n in sorted(ex["llm_binders"].items()))
        t.add_row("Doc links", f"{ex['deterministic']:,} deterministic, {ex['llm']:,} by LLM"
                               + (f" ({binders})" if binders else ""))
    t.add_row("Last ingest", f"{d['last_ingest']} ({(d['git_commit'] or 'no git')[:10]})")
    ch = d["changed_since_ingest"]
    t.add_row("Changed since", f"{ch['total']} file(s): {len(ch['modified'])} modified, {len(ch['added'])} added, "
                               f"{len(ch['deleted'])} deleted")
    vec = d.get("vectors")
    if vec:
        from rich.markup import escape

        ok = vec["state"] in ("ok", "server")
        t.add_row("Vectors", escape(vec["detail"]) if ok else f"[yellow]{escape(vec['detail'])}[/] — {vec['fix']}")
    console.print(Panel(t, title=f"NervaPack status — {d['root']}", expand=False))
    if ch["total"]:
        for p in (ch["modified"] + ch["added"] + ch["deleted"])[:10]:
            console.print(f"  [yellow]out of sync:[/] {_escape(p)}", highlight=False)
        console.print("  Run `nervapack sync` to update the graph.")
    if not detailed:
        return
    h = d["health"]
    ht = Table(title=f"Health score {h['score']}/100", title_justify="left")
    for col in ("component", "score", "points", "detail", "what it measures"):
        ht.add_column(col)
    for c in h["components"]:
        ht.add_row(c["name"], f"{c['score'] * 100:.0f}%", f"{c['points']:.1f}/{c['weight']}", c["detail"],
                   c["explanation"])
    console.print(ht)
    lt = Table(title="Languages", title_justify="left")
    for col in ("language", "files", "share of files", "lines"):
        lt.add_column(col)
    for row in d["languages"]:
        lt.add_row(row["language"], f"{row['files']:,}", f"{_bar(row['file_share'])} {row['file_share'] * 100:.1f}%",
                   f"{row['lines']:,}")
    console.print(lt)
    ft = Table(title="Most connected files", title_justify="left")
    ft.add_column("file")
    ft.add_column("cross-file edges", justify="right")
    for row in d["top_files"]:
        ft.add_row(row["file"], f"{row['degree']:,}")
    console.print(ft)
    cov = d["doc_coverage"]
    console.print(f"Documentation coverage: {_bar(cov['ratio'])} {cov['ratio'] * 100:.1f}% "
                  f"({cov['documented']:,}/{cov['public']:,}; {cov['docstrings']:,} docstrings, "
                  f"{cov['explained_by_docs']:,} explained by docs)")
    cycles = d["import_cycles"]
    console.print(f"Import cycles: {len(cycles)}"
                  + "".join(f"\n  {' → '.join(c[:7])}{' …' if len(c) > 7 else ''}" for c in cycles[:5]))
    if d["skipped"]:
        console.print(f"Skipped files: {len(d['skipped'])}")
        for row in d["skipped"][:20]:
            console.print(f"  {row['path']}: {row['reason']}", markup=False, style="dim")
    if d["parse_problems"]:
        console.print(f"Parse notes: {len(d['parse_problems'])}")
        for row in d["parse_problems"][:20]:
            console.print(f"  {row['path']}: {row['message']}", markup=False, style="dim")


@click.command()
@click.option("--format", "fmt", type=click.Choice(["json", "graphml"]), default="json", show_default=True,
              help="json: {nodes, edges}; graphml: for Gephi, yEd, networkx.")
@click.option("--output", "-o", type=click.Path(dir_okay=False, writable=True), default=None,
              help="Write to FILE instead of stdout.")
@path_option()
def export(fmt, output, path):
    """Export the graph: JSON {"nodes": [...], "edges": [...]} or GraphML (Gephi, yEd)."""
    from ..code.graph.export import write_graphml, write_json

    ws = require_workspace(path)
    store = read_graph(ws)  # read-only: export works on a read-only workspace
    try:
        if fmt == "json":
            if output:
                with open(output, "w", encoding="utf-8") as fh:
                    write_json(store, fh)
            else:
                write_json(store, sys.stdout)
        else:
            if output:
                with open(output, "wb") as fh:
                    write_graphml(store, fh)
            else:
                write_graphml(store, sys.stdout.buffer)
    finally:
        store.close()
    if output:
        echo(f"Wrote {output}", err=True)


def register(cli: click.Group) -> None:
    for command in (ingest, sync, status, export):
        cli.add_command(command)
