"""Promise: a damaged prepared model (the optimised copy of MiniLM in the user cache) never makes the vectors.

- Bytes flipped in its weights (same size, values still finite): the next process to load it sees that its
  file changed, hashes it against the sha256 recorded when it was made, makes it again from the shipped model
  and says so once; the vectors stored are those of a clean run. ``doctor`` names the damaged copy. Before,
  only the size of the weights file was checked: the damaged copy was used, its wrong vectors stored, and the
  doctor said "All good".
- A copy giving NaN whose damage its checks cannot see (its sha256 record matches the damaged files): the
  batch is refused with a one-line error naming the model file and the fix, nothing non-finite is stored,
  the copy is removed and the next sync makes it again. Before, ``sync`` died with a traceback.

Real CLI processes, each with the test's own per-user cache (``XDG_CACHE_HOME``), and the real model."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np

CHANGED_TAX = ('"""Tax rules."""\n\n\ndef compute_tax(amount):\n    """The tax on an amount."""\n'
               "    return amount * 0.25\n\n\ndef total(amount):\n    return amount + compute_tax(amount)\n\n\n"
               "def refund(amount):\n    \"\"\"Money given back to the customer.\"\"\"\n    return -amount\n")


def _run(rel, cache: Path, *args: str):
    return rel.run_cli(*args, XDG_CACHE_HOME=str(cache), timeout=300)


def _ok(done) -> dict:
    assert done.returncode == 0 and rel_no_traceback(done), (done.stdout[-2000:], done.stderr[-2000:])
    return json.loads(done.stdout)


def rel_no_traceback(done) -> bool:
    return b"Traceback" not in done.stdout + done.stderr


def _entry(cache: Path) -> Path:
    (entry,) = (cache / "nervapack" / "onnx").glob("minilm-*")
    return entry


def _vectors(repo: Path) -> dict[str, np.ndarray]:
    """The stored vectors by node id, read from the workspace's Chroma store (no model loaded)."""
    from chromadb.api.client import SharedSystemClient

    from nervapack_core.code.vectors.collection import VectorIndex

    SharedSystemClient.clear_system_cache()  # read what the CLI processes wrote, not a cached client's view
    got = VectorIndex(repo / ".nervapack" / "chroma", "hashing").collection.get(include=["embeddings"])
    return {i: np.asarray(v, dtype=np.float32) for i, v in zip(got["ids"], got["embeddings"], strict=True)}


