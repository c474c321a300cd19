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

import os
import sys

import click

from .. import __version__
from .common import UserErrorGroup


class _LazyGroup(UserErrorGroup):
    """Imports a command's module when the command is asked for: ``nervapack query`` loads
    ``cli.query`` (and what it imports), not the memory, dashboard or review commands.
    Listing the commands (``--help``) and any name not in :data:`_HOME` mount everything."""

    def get_command(self, ctx, cmd_name):
        if cmd_name not in self.commands:
            home = _HOME.get(cmd_name)
            if home is not None:
                _mount(home)
            if cmd_name not in self.commands:
                _register_subcommands()
        return super().get_command(ctx, cmd_name)

    def list_commands(self, ctx):
        _register_subcommands()
        return super().list_commands(ctx)


@click.group(cls=_LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="nervapack")
def cli():
    """NervaPack Core: an offline code graph, decision memory and dashboard."""


# the module that registers each command; a command missing here is still found (everything is mounted)
_HOME = {"ingest": "code", "sync": "code", "status": "code", "export": "code", "query": "query", "history": "query",
         "explore": "query", "dependencies": "query", "hotspots": "git_history", "coupling": "git_history",
         "knowledge": "git_history", "file-history": "git_history", "serve": "serve", "review-changes": "review",
         "hooks": "review", "visualize": "visualize", "doctor": "doctor", "memory": "memory"}
_mounted: set[str] = set()


def _mount(name: str) -> None:
    if name in _mounted:
        return
    _mounted.add(name)
    if name == "memory":
        from .memory import memory_cli

        cli.add_command(memory_cli, "memory")
        return
    import importlib

    importlib.import_module(f"{__name__}.{name}").register(cli)


def _register_subcommands():
    """Mount every command module; they import their heavy dependencies (chromadb,
    tree-sitter, streamlit) only when a command runs."""
    for name in ("code", "query", "git_history", "serve", "review", "visualize", "doctor", "memory"):
        _mount(name)


def main(argv=None):
    # numpy's OpenBLAS starts a thread per core at import (~40 ms of CPU) for nothing: our
    # matrix work is one matrix-vector product per question, and ONNX runs its own threads
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    return cli.main(args=argv, prog_name="nervapack")


if __name__ == "__main__":
    sys.exit(main())
