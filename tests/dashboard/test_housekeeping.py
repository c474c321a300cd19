"""The dashboard's garbage-collection housekeeping: after the last page run, collect and
freeze; never while a run is going; what became garbage among frozen objects is freed."""

import gc
import time
import weakref

import pytest

from nervapack_core.dashboard import housekeeping


class Node:
    def __init__(self):
        self.me = self  # a reference cycle: only a collection frees it


@pytest.fixture(autouse=True)
def unfrozen():
    gc.unfreeze()
    yield
    gc.unfreeze()  # leave the test process as it was


def wait_for(condition, seconds: float = 5.0) -> bool:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if condition():
            return True
        time.sleep(0.02)
    return condition()


def test_tidy_after_the_last_run_frees_cycles_and_freezes_the_rest():
    cycle = Node()
    gone = weakref.ref(cycle)
    del cycle
    housekeeping.run_started()
    housekeeping.run_finished(delay_s=0.05)
    assert wait_for(lambda: gc.get_freeze_count() > 0)
    assert gone() is None


def test_no_tidy_while_a_run_is_going_and_frozen_garbage_is_freed_by_the_next():
    keep = Node()  # alive at the first tidy: frozen with the rest
    housekeeping.tidy()
    assert gc.get_freeze_count() > 0
    gone = weakref.ref(keep)
    del keep  # now garbage among the frozen objects: no ordinary collection reaches it
    gc.collect()
    assert gone() is not None
    housekeeping.run_started()  # a page run…
    housekeeping.run_started()  # …and another one, still going when the first ends
    housekeeping.run_finished(delay_s=0.05)
    armed = housekeeping._timer
    assert armed is not None
    armed.join(timeout=30)  # the timer the first end armed has fired (and found a run going)
    assert not armed.is_alive()
    assert gone() is not None  # no tidy while a run is going
    housekeeping.run_finished(delay_s=0.05)
    assert wait_for(lambda: gone() is None)  # the next tidy unfroze and collected it
