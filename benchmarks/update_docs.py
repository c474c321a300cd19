"""Copy the benchmark result files into the docs' Benchmarks page, between their markers.

Each benchmark script writes its tables to ``benchmarks/results/NAME.md``;
``<!-- results:NAME -->`` … ``<!-- /results:NAME -->`` in ``docs/benchmarks.md`` is replaced by
that file, so the page always shows the last measured figures (``tests/test_docs.py`` fails
when it does not).

    python benchmarks/update_docs.py
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "docs" / "benchmarks.md"
RESULTS = ROOT / "benchmarks" / "results"


def _nested(text: str) -> str:
    """A result file's text fitted under a page subsection: its own title dropped,
    its other headings moved down one level."""
    lines = text.strip().splitlines()
    if lines and re.match(r"#{1,3} ", lines[0]):
        lines = lines[1:]
    return "\n".join("#" + line if line.startswith("#") else line for line in lines).strip()


def updated(text: str, results: Path = RESULTS, done: list[str] | None = None) -> str:
    """``text`` with every marked block replaced by its result file (a block whose file is
    missing is left as it is)."""

    def fill(match: re.Match) -> str:
        name = match.group(1)
        source = results / f"{name}.md"
        if not source.exists():
            return match.group(0)
        if done is not None:
            done.append(name)
        return f"<!-- results:{name} -->\n{_nested(source.read_text())}\n<!-- /results:{name} -->"

    return re.sub(r"<!-- results:([\w-]+) -->.*?<!-- /results:\1 -->", fill, text, flags=re.S)


def update(page: Path = PAGE, results: Path = RESULTS) -> list[str]:
    done: list[str] = []
    page.write_text(updated(page.read_text(), results, done))
    return done


if __name__ == "__main__":
    print("updated:", ", ".join(update()) or "nothing")
