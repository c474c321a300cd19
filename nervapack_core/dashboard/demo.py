"""The demo workspace ``nervapack serve --demo`` shows (and ``serve`` falls back to when
there is no workspace): NervaPack Core's own source, committed and ingested offline in
three steps (no embeddings; so the graph's evolution has three snapshots), plus a small
decision memory in two namespaces with supersessions, outcomes and sessions.

Built once per version under the user's data folder
(``$XDG_DATA_HOME/nervapack/demo-<version>``, default ``~/.local/share``), in a temporary
folder renamed into place, so an interrupted build is never served.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from collections.abc import Sequence
from pathlib import Path

from .. import __version__
from ..errors import NervapackError
from ..gitrepo import git
from ..workspace import GRAPH_DB, WORKSPACE_DIR, Workspace

__all__ = ["demo_home", "demo_root", "ensure_demo", "build_demo_history", "seed_demo_memory",
           "run_demo_queries"]

README = """# NervaPack Core (demo copy)

This folder is a copy of the `nervapack_core` package, ingested so the dashboard has
something to show. The code graph is in `GraphStore` (`nervapack_core/code/graph/store.py`);
`refresh_snapshots` computes communities and the health snapshot at ingest; the memory
lives in `MemoryStore` (`nervapack_core/memory/store.py`).

## Dashboard

`nervapack serve` runs the Streamlit app; its loaders live in `nervapack_core/dashboard/data.py`
and are cached by `nervapack_core/dashboard/cache.py` on the databases' change markers.
"""


def demo_home(environ=None) -> Path:
    env = os.environ if environ is None else environ
    base = Path(env.get("XDG_DATA_HOME") or Path.home() / ".local" / "share").expanduser()
    return base / "nervapack" / f"demo-{__version__}"


def demo_root(environ=None) -> Path:
    return demo_home(environ) / "nervapack-core"


def _ready(home: Path) -> bool:
    ws = Workspace(home / "nervapack-core")
    return (home / "READY").is_file() and ws.graph_db.is_file() and ws.memory_db.is_file()


def ensure_demo(progress=None) -> Path:
    """The demo workspace root, built first if needed."""
    home = demo_home()
    if _ready(home):
        return home / "nervapack-core"
    say = progress or (lambda msg: None)
    home.parent.mkdir(parents=True, exist_ok=True)
    tmp = home.parent / f".{home.name}.building-{os.getpid()}"
    shutil.rmtree(tmp, ignore_errors=True)
    started = time.perf_counter()
    try:
        root = tmp / "nervapack-core"
        say(f"Building the demo workspace in {home} (once)…")
        build_demo_history(root)
        seed_demo_memory(Workspace(root).memory_db)
        run_demo_queries(root)
        (tmp / "READY").write_text(json.dumps({"version": __version__, "built_in_s": round(
            time.perf_counter() - started, 2)}), encoding="utf-8")
        if home.exists():
            if _ready(home):  # another process finished first
                shutil.rmtree(tmp, ignore_errors=True)
                return home / "nervapack-core"
            shutil.rmtree(home)
        os.replace(tmp, home)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    say(f"Demo workspace ready ({time.perf_counter() - started:.1f} s).")
    return home / "nervapack-core"


# The demo's history: the package arrives in three steps, each committed (when git is there)
# and ingested, so the Overview's evolution trend has several points with commit labels.
# (date, commit message, sub-packages it adds; the first step adds all the others, the last the README)
DEMO_STEPS = (
    ("2026-01-12T10:00:00Z", "Code graph, memory and CLI", ()),
    ("2026-02-16T10:00:00Z", "Dashboard", ("dashboard",)),
    ("2026-03-02T10:00:00Z", "README: where the graph, the snapshots and the memory live", ()),
)
_IGNORED = shutil.ignore_patterns("__pycache__", "*.pyc", "data", "*.egg-info")


def build_demo_history(root: Path) -> int:
    """Copy the package into ``root`` in :data:`DEMO_STEPS`, committing and ingesting after
    each (no embeddings); returns the number of ingests. Without a working ``git`` the
    steps are ingested all the same, only without commits."""
    from ..code.ingest.pipeline import ingest

    package = Path(__file__).resolve().parents[1]
    later = {sub for _, _, subs in DEMO_STEPS[1:] for sub in subs}
    root.mkdir(parents=True, exist_ok=True)
    (root / ".gitignore").write_text(f"{WORKSPACE_DIR}/\n", encoding="utf-8")
    use_git = _git(root, "init", "-q")

    def first_step(folder: str, names: list[str]) -> set[str]:
        skip = set(_IGNORED(folder, names))
        return skip | (later & set(names)) if Path(folder) == package else skip

    for step, (when, message, subs) in enumerate(DEMO_STEPS):
        if step == 0:
            shutil.copytree(package, root / "nervapack_core", ignore=first_step)
        elif subs:
            for sub in subs:
                shutil.copytree(package / sub, root / "nervapack_core" / sub, ignore=_IGNORED)
        else:
            (root / "README.md").write_text(README, encoding="utf-8")
        if use_git:
            use_git = _git(root, "add", "-A", when=when) and _git(root, "commit", "-qm", message, when=when)
        ingest(root, embed=False, workers=1)
    return len(DEMO_STEPS)


def _git(root: Path, *args: str, when: str | None = None) -> bool:
    """Run git in ``root`` apart from the user's configuration; False when it cannot."""
    env = {"GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1",
           "GIT_AUTHOR_NAME": "NervaPack demo", "GIT_AUTHOR_EMAIL": "demo@nervapack.invalid",
           "GIT_COMMITTER_NAME": "NervaPack demo", "GIT_COMMITTER_EMAIL": "demo@nervapack.invalid"}
    if when:
        env.update(GIT_AUTHOR_DATE=when, GIT_COMMITTER_DATE=when)
    try:
        return git(root, *args, env=env).returncode == 0
    except NervapackError:
        return False


