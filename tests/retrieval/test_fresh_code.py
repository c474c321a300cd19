"""Issue 29: after an edit without a re-ingest, an answer never prints the current text under the old
line numbers. Real git repositories ingested in tmp dirs, edited on disk, queried through the library,
the CLI and an MCP client session of the code server."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import anyio
import pytest

from .conftest import ingested_git_repo

FILES = {
    "billing/tax.py": '''
        """Taxes."""

        RATE = 0.2


        def compute_tax(amount: float) -> float:
            """Value-added tax owed on an amount."""
            return round(amount * RATE, 2)


        def refund_tax(amount: float) -> float:
            """The tax given back on a refund."""
            return -compute_tax(amount)


        class Ledger:
            """Keeps the tax lines of an invoice."""

            def __init__(self):
                self.lines = []

            def add(self, amount: float) -> None:
                """Record the tax of one amount."""
                self.lines.append(compute_tax(amount))

            def total(self) -> float:
                """All tax recorded."""
                return sum(self.lines)

            def clear(self) -> None:
                self.lines = []

            def count(self) -> int:
                return len(self.lines)

            def largest(self) -> float:
                return max(self.lines or [0.0])

            def smallest(self) -> float:
                return min(self.lines or [0.0])
        ''',
    "docs/guide.md": '''
        # Guide

        Intro text.

        ## Tax rules

        The tax rate is twenty percent of the amount.
        ''',
}

INSERTED = "# a comment block added above the functions\n" * 7


def _heading_range(markdown: str, name: str) -> tuple[int, int] | None:
    m = re.search(rf"### {re.escape(name)} — \w+, L(\d+)(?:-(\d+))?", markdown)
    return (int(m.group(1)), int(m.group(2) or m.group(1))) if m else None


def _lines_of(path: Path, needle: str) -> tuple[int, int]:
    """1-based start of the line holding ``needle`` and the end of the block that follows it."""
    lines = path.read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if needle in line) + 1
    indent = len(lines[start - 1]) - len(lines[start - 1].lstrip())
    end = start
    while end < len(lines) and (len(lines[end]) - len(lines[end].lstrip()) > indent or not lines[end].strip()):
        end += 1
    while not lines[end - 1].strip():
        end -= 1
    return start, end


@pytest.fixture
def repo(tmp_path) -> Path:
    return ingested_git_repo(tmp_path / "repo", FILES)


def _insert_above(path: Path, anchor: str, text: str) -> None:
    src = path.read_text()
    path.write_text(src.replace(anchor, text + anchor, 1))


def _ask(root: Path, prompt: str, budget: int = 1500):
    from nervapack_core.code.retrieval.retriever import Retriever, answer

    r = Retriever(root, use_vectors=False)
    try:
        return answer(r, prompt, budget=budget)
    finally:
        r.close()


def test_unchanged_files_answer_as_before_without_notes(repo):
    result = _ask(repo, "compute_tax")
    assert result.notes == []
    assert _heading_range(result.markdown, "compute_tax") == _lines_of(repo / "billing/tax.py", "def compute_tax")


def test_lines_inserted_above_the_function_print_its_current_lines(repo):
    tax = repo / "billing/tax.py"
    old = _lines_of(tax, "def compute_tax")
    _insert_above(tax, "def compute_tax", INSERTED)
    new = _lines_of(tax, "def compute_tax")
    assert new[0] == old[0] + 7
    result = _ask(repo, "compute_tax")
    md = result.markdown
    assert _heading_range(md, "compute_tax") == new
    # the code printed under that range is the function itself, not the comment block above it
    block = md.split("### compute_tax", 1)[1].split("```", 2)[1]
    assert "def compute_tax(amount: float) -> float:" in block and "a comment block" not in block
    node = next(n for n in result.nodes if n.qualified_name == "compute_tax")
    assert (node.start_line, node.end_line) == new
    # and the answer says the file changed and what to run
    assert any("billing/tax.py changed since the last ingest" in w and "nervapack sync" in w
               for w in result.warnings)


def test_a_class_outline_lists_its_members_at_their_current_lines(repo):
    tax = repo / "billing/tax.py"
    _insert_above(tax, "class Ledger", INSERTED + "\n\n")
    _insert_above(tax, "    def total", "    def average(self) -> float:\n        return self.total() / 2\n\n")
    result = _ask(repo, "Ledger", budget=3000)
    md = result.markdown
    assert _heading_range(md, "Ledger") == _lines_of(tax, "class Ledger")
    for name in ("add", "total", "average", "largest"):
        start, end = _lines_of(tax, f"def {name}(")
        assert f"# L{start}-{end}" in md, name


def test_a_deleted_function_is_said_to_be_gone_and_its_old_lines_are_not_printed(repo):
    tax = repo / "billing/tax.py"
    src = tax.read_text()
    gone = src[src.index("def refund_tax"):src.index("class Ledger")]
    tax.write_text(INSERTED + src.replace(gone, ""))
    result = _ask(repo, "refund_tax", budget=1500)
    md = result.markdown
    assert "`refund_tax` is no longer in billing/tax.py" in md and "nervapack sync" in md
    assert "def refund_tax" not in md and _heading_range(md, "refund_tax") is None
    assert any("no longer found: `refund_tax`" in w for w in result.warnings)
    node = next(n for n in result.nodes if n.qualified_name == "refund_tax")
    assert node.stale and node.as_json()["start_line"] is None


def test_a_deleted_file_is_said_to_be_gone(repo):
    (repo / "billing/tax.py").unlink()
    result = _ask(repo, "compute_tax")
    assert "### compute_tax" not in result.markdown
    assert "billing/tax.py was deleted or cannot be read" in result.markdown


def test_a_doc_section_moved_down_shows_its_current_range_and_text(repo):
    guide = repo / "docs/guide.md"
    guide.write_text(guide.read_text().replace("Intro text.", "Intro text.\n\nMore intro.\n\nAnd more.")
                     .replace("twenty percent", "twenty-one percent"))
    result = _ask(repo, "what do the docs say about tax rules?", budget=4000)
    md = result.markdown
    lines = guide.read_text().splitlines()
    start = lines.index("## Tax rules") + 1
    assert re.search(rf"### Tax rules — doc, L{start}-{len(lines)}", md), md
    assert "twenty-one percent" in md


def test_the_check_hashes_a_file_once_per_version(repo):
    from nervapack_core.code.retrieval.retriever import Retriever, answer

    r = Retriever(repo, use_vectors=False)
    try:
        answer(r, "compute_tax", budget=800)
        first = r.source.snapshot("billing/tax.py")
        answer(r, "Ledger total", budget=800)
        assert r.source.snapshot("billing/tax.py") is first  # same mtime and size: not read nor hashed again
        tax = repo / "billing/tax.py"
        _insert_above(tax, "def compute_tax", INSERTED)
        later = answer(r, "compute_tax", budget=800)
        assert r.source.snapshot("billing/tax.py") is not first
        assert _heading_range(later.markdown, "compute_tax") == _lines_of(tax, "def compute_tax")
    finally:
        r.close()


def test_the_cli_query_prints_the_current_range_and_the_warning(repo):
    tax = repo / "billing/tax.py"
    _insert_above(tax, "def compute_tax", INSERTED)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (str(Path.cwd()), os.environ.get("PYTHONPATH"))
                                                     if p)}
    cli = [sys.executable, "-m", "nervapack_core.cli", "query", "compute_tax", "--no-vectors", "--path", str(repo)]
    data = json.loads(subprocess.run([*cli, "--json"], capture_output=True, text=True, env=env, check=True,
                                     timeout=120).stdout)
    node = next(n for n in data["nodes"] if n["qualified_name"] == "compute_tax")
    assert (node["start_line"], node["end_line"]) == _lines_of(tax, "def compute_tax")
    assert any("nervapack sync" in w for w in data["warnings"])
    shown = subprocess.run(cli, capture_output=True, text=True, env=env, check=True, timeout=120).stdout
    assert "changed since the last ingest" in " ".join(shown.split())


def test_the_mcp_code_server_answers_with_the_current_code(repo):
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    tax = repo / "billing/tax.py"
    src = tax.read_text()
    tax.write_text(INSERTED + src.replace(src[src.index("def refund_tax"):src.index("class Ledger")], ""))
    env = {k: v for k, v in os.environ.items() if k != "NERVAPACK_HOME"}
    params = StdioServerParameters(command=sys.executable, args=["-m", "nervapack_core.mcp.code_server"],
                                   cwd=str(repo), env=env)

    async def session():
        async with Client(params, read_timeout_seconds=120) as client:
            moved = await client.call_tool("query_codebase", {"prompt": "compute_tax", "budget": 1500})
            gone = await client.call_tool("query_codebase", {"prompt": "refund_tax", "budget": 1500})
            return moved, gone

    moved, gone = anyio.run(session)
    text = "".join(c.text for c in moved.content)
    assert not moved.is_error
    assert _heading_range(text, "compute_tax") == _lines_of(tax, "def compute_tax")
    assert "changed since the last ingest" in text and "nervapack sync" in text
    assert any("nervapack sync" in w for w in moved.structured_content["warnings"])
    text = "".join(c.text for c in gone.content)
    assert "`refund_tax` is no longer in billing/tax.py" in text and "def refund_tax" not in text


def test_source_reader_snapshot_matches_the_ingest_hash(repo):
    """The check compares like with like: the reader's sha1 of an untouched file is the one the ingest stored."""
    from nervapack_core.code.analysis.reader import GraphReader
    from nervapack_core.code.retrieval.source import SourceReader
    from nervapack_core.workspace import Workspace

    graph = GraphReader(Workspace(repo).graph_db, root=repo)
    try:
        stored = graph.stored_files(["billing/tax.py", "docs/guide.md"])
        reader = SourceReader(graph, repo)
        for path, (sha, _mtime) in stored.items():
            snap = reader.snapshot(path)
            assert snap is not None and snap.sha == sha
    finally:
        graph.close()


