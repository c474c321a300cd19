"""The click group every NervaPack command line uses."""

from __future__ import annotations

import click

from ..errors import NervapackError

__all__ = ["UserErrorGroup"]


class UserErrorGroup(click.Group):
    """Turns ``NervapackError`` (and Ctrl-C) into a message and an exit code, never a traceback."""

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except NervapackError as exc:
            click.echo(f"Error: {exc}", err=True)
            ctx.exit(getattr(exc, "exit_code", 1))
        except KeyboardInterrupt:
            click.echo("Interrupted.", err=True)
            ctx.exit(130)
