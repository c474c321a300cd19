"""The embedding step of an ingest: bring the vector collection in line with the graph.

What must change is recorded in ``pending_embeddings`` by :func:`record_pending` in the
graph's own write transaction; :func:`embed_pending` works through it (and reconciles by
id as well) and clears each entry once its vector is stored, so a kill at any point is
caught up by the next ingest.
"""

from __future__ import annotations

import os
import time

from ... import storage
from ...errors import NervapackError, brief
from ...faults import fault_point
from ...text import identifier_terms
from ..graph.kinds import EMBEDDED_KINDS, sql_list

__all__ = ["EMBED_FAILURE", "EMBEDDED_WHERE", "EMBEDDING_TEXT_VERSION", "record_pending", "embed_pending",
           "clear_pending", "embedding_text", "embedding_text_outdated"]

# what embedding_text makes of a node, versioned: change it with the text, and the next ingest of a
# graph embedded from another version compares every stored text and embeds again those that changed
# (even when no file changed); graphs without the meta key were embedded from version "1"
EMBEDDING_TEXT_VERSION = "1"

# Test code stays in the graph and in full-text search, but is not embedded: it is most
# of a large repository's definitions (Django: 28k of 41k) and rarely what a question
# about behaviour is after, while embedding is the slowest phase of an ingest.
# The test-path rule is text.is_test_path, registered on the graph connection by GraphStore.
EMBEDDED_WHERE = f"kind IN {sql_list(EMBEDDED_KINDS)} AND NOT (kind != 'doc' AND is_test_path(file))"


def record_pending(conn, embed_ids: set[str], removed_ids: set[str]) -> None:
    """Note, in the graph's write transaction, which vectors must be (re)written or deleted.

    Embeddable nodes written now are 'upsert'; nodes that left the graph are 'delete'. A
    later change of the same node replaces its earlier entry.
    """
    for chunk in storage.chunked(sorted(embed_ids)):
        conn.execute(
            "INSERT OR REPLACE INTO pending_embeddings (node_id, action) SELECT id, 'upsert' FROM nodes"
            f" WHERE id IN ({','.join('?' * len(chunk))}) AND {EMBEDDED_WHERE}", chunk)
    gone = removed_ids - embed_ids
    conn.executemany("INSERT OR REPLACE INTO pending_embeddings (node_id, action) VALUES (?, 'delete')",
                     [(i,) for i in sorted(gone)])


EMBED_FAILURE = "embed_failure"  # meta: why the last embedding step stopped ({at, reason}); cleared when one completes


def embed_pending(store, workspace, report, embedder, progress, *, rebuild: bool = False) -> None:
    """:func:`_embed_pending`, noting in the graph's meta why it stopped when it fails (a server that went
    down, a damaged model): ``status`` then says why vectors are missing or pending, never "ingested with
    --no-embed". The failure is raised as it was."""
    try:
        _embed_pending(store, workspace, report, embedder, progress, rebuild=rebuild)
    except Exception as exc:
        reason = str(exc) if isinstance(exc, NervapackError) else f"{type(exc).__name__}: {exc}"
        try:
            with store.transaction():
                store.set_meta(EMBED_FAILURE, {"at": storage.utc_now(), "reason": brief(reason, 500)})
        except Exception:  # the graph itself failing: the original error is the one to tell
            pass
        raise
    if store.get_meta(EMBED_FAILURE) is not None:
        with store.transaction():
            store.set_meta(EMBED_FAILURE, None)


