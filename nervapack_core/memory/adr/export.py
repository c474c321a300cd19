"""Write the decisions of a namespace into an ADR folder, minimally and faithfully.

- A decision whose file is in the folder (found by the id its block or front matter
  carries, by the id derived from the file's path, by its ``source``, or by its text) is
  written back **only** as its NervaPack block (:mod:`.block`): the team's title, numbering,
  headings, link definitions, date lines and prose are never touched, and no block is
  written when there is nothing to carry — ``git diff`` after import then export of an
  unchanged folder is empty. A decision only found by its text is ``present``: left as it is.
- A decision imported from a file of another folder is copied under the same file name (its
  ADR number kept), with its block.
- A decision with no file (``memory store``) gets a new file, numbered after the highest
  number of the folder, in the folder's own format (Nygard / adr-tools: ``# N. Title``,
  ``Date:``, Status, Context, Decision, Consequences; MADR; log4brains names its files by
  date), with its block. ``new_only`` writes only these.

Nothing is written unless every file can be: the folder changes in one step
(:mod:`.staging`), also for a process killed part-way. A symbolic link in the folder is
never written through (its decision is skipped, with the reason). A folder named inside a
repository that a link leads out of it is refused, as is a repository's root.
"""

from __future__ import annotations

import re
import sqlite3
import unicodedata
from collections import Counter
from dataclasses import dataclass
from datetime import date
from pathlib import Path

import yaml

from ...errors import NervapackError
from ...workspace import WORKSPACE_DIR
from ..nodes import NODE_COLS, node_dict
from .block import (
    Block,
    derived_id,
    find_block,
    front_matter_governs,
    governs_name,
    parse_block,
    replace_block,
    strip_block,
)
from .folder import AdrFile, _title_from_name, base_root, resolved_inside, scan
from .parse import AdrSkip, ParsedAdr, decision_content, norm, one_line, parse_adr
from .staging import tidy, write_folder

__all__ = ["export_folder", "render", "render_nygard", "slug", "decision_block"]

_MIDNIGHT = "T00:00:00.000000Z"
# the block's link keys and the memory edges they carry
_EDGE_KEYS = {"DERIVED_FROM": "derived_from", "CONTRADICTS": "contradicts", "SUPERSEDES": "supersedes"}
# the record's (prose) link kinds that already say an edge: (kind from this file, kind from the other's)
_STATED = {"DERIVED_FROM": ("amends", "amended"), "SUPERSEDES": ("supersedes", "superseded")}


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


# ---------------------------------------------------------------------------- reading the memory
def _decisions(conn: sqlite3.Connection, ns: str) -> list[dict]:
    """Every live decision of ``ns`` with what its block carries: reviews made here, the
    code it TOUCHES, its DERIVED_FROM / CONTRADICTS / SUPERSEDES edges."""
    rows = conn.execute(f"SELECT {NODE_COLS} FROM mem_nodes WHERE namespace = ? AND kind = 'decision' "
                        "AND tombstoned = 0 ORDER BY valid_from, id", (ns,)).fetchall()
    out = [node_dict(r) for r in rows]
    live = {d["id"] for d in out}
    for d in out:
        source = d.get("source") or ""
        d["_reviews"] = [
            {"status": r[0], "by": r[1], "at": r[2], "note": r[3]} for r in conn.execute(
                "SELECT status, reviewer, created_at, note FROM mem_reviews WHERE node_id = ? AND namespace = ? "
                "ORDER BY created_at, rid", (d["id"], ns))
            # the file's own status changes, logged by import: the file says them already
            if not (r[3] or "").startswith("status set to ") or not (r[3] or "").endswith(f" in {source}")]
        code: dict[str, set[str | None]] = {}
        for name, sha in conn.execute(
                # the definition's hash when the link was made (a file link: the file's), as staleness reads it
                "SELECT e.content, coalesce(r.node_sha, r.file_sha) FROM mem_edges x JOIN mem_nodes e ON e.id = x.dst "
                "LEFT JOIN mem_code_refs r ON r.node_id = x.src AND r.entity_id = x.dst "
                "WHERE x.src = ? AND x.kind = 'TOUCHES' AND e.tombstoned = 0", (d["id"],)):
            code.setdefault(name, set()).add(sha)
        d["_code"] = code
        d["_edges"] = sorted((k, dst) for k, dst in conn.execute(
            "SELECT kind, dst FROM mem_edges WHERE src = ? AND kind IN ('DERIVED_FROM', 'CONTRADICTS', 'SUPERSEDES')",
            (d["id"],)) if dst in live and dst != d["id"])
    return out


