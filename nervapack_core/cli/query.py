"""CLI commands over a built graph: ``query``, ``history``, ``explore``, ``dependencies``
(the last two also draw an HTML view with ``--html``, see ``cli.visualize``).

Thin: each command calls the library (``retrieval``, ``pack``, ``history``, ``explore``,
``dependencies``) and hands the result to ``emit`` (rich for people, ``--json`` for
machines); the options are the shared ones of ``cli.common``.
"""

from __future__ import annotations

import click

from ..errors import NervapackError
from .code import read_graph, require_workspace
from .common import console as _rich_console
from .common import echo, emit, existing_folder, json_option, path_option, text_arg
from .common import markup_escape as _escape
from .visualize import namespace_for_view, publish, slug

__all__ = ["register", "efficiency_panel"]

BAR_WIDTH = 16


def _console():
    return _rich_console()


def _bar(ratio: float, width: int = BAR_WIDTH) -> str:
    ratio = min(max(ratio, 0.0), 1.0)
    filled = max(1, round(ratio * width)) if ratio > 0 else 0
    return "█" * filled + "░" * (width - filled)


def efficiency_panel(tokens: int, naive_tokens: int, files: int, *, budget: int | None = None,
                     nodes: int | None = None, elapsed_ms: float | None = None):
    """The rich token-efficiency panel: NervaPack against the whole files its nodes live in."""
    from rich.panel import Panel
    from rich.table import Table

    from ..query_log import MODEL_PRICES, cost_usd

    t = Table(box=None, show_edge=False, pad_edge=False)
    t.add_column("Strategy")
    t.add_column("Tokens", justify="right")
    t.add_column("Visual")
    t.add_column("Relative", justify="right")
    t.add_row(f"Naive RAG ({files} file{'s' if files != 1 else ''})", f"{naive_tokens:,}",
              _bar(1.0 if naive_tokens else 0.0), "100%" if naive_tokens else "–")
    rel = tokens / naive_tokens if naive_tokens else 0.0
    t.add_row("NervaPack", f"{tokens:,}", _bar(rel), f"{rel * 100:.1f}%" if naive_tokens else "–")
    saved = max(0, naive_tokens - tokens)
    lines = [f"Tokens saved: {saved:,}   Reduction: {(1 - rel) * 100 if naive_tokens else 0:.1f}%"]
    for model, price in MODEL_PRICES.items():
        lines.append(f"Cost saved ({model} ${price:.2f}/1M): ${cost_usd(saved, model):.4f} per query")
    facts = []
    if nodes is not None:
        facts.append(f"{nodes} node{'s' if nodes != 1 else ''}")
    if budget is not None:
        facts.append(f"budget {budget:,} (cl100k_base)")
    if elapsed_ms is not None:
        facts.append(f"{elapsed_ms:.0f} ms")
    if facts:
        lines.append(" · ".join(facts))
    from rich.console import Group
    from rich.rule import Rule
    from rich.text import Text

    return Panel(Group(t, Rule(style="dim"), Text("\n".join(lines))), title="NervaPack Token Efficiency",
                 expand=False)


def _record_history(ws, result, source: str = "cli") -> None:
    from ..query_log import append_query

    try:
        append_query(ws.history_file, result.history_record(source))
    except OSError as exc:
        echo(f"warning: could not write the query history ({exc})", err=True)


@click.command()
@click.argument("prompt")
@click.option("--budget", "-b", type=int, default=2000, show_default=True,
              help="Hard limit on the context size in cl100k_base tokens (>= 1).")
@click.option("--hops", "-k", type=click.IntRange(0, 5), default=2, show_default=True,
              help="Graph expansion depth from the seed nodes.")
