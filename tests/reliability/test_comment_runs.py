"""Long runs of comment lines cost their length, not its square (issue 26, "Exhaustion").

The Python grammar's indentation scanner reads ahead over every following comment line at
each line break, so a run of N comment lines cost N²/2 line reads (10,000 lines: 97 s);
walking back over a run for a definition's comment docstring cost N² sibling steps in every
grammar (16,000 ``//`` lines: 8 s). Counted here, not timed: the parser's reads of its input,
and, for whole files, a subprocess that finishes well inside a timeout the quadratic version
exceeds tenfold. What is parsed does not change: the same entities, lines, docstrings and
references as the plain text gives (a property over generated files, and fixed cases).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nervapack_core.code.parse import parser as parser_module
from nervapack_core.code.parse.parser import ParsedSource, _tools, grammar_input, parse_source

from .conftest import git_init, no_traceback, run_cli

RUN = 3_000


def _reads(data: bytes) -> int:
    """How many times tree-sitter asks for input while parsing ``data`` as Python, one line
    per answer: the bytes its lexer and scanner read, in lines (a look-ahead read twice
    counts twice)."""
    parser, _query = _tools("python")
    calls = 0

    def read(byte: int, _point) -> bytes:
        nonlocal calls
        calls += 1
        end = data.find(b"\n", byte)
        return data[byte:end + 1 if end >= 0 else len(data)]

    parser.parse(read)
    return calls


SHAPES = {
    "between definitions": "x = 1\n" + "# comment\n" * RUN + "def f():\n    pass\n",
    "in a body": "def f():\n    x = 1\n" + "    # comment\n" * RUN + "    return x\n",
    "after a block, at its depth": "class A:\n    def f(self):\n        pass\n" + "    # c\n" * RUN + "y = 2\n",
    "deepening": "def f():\n    pass\n" + "".join(f"{' ' * (i // 100)}# c\n" for i in range(RUN)) + "z = 3\n",
    "CRLF": ("x = 1\r\n" + "# comment\r\n" * RUN + "y = 2\r\n"),
}


@pytest.mark.parametrize("shape", SHAPES)
def test_the_python_grammar_reads_a_comment_run_once(shape):
    data = SHAPES[shape].encode()
    lines = data.count(b"\n")
    # the plain text costs about RUN²/2 = 4.5 million line reads; the grammar's input, a few per line
    assert _reads(grammar_input(data, "python")) <= 2 * lines + 50
    assert len(grammar_input(data, "python")) == len(data)


def test_a_run_that_steps_back_out_keeps_its_dedents():
    """Comment lines indented less than the one above are not joined: where they fall
    decides which block ends where (commented-out code at the end of a method)."""
    source = (b"class A:\n    def f(self):\n        pass\n        # inside f\n        # still f\n"
              b"    # inside A\n# outside\nx = 1\n")
    found = {e.qualified_name: (e.start_line, e.end_line) for e in parse_source(source, "python").entities}
    assert found == {"A": (1, 6), "A.f": (2, 5), "x": (8, 8)}


def test_docstrings_and_lines_under_comment_runs_are_those_of_the_file():
    source = (b'"""Module."""\n# The retry limit,\n#   counted per request.\nLIMIT = 3\n\n\n'
              b'def f():\n    """Doc\n    # not a comment\n    # nor this\n    """\n'
              b"    # a\n    # b\n    return LIMIT\n"
              b"value = call(\n    # one\n    # two\n    LIMIT)\n")
    entities = {e.qualified_name: e for e in parse_source(source, "python").entities}
    assert entities["LIMIT"].docstring == "The retry limit,\ncounted per request."
    assert (entities["LIMIT"].start_line, entities["LIMIT"].end_line) == (4, 4)
    assert entities["f"].docstring == "Doc\n# not a comment\n# nor this"
    assert (entities["f"].start_line, entities["f"].end_line) == (7, 14)
    assert (entities["value"].start_line, entities["value"].end_line) == (15, 18)
    refs = {(r.kind, r.name): r.line for r in parse_source(source, "python").refs}
    assert refs[("call", "call")] == 15


# -- the same answers as the plain text: generated files -----------------------------------------

_SIMPLE = st.sampled_from(["x = 1", "pass", "return a", "call(a)", "f = lambda: 0  # trailing", "y: int = 2"])
_COMMENT = st.sampled_from(["# c", "#", "# tail \\", "#!", "# -*- coding: utf-8 -*-", "# in' "])
_HEADER = st.sampled_from(["def f(a):", "class K:", "if a:", "async def h():", "for i in a:"])


@st.composite
def _block(draw, depth: int) -> list[str]:
    """Valid Python lines at ``depth``: statements, compound statements with a body, and comment
    lines in runs at any depth (a comment may stand anywhere), inside strings and brackets too."""
    pad = " " * (4 * depth)
    lines: list[str] = []
    for _ in range(draw(st.integers(1, 5))):
        kind = draw(st.sampled_from(["simple", "comments", "comments", "blank", "string", "brackets", "compound"]))
        if kind == "simple":
            lines.append(pad + draw(_SIMPLE))
        elif kind == "comments":
            for _ in range(draw(st.integers(1, 6))):
                lead = draw(st.sampled_from([" " * (4 * d) for d in range(depth + 3)] + ["\t", "  "]))
                lines.append(lead + draw(_COMMENT))
        elif kind == "blank":
            lines.append(draw(st.sampled_from(["", "    "])))
        elif kind == "string":
            quote = draw(st.sampled_from(['"""', "'''"]))
            lines += [f"{pad}s = f{quote}", "# in a string {a}", "    # more", quote]
        elif kind == "brackets":
            lines += [pad + "v = g(", pad + "    # one", pad + "    # two", pad + "    a)"]
        elif depth < 3:
            header = draw(_HEADER)
            if header.split()[0] in ("def", "class", "async") and draw(st.booleans()):
                lines.append(pad + "@decorator")
            lines.append(pad + header)
            lines += draw(_block(depth + 1))
            lines.append(" " * (4 * depth + 4) + "pass")  # a body ends with code, whatever comments came before
    return lines


