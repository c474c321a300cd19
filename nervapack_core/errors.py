"""Errors meant for the user: the CLI prints their message and exits non-zero."""


class NervapackError(Exception):
    """A problem the user can act on (bad input, missing workspace, corrupt file)."""

    exit_code = 1


def database_error(path, exc: Exception, what: str = "code graph") -> NervapackError:
    """A clear error for a SQLite failure while reading: locked by another process, or corrupt."""
    text = str(exc)
    if "locked" in text or "busy" in text:
        return NervapackError(f"The {what} {path} is locked by another process ({text}). Try again in a moment.")
    return NervapackError(f"The {what} {path} cannot be read ({text}). "
                          "Run `nervapack ingest --rebuild` to build it again.")