def _adr(d: dict) -> dict:
    meta = d.get("metadata") or {}
    adr = meta.get("adr") if isinstance(meta, dict) else None
    return adr if isinstance(adr, dict) else {}


# ---------------------------------------------------------------------------- the folder
@dataclass
class _File:
    """A record of the target folder, as export needs it."""

    file: AdrFile
    name: str  # path inside the folder
    text: str
    adr: ParsedAdr | None
    block: Block | None
    ids: set[str]  # the ids it names (block, front matter)
    derived: str  # the id derived from its path
    content: str | None  # the decision text it gives, loosely compared
    number: int | None


def _number(name: str) -> int | None:
    m = re.match(r"^(\d{1,7})(?!\d)", name.rsplit("/", 1)[-1])
    return int(m.group(1)) if m and not re.match(r"^\d{8}", name.rsplit("/", 1)[-1]) else None


def _folder_files(folder: Path, root: Path, ns: str) -> tuple[list[_File], list[AdrFile]]:
    """(the records of the folder, every Markdown file there, links and unreadable ones included)."""
    all_files = scan(folder, root) if folder.is_dir() else []
    out: list[_File] = []
    for f in all_files:
        if f.error or f.text is None:
            continue
        name = f.path.relative_to(folder).as_posix()
        block, _ = parse_block(f.text)
        try:
            adr: ParsedAdr | None = parse_adr(strip_block(f.text), f.path.name)
        except AdrSkip:
            adr = None
        ids: set[str] = set()
        if block is not None and block.id:
            ids.add(block.id)
        content = None
        if adr is not None:
            if adr.memory_id:
                ids.add(adr.memory_id)
            title = adr.title or _title_from_name(f.path.stem)
            content = norm(decision_content(title, adr.decision, adr.chosen, adr.decision_text))
        out.append(_File(f, name, f.text, adr, block, ids, derived_id(ns, f.source), content,
                         adr.number if adr else _number(name)))
    return out, all_files


def _folder_format(files: list[_File], decisions: list[dict]) -> str:
    """The format the folder's records are in (most of them), else the decisions' files', else MADR."""
    seen = Counter(f.adr.format for f in files if f.adr is not None)
    if not seen:
        seen = Counter(str(_adr(d).get("format")) for d in decisions if _adr(d).get("format"))
    return seen.most_common(1)[0][0] if seen else "madr"


def _width(files: list[_File]) -> int:
    widths = Counter(len(m.group(1)) for f in files if (m := re.match(r"^(\d{1,7})(?!\d)", f.file.path.name))
                     and not re.match(r"^\d{8}", f.file.path.name))
    return widths.most_common(1)[0][0] if widths else 4


# ---------------------------------------------------------------------------- the block
def decision_block(d: dict, ns: str, source: str, prose: ParsedAdr | None, current: Block | None,
                   names: dict[str, str], by_id: dict[str, dict]) -> Block:
    """What ``d``'s block says in the file at ``source`` (its prose ``prose``, the block it
    holds now ``current``; ``names``: id -> file name in the folder of every decision there)."""
    adr = _adr(d)
    own_file = d.get("source") == source
    block = Block()
    if d["id"] != derived_id(ns, source) and not (prose is not None and prose.memory_id == d["id"]):
        block.id = d["id"]
    written: list[str | dict] = list(current.governs) if current is not None else (
        list(adr.get("governs") or []) if own_file else [])
    touched = {name.casefold() for name in d.get("_code") or {}}
    removed = {n.casefold() for n in adr.get("linked") or [] if own_file} - touched  # memory link --remove
    written = [g for g in written if governs_name(g).casefold() not in removed]
    front = [governs_name(g).casefold() for g in (front_matter_governs(prose.extra)[0] if prose else [])]
    have = {governs_name(g).casefold() for g in written} | set(front)
    for name in sorted(d.get("_code") or {}):
        if name.casefold() in have:
            continue
        shas = {s for s in d["_code"][name] if s}
        written.append({"code": name, "sha": shas.pop()} if len(shas) == 1 else {"code": name})
    block.governs = written
    block.reviews = list(d.get("_reviews") or [])
    links: dict[str, list[str]] = {}
    for kind, other_id in d.get("_edges") or []:
        other = by_id[other_id]
        target = names.get(other_id, other_id)
        if kind in _STATED:  # the prose of this file (or the other's, about this file) says it already
            mine, theirs = _STATED[kind]
            if _says(prose, mine, target) or (d.get("source") and [theirs, d["source"]] in (
                    _adr(other).get("links") or [])):
                continue
        links.setdefault(_EDGE_KEYS[kind], []).append(target)
    block.links = {k: sorted(set(v)) for k, v in links.items()}
    block.file_status = prose.status if prose is not None and prose.status else None
    return block


