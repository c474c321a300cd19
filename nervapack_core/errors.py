"""Errors meant for the user: the CLI prints their message and exits non-zero."""


class NervapackError(Exception):
    """A problem the user can act on (bad input, missing workspace, corrupt file)."""

    exit_code = 1



def brief(message: str, limit: int = 2000) -> str:
    """``message`` cut to about ``limit`` characters, its start and end kept: an error that quotes
    the user's input back (a 1 MB argument) must stay a message, not a megabyte."""
    if len(message) <= limit:
        return message
    head, tail = message[: limit * 3 // 4], message[-(limit // 4):]
    return f"{head}… ({len(message) - len(head) - len(tail):,} characters left out) …{tail}"