def test_dedent_helper_is_consistent():  # the fixture's text is written dedented, as the repo sees it
    assert textwrap.dedent(FILES["docs/guide.md"]).lstrip().startswith("# Guide")


def test_same_named_definitions_are_told_apart_by_their_stored_content(tmp_path):
    """Two definitions of one name (the parser names the second ``home#2``): after lines are inserted
    each is re-located to its own current lines; the content hash used to tell same-named definitions
    apart is the ingest's span hash."""
    from nervapack_core.code.ingest.pipeline import span_sha
    from nervapack_core.code.retrieval.fresh import _span_sha

    lines = [b"a", b"b", b"c", b"d"]
    assert _span_sha(lines, 2, 3) == span_sha(lines, 2, 3)
    root = ingested_git_repo(tmp_path / "repo", {"m.py": '''
        import sys

        if sys.platform == "win32":
            def home():
                """Windows."""
                return "C:/"
        else:
            def home():
                """Elsewhere."""
                return "/home"
        '''})
    m = root / "m.py"
    m.write_text(INSERTED + m.read_text())
    result = _ask(root, "home", budget=3000)
    text = m.read_text().splitlines()
    first = text.index("    def home():") + 1
    second = text.index("    def home():", first) + 1
    assert first == 4 + 7 and second == 8 + 7
    assert _heading_range(result.markdown, "home") == (first, first + 2)
    assert _heading_range(result.markdown, "home#2") == (second, second + 2)
    assert "Elsewhere" in result.markdown.split("### home#2", 1)[1]
