"""Promise: every ``nervapack`` command, given hostile arguments, ends with a result or a clear
message (exit 0, 1 or 2) — never a traceback, never the content of a file outside the workspace
it was not asked to read. And an ADR folder of hostile Markdown imports or is refused with a
message, never a traceback.

Commands and their parameters are read from the click tree (a new command or option is fuzzed
without a change here); values by parameter type from ``fuzz_values`` (random Unicode, FTS5
operators, SQL, NUL, control characters, 1 MB strings, huge and negative numbers, paths leaving
the workspace). Click's runner, in-process, in the workspace; hypothesis derandomized.

Left out, because they would not come back or would leave the machine: ``serve`` (a server),
``--open`` (a browser), ``--llm`` (an LLM endpoint); ``visualize`` always gets ``--no-browser``.
Options naming a file to *write* get names inside the temporary folder only (as root, a fuzzed
``--output /etc/passwd`` would overwrite it)."""

from __future__ import annotations

import os
import subprocess

import click
from fuzz_values import SECRET, floats, ints, texts
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_fuzz_mcp import plant_outside

FULL = os.environ.get("NERVAPACK_RELIABILITY_FULL") == "1"
PER_COMMAND = 100 if FULL else 15
ADR_CASES = 400 if FULL else 40
SKIP_COMMANDS = {"serve"}
SKIP_OPTIONS = {"open_browser", "llm", "llm_model"}
WRITES = {"output", "out", "dest", "folder@memory export-adr"}  # parameters naming a file or folder written to
# arguments naming a file the user asks to be read (reading it is the point; its content may be quoted)
READS = {"file@memory import", "folder@memory import-adr", "message_file", "db"}
SAFE_WRITES = ("out.html", "sub/out.json", "../written.txt", "ünï cödé.html", "<b>x</b>.html", "a b/c d.md")


def commands() -> list[tuple[tuple[str, ...], click.Command]]:
    from nervapack_core.cli import cli

    found = []

    def walk(cmd, prefix, ctx):
        if isinstance(cmd, click.Group):
            for name in cmd.list_commands(ctx):
                sub = cmd.get_command(ctx, name)
                walk(sub, prefix + (name,), click.Context(sub, parent=ctx))
        elif prefix[0] not in SKIP_COMMANDS:
            found.append((prefix, cmd))

    walk(cli, (), click.Context(cli))
    return found


def _key(param: click.Parameter, prefix: tuple[str, ...]) -> tuple[str, str]:
    return param.name or "", f"{param.name}@{' '.join(prefix)}"


def _value(param: click.Parameter, prefix, draw) -> str:
    name, scoped = _key(param, prefix)
    if name in WRITES or scoped in WRITES:
        return draw(st.sampled_from(SAFE_WRITES))
    kind = param.type
    if isinstance(kind, click.Choice):
        return draw(st.one_of(st.sampled_from(list(kind.choices)), texts()))
    if isinstance(kind, click.types.IntParamType) or isinstance(kind, click.IntRange):
        return draw(st.one_of(ints().map(str), texts()))
    if isinstance(kind, click.types.FloatParamType):
        return draw(st.one_of(floats().map(repr), texts()))
    if name == "path" and draw(st.integers(0, 2)):
        return "."  # mostly the workspace itself, so that the command has something to work on
    return draw(texts())


def _arg(text: str) -> str:
    """argv cannot hold NUL: an argument that has one is cut there, as a shell would."""
    return text.split("\x00", 1)[0]


@st.composite
def invocations(draw, prefix, cmd):
    argv = list(prefix)
    for param in cmd.params:
        if param.name in SKIP_OPTIONS or param.name == "help":
            continue
        if isinstance(param, click.Argument):
            if param.required or draw(st.booleans()):
                argv += [_arg(_value(param, prefix, draw)) for _ in range(1 if param.nargs == 1 else 2)]
            continue
        if not draw(st.integers(0, 2)):
            continue
        opt = param.opts[0]
        if param.is_flag:
            argv.append(opt if not param.secondary_opts or draw(st.booleans()) else param.secondary_opts[0])
        else:
            argv += [opt, _arg(_value(param, prefix, draw))]
    if prefix == ("visualize",):
        argv.append("--no-browser")
    return argv