def _embed_pending(store, workspace, report, embedder, progress, *, rebuild: bool = False) -> None:
    """Bring the workspace's vector collection (``vectors.open_index``) in line with the graph.

    Works from ``pending_embeddings`` (written with the graph change) and reconciles by id
    as well: nodes missing from the collection (a first run, another model) are embedded,
    pending nodes are embedded again when their text changed, and vectors of nodes gone
    from the graph are deleted. Pending entries are cleared as their vectors are stored,
    so a kill part-way leaves the rest for the next ingest. When the graph's vectors were
    last written to another store (the embedded one before a server was configured, or
    back), every text is compared, since changes made meanwhile went to the other store.
    """
    from .collection import LOCAL, VectorIndex, VectorStoreDamaged, vector_store
    from .embeddings import release_freed_memory

    where = vector_store(workspace)
    try:
        index = VectorIndex(where, embedder)
    except VectorStoreDamaged:
        if not rebuild or where.path is None:
            raise
        # a rebuild embeds everything anyway: the damaged folder is kept aside (never deleted) and a new one made
        aside = where.path.with_name(f"{where.path.name}.damaged-{time.strftime('%Y%m%dT%H%M%S')}-{os.getpid()}")
        os.replace(where.path, aside)
        report.warnings.append(f"the damaged vector store was moved to {aside}; the vectors were embedded again")
        index = VectorIndex(where, embedder)
    if index.warning:
        report.warnings.append(index.warning)
    report.embedder = index.embedder_name
    report.vectors_at = where.key
    conn = store.conn
    pending: dict[str, str] = dict(conn.execute("SELECT node_id, action FROM pending_embeddings"))
    present = index.ids()
    moved = (store.get_meta("vectors_at") or LOCAL) != where.key
    if store.get_meta("embedder") != index.embedder_name and present:
        index.delete(sorted(present))  # vectors of another model are not comparable
        _note_vectors_written(store)
        present = set()
    expected = {r[0] for r in conn.execute(f"SELECT id FROM nodes WHERE {EMBEDDED_WHERE}")}
    stale = sorted(present - expected)
    if stale:
        index.delete(stale)
        _note_vectors_written(store)
    clear_pending(store, [i for i, action in pending.items() if action == "delete" or i not in expected])
    changed_ids = {i for i, action in pending.items() if action == "upsert"} & expected
    if moved or embedding_text_outdated(store):  # every stored text is compared below
        changed_ids = expected
    ids = sorted((expected - present) | changed_ids)
    rows = []
    for chunk in storage.chunked(ids):
        rows.extend(conn.execute(
            "SELECT id, kind, name, qualified_name, file, signature, docstring, text FROM nodes"
            f" WHERE id IN ({','.join('?' * len(chunk))})", chunk))
    rows.sort(key=lambda r: r["id"])
    # a re-parsed file keeps most of its nodes as they were: embed only changed texts
    kept = sorted(changed_ids & present)
    if kept:
        stored = index.documents(kept)
        unchanged = {r["id"] for r in rows if stored.get(r["id"]) == embedding_text(r)}
        rows = [r for r in rows if r["id"] not in unchanged]
        clear_pending(store, sorted(unchanged & set(pending)))
    total, step = len(rows), 512
    index.plan(total)
    progress("embed", 0, total)
    for start in range(0, total, step):
        part = rows[start: start + step]
        index.upsert([r["id"] for r in part], [embedding_text(r) for r in part],
                     [{"kind": r["kind"], "file": r["file"]} for r in part])
        clear_pending(store, [r["id"] for r in part], vectors_written=True)
        fault_point("embed-batch")
        if (start // step) % 4 == 3:
            release_freed_memory(collect=False)
        progress("embed", start + len(part), total)
    report.embedded = total
    with store.transaction():
        store.set_meta("embedder", index.embedder_name)
        store.set_meta("embedding_text", EMBEDDING_TEXT_VERSION)
        store.set_meta("vectors_at", where.key)  # where the graph's vectors are, for query and the next ingest
        store.set_meta("embedder_requested", embedder)  # lets a no-change re-ingest skip loading Chroma


def embedding_text_outdated(store) -> bool:
    """Whether the graph's vectors were embedded from another version of :func:`embedding_text`."""
    return (store.get_meta("embedding_text") or "1") != EMBEDDING_TEXT_VERSION


def _note_vectors_written(store) -> None:
    with store.transaction():
        _bump_vectors_version(store)


def _bump_vectors_version(store) -> None:
    """Changes with every write to the vector store: part of the key of the retriever's local
    copy of a server's vectors (an embedded store's files show the change by themselves)."""
    store.set_meta("vectors_version", str(time.time_ns()))


def clear_pending(store, ids: list[str], *, vectors_written: bool = False) -> None:
    """Forget the pending entries of vectors now stored (or no longer needed); with
    ``vectors_written``, note in the same transaction that the vector store changed."""
    if not ids:
        return
    with store.transaction() as conn:
        if vectors_written:
            _bump_vectors_version(store)
        for chunk in storage.chunked(ids):
            conn.execute(f"DELETE FROM pending_embeddings WHERE node_id IN ({','.join('?' * len(chunk))})", chunk)


def embedding_text(row) -> str:
    """What a node is embedded as: its name, where it lives, its header and the gist of its doc
    (a change here goes with a new :data:`EMBEDDING_TEXT_VERSION`, or existing indexes keep the old texts)."""
    if row["kind"] == "doc":
        return f"{row['qualified_name']} ({row['file']}): {row['text'][:400]}"
    doc = (row["docstring"] or "").split("\n\n")[0][:300]
    words = " ".join(identifier_terms(row["qualified_name"]).split()[1:]) if row["qualified_name"] else ""
    return f"{row['qualified_name']} {words} — {row['signature']} — {doc} ({row['file']})"