@json_option("Print {nodes, tokens, naive_tokens, elapsed_ms, markdown} as JSON.")
@click.option("--no-vectors", is_flag=True, help="Full-text seeds only (skip the Chroma vector search).")
@path_option()
def query(prompt, budget, hops, as_json, no_vectors, path):
    """Answer PROMPT with a token-budgeted context from the code graph (PROMPT "-": read it from
    standard input, for text longer than a command line holds).

    Seeds from full-text (BM25 over split identifiers, signatures, docstrings, docs and the
    words of each definition's code; everyday phrases also search the words code uses for
    them: "out of date" -> stale, "thrown away" -> gc) and vector search, fused by
    reciprocal rank; expands over calls, definitions, imports,
    inheritance and doc links; packs the best nodes' code and the next ones' signatures
    into Markdown that never exceeds --budget tokens. "What breaks if I change X" and
    bare names (Session.send) are answered from the graph around X.
    """
    from ..code.retrieval.pack import check_budget
    from ..code.retrieval.retriever import Retriever, answer, check_question

    budget = check_budget(budget)
    prompt = check_question(text_arg(prompt), example='nervapack query "how are retries configured?"')
    ws = require_workspace(path)
    retriever = Retriever(ws.root, use_vectors=not no_vectors)
    try:
        if retriever.prefetch_vectors(prompt):  # the vector search runs on the other core meanwhile:
            from ..code.retrieval import pack  # noqa: F401 - load what the answer needs after it
            from ..tokens import preload

            preload()
            if not as_json:
                import rich.panel  # noqa: F401
                import rich.table  # noqa: F401
        result = answer(retriever, prompt, budget=budget, hops=hops)
    finally:
        retriever.close()
    _record_history(ws, result)
    emit(result.as_json(), lambda _: _print_answer(result, budget))


def _print_answer(result, budget: int) -> None:
    console = _console()
    for warning in result.warnings:
        console.print(f"[yellow]warning:[/] {_escape(warning)}", markup=True)
    if not result.entries:
        console.print("[yellow]Nothing in the graph matches this question.[/] "
                      "Try other words, a function or class name, or `nervapack explore NAME`.")
    echo("--- Retrieved Context ---")
    echo(result.markdown)
    echo("--- End Context ---")
    console.print(efficiency_panel(result.tokens, result.naive_tokens, len(result.files), budget=budget,
                                   nodes=len(result.entries), elapsed_ms=result.elapsed_ms))


@click.command()
@click.option("--limit", "-n", type=click.IntRange(1), default=10, show_default=True, help="How many recent queries.")
@click.option("--stats", is_flag=True, help="Aggregate statistics instead of the list.")
@click.option("--clear", is_flag=True, help="Delete the query history.")
@json_option("Print JSON.")
@path_option()
def history(limit, stats, clear, as_json, path):
    """Show past queries (.nervapack/query_history.jsonl), their statistics, or clear them."""
    import warnings

    from ..query_log import clear_history, history_stats, read_history
    from ..workspace import Workspace, find_workspace

    if clear and stats:
        raise NervapackError("Use either --stats or --clear, not both.")
    ws: Workspace | None = Workspace(existing_folder(path)) if path else find_workspace()
    if ws is None or not ws.dir.is_dir():
        raise NervapackError("No NervaPack workspace here. Run `nervapack ingest PATH` first.")
    if clear:
        n = clear_history(ws.history_file)
        emit({"cleared": n, "path": str(ws.history_file)},
             lambda d: f"Cleared {n} quer{'y' if n == 1 else 'ies'} from {ws.history_file}.")
        return
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        records = read_history(ws.history_file, None if stats else limit)
    for w in caught:
        echo(f"warning: {w.message}", err=True)
    if stats:
        emit(history_stats(records), _history_stats_panel)
        return
    emit(records, _history_table)


def _history_stats_panel(data: dict):
    from rich.panel import Panel
    from rich.table import Table

    from ..query_log import MODEL_PRICES

    t = Table(show_header=False, box=None)
    t.add_row("Total queries", f"{data['total_queries']:,}")
    t.add_row("Average savings", f"{data['avg_savings_pct']:.1f}%")
    t.add_row("Tokens saved", f"{data['total_tokens_saved']:,}")
    for model, usd in data["cost_saved_usd"].items():
        t.add_row(f"Cost saved ({model} ${MODEL_PRICES[model]:.2f}/1M)", f"${usd:.4f}")
    t.add_row("Latency p50 / p95", f"{data['p50_latency_ms']:.0f} ms / {data['p95_latency_ms']:.0f} ms")
    t.add_row("Top keywords", ", ".join(f"{w} ({c})" for w, c in data["top_keywords"]) or "–")
    _console().print(Panel(t, title="Query history", expand=False))


