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


# Command groups, each owned by its part of the library; a part that is not built
# yet is simply absent from the CLI.
_COMMAND_MODULES = (
    "nervapack_core.code.commands",  # ingest, status, export
    "nervapack_core.code.query_commands",  # query, history, explore, dependencies
    "nervapack_core.dashboard.commands",  # serve
    "nervapack_core.memory.cli",  # memory ...
)


def _register_subcommands():
    import importlib

    for name in _COMMAND_MODULES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name and name.startswith(exc.name):
                continue
            raise
        if hasattr(module, "register"):
            module.register(cli)
        else:  # the memory CLI is a click group of its own, also run as `nervapack-memory`
            cli.add_command(module.memory_cli, "memory")


_register_subcommands()


def main(argv=None):
    return cli.main(args=argv, prog_name="nervapack")


if __name__ == "__main__":
    sys.exit(main())