def _rewrite_floats(path: Path, change) -> None:
    """Apply ``change`` to 256 K float32 weights at 90% of ``path`` (its size kept): weights of the last layers,
    which every text goes through (the middle of the file is the table of word vectors, mostly unused here)."""
    size = path.stat().st_size
    start = (size * 9 // 10) // 4 * 4
    with open(path, "r+b") as fh:
        fh.seek(start)
        floats = np.frombuffer(fh.read(1 << 20), dtype=np.uint32).copy()
        fh.seek(start)
        fh.write(change(floats).tobytes())
    assert path.stat().st_size == size


def _model_check(rel, cache: Path, root: Path) -> dict:
    done = _run(rel, cache, "doctor", "--json", "--path", str(root))
    assert rel_no_traceback(done), done.stderr
    data = json.loads(done.stdout)
    (check,) = [c for c in data["checks"] if c["name"] == "embedding model"]
    assert done.returncode == (0 if data["ok"] else 1)  # the doctor exits 1 when a check is an error
    return check


def test_a_damaged_prepared_model_is_made_again_and_the_vectors_are_a_clean_runs(tmp_path, rel):
    damaged_cache, clean_cache = tmp_path / "cache-damaged", tmp_path / "cache-clean"
    damaged, clean = rel.make_repo(tmp_path / "damaged"), rel.make_repo(tmp_path / "clean")
    for repo, cache in ((damaged, damaged_cache), (clean, clean_cache)):
        _ok(_run(rel, cache, "ingest", str(repo), "--json"))
    entry = _entry(damaged_cache)
    # the top mantissa bit of each weight flipped: every value off by up to a half, all still finite
    _rewrite_floats(entry / "model.data", lambda w: w ^ np.uint32(1 << 22))

    check = _model_check(rel, damaged_cache, damaged)
    assert check["status"] == "error" and str(entry) in check["detail"] and "model.data" in check["detail"], check
    assert check["fix"] and str(entry) in check["fix"]

    reports = {}
    for repo, cache in ((damaged, damaged_cache), (clean, clean_cache)):
        (repo / "shop" / "tax.py").write_text(CHANGED_TAX, encoding="utf-8")
        reports[repo] = _ok(_run(rel, cache, "sync", str(repo), "--json"))
    said = [w for w in reports[damaged]["warnings"] if "prepared copy of the embedding model" in w]
    assert len(said) == 1 and "was damaged" in said[0] and "made again from the shipped model" in said[0], said
    assert not [w for w in reports[clean]["warnings"] if "prepared copy" in w]
    assert reports[damaged]["embedded"] == reports[clean]["embedded"] > 0

    got, expected = _vectors(damaged), _vectors(clean)
    assert sorted(got) == sorted(expected)
    for node, vector in expected.items():
        np.testing.assert_allclose(got[node], vector, atol=1e-6, rtol=0, err_msg=node)
    assert _model_check(rel, damaged_cache, damaged)["status"] == "ok"

    (damaged / "shop" / "cart.py").write_text('"""The cart."""\n\n\nclass Cart:\n    """A basket."""\n')
    again = _ok(_run(rel, damaged_cache, "sync", str(damaged), "--json"))
    assert not [w for w in again["warnings"] if "prepared copy" in w]  # said once


def test_a_model_giving_nan_is_refused_and_nothing_non_finite_is_stored(tmp_path, rel):
    cache = tmp_path / "cache"
    repo = rel.make_repo(tmp_path / "repo")
    _ok(_run(rel, cache, "ingest", str(repo), "--json"))
    before = _vectors(repo)
    entry = _entry(cache)
    _rewrite_floats(entry / "model.data", lambda w: np.full_like(w, 0x7FC00000))  # NaN weights
    # damage its checks cannot see: the copy's own record says these are the files it was made with
    record = {name: hashlib.sha256((entry / name).read_bytes()).hexdigest() for name in ("model.onnx", "model.data")}
    (entry / "sha256").write_text(json.dumps(record), encoding="utf-8")

    (repo / "shop" / "tax.py").write_text(CHANGED_TAX, encoding="utf-8")
    done = _run(rel, cache, "sync", str(repo), "--json")
    lines = done.stderr.decode().strip().splitlines()
    assert done.returncode == 1 and rel_no_traceback(done) and len(lines) == 1, (done.stdout, done.stderr)
    assert lines[0].startswith(f"Error: The embedding model {entry / 'model.onnx'} gave vectors that are not numbers")
    assert "none is stored" in lines[0] and "run the command again" in lines[0]

    stored = _vectors(repo)
    assert all(np.isfinite(v).all() for v in stored.values())
    assert sorted(stored) == sorted(before)  # nothing of the refused batch was written
    vectors = _ok(_run(rel, cache, "status", "--json", "--path", str(repo)))["vectors"]
    assert vectors["state"] == "pending" and vectors["pending"] > 0 and "not numbers" in vectors["detail"], vectors

    report = _ok(_run(rel, cache, "sync", str(repo), "--json"))  # the copy was removed: made again, and used
    assert report["embedded"] > 0
    stored = _vectors(repo)
    assert all(np.isfinite(v).all() and abs(np.linalg.norm(v) - 1) < 1e-3 for v in stored.values())
    assert len(stored) > len(before)  # refund() is embedded now
    assert _ok(_run(rel, cache, "status", "--json", "--path", str(repo)))["vectors"]["state"] == "ok"
