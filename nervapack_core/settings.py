"""A workspace's settings, and whom each one is taken from.

Every setting has a default and an environment variable; it can also be written in a TOML
file, read with ``tomllib``: the workspace's ``.nervapack/config.toml`` or the user's own
``$NERVAPACK_USER_CONFIG`` (else ``$XDG_CONFIG_HOME/nervapack/config.toml``, else
``~/.config/nervapack/config.toml``). Known settings::

    [vectors]
    url = "http://127.0.0.1:8000"   # a Chroma server instead of .nervapack/chroma/ ($NERVAPACK_CHROMA_URL)
    [memory]
    agent_decisions = "proposed"    # or "accepted": agents' decisions skip review ($NERVAPACK_AGENT_DECISIONS)
    adr_dir = "docs/decisions"      # the ADR folder ($NERVAPACK_ADR_DIR)
    adr_namespace = "default"       # the memory namespace ADRs import into ($NERVAPACK_ADR_NAMESPACE)
    [llm]
    model = "…"                     # and concurrency, timeout, … ($NERVAPACK_LLM_<NAME>)

Precedence: the environment variable, then the workspace file, then the user's file, then
the default. The most specific place wins (one shell or CI job overrides everything; a
checkout overrides the user's habits), as git's own configuration does.

Trust. A repository is untrusted input (a dependency, a candidate's take-home, a pull
request's branch), and ``git add -f`` tracks ``.nervapack/config.toml`` despite the
``.gitignore`` of ``*`` beside it. So the settings that would let a repository act against
the person running NervaPack — *user-only* settings — come only from that person:

- sending data off the machine: ``[vectors] url`` and any ``[llm]`` endpoint, URL, host,
  key or token setting;
- changing the review policy: ``[memory] agent_decisions``;
- reaching outside the root: ``[memory] adr_dir`` when it resolves (symlinks followed)
  outside the workspace root — imported text would come from, and ``export-adr`` would
  write to, anywhere on the machine.

The person is the environment, the user's file, or a workspace file git does **not**
track. A tracked workspace file's user-only keys are ignored with one warning per file on
stderr that names each key and where to put it instead; its other keys (``adr_namespace``,
an ``adr_dir`` inside the root, ``[llm] model`` …) still apply. An ``adr_dir`` outside the
root is refused even from an untracked workspace file: an untracked file is still one a
repository's setup script, an unpacked archive or a build step can write, and naming a folder
outside the root is a choice about the whole machine, so it is made where such choices live
(the environment or the user's file).

A plain folder (no git repository, git not installed, or git refusing the repository, e.g.
"dubious ownership") cannot say who wrote the file: an unpacked archive carries a
``.nervapack/config.toml`` exactly as a clone does. Its workspace file is therefore treated
as a tracked one (fail closed): put user-only settings in the environment or the user's file.

Whether git tracks the file is asked once per process per state of the file and of git's
index (``git ls-files --error-unmatch``; the cache is keyed by path, mtime and the index's
mtime), since settings are read on hot paths (every MCP store, every vector search).
"""

from __future__ import annotations

import os
import re
import sys
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .errors import NervapackError
from .gitrepo import git
from .workspace import CONFIG_FILE, Workspace

__all__ = ["Setting", "read_config", "setting", "user_config_path", "ignored_keys", "CONFIG_NAME",
           "USER_CONFIG_ENV"]

CONFIG_NAME = CONFIG_FILE  # the user config (~/.config/nervapack/) has the same name
USER_CONFIG_ENV = "NERVAPACK_USER_CONFIG"

# user-only settings: (section, key) -> (its environment variable, why only the user may set it)
_USER_ONLY: dict[tuple[str, str], tuple[str, str]] = {
    ("vectors", "url"): ("NERVAPACK_CHROMA_URL", "sends the code's text to that server"),
    ("memory", "agent_decisions"): ("NERVAPACK_AGENT_DECISIONS", "changes the review policy"),
}
# folders a workspace file may name only inside the root
_INSIDE_ROOT: dict[tuple[str, str], str] = {("memory", "adr_dir"): "NERVAPACK_ADR_DIR"}
# an [llm] key naming where requests go or what authenticates them (none is read from a file today;
# the rule keeps a future one from being settable by a repository)
_LLM_ENDPOINT = re.compile(r"(^|_)(url|uri|endpoint|host|base|key|token|secret|password)($|_)", re.IGNORECASE)

