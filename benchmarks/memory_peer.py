"""Store speed beside the original tool: one store call per fact, as an agent writes them.

Run:  python benchmarks/memory_peer.py --original /tmp/orig/bin/python
      (the original: ``python3 -m venv /tmp/orig && /tmp/orig/bin/pip install nervapack==0.8.1``)

The facts are real: this machine's Debian package records (``/var/lib/dpkg/status``), one
fact per package field ("perl Version 5.36.0-7", "perl Depends libperl5.36 …") about the
package as its entity — the shape of the 10,478 facts issue 29 measured. Both tools store the
same facts in a fresh database inside a git work tree (where provenance reads HEAD and the
author), each in its own interpreter (the original cannot share ours), in alternating rounds
so the machine's load falls on both alike. The original is driven through its own MCP tool
function ``memory_store`` (what an agent calls: node, session, entity resolution, ABOUT
edges); ours through :meth:`MemoryStore.store` with the same content and entities. Results:
ms per stored fact (median of rounds) and the ratio; written to
``benchmarks/results/memory_peer.md``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from machine import describe  # noqa: E402

FIELDS = ("Version", "Depends", "Section", "Priority", "Maintainer", "Architecture", "Source", "Homepage",
          "Installed-Size", "Multi-Arch", "Pre-Depends", "Recommends", "Suggests", "Description")


def facts(status: Path = Path("/var/lib/dpkg/status"), limit: int | None = None) -> list[dict]:
    """``{"content", "entities"}`` per package field of the Debian status file."""
    out: list[dict] = []
    record: dict[str, str] = {}
    for line in status.read_text(encoding="utf-8", errors="replace").splitlines() + [""]:
        if not line.strip():
            if record.get("Package"):
                out += [{"content": f"{record['Package']} {key} {record[key]}", "entities": [record["Package"]]}
                        for key in FIELDS if record.get(key)]
            record = {}
        elif line[0] not in " \t":
            key, _, value = line.partition(":")
            record[key] = value.strip()
    return out[:limit] if limit else out


# each worker reads the facts as JSON on stdin, stores them one call each, prints seconds taken
OURS = r"""
import json, subprocess, sys, tempfile, time
from pathlib import Path
from nervapack_core.memory import MemoryStore
specs = json.load(sys.stdin)
root = Path(tempfile.mkdtemp()); subprocess.run(["git", "init", "-q", str(root)], check=True)
(root / ".nervapack").mkdir()
m = MemoryStore(root / ".nervapack" / "memory.db")
t = time.perf_counter()
for s in specs:
    m.store(s["content"], kind="fact", entities=s["entities"])
print(time.perf_counter() - t)
"""

ORIGINAL = r"""
import json, os, subprocess, sys, tempfile, time
from pathlib import Path
specs = json.load(sys.stdin)
root = Path(tempfile.mkdtemp()); subprocess.run(["git", "init", "-q", str(root)], check=True)
(root / ".nervapack").mkdir(); os.chdir(root)
os.environ["NERVAPACK_MEMORY_DB"] = str(root / ".nervapack" / "memory.db")
from nervapack.memory import mcp_server
store = getattr(mcp_server.memory_store, "fn", mcp_server.memory_store)
t = time.perf_counter()
for s in specs:
    store(s["content"], kind="fact", entities=s["entities"])
print(time.perf_counter() - t)
"""


def run(python: str, script: str, specs: list[dict]) -> float:
    done = subprocess.run([python, "-c", script], input=json.dumps(specs), capture_output=True, text=True,
                          check=True, cwd=tempfile.gettempdir())
    return float(done.stdout.strip().splitlines()[-1])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--original", required=True, help="the python of a venv with nervapack==0.8.1")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--limit", type=int, default=None, help="store only the first N facts")
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args(argv)
    specs = facts(limit=args.limit)
    ours, theirs = [], []
    for _ in range(args.rounds):  # alternating: the load of the moment falls on both
        theirs.append(run(args.original, ORIGINAL, specs) / len(specs) * 1000)
        ours.append(run(sys.executable, OURS, specs) / len(specs) * 1000)
    o, t = statistics.median(ours), statistics.median(theirs)
    table = "\n".join([
        "# Store speed beside the original (nervapack 0.8.1)", "",
        f"Machine: {describe()}. {len(specs):,} facts from this machine's Debian package records, one store "
        f"call each, in a git work tree; median of {args.rounds} alternating rounds.", "",
        "| tool | ms per stored fact | rounds |", "|---|---|---|",
        f"| original 0.8.1 (its MCP memory_store) | {t:.3f} | {', '.join(f'{x:.3f}' for x in theirs)} |",
        f"| NervaPack Core (MemoryStore.store) | {o:.3f} | {', '.join(f'{x:.3f}' for x in ours)} |", "",
        f"Ours is **{t / o:.2f}×** the original's speed (original ms / ours).", ""])
    print(table)
    if not args.no_write:
        (HERE / "results" / "memory_peer.md").write_text(table, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
