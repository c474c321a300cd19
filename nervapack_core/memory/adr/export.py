"""Write decisions as MADR files that ``import-adr`` reads back to the same decisions.

One file per decision of the namespace (current and superseded; forgotten ones are
left out), named ``NNNN-slug.md``: numbered by ``valid_from`` then id, and stable —
a file already in the folder that carries a decision's id (or is the file the decision
was imported from) keeps its name, and new decisions take the numbers after the
highest one there. Front matter holds the memory id (``nervapack-id``), status, date,
decision makers, author, tags and commit; the body is MADR's: Context (the rationale),
Considered Options (the decision and its rejected alternatives), Decision Outcome, and
"Superseded by" / "Supersedes" links between the files.

Nothing is written unless every file can be: a file that exists with other content (a
symbolic link among them: it is replaced by a file, its target never written) is replaced
only with ``overwrite``. The folder changes in one step (:mod:`.staging`): it is the old
folder or the new one, also for a process killed part-way. A folder named inside a
repository that a link leads out of it is refused, as is a repository's root.
"""

from __future__ import annotations

import re
import sqlite3
import unicodedata
from datetime import date
from pathlib import Path

import yaml

from ...errors import NervapackError
from ...workspace import WORKSPACE_DIR
from ..nodes import NODE_COLS, node_dict
from .folder import base_root, resolved_inside, scan
from .parse import AdrSkip, decision_content, one_line, parse_adr
from .staging import tidy, write_folder

__all__ = ["export_folder", "render", "slug"]

_MIDNIGHT = "T00:00:00.000000Z"


def slug(text: str, limit: int = 50) -> str:
    """An ASCII file-name slug of ``text`` ("Use PostgreSQL (v15)!" -> "use-postgresql-v15")."""
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    words = re.findall(r"[a-z0-9]+", ascii_text.lower())
    out = ""
    for w in words:
        if len(out) + len(w) + 1 > limit:
            break
        out = f"{out}-{w}" if out else w
    return out or (words[0][:limit] if words else "decision")


def _decisions(conn: sqlite3.Connection, ns: str) -> list[dict]:
    rows = conn.execute(f"SELECT {NODE_COLS} FROM mem_nodes WHERE namespace = ? AND kind = 'decision' "
                        "AND tombstoned = 0 ORDER BY valid_from, id", (ns,)).fetchall()
    return [node_dict(r) for r in rows]


def _heading(d: dict) -> str:
    return one_line(d.get("title") or d["content"])


def _escape(text: str) -> str:
    """Keep the rationale's own lines from starting sections of the file."""
    return re.sub(r"(?m)^#", r"\\#", text.strip())


def render(d: dict, names: dict[str, str], by_id: dict[str, dict]) -> str:
    """The MADR text of decision ``d`` (``names``: id -> file name of every exported decision)."""
    heading = _heading(d)
    chosen = one_line(d["content"])
    meta = d.get("metadata") or {}
    fm: dict = {"nervapack-id": d["id"]}
    succ = d.get("superseded_by")
    if d["status"] == "superseded" and succ in names and d.get("review_status") in (None, "accepted"):
        fm["status"] = f"superseded by [{_heading(by_id[succ])}]({names[succ]})"
    elif d["status"] == "superseded" and succ in names:  # e.g. a proposal replaced before review: keep that
        fm["status"] = d["review_status"]
    else:
        fm["status"] = d["status"] or "accepted"
    fm["date"] = date.fromisoformat(d["valid_from"][:10])
    if not d["valid_from"].endswith(_MIDNIGHT):
        fm["valid-from"] = d["valid_from"]
    deciders = meta.get("deciders")
    if isinstance(deciders, list) and deciders:
        fm["decision-makers"] = [str(x) for x in deciders]
    if d.get("author"):
        fm["author"] = d["author"]
    if d.get("tags"):
        fm["tags"] = list(d["tags"])
    if d.get("commit_sha"):
        fm["commit"] = d["commit_sha"]
    if decision_content(heading, None, chosen, None) != d["content"]:
        fm["decision"] = d["content"]
    head = yaml.safe_dump(fm, sort_keys=False, allow_unicode=True, default_flow_style=False, width=10_000)
    parts = [f"---\n{head}---\n", f"# {heading}\n"]
    if d.get("rationale") and str(d["rationale"]).strip():
        parts.append(f"## Context and Problem Statement\n\n{_escape(str(d['rationale']))}\n")
    options = [chosen] + [one_line(a) for a in d.get("alternatives_rejected") or [] if one_line(a)]
    parts.append("## Considered Options\n\n" + "".join(f"* {o}\n" for o in options))
    parts.append(f'## Decision Outcome\n\nChosen option: "{chosen}"\n')
    links = []
    if succ in names:
        links.append(f"* Superseded by [{_heading(by_id[succ])}]({names[succ]})")
    for other in sorted((o for o in by_id.values() if o.get("superseded_by") == d["id"]),
                        key=lambda o: names[o["id"]]):
        links.append(f"* Supersedes [{_heading(other)}]({names[other['id']]})")
    if links:
        parts.append("## More Information\n\n" + "\n".join(links) + "\n")
    return "\n".join(parts)