def _history_table(records: list) -> None:
    if not records:
        echo("No queries yet. Run `nervapack query \"...\"`.")
        return
    from rich.console import JustifyMethod
    from rich.table import Table

    t = Table(title=f"Last {len(records)} quer{'y' if len(records) == 1 else 'ies'}", title_justify="left")
    columns: tuple[tuple[str, JustifyMethod], ...] = (
        ("when (UTC)", "left"), ("source", "left"), ("query", "left"), ("tokens", "right"),
        ("naive", "right"), ("saved", "right"), ("ms", "right"))
    for col, just in columns:
        t.add_column(col, justify=just)
    for r in records:
        t.add_row(str(r.get("timestamp", ""))[:19].replace("T", " "), str(r.get("source", "")),
                  str(r.get("query", ""))[:60], f"{r.get('tokens', 0):,}", f"{r.get('naive_tokens', 0):,}",
                  f"{r.get('savings_pct', 0):.1f}%", f"{r.get('latency_ms', 0):.0f}")
    _console().print(t)


@click.command()
@click.argument("target")
@click.option("--hops", "-k", type=click.IntRange(0, 6), default=1, show_default=True, help="Neighbourhood depth.")
@click.option("--max-nodes", type=click.IntRange(1), default=300, show_default=True,
              help="Stop growing at this many nodes.")
@click.option("--html", "html", is_flag=True,
              help="Draw the neighbourhood as an interactive HTML file (see `nervapack visualize`).")
@click.option("--output", "-o", type=click.Path(dir_okay=False), default=None,
              help="With --html: the file to write (default: .nervapack/explore-TARGET.html).")
@click.option("--open", "open_browser", is_flag=True, help="With --html: open the file in a browser.")
@namespace_for_view
@json_option("Print {targets, nodes, edges} as JSON (with --html: where the file went).")
@path_option()
def explore(target, hops, max_nodes, html, output, open_browser, namespace, as_json, path):
    """Show the N-hop neighbourhood of a file, class or function.

    TARGET is a path (src/cli.py), a name (GraphBuilder, Session.send), kind:name
    (function:parse, partial names allowed) or a node id. With --html, draw it: the
    targets in the middle, each hop on its own ring, in an offline HTML file.
    """
    if (output or open_browser) and not html:
        raise NervapackError("--output and --open go with --html.")
    ws = require_workspace(path)
    with read_graph(ws) as graph:
        if html:
            from ..code.visualize.views import explore_view
            from ..flows.overlay import decision_overlay

            view = explore_view(graph, target, hops=hops, max_nodes=max_nodes,
                                overlay=decision_overlay(namespace=namespace))
        else:
            sub = graph.explore(target, hops=hops, max_nodes=max_nodes)
    if html:
        publish(view, output, ws.dir / f"explore-{slug(target)}.html", open_browser=open_browser)
        return
    emit(sub.as_json(), lambda _: _print_explore(sub, hops, max_nodes))


def _print_explore(sub, hops: int, max_nodes: int) -> None:
    from rich.table import Table

    console = _console()
    names = ", ".join(f"{t['kind']} {t['qualified_name']}" for t in sub.targets[:5])
    more = f" (+{len(sub.targets) - 5} more)" if len(sub.targets) > 5 else ""
    console.print(f"Exploring {names}{more}: {len(sub.nodes)} nodes, {len(sub.edges)} edges within {hops} hop(s)",
                  markup=False)
    names_by_id = {n["id"]: n["qualified_name"] for n in sub.nodes}

    def relation(n: dict) -> str:  # the edge this node was reached by, in its real direction
        v = n.get("via")
        if not v:
            return ""
        other = names_by_id.get(v["node"], v["node"])
        return f"{v['kind']} to {other}" if v["role"] == "source" else f"{v['kind']} from {other}"

    t = Table()
    for col in ("hop", "kind", "name", "location", "link"):
        t.add_column(col)
    for n in sub.nodes:
        if n["kind"] == "import" and n["distance"] > 0:
            continue
        loc = f"{n['file']}:{n['start_line']}-{n['end_line']}" if n["kind"] != "file" else n["file"]
        t.add_row(str(n["distance"]), n["kind"], n["qualified_name"], loc,
                  "target" if n["distance"] == 0 else relation(n))
    console.print(t)
    imports = sum(1 for n in sub.nodes if n["kind"] == "import" and n["distance"] > 0)
    if imports:
        console.print(f"({imports} import statements not listed; see --json)", style="dim")
    if sub.truncated:
        console.print(f"[yellow]Stopped at {max_nodes} nodes; use --max-nodes or fewer --hops.[/]")