def _says(prose: ParsedAdr | None, kind: str, name: str) -> bool:
    """Whether the prose links to the file ``name`` as ``kind`` (by file name or ADR number)."""
    if prose is None:
        return False
    number = _number(name)
    for said, _, href in prose.links:
        if said != kind:
            continue
        if href.rsplit("/", 1)[-1] == name or (href.startswith("#") and href[1:].isdigit()
                                                and number is not None and int(href[1:]) == number):
            return True
    return False


# ---------------------------------------------------------------------------- new files
def _heading(d: dict) -> str:
    return one_line(d.get("title") or d["content"])


def _escape(text: str) -> str:
    """Keep the rationale's own lines from starting sections of the file, or a NervaPack block."""
    text = re.sub(r"(?m)^([ \t]*)<!--([ \t]*)nervapack", r"\1\\<!--\2nervapack", text.strip())
    return re.sub(r"(?m)^#", r"\\#", text)


def _title_of(other: dict, names: dict[str, str]) -> str:
    n = _number(names.get(other["id"], ""))
    return f"{n}. {_heading(other)}" if n is not None else _heading(other)


def render(d: dict, names: dict[str, str], by_id: dict[str, dict]) -> str:
    """The MADR text of a new decision ``d`` (``names``: id -> file name of every decision in the folder)."""
    heading = _heading(d)
    chosen = one_line(d["content"])
    meta = d.get("metadata") or {}
    fm: dict = {}
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
    deciders = meta.get("deciders") if isinstance(meta, dict) else None
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
    for other in sorted((o for o in by_id.values() if o.get("superseded_by") == d["id"] and o["id"] in names),
                        key=lambda o: names[o["id"]]):
        links.append(f"* Supersedes [{_heading(other)}]({names[other['id']]})")
    if links:
        parts.append("## More Information\n\n" + "\n".join(links) + "\n")
    return "\n".join(parts)


def render_nygard(d: dict, number: int, names: dict[str, str], by_id: dict[str, dict]) -> str:
    """The Nygard / adr-tools text of a new decision ``d``, ADR number ``number``."""
    succ = d.get("superseded_by")
    status: list[str] = []
    if d["status"] == "superseded" and succ in names:
        status.append(f"Superseded by [{_title_of(by_id[succ], names)}]({names[succ]})")
    else:
        status.append(str(d.get("review_status") or d["status"] or "accepted").capitalize())
    for other in sorted((o for o in by_id.values() if o.get("superseded_by") == d["id"] and o["id"] in names),
                        key=lambda o: names[o["id"]]):
        status.append(f"Supersedes [{_title_of(other, names)}]({names[other['id']]})")
    rationale = str(d.get("rationale") or "").strip()
    rejected = [one_line(a) for a in d.get("alternatives_rejected") or [] if one_line(a)]
    consequences = ("Rejected alternatives:\n\n" + "".join(f"* {a}\n" for a in rejected)).strip() if rejected \
        else "Not recorded."
    # who set the status, in the line adr-tools folders use for it: "accepted by" travels with the file
    deciders = [f"Deciders: {one_line(d['status_by'])}", ""] if d.get("status_by") else []
    return "\n".join([
        f"# {number}. {_heading(d)}", "", f"Date: {d['valid_from'][:10]}", "", *deciders, "## Status", "",
        "\n\n".join(status), "",
        "## Context", "", _escape(rationale) if rationale else "Not recorded.", "",
        "## Decision", "", _escape(str(d["content"])), "", "## Consequences", "", consequences, ""])


