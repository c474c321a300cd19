"""The ``nervapack`` command line: a thin layer over the library.

Each command imports what it needs lazily so that ``--help`` and light commands
stay fast (chromadb and tree-sitter are only loaded by the commands that use them).
"""

from __future__ import annotations

import sys

import click

from . import __version__
from .errors import NervapackError


class _Group(click.Group):
    """Turns ``NervapackError`` (and Ctrl-C) into a message and an exit code, never a traceback."""

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except NervapackError as exc:
            click.echo(f"Error: {exc}", err=True)
            ctx.exit(exc.exit_code)
        except KeyboardInterrupt:
            click.echo("Interrupted.", err=True)
            ctx.exit(130)


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="nervapack")
def cli():
    """NervaPack Core: an offline code graph, decision memory and dashboard."""


def _register_subcommands():
    from .code import commands as code_commands

    code_commands.register(cli)
    try:
        from .memory.cli import memory_cli
    except ImportError:  # memory package not built yet
        return
    cli.add_command(memory_cli, "memory")


_register_subcommands()


def main(argv=None):
    return cli.main(args=argv, prog_name="nervapack")


if __name__ == "__main__":
    sys.exit(main())