_TRACKED: dict[tuple, str] = {}  # (file, mtime, index mtime) -> what git says of it (_git_says)
_WARNED: set[tuple] = set()  # files (and their state) already warned about in this process


@dataclass(frozen=True)
class Setting:
    """A setting's value and where it came from (for messages: "set by ...")."""

    value: Any
    origin: str


def _load(path: Path) -> dict[str, Any]:
    """The parsed TOML file at ``path`` ({} when there is none)."""
    try:
        with open(path, "rb") as fh:
            return tomllib.load(fh)
    except (FileNotFoundError, NotADirectoryError):
        return {}
    except OSError as exc:
        raise NervapackError(f"Cannot read {path}: {exc.strerror or exc}.") from None
    except tomllib.TOMLDecodeError as exc:
        raise NervapackError(f"{path} is not valid TOML ({exc}).") from None


def read_config(workspace: Workspace) -> dict[str, Any]:
    """The parsed ``.nervapack/config.toml`` ({} when there is none), every key as written
    (use :func:`setting` to read a setting: it applies the trust rules)."""
    return _load(workspace.config_file)


def user_config_path(environ: Mapping[str, str] | None = None) -> Path | None:
    """The user's own settings file: ``$NERVAPACK_USER_CONFIG``, else
    ``$XDG_CONFIG_HOME/nervapack/config.toml``, else ``~/.config/nervapack/config.toml``
    (None when there is no home directory to find it in)."""
    environ = os.environ if environ is None else environ
    try:
        if environ.get(USER_CONFIG_ENV, "").strip():
            return Path(environ[USER_CONFIG_ENV].strip()).expanduser()
        xdg = environ.get("XDG_CONFIG_HOME", "").strip()
        # XDG: a relative value is to be ignored
        base = Path(xdg) if xdg and Path(xdg).is_absolute() else Path.home() / ".config"
    except RuntimeError:  # no $HOME and no passwd entry (a bare container)
        return None
    return base / "nervapack" / CONFIG_NAME


def _table(data: dict[str, Any], section: str, path: Path) -> dict[str, Any]:
    table = data.get(section, {})
    if not isinstance(table, dict):
        raise NervapackError(f"{path}: [{section}] must be a table.")
    return table


def _outside_root(workspace: Workspace, value: Any) -> bool:
    """Whether a folder setting's ``value`` resolves (symlinks followed) outside the root;
    ``false``/``"off"`` (turned off) and non-strings name no folder."""
    if not isinstance(value, str) or value.strip().lower() in ("", "off", "none", "false"):
        return False
    try:
        path = Path(value).expanduser()
        root = workspace.root.resolve()
        path = (path if path.is_absolute() else root / path).resolve()
    except (OSError, RuntimeError, ValueError):  # a symlink loop, a NUL byte, no home: not provably inside
        return True
    return path != root and root not in path.parents


def _user_only(workspace: Workspace, section: str, key: str, value: Any) -> tuple[str, str] | None:
    """``(environment variable, why)`` when ``[section] key = value`` is user-only, else None."""
    if (section, key) in _USER_ONLY:
        return _USER_ONLY[section, key]
    if (section, key) in _INSIDE_ROOT and _outside_root(workspace, value):
        return _INSIDE_ROOT[section, key], "names a folder outside the workspace root"
    if section == "llm" and _LLM_ENDPOINT.search(key):
        return f"NERVAPACK_LLM_{key.upper()}", "says where requests go or how they authenticate"
    return None


def _mtime(path: Path) -> int | None:
    try:
        return path.stat().st_mtime_ns
    except OSError:
        return None


