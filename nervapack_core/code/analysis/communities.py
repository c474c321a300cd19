"""Louvain communities of the code graph, computed once per ingest and stored in ``graph.db``
(with the health snapshot: :func:`refresh_snapshots`); after a small change only the new nodes
are placed, so communities keep their numbers.
"""

from __future__ import annotations

import json
from collections import Counter

from ...storage import in_chunks, utc_now
from ..graph.confidence import is_guess
from ..graph.kinds import COMMUNITY_KINDS, sql_list
from .health import health

__all__ = ["communities", "refresh_snapshots", "LOUVAIN_SEED"]

LOUVAIN_SEED = 42


def communities(conn) -> dict[str, int]:
    return dict(conn.execute("SELECT node_id, community FROM communities"))


INCREMENTAL_COMMUNITIES_MAX_SHARE = 0.02  # above this share of changed files, run Louvain again
_COMMUNITY_WEIGHTS = {"DEFINES": 1.0, "CALLS": 1.0, "IMPORTS": 0.5, "INHERITS": 1.0}


_COMMUNITY_KINDS = sql_list(COMMUNITY_KINDS)


def refresh_snapshots(store, changed_share: float | None = None,
                      touched: tuple[set[str], set[str]] | None = None, *, own_transaction: bool = True) -> None:
    """Store Louvain communities and the health snapshot.

    After a small change (at most 2% of the files, ``changed_share``) the stored
    communities are kept and only new nodes are placed, each in the community most of
    its neighbours belong to: Louvain over a large graph takes seconds (12 s on Django),
    and re-running it for one edited function would also renumber every community.
    Only the rows that change are written then (a sync of one file touches a few rows,
    not the 40,000 of Django). ``touched`` = (node ids inserted, node ids deleted) by the
    update, when the caller knows them: only those are looked at then.
    ``own_transaction=False``: the caller's write transaction is open (the ingest's graph write,
    so the graph never commits without its communities and health).
    """
    conn = store.conn
    stored = conn.execute("SELECT EXISTS (SELECT 1 FROM communities)").fetchone()[0]
    incremental = stored and changed_share is not None and changed_share <= INCREMENTAL_COMMUNITIES_MAX_SHARE
    if incremental and touched is not None:
        inserted, deleted = touched
        new = sorted(r[0] for r in in_chunks(
            conn, f"SELECT id FROM nodes WHERE kind IN {_COMMUNITY_KINDS} AND id IN ({{marks}})"
            " AND id NOT IN (SELECT node_id FROM communities)", sorted(inserted)))
        gone = sorted(deleted - inserted)
    elif incremental:
        new = [r[0] for r in conn.execute(
            f"SELECT id FROM nodes WHERE kind IN {_COMMUNITY_KINDS}"
            " AND id NOT IN (SELECT node_id FROM communities) ORDER BY id")]
    else:
        present = {r[0] for r in conn.execute(f"SELECT id FROM nodes WHERE kind IN {_COMMUNITY_KINDS}")}
        assignment = _louvain(conn, present)
    snapshot = health(conn, root=None)
    if own_transaction:
        conn.execute("BEGIN IMMEDIATE")
    try:
        if incremental and touched is not None:
            in_chunks(conn, "DELETE FROM communities WHERE node_id IN ({marks})", gone)
            conn.executemany("INSERT INTO communities VALUES (?, ?)", sorted(_place_new_nodes(conn, new).items()))
        elif incremental:
            conn.execute(f"DELETE FROM communities WHERE node_id NOT IN"
                         f" (SELECT id FROM nodes WHERE kind IN {_COMMUNITY_KINDS})")
            conn.executemany("INSERT INTO communities VALUES (?, ?)", sorted(_place_new_nodes(conn, new).items()))
        else:
            conn.execute("DELETE FROM communities")
            conn.executemany("INSERT INTO communities VALUES (?, ?)", sorted(assignment.items()))
        store.set_meta("health_snapshot", {"at": utc_now(), **snapshot.as_dict(),
                                           "doc_coverage": snapshot.doc_coverage})
        # kept per ingest too, so the score's trend (and a delta) can be shown
        conn.execute("UPDATE ingest_runs SET summary = ? WHERE id = (SELECT max(id) FROM ingest_runs)",
                     (json.dumps({"health": snapshot.score}),))
        if own_transaction:
            conn.execute("COMMIT")
    except BaseException:
        if own_transaction:
            conn.execute("ROLLBACK")
        raise


def _louvain(conn, present: set[str]) -> dict[str, int]:
    """Louvain (python-louvain, fixed seed) over files, classes and functions (calls guessed
    from a name alone left out); communities numbered by size, 0 the largest."""
    import community as community_louvain
    import networkx as nx

    g = nx.Graph()
    g.add_nodes_from(sorted(present))
    for s, t, kind, conf in conn.execute("SELECT source, target, kind, confidence FROM edges"):
        if kind in _COMMUNITY_WEIGHTS and s in present and t in present and s != t and not is_guess(kind, conf):
            w = _COMMUNITY_WEIGHTS[kind] * (conf or 1.0)
            if g.has_edge(s, t):
                g[s][t]["weight"] += w
            else:
                g.add_edge(s, t, weight=w)
    if not g.number_of_edges():
        return {}
    partition = community_louvain.best_partition(g, weight="weight", random_state=LOUVAIN_SEED)
    sizes = Counter(partition.values())
    order = {c: i for i, (c, _) in enumerate(sorted(sizes.items(), key=lambda kv: (-kv[1], kv[0])))}
    return {n: order[c] for n, c in partition.items()}


def _place_new_nodes(conn, new: list[str]) -> dict[str, int]:
    """Give each new node (inside the caller's transaction, after the communities of nodes
    gone were deleted) its neighbours' majority community (weighted, ties to the smaller
    id), or a community of its own when none is placed. Returns the new assignments."""
    from ...storage import chunked

    neighbours: dict[str, list[tuple[str, float]]] = {n: [] for n in new}
    for chunk in chunked(new, 400):
        marks = ",".join("?" * len(chunk))
        for s, t, kind, conf in conn.execute(
                f"SELECT source, target, kind, confidence FROM edges WHERE source IN ({marks})"
                f" UNION SELECT source, target, kind, confidence FROM edges WHERE target IN ({marks})", chunk + chunk):
            w = _COMMUNITY_WEIGHTS.get(kind, 0.0) * (conf or 1.0)
            if w and s != t and not is_guess(kind, conf):
                if s in neighbours:
                    neighbours[s].append((t, w))
                if t in neighbours:
                    neighbours[t].append((s, w))
    others = {o for links in neighbours.values() for o, _ in links}
    assignment: dict[str, int] = {r[0]: r[1] for r in in_chunks(
        conn, "SELECT node_id, community FROM communities WHERE node_id IN ({marks})", sorted(others))}
    pending = list(new)
    while pending:  # new nodes next to other new nodes are placed in later passes
        placed_any, left = False, []
        for n in pending:
            votes: dict[int, float] = {}
            for other, w in neighbours[n]:
                if other in assignment:
                    votes[assignment[other]] = votes.get(assignment[other], 0) + w
            if votes:
                assignment[n] = min(votes, key=lambda c: (-votes[c], c))
                placed_any = True
            else:
                left.append(n)
        if not placed_any:
            highest = conn.execute("SELECT max(community) FROM communities").fetchone()[0]
            next_id = max([*assignment.values(), -1 if highest is None else highest]) + 1
            for n in left:
                assignment[n], next_id = next_id, next_id + 1
            break
        pending = left
    return {n: assignment[n] for n in new}
