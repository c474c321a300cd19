"""What both command lines share: the click group that turns user errors into messages,
the shared options, and the one ``emit`` that prints JSON or the human rendering.

One style for both CLIs: an option decorator records its value in ``ctx.meta`` (shared
by a group and its subcommands), so the memory CLI's ``--db/--namespace/--json`` work
before the command name *and* after it, and ``emit`` knows whether ``--json`` was given
without every command passing the flag along.
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from ..errors import NervapackError, brief

__all__ = [
    "UserErrorGroup",
    "console",
    "db_option",
    "echo",
    "emit",
    "existing_folder",
    "json_mode",
    "json_option",
    "markup_escape",
    "memory_db",
    "memory_namespace",
    "memory_options",
    "namespace_option",
    "path_option",
    "read_stdin",
    "safe_text",
    "text_arg",
    "to_json",
]

# ctx.meta keys; namespaced because ctx.meta is shared with click itself and extensions
_JSON = "nervapack.json"
_DB = "nervapack.memory_db"
_NS = "nervapack.namespace"

PATH_HELP = "Workspace root (default: search upwards)."
JSON_HELP = "Print machine-readable JSON."
DB_HELP = ("Memory database (default: $NERVAPACK_MEMORY_DB, nearest .nervapack/memory.db, "
           "~/.nervapack/memory.db).")
NAMESPACE_HELP = "Namespace to work in (default: 'default')."


# C0 controls but tab and newline, DEL and the C1 controls: ESC[2J clears a screen, ESC]0;…BEL sets a window
# title, CSI (\x9b) is ESC[ in one byte. File names, code and memory content are data, never terminal commands.
_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_C1_OR_DEL = re.compile("[\x7f-\x9f]")


def _visible(match: re.Match) -> str:
    code = ord(match.group())
    if code < 0x20:
        return chr(0x2400 + code)  # the Control Pictures block: ESC -> ␛, BEL -> ␇, CR -> ␍
    return "\u2421" if code == 0x7F else f"\\x{code:02x}"


def safe_text(text: str) -> str:
    """``text`` with every control character but tab and newline made visible (``\x1b`` -> ``␛``), so
    that printing data on a terminal never moves the cursor, clears the screen or sets the title."""
    return _CONTROLS.sub(_visible, text)


def markup_escape(text: Any) -> str:
    """``text`` as literal text inside rich markup: a file name like ``[/]x.py`` is a name, not a tag."""
    from rich.markup import escape

    return escape(str(text))


def echo(message: Any = None, **kwargs: Any) -> None:
    """``click.echo`` for people: control characters in the text are made visible (:func:`safe_text`)."""
    click.echo(safe_text(message) if isinstance(message, str) else message, **kwargs)


class UserErrorGroup(click.Group):
    """Turns ``NervapackError`` (and Ctrl-C, and a database that cannot be read) into a message and an
    exit code, never a traceback."""

    def parse_args(self, ctx, args):
        # argv is decoded with surrogateescape: an argument that is not valid UTF-8 holds lone surrogates,
        # which every later encode (SQLite, JSON history, the terminal) would turn into a traceback
        for arg in args:
            if not arg.isascii():
                try:
                    arg.encode("utf-8")
                except UnicodeEncodeError:
                    shown = arg.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
                    raise click.UsageError(f"the argument '{shown}' is not valid UTF-8; give it in UTF-8.",
                                           ctx) from None
        return super().parse_args(ctx, args)

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except NervapackError as exc:
            echo(f"Error: {brief(str(exc))}", err=True)
            ctx.exit(getattr(exc, "exit_code", 1))
        except sqlite3.DatabaseError as exc:  # a read path without its own message: still no traceback
            echo(f"Error: a NervaPack database cannot be read ({exc}). If another process holds it, "
                       "try again; if it is corrupt, run `nervapack ingest --rebuild` (code graph).", err=True)
            ctx.exit(1)
        except OSError as exc:  # a file the system refuses (name too long, no permission, disk full): said
            if isinstance(exc, BrokenPipeError):  # the reader went away (`| head`): nothing left to tell
                ctx.exit(1)
            name = exc.filename
            name = os.fsdecode(name) if isinstance(name, str | bytes) else str(name or "")
            where = f": {brief(name.encode('utf-8', 'surrogateescape').decode('utf-8', 'backslashreplace'), 200)}" \
                if name else ""
            echo(f"Error: {exc.strerror or exc}{where}", err=True)
            ctx.exit(1)
        except OverflowError as exc:  # a number past what SQLite or C can hold, on a path without its own check
            echo(f"Error: a number given is too large ({exc}); give a smaller one.", err=True)
            ctx.exit(1)
        except RecursionError:  # e.g. a deeply nested JSON value in an argument or a file: still no traceback
            echo("Error: the input is nested too deeply to be processed.", err=True)
            ctx.exit(1)
        except KeyboardInterrupt:
            click.echo("Interrupted.", err=True)
            ctx.exit(130)


def _remember(key: str):
    """A callback that records a given (truthy) value in ``ctx.meta``: a value given after the
    command name overrides one given to the group, an absent one leaves the group's in place."""

    def callback(ctx: click.Context, param: click.Parameter, value):
        if value:
            ctx.meta[key] = value
        return value

    return callback