@st.composite
def _files(draw) -> bytes:
    newline = draw(st.sampled_from(["\n", "\n", "\r\n"]))
    return newline.join(draw(_block(0))).encode() + draw(st.sampled_from([b"", newline.encode()]))


def _as_plain_text(source: bytes, language: str) -> ParsedSource:
    """``parse_source`` reading the file exactly as written (the quadratic way)."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(parser_module, "grammar_input", lambda data, _language: data)
        return parse_source(source, language)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_files())
def test_joined_comment_lines_parse_to_what_the_plain_text_gives(source):
    plain = _as_plain_text(source, "python")
    assert not plain.has_errors  # the generator writes valid Python (a broken file gets the grammar's recovery)
    assert parse_source(source, "python") == plain


def test_the_project_and_its_fixtures_parse_as_their_plain_text():
    root = Path(__file__).resolve().parents[2]
    files = [*sorted((root / "nervapack_core").rglob("*.py")), *sorted((root / "tests").rglob("*.py"))]
    joined = [p for p in files if grammar_input(p.read_bytes(), "python") != p.read_bytes()]  # the others: same input
    differing = [str(p) for p in joined if parse_source(p.read_bytes(), "python") != _as_plain_text(p.read_bytes(),
                                                                                                    "python")]
    assert len(joined) > 20 and differing == []


# -- whole files, whole commands -------------------------------------------------------------

HEAVY_PY = ('"""Generated: mostly comments."""\n\n\ndef first():\n    return 1\n\n\n'
            + "# a comment between definitions\n" * 30_000
            + "def second():\n" + "    # a comment in a body\n" * 10_000 + "    return 2\n\n\n"
            + "".join(f"# about v{i}\n# more\n# and more\nv{i} = {i}\n" for i in range(2_500)))
HEAVY_JS = "const a = 1;\n" + "// a comment\n" * 120_000 + "function documented() {}\n"

_PARSE_BOTH = """
import json, sys
from nervapack_core.code.parse.parser import parse_source
py = parse_source(open(sys.argv[1], "rb").read(), "python")
js = parse_source(open(sys.argv[2], "rb").read(), "javascript")
print(json.dumps({"py": [[e.qualified_name, e.start_line, e.end_line, e.docstring] for e in py.entities][:4],
                  "py_count": len(py.entities),
                  "js": [[e.qualified_name, e.start_line, len(e.docstring)] for e in js.entities]}))
"""


def test_comment_heavy_files_parse_in_seconds(tmp_path):
    """50,000 Python comment lines and 120,000 JavaScript ones: seconds now; the quadratic
    version needs more than ten minutes for them (measured: 10,000 Python lines took 97 s,
    16,000 JavaScript lines 8 s), so it cannot pass the 60 s limit."""
    (tmp_path / "heavy.py").write_text(HEAVY_PY)
    (tmp_path / "heavy.js").write_text(HEAVY_JS)
    done = subprocess.run([sys.executable, "-c", _PARSE_BOTH, str(tmp_path / "heavy.py"), str(tmp_path / "heavy.js")],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    assert found["py"][:2] == [["first", 4, 5, ""], ["second", 30_008, 40_009, ""]]
    assert found["py"][2] == ["v0", 40_015, 40_015, "about v0\nmore\nand more"]
    assert found["py_count"] == 2 + 2_500
    assert found["js"] == [["a", 1, 0], ["documented", 120_002, 600]]  # the docstring's 600-character cap


def test_review_changes_on_a_comment_heavy_diff(tmp_path):
    """A 40,000-line diff of comment lines into a governed function: reported, in seconds."""
    from nervapack_core.code.ingest.pipeline import ingest
    from nervapack_core.memory import MemoryStore

    repo = tmp_path / "repo"
    (repo / "pkg").mkdir(parents=True)
    (repo / "pkg" / "heavy.py").write_text("def governed():\n    return 1\n\n\ndef other():\n    return 2\n")
    git_init(repo)
    ingest(repo, embed=False, workers=1)
    with MemoryStore(repo / ".nervapack" / "memory.db") as memory:
        decided = memory.store("Keep governed() returning 1", kind="decision", entities=["governed"])
        assert memory.to_code(decided)
    (repo / "pkg" / "heavy.py").write_text("def governed():\n" + "    # reviewed\n" * 20_000 + "    return 1\n\n\n"
                                           + "# between\n" * 20_000 + "def other():\n    return 2\n")
    subprocess.run(["git", "commit", "-qam", "comments", "--author", "t <t@localhost>"], cwd=repo, check=True,
                   capture_output=True, env={"GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@localhost",
                                             "PATH": "/usr/bin:/bin"})
    done = run_cli("review-changes", "HEAD~1..HEAD", "--json", cwd=repo, timeout=60)
    assert done.returncode == 0 and no_traceback(done), done.stderr
    decisions = json.loads(done.stdout)["decisions"]
    assert [(d["id"], [c["change"] for c in d["code"]]) for d in decisions] == [(decided, ["modified"])]
