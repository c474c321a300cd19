"""CLI commands over the git history stored with the graph: ``hotspots``, ``coupling``,
``knowledge``, ``file-history``.

Thin: each reads :class:`~nervapack_core.code.analysis.reader.GraphReader` (which reads
:mod:`nervapack_core.code.analysis.git_history`) and hands the result to ``emit``. A workspace without git
history prints why and exits 0 (``--json``: ``{"available": false, "reason": ...}``); a bad
``--since`` is a clear error with a non-zero exit. Tables say how many rows they show of how many.
"""

from __future__ import annotations

import click

from .code import read_graph, require_workspace
from .common import console as _rich_console
from .common import emit, json_option, path_option

__all__ = ["register"]

WORKSPACE_ARG = click.argument("path", required=False, type=click.Path(file_okay=False))
LIMIT_HELP = "Show at most N rows (0: all)."


def _no_history(state: dict) -> None:
    emit({"available": False, "reason": state["reason"]},
         lambda d: _rich_console().print(f"No git history: {d['reason']}", markup=False))


def _shown(rows: list, limit: int) -> list:
    return rows[:limit] if limit else rows


def _table(title: str):
    """A table without vertical rules: the numeric columns keep their full names on 80 columns."""
    from rich import box
    from rich.table import Table

    return Table(title=title, title_justify="left", box=box.SIMPLE_HEAD, show_edge=False, padding=(0, 1),
                 collapse_padding=True)


def _text(value: str):
    from rich.text import Text

    return Text(str(value))


def _footer(shown: int, total: int, what: str, extra: str = "") -> str:
    text = f"Showing {shown:,} of {total:,} {what}"
    if shown < total:
        text += " (--limit 0 for all)"
    return text + (f"; {extra}" if extra else "") + "."


@click.command()
@WORKSPACE_ARG
@click.option("--since", metavar="DATE", default=None,
              help="Count only commits authored on or after DATE (ISO 8601: 2024-01-31 or 2024-01-31T12:00+02:00).")
@click.option("--limit", "-n", type=click.IntRange(0), default=20, show_default=True, help=LIMIT_HELP)
@json_option()
def hotspots(path, since, limit, as_json):
    """Files that change often and are complex: score = commits × complexity.

    commits: non-merge commits touching the file (as `git log --no-merges -- FILE` counts
    them, no rename following); complexity: for each outermost function, its lines ×
    (1 + its deepest nesting by indentation), summed (a file without functions: its lines).
    PATH is the workspace root (default: search upwards).
    """
    from ..code.analysis.git_history import parse_since

    parse_since(since)  # a bad date is an error before anything is read
    ws = require_workspace(path)
    with read_graph(ws) as graph:
        state = graph.history_state()
        if not state["available"]:
            return _no_history(state)
        rows = graph.hotspots(since=since)
    shown = _shown(rows, limit)
    data = {"available": True, "since": since, "total": len(rows), "shown": len(shown), "hotspots": shown}
    emit(data, _print_hotspots)


def _print_hotspots(d: dict) -> None:
    t = _table("Hotspots (score = commits × complexity)")
    t.add_column("file", overflow="fold")
    for col in ("commits", "lines_added", "lines_removed", "authors", "complexity", "score"):
        t.add_column(col, justify="right", no_wrap=True)
    for r in d["hotspots"]:
        t.add_row(_text(r["file"]), f"{r['commits']:,}", f"{r['lines_added']:,}", f"{r['lines_removed']:,}",
                  f"{r['authors']:,}", f"{r['complexity']:,}", f"{r['score']:,}")
    console = _rich_console()
    console.print(t)
    since = f"commits since {d['since']}" if d["since"] else ""
    console.print(_footer(d["shown"], d["total"], "files with commits", since), markup=False)


@click.command()
@WORKSPACE_ARG
@click.option("--min-shared", type=click.IntRange(1), default=3, show_default=True,
              help="List pairs changed together in at least N commits.")
@click.option("--limit", "-n", type=click.IntRange(0), default=20, show_default=True, help=LIMIT_HELP)
@json_option()
def coupling(path, min_shared, limit, as_json):
    """File pairs that change together: shared commits / the smaller file's commits.

    Commits touching more than 50 files are left out. static_link tells whether an import,
    call or inheritance edge joins the two files; pairs without one are hidden dependencies.
    PATH is the workspace root (default: search upwards).
    """
    from ..code.analysis.git_history import MAX_COUPLING_FILES

    ws = require_workspace(path)
    with read_graph(ws) as graph:
        state = graph.history_state()
        if not state["available"]:
            return _no_history(state)
        rows = graph.coupling(min_shared=min_shared)
    shown = _shown(rows, limit)
    data = {"available": True, "min_shared": min_shared, "max_files_per_commit": MAX_COUPLING_FILES,
            "total": len(rows), "shown": len(shown), "pairs": shown}
    emit(data, _print_coupling)


