"""The drawn structure holds: no upward import, the engines independent but for the bridge,
Streamlit only in the UI, no file cycle that is not explained (the table is tests/layers.py).

Each rule is also shown to catch a deliberate violation, written into a real module's source."""

from __future__ import annotations

import layers
import pytest
from layers import PACKAGE, package_files, unexplained_cycles, violations


def _with(relative: str, extra: str) -> list:
    """The package's files with ``extra`` appended to the source of one of them."""
    target = PACKAGE / relative
    return [(p, (p.read_text() + "\n" + extra + "\n") if p == target else None) for p, _ in package_files()]


def test_the_package_keeps_its_layers():
    assert violations(package_files()) == []


def test_no_file_cycle_that_is_not_explained():
    assert unexplained_cycles(package_files()) == []


def test_every_module_has_a_layer():
    for path, _ in package_files():
        layers.layer_of(layers.module_name(path))  # raises for a module in no layer


@pytest.mark.parametrize(("module", "line", "said"), [
    # the graph reading what analyses it: upward inside the code engine
    ("code/graph/reader.py", "from ..analysis.health import health", "a layer above"),
    # the ground floor reaching the memory
    ("settings.py", "from .memory.provenance import author", "a layer above"),
    # the code engine reading the memory, even lazily, even for a type
    ("code/ingest/sync.py", "def f():\n    from ...memory.store import MemoryStore", "engines meet only in the bridge"),
    ("code/visualize/views.py", "if TYPE_CHECKING:\n    from ...memory import MemoryStore", "engines meet only"),
    # the memory reading the code graph outside its bridge
    ("memory/store.py", "from ..code.graph.store import GraphStore", "engines meet only in the bridge"),
    # an engine importing a face
    ("memory/recall.py", "import nervapack_core.cli.common", "a layer above"),
    # Streamlit in the library
    ("dashboard/data.py", "import streamlit as st", "imports Streamlit"),
])
def test_a_deliberate_violation_is_caught(module, line, said):
    found = violations(_with(module, line))
    assert any(f"nervapack_core/{module}:" in v and said in v for v in found), found


def test_a_new_cycle_is_caught():
    # the store importing the reader back (the reader imports the store's schema version)
    found = unexplained_cycles(_with("code/graph/store.py", "def f():\n    from .reader import GraphRows"))
    assert ["code.graph.reader", "code.graph.store"] in found
