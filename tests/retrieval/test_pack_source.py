"""The packer takes ranked nodes and a SourceReader: no call back into the retriever, no
import of it, and the shared budget rule."""

from __future__ import annotations

import subprocess
import sys

import pytest

from nervapack_core.code.retrieval.pack import pack
from nervapack_core.code.retrieval.source import SourceReader
from nervapack_core.errors import NervapackError


def test_pack_does_not_import_the_retriever():
    code = ("import sys, nervapack_core.code.retrieval.pack; "
            "print('nervapack_core.code.retrieval.retriever' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_pack_reads_through_a_source_reader_built_from_the_graph(shop_retriever):
    found = shop_retriever.retrieve("Cart")
    source = SourceReader(shop_retriever.graph, shop_retriever.root)  # no retriever involved
    packed = pack(found.nodes, 500, source, prompt="Cart")
    assert packed.markdown == pack(found.nodes, 500, shop_retriever.source, prompt="Cart").markdown
    assert packed.tokens <= 500 and "class Cart" in packed.markdown


@pytest.mark.parametrize("budget", [2.7, True, 0, "many", float("inf")])
def test_pack_rejects_a_budget_that_is_not_a_whole_number(shop_retriever, budget):
    with pytest.raises(NervapackError, match="budget"):
        pack([], budget, shop_retriever.source)
