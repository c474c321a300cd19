"""Every setting NervaPack reads, declared once (:data:`SETTINGS`), and whom each is taken from.

:data:`SETTINGS` is the table: per setting its environment variable, its TOML section and key
(None: the environment only), its default, its type, whether only the user may set it, and
one line saying what it does. ``docs/generate.py`` writes the configuration reference from
it; :func:`setting` reads a file-or-environment setting by the table's rules, :func:`env_value`
an environment-only one (every ``NERVAPACK_*`` variable the package reads is read through one
of the two, and names an entry of the table).

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
from typing import TYPE_CHECKING, Any

from .errors import NervapackError
from .gitrepo import git

if TYPE_CHECKING:
    from .workspace import Workspace

__all__ = ["Setting", "SettingSpec", "SETTINGS", "spec", "default_of", "env_value", "read_config", "setting",
           "user_config_path", "ignored_keys", "CONFIG_NAME", "USER_CONFIG_ENV", "LLM_GROUP", "ENV_GROUP",
           "OWN_GROUP"]

CONFIG_NAME = "config.toml"  # the workspace's .nervapack/config.toml and the user's ~/.config/nervapack/config.toml
USER_CONFIG_ENV = "NERVAPACK_USER_CONFIG"


@dataclass(frozen=True)
class SettingSpec:
    """One setting: where it is read from, its default, who may set it, what it does.

    ``section``/``key``: its place in a TOML file (None: the environment only). ``default``:
    the value when nothing sets it (None when the default is worked out at run time:
    ``default_doc`` says how). ``user_only``: why only the user may set it (see the module's
    docstring), or "" for anyone; ``inside_root``: a folder a workspace file may name only
    inside the root. ``doc``: what it does (the reference page's line); ``group``: its
    section of that page."""

    env: str
    section: str | None
    key: str | None
    default: Any
    default_doc: str
    type: type
    doc: str
    user_only: str = ""
    inside_root: bool = False
    group: str = "Settings"


LLM_GROUP = "The optional LLM binding"
ENV_GROUP = "Environment only"
OWN_GROUP = "Set by NervaPack for its own processes"


def _llm(key: str, default: Any, kind: type, doc: str, default_doc: str | None = None) -> SettingSpec:
    return SettingSpec(f"NERVAPACK_LLM_{key.upper()}", "llm", key, default,
                       default_doc if default_doc is not None else f"`{default}`", kind, doc, group=LLM_GROUP)


#: every setting, in the order the reference page lists them
SETTINGS: tuple[SettingSpec, ...] = (
    SettingSpec("NERVAPACK_CHROMA_URL", "vectors", "url", None, "none: the embedded store in `.nervapack/chroma/`",
                str, "a Chroma server (`http://` or `https://`, a host and a port) that holds the vectors instead "
                "(see [A shared vector server](../guides/vector-server.md))",
                user_only="sends the code's text to that server"),
    SettingSpec("NERVAPACK_AGENT_DECISIONS", "memory", "agent_decisions", "proposed", "`proposed`", str,
                "the status of decisions agents store through MCP: `proposed` (wait in the review queue) or "
                "`accepted` (see [Decisions for a team](../guides/decisions.md))",
                user_only="changes the review policy"),
    SettingSpec("NERVAPACK_ADR_DIR", "memory", "adr_dir", None,
                "the first of `docs/adr`, `doc/adr`, `docs/decisions`, `docs/architecture/decisions` "
                "holding Markdown", str, "the ADR folder `nervapack sync` re-imports (`false` turns it off)",
                inside_root=True),
    SettingSpec("NERVAPACK_ADR_NAMESPACE", "memory", "adr_namespace", "default", "`default`", str,
                "the memory namespace the ADR folder imports into"),
    SettingSpec("NERVAPACK_LLM_MODEL", "llm", "model", None, "the provider's own (`llama3` for Ollama)", str,
                "the model of `--llm` when `--llm-model` is not given"),
    # the LLM binding's request settings (LLMSettings takes its defaults from here)
    _llm("concurrency", 4, int, "requests in flight at once (2 for Ollama: one local GPU)", "`4` (2 for Ollama)"),
    _llm("timeout", 60.0, float, "seconds for a whole request: connecting, waiting and reading the reply together"),
    _llm("retries", 3, int, "retries of a 429, a 5xx or a timeout, with exponential backoff"),
    _llm("backoff", 1.0, float, "seconds before the first retry (doubled each time; the server's `Retry-After` wins)"),
    _llm("max_tokens", 400, int, "the most output tokens asked for per section"),
    _llm("min_confidence", 0.5, float, "links under this confidence are not drawn"),
    # a JSON answer of a few hundred tokens is a few KB: 4 MiB is room for any honest reply
    _llm("max_reply_bytes", 4 * 1024 * 1024, int,
         "a longer reply is refused (by its `Content-Length` or as soon as the cap is passed)"),
    SettingSpec("NERVAPACK_LOCK_TIMEOUT", None, None, None,
                "900 s waiting for another ingest, 60 s for a database lock", float,
                "seconds a writer waits for another process's lock before it stops with a message", group=ENV_GROUP),
    SettingSpec("NERVAPACK_HOME", None, None, None, "the nearest folder above the current one holding `.nervapack/`",
                str, "the workspace root, instead of searching for it", group=ENV_GROUP),
    SettingSpec("NERVAPACK_MEMORY_DB", None, None, None,
                default_doc="the nearest `.nervapack/memory.db`, else `~/.nervapack/memory.db`", type=str,
                doc="the memory database (the CLI's `--db` wins over it)", group=ENV_GROUP),
    SettingSpec(USER_CONFIG_ENV, None, None, None,
                "`$XDG_CONFIG_HOME/nervapack/config.toml`, else `~/.config/nervapack/config.toml`", str,
                "your own settings file", group=ENV_GROUP),
    SettingSpec("NERVAPACK_PREFETCH", None, None, "1", "on (Linux)", str,
                "`0` runs a CLI query's vector search in the same process instead of a forked helper "
                "(same answer either way)", group=ENV_GROUP),
    SettingSpec("NERVAPACK_DASHBOARD_ROOT", None, None, None, "set by `nervapack serve`", str,
                "the workspace the dashboard shows (`nervapack serve PATH` sets it for its Streamlit process)",
                group=OWN_GROUP),
    SettingSpec("NERVAPACK_DASHBOARD_MEMORY_DB", None, None, None, "set by `nervapack serve`", str,
                "the memory database the dashboard reads", group=OWN_GROUP),
    SettingSpec("NERVAPACK_DASHBOARD_DEMO", None, None, None, "set by `nervapack serve --demo`", str,
                "the dashboard says on every page that it shows the demo workspace", group=OWN_GROUP),
    SettingSpec("NERVAPACK_TEST_KILL_AFTER", None, None, None, "unset", str,
                "for the crash tests only: the process SIGKILLs itself at the named fault point", group=OWN_GROUP),
)
_BY_ENV = {s.env: s for s in SETTINGS}
_BY_KEY = {(s.section, s.key): s for s in SETTINGS if s.section is not None}


def spec(env_or_section: str, key: str | None = None) -> SettingSpec:
    """The entry of :data:`SETTINGS` for an environment variable, or for ``section, key``;
    a name the table does not declare is a programming error (``KeyError``)."""
    if key is None:
        return _BY_ENV[env_or_section]
    return _BY_KEY[env_or_section, key]


def default_of(env: str) -> Any:
    """The declared default of the setting read from ``$env``."""
    return _BY_ENV[env].default


def env_value(env: str, environ: Mapping[str, str] | None = None) -> str | None:
    """``$env`` as set (None when unset) — the one raw read of a ``NERVAPACK_*`` variable; it
    must be declared in :data:`SETTINGS`. Each caller keeps its own rule for an empty value."""
    _BY_ENV[env]  # declared, or KeyError
    return (os.environ if environ is None else environ).get(env)


# user-only settings: (section, key) -> (its environment variable, why only the user may set it)
_USER_ONLY: dict[tuple[str, str], tuple[str, str]] = {
    (s.section, s.key): (s.env, s.user_only) for s in SETTINGS if s.user_only and s.section and s.key}
# folders a workspace file may name only inside the root
_INSIDE_ROOT: dict[tuple[str, str], str] = {
    (s.section, s.key): s.env for s in SETTINGS if s.inside_root and s.section and s.key}
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
        named = (env_value(USER_CONFIG_ENV, environ) or "").strip()
        if named:
            return Path(named).expanduser()
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


def setting(workspace: Workspace, section: str, key: str, env: str | None = None,
            environ: Mapping[str, str] | None = None) -> Setting | None:
    """``$env`` when set and not empty, else ``[section] key`` of the workspace file (unless the
    trust rules ignore it there: see the module's docstring), else of the user's file, else None
    (the caller applies the default: :func:`default_of`). ``env``: default the one
    :data:`SETTINGS` declares for ``[section] key`` (a key it does not declare is a ``KeyError``)."""
    declared = spec(section, key)
    env = declared.env if env is None else env
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
