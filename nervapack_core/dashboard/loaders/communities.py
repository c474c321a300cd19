"""The Communities page: one summary per Louvain community (with a label from its dominant
folder), the treemap folder → community → file, one community's members and their edges, and a
deterministic layout for drawing them (the communities as the ingest stored them, read through
:class:`~nervapack_core.code.analysis.reader.GraphReader`)."""

from __future__ import annotations

import math
from collections import Counter
from pathlib import Path
from typing import NotRequired, TypedDict

from ...code.analysis.reader import CommunityFile, CommunityLink, CommunityMember, EdgeTriple, GraphReader
from ..sources import graph_reader

__all__ = ["CommunitiesOverview", "CommunityTreemap", "CommunityDetail", "communities_overview", "community_detail",
           "community_treemap", "layout", "member_counts"]

MemberCounts = list[tuple[int, str, str, int]]


class CommunityLinkCount(TypedDict):
    a: int
    b: int
    edges: int


class CommunitiesOverview(TypedDict):
    """``communities``: one dict per bubble (``community, size, files, kinds, top_file, folder,
    n_files, label, other``, and ``x``/``y`` with the links)."""

    communities: list[dict]
    links: list[CommunityLinkCount]
    total: int
    assigned: int
    shown: int
    # not on a graph without communities
    graph_nodes: NotRequired[int]
    all_sizes: NotRequired[list[int]]


class CommunityTreemap(TypedDict):
    ids: list[str]
    labels: list[str]
    parents: list[str]
    values: list[int]
    kinds: list[str]
    paths: list[str]
    communities: int
    shown: int
    left_out: int
    nodes: int


class CommunityDetail(TypedDict):
    community: int
    size: int
    files: list[CommunityFile]
    members: list[CommunityMember]
    edges: list[EdgeTriple]
    neighbours: list[CommunityLink]
    layout: NotRequired[dict[str, tuple[float, float]]]


def member_counts(graph_db: Path) -> MemberCounts:
    """``(community, file, kind, nodes)`` for every community, file and node kind: the one
    pass over the communities that both the overview and the treemap read (give it to
    them as ``counts``: one scan instead of two)."""
    with graph_reader(graph_db) as reader:
        return reader.community_member_counts()


def _community_labels(reader: GraphReader, counts: MemberCounts | None = None) -> dict[int, dict]:
    """Per community: size, files, the folder most of its nodes live in, node kinds
    (``counts``: :func:`member_counts`, else read here)."""
    out: dict[int, dict] = {}
    for r in counts if counts is not None else reader.community_member_counts():
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


def communities_overview(graph_db: Path, max_shown: int = 40, links: bool = True,
                         counts: MemberCounts | None = None) -> CommunitiesOverview:
    """A community-level map: one bubble per community (the largest ``max_shown``, the rest
    folded into one "other" bubble), links weighted by the edges between communities.
    ``links=False``: the communities and their sizes only, without the links and the bubbles'
    layout (a join over every edge and a spring layout: 0.8 s of 1.1 on Django), for a page
    that lists them. ``counts``: :func:`member_counts`, when already read."""
    with graph_reader(graph_db) as reader:
        info = _community_labels(reader, counts)
        if not info:
            return CommunitiesOverview(communities=[], links=[], total=0, assigned=0, shown=0)
        order = sorted(info, key=lambda c: (-info[c]["size"], c))
        shown = set(order[:max_shown])
        between: Counter[tuple[int, ...]] = Counter()
        for a, b, k in reader.community_links() if links else []:
            a = a if a in shown else -1
            b = b if b in shown else -1
            if a != b:
                between[tuple(sorted((a, b)))] += k
        total_nodes = reader.node_count(("file", "class", "function"))
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
    return CommunitiesOverview(
        communities=rows,
        links=[CommunityLinkCount(a=a, b=b, edges=k) for (a, b), k in sorted(between.items(), key=lambda kv: -kv[1])],
        total=len(order), assigned=sum(info[c]["size"] for c in order), shown=min(len(order), max_shown),
        graph_nodes=total_nodes, all_sizes=[info[c]["size"] for c in order])


def community_treemap(graph_db: Path, *, singletons: bool = True, tests: bool = True, vendored: bool = True,
                      max_communities: int = 80, files_per_community: int = 12,
                      counts: MemberCounts | None = None) -> CommunityTreemap:
    """The communities as a treemap, folder → community → file (Plotly ``ids``/``parents``/
    ``values``, sized by nodes): every community of the largest ``max_communities`` gets
    its own labelled tile, nothing is folded into an "other" tile over them; a community's
    smaller files share one "… N more files" tile inside it. ``singletons``, ``tests``,
    ``vendored``: keep one-node communities, test files, vendored/build output.
    Returns ``{ids, labels, parents, values, kinds, paths, communities, shown, left_out, nodes}``."""
    from ...text import is_build_path, is_test_path

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
    return CommunityTreemap(ids=ids, labels=labels, parents=parents, values=values, kinds=kinds, paths=paths,
                            communities=len(order), shown=len(shown), left_out=len(order) - len(shown),
                            nodes=values[0])


def community_detail(graph_db: Path, community: int, limit: int = 120, *, with_layout: bool = False) -> CommunityDetail:
    """One community: its best-connected members (at most ``limit``) and the edges among them
    (``with_layout``: and :func:`layout`'s positions of the members)."""
    with graph_reader(graph_db) as reader:
        members = reader.community_members(community, limit)
        detail = CommunityDetail(
            community=community, size=reader.community_size(community), files=reader.community_files(community),
            members=members, edges=reader.edges_among([m["id"] for m in members]),
            neighbours=reader.community_neighbours(community, 10))
    if with_layout:
        detail["layout"] = layout([m["id"] for m in detail["members"]],
                                  [(e["source"], e["target"]) for e in detail["edges"]])
    return detail


def layout(nodes: list[str], edges: list[tuple[str, str]], seed: int = 42) -> dict[str, tuple[float, float]]:
    import networkx as nx

    g = nx.Graph()
    g.add_nodes_from(nodes)
    g.add_edges_from((a, b) for a, b in edges if a != b)
    return {k: (float(v[0]), float(v[1])) for k, v in nx.spring_layout(g, seed=seed).items()}