MO = "Mo Memory <mo@nervapack.invalid>"


def seed_demo_memory(db: Path) -> None:
    """Decisions made while building NervaPack Core, as a team would record them."""
    from ..memory import MemoryStore

    with MemoryStore(db_path=db, graph_db=db.parent / GRAPH_DB, author="Ada Core <ada@nervapack.invalid>") as m:
        # -- namespace "default": the core team
        m.start_session("Offline embeddings")
        e1 = m.store("Use Chroma's default embedding function", kind="decision", entities=["Embeddings"],
                     valid_from="2025-09-01", rationale="Zero setup: Chroma ships it.",
                     alternatives_rejected=["OpenAI embeddings API"], tags=["embeddings"])
        o1 = m.store("First ingest on an offline machine failed: Chroma tried to download its model",
                     kind="outcome", entities=["Embeddings"], valid_from="2025-09-20", caused_by=[e1])
        e2 = m.store("Use a deterministic hashing embedder", kind="decision", entities=["Embeddings"],
                     supersedes=e1, valid_from="2025-10-01",
                     rationale="Works offline and is fast; quality is only a fallback.",
                     alternatives_rejected=["sentence-transformers (pulls in PyTorch)"])
        e3 = m.store("Use all-MiniLM-L6-v2 as int8 ONNX with onnxruntime + tokenizers", kind="decision",
                     entities=["Embeddings"], supersedes=e2, valid_from="2026-01-15",
                     rationale="Real semantic vectors, 22 MB, no PyTorch, loads from registry packages offline.",
                     alternatives_rejected=["hashing embedder as the default", "fp32 model (4x larger)"],
                     tags=["embeddings", "offline"], author="Ben Search <ben@nervapack.invalid>")
        m.store("1,000 short texts embed in 3.5 s on 2 cores", kind="outcome", entities=["Embeddings"],
                valid_from="2026-01-20", caused_by=[e3])
        m.end_session("MiniLM int8 is the default; hashing stays as the announced fallback.")

        m.start_session("Dashboard performance")
        c1 = m.store("Compute Louvain communities when the dashboard loads", kind="decision",
                     entities=["Communities", "refresh_snapshots"], valid_from="2025-11-01",
                     rationale="Always matches the graph on screen.")
        m.store("The Communities page took 9 s to open on Django", kind="outcome", entities=["Communities"],
                valid_from="2025-11-10", caused_by=[c1])
        c2 = m.store("Compute communities at ingest and store them in graph.db", kind="decision",
                     entities=["Communities", "refresh_snapshots", "GraphStore"], supersedes=c1,
                     valid_from="2025-11-15", rationale="Ingest already holds the graph; pages only read.",
                     alternatives_rejected=["cache in the Streamlit process only"], tags=["performance", "dashboard"])
        m.store("Communities page renders under 1 s on Django", kind="outcome", entities=["Communities"],
                valid_from="2025-11-20", caused_by=[c2])
        m.store("Show a community-level map, never thousands of raw nodes in one chart", kind="decision",
                entities=["Communities"], valid_from="2025-11-16",
                rationale="A hairball answers no question; one bubble per community does.")
        m.end_session("Communities precomputed at ingest.")

        m.store("Store the code graph in SQLite with FTS5", kind="decision", entities=["GraphStore"],
                valid_from="2025-08-15", rationale="One local file, transactional, full-text search built in.",
                alternatives_rejected=["Neo4j (a server to run)", "pickled networkx graph"], tags=["storage"])
        m.store("Health score components are each linear in a meaningful ratio", kind="fact",
                entities=["Health score"], valid_from="2025-12-01")
        m.store("Run `nervapack ingest .` after large refactors", kind="procedure", entities=["GraphStore"],
                valid_from="2025-12-05")

        # -- namespace "memory-team": the memory engine's own decisions
        ns = "memory-team"
        m.start_session("Bi-temporal rules", namespace=ns)
        s1 = m.store("Superseding closes the old version at now", kind="decision", entities=["Supersede"],
                     valid_from="2025-10-01", namespace=ns, rationale="Simplest to implement.", author=MO)
        m.store("as_of between two versions returned both of them", kind="outcome", entities=["Supersede"],
                valid_from="2025-10-12", namespace=ns, caused_by=[s1])
        m.store("Superseding closes the old version at the new one's valid_from", kind="decision",
                entities=["Supersede", "MemoryStore"], supersedes=s1, valid_from="2025-10-20", namespace=ns,
                rationale="as_of between the two versions must return exactly one.",
                alternatives_rejected=["close at now", "keep both open"], author=MO)
        m.store("Namespaces scope aliases, sessions and every lookup", kind="decision",
                entities=["Namespaces", "MemoryStore"], valid_from="2025-10-25", namespace=ns,
                rationale="A shared alias table leaked entities between teams.",
                alternatives_rejected=["one database per namespace"], author=MO, tags=["namespaces"])
        m.store("pack() never returns more than budget_tokens, header included", kind="fact",
                entities=["Recall"], valid_from="2025-11-02", namespace=ns)
        m.end_session("Supersede and namespace rules fixed.", namespace=ns)
        # an agent's proposals (over MCP): waiting in the review queue, one contradicting an agreed decision
        with MemoryStore(db_path=db, graph_db=db.parent / GRAPH_DB, origin="mcp",
                         author="claude-code (MCP)") as agent:
            agent.store("Cache embeddings by file sha so a re-ingest skips unchanged files", kind="decision",
                        status="proposed", entities=["Embeddings", "GraphStore"], valid_from="2026-03-05",
                        rationale="Re-ingesting Django re-embeds 4,000 unchanged files.", tags=["performance"])
            agent.store("Compute communities in the dashboard process again, cached for 10 minutes",
                        kind="decision", status="proposed", entities=["Communities", "refresh_snapshots"],
                        valid_from="2026-03-06", rationale="One step less at ingest.", contradicts=[c2],
                        tags=["dashboard"])
        m.recall("embeddings offline", budget_tokens=300, namespace="default")
        m.recall("communities", budget_tokens=200, namespace="default")
        m.recall("supersede as_of", budget_tokens=300, namespace=ns)
        _ = o1


DEMO_QUESTIONS = (
    "how does ingest decide which files changed",
    "where are Louvain communities computed",
    "how is the health score computed",
    "how does recall stay under the token budget",
    "what happens when a decision is superseded",
    "how are doc sections linked to code",
    "which embedder is used when offline",
    "how does the dashboard cache its loaders",
    "where is the query history written",
    "how are namespaces isolated in memory",
    "parse python files with tree-sitter",
    "token counting cl100k_base offline",
)


def run_demo_queries(root: Path, questions: Sequence[str] = DEMO_QUESTIONS) -> int:
    """Real ``nervapack query`` runs (no vectors) on the demo graph (or any ingested ``root``),
    recorded in its history; returns how many were asked."""
    try:
        from ..code.retrieval.retriever import Retriever, answer
        from ..query_log import append_query
    except ImportError:  # retrieval not available: the Query History page shows its empty state
        return 0
    retriever = Retriever(root, use_vectors=False)
    history = Workspace(root).history_file
    try:
        for i, question in enumerate(questions):
            result = answer(retriever, question, budget=(2000, 1000, 4000)[i % 3])
            append_query(history, result.history_record("cli" if i % 4 else "mcp"))
    finally:
        retriever.close()
    return len(questions)
