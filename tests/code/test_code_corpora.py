"""Entity counts on the public corpora agree with independent parsers within 1%.

Needs the corpora of ``../shared/corpora/fetch.sh`` (``.ci/run`` fetches the small
set into the folder named by ``NERVAPACK_CORPORA``) and, for TypeScript, the
TypeScript compiler in ``benchmarks/node_modules`` (``npm install`` there).
"""

from __future__ import annotations

import importlib.util
import os
import shutil
from pathlib import Path

import pytest

from nervapack_core.code.ingest.pipeline import ingest

ROOT = Path(__file__).resolve().parents[2]
CORPORA = Path(os.environ.get("NERVAPACK_CORPORA", "/work/corpora"))


def _count_check():
    spec = importlib.util.spec_from_file_location("count_check", ROOT / "benchmarks" / "count_check.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow
@pytest.mark.parametrize("corpus", ["requests", "query-core"])
def test_counts_match_independent_parser(corpus, tmp_path):
    source = CORPORA / corpus
    if not source.is_dir():
        pytest.skip(f"corpus {corpus} not fetched (set NERVAPACK_CORPORA; see ../shared/corpora/fetch.sh)")
    if corpus == "query-core" and not (ROOT / "benchmarks" / "node_modules" / "typescript").is_dir():
        pytest.skip("TypeScript compiler not installed in benchmarks/ (npm install)")
    copy = tmp_path / corpus
    shutil.copytree(source, copy, symlinks=True, ignore=shutil.ignore_patterns(".nervapack"))
    ingest(copy, embed=False)
    rows = _count_check().compare(copy)
    assert {r["kind"] for r in rows} == {"class", "function"}
    for r in rows:
        assert r["independent"] > 50
        assert r["diff_pct"] <= 1.0, r
