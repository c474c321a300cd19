"""Keep Python's full garbage collections out of the dashboard's page runs.

The server holds large, long-lived caches (a 65,000-node graph's rows, a memory's counts),
so a full collection that happens to fall inside a page's run scans all of them: measured
on Django, the Decisions page took 233 ms instead of ~150 ms when one came due after the
Analytics page had been shown. So, once no page has run for a moment, the survivors are
collected and then frozen (``gc.freeze``, as long-running servers do): later collections
scan only what was made since. Each tidy unfreezes first, so what became garbage among
the frozen objects meanwhile (a closed tab's session, an evicted cache entry) is freed then.
"""

from __future__ import annotations

import gc
import threading

__all__ = ["run_started", "run_finished", "tidy"]

DELAY_S = 1.0  # after the last run: the browser is drawing by then, and the next click is rarely this quick

_lock = threading.Lock()
_running = 0
_timer: threading.Timer | None = None


def run_started() -> None:
    """A page run begins (app.py): no tidy while it runs."""
    global _running
    with _lock:
        _running += 1


def run_finished(delay_s: float = DELAY_S) -> None:
    """A page run ended (app.py, whatever way): tidy once ``delay_s`` passed with no run."""
    global _running, _timer
    with _lock:
        _running = max(0, _running - 1)
        if _timer is not None:
            _timer.cancel()
        _timer = threading.Timer(delay_s, _tidy_when_idle, args=(delay_s,))
        _timer.daemon = True
        _timer.start()


def _tidy_when_idle(delay_s: float) -> None:
    with _lock:
        busy = _running > 0
    if busy:  # a run started meanwhile: its own end arms the next tidy
        return
    tidy()


def tidy() -> None:
    """Collect everything (the frozen objects too), then freeze what survived."""
    gc.unfreeze()
    gc.collect()
    gc.freeze()
