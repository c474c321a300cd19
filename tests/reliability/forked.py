"""The real CLI in a forked child process, for the tests that kill a command part-way.

A fork skips the second of interpreter start-up and imports an exec'd command spends before its
first read, so every kill lands in the command's own work (the crash tests check that a clean run
through a real ``python -m nervapack_core.cli`` reaches the same state)."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path


def forked_cli(args: list[str], cwd: Path, before: Callable[[], None] | None = None) -> int:
    """Start ``nervapack ARGS`` (``nervapack_core.cli``, imported once by this test process) in
    ``cwd`` in a forked child of its own session, its output to /dev/null; returns its pid.
    ``before`` runs in the child first (an environment variable to set, a function to replace)."""
    from nervapack_core.cli import cli

    pid = os.fork()
    if pid == 0:  # the child: the command, nothing else; never back into pytest
        code = 70
        try:
            os.setsid()
            os.chdir(cwd)
            if before is not None:
                before()
            null = os.open(os.devnull, os.O_RDWR)
            for fd in (0, 1, 2):
                os.dup2(null, fd)
            cli.main(args, prog_name="nervapack", standalone_mode=True)
            code = 0
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 1
        finally:
            os._exit(code)
    return pid
