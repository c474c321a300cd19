"""The workspace's ChromaDB collection of node embeddings (``.nervapack/chroma/``).

Our embedder is registered with Chroma under its own name (``@register_embedding_function``)
so that any process opening the collection gets it back instead of Chroma's default,
which would download a model. Telemetry is off.
"""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from .embeddings import load_embedder

__all__ = ["VectorIndex", "COLLECTION"]

COLLECTION = "nervapack_code"  # Chroma needs >= 3 characters
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")


def _embedding_function_class():
    from chromadb.api.types import EmbeddingFunction
    from chromadb.utils.embedding_functions import register_embedding_function

    @register_embedding_function
    class NervapackEmbeddingFunction(EmbeddingFunction):
        def __init__(self, kind: str = "minilm"):
            self.kind = kind
            self.embedder, self.warning = load_embedder(kind)

        def __call__(self, input):
            return [row for row in self.embedder.embed(list(input))]

        @staticmethod
        def name() -> str:
            return "nervapack"

        def get_config(self):
            return {"kind": self.kind}

        @staticmethod
        def build_from_config(config):
            return NervapackEmbeddingFunction(config.get("kind", "minilm"))

        def default_space(self):
            return "cosine"

    return NervapackEmbeddingFunction


_EF_CLASS = None


@contextmanager
def _exclusive(lock_path: Path) -> Iterator[None]:
    """An exclusive ``flock`` on ``lock_path`` for the block (none when it cannot be made)."""
    try:
        fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError:  # read-only folder: nobody can be creating the store there
        yield
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing releases the lock


class VectorIndex:
    def __init__(self, path: str | os.PathLike, embedder: str = "minilm"):
        global _EF_CLASS
        import chromadb
        from chromadb.config import Settings

        if _EF_CLASS is None:
            _EF_CLASS = _embedding_function_class()
        self.path = Path(path)
        self.ef = _EF_CLASS(embedder)
        self.warning = self.ef.warning
        # Two processes creating the store at once make Chroma's own migrations collide
        # ("table collections already exists"): opening is serialised on a lock file
        # beside the store. A read-only workspace cannot hold the lock, and needs none.
        with _exclusive(self.path.with_name(self.path.name + ".lock")):
            self._open(chromadb, Settings)

    def _open(self, chromadb, Settings) -> None:
        self.client = chromadb.PersistentClient(
            path=str(self.path), settings=Settings(anonymized_telemetry=False, allow_reset=True)
        )
        self.collection = self.client.get_or_create_collection(
            COLLECTION, embedding_function=self.ef, metadata={"hnsw:space": "cosine"}
        )

    @property
    def embedder_name(self) -> str:
        return self.ef.embedder.name

    def count(self) -> int:
        return self.collection.count()

    def ids(self) -> set[str]:
        return set(self.collection.get(include=[])["ids"])

    def documents(self, ids: list[str], batch: int = 5000) -> dict[str, str]:
        """The text each id was embedded from."""
        out: dict[str, str] = {}
        for start in range(0, len(ids), batch):
            got = self.collection.get(ids=ids[start: start + batch], include=["documents"])
            out.update(zip(got["ids"], got["documents"]))
        return out

    def upsert(self, ids: list[str], texts: list[str], metadatas: list[dict], batch: int = 2000) -> None:
        for start in range(0, len(ids), batch):
            chunk = slice(start, start + batch)
            vectors = self.ef.embedder.embed(texts[chunk])
            self.collection.upsert(ids=ids[chunk], embeddings=vectors, documents=texts[chunk],
                                   metadatas=metadatas[chunk])

    def delete(self, ids: list[str], batch: int = 5000) -> None:
        for start in range(0, len(ids), batch):
            self.collection.delete(ids=ids[start: start + batch])

    def query(self, text: str, n: int = 20) -> list[tuple[str, float]]:
        """``[(node id, cosine distance)]`` nearest first."""
        total = self.collection.count()
        if not total or not text.strip():
            return []
        vector = self.ef.embedder.embed([text])
        res = self.collection.query(query_embeddings=vector, n_results=min(n, total), include=["distances"])
        return list(zip(res["ids"][0], res["distances"][0]))
