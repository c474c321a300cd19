"""``nervapack doctor``: the environment and workspace checks of :mod:`nervapack_core.flows.doctor`."""

from __future__ import annotations

import click

from .common import console, emit, existing_folder, json_option, path_option

__all__ = ["register"]

_MARK = {"ok": "[green]✓[/]", "warning": "[yellow]![/]", "error": "[red]✗[/]"}


@click.command()
@json_option()
@path_option()
def doctor(as_json, path):
    """Check what NervaPack needs: the embedding model and its hash, the token encoding, the tree-sitter
    grammars, SQLite FTS5, write access to .nervapack, the schema versions of graph.db and memory.db, git,
    and the Chroma server when one is configured. Says what is wrong and the fix; exits 1 when a check
    fails (warnings do not)."""
    from rich.markup import escape
    from rich.table import Table

    from ..flows.doctor import run_checks

    if path:
        existing_folder(path)  # not "all good": there is nothing there to check
    ws, checks = run_checks(path)
    errors = [c for c in checks if c.status == "error"]
    data = {"ok": not errors, "workspace": str(ws.root) if ws else None, "checks": [c.as_json() for c in checks]}

    def human(d):
        t = Table(show_header=False, box=None)
        for c in checks:
            fix = f"\n  [bold]fix:[/] {escape(c.fix)}" if c.fix and c.status != "ok" else ""
            t.add_row(_MARK[c.status], c.name, escape(c.detail) + fix)
        out = console()
        out.print(t)
        warnings = sum(c.status == "warning" for c in checks)
        out.print(f"[red]{len(errors)} problem(s)[/], {warnings} warning(s)." if errors else
                  f"[green]All good[/] ({warnings} warning(s)).")

    emit(data, human)
    if errors:
        click.get_current_context().exit(1)


def register(cli: click.Group) -> None:
    cli.add_command(doctor)
