"""The workspace's ChromaDB collection of node embeddings, embedded or on a Chroma server.

Where the vectors live is decided in one place, :func:`vector_store` (no chromadb import),
and opened in one place, :func:`open_index`; ingest, sync and query all go through them:

- by default, Chroma's embedded store (``PersistentClient``) at ``.nervapack/chroma/``,
  collection ``nervapack_code``;
- when ``$NERVAPACK_CHROMA_URL`` or ``[vectors] url`` in ``.nervapack/config.toml`` names a
  server (``http://127.0.0.1:8000``; the variable wins), a Chroma server (``HttpClient``),
  collection ``nervapack_code_<16 hex digits of sha1("<host name>:<workspace root>")>``, so
  that the workspaces of many people and machines can share one server without meeting.

The layout is the same in both: one record per embedded node, id = node id, document =
the text it was embedded from, metadata ``{kind, file}``, cosine space. Which store holds
a graph's vectors is recorded in its ``meta`` (``vectors_at``), so moving from one to the
other is noticed and caught up by the next ingest.

Our embedder is registered with Chroma under its own name (``@register_embedding_function``)
so that any process opening the collection gets it back instead of Chroma's default,
which would download a model. Telemetry is off in both modes.
"""

from __future__ import annotations

import fcntl
import os
import re
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from ...errors import NervapackError, VectorServerError, VectorStoreDamaged
from ...settings import setting
from ...storage import read_header
from ...workspace import Workspace

__all__ = ["VectorIndex", "VectorStore", "VectorServerError", "VectorStoreDamaged", "vector_store", "open_index",
           "server_collection", "store_name", "vector_state", "COLLECTION", "CHROMA_URL_ENV", "LOCAL"]

COLLECTION = "nervapack_code"  # Chroma needs >= 3 characters
CHROMA_URL_ENV = "NERVAPACK_CHROMA_URL"
LOCAL = "local"  # VectorStore.key of the embedded store (and what a graph without ``vectors_at`` used)
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")


SQLITE_HEADER = b"SQLite format 3\x00"


@dataclass(frozen=True)
class VectorStore:
    """Where a workspace's vectors live: ``path`` (embedded) or ``url`` (server), and the collection."""

    path: Path | None = None
    url: str | None = None
    collection: str = COLLECTION
    origin: str = ""  # what chose the server, for messages

    @property
    def key(self) -> str:
        """Names this store in the graph's ``meta`` (``vectors_at``)."""
        return LOCAL if self.url is None else f"{self.url}#{self.collection}"

    def describe(self) -> str:
        if self.url is None:
            return f"the embedded store {self.path}"
        return f"the Chroma server at {self.url} (collection {self.collection}, set by {self.origin})"

    def filled(self, recorded_at: str | None) -> bool:
        """Whether, without connecting to anything, the vectors are known to be here: the graph
        records this store as the one its vectors were written to, and (embedded) its folder
        exists. A server is never known without asking it, so an ingest reconciles with it."""
        if self.url is not None:
            return False
        return (recorded_at or LOCAL) == LOCAL and self.path is not None and self.path.is_dir() and not self.damage()

    def damage(self) -> str | None:
        """Why the embedded store's database file is plainly unusable (read from its first bytes, no
        chromadb import), or None. A server, or a store not created yet, is never called damaged here."""
        if self.path is None:
            return None
        db = self.path / "chroma.sqlite3"
        try:  # not open() and close(): that would drop the locks of this process's Chroma client on it
            head = read_header(db)[:len(SQLITE_HEADER)]
        except FileNotFoundError:
            return None
        except OSError as exc:
            return f"{db} cannot be read ({exc.strerror or exc})"
        if head != SQLITE_HEADER:
            return f"{db} is not a SQLite database" if head else f"{db} is empty (0 bytes)"
        return None

    def damaged_error(self, reason) -> VectorStoreDamaged:
        return VectorStoreDamaged(
            f"The vector store {self.path} is damaged ({reason}). Run `nervapack ingest --rebuild`: it moves the "
            "damaged folder aside and embeds the graph again (or restore a backup of .nervapack/chroma).")

    def check_reachable(self, timeout: float = 10.0) -> None:
        """Raise :class:`VectorServerError` unless the server answers its heartbeat (before an
        ingest parses anything; no chromadb import). The embedded store is always reachable."""
        if self.url is None:
            return
        import urllib.request  # here: ~20 ms of imports a query answered from the snapshot does not need

        try:
            with urllib.request.urlopen(f"{self.url}/api/v2/heartbeat", timeout=timeout) as response:
                response.read()
        except (OSError, ValueError) as exc:  # URLError, HTTPError, refused, timed out
            raise self.unreachable(getattr(exc, "reason", None) or exc) from None

    def unreachable(self, reason) -> VectorServerError:
        return VectorServerError(
            f"Cannot reach the Chroma server at {self.url} (set by {self.origin}): {str(reason).rstrip('.')}. "
            "Start one (`chroma run --path DIR --host 127.0.0.1 --port 8000`), correct the URL, "
            "or unset it to keep the vectors in .nervapack/chroma/.")