def _index_file(folder: Path) -> Path | None:
    """git's index for the repository holding ``folder`` (its mtime moves on add/rm --cached)."""
    from .gitrepo import git_dir, repo_root

    top = repo_root(folder)
    gdir = git_dir(top) if top is not None else None
    return gdir / "index" if gdir is not None else None


def _git_says(path: Path) -> str:
    """Whether git tracks the workspace file at ``path``: ``"untracked"`` (the user's own),
    ``"tracked"`` (the repository carries it), or ``"unknown"`` (no repository, no git, or git
    refusing it): only ``"untracked"`` lets the file set user-only keys (see the module's docstring)."""
    index = _index_file(path.parent)
    key = (str(path), _mtime(path), _mtime(index) if index is not None else None)
    if key not in _TRACKED:
        try:
            done = git(path.parent, "ls-files", "--error-unmatch", "--", path.name, timeout=30)
        except NervapackError:
            _TRACKED[key] = "unknown"
        else:  # 1 with "did not match": a repository that does not track it; 128: no repository
            _TRACKED[key] = ("tracked" if done.returncode == 0 else
                             "untracked" if done.returncode == 1 and b"did not match" in done.stderr else "unknown")
    return _TRACKED[key]


def ignored_keys(workspace: Workspace) -> dict[str, str]:
    """The workspace file's user-only keys it may not set (``"section.key"`` -> why), warned
    about once per process per state of the file: all of them when git tracks the file (or
    cannot say), else the folders it names outside the root."""
    path = workspace.config_file
    data = _load(path)
    found: dict[str, tuple[str, str]] = {}
    for section, table in data.items():
        if not isinstance(table, dict):
            continue
        for key, value in table.items():
            hit = _user_only(workspace, section, key, value)
            if hit is not None:
                found[f"{section}.{key}"] = hit
    if not found:
        return {}
    said = _git_says(path)
    if said == "untracked":  # the user's own file: only a folder outside the root is refused
        found = {k: v for k, v in found.items() if tuple(k.split(".", 1)) in _INSIDE_ROOT}
        if not found:
            return {}
        why = "a workspace file may name folders inside the root only"
    elif said == "tracked":
        why = "git tracks this file (the repository carries it)"
    else:
        why = "git cannot say this file is untracked (not a git repository?), so nothing says who wrote it"
    _warn(path, found, why)
    return {k: v[1] for k, v in found.items()}


def _warn(path: Path, found: dict[str, tuple[str, str]], why: str) -> None:
    """One line on stderr per file state: which keys are ignored, why, and where they go instead."""
    mark = (str(path), _mtime(path), tuple(sorted(found)))
    if mark in _WARNED:
        return
    _WARNED.add(mark)
    keys = ", ".join(f"{k} ({reason})" for k, (_, reason) in found.items())
    envs = ", ".join(f"${env}" for env, _ in found.values())
    sys.stderr.write(f"warning: {path}: ignored {keys}: {why}. Settings that send data off the machine, change "
                     f"the review policy or reach outside the root come only from you: set "
                     f"{'them' if len(found) > 1 else 'it'} in the environment ({envs}) or in "
                     f"{user_config_path() or 'your user config file'}.\n")
    sys.stderr.flush()


def setting(workspace: Workspace, section: str, key: str, env: str,
            environ: Mapping[str, str] | None = None) -> Setting | None:
    """``$env`` when set and not empty, else ``[section] key`` of the workspace file (unless the
    trust rules ignore it there: see the module's docstring), else of the user's file, else None."""
    environ = os.environ if environ is None else environ
    if environ.get(env, "").strip():
        return Setting(environ[env].strip(), f"${env}")
    path = workspace.config_file
    table = _table(_load(path), section, path)
    if key in table and f"{section}.{key}" not in ignored_keys(workspace):
        return Setting(table[key], f"{path} [{section}] {key}")
    user = user_config_path(environ)
    table = _table(_load(user), section, user) if user is not None else {}
    if key in table:
        return Setting(table[key], f"{user} [{section}] {key}")
    return None