def _print_coupling(d: dict) -> None:
    t = _table("Change coupling (ratio = shared / the smaller file's commits)")
    console = _rich_console()
    if not d["pairs"]:
        console.print(f"No file pairs changed together in at least {d['min_shared']} commits "
                      f"(commits of more than {d['max_files_per_commit']} files left out).")
        return
    t.add_column("file_a", overflow="fold")
    t.add_column("file_b", overflow="fold")
    for col in ("shared", "ratio", "static_link"):
        t.add_column(col, justify="left" if col == "static_link" else "right", no_wrap=True)
    for r in d["pairs"]:
        t.add_row(_text(r["file_a"]), _text(r["file_b"]), f"{r['shared']:,}", f"{r['ratio'] * 100:.0f}%",
                  "yes" if r["static_link"] else "[yellow]no[/]")
    console.print(t)
    console.print(_footer(d["shown"], d["total"], "pairs",
                          f"shared >= {d['min_shared']}, commits of more than {d['max_files_per_commit']} files "
                          "left out"), markup=False)


@click.command()
@WORKSPACE_ARG
@click.option("--islands", is_flag=True, help="Only the knowledge islands (one author wrote >= 95%).")
@click.option("--limit", "-n", type=click.IntRange(0), default=20, show_default=True, help=LIMIT_HELP)
@json_option()
def knowledge(path, islands, limit, as_json):
    """Who knows the code: main author and share per file and per community, and the knowledge
    islands (files where one author wrote >= 95% of the lines added).

    PATH is the workspace root (default: search upwards).
    """
    ws = require_workspace(path)
    with read_graph(ws) as graph:
        state = graph.history_state()
        if not state["available"]:
            return _no_history(state)
        data = graph.knowledge()
    files = [f for f in data["files"] if f["island"]] if islands else data["files"]
    out = {"available": True, "threshold": data["threshold"], "total_files": len(files),
           "islands": len(data["islands"]), "files": _shown(files, limit),
           "total_communities": len(data["communities"]), "communities": _shown(data["communities"], limit)}
    emit(out, _print_knowledge)


def _print_knowledge(d: dict) -> None:
    console = _rich_console()
    t = _table("Knowledge per file (main author's share of the lines added)")
    t.add_column("file", overflow="fold")
    t.add_column("main author")
    for col in ("share", "authors", "commits"):
        t.add_column(col, justify="right", no_wrap=True)
    for f in d["files"]:
        t.add_row(_text(f["file"]), _text(f["main_author"]), f"{f['share'] * 100:.0f}%", f"{f['authors']:,}",
                  f"{f['commits']:,}")
    console.print(t)
    console.print(_footer(len(d["files"]), d["total_files"], "files",
                          f"{d['islands']:,} knowledge island(s) (>= {d['threshold'] * 100:.0f}%)"), markup=False)
    if d["communities"]:
        c = _table("Knowledge per community")
        for col in ("community", "files", "main author", "share", "authors"):
            c.add_column(col, justify="left" if col == "main author" else "right")
        for row in d["communities"]:
            c.add_row(str(row["community"]), f"{row['files']:,}", _text(row["main_author"]),
                      f"{row['share'] * 100:.0f}%", f"{row['authors']:,}")
        console.print(c)
        console.print(_footer(len(d["communities"]), d["total_communities"], "communities"), markup=False)


@click.command("file-history")
@click.argument("file")
@click.option("--limit", "-n", type=click.IntRange(0), default=20, show_default=True,
              help="How many recent commits to list (0: all).")
@json_option()
@path_option()
def file_history(file, limit, as_json, path):
    """One FILE's git history: commits, lines, authors with their shares, recent commits."""
    ws = require_workspace(path)
    with read_graph(ws) as graph:
        state = graph.history_state()
        if not state["available"]:
            return _no_history(state)
        data = graph.file_history(file, limit=limit or None)
    emit({"available": True, **data}, _print_file_history)


def _print_file_history(d: dict) -> None:
    console = _rich_console()
    console.print(_text(d["file"]), style="bold")
    console.print(f"{d['commits']:,} commits, +{d['lines_added']:,} -{d['lines_removed']:,} lines, "
                  f"first {d['first'] or '–'}, last {d['last'] or '–'}", markup=False)
    if d["authors"]:
        a = _table(f"Authors (share of the {d['share_basis']} added)")
        for col in ("author", "commits", "lines added", "share"):
            a.add_column(col, justify="left" if col == "author" else "right")
        for row in d["authors"]:
            a.add_row(_text(row["name"]), f"{row['commits']:,}", f"{row['lines_added']:,}",
                      f"{row['share'] * 100:.0f}%")
        console.print(a)
    if d["recent"]:
        r = _table("Recent commits")
        for col in ("commit", "date", "author", "+", "-", "summary"):
            r.add_column(col, justify="right" if col in ("+", "-") else "left")
        for row in d["recent"]:
            r.add_row(row["sha"][:10], row["date"][:10], _text(row["author"]), f"{row['added']:,}",
                      f"{row['removed']:,}", _text(row["summary"]))
        console.print(r)
        console.print(_footer(len(d["recent"]), d["commits"], "commits"), markup=False)


def register(cli: click.Group) -> None:
    for command in (hotspots, coupling, knowledge, file_history):
        cli.add_command(command)