def store_name(key: str) -> str:
    """A ``VectorStore.key`` (as recorded in a graph's ``vectors_at``) in words."""
    if key == LOCAL:
        return "the embedded store (.nervapack/chroma/)"
    return f"the Chroma server {key.split('#')[0]}"


def server_collection(root: Path) -> str:
    """The collection of the workspace at ``root`` on a shared server: one per machine and folder."""
    import hashlib
    import socket

    digest = hashlib.sha1(f"{socket.gethostname()}:{Path(root).resolve()}".encode()).hexdigest()
    return f"{COLLECTION}_{digest[:16]}"


_HOST_NAME = re.compile(r"[A-Za-z0-9._-]+")  # a name or IPv4 address (an IPv6 one is checked by urlsplit)


def _server_url(value, origin: str) -> str:
    """``value`` as ``scheme://host:port`` (the port of the scheme when none is given); a value that is
    not an http(s) URL with a host and a port in 1-65535 is a one-line error naming ``origin``."""
    try:
        parts = urlsplit(value.strip()) if isinstance(value, str) else None
        port = parts.port if parts else None  # raises on a port that is not a number or is past 65535
    except ValueError:  # also "Invalid IPv6 URL" (``http://[::1``), raised by urlsplit itself
        parts, port = None, None
    if (parts is None or parts.scheme not in ("http", "https") or not parts.hostname or port == 0
            or not (":" in parts.hostname or _HOST_NAME.fullmatch(parts.hostname))
            or parts.path not in ("", "/") or parts.query or parts.fragment):
        raise NervapackError(f"{origin} must be the URL of a Chroma server: http or https, a host and a port in "
                             f"1-65535, such as http://127.0.0.1:8000 (got {value!r}).")
    host = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname
    return f"{parts.scheme}://{host}:{port or (443 if parts.scheme == 'https' else 80)}"


def vector_store(workspace: Workspace) -> VectorStore:
    """Where ``workspace``'s vectors live, from ``$NERVAPACK_CHROMA_URL`` or ``[vectors] url``."""
    url = setting(workspace, "vectors", "url")
    if url is None:
        return VectorStore(path=workspace.chroma_dir)
    return VectorStore(url=_server_url(url.value, url.origin), collection=server_collection(workspace.root),
                       origin=url.origin)