def _existing(folder: Path, root: Path) -> tuple[dict[str, str], dict[str, str], set[int]]:
    """Files already in the folder: (memory id -> name, source -> name, numbers in use)."""
    by_id: dict[str, str] = {}
    by_source: dict[str, str] = {}
    numbers: set[int] = set()
    for f in scan(folder, root):
        if f.path.parent != folder:
            continue
        m = re.match(r"^(\d{1,7})(?!\d)", f.path.name)
        if m:
            numbers.add(int(m.group(1)))
        by_source[f.source] = f.path.name
        if f.text is None:
            continue
        try:
            mid = parse_adr(f.text, f.path.name).memory_id
        except AdrSkip:
            continue
        if mid:
            by_id.setdefault(mid, f.path.name)
    return by_id, by_source, numbers


def _names(decisions: list[dict], folder: Path, root: Path) -> dict[str, str]:
    by_id, by_source, numbers = _existing(folder, root)
    names: dict[str, str] = {}
    taken: set[str] = set()
    for d in decisions:
        name = by_id.get(d["id"]) or (by_source.get(d["source"]) if d.get("source") else None)
        if name and name not in taken:
            names[d["id"]] = name
            taken.add(name)
    following = max(numbers, default=0) + 1
    for d in decisions:
        if d["id"] in names:
            continue
        while True:
            name = f"{following:04d}-{slug(_heading(d))}.md"
            following += 1
            if name not in taken and not (folder / name).exists():
                break
        names[d["id"]] = name
        taken.add(name)
    return names


def export_folder(store, folder, ns: str, *, overwrite: bool = False) -> dict:
    """Write the decisions of namespace ``ns`` of ``store`` into ``folder`` as MADR files."""
    if folder is None or not str(folder).strip():
        raise NervapackError("give the folder to write the ADR files to")
    path = Path(folder).expanduser()
    if path.exists() and not path.is_dir():
        raise NervapackError(f"{folder} is a file, not a folder")
    path = resolved_inside(path, str(folder))
    if (path / ".git").exists() or (path / WORKSPACE_DIR).is_dir():
        raise NervapackError(f"{folder} is a repository's root; give a folder of ADR files of its own (e.g. docs/adr)")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)  # the folder itself appears whole, when it is written
    except OSError as exc:
        raise NervapackError(f"cannot create the folder {path.parent}: {exc.strerror or exc}") from None
    try:
        tidy(path)  # before reading the folder: a killed run's leftovers go, its old folder comes back
    except OSError as exc:
        raise NervapackError(f"cannot prepare the ADR folder {path}: {exc.strerror or exc}") from None
    root = base_root(path, store.graph.root)
    decisions = store._read(lambda conn: _decisions(conn, ns))
    names = _names(decisions, path, root)
    by_id = {d["id"]: d for d in decisions}
    planned: list[tuple[dict, Path, str, str]] = []
    conflicts: list[str] = []
    for d in decisions:
        target = path / names[d["id"]]
        text = render(d, names, by_id)
        action = _action(target, text)
        if action == "replaced" and not overwrite:
            conflicts.append(target.name)
        planned.append((d, target, text, action))
    if conflicts:
        shown = ", ".join(conflicts[:5]) + (f" and {len(conflicts) - 5} more" if len(conflicts) > 5 else "")
        raise NervapackError(f"{len(conflicts)} file(s) in {path} already exist with other content ({shown}); "
                             "nothing was written. Use --overwrite to replace them.")
    writes = {target.name: text for _, target, text, action in planned if action != "unchanged"}
    try:
        if writes:
            write_folder(path, writes)
        elif not path.exists():  # no decisions: the folder, empty (one mkdir: whole or not at all)
            path.mkdir()
    except OSError as exc:
        raise NervapackError(f"cannot write the ADR folder {path}: {exc.strerror or exc}; it was left as it "
                             "was") from None
    report: dict = {"folder": str(path), "namespace": ns, "decisions": len(decisions), "written": 0,
                    "replaced": 0, "unchanged": 0, "files": []}
    for d, target, _, action in planned:
        report[action] += 1
        report["files"].append({"file": target.name, "id": d["id"], "status": d["status"], "action": action})
    return report


def _action(target: Path, text: str) -> str:
    """"written" (no such file), "unchanged" (the same text) or "replaced" (other content, or a
    symbolic link: never read through, it is replaced by the file)."""
    if target.is_symlink():
        return "replaced"
    try:
        old = target.read_text(encoding="utf-8") if target.exists() else None
    except (OSError, UnicodeDecodeError):
        old = ""
    return "written" if old is None else ("unchanged" if old == text else "replaced")
