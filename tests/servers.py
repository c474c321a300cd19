"""Helpers for tests that start a server in a subprocess (``nervapack serve``, ``chroma run``).

One free-port picker, one wait-until-it-answers loop and one stop, shared by the dashboard,
reliability and Chroma server tests so a change to how we wait (timeouts, the log shown on
failure) is made once.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
import urllib.request
from pathlib import Path


def free_port() -> int:
    """A TCP port of 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_until_serving(url: str, proc: subprocess.Popen, log: Path, timeout: float = 180,
                       what: str = "serve") -> None:
    """Return when ``url`` answers 200; fail with the end of ``log`` if ``proc`` exits or time runs out."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"{what} exited with {proc.returncode}:\n{log.read_text(errors='replace')[-3000:]}")
        try:
            with urllib.request.urlopen(url, timeout=2) as r:
                if r.status == 200:
                    return
        except OSError:
            pass
        time.sleep(0.3)
    raise AssertionError(f"{what} did not answer within {timeout} s:\n{log.read_text(errors='replace')[-3000:]}")


def stop_process_group(proc: subprocess.Popen, timeout: float = 20) -> None:
    """SIGTERM ``proc`` (``serve`` forwards it to Streamlit), then kill its whole group if it lingers.

    The process must have been started with ``start_new_session=True`` so its group is its own.
    """
    if proc.poll() is not None:
        return
    proc.terminate()
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
