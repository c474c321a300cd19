"""Which workspace (and memory database) an MCP server answers from, and how it was chosen.

Clients start servers from anywhere: Claude Desktop, the Claude Code desktop app and Cline
start them in ``/`` or ``$HOME``, where the nearest-``.nervapack/`` search found nothing and
the memory server silently used ``~/.nervapack/memory.db`` — and ``decisions_for_change``
answered "No decision governs …" for code that had three decisions (issue 29, "The right
workspace, or a clear word"). The order, first that applies:

1. explicit: ``NERVAPACK_MEMORY_DB`` or ``--db`` (the memory lookup order every command
   follows, :func:`~nervapack_core.workspace.memory_db_path`), then ``--path DIR``, then
   ``NERVAPACK_HOME``;
2. the client's MCP roots: the first root inside a workspace;
3. ``CLAUDE_PROJECT_DIR`` (set by Claude Code for the servers it starts);
4. the working directory.

For 2-4 a folder is in a workspace when it or a folder above it holds ``.nervapack/`` or is a
git work tree (has ``.git``) — but never ``$HOME`` itself (unless it holds a code graph) or
``/``: a home directory or the file system is not a project. When nothing applies the memory
is the global ``~/.nervapack/memory.db`` and :attr:`Choice.bound` is false: tools bound to code
refuse (:meth:`Choice.require_code`) instead of answering from a database that is not the
workspace's. A server decides once per MCP session, on the session's first tool call
(:func:`choose_for_session`).
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from ..errors import NervapackError
from ..settings import env_value
from ..workspace import (
    GRAPH_DB,
    MEMORY_DB,
    MEMORY_DB_ENV,
    WORKSPACE_DIR,
    Workspace,
    global_memory_db,
    workspace_root_of,
)

__all__ = ["Choice", "choose", "choose_for_session", "client_roots", "workspace_at", "FIXES",
           "CLAUDE_PROJECT_DIR"]

CLAUDE_PROJECT_DIR = "CLAUDE_PROJECT_DIR"

# the four ways to give a server its workspace, as a refusal lists them
FIXES = ("start the server with `--path /path/to/project` (or `--db /path/to/project/"
         f"{WORKSPACE_DIR}/{MEMORY_DB}`)",
         "set NERVAPACK_HOME=/path/to/project in the server's environment",
         "use a client that sends MCP roots (the project folder opened in it)",
         "start the server in the project folder (its `cwd` in the client's config; Claude Code sets "
         "CLAUDE_PROJECT_DIR)")


@dataclass(frozen=True)
class Choice:
    """The workspace a server answers from.

    ``db``: the memory database; ``root``: the workspace's root (None: none found);
    ``how``: what chose it ("NERVAPACK_MEMORY_DB", "--db", "--path", "NERVAPACK_HOME",
    "MCP roots", "CLAUDE_PROJECT_DIR", "working directory", or "none"); ``detail``: a sentence
    for people; ``bound``: whether the database is a workspace's, so tools bound to code may
    answer from it."""

    db: Path
    root: Path | None
    how: str
    detail: str
    bound: bool

    @property
    def graph_db(self) -> Path | None:
        """The code graph beside the memory (None when there is no workspace)."""
        if self.root is None:
            return None
        return Workspace(self.root).graph_db

    def to_dict(self) -> dict[str, Any]:
        """What ``memory_stats`` and friends say about the database in use."""
        return {"db": str(self.db), "root": str(self.root) if self.root else None, "chosen_by": self.how,
                "detail": self.detail, "code_bound_tools": self.bound}

    def require_code(self, tool: str) -> None:
        """Refuse ``tool`` (one bound to code) when the database is not a workspace's: say why
        and the four ways to fix it."""
        if self.bound:
            return
        fixes = "; ".join(f"({i}) {fix}" for i, fix in enumerate(FIXES, 1))
        raise NervapackError(
            f"{tool} answers about a project's code, but this server found no project: {self.detail} "
            f"It uses {self.db}, which belongs to no workspace, so an answer would be about no code. "
            f"To fix it: {fixes}.")


def _user_home() -> Path | None:
    try:
        return Path.home().resolve()
    except (RuntimeError, KeyError, OSError):
        return None


def workspace_at(start: str | os.PathLike[str]) -> Path | None:
    """The root of the workspace holding ``start`` (a folder or a file): the nearest folder at or
    above it with ``.nervapack/`` or ``.git`` — never ``/`` nor ``$HOME`` itself (unless
    ``$HOME`` holds a code graph); None when there is none."""
    try:
        here = Path(start).expanduser().resolve()
    except (OSError, RuntimeError):
        return None
    if not here.is_dir():
        here = here.parent
    home = _user_home()
    for folder in (here, *here.parents):
        if folder == Path(folder.anchor):  # the file system's root: not a project
            return None
        if folder == home and not (folder / WORKSPACE_DIR / GRAPH_DB).exists():
            return None  # the home directory, or a folder under it that is none: stop here
        try:
            if (folder / WORKSPACE_DIR).is_dir() or (folder / ".git").exists():
                return folder
        except OSError:
            continue
    return None


def _root_of_db(db: Path) -> Path | None:
    """The workspace a memory database belongs to: ``root/.nervapack/memory.db`` gives ``root``;
    a database elsewhere with a code graph beside it gives its folder; else None."""
    folder = db.expanduser().parent
    if folder.name == WORKSPACE_DIR or (folder / GRAPH_DB).exists():
        return workspace_root_of(db).resolve()
    return None


def _in(root: Path, how: str, detail: str) -> Choice:
    return Choice(Workspace(root).memory_db, root, how, detail, True)


def choose(*, db: str | os.PathLike[str] | None = None, path: str | os.PathLike[str] | None = None,
           roots: Iterable[str | os.PathLike[str]] = (), environ: Mapping[str, str] | None = None,
           cwd: str | os.PathLike[str] | None = None) -> Choice:
    """The workspace by the module's order. ``db``/``path``: the server's ``--db``/``--path``;
    ``roots``: the client's MCP roots as folders (see :func:`client_roots`); ``environ``
    defaults to ``os.environ``, ``cwd`` to the working directory."""
    env = os.environ if environ is None else environ
    named = env_value(MEMORY_DB_ENV, env)
    if named or db:
        how = MEMORY_DB_ENV if named else "--db"
        chosen = Path(str(named or db)).expanduser()
        root = _root_of_db(chosen)
        where = f" (workspace {root})" if root else ""
        # an explicit database is the user's word: tools bound to code answer from it (about the
        # graph beside it, or the working directory's, as the memory library finds it)
        return Choice(chosen, root, how, f"The memory database was given by {how}{where}.", True)
    if path:
        root = Path(path).expanduser().resolve()
        return _in(root, "--path", f"The workspace was given by --path ({root}).")
    home = env_value("NERVAPACK_HOME", env)
    if home:
        root = Path(home).expanduser().resolve()
        return _in(root, "NERVAPACK_HOME", f"The workspace was given by NERVAPACK_HOME ({root}).")
    tried = []
    listed = [Path(r) for r in roots]
    for folder in listed:
        found = workspace_at(folder)
        if found is not None:
            return _in(found, "MCP roots", f"The workspace is the client's MCP root {folder}.")
    if listed:
        tried.append("no MCP root the client sent (" + ", ".join(str(r) for r in listed[:5]) + ") is in a project")
    else:
        tried.append("the client sent no MCP roots")
    project = env.get(CLAUDE_PROJECT_DIR)
    if project:
        found = workspace_at(project)
        if found is not None:
            return _in(found, CLAUDE_PROJECT_DIR, f"The workspace is CLAUDE_PROJECT_DIR ({project}).")
        tried.append(f"CLAUDE_PROJECT_DIR ({project}) is in no project")
    else:
        tried.append("CLAUDE_PROJECT_DIR is not set")
    here = Path(cwd) if cwd is not None else Path(os.getcwd())
    found = workspace_at(here)
    if found is not None:
        return _in(found, "working directory", f"The workspace holds the server's working directory ({here}).")
    tried.append(f"the working directory ({here}) is in no project (a folder with .nervapack/ or .git; "
                 "not $HOME itself or /)")
    return Choice(global_memory_db(), None, "none", "No workspace: " + "; ".join(tried) + ".", False)


def _uri_folder(uri: Any) -> Path | None:
    """The local folder of a root's ``file://`` URI (None for any other scheme)."""
    parsed = urlparse(str(uri))
    if parsed.scheme != "file" or parsed.netloc not in ("", "localhost"):
        return None
    return Path(unquote(parsed.path))


async def client_roots(ctx: Any) -> list[Path]:
    """The folders of the client's MCP roots, asked with ``roots/list`` when the client declared
    the roots capability; [] when it did not, there is no session, or the request failed."""
    try:
        session = ctx.session
        capabilities = session.client_capabilities
    except (AttributeError, ValueError):  # no request context (a direct call)
        return []
    if capabilities is None or getattr(capabilities, "roots", None) is None:
        return []
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the SDK marks roots deprecated in a future protocol era
            listed = await session.list_roots()
    except Exception:  # a client that declared roots but cannot answer: as if it sent none
        return []
    folders = [_uri_folder(root.uri) for root in listed.roots]
    return [f for f in folders if f is not None]


async def choose_for_session(ctx: Any, *, db: str | os.PathLike[str] | None = None,
                             path: str | os.PathLike[str] | None = None) -> Choice:
    """:func:`choose` for one MCP session: the explicit choices first, so the client is asked
    for its roots only when none was given."""
    explicit = choose(db=db, path=path, roots=(), cwd="/")
    if explicit.how in (MEMORY_DB_ENV, "--db", "--path", "NERVAPACK_HOME"):
        return explicit
    return choose(db=db, path=path, roots=await client_roots(ctx))
