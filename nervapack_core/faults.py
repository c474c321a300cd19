"""Fault injection for the crash tests: named points where the ingest can SIGKILL itself.

``NERVAPACK_TEST_KILL_AFTER=<point>`` makes the process kill itself (SIGKILL, no cleanup,
as a power cut or an OOM kill would) when it reaches that point. The points of an ingest
are ``parse-chunk`` (while parser workers are still busy), ``parse``, ``rebuild-delete``,
``write-insert`` (inside the write transaction), ``graph-commit`` (after it) and
``embed-batch`` (after the first batch of vectors). Unset, nothing happens; this is how
the tests reach the states between two steps for real.
"""

from __future__ import annotations

import os
import signal

from .settings import env_value

__all__ = ["FAULT_ENV", "fault_point"]

FAULT_ENV = "NERVAPACK_TEST_KILL_AFTER"


def fault_point(name: str) -> None:
    """SIGKILL this process when ``$NERVAPACK_TEST_KILL_AFTER`` names this point."""
    if env_value(FAULT_ENV) == name:
        os.kill(os.getpid(), signal.SIGKILL)
