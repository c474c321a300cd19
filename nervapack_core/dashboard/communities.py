"""Communities of the code graph for the dashboard: one summary per Louvain community (with
a label from its dominant folder), one community's members and their edges, and a
deterministic layout for drawing them. No Streamlit import; read-only SQLite."""

from __future__ import annotations

import math
from collections import Counter
from pathlib import Path

from .data import as_dicts, graph

__all__ = ["communities_overview", "community_detail", "community_treemap", "layout", "member_counts"]


def member_counts(graph_db: Path) -> list[tuple[int, str, str, int]]:
    """``(community, file, kind, nodes)`` for every community, file and node kind: the one
    pass over the communities that both the overview and the treemap read (give it to
    them as ``counts``: one scan instead of two)."""
    with graph(graph_db) as conn:
        return _member_counts(conn)


def _member_counts(conn) -> list[tuple[int, str, str, int]]:
    return [(int(c), f or "", k, int(n)) for c, f, k, n in conn.execute(
        "SELECT c.community, n.file, n.kind, count(*) FROM communities c JOIN nodes n ON n.id = c.node_id "
        "GROUP BY c.community, n.file, n.kind")]


def _community_labels(conn, counts: list | None = None) -> dict[int, dict]:
    """Per community: size, files, the folder most of its nodes live in, node kinds
    (``counts``: :func:`member_counts`, else read here)."""
    out: dict[int, dict] = {}
    for r in counts if counts is not None else _member_counts(conn):
        d = out.setdefault(r[0], {"community": r[0], "size": 0, "files": Counter(), "kinds": Counter()})
        d["size"] += r[3]
        d["files"][r[1]] += r[3]
        d["kinds"][r[2]] += r[3]
    for d in out.values():
        folders: Counter[str] = Counter()
        for f, k in d["files"].items():
            folders[f.rsplit("/", 1)[0] if "/" in f else "."] += k
        top_file, _ = max(d["files"].items(), key=lambda kv: (kv[1], kv[0]))
        folder, _ = max(folders.items(), key=lambda kv: (kv[1], kv[0]))
        d["top_file"] = top_file
        d["folder"] = folder
        d["n_files"] = len(d["files"])
        # named by where it lives and how far it spans: "tests/auth_tests/ · 1,249 files", not just a folder
        d["label"] = top_file if len(d["files"]) == 1 else f"{folder}/ · {len(d['files']):,} files"
        d["files"] = d["files"].most_common(10)
        d["kinds"] = dict(d["kinds"])
    return out


def communities_overview(graph_db: Path, max_shown: int = 40, links: bool = True, counts: list | None = None) -> dict:
    """A community-level map: one bubble per community (the largest ``max_shown``, the rest
    folded into one "other" bubble), links weighted by the edges between communities.
    ``links=False``: the communities and their sizes only, without the links and the bubbles'
    layout (a join over every edge and a spring layout: 0.8 s of 1.1 on Django), for a page
    that lists them. ``counts``: :func:`member_counts`, when already read."""
    with graph(graph_db) as conn:
        info = _community_labels(conn, counts)
        if not info:
            return {"communities": [], "links": [], "total": 0, "assigned": 0, "shown": 0}
        order = sorted(info, key=lambda c: (-info[c]["size"], c))
        shown = set(order[:max_shown])
        between: Counter[tuple[int, ...]] = Counter()
        for a, b, k in [] if not links else conn.execute(
                "SELECT ca.community, cb.community, count(*) FROM edges e "
                "JOIN communities ca ON ca.node_id = e.source JOIN communities cb ON cb.node_id = e.target "
                "WHERE ca.community != cb.community GROUP BY 1, 2"):
            a = a if a in shown else -1
            b = b if b in shown else -1
            if a != b:
                between[tuple(sorted((a, b)))] += k
        total_nodes = conn.execute("SELECT count(*) FROM nodes WHERE kind IN ('file','class','function')").fetchone()[0]
    rows = [dict(info[c], other=False) for c in order[:max_shown]]
    rest = order[max_shown:]
    if rest:
        rows.append({"community": -1, "size": sum(info[c]["size"] for c in rest), "n_files": None,
                     "label": f"{len(rest)} smaller communities", "top_file": "", "folder": "", "kinds": {},
                     "files": [], "other": True})
    if links:
        import networkx as nx

        g = nx.Graph()
        g.add_nodes_from(r["community"] for r in rows)
        for (a, b), k in between.items():
            g.add_edge(a, b, weight=math.log1p(k))
        pos = nx.spring_layout(g, seed=42, weight="weight", k=1.5 / math.sqrt(max(1, len(rows))))
        for r in rows:
            r["x"], r["y"] = (float(v) for v in pos[r["community"]])
    return {
        "communities": rows,
        "links": [{"a": a, "b": b, "edges": k} for (a, b), k in sorted(between.items(), key=lambda kv: -kv[1])],
        "total": len(order), "assigned": sum(info[c]["size"] for c in order), "shown": min(len(order), max_shown),
        "graph_nodes": total_nodes,
        "all_sizes": [info[c]["size"] for c in order],
    }


