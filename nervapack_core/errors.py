"""Errors meant for the user: the CLI prints their message and exits non-zero."""


class NervapackError(Exception):
    """A problem the user can act on (bad input, missing workspace, corrupt file)."""

    exit_code = 1

