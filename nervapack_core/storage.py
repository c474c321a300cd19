"""One SQLite layer for ``graph.db`` and ``memory.db``.

Both engines open their databases through this module, so they share one set of rules:

- **Writers** (:class:`Database`) run in autocommit mode and write inside
  :meth:`Database.transaction` (``BEGIN IMMEDIATE``). While another process holds the
  write lock they wait with exponential backoff and jitter, report how long they have
  waited through ``on_wait``, and give up with :class:`DatabaseLockedError` (a clear
  message, never a traceback) after ``lock_timeout`` seconds.
- **Readers** (:func:`open_reader`) open a ``mode=ro`` URI with the path quoted. They
  never migrate, never change the journal mode and never create the database, so they
  work on a read-only copy of ``.nervapack/``. An empty or missing file is an error.
- **Migrations** are numbered, forward only, recorded in one table shape
  (``schema_migrations(version, name, applied_at)``) and in ``PRAGMA user_version``,
  each applied in its own write transaction. The applied version is read *inside* that
  transaction, so two processes opening a new database at once never race.
- **Times** are stored as one UTC format, ``2026-06-01T14:30:00.000000Z`` (fixed width, so
  string order is time order).
"""

from __future__ import annotations

import os
import random
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import quote

from .errors import CorruptDatabaseError, DatabaseLockedError, NervapackError
from .settings import env_value

__all__ = [
    "UTC_FORMAT", "utc_now", "utc_iso", "Migration", "migrate", "refuse_newer", "applied_version", "Database",
    "open_reader", "reading", "read_error", "truncation", "read_header", "in_chunks", "chunked", "sql_list", "is_busy",
    "integrity_ok", "DatabaseLockedError", "CorruptDatabaseError", "LOCK_TIMEOUT_ENV", "env_lock_timeout",
    "wait_reporter",
]

T = TypeVar("T")

UTC_FORMAT = "%Y-%m-%dT%H:%M:%S.%fZ"
MAX_VARIABLES = 500  # bound parameters per IN (...) chunk (SQLite allows 32,766 since 3.32; stay far below)


def utc_iso(moment: datetime) -> str:
    """``moment`` in the stored UTC format (a naive datetime is taken as UTC).

    Always 27 characters, the year zero-padded to four digits (``0500-01-01T00:00:00.000000Z``),
    so string order is time order; ``strftime("%Y")`` does not pad years before 1000 on
    glibc, hence ``isoformat``. Raises ``OverflowError`` when the instant in UTC falls
    outside years 1-9999 (e.g. ``0001-01-01T00:00:00+01:00``).
    """
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).replace(tzinfo=None).isoformat(timespec="microseconds") + "Z"


def utc_now() -> str:
    """Now, in the stored UTC format."""
    return utc_iso(datetime.now(UTC))


LOCK_TIMEOUT_ENV = "NERVAPACK_LOCK_TIMEOUT"


def env_lock_timeout(default: float) -> float:
    """Seconds a writer waits for a lock: ``$NERVAPACK_LOCK_TIMEOUT`` when set, else ``default``."""
    raw = (env_value(LOCK_TIMEOUT_ENV) or "").strip()
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError:
        raise NervapackError(f"{LOCK_TIMEOUT_ENV} must be a number of seconds, not {raw!r}.") from None
    if not value >= 0:
        raise NervapackError(f"{LOCK_TIMEOUT_ENV} must be a number of seconds >= 0 (got {raw}).")
    return value


def wait_reporter(label: str, path: str | os.PathLike[str], say: Callable[[str], None],
                  every: float = 5.0) -> Callable[[float], None]:
    """An ``on_wait`` for :class:`Database` that says, about every ``every`` seconds from the
    first, which lock it is waiting for and for how long."""
    last: list[float] = []

    def on_wait(seconds: float) -> None:
        if not last or seconds - last[-1] >= every:
            last.append(seconds)
            say(f"waiting for the {label}'s write lock ({path}), held by another process … {seconds:.0f} s")

    return on_wait


def is_busy(exc: BaseException) -> bool:
    """True for SQLite's "database is locked" / "database is busy" errors."""
    msg = str(exc).lower()
    return isinstance(exc, sqlite3.OperationalError) and ("locked" in msg or "busy" in msg)


