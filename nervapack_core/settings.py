"""A workspace's settings: ``.nervapack/config.toml``, read with ``tomllib``.

The file is optional; every setting has a default and an environment variable that
overrides it (the variable wins, so one shell or CI job can point elsewhere without
editing the file). Known settings::

    [vectors]
    url = "http://127.0.0.1:8000"   # a Chroma server instead of .nervapack/chroma/ ($NERVAPACK_CHROMA_URL)

The file lives beside the graph it configures, so it is per checkout and per machine,
like the rest of ``.nervapack/``.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .errors import NervapackError
from .workspace import Workspace

__all__ = ["Setting", "read_config", "setting", "CONFIG_NAME"]

CONFIG_NAME = "config.toml"


@dataclass(frozen=True)
class Setting:
    """A setting's value and where it came from (for messages: "set by ...")."""

    value: Any
    origin: str


def read_config(workspace: Workspace) -> dict[str, Any]:
    """The parsed ``.nervapack/config.toml`` ({} when there is none)."""
    path = workspace.dir / CONFIG_NAME
    try:
        with open(path, "rb") as fh:
            return tomllib.load(fh)
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise NervapackError(f"Cannot read {path}: {exc.strerror or exc}.") from None
    except tomllib.TOMLDecodeError as exc:
        raise NervapackError(f"{path} is not valid TOML ({exc}).") from None


def setting(workspace: Workspace, section: str, key: str, env: str,
            environ: Mapping[str, str] | None = None) -> Setting | None:
    """``env`` when set and not empty, else ``[section] key`` of the config file, else None."""
    environ = os.environ if environ is None else environ
    if environ.get(env, "").strip():
        return Setting(environ[env].strip(), f"${env}")
    table = read_config(workspace).get(section, {})
    path = workspace.dir / CONFIG_NAME
    if not isinstance(table, dict):
        raise NervapackError(f"{path}: [{section}] must be a table.")
    if key not in table:
        return None
    return Setting(table[key], f"{path} [{section}] {key}")
