"""Every error NervaPack raises for the user, in one tree.

The CLI and the MCP servers print a :class:`NervapackError`'s message and exit with its
``exit_code`` (no traceback): the message is the promise, so each one says what went wrong
and what to do. Catch the class, not the text::

    NervapackError                 anything the user can act on
    ├── DatabaseLockedError        another process holds a database's write lock
    ├── CorruptDatabaseError       a database file is not usable SQLite
    │   └── CorruptGraphError      ... and that file is graph.db
    ├── NoGraphError               no code graph yet (missing, empty, first ingest unfinished)
    ├── GraphUnreadable            the dashboard cannot read the graph (any of the above)
    ├── VectorServerError          the configured Chroma server cannot be reached or failed
    ├── VectorStoreDamaged         the embedded vector store's files cannot be opened
    ├── DamagedModel               the embedding model gives non-finite vectors
    ├── EndpointError              an LLM endpoint cannot answer at all
    └── ConsentRefused             a remote LLM endpoint was not agreed to: nothing was sent

The modules that raise them import them from here (and their old homes still re-export
them, so ``from nervapack_core.code.graph.reader import NoGraphError`` keeps working).

Not here, on purpose: exceptions that never reach the user, because the module that raises
them catches them and turns them into a retry, a skip with a reason or a fallback —
``Transient`` and ``RequestFailed`` (``code/llm/providers.py``), ``ReplyRefused``
(``code/llm/limits.py``), ``MalformedAnswer`` (``code/llm/prompt.py``), ``AdrSkip``
(``memory/adr/parse.py``) and ``EmbedderUnavailable`` (``code/vectors/embeddings.py``). They are
control flow local to one mechanism, and ``tests/test_ground_floor.py`` lists each with
that reason.
"""

from __future__ import annotations

from typing import Protocol


class _SendSummary(Protocol):
    """What :class:`ConsentRefused` reads of :class:`~nervapack_core.code.llm.consent.SendSummary`
    (a protocol, so the ground floor does not import the LLM package)."""

    @property
    def host(self) -> str: ...

    def describe(self) -> str: ...

__all__ = [
    "NervapackError", "DatabaseLockedError", "CorruptDatabaseError", "CorruptGraphError", "NoGraphError",
    "GraphUnreadable", "VectorServerError", "VectorStoreDamaged", "DamagedModel", "EndpointError",
    "ConsentRefused", "brief",
]


class NervapackError(Exception):
    """A problem the user can act on (bad input, missing workspace, corrupt file).

    Raised directly for bad arguments (a zero budget, an unknown kind); the subclasses name the
    cases a caller may want to tell apart. The message says what to do next."""

    exit_code = 1


class DatabaseLockedError(NervapackError):
    """Another process kept the database's write lock longer than we were willing to wait.

    Raised by the storage layer and the ingest lock; the message names the file (and the holder
    when known). Wait for the other ingest or sync to finish, or stop it, and run again."""


class CorruptDatabaseError(NervapackError):
    """The file exists but is not a usable SQLite database.

    Raised when a database is opened or read; the message says how to rebuild it (the graph is
    derived data: ``nervapack ingest --rebuild``; the memory: restore a backup, or move it aside
    and run ``nervapack memory init``)."""


class CorruptGraphError(CorruptDatabaseError):
    """``graph.db`` exists but SQLite cannot read it as a database.

    Raised by the graph writer when it opens the file; run ``nervapack ingest --rebuild``."""


class NoGraphError(NervapackError):
    """There is no usable code graph yet: missing, empty, or its first ingest never finished.

    Raised by :class:`~nervapack_core.code.analysis.reader.GraphReader` and everything that reads the
    graph (query, explore, the MCP tools); run ``nervapack ingest`` in the repository."""


class GraphUnreadable(NervapackError):
    """The graph is missing, unbuilt, locked or damaged: the dashboard page shows the message.

    Raised by the dashboard's loaders in place of the error above it (its text kept), so a page
    catches one class; do what the message says (ingest, wait, or rebuild)."""


class VectorServerError(NervapackError):
    """The Chroma server named by the settings cannot be reached or failed.

    Raised when vectors are written or searched; start the server, fix the URL in the settings,
    or unset it to use the embedded store."""


class VectorStoreDamaged(NervapackError):
    """The embedded store's files cannot be opened (garbage, truncated).

    Raised when the vector index is opened; ``nervapack ingest --rebuild`` recovers."""


class DamagedModel(NervapackError):
    """The model loaded but gave a vector that is not finite: it is damaged in a way its checks did not see.

    Raised while embedding; reinstall the model package (the message gives the command)."""


class EndpointError(NervapackError):
    """The endpoint cannot answer at all (unreachable, key refused, unknown model): stop asking.

    Raised by the LLM providers during ``--llm`` doc binding; fix the URL, key or model. The
    graph keeps its deterministic doc links meanwhile."""


class ConsentRefused(NervapackError):
    """A remote endpoint and no agreement to send to it (or the user said no): nothing was sent.

    Raised before the first request of ``--llm`` binding to a non-local endpoint; answer the
    question in a terminal, or pass ``--yes`` to agree (scripts, CI)."""

    def __init__(self, summary: _SendSummary, declined: bool = False):
        why = ("you declined" if declined else f"this workspace has not agreed to send to {summary.host} yet "
               "(run it in a terminal to answer the question, or pass --yes to agree: scripts, CI)")
        super().__init__(f"{summary.describe()} Nothing was sent: {why}. The graph keeps its deterministic doc "
                         "links.")
        self.summary = summary


def brief(message: str, limit: int = 2000) -> str:
    """``message`` cut to about ``limit`` characters, its start and end kept: an error that quotes
    the user's input back (a 1 MB argument) must stay a message, not a megabyte."""
    if len(message) <= limit:
        return message
    head, tail = message[: limit * 3 // 4], message[-(limit // 4):]
    return f"{head}… ({len(message) - len(head) - len(tail):,} characters left out) …{tail}"