def vector_state(workspace: Workspace, embedder: str | None, recorded_at: str | None, *, pending: int = 0,
                 failure: dict | None = None) -> dict:
    """Whether vector search can work, from the graph's meta and the files (no chromadb import, no server
    round trip): ``{state: ok|none|failed|pending|missing|damaged|elsewhere|server, detail, fix, pending}``.

    ``pending``: the graph's changes not in the vector store yet (``pending_embeddings``); ``failure``: the
    meta ``embed_failure`` (``{at, reason}``) an embedding step that stopped left. Vectors are never "ok"
    while some wait, and a graph whose embedding failed is never said to be ingested with --no-embed."""
    state = _store_state(workspace, embedder, recorded_at, failure)
    if state["state"] in ("ok", "server") and (pending or failure):
        waiting = (f"{pending:,} change{'s' if pending != 1 else ''} of the graph wait to be embedded: vector search "
                   "misses them" if pending else "")
        failed = f"the last embedding step failed ({failure.get('reason')})" if failure else ""
        state = {"state": "pending", "detail": f"{state['detail']}; " + "; ".join(filter(None, (waiting, failed))),
                 "fix": "run `nervapack sync`" + (" once the cause is corrected" if failure else "")}
    return {**state, "pending": pending}


def _store_state(workspace: Workspace, embedder: str | None, recorded_at: str | None, failure: dict | None) -> dict:
    """:func:`vector_state` of the store alone: where the graph says its vectors are, and whether they are there."""
    if not embedder:
        if failure:
            return {"state": "failed", "detail": f"no vectors: the embedding step failed at {failure.get('at')} "
                    f"({failure.get('reason')})", "fix": "correct the cause, then run `nervapack ingest`"}
        return {"state": "none", "detail": "no vectors (ingested with --no-embed)", "fix": "run `nervapack ingest`"}
    try:
        where = vector_store(workspace)
    except NervapackError as exc:
        return {"state": "damaged", "detail": str(exc), "fix": "correct the vector store setting"}
    if (recorded_at or LOCAL) != where.key:
        return {"state": "elsewhere", "detail": f"vectors were written to {store_name(recorded_at or LOCAL)}, "
                f"{where.describe()} is configured now", "fix": "run `nervapack ingest`"}
    if where.path is None:
        return {"state": "server", "detail": f"{embedder} on {where.describe()}", "fix": None}
    if not where.path.exists():
        return {"state": "missing", "detail": f"the vector store {where.path} is missing (deleted?): vector search "
                "is off", "fix": "run `nervapack ingest` to embed the graph again"}
    damage = where.damage()
    if damage:
        return {"state": "damaged", "detail": f"the vector store is damaged ({damage}): vector search is off",
                "fix": "run `nervapack ingest --rebuild`"}
    return {"state": "ok", "detail": f"{embedder} in {where.path}", "fix": None}


def open_index(workspace: Workspace, embedder: str = "minilm") -> VectorIndex:
    """The workspace's vector index, wherever its settings put it."""
    return VectorIndex(vector_store(workspace), embedder)