# (device, inode) -> a read-only descriptor kept open, least recently read first: see read_header
_HEADER_FDS: dict[tuple[int, int], int] = {}
_HEADER_FDS_LOCK = threading.Lock()
_HEADER_FDS_MAX = 64  # a process keeps a few databases open; beyond this many, the least recently read go


def read_header(p: Path) -> bytes:
    """The first 100 bytes of ``p``, through a descriptor this process keeps open.

    Closing *any* descriptor of a file drops every POSIX lock the process holds on it, the
    shared locks of its live SQLite connections included (SQLite never closes its own while
    they hold one). A writer in another process then gets its exclusive lock at close, takes
    itself for the last connection and deletes the ``-wal`` and ``-shm`` files under them:
    they read "database disk image is malformed" from then on. One descriptor per database
    file the process looks at (at most ``_HEADER_FDS_MAX``, the least recently read closed
    first); those of files deleted or replaced since are closed."""
    if not hasattr(os, "pread"):  # Windows: locks are not POSIX locks there
        with open(p, "rb") as fh:
            return fh.read(100)
    st = os.stat(p)
    with _HEADER_FDS_LOCK:
        fd = _HEADER_FDS.pop((st.st_dev, st.st_ino), None)
        if fd is None:
            for key, old in list(_HEADER_FDS.items()):  # a file gone or replaced: no lock of ours to keep
                try:
                    gone = os.fstat(old).st_nlink == 0
                except OSError:
                    gone = True
                if gone:
                    os.close(old)
                    del _HEADER_FDS[key]
            while len(_HEADER_FDS) >= _HEADER_FDS_MAX:  # the least recently read (a test run opens hundreds)
                os.close(_HEADER_FDS.pop(next(iter(_HEADER_FDS))))
            fd = os.open(p, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
            st = os.fstat(fd)  # the file opened, should it have been replaced since the stat
        _HEADER_FDS[(st.st_dev, st.st_ino)] = fd  # last: the most recently read
        return os.pread(fd, 100, 0)


def truncation(path: str | os.PathLike[str]) -> str | None:
    """Why ``path`` is a truncated SQLite file, or None: shorter than the size its own header
    declares (the "in-header database size", valid when its change counter matches).

    SQLite reads a cut-off file without complaint until a query reaches a missing page, so a
    search could silently answer from what is left; this check costs one ``stat`` and 100
    bytes. A non-empty WAL or rollback journal next to the file means a writer (or its
    recovery) may still extend it: no verdict then.
    """
    p = Path(path)
    try:
        size = p.stat().st_size
        if size < 100 or any(Path(f"{p}{x}").exists() and Path(f"{p}{x}").stat().st_size > 0
                             for x in ("-wal", "-journal")):
            return None
        head = read_header(p)
    except OSError:
        return None
    if len(head) < 100 or head[:16] != b"SQLite format 3\x00" or head[24:28] != head[92:96]:
        return None
    page_size = int.from_bytes(head[16:18], "big")
    page_size = 65536 if page_size == 1 else page_size
    declared = int.from_bytes(head[28:32], "big") * page_size
    if declared and size < declared:
        return f"{p} is truncated: it holds {size:,} bytes of the {declared:,} its header declares"
    return None


# ------------------------------------------------------------------------------ migrations
@dataclass(frozen=True)
class Migration:
    """One numbered schema step: SQL statements run in order inside one transaction."""

    version: int
    name: str
    statements: tuple[str, ...]


_MIGRATIONS_TABLE = (
    "CREATE TABLE IF NOT EXISTS schema_migrations ("
    "version INTEGER PRIMARY KEY, name TEXT NOT NULL DEFAULT '', applied_at TEXT NOT NULL)"
)


def applied_version(conn: sqlite3.Connection) -> int:
    """The newest migration applied: ``PRAGMA user_version``, or for a database written
    before user_version was kept (graph.db of release 0.1), its ``schema_migrations``."""
    version = conn.execute("PRAGMA user_version").fetchone()[0]
    if version:
        return int(version)
    has_table = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type='table' AND name='schema_migrations'").fetchone()
    if not has_table:
        return 0
    row = conn.execute("SELECT max(version) FROM schema_migrations").fetchone()
    return int(row[0] or 0)


def _upgrade_migrations_table(conn: sqlite3.Connection) -> None:
    """Give an older ``schema_migrations`` (version, applied_at) the ``name`` column."""
    cols = {r[1] for r in conn.execute("PRAGMA table_info(schema_migrations)")}
    if cols and "name" not in cols:
        conn.execute("ALTER TABLE schema_migrations ADD COLUMN name TEXT NOT NULL DEFAULT ''")


def refuse_newer(path: str | os.PathLike[str], version: int, known: int) -> None:
    """Raise the one message for a database written by a newer release (schema ``version`` >
    ``known``): it is never misread, and never changed."""
    if version > known:
        raise NervapackError(
            f"{path} was written by a newer NervaPack (schema {version} > {known}); it was left untouched. "
            "Upgrade nervapack-core to open it.")


def migrate(db: Database, migrations: Sequence[Migration]) -> list[int]:
    """Apply every migration newer than the database, each in its own write transaction.

    Returns the versions applied. A database newer than this release is refused with a
    clear message rather than misread.
    """
    known = migrations[-1].version if migrations else 0
    for expected, m in enumerate(migrations, start=1):
        if m.version != expected:
            raise ValueError(f"migrations must be numbered 1, 2, 3, ...: got {m.version} at position {expected}")
    current = applied_version(db.conn)
    refuse_newer(db.path, current, known)
    applied: list[int] = []
    if current == known:
        return applied
    for m in migrations:
        if m.version <= current:
            continue
        with db.transaction() as conn:
            if applied_version(conn) >= m.version:  # another process got there first
                continue
            conn.execute(_MIGRATIONS_TABLE)
            _upgrade_migrations_table(conn)
            for statement in m.statements:
                conn.execute(statement)
            conn.execute("INSERT OR REPLACE INTO schema_migrations(version, name, applied_at) VALUES (?, ?, ?)",
                         (m.version, m.name, utc_now()))
            conn.execute(f"PRAGMA user_version = {int(m.version)}")
            applied.append(m.version)
    return applied


# ------------------------------------------------------------------------------ writer
class Database:
    """A read-write connection to one SQLite file, with busy retry and transactions.

    ``label`` names the database in messages ("code graph", "memory database").
    ``on_wait(seconds_waited)`` is called about once a second while another process
    holds the write lock, so a command can show that it is waiting and why.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        label: str = "database",
        migrations: Sequence[Migration] = (),
        lock_timeout: float = 60.0,
        on_wait: Callable[[float], None] | None = None,
        wal: bool = True,
        hint: str = "",
    ) -> None:
        self.path = Path(path)
        self.label = label
        self.hint = hint  # how to recover a damaged file, said with every "damaged" error
        self.lock_timeout = float(lock_timeout)
        self.on_wait = on_wait
        if self.path.is_dir():
            raise NervapackError(f"{self.path} is a folder, not a {label} file.")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise NervapackError(f"Cannot create the folder for {self.path}: {exc}") from None
        cut = truncation(self.path)
        if cut:
            raise CorruptDatabaseError(f"{cut}: it is damaged.{' ' + hint if hint else ''}")
        try:
            self.conn = sqlite3.connect(str(self.path), timeout=self.lock_timeout, isolation_level=None,
                                        check_same_thread=False)
        except sqlite3.Error as exc:
            raise NervapackError(f"Cannot open the {label} {self.path}: {exc}") from None
        self.conn.row_factory = sqlite3.Row
        try:
            # SQLite's own busy handler waits in short slices; the loop in retry() waits
            # the rest, so it can report progress and stop with a clear message.
            self.conn.execute("PRAGMA busy_timeout = 1000")
            if migrations:
                # before anything writes (switching to WAL rewrites the header of a rollback-journal
                # file): a database of a newer release must be left byte for byte as it is
                refuse_newer(self.path, self.retry(lambda: applied_version(self.conn)), migrations[-1].version)
            if wal:
                self.retry(lambda: self.conn.execute("PRAGMA journal_mode = WAL").fetchone())
            self.conn.execute("PRAGMA synchronous = NORMAL")
            self.conn.execute("PRAGMA temp_store = MEMORY")
            if migrations:
                migrate(self, migrations)
        except sqlite3.DatabaseError as exc:
            self.conn.close()
            raise self.error(exc) from None
        except BaseException:
            self.conn.close()
            raise

    # -- errors and retry ----------------------------------------------------------------
    def error(self, exc: sqlite3.Error) -> NervapackError:
        """The user-facing error for a SQLite failure on this database."""
        if is_busy(exc):
            return DatabaseLockedError(
                f"The {self.label} {self.path} stayed locked by another process for "
                f"{self.lock_timeout:.0f} s; try again when it has finished.")
        if isinstance(exc, sqlite3.DatabaseError) and not isinstance(exc, sqlite3.OperationalError) \
                or "malformed" in str(exc) or "not a database" in str(exc):
            return CorruptDatabaseError(
                f"{self.path} is not a usable {self.label}: {exc}.{' ' + self.hint if self.hint else ''}")
        return NervapackError(f"{self.label} error ({self.path}): {exc}")

    def retry(self, fn: Callable[[], T]) -> T:
        """``fn()``, retried with backoff while the database is busy, up to ``lock_timeout``."""
        start = time.monotonic()
        delay, reported = 0.005, 0.0
        while True:
            try:
                return fn()
            except sqlite3.OperationalError as exc:
                waited = time.monotonic() - start
                if not is_busy(exc) or waited > self.lock_timeout:
                    raise
                if self.on_wait is not None and waited - reported >= 1.0:
                    reported = waited
                    self.on_wait(waited)
                time.sleep(delay + random.random() * delay)
                delay = min(delay * 2, 0.25)

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """A ``BEGIN IMMEDIATE`` transaction: committed when the block ends, rolled back
        when it raises. Waiting for the write lock follows :meth:`retry`."""
        try:
            self.retry(lambda: self.conn.execute("BEGIN IMMEDIATE"))
        except sqlite3.Error as exc:
            raise self.error(exc) from None
        try:
            yield self.conn
            self.conn.execute("COMMIT")
        except sqlite3.Error as exc:
            self._rollback()
            raise self.error(exc) from None
        except BaseException:
            self._rollback()
            raise

    def _rollback(self) -> None:
        try:
            self.conn.execute("ROLLBACK")
        except sqlite3.Error:
            pass

    @contextmanager
    def snapshot(self) -> Iterator[sqlite3.Connection]:
        """A read transaction: every query in the block sees the same committed state."""
        try:
            self.retry(lambda: self.conn.execute("BEGIN"))
            try:
                yield self.conn
            finally:
                self._rollback()
        except sqlite3.Error as exc:
            raise self.error(exc) from None

    def checkpoint(self) -> None:
        """Fold the WAL into the main file (best effort), so a copy of the folder is whole."""
        try:
            self.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
        except sqlite3.Error:
            pass

    def close(self) -> None:
        try:
            self.conn.close()
        except sqlite3.Error:
            pass

    def __enter__(self) -> Database:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


# ------------------------------------------------------------------------------ reader
def open_reader(path: str | os.PathLike[str], *, label: str = "database", timeout: float = 10.0,
                required_table: str | None = None, hint: str = "") -> sqlite3.Connection:
    """A read-only connection (``mode=ro``): never creates, migrates or changes the file.

    When the folder is read-only and SQLite cannot create the WAL index (``-shm``) next to
    a database that has no pending WAL, the file is opened ``immutable`` instead: nothing
    can be writing it then. ``required_table`` must exist, else the database is reported
    as not built yet. Raises :class:`NervapackError` with a clear message otherwise (``hint``
    tells how to rebuild a damaged file).
    """
    p = Path(path)
    if not p.exists():
        raise NervapackError(f"No {label} at {p}.")
    if p.is_dir():
        raise NervapackError(f"{p} is a folder, not a {label} file.")
    cut = truncation(p)
    if cut:
        raise CorruptDatabaseError(f"{cut}: it is damaged.{' ' + hint if hint else ''}")
    uri = f"file:{quote(str(p.resolve()))}?mode=ro"
    try:
        conn = _connect_ro(uri, timeout, required_table, label, p)
    except sqlite3.OperationalError as exc:
        wal = Path(str(p) + "-wal")
        if "unable to open" in str(exc) and (not wal.exists() or wal.stat().st_size == 0):
            try:
                conn = _connect_ro(uri + "&immutable=1", timeout, required_table, label, p)
            except sqlite3.DatabaseError as exc2:
                raise read_error(exc2, p, label, hint) from None
        else:
            raise read_error(exc, p, label, hint) from None
    except sqlite3.DatabaseError as exc:
        raise read_error(exc, p, label, hint) from None
    return conn


def _connect_ro(uri: str, timeout: float, required_table: str | None, label: str, path: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(uri, uri=True, timeout=timeout, check_same_thread=False, isolation_level=None)
    try:
        conn.row_factory = sqlite3.Row
        conn.execute(f"PRAGMA busy_timeout = {int(timeout * 1000)}")
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    except BaseException:
        conn.close()
        raise
    if required_table and required_table not in tables:
        conn.close()
        raise NervapackError(f"The {label} at {path} has not been built yet (it is empty).")
    return conn


def read_error(exc: BaseException, path: str | os.PathLike[str], label: str = "database",
               hint: str = "") -> NervapackError:
    """The user-facing error for a SQLite failure while *reading*: locked by another process
    (try again), or damaged (``hint`` says how to rebuild). Never "no results"."""
    if is_busy(exc):
        return DatabaseLockedError(
            f"The {label} {path} is locked by another process ({exc}); try again when it has finished.")
    return CorruptDatabaseError(
        f"{path} is not a readable {label}: it cannot be read ({exc}).{' ' + hint if hint else ''}")


@contextmanager
def reading(path: str | os.PathLike[str], **kwargs: Any) -> Iterator[sqlite3.Connection]:
    """:func:`open_reader` as a context manager; the connection is closed afterwards."""
    conn = open_reader(path, **kwargs)
    try:
        yield conn
    finally:
        conn.close()


def integrity_ok(path: str | os.PathLike[str]) -> bool:
    """False only when SQLite itself says the file is damaged or not a database.

    A locked or busy file is *not* damaged: a live database of another process must
    never be moved aside. A file shorter than its header declares is damaged (:func:`truncation`).
    """
    if truncation(path):
        return False
    try:
        conn = sqlite3.connect(f"file:{quote(str(Path(path).resolve()))}?mode=ro", uri=True, timeout=30)
    except sqlite3.OperationalError as exc:
        return is_busy(exc) or "unable to open" in str(exc)
    except sqlite3.DatabaseError:
        return False
    try:
        row = conn.execute("PRAGMA quick_check").fetchone()
        return bool(row) and row[0] == "ok"
    except sqlite3.OperationalError as exc:
        return is_busy(exc) or "unable to open" in str(exc)
    except sqlite3.DatabaseError:
        return False
    finally:
        conn.close()


# ------------------------------------------------------------------------------ helpers
def sql_list(values: Iterable[str]) -> str:
    """``('a', 'b')``: constant names (kinds, statuses — never user input) as an SQL list."""
    return "(" + ", ".join(f"'{v}'" for v in values) + ")"


def chunked(items: Iterable[T], size: int = MAX_VARIABLES) -> Iterator[list[T]]:
    """``items`` in lists of at most ``size``."""
    chunk: list[T] = []
    for item in items:
        chunk.append(item)
        if len(chunk) >= size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def in_chunks(conn: sqlite3.Connection, sql: str, values: Iterable[Any], params: Sequence[Any] = (),
              size: int = MAX_VARIABLES) -> list[sqlite3.Row]:
    """Run ``sql`` once per chunk of ``values`` and return all rows.

    ``sql`` holds ``{marks}`` where the ``IN (...)`` placeholders go; ``params`` are
    bound before the chunk's values. Duplicate values are sent once.
    """
    rows: list[sqlite3.Row] = []
    for chunk in chunked(dict.fromkeys(values), size):
        rows.extend(conn.execute(sql.format(marks=",".join("?" * len(chunk))), (*params, *chunk)).fetchall())
    return rows