def json_option(help: str = JSON_HELP, *, expose: bool = True) -> Callable:
    """``--json``: machine-readable output through ``emit``. With ``expose`` the command also
    receives it as ``as_json`` (the code CLI's commands use it, e.g. to hide progress)."""
    return click.option("--json", "as_json", is_flag=True, default=False, help=help, expose_value=expose,
                        callback=_remember(_JSON))


def path_option(help: str = PATH_HELP) -> Callable:
    """``--path DIR``: the workspace root of the code CLI's commands (passed as ``path``)."""
    return click.option("--path", type=click.Path(file_okay=False), default=None, help=help)


def db_option(help: str = DB_HELP) -> Callable:
    """``--db PATH``: the memory database (read back with ``memory_db()``)."""
    return click.option("--db", default=None, metavar="PATH", help=help, expose_value=False,
                        callback=_remember(_DB))


def namespace_option(help: str = NAMESPACE_HELP) -> Callable:
    """``--namespace/-n NS``: the memory namespace (read back with ``memory_namespace()``)."""
    return click.option("--namespace", "-n", default=None, metavar="NS", help=help, expose_value=False,
                        callback=_remember(_NS))


def memory_options(f: Callable) -> Callable:
    """``--db``, ``--namespace`` and ``--json`` for a memory command (also accepted by the group)."""
    f = db_option()(f)
    f = namespace_option()(f)
    return json_option(expose=False)(f)


def _meta() -> dict:
    ctx = click.get_current_context(silent=True)
    return ctx.meta if ctx is not None else {}


def json_mode() -> bool:
    """Whether ``--json`` was given to this command or its group."""
    return bool(_meta().get(_JSON))


def memory_db() -> str | None:
    """The ``--db`` given to this command or its group (None: the store's lookup order decides)."""
    return _meta().get(_DB)


def memory_namespace() -> str:
    """The ``--namespace`` given to this command or its group, else ``"default"``."""
    return _meta().get(_NS) or "default"


def to_json(data: Any) -> str:
    """The JSON both CLIs print: indented, UTF-8 as is, anything unusual (paths, dates) as a string."""
    # json.dumps escapes C0 controls; DEL and the C1 controls (\x9b is a one-byte ESC[) as well, so the
    # JSON stays exact and no raw control byte reaches a terminal
    text = json.dumps(data, indent=2, ensure_ascii=False, default=str)
    return _C1_OR_DEL.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def console(stderr: bool = False):
    """A rich console for people (no automatic highlighting of numbers and paths) that makes the control
    characters of the printed text visible (:func:`safe_text`); its own styling still reaches the terminal."""
    from rich.console import Console
    from rich.segment import Segment

    class SafeConsole(Console):
        def _render_buffer(self, buffer):
            # the one place rich turns segments into output: text segments are data, control segments and
            # styles are rich's own escape codes (kept)
            return super()._render_buffer(
                Segment(safe_text(text), style, None) if control is None and text else Segment(text, style, control)
                for text, style, control in buffer)

    return SafeConsole(stderr=stderr, highlight=False)


def emit(data: Any, human: Callable[[Any], Any] | str | None) -> None:
    """Print ``data`` as JSON when ``--json`` is set; otherwise render it for people.

    ``human`` is called with ``data`` and may print by itself (returning None), or return a
    string (echoed as is) or a rich renderable (printed on a console). A plain string is
    echoed as is.
    """
    if json_mode():
        click.echo(to_json(data))
        return
    out = human(data) if callable(human) else human
    if out is None or out == "":
        return
    if isinstance(out, str):
        echo(out)
    else:
        console().print(out)


def read_stdin() -> str:
    """Standard input as UTF-8 text; anything else is a clear error (it could never be stored or shown)."""
    stream = getattr(sys.stdin, "buffer", None)
    if stream is None:
        return sys.stdin.read()
    try:
        return stream.read().decode("utf-8")
    except UnicodeDecodeError as exc:
        raise NervapackError(f"standard input is not valid UTF-8 (byte {exc.start}): give the text in UTF-8.") from None


def text_arg(text: str) -> str:
    """A text argument, or standard input when it is ``-`` (text longer than a command line holds:
    Linux refuses one argument over 128 KiB before the program runs)."""
    return read_stdin() if text == "-" else text


def existing_folder(path: str | os.PathLike[str]) -> Path:
    """``path`` resolved, when it is a folder; else a one-line error that says what it is instead
    (not "no code graph, run ingest": there is nothing there to ingest or check)."""
    where = Path(path).expanduser().resolve()
    if not where.is_dir():
        raise NervapackError(f"{where} does not exist." if not where.exists() else f"{where} is not a folder.")
    return where