@click.command()
@click.argument("file", required=False)
@click.option("--html", "html", is_flag=True,
              help="Draw the import graph as an interactive HTML file: layers by import depth, red = in a cycle, "
                   "cyan = >5 dependents, yellow = >5 imports, green = normal (FILE, if given, is selected).")
@click.option("--output", "-o", type=click.Path(dir_okay=False), default=None,
              help="With --html: the file to write (default: .nervapack/dependencies.html).")
@click.option("--open", "open_browser", is_flag=True, help="With --html: open the file in a browser.")
@namespace_for_view
@json_option("Print JSON (with --html: where the file went).")
@path_option()
def dependencies(file, html, output, open_browser, namespace, as_json, path):
    """File import dependencies: cycles, most depended-on files, orphans; or one FILE's imports."""
    if (output or open_browser) and not html:
        raise NervapackError("--output and --open go with --html.")
    ws = require_workspace(path)
    with read_graph(ws) as graph:
        if html:
            from ..code.visualize.views import dependency_view
            from ..flows.overlay import decision_overlay

            focus = graph.dependencies(file)["file"] if file else None
            view = dependency_view(graph, focus=focus, overlay=decision_overlay(namespace=namespace))
        else:
            data = graph.dependencies(file)
    if html:
        publish(view, output, ws.dir / "dependencies.html", open_browser=open_browser)
        return
    emit(data, lambda d: _print_dependencies(d, file))


def _print_dependencies(data: dict, file: str | None) -> None:
    from rich.panel import Panel
    from rich.table import Table

    console = _console()
    if file:
        console.print(f"[bold]{_escape(data['file'])}[/]")
        console.print(f"Imports ({len(data['imports'])}):")
        for f in data["imports"]:
            console.print(f"  → {f}", markup=False)
        console.print(f"Imported by ({len(data['imported_by'])}):")
        for f in data["imported_by"]:
            console.print(f"  ← {f}", markup=False)
        if data["cycle"]:
            console.print(f"[red]In an import cycle of {len(data['cycle'])} files:[/] "
                          + " → ".join(data["example_cycle"]))
        return
    t = Table(show_header=False, box=None)
    t.add_row("Total files", f"{data['files']:,}")
    t.add_row("Total dependencies", f"{data['dependencies']:,}")
    t.add_row("Max dependency depth", f"{data['max_depth']}")
    t.add_row("Orphan files", f"{len(data['orphans']):,}")
    console.print(Panel(t, title="Dependency Metrics", expand=False))
    if data["cycles"]:
        console.print(f"[yellow]Circular dependencies: {len(data['cycles'])} group(s) of mutually importing files "
                      f"({data['files_in_cycles']} files)[/]")
        for i, c in enumerate(data["cycles"][:10], 1):
            console.print(f"Cycle {i} ({len(c['files'])} files), e.g.:")
            ex = c["example"]
            console.print("  " + ex[0], markup=False)
            for f in ex[1:-1]:
                console.print(f"  → {f}", markup=False)
            console.print(f"  → {ex[-1]} (back to start)", markup=False)
    else:
        console.print("[green]No circular dependencies.[/]")
    for title, key, col in (("Most depended-on files", "most_depended_on", "dependents"),
                            ("Files with most dependencies", "most_dependencies", "imports")):
        if data[key]:
            tt = Table(title=title, title_justify="left")
            tt.add_column("file")
            tt.add_column(col, justify="right")
            for row in data[key]:
                tt.add_row(row["file"], str(row[col]))
            console.print(tt)
    if data["orphans"]:
        shown = data["orphans"][:20]
        console.print(f"Orphan files (no imports in or out): {len(data['orphans'])}")
        for f in shown:
            console.print(f"  {f}", markup=False, style="dim")
        if len(data["orphans"]) > 20:
            console.print(f"  … and {len(data['orphans']) - 20} more", style="dim")


def register(cli: click.Group) -> None:
    for command in (query, history, explore, dependencies):
        cli.add_command(command)
