"""The one versioned query cache folder (.nervapack/cache/v1): used, keyed, best effort."""

from __future__ import annotations

import os

from nervapack_core.code.retrieval.cache import CACHE_VERSION, CacheDir, FileTokenCache
from nervapack_core.code.retrieval.retriever import Retriever, answer


def test_query_caches_live_in_the_versioned_folder(shop_repo):
    r = Retriever(shop_repo, use_vectors=False)
    try:
        res = answer(r, "how is the invoice rendered", budget=600)
        assert res.naive_tokens > 0
    finally:
        r.close()
    nerva = shop_repo / ".nervapack"
    assert (nerva / "cache" / f"v{CACHE_VERSION}" / "file_tokens.json").is_file()
    assert not (nerva / "file_tokens.json").exists()  # no ad-hoc cache files beside graph.db


def test_file_token_counts_are_keyed_by_size_and_mtime(tmp_path):
    (tmp_path / "a.py").write_text("x = 1\n")
    cache = CacheDir(tmp_path / ".nervapack")
    counts = FileTokenCache(cache, tmp_path)
    first = counts.count("a.py")
    counts.save()
    again = FileTokenCache(cache, tmp_path)
    assert again.count("a.py") == first and not again._dirty  # read back from disk, not recounted
    (tmp_path / "a.py").write_text("x = 1\ny = [1, 2, 3, 4, 5, 6]\n")
    os.utime(tmp_path / "a.py", ns=(1, 10**18))
    assert again.count("a.py") > first
    assert again.count("missing.py") == 0


def test_cache_writes_are_skipped_when_the_folder_cannot_be_written(tmp_path):
    blocker = tmp_path / ".nervapack"
    blocker.write_text("a file where the folder should be")  # mkdir fails even for root
    cache = CacheDir(blocker)
    assert cache.write_json("x.json", {"a": 1}) is False
    assert cache.read_json("x.json") is None
    (tmp_path / "a.py").write_text("x = 1\n")
    counts = FileTokenCache(cache, tmp_path)
    assert counts.count("a.py") > 0
    counts.save()  # silently skipped