def community_treemap(graph_db: Path, *, singletons: bool = True, tests: bool = True, vendored: bool = True,
                      max_communities: int = 80, files_per_community: int = 12, counts: list | None = None) -> dict:
    """The communities as a treemap, folder → community → file (Plotly ``ids``/``parents``/
    ``values``, sized by nodes): every community of the largest ``max_communities`` gets
    its own labelled tile, nothing is folded into an "other" tile over them; a community's
    smaller files share one "… N more files" tile inside it. ``singletons``, ``tests``,
    ``vendored``: keep one-node communities, test files, vendored/build output.
    Returns ``{ids, labels, parents, values, kinds, paths, communities, shown, left_out, nodes}``."""
    from ..text import is_build_path, is_test_path

    files: dict[int, Counter[str]] = {}
    keep: dict[str, bool] = {}  # per file: one test of its path, not one per node kind
    for community, file, _kind, k in (member_counts(graph_db) if counts is None else counts):
        if file not in keep:
            keep[file] = not ((not tests and is_test_path(file)) or (not vendored and is_build_path(file)))
        if keep[file]:
            files.setdefault(community, Counter())[file or "?"] += k
    sizes = {c: sum(f.values()) for c, f in files.items()}
    order = [c for c in sorted(sizes, key=lambda c: (-sizes[c], c)) if singletons or sizes[c] > 1]
    shown = order[:max(1, int(max_communities))]
    ids, labels, parents, values, kinds = ["root"], ["repository"], [""], [0], ["root"]
    paths = [""]  # the whole path of a file tile (its label is the file name)
    folders: dict[str, int] = {}
    for c in shown:
        in_files = files[c]
        by_folder: Counter[str] = Counter()
        for f, k in in_files.items():
            by_folder[f.rsplit("/", 1)[0] if "/" in f else "."] += k
        folder = max(by_folder.items(), key=lambda kv: (kv[1], kv[0]))[0]
        if folder not in folders:
            folders[folder] = len(ids)
            ids.append(f"d:{folder}")
            labels.append(f"{folder}/")
            parents.append("root")
            values.append(0)
            kinds.append("folder")
            paths.append("")
        values[folders[folder]] += sizes[c]
        values[0] += sizes[c]
        cid = f"c:{c}"
        ids.append(cid)
        labels.append(f"community {c} · {len(in_files):,} file{'s' if len(in_files) != 1 else ''}")
        parents.append(f"d:{folder}")
        values.append(sizes[c])
        kinds.append("community")
        paths.append("")
        top = in_files.most_common(files_per_community)
        for f, k in top:
            ids.append(f"f:{c}:{f}")
            labels.append(f.rsplit("/", 1)[-1])
            parents.append(cid)
            values.append(k)
            kinds.append("file")
            paths.append(f)
        rest = len(in_files) - len(top)
        if rest:
            ids.append(f"m:{c}")
            labels.append(f"… {rest:,} more files")
            parents.append(cid)
            values.append(sizes[c] - sum(k for _, k in top))
            kinds.append("more")
            paths.append("")
    return {"ids": ids, "labels": labels, "parents": parents, "values": values, "kinds": kinds, "paths": paths,
            "communities": len(order), "shown": len(shown), "left_out": len(order) - len(shown),
            "nodes": values[0]}


def community_detail(graph_db: Path, community: int, limit: int = 120) -> dict:
    """One community: its best-connected members (at most ``limit``) and the edges among them."""
    with graph(graph_db) as conn:
        size = conn.execute("SELECT count(*) FROM communities WHERE community = ?", (community,)).fetchone()[0]
        files = as_dicts(conn.execute(
            "SELECT n.file, count(*) AS nodes FROM communities c JOIN nodes n ON n.id = c.node_id "
            "WHERE c.community = ? GROUP BY n.file ORDER BY nodes DESC, n.file", (community,)))
        members = as_dicts(conn.execute(
            """SELECT n.id, n.kind, n.qualified_name, n.file, n.start_line,
                      (SELECT count(*) FROM edges e WHERE e.source = n.id) +
                      (SELECT count(*) FROM edges e WHERE e.target = n.id) AS degree
               FROM communities c JOIN nodes n ON n.id = c.node_id WHERE c.community = ?
               ORDER BY degree DESC, n.file, n.qualified_name LIMIT ?""", (community, int(limit))))
        ids = [m["id"] for m in members]
        edges = []
        if ids:
            marks = ",".join("?" * len(ids))
            edges = as_dicts(conn.execute(
                f"SELECT source, target, kind FROM edges WHERE source IN ({marks}) AND target IN ({marks})",
                (*ids, *ids)))
        outside = as_dicts(conn.execute(
            """SELECT cb.community AS community, count(*) AS edges FROM communities ca
               JOIN edges e ON e.source = ca.node_id JOIN communities cb ON cb.node_id = e.target
               WHERE ca.community = ? AND cb.community != ? GROUP BY cb.community ORDER BY edges DESC LIMIT 10""",
            (community, community)))
    return {"community": community, "size": size, "files": files, "members": members, "edges": edges,
            "neighbours": outside}


def layout(nodes: list[str], edges: list[tuple[str, str]], seed: int = 42) -> dict[str, tuple[float, float]]:
    import networkx as nx

    g = nx.Graph()
    g.add_nodes_from(nodes)
    g.add_edges_from((a, b) for a, b in edges if a != b)
    return {k: (float(v[0]), float(v[1])) for k, v in nx.spring_layout(g, seed=seed).items()}