def _embedding_function_class():
    from chromadb.api.types import EmbeddingFunction
    from chromadb.utils.embedding_functions import register_embedding_function

    from .embeddings import load_embedder

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
    """One workspace's collection: ``VectorIndex(vector_store(ws))``, or a folder for the embedded store."""

    collection: Any  # a chromadb Collection; its type hints reject the plain lists and dicts we pass

    def __init__(self, where: str | os.PathLike | VectorStore, embedder: str = "minilm"):
        global _EF_CLASS
        import chromadb
        from chromadb.config import Settings

        if _EF_CLASS is None:
            _EF_CLASS = _embedding_function_class()
        self.store = where if isinstance(where, VectorStore) else VectorStore(path=Path(where))
        self.ef = _EF_CLASS(embedder)
        self.warning = self.ef.warning
        settings = Settings(anonymized_telemetry=False, allow_reset=self.store.url is None)
        if self.store.url is None:
            path = Path(self.store.path or ".")
            # Two processes creating the store at once make Chroma's own migrations collide
            # ("table collections already exists"): opening is serialised on a lock file
            # beside the store. A read-only workspace cannot hold the lock, and needs none.
            with _exclusive(path.with_name(path.name + ".lock")):
                # checked under the lock: a process creating the store meanwhile leaves its database file
                # empty or headerless for a moment, which is not damage (2 of 9 rounds of 4 processes failed so)
                damage = self.store.damage()
                if damage:
                    raise self.store.damaged_error(damage)
                try:
                    self.client = chromadb.PersistentClient(path=str(path), settings=settings)
                    self._open_collection()
                except Exception as exc:  # chromadb's errors (InternalError, …) share no base we can name
                    if not (path / "chroma.sqlite3").exists():
                        raise
                    raise self.store.damaged_error(f"{type(exc).__name__}: {exc}") from None
        else:
            url = urlsplit(self.store.url)
            try:
                self.client = chromadb.HttpClient(host=url.hostname or "", port=url.port or 80,
                                                  ssl=url.scheme == "https", settings=settings)
            except Exception as exc:  # chromadb raises ValueError, httpx its own errors
                raise self.store.unreachable(exc) from None
            with self._server():
                self._open_collection()

    def _open_collection(self) -> None:
        self.collection = self.client.get_or_create_collection(
            self.store.collection, embedding_function=self.ef, metadata={"hnsw:space": "cosine"}
        )

    def _server(self):
        """Turns a failing server into a clear error naming it (the embedded store raises as it is)."""
        return nullcontext() if self.store.url is None else _server_errors(self.store)

    @property
    def embedder_name(self) -> str:
        return self.ef.embedder.name

    def count(self) -> int:
        with self._server():
            return self.collection.count()

    def ids(self) -> set[str]:
        with self._server():
            return set(self.collection.get(include=[])["ids"])

    def documents(self, ids: list[str], batch: int = 5000) -> dict[str, str]:
        """The text each id was embedded from."""
        out: dict[str, str] = {}
        with self._server():
            for start in range(0, len(ids), batch):
                got = self.collection.get(ids=ids[start: start + batch], include=["documents"])
                out.update(zip(got["ids"], got["documents"]))
        return out

    def plan(self, total: int) -> None:
        """Announce how many texts the coming upserts hold, so the embedder sizes itself to the work."""
        self.ef.embedder.plan(total)

    def upsert(self, ids: list[str], texts: list[str], metadatas: list[dict], batch: int = 2000) -> None:
        for start in range(0, len(ids), batch):
            chunk = slice(start, start + batch)
            vectors = self.ef.embedder.embed(texts[chunk])
            with self._server():
                self.collection.upsert(ids=ids[chunk], embeddings=vectors, documents=texts[chunk],
                                       metadatas=metadatas[chunk])

    def delete(self, ids: list[str], batch: int = 5000) -> None:
        with self._server():
            for start in range(0, len(ids), batch):
                self.collection.delete(ids=ids[start: start + batch])

    def query(self, text: str, n: int = 20) -> list[tuple[str, float]]:
        """``[(node id, cosine distance)]`` nearest first."""
        total = self.count()
        if not total or not text.strip():
            return []
        vector = self.ef.embedder.embed([text])
        with self._server():
            res = self.collection.query(query_embeddings=vector, n_results=min(n, total), include=["distances"])
        return list(zip(res["ids"][0], res["distances"][0]))

    def query_many(self, texts: list[str], n: int = 20) -> list[list[tuple[str, float]]]:
        """:meth:`query` for each of ``texts``."""
        return [self.query(t, n) for t in texts]

    def pages(self, size: int = 5000) -> Iterator[tuple[list[str], list]]:
        """``(ids, embeddings)`` of the whole collection, a page at a time (bounded memory)."""
        total = self.count()
        for offset in range(0, total, size):
            with self._server():
                got = self.collection.get(include=["embeddings"], limit=size, offset=offset)
            yield got["ids"], got["embeddings"]


@contextmanager
def _server_errors(store: VectorStore) -> Iterator[None]:
    try:
        yield
    except NervapackError:
        raise
    except Exception as exc:  # httpx and chromadb errors: the user needs the server named, not a traceback
        raise VectorServerError(f"The Chroma server at {store.url} failed ({type(exc).__name__}: {exc}).") from None
