"""What a reader sees of the dashboard's escaped text: AppTest hands a test the Markdown source of a
label or a message, which ``md_escape`` wrote with backslashes, ``&#58;`` for colons and word
joiners; a renderer shows the text itself. Shared by the escaping unit tests and the page tests."""

from __future__ import annotations

import re

from nervapack_core.dashboard.data import WORD_JOINER


def as_read(markdown: str) -> str:
    """What a Markdown renderer shows for ``md_escape``'s output: escapes read, the entity decoded."""
    return re.sub(r"\\(.)", r"\1", markdown.replace("&#58;", ":")).replace(WORD_JOINER, "")