# ---------------------------------------------------------------------------- export
@dataclass
class _Plan:
    d: dict
    name: str  # path inside the folder
    action: str  # written, blocks, unchanged, present, skipped
    base: str | None = None  # the text the block goes into (None: a new file rendered)
    prose: ParsedAdr | None = None
    current: Block | None = None
    number: int | None = None
    reason: str | None = None


def _check_folder(folder) -> Path:
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
    return path


def _source_text(d: dict, root: Path) -> str | None:
    """The text of the file a decision was imported from, when it can be read inside the repository."""
    source = d.get("source")
    if not source or not _adr(d):
        return None
    path = root / source
    try:
        if path.is_symlink() or not path.resolve().is_relative_to(root.resolve()) or not path.is_file():
            return None
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError, ValueError):
        return None


def export_folder(store, folder, ns: str, *, overwrite: bool = False, new_only: bool = False) -> dict:
    """Write the decisions of namespace ``ns`` of ``store`` into ``folder`` (see the module docstring)."""
    if overwrite:
        raise NervapackError("--overwrite is no longer supported: export-adr never rewrites a team's ADR files; "
                             "it writes only NervaPack's block at the end of a decision's file and new files for "
                             "decisions without one. Run it without --overwrite.")
    path = _check_folder(folder)
    root = base_root(path, store.graph.root)
    decisions = store._read(lambda conn: _decisions(conn, ns))
    by_id = {d["id"]: d for d in decisions}
    files, all_files = _folder_files(path, root, ns)
    links = {f.path.relative_to(path).as_posix() for f in all_files if f.path.is_symlink() or f.error}
    fmt = _folder_format(files, decisions)
    errors = {f.source: f.error for f in all_files if f.error}
    plans = _plan(decisions, files, links, errors, path, root, new_only)
    names = {p.d["id"]: p.name for p in plans if p.action != "skipped"}
    width = _width(files)
    taken = {f.name for f in files} | {p.name for p in plans if p.name}
    following = max([f.number or 0 for f in files] + [p.number or 0 for p in plans], default=0) + 1
    numbers = {f.number for f in files} | {p.number for p in plans if p.name}
    for p in plans:  # new files: their own ADR number when free, else the folder's next numbers
        if p.action == "written" and not p.name:
            own = _adr(p.d).get("number")
            if isinstance(own, int) and own not in numbers and fmt != "log4brains":
                name = f"{own:0{width}d}-{slug(_heading(p.d))}.md"
                if name not in taken and not (path / name).exists():
                    p.name, p.number = name, own
                    numbers.add(own)
                    taken.add(name)
                    names[p.d["id"]] = name
                    continue
            while True:
                number = following
                following += 1
                if fmt == "log4brains":  # named by date; a second of the same name and day gets a number
                    name = f"{p.d['valid_from'][:10].replace('-', '')}-{slug(_heading(p.d))}.md"
                    if name in taken or (path / name).exists():
                        name = f"{name[:-3]}-{number}.md"
                else:
                    name = f"{number:0{width}d}-{slug(_heading(p.d))}.md"
                if name not in taken and not (path / name).exists():
                    break
            p.name, p.number = name, number
            numbers.add(number)
            taken.add(name)
            names[p.d["id"]] = name
    writes: dict[str, str] = {}
    for p in plans:
        if p.action in ("skipped", "present") or (new_only and p.action != "written"):
            continue
        source = _source_of(path / p.name, root)
        if p.base is None:
            text = render_nygard(p.d, p.number or 0, names, by_id) if fmt == "nygard" else render(p.d, names, by_id)
            p.prose = _parse(text, p.name)
            p.base = text
        block = decision_block(p.d, ns, source, p.prose, p.current, names, by_id)
        # the same as the block there (a hand-written one among them): its text is kept as written
        same = p.current is not None and block.data() == p.current.data()
        new = p.base if same else replace_block(p.base, block)
        if new != p.base and p.action != "written" and p.name in links:
            p.action, p.reason = "skipped", f"{p.name} is a symbolic link; its block is not written through it"
            continue
        if p.action == "written":
            writes[p.name] = new
        elif new != p.base:
            p.action = "blocks"
            writes[p.name] = new
        else:
            p.action = "unchanged"
    try:
        if writes:
            write_folder(path, writes)
        elif not path.exists():  # no decisions: the folder, empty (one mkdir: whole or not at all)
            path.mkdir()
    except OSError as exc:
        raise NervapackError(f"cannot write the ADR folder {path}: {exc.strerror or exc}; it was left as it "
                             "was") from None
    report: dict = {"folder": str(path), "namespace": ns, "format": fmt, "decisions": len(decisions), "written": 0,
                    "blocks": 0, "unchanged": 0, "present": 0, "skipped": 0, "files": []}
    for p in plans:
        action = "present" if new_only and p.action in ("blocks", "unchanged") else p.action
        report[action] += 1
        entry = {"file": p.name, "id": p.d["id"], "status": p.d["status"], "action": action}
        if p.reason:
            entry["reason"] = p.reason
        report["files"].append(entry)
    return report