def test_every_command_under_hostile_arguments(tmp_path, rel, monkeypatch):
    from click.testing import CliRunner

    from nervapack_core.cli import cli

    root = rel.make_repo(plant_outside(tmp_path))
    git_env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@localhost", "GIT_COMMITTER_NAME": "t",
               "GIT_COMMITTER_EMAIL": "t@localhost"}
    for i in range(3):  # files changed together in several commits: coupling and hotspots have rows to page
        for rel_path in ("shop/tax.py", "shop/cart.py"):
            (root / rel_path).write_text((root / rel_path).read_text() + f"\nV{i} = {i}\n")
        subprocess.run(["git", "commit", "-qam", f"change {i}"], cwd=root, env=git_env, check=True)
    from nervapack_core.code.ingest.pipeline import ingest

    ingest(root, embed=False, workers=1)
    stored = rel.invoke("memory", "store", "Tax is computed by compute_tax", "--kind", "decision", "--entity",
                        "compute_tax", "--db", str(root / ".nervapack" / "memory.db"))
    assert stored.exit_code == 0, stored.output
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.chdir(root)
    for var in ("NERVAPACK_MEMORY_DB", "NERVAPACK_HOME"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("NERVAPACK_HOME", str(home / ".nervapack"))
    table = commands()
    assert len(table) >= 45
    counts: dict[str, int] = {}
    exits: dict[int, int] = {}
    def fuzz(prefix: tuple[str, ...], cmd: click.Command) -> None:
        reads = any(p.name in READS or _key(p, prefix)[1] in READS for p in cmd.params)

        @settings(max_examples=PER_COMMAND, derandomize=True, deadline=None, database=None,
                  suppress_health_check=list(HealthCheck))
        @given(invocations(prefix, cmd))
        def run(argv):
            if any(len(a) >= 1_000_000 for a in argv):
                exits[-1] = exits.get(-1, 0) + 1  # -1: invocations with a 1 MB argument
            check(prefix, argv, reads)

        run()
        # and every integer option at and past the edges of 64-bit integers, once each
        required = [_arg("compute_tax") for p in cmd.params if isinstance(p, click.Argument) and p.required]
        for p in cmd.params:
            if isinstance(p, click.Option) and isinstance(p.type, click.types.IntParamType | click.IntRange):
                for n in (-(2 ** 63) - 1, 2 ** 63 - 1, 2 ** 63, 10 ** 30):
                    check(prefix, [*prefix, *required, p.opts[0], str(n)], reads)

    def check(prefix: tuple[str, ...], argv: list[str], reads: bool) -> None:
        name = " ".join(prefix)
        counts[name] = counts.get(name, 0) + 1
        done = CliRunner().invoke(cli, argv, catch_exceptions=True)
        shown = [a[:80] for a in argv]
        exc = done.exception
        assert exc is None or isinstance(exc, SystemExit), (shown, repr(exc), done.output[-2000:])
        assert done.exit_code in (0, 1, 2), (shown, done.exit_code, done.output[-2000:])
        assert "Traceback" not in done.output, (shown, done.output[-3000:])
        exits[done.exit_code] = exits.get(done.exit_code, 0) + 1
        if not reads:
            assert SECRET not in done.output and "root:x:0:0" not in done.output, (shown, "read outside")

    for prefix, cmd in table:  # every command gets its share of cases
        fuzz(prefix, cmd)
    long = exits.pop(-1, 0)
    print(f"CLI: {sum(counts.values())} invocations over {len(counts)} of {len(table)} commands ({long} with a "
          f"1 MB argument), exits {exits}")
    assert len(counts) == len(table) and long >= 20


ADR_TEXT = st.one_of(texts(), st.sampled_from(["Accepted", "Superseded by [ADR-2](0002-x.md)", "proposed",
                                               "2026-13-45", "Date: 2024-02-30", "Status: ???"]))


@st.composite
def adr_folders(draw):
    """A folder of 1-4 ADR files: Nygard or MADR shaped, every field hostile."""
    files = {}
    for i in range(draw(st.integers(1, 4))):
        title, status, body, date = (draw(ADR_TEXT) for _ in range(4))
        shape = draw(st.sampled_from(["nygard", "madr", "raw"]))
        if shape == "nygard":
            text = f"# {i + 1}. {title}\n\nDate: {date}\n\n## Status\n\n{status}\n\n## Context\n\n{body}\n"
        elif shape == "madr":
            text = f"---\nstatus: {status}\ndate: {date}\n---\n# {title}\n\n## Decision Outcome\n\n{body}\n"
        else:
            text = body
        name = draw(st.sampled_from([f"{i + 1:04d}-{i}.md", f"{i + 1:04d}-{title[:20]}.md".replace("/", "_"),
                                     f"adr-{i}.md"]))
        files[name.replace("\x00", "")] = text
    return files


def test_adr_import_of_hostile_folders(tmp_path):
    from nervapack_core.errors import NervapackError
    from nervapack_core.memory import MemoryStore

    outcomes: dict[str, int] = {}
    case = iter(range(10 ** 6))

    @settings(max_examples=ADR_CASES, derandomize=True, deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    @given(adr_folders())
    def run(files):
        folder = tmp_path / f"adr{next(case)}"
        folder.mkdir()
        for name, text in files.items():
            try:
                (folder / name).write_text(text, encoding="utf-8", errors="surrogatepass")
            except (OSError, ValueError):  # a name the file system refuses (too long, invalid)
                continue
        with MemoryStore(db_path=tmp_path / "memory.db") as m:
            try:
                report = m.import_adr(folder)
            except NervapackError as exc:
                assert str(exc).strip()
                outcomes["refused"] = outcomes.get("refused", 0) + 1
                return
            # every ADR file found is accounted for exactly once: imported, updated, unchanged or skipped
            accounted = report["imported"] + report["updated"] + report["unchanged"] + len(report["skipped"])
            assert accounted == report["files"], report
            outcomes["imported"] = outcomes.get("imported", 0) + 1
            assert m.import_adr(folder)["imported"] == 0  # idempotent: a second import adds nothing

    run()
    print("ADR folders:", outcomes)


def test_what_the_fuzz_found_stays_fixed(tmp_path, rel, monkeypatch):
    """The cases the fuzz found, pinned (the integer edges are swept on every run above)."""
    from nervapack_core.memory import MemoryStore

    monkeypatch.chdir(tmp_path)
    done = rel.invoke("memory", "sessions", "--db", "a" * 1000)  # longer than a file name may be
    assert done.exit_code == 1 and rel.no_traceback(done) and "File name too long" in done.output, done.output
    adr = tmp_path / "adr"
    adr.mkdir()
    (adr / "0001-zero.md").write_text("---\nstatus: accepted\ndate: 0000-00-00\n---\n# Zero\n\nText.\n")
    (adr / "0002-fine.md").write_text("# 2. Fine\n\nDate: 2026-01-02\n\n## Status\n\nAccepted\n")
    with MemoryStore(db_path=tmp_path / "memory.db") as m:
        report = m.import_adr(adr)
    assert report["imported"] == 1, report
    assert [why for _, why in report["skipped"]] == [
        "front matter holds a value that cannot be read (year 0 is out of range), e.g. a date like 0000-00-00"]
