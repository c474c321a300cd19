"""The click group every NervaPack command line uses."""

from __future__ import annotations

import sqlite3

import click

from .errors import NervapackError

__all__ = ["UserErrorGroup"]


class UserErrorGroup(click.Group):
    """Turns ``NervapackError`` (and Ctrl-C, and a database that cannot be read) into a message and an
    exit code, never a traceback."""

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except NervapackError as exc:
            click.echo(f"Error: {exc}", err=True)
            ctx.exit(getattr(exc, "exit_code", 1))
        except sqlite3.DatabaseError as exc:  # a read path without its own message: still no traceback
            click.echo(f"Error: a NervaPack database cannot be read ({exc}). If another process holds it, "
                       "try again; if it is corrupt, run `nervapack ingest --rebuild` (code graph).", err=True)
            ctx.exit(1)
        except KeyboardInterrupt:
            click.echo("Interrupted.", err=True)
            ctx.exit(130)
