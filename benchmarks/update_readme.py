"""Copy the benchmark result files into the README, between their markers.

``<!-- results:NAME -->`` … ``<!-- /results:NAME -->`` is replaced by
``benchmarks/results/NAME.md``, so the README always shows the last measured figures.

    python benchmarks/update_readme.py
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _nested(text: str) -> str:
    """A result file's text fitted under a README subsection: its own title dropped,
    its other headings moved down two levels."""
    lines = text.strip().splitlines()
    if lines and re.match(r"#{1,3} ", lines[0]):
        lines = lines[1:]
    return "\n".join("##" + line if line.startswith("#") else line for line in lines).strip()


def update(readme: Path = ROOT / "README.md", results: Path = ROOT / "benchmarks" / "results") -> list[str]:
    text = readme.read_text()
    done = []

    def fill(match: re.Match) -> str:
        name = match.group(1)
        source = results / f"{name}.md"
        if not source.exists():
            return match.group(0)
        done.append(name)
        return f"<!-- results:{name} -->\n{_nested(source.read_text())}\n<!-- /results:{name} -->"

    text = re.sub(r"<!-- results:([\w-]+) -->.*?<!-- /results:\1 -->", fill, text, flags=re.S)
    readme.write_text(text)
    return done


if __name__ == "__main__":
    print("updated:", ", ".join(update()) or "nothing")
