"""Copy the benchmark result files into the README, between their markers.

``<!-- results:NAME -->`` … ``<!-- /results:NAME -->`` is replaced by
``benchmarks/results/NAME.md``, so the README always shows the last measured figures.

    python benchmarks/update_readme.py
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def update(readme: Path = ROOT / "README.md", results: Path = ROOT / "benchmarks" / "results") -> list[str]:
    text = readme.read_text()
    done = []

    def fill(match: re.Match) -> str:
        name = match.group(1)
        source = results / f"{name}.md"
        if not source.exists():
            return match.group(0)
        done.append(name)
        return f"<!-- results:{name} -->\n{source.read_text().strip()}\n<!-- /results:{name} -->"

    text = re.sub(r"<!-- results:([\w-]+) -->.*?<!-- /results:\1 -->", fill, text, flags=re.S)
    readme.write_text(text)
    return done


if __name__ == "__main__":
    print("updated:", ", ".join(update()) or "nothing")
