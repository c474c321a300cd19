"""``cached_on``: one decorator keys every dashboard loader on its source's change marker.
Real files and a real memory database: a loader recomputes when (and only when) its marker
moves, and loaders of the same shape never share a cache."""

from __future__ import annotations

import shutil

from nervapack_core.dashboard.data import Sources
from nervapack_core.dashboard.ui import cache
from nervapack_core.memory import MemoryStore


def test_cached_on_recomputes_only_when_the_marker_moves(tmp_path):
    flag = tmp_path / "marker.txt"
    flag.write_text("1")
    calls = []

    @cache.cached_on(lambda src: flag.read_text())
    def doubled(src, x, *, plus=0):
        calls.append(("doubled", x))
        return 2 * x + plus

    @cache.cached_on(lambda src: flag.read_text())
    def tripled(src, x, *, plus=0):  # same shape: must not be answered from doubled's cache
        calls.append(("tripled", x))
        return 3 * x + plus

    src = Sources(root=tmp_path, memory_db=None)
    assert doubled(src, 2) == 4 and doubled(src, 2) == 4 and doubled(src, 2, plus=1) == 5
    assert tripled(src, 2) == 6
    assert calls == [("doubled", 2), ("doubled", 2), ("tripled", 2)]
    other = Sources(root=tmp_path / "elsewhere", memory_db=None)
    assert doubled(other, 2) == 4 and len(calls) == 4  # another workspace is another key
    flag.write_text("2")
    assert doubled(src, 2) == 4 and len(calls) == 5
    assert doubled.__name__ == "doubled"


def test_memory_loaders_see_a_write_from_another_process_view(tmp_path, seeded):
    root, _ = seeded
    copy = tmp_path / "ws"
    shutil.copytree(root / ".nervapack", copy / ".nervapack")  # the session fixture stays untouched
    src = Sources(root=copy, memory_db=copy / ".nervapack" / "memory.db")
    before = {n["namespace"]: n["nodes"] for n in cache.namespaces(src)}
    assert cache.namespaces(src) is not None and before["billing"] >= 2
    with MemoryStore(db_path=src.memory_db) as writer:  # a separate connection, as another process would be
        writer.store("Invoices are sent on the 1st", kind="fact", namespace="billing")
    after = {n["namespace"]: n["nodes"] for n in cache.namespaces(src)}
    assert after["billing"] == before["billing"] + 1
    decisions = cache.decisions(src, "default")
    assert cache.decisions(src, "default") is decisions  # shared (cache_resource): the same object
