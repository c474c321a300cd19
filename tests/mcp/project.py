"""A real project for driving both servers: a git repository with code and docs, ingested into a code
graph, and a memory beside it holding enough to overflow any small budget.

What overflows what (so every budgeted tool has more to say than a small budget holds):

- the code: a ``shop`` package (tax, cart, invoice) plus :data:`MODULES` generated modules whose
  functions all call ``compute_tax`` (``impact_analysis``, ``query_codebase``, callers) and a README;
- the memory: :data:`DECISIONS` decisions on ``compute_tax`` (``shop/tax.py``), one of them an ADR
  of about 30,000 tokens (``memory_why`` over 20,000), each superseding the one before (a
  timeline of versions); :data:`FACTS` facts about the ``tax`` entity (``memory_about``,
  ``memory_recall``, ``memory_for_code``), a few of them long; :data:`PROPOSED` long proposed
  decisions on ``Cart`` (``memory_review_queue``).

:func:`build_project` returns a :class:`Project` with the ids the tests name (the long ADR, the
newest decision) and the diff of an edit to ``compute_tax``.
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

MODULES = 12
DECISIONS = 6
FACTS = 80
PROPOSED = 30

TAX = ('"""Tax rules."""\n\n\ndef compute_tax(amount):\n    """The tax on an amount."""\n'
       "    return amount * 0.2\n\n\ndef total(amount):\n    return amount + compute_tax(amount)\n")
CART = ('"""The cart."""\nfrom shop.tax import compute_tax, total\n\n\nclass Cart:\n'
        '    """A shopping cart."""\n\n    def checkout(self, amount):\n'
        "        return total(amount) + compute_tax(1)\n")
README = ("# Shop\n\nThe `compute_tax` function computes the tax of the cart. `Cart.checkout` adds it.\n\n"
          "## Invoices\n\nAn invoice lists the lines, the tax of each (`compute_tax`) and the total.\n")

# the edit the workspace and budget tests ask about: compute_tax's rate changes
TAX_DIFF = """\
diff --git a/shop/tax.py b/shop/tax.py
--- a/shop/tax.py
+++ b/shop/tax.py
@@ -4,4 +4,4 @@


 def compute_tax(amount):
     \"\"\"The tax on an amount.\"\"\"
-    return amount * 0.2
+    return amount * 0.25
"""


def _module(i: int) -> str:
    funcs = "".join(
        f"\n\ndef ledger_{i}_{j}(amount):\n"
        f'    """Post line {j} of ledger {i} with its tax, rounded to the cent and logged."""\n'
        f"    tax = compute_tax(amount * {j + 1})\n"
        f"    return round(amount + tax, 2)\n"
        for j in range(8))
    return f'"""Ledger {i}: postings with tax."""\nfrom shop.tax import compute_tax\n{funcs}'


@dataclass(frozen=True)
class Project:
    """The built project: its root, the memory database, the ids tests name."""

    root: Path
    db: Path
    long_decision: str  # the ~30,000-token ADR
    decisions: tuple[str, ...]  # oldest first; each supersedes the one before
    facts: tuple[str, ...]

    @property
    def newest_decision(self) -> str:
        return self.decisions[-1]


def _git(root: Path) -> None:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@localhost",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@localhost"}
    for cmd in (["git", "init", "-q"], ["git", "add", "-A"], ["git", "commit", "-qm", "the shop"]):
        subprocess.run(cmd, cwd=root, check=True, env=env, capture_output=True)


def build_project(root: Path) -> Project:
    """Write, commit and ingest the project at ``root`` (no embeddings: offline, fast), then fill its
    memory (``root/.nervapack/memory.db``) through the library."""
    from nervapack_core.code.ingest.pipeline import ingest
    from nervapack_core.memory import MemoryStore

    files = {"shop/__init__.py": "", "shop/tax.py": TAX, "shop/cart.py": CART, "README.md": README,
             **{f"shop/ledger_{i}.py": _module(i) for i in range(MODULES)}}
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    _git(root)
    ingest(root, embed=False, workers=1)
    db = root / ".nervapack" / "memory.db"
    reasons = "The ledger must round each posting's tax before the total, as the auditors asked. "
    with MemoryStore(db) as store:
        decisions: list[str] = []
        long_id = ""
        for i in range(DECISIONS):
            long = i == 1
            content = (f"Decision {i}: compute_tax uses rate {20 + i}% and rounds half-even. "
                       + (reasons * (1200 if long else 15)))
            did = store.store(content, kind="decision", entities=["shop/tax.py::compute_tax", "tax"],
                              rationale=reasons * (300 if long else 5),
                              alternatives_rejected=[f"rate {30 + i}%", "no rounding", "round up"],
                              supersedes=decisions[-1] if decisions else None,
                              valid_from=f"2026-0{i + 1}-01", title=f"Tax rate {i}", status="accepted")
            decisions.append(str(did))
            if long:
                long_id = str(did)
        for i in range(PROPOSED):  # awaiting review (memory_review_queue), each long
            store.store(f"Proposal {i}: Cart.checkout charges tax once per cart. " + reasons * 60, kind="decision",
                        entities=["shop/cart.py::Cart"], rationale=reasons * 20, status="proposed",
                        title=f"Checkout tax {i}")
        facts = []
        for i in range(FACTS):
            body = reasons * (40 if i % 10 == 0 else 2)
            facts.append(str(store.store(f"Fact {i} about tax on ledger {i % MODULES}: {body}", kind="fact",
                                         entities=["tax", f"shop/ledger_{i % MODULES}.py"],
                                         valid_from="2026-02-01")))
    return Project(root=root, db=db, long_decision=long_id, decisions=tuple(decisions), facts=tuple(facts))
