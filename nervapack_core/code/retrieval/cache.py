"""One versioned cache folder for query-time caches: ``.nervapack/cache/v1/``.

What the retriever keeps between processes lives here and nowhere else:

- ``file_tokens.json`` — cl100k token counts of whole files (the naive baseline of
  ``nervapack query``), keyed by path + size + mtime, like Aider's repo-map cache;
- ``vectors_snapshot.npz`` — a numpy copy of the Chroma collection, keyed by the
  embedder, the graph's change marker and the state of the vector store (the Chroma
  files, or for a Chroma server the graph's record of its last vector write), so a cold
  query needs no ``import chromadb`` nor a round trip to the server.

Bumping :data:`CACHE_VERSION` moves every cache to a new folder, so an old format is
never misread. Writes are best effort: on a read-only ``.nervapack/`` they are skipped
silently and the query still works (it only recomputes).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ...workspace import CACHE_DIR

__all__ = ["CACHE_VERSION", "CacheDir", "FileTokenCache", "VectorSnapshot", "SNAPSHOT_NAME", "TOKEN_CACHE_NAME"]

CACHE_VERSION = 1
SNAPSHOT_NAME = "vectors_snapshot.npz"
TOKEN_CACHE_NAME = "file_tokens.json"


class CacheDir:
    """``<workspace>/.nervapack/cache/v<CACHE_VERSION>/``: reads and best-effort atomic writes."""

    def __init__(self, nervapack_dir: str | os.PathLike[str]) -> None:
        self.dir = Path(nervapack_dir) / CACHE_DIR / f"v{CACHE_VERSION}"

    def path(self, name: str) -> Path:
        return self.dir / name

    def read_json(self, name: str) -> Any:
        """The cached JSON value, or ``None`` when absent or unreadable."""
        try:
            return json.loads(self.path(name).read_text(encoding="utf-8"))
        except (OSError, ValueError, RecursionError):
            return None

    def write(self, name: str, write_tmp: Callable[[Path], object], suffix: str = "") -> bool:
        """Write through ``write_tmp(tmp_path)`` then rename into place; False when the folder
        is not writable (a cache: the caller carries on without it)."""
        target = self.path(name)
        tmp = target.with_name(f"{target.name}.{os.getpid()}.tmp{suffix}")
        try:
            self.dir.mkdir(parents=True, exist_ok=True)
            write_tmp(tmp)
            os.replace(tmp, target)
            return True
        except OSError:
            try:
                tmp.unlink(missing_ok=True)
            except OSError:
                pass
            return False

    def write_json(self, name: str, value: Any) -> bool:
        return self.write(name, lambda tmp: tmp.write_text(json.dumps(value), encoding="utf-8"))


def _entry_ok(entry: Any) -> bool:
    """A cached count as ``count`` writes it: ``[size, mtime, tokens]``, numbers, tokens a whole number."""
    return (isinstance(entry, list) and len(entry) == 3
            and all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in entry)
            and isinstance(entry[2], int) and entry[2] >= 0)


class FileTokenCache:
    """Whole-file cl100k token counts, keyed by path, size and mtime (in memory and on disk)."""

    ENCODING = "cl100k_base"

    def __init__(self, cache: CacheDir, root: Path) -> None:
        self.cache = cache
        self.root = root
        self._counts: dict[str, list] | None = None
        self._dirty = False

    def _load(self) -> dict[str, list]:
        if self._counts is None:
            data = self.cache.read_json(TOKEN_CACHE_NAME)
            self._counts = {}
            files = data.get("files") if isinstance(data, dict) and data.get("encoding") == self.ENCODING else None
            if isinstance(files, dict):  # any other shape (hand-edited, another version) is rebuilt, not fatal
                self._counts = {k: v for k, v in files.items() if _entry_ok(v)}
        return self._counts

    def count(self, path: str) -> int:
        """Tokens of the workspace file ``path`` (0 when it cannot be read)."""
        from ...tokens import count_tokens
        from .source import inside_root

        full = inside_root(self.root, path)  # never measure a file outside the root (a symlink swapped in)
        if full is None:
            return 0
        try:
            st = os.stat(full)
        except OSError:
            return 0
        counts = self._load()
        entry = counts.get(path)
        if entry and entry[0] == st.st_size and entry[1] == st.st_mtime:
            return entry[2]
        try:
            text = full.read_bytes().decode("utf-8", errors="replace")
        except OSError:
            return 0
        n = count_tokens(text)
        counts[path] = [st.st_size, st.st_mtime, n]
        self._dirty = True
        return n

    def save(self) -> None:
        """Write new counts back (best effort)."""
        if self._dirty and self.cache.write_json(TOKEN_CACHE_NAME, {"encoding": self.ENCODING, "files": self._counts}):
            self._dirty = False


class VectorSnapshot:
    """A read-only copy of the Chroma collection's vectors in one ``.npz`` file, keyed on the
    ingest run and the Chroma database file, searched exactly (normalised dot product)."""

    def __init__(self, ids, matrix, kind: str):
        from ..vectors.embeddings import load_embedder

        self.ids = ids
        self.matrix = matrix
        self.embedder, self.warning = load_embedder(kind)

    @classmethod
    def load(cls, cache: CacheDir, key: str, kind: str):
        """The snapshot when it exists, matches ``key`` and holds one vector of our size per id, else ``None``."""
        import numpy as np

        from ..vectors.embeddings import DIMENSIONS

        path = cache.path(SNAPSHOT_NAME)
        if not path.exists():
            return None
        try:
            with np.load(path, allow_pickle=False) as data:
                if str(data["key"]) != key:
                    return None
                ids, matrix = list(data["ids"]), data["matrix"]
                if matrix.ndim != 2 or matrix.shape[0] != len(ids) or (ids and matrix.shape[1] != DIMENSIONS):
                    return None  # not a copy of this store (written by hand, or by a broken release): made again
                return cls(ids, matrix.astype(np.float32), kind)
        except Exception:
            return None

    @staticmethod
    def save(cache: CacheDir, key: str, index) -> bool:
        """Copy ``index`` (a ``VectorIndex``) into the cache; False when it cannot be written."""
        import numpy as np

        ids: list[str] = []
        parts = []
        total = index.count()
        for page_ids, embeddings in index.pages():  # paged: bounded memory on big collections
            ids.extend(page_ids)
            parts.append(np.asarray(embeddings, dtype=np.float16).reshape(len(page_ids), -1))
        if len(ids) != total:
            raise RuntimeError("the collection changed while it was copied")
        matrix = np.concatenate(parts) if parts else np.zeros((0, 384), np.float16)
        order = sorted(range(len(ids)), key=lambda i: ids[i])
        return cache.write(SNAPSHOT_NAME, lambda tmp: np.savez(
            tmp, key=np.array(key), ids=np.array([ids[i] for i in order]), matrix=matrix[order].astype(np.float16)),
            suffix=".npz")

    def query(self, text: str, n: int = 20) -> list[tuple[str, float]]:
        return self.query_many([text], n)[0]

    def query_many(self, texts: list[str], n: int = 20) -> list[list[tuple[str, float]]]:
        """``[(node id, cosine distance)]`` nearest first, for each of ``texts`` (embedded in one batch)."""
        import numpy as np

        out: list[list[tuple[str, float]]] = [[] for _ in texts]
        todo = [i for i, t in enumerate(texts) if t.strip()]
        if not self.ids or not todo:
            return out
        queries = self.embedder.embed([texts[i] for i in todo]).astype(np.float32)
        n = min(n, len(self.ids))
        for row, i in enumerate(todo):
            sims = self.matrix @ queries[row]
            nearest = np.argpartition(-sims, n - 1)[:n]
            top = sorted(nearest, key=lambda j: (-float(sims[j]), self.ids[j]))
            out[i] = [(self.ids[j], float(1.0 - sims[j])) for j in top]
        return out