def _source_of(file: Path, root: Path) -> str:
    try:
        return unicodedata.normalize("NFC", file.relative_to(root).as_posix())
    except ValueError:
        return file.as_posix()


def _parse(text: str, name: str) -> ParsedAdr | None:
    try:
        return parse_adr(text, name.rsplit("/", 1)[-1])
    except AdrSkip:
        return None


def _plan(decisions: list[dict], files: list[_File], links: set[str], errors: dict[str, str], path: Path,
          root: Path, new_only: bool) -> list[_Plan]:
    """Where each decision goes: its file in the folder (by id, source, then text), a copy of its
    file from another folder, or a new file (named later); skipped when its file in the folder
    cannot be read or is gone (never written anew: the team removed it)."""
    prefix = _source_of(path, root).rstrip("/") + "/"
    named: dict[str, _File] = {}
    by_source = {f.file.source: f for f in files}
    by_derived = {f.derived: f for f in files}
    by_content: dict[str, _File] = {}
    for f in files:
        for i in sorted(f.ids):
            named.setdefault(i, f)
        if f.content:
            by_content.setdefault(f.content, f)
    names = {f.name for f in files}
    used: set[str] = set()
    plans: list[_Plan] = []
    for d in decisions:
        hit = named.get(d["id"]) or (by_source.get(d["source"]) if d.get("source") else None) \
            or by_derived.get(d["id"])
        if hit is not None and hit.name not in used:
            used.add(hit.name)
            plans.append(_Plan(d, hit.name, "unchanged", base=hit.text, prose=hit.adr, current=hit.block))
            continue
        twin = by_content.get(norm(d["content"]))
        if twin is not None and twin.name not in used:
            used.add(twin.name)
            plans.append(_Plan(d, twin.name, "present", reason="its text is already in the folder"))
            continue
        if d.get("source") in errors:
            plans.append(_Plan(d, "", "skipped", reason=f"its file {d['source']} {errors[d['source']]}"))
            continue
        if _adr(d) and str(d.get("source") or "").startswith(prefix):
            plans.append(_Plan(d, "", "skipped", reason=f"its file {d['source']} is gone from the folder (restore "
                                                        "it, or forget the decision to drop it)"))
            continue
        if new_only and _adr(d):
            plans.append(_Plan(d, "", "skipped", reason="it has a file of its own (--new-only)"))
            continue
        text = _source_text(d, root)
        if text is not None:  # a copy of its own file, under its name: the ADR number kept
            name = str(d["source"]).rsplit("/", 1)[-1]
            if name in links or (path / name).is_symlink():
                plans.append(_Plan(d, "", "skipped", reason=f"{name} in the folder is a symbolic link; not written"))
                continue
            if name not in used and name not in names:
                used.add(name)
                prose = _parse(strip_block(text), name)
                current, _ = parse_block(text) if find_block(text) else (None, [])
                plans.append(_Plan(d, name, "written", base=text, prose=prose, current=current,
                                   number=_number(name)))
                continue
        plans.append(_Plan(d, "", "written"))
    return plans

