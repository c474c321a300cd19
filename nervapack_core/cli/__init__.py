"""The ``nervapack`` command line: a thin layer over the library.

Every click command of both command lines lives in this package (the engines hold no
CLI code): ``code`` (ingest, status, export), ``query`` (query, history, explore,
dependencies), ``git_history`` (hotspots, coupling, knowledge, file-history), ``review``
(review-changes, hooks), ``visualize`` (the HTML drawing of the graph), ``doctor`` (checks), ``serve``
(the dashboard), ``memory`` (``nervapack memory`` and the
``nervapack-memory`` script); ``common`` holds the shared options and ``emit``.

Each command imports what it needs lazily so that ``--help`` and light commands
stay fast (chromadb and tree-sitter are only loaded by the commands that use them).
"""

from __future__ import annotations

import sys

import click

from .. import __version__
from .common import UserErrorGroup


@click.group(cls=UserErrorGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="nervapack")
def cli():
    """NervaPack Core: an offline code graph, decision memory and dashboard."""


def _register_subcommands():
    """Mount the command modules; they import their heavy dependencies (chromadb,
    tree-sitter, streamlit) only when a command runs."""
    from . import code as code_commands
    from . import doctor as doctor_commands
    from . import git_history as history_commands
    from . import query as query_commands
    from . import review as review_commands
    from . import serve as dashboard_commands
    from . import visualize as visualize_commands
    from .memory import memory_cli

    for module in (code_commands, query_commands, history_commands, dashboard_commands, review_commands,
                   visualize_commands, doctor_commands):
        module.register(cli)
    cli.add_command(memory_cli, "memory")


_register_subcommands()


def main(argv=None):
    return cli.main(args=argv, prog_name="nervapack")


if __name__ == "__main__":
    sys.exit(main())
