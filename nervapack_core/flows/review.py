"""Decisions in code review: which agreed decisions does a change touch?

A decision TOUCHES definitions of the code graph (``mem_code_refs``: file, qualified
name, kind, and the definition's content hash when the link was made). A change is a
git range (``BASE..HEAD``), the staged index, or the working tree. For each changed file
that governed code lives in, both sides are parsed with the same tree-sitter queries the
ingest uses and each governed definition is compared by its span hash:

- ``modified``: its text differs between the two sides;
- ``removed``: it is gone (deleted, or its file deleted);
- ``moved``: its file was renamed (``git mv`` or a rename git detects) and the definition
  is unchanged — followed to the new path, reported for information.

A neighbouring definition changing in the same file touches nothing. A decision whose
recorded hash equals the base side and whose code the change modifies or removes is
*made stale* by the change. New definitions in a folder where many decisions govern code,
with no decision of their own, are listed as undecided new code; ADR files the change adds
or edits are listed with their status before and after.

An accepted decision touched by a change can be acknowledged with a commit-message
trailer ``Decision-Reviewed: d_…`` (or ``--ack``): ``--fail-on accepted`` then passes.
Everything is read from git and the two SQLite files; nothing is written, nothing leaves
the machine.
"""

from __future__ import annotations

import os
import posixpath
import re
import sqlite3
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import NervapackError
from ..gitrepo import git
from ..workspace import Workspace

if TYPE_CHECKING:
    from ..memory import MemoryStore
    from ..tokens import TokenCounter

# a file's definitions: {(kind, qualified_name): span hash} (None: not parsed)
Definitions = dict[tuple[str, str], str]

__all__ = ["ChangeSpec", "ChangeReview", "review_changes", "resolve_change", "merge_base", "TRAILER",
           "AREA_MIN_DECISIONS", "FAIL_ON", "failures", "to_markdown", "acknowledged_in"]

TRAILER = "Decision-Reviewed"
# a folder "has many" decisions when at least this many standing decisions govern code in it
AREA_MIN_DECISIONS = 3
FAIL_ON = ("accepted", "proposed", "any")
_TRAILER_RE = re.compile(rf"^{TRAILER}:\s*(.+)$", re.IGNORECASE | re.MULTILINE)
_ZERO = "0" * 40


@dataclass(frozen=True)
class ChangeSpec:
    """What is compared: ``base`` (a commit) against ``head`` — a commit, ``:index`` (the
    staged files) or ``:working`` (the working tree, untracked files included)."""

    base: str
    head: str
    label: str


@dataclass
class ChangeReview:
    root: str
    base: str
    head: str
    label: str
    files: list[dict] = field(default_factory=list)  # {status, path, old_path}
    decisions: list[dict] = field(default_factory=list)
    adr: list[dict] = field(default_factory=list)
    undecided: list[dict] = field(default_factory=list)
    acknowledged: list[str] = field(default_factory=list)
    memory: bool = True

    def to_dict(self) -> dict:
        return asdict(self)


# -- git ------------------------------------------------------------------------------------

def _git(root: Path, *args: str, input: bytes | None = None, check: bool = True) -> bytes:
    done = git(root, *args, input=input, timeout=120)  # "git failed: …" when it cannot run
    if check and done.returncode != 0:
        msg = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise NervapackError(f"git {' '.join(args[:2])} failed: {msg[-1] if msg else 'exit ' + str(done.returncode)}")
    return done.stdout


def _commit(root: Path, ref: str) -> str:
    if not ref or ref.startswith("-") or any(c.isspace() for c in ref):
        raise NervapackError(f"{ref!r} is not a commit reference")
    out = _git(root, "rev-parse", "--verify", "--quiet", "--end-of-options", f"{ref}^{{commit}}", check=False)
    sha = out.decode().strip()
    if not sha:
        raise NervapackError(f"{ref!r} is not a commit of the repository at {root}")
    return sha


def merge_base(root: Path, base_ref: str, head: str, head_label: str = "HEAD") -> str:
    """The commit ``base_ref`` and ``head`` (a commit) last shared; when there is none, why (an
    orphan branch, or a shallow clone that lacks the shared history) and what to pass instead."""
    base = _commit(root, base_ref)
    done = _git(root, "merge-base", base, head, check=False).decode().strip()
    if done:
        return done
    shallow = _git(root, "rev-parse", "--is-shallow-repository", check=False).decode().strip() == "true"
    explicit = (f"give the change explicitly instead: `nervapack review-changes {base_ref}..{head_label}` "
                "compares the two commits directly (or BASE..HEAD from the commit the change starts at), "
                "or --staged / --working")
    if shallow:
        raise NervapackError(
            f"{base_ref} and {head_label} have no common commit here: this is a shallow clone (git clone --depth), "
            f"so the history they share was not fetched. Run `git fetch --unshallow`, or {explicit}.")
    raise NervapackError(
        f"{base_ref} and {head_label} share no history (git merge-base finds no common commit): one of them is on "
        f"an orphan branch (git checkout --orphan) or comes from an unrelated repository. To review it, {explicit}.")


def default_branch(root: Path) -> str | None:
    """The branch changes are reviewed against: ``origin/HEAD``'s target, else main or master."""
    out = _git(root, "symbolic-ref", "--quiet", "refs/remotes/origin/HEAD", check=False).decode().strip()
    if out:
        return out.removeprefix("refs/remotes/")
    for name in ("main", "master", "trunk", "develop"):
        if _git(root, "rev-parse", "--verify", "--quiet", f"refs/heads/{name}", check=False).strip():
            return name
    return None


def resolve_change(root: Path, range_: str | None = None, *, staged: bool = False, working: bool = False) -> ChangeSpec:
    """The change to review (see :class:`ChangeSpec`); default: the current branch against
    its merge base with the default branch."""
    if sum(bool(x) for x in (range_, staged, working)) > 1:
        raise NervapackError("give one of: a range BASE..HEAD, --staged, --working")
    if staged or working:
        base = _commit(root, "HEAD")
        return ChangeSpec(base, ":index" if staged else ":working", "staged changes" if staged else "working tree")
    if range_:
        if "..." in range_:
            a, b = range_.split("...", 1)
            head = _commit(root, b or "HEAD")
            base = merge_base(root, a, head, b or "HEAD")
        elif ".." in range_:
            a, b = range_.split("..", 1)
            base, head = _commit(root, a), _commit(root, b or "HEAD")
        else:
            head = _commit(root, "HEAD")
            base = _commit(root, range_)
        return ChangeSpec(base, head, range_)
    head = _commit(root, "HEAD")
    branch = default_branch(root)
    if branch is None:
        raise NervapackError("no default branch (origin/HEAD, main or master) to compare with; give a range BASE..HEAD")
    base = merge_base(root, branch, head)
    return ChangeSpec(base, head, f"{branch}...HEAD")


def changed_files(root: Path, spec: ChangeSpec) -> list[dict]:
    """``{status: A|M|D|R, path, old_path}`` per changed file, renames detected by git."""
    args = ["diff", "--name-status", "-M", "-z", "--no-color"]
    if spec.head == ":index":
        args += ["--cached", spec.base]
    elif spec.head == ":working":
        args += [spec.base]
    else:
        args += [spec.base, spec.head]
    parts = _git(root, *args).decode("utf-8", "surrogateescape").split("\0")
    out: list[dict] = []
    i = 0
    while i < len(parts) and parts[i]:
        status = parts[i][0]
        if status in "RC":
            out.append({"status": "R" if status == "R" else "A", "old_path": parts[i + 1], "path": parts[i + 2]})
            i += 3
        else:
            path = parts[i + 1]
            out.append({"status": status if status in "ADM" else "M", "old_path": None if status == "A" else path,
                        "path": None if status == "D" else path})
            i += 2
    if spec.head == ":working":  # new files not yet added are part of the working tree's change
        known = {f["path"] for f in out}
        for path in _git(root, "ls-files", "--others", "--exclude-standard", "-z").decode(
                "utf-8", "surrogateescape").split("\0"):
            if path and path not in known:
                out.append({"status": "A", "old_path": None, "path": path})
    return out


def _read(root: Path, rev: str, path: str | None) -> bytes | None:
    """A file's bytes at a commit, in the index or in the working tree (None: not there)."""
    if path is None:
        return None
    if rev == ":working":
        from ..code.retrieval.source import inside_root

        full = inside_root(root, path)  # a working-tree link leaving the root is not read
        if full is None:
            return None
        try:
            return full.read_bytes()
        except OSError:
            return None
    spec = f":{path}" if rev == ":index" else f"{rev}:{path}"
    done = git(root, "cat-file", "blob", spec, timeout=60, locale=None)
    return done.stdout if done.returncode == 0 else None


def commit_messages(root: Path, spec: ChangeSpec) -> list[str]:
    if spec.head.startswith(":"):
        return []
    raw = _git(root, "log", "--format=%B%x00", f"{spec.base}..{spec.head}").decode("utf-8", "replace")
    return [m for m in raw.split("\0") if m.strip()]


def acknowledged_in(messages: list[str]) -> list[str]:
    """Decision ids named by ``Decision-Reviewed:`` trailers (comma or space separated)."""
    found: list[str] = []
    for message in messages:
        for m in _TRAILER_RE.finditer(message):
            found += [t for t in re.split(r"[\s,]+", m.group(1).strip()) if t]
    return list(dict.fromkeys(found))


# -- definitions on both sides ------------------------------------------------------------------

def _definitions(data: bytes | None, path: str | None) -> Definitions | None:
    """``{(kind, qualified_name): span hash}`` of a file's definitions (None: not parsed)."""
    from ..code.ingest.pipeline import definition_hashes

    return definition_hashes(data, path)


# -- memory side ---------------------------------------------------------------------------------

def _open_memory(path: Path) -> sqlite3.Connection | None:
    if not path.is_file():
        return None
    from ..memory import schema

    # read-only, never migrated: a store from an older release reads through temp views
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=30)
    conn.row_factory = sqlite3.Row
    try:
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        if "mem_code_refs" not in tables:
            conn.close()
            return None
        schema.read_as_latest(conn, {r[1] for r in conn.execute("PRAGMA table_info(mem_nodes)")})
    except sqlite3.Error as exc:
        conn.close()
        raise NervapackError(f"{path} is not a usable memory database: {exc}") from None
    return conn


def _standing() -> str:
    """SQL over alias ``n``: a decision a change review shows — current now (the one rule of every
    read path, :func:`nervapack_core.memory.nodes.current_sql`) and reviewable (accepted, proposed
    or deprecated: :data:`nervapack_core.memory.kinds.REVIEWABLE`, which says why deprecated is in)."""
    from ..memory.kinds import reviewable_sql
    from ..memory.nodes import current_sql

    return f"n.kind = 'decision' AND {current_sql('n')} AND {reviewable_sql('n')}"


def governed_refs(conn: sqlite3.Connection, files: list[str], namespace: str | None) -> list[dict]:
    """Code references of standing decisions in ``files`` (every namespace unless one is given)."""
    from ..storage import in_chunks

    ns_sql, ns_args = ("AND n.namespace = ? ", (namespace,)) if namespace else ("", ())
    rows = in_chunks(
        conn, "SELECT n.id, n.namespace, n.content, n.title, COALESCE(n.status, 'accepted') AS status, "
        "r.file, r.qualified_name, r.code_kind, r.node_sha FROM mem_code_refs r JOIN mem_nodes n ON n.id = r.node_id "
        f"WHERE {_standing()} {ns_sql}AND r.file IN ({{marks}}) ORDER BY n.valid_from, n.id", files, ns_args)
    return [dict(r) for r in rows]


def decisions_in_area(conn: sqlite3.Connection, folder: str, namespace: str | None) -> int:
    """Standing decisions governing code under ``folder`` ('' = the repository root)."""
    ns_sql, ns_args = ("AND n.namespace = ? ", (namespace,)) if namespace else ("", ())
    # substr, not LIKE: any length of folder name, its % and _ literal (lower(): the case folding of LIKE)
    area_sql, area_args = ("AND lower(substr(r.file, 1, ?)) = lower(?)", (len(folder) + 1, folder + "/")) \
        if folder else ("", ())
    return conn.execute(
        "SELECT count(DISTINCT n.id) FROM mem_code_refs r JOIN mem_nodes n ON n.id = r.node_id "
        f"WHERE {_standing()} {ns_sql}{area_sql}", (*ns_args, *area_args)).fetchone()[0]


# -- the review -------------------------------------------------------------------------------------

def review_changes(root: str | os.PathLike, spec: ChangeSpec | None = None, *,
                   memory_db: str | os.PathLike | None = None, namespace: str | None = None,
                   acknowledged: list[str] | None = None, messages: list[str] | None = None,
                   adr_dir: str | None = None) -> ChangeReview:
    """The decisions a change touches (see the module docstring).

    ``acknowledged``: decision ids acknowledged by the person running the review (``--ack``);
    each must be a decision of the memory, else a :class:`NervapackError` (a mistyped id would
    otherwise pass the check it was meant to pass). ``messages``: commit messages whose
    ``Decision-Reviewed`` trailers count too, like the change's own commits — an id there that
    names no decision is ignored, as in an old commit's message."""
    root = Path(root).resolve()
    if not (root / ".git").exists():
        raise NervapackError(f"{root} is not a git repository")
    spec = spec or resolve_change(root)
    files = changed_files(root, spec)
    review = ChangeReview(str(root), spec.base, spec.head, spec.label, files=files)
    trailers = acknowledged_in([*(messages or []), *commit_messages(root, spec)])
    acks = list(dict.fromkeys([*(acknowledged or []), *trailers]))
    review.acknowledged = acks
    conn = _open_memory(Path(memory_db) if memory_db else Workspace(root).memory_db)
    if conn is None:
        review.memory = False
    try:
        _check_acks(conn, acknowledged or [])
        if conn is not None:
            _touched(root, spec, files, conn, namespace, review)
            _undecided(root, spec, files, conn, namespace, review)
        review.adr = _adr_transitions(root, spec, files, adr_dir)
    finally:
        if conn is not None:
            conn.close()
    for d in review.decisions:
        d["acknowledged"] = d["id"] in acks
    return review


def _check_acks(conn: sqlite3.Connection | None, ids: list[str]) -> None:
    """Refuse an acknowledged id that names no decision of the memory."""
    if not ids:
        return
    if conn is None:
        raise NervapackError(f"--ack {ids[0]}: there is no decision memory in this repository "
                             "(.nervapack/memory.db) to acknowledge a decision of")
    known = {r[0] for r in conn.execute(
        f"SELECT id FROM mem_nodes WHERE kind = 'decision' AND id IN ({','.join('?' * len(ids))})", ids)}
    unknown = [i for i in ids if i not in known]
    if unknown:
        raise NervapackError(f"--ack {unknown[0]}: no decision has this id (give the full id, as "
                             "`nervapack memory decisions` prints it)")


def _touched(root: Path, spec: ChangeSpec, files: list[dict], conn: sqlite3.Connection, namespace: str | None,
             review: ChangeReview) -> None:
    by_old = {f["old_path"]: f for f in files if f["old_path"]}
    refs = governed_refs(conn, sorted(by_old), namespace)
    sides: dict[str, tuple] = {}
    decisions: dict[str, dict] = {}
    for r in refs:
        f = by_old[r["file"]]
        if r["file"] not in sides:
            before = _definitions(_read(root, spec.base, f["old_path"]), f["old_path"])
            after = None if f["status"] == "D" else _definitions(_read(root, spec.head, f["path"]), f["path"])
            sides[r["file"]] = (before, after)
        before, after = sides[r["file"]]
        key = (r["code_kind"], r["qualified_name"])
        change = _compare(f, key, before, after)
        if change is None:
            continue
        d = decisions.setdefault(r["id"], {
            "id": r["id"], "namespace": r["namespace"], "status": r["status"], "title": r["title"],
            "content": r["content"], "code": [], "makes_stale": False})
        base_sha = before.get(key) if before else None
        stale_now = change != "moved" and r["node_sha"] is not None and r["node_sha"] == base_sha
        d["makes_stale"] = d["makes_stale"] or stale_now
        entry = {"change": change, "file": r["file"], "path": f["path"], "qualified_name": r["qualified_name"],
                 "kind": r["code_kind"], "makes_stale": stale_now}
        if entry not in d["code"]:
            d["code"].append(entry)
    order = {"accepted": 0, "proposed": 1, "deprecated": 2}
    review.decisions = sorted(decisions.values(), key=lambda d: (order.get(d["status"], 3), d["id"]))


def _compare(f: dict, key: tuple[str, str], before: Definitions | None, after: Definitions | None) -> str | None:
    """How the change treats one governed definition: modified, removed, moved or None."""
    kind, _name = key
    if f["status"] == "D":
        return "removed"
    if kind == "file" or before is None or key not in before:
        # the whole file is governed, or the definition cannot be located on the base side
        # (the memory's link is older than the code): any edit to the file counts
        if f["status"] == "R" and before is not None and after is not None and before == after:
            return "moved"
        return "modified" if f["status"] in ("M", "R") else None
    if after is None or key not in after:
        return "removed"
    if after[key] != before[key]:
        return "modified"
    return "moved" if f["status"] == "R" else None


def _undecided(root: Path, spec: ChangeSpec, files: list[dict], conn: sqlite3.Connection, namespace: str | None,
               review: ChangeReview) -> None:
    """New definitions, governed by no decision, in folders where many decisions govern code.

    A definition is governed when a standing decision links it, its file, or a definition
    enclosing it in the same file (a method added to a governed class is that decision's code);
    a namesake in another file is not."""
    governed: dict[str, set[str]] = {}
    for file, name in conn.execute(
            "SELECT DISTINCT r.file, r.qualified_name FROM mem_code_refs r JOIN mem_nodes n ON n.id = r.node_id "
            f"WHERE {_standing()}"):
        governed.setdefault(file, set()).add(name)

    def is_governed(paths: tuple[str | None, ...], name: str) -> bool:
        names = set().union(*(governed.get(p, set()) for p in paths if p))
        parts = name.split(".")
        return any(".".join(parts[:i]) in names for i in range(1, len(parts) + 1)) or any(p in names for p in paths)
    areas: dict[str, int] = {}
    for f in files:
        if f["status"] == "D" or f["path"] is None:
            continue
        folder = posixpath.dirname(f["path"])
        if folder not in areas:
            areas[folder] = decisions_in_area(conn, folder, namespace)
        if areas[folder] < AREA_MIN_DECISIONS:
            continue
        after = _definitions(_read(root, spec.head, f["path"]), f["path"])
        if not after:
            continue
        before = _definitions(_read(root, spec.base, f["old_path"]), f["old_path"]) or {}
        new = [name for (kind, name) in after if (kind, name) not in before and kind in ("class", "function")
               and not is_governed((f["path"], f["old_path"]), name)]
        if new:
            review.undecided.append({"path": f["path"], "area": folder or ".", "decisions_in_area": areas[folder],
                                     "definitions": sorted(new)})


def _adr_transitions(root: Path, spec: ChangeSpec, files: list[dict], adr_dir: str | None) -> list[dict]:
    """ADR files the change adds or edits, with their status before and after."""
    from ..memory import adr
    from ..workspace import Workspace

    if adr_dir is None:
        try:
            found, _ = adr.find_adr_dir(Workspace(root))
        except NervapackError:  # a configured folder that is gone: no ADR lines, the review goes on
            return []
        if found is None:
            return []
        adr_dir = found.relative_to(root).as_posix() if root in found.parents else str(found)
    prefix = str(adr_dir).strip("/") + "/"
    out = []
    for f in files:
        path = f["path"] or f["old_path"]
        if not path or not path.startswith(prefix) or not path.endswith(".md"):
            continue
        before = adr.status_of(_read(root, spec.base, f["old_path"]), f["old_path"])
        after = adr.status_of(_read(root, spec.head, f["path"]), f["path"]) if f["status"] != "D" else None
        if before is None and after is None and f["status"] != "A":
            continue
        change = {"A": "added", "D": "deleted", "R": "renamed"}.get(f["status"], "edited")
        out.append({"path": path, "change": change, "status_before": before, "status_after": after,
                    "transition": before != after})
    return out


# -- verdict and formats ---------------------------------------------------------------------------

def failures(review: ChangeReview, fail_on: str | None) -> list[dict]:
    """The touched decisions that fail ``--fail-on`` (not acknowledged)."""
    if not fail_on:
        return []
    if fail_on not in FAIL_ON:
        raise NervapackError(f"--fail-on takes one of: {', '.join(FAIL_ON)}")
    return [d for d in review.decisions if not d["acknowledged"]
            and (fail_on == "any" or d["status"] == fail_on or (fail_on == "proposed" and d["status"] == "accepted"))]


def _md(text: str) -> str:
    """User text inside a Markdown table cell or list item: no markup, no HTML."""
    return (" ".join(str(text).split()).replace("\\", "\\\\").replace("|", "\\|").replace("<", "&lt;")
            .replace(">", "&gt;").replace("`", "\\`").replace("*", "\\*").replace("_", "\\_").replace("[", "\\["))


def _code(text: str) -> str:
    """User text as a Markdown code span inside a table cell or list item: shown literally
    (``_``, ``*``, ``<`` need no escape in a span — an escape would be shown as a backslash),
    fenced with more backticks than it holds; only ``|`` is escaped, which GitHub reads as the
    cell's end even in a span."""
    text = " ".join(str(text).split()).replace("|", "\\|")
    fence = "`" * (max((len(run) for run in re.findall(r"`+", text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def to_markdown(review: ChangeReview, fail_on: str | None = None) -> str:
    """A pull-request comment."""
    out = [f"### Decisions touched by this change ({_md(review.label)})", ""]
    if not review.memory:
        out += ["_No decision memory in this repository (.nervapack/memory.db)._", ""]
    if review.decisions:
        out += ["| decision | status | code | change |", "|---|---|---|---|"]
        for d in review.decisions:
            ack = " ✅ reviewed" if d["acknowledged"] else ""
            for i, c in enumerate(d["code"]):
                where = f"{_code(c['qualified_name'])} in {_code(c['path'] or c['file'])}"
                first = f"**{_md(d['title'] or d['content'])}** ({d['id']}){ack}" if i == 0 else ""
                stale = " (makes it stale)" if c["makes_stale"] else ""
                out.append(f"| {first} | {d['status'] if i == 0 else ''} | {where} | {c['change']}{stale} |")
        out.append("")
    else:
        out += ["No decision governs the code this change touches.", ""]
    if review.adr:
        out += ["**ADR files**", ""]
        out += [f"- {_code(a['path'])} {a['change']}: {a['status_before'] or '—'} → {a['status_after'] or '—'}"
                for a in review.adr]
        out.append("")
    if review.undecided:
        out += ["**New code without a decision, in areas with many**", ""]
        out += [f"- {_code(u['path'])} ({u['decisions_in_area']} decisions in {_code(u['area'])}): "
                + ", ".join(_code(n) for n in u["definitions"]) for u in review.undecided]
        out.append("")
    failed = failures(review, fail_on)
    if failed:
        out.append(f"❌ {len(failed)} {fail_on} decision(s) touched and not acknowledged: add a "
                   f"`{TRAILER}: <id>` trailer to a commit message once reviewed.")
    return "\n".join(out).rstrip() + "\n"


# -- for agents: the decisions a pending edit touches ---------------------------------------------

_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+\d+(?:,\d+)? @@")


def parse_diff(diff: str) -> dict[str, list[tuple[int, int]] | None]:
    """``{old path: [(first, last) old-side lines changed]}`` from a unified diff; a deleted
    or renamed file maps to None (all of it is touched)."""
    files: dict[str, list[tuple[int, int]] | None] = {}
    current: str | None = None
    for line in diff.splitlines():
        if line.startswith("--- "):
            name = line[4:].split("\t")[0].strip()
            current = None if name == "/dev/null" else name.removeprefix("a/")
            if current is not None:
                files.setdefault(current, [])
        elif line.startswith("+++ ") and current is not None:
            name = line[4:].split("\t")[0].strip()
            if name == "/dev/null" or name.removeprefix("b/") != current:
                files[current] = None  # deleted or renamed: everything in it is touched
        elif line.startswith("@@") and current is not None and files.get(current) is not None:
            m = _HUNK.match(line)
            if m:
                start, count = int(m.group(1)), int(m.group(2) if m.group(2) is not None else 1)
                files[current].append((start, start + max(count, 1) - 1))  # type: ignore[union-attr]
    return files


def decisions_for_edit(root: Path, conn: sqlite3.Connection, *, paths: list[str] | None = None,
                       diff: str | None = None, namespace: str | None = None,
                       touched: dict[str, list[tuple[int, int]] | None] | None = None) -> list[dict]:
    """Standing decisions whose definitions a pending edit touches: with ``diff``, those whose
    lines (in the working tree) a hunk overlaps; with ``paths``, all in those files;
    ``touched``: a diff already parsed (``{file: line ranges or None}``, as :func:`parse_diff`)."""
    touched = dict(touched or {})
    touched.update({p: None for p in paths or []})
    if diff:
        touched.update(parse_diff(diff))
    refs = governed_refs(conn, sorted(touched), namespace)
    spans: dict[str, dict] = {}
    found: dict[str, dict] = {}
    for r in refs:
        ranges = touched[r["file"]]
        if ranges is not None and r["code_kind"] != "file":
            if r["file"] not in spans:
                spans[r["file"]] = _spans(root, r["file"])
            span = spans[r["file"]].get((r["code_kind"], r["qualified_name"]))
            if span is not None and not any(a <= span[1] and b >= span[0] for a, b in ranges):
                continue  # the edit is elsewhere in the file
        d = found.setdefault(r["id"], {"id": r["id"], "namespace": r["namespace"], "status": r["status"],
                                       "title": r["title"], "content": r["content"], "code": []})
        where = f"{r['qualified_name']} ({r['file']})"
        if where not in d["code"]:
            d["code"].append(where)
    order = {"accepted": 0, "proposed": 1, "deprecated": 2}
    return sorted(found.values(), key=lambda d: (order.get(d["status"], 3), d["id"]))


def _spans(root: Path, path: str) -> dict[tuple[str, str], tuple[int, int]]:
    """``{(kind, qualified name): (first, last line)}`` of a working-tree file's definitions."""
    from ..code.parse.languages import PARSED, language_for_path
    from ..code.parse.parser import parse_source

    language = language_for_path(path)
    from ..code.retrieval.source import inside_root

    full = inside_root(root, path)
    if full is None:
        return {}
    try:
        data = full.read_bytes()
    except OSError:
        return {}
    if language not in PARSED:
        return {}
    out: dict[tuple[str, str], tuple[int, int]] = {}
    for e in parse_source(data, language).entities:
        out.setdefault((e.kind, e.qualified_name), (e.start_line, e.end_line))
    return out


_SUMMARY_CHARS = 200
_GOVERNS_SHOWN = 3


def _summary(decision: dict) -> str:
    """A decision's title (else its content) on one line, cut at :data:`_SUMMARY_CHARS`: a
    briefing lists what governs the edit; ``memory_why`` tells a decision whole."""
    text = " ".join(str(decision["title"] or decision["content"]).split())
    return text if len(text) <= _SUMMARY_CHARS else text[:_SUMMARY_CHARS - 1].rstrip() + "…"


def _governs(code: list[str]) -> str:
    """The definitions a decision governs in the edit: the first few and how many more."""
    shown = ", ".join(code[:_GOVERNS_SHOWN])
    return shown if len(code) <= _GOVERNS_SHOWN else f"{shown} and {len(code) - _GOVERNS_SHOWN} more"


def edit_briefing(decisions: list[dict], budget_tokens: int, counter: TokenCounter | None = None,
                  short: dict[str, str] | None = None) -> dict:
    """The decisions as Markdown an agent reads before editing, never over ``budget_tokens``:
    as many whole entries as fit, most binding first (accepted, proposed, deprecated).
    ``short``: the id to show for each full id (``MemoryStore.short_ids``: its shortest unique
    prefix, which every memory tool takes back); ``decisions`` keep the full ids."""
    from ..budget import CountCache, check_budget, largest_fitting

    budget = check_budget(budget_tokens, name="budget_tokens")
    count = CountCache(counter)
    marks = {"proposed": "PROPOSED, not agreed yet", "deprecated": "DEPRECATED"}
    shown = short or {}
    lines = [f"- [{shown.get(d['id'], d['id'])}] {marks.get(d['status'], d['status'])} — "
             f"{_summary(d)} · governs {_governs(d['code'])}" for d in decisions]

    def render(n: int) -> str:
        if not decisions:
            return "No decision governs the code this edit touches."
        head = f"## Decisions governing this edit ({n} of {len(decisions)})"
        return "\n".join([head, *lines[:n]])

    n = largest_fitting(lambda k: count(render(k)) <= budget, len(decisions))
    text = render(n) if n >= 0 else ""
    if text and count(text) > budget:
        text = ""
    return {"text": text, "tokens": count(text) if text else 0, "budget_tokens": budget, "total": len(decisions),
            "shown": max(n, 0) if text else 0, "decisions": decisions[:max(n, 0)] if text else []}


# -- for the dashboard: recent commits and the decisions each touched ------------------------------

def decisions_by_commit(root: str | os.PathLike, *, rev: str = "HEAD", limit: int = 20, offset: int = 0,
                        memory_db: str | os.PathLike | None = None, namespace: str | None = None) -> dict:
    """The non-merge commits reachable from ``rev``, newest first, one page (``limit``,
    ``offset``) with the total, each with the decisions it touched (as
    :func:`review_changes` reports them for ``commit^..commit``)."""
    root = Path(root).resolve()
    if not (root / ".git").exists():
        raise NervapackError(f"{root} is not a git repository")
    limit = max(1, min(int(limit), 200))
    offset = max(0, min(int(offset), 2 ** 62))  # past every row; SQLite ends at 2**63 - 1
    head = _commit(root, rev)
    total = int(_git(root, "rev-list", "--count", "--no-merges", head).decode().strip() or 0)
    raw = _git(root, "log", "--no-merges", f"--skip={offset}", f"-n{limit}",
               "--format=%H%x1f%P%x1f%an%x1f%aI%x1f%s%x1e", head).decode("utf-8", "replace")
    commits = []
    for record in raw.split("\x1e"):
        fields = record.strip("\n").split("\x1f")
        if len(fields) != 5:
            continue
        sha, parents, author, date, summary = fields
        parent = parents.split()[0] if parents.strip() else None
        entry: dict[str, Any] = {"sha": sha, "author": author, "date": date, "summary": summary, "decisions": [],
                                 "adr": [], "files": 0}
        if parent:
            r = review_changes(root, ChangeSpec(parent, sha, sha[:10]), memory_db=memory_db, namespace=namespace)
            entry.update(decisions=r.decisions, adr=r.adr, files=len(r.files))
        commits.append(entry)
    return {"head": head, "total": total, "offset": offset, "limit": limit, "commits": commits}


def decisions_for_store(memory: MemoryStore, *, paths: list[str] | None = None, diff: str | None = None,
                        all_namespaces: bool = True, namespace: str | None = None) -> list[dict]:
    """:func:`decisions_for_edit` for the repository of ``memory``: the decisions of
    :func:`decisions_for_change` alone."""
    return decisions_for_change(memory, paths=paths, diff=diff, all_namespaces=all_namespaces,
                                namespace=namespace)["decisions"]


def decisions_for_change(memory: MemoryStore, *, paths: list[str] | None = None, diff: str | None = None,
                         all_namespaces: bool = True, namespace: str | None = None) -> dict[str, Any]:
    """What the memory MCP server's ``decisions_for_change`` answers from: ``{decisions, files,
    unknown}`` — the standing decisions an edit touches (:func:`decisions_for_edit`), the
    workspace files it was matched against, and the files of the diff the code graph does not
    know (new or not ingested).

    ``paths`` may be relative to the root, ``./``-relative, absolute, or folders (every file
    of the graph under one). A path outside the workspace, or one the code graph does not
    know, is refused; so is a ``diff`` that is not a unified diff, or one touching no file
    the graph knows: each of these answered "No decision governs …" before, a false all-clear."""
    from ..memory import validate

    root = memory.graph.root
    if root is None:
        raise NervapackError("this memory is not inside a repository: no code to match an edit against")
    given = validate.str_list(paths, "paths")
    if diff is not None and not isinstance(diff, str):
        raise NervapackError("diff must be the text of a unified diff")
    if not given and not (diff and diff.strip()):
        raise NervapackError("give the paths an edit touches, or its unified diff")
    known = memory.graph.known_files()
    if known is None:
        raise NervapackError(f"there is no code graph in {root} to match an edit against: run `nervapack ingest` "
                             "there first")
    files: list[str] = []
    for path in given:
        files.extend(workspace_files(root, known, path))
    touched: dict[str, list[tuple[int, int]] | None] = {}
    unknown: list[str] = []
    if diff and diff.strip():
        parsed = parse_diff(diff)
        if not parsed and not _creates_only(diff):
            raise NervapackError("diff is not a unified diff: no '--- a/FILE' and '+++ b/FILE' lines were found "
                                 "(give the output of `git diff`, or the files as paths)")
        for name, ranges in parsed.items():
            rel = _relative_in(root, name)
            if rel is None:
                raise NervapackError(f"the diff's file {name!r} is outside the workspace {root}")
            if rel in known:
                touched[rel] = ranges
            else:
                unknown.append(rel)
        if parsed and not touched:
            raise NervapackError(f"the code graph of {root} knows none of the diff's files "
                                 f"({', '.join(sorted(unknown)[:5])}): nothing to match; run `nervapack sync` "
                                 "if they are new, or check the diff was made in this repository")
    ns = None if all_namespaces and namespace is None else memory.namespace_of(namespace)
    found = memory.read(lambda conn: decisions_for_edit(root, conn, paths=files, namespace=ns, touched=touched))
    return {"decisions": found, "files": sorted({*files, *touched}), "unknown": sorted(unknown)}


def _creates_only(diff: str) -> bool:
    """Whether ``diff`` is a unified diff that only adds files (``--- /dev/null``): nothing it
    touches was governed before."""
    lines = diff.splitlines()
    return any(line.startswith("--- /dev/null") for line in lines) and any(line.startswith("+++ ") for line in lines)


def _relative_in(root: Path, path: str) -> str | None:
    """``path`` (relative to ``root``, ``./``-relative or absolute) as the graph stores a file:
    ``/``-separated from the root (``""`` for the root itself); None when it leaves the root."""
    text = path.strip()
    if not text:
        return None
    p = Path(text).expanduser()
    if p.is_absolute():
        base = root.resolve()
        try:
            rel = p.resolve().relative_to(base)
        except (ValueError, OSError, RuntimeError):
            try:  # the path as given, in case the root is reached through a link
                rel = p.relative_to(root)
            except ValueError:
                return None
        text = rel.as_posix()
    normal = posixpath.normpath(text.replace(os.sep, "/"))
    if normal == ".":
        return ""
    if normal == ".." or normal.startswith("../") or normal.startswith("/"):
        return None
    return normal


def workspace_files(root: Path, known: set[str] | frozenset[str], path: str) -> list[str]:
    """The graph's files ``path`` names: the file itself, or every file under a folder
    (the root: all of them). Refused, with a message, when it leaves the workspace or the
    graph has no such file or folder."""
    rel = _relative_in(root, path)
    if rel is None:
        raise NervapackError(f"{path!r} is outside the workspace {root}: give a path inside it")
    if rel in known:
        return [rel]
    prefix = f"{rel}/" if rel else ""
    under = sorted(f for f in known if f.startswith(prefix))
    if under:
        return under
    on_disk = (root / rel).exists()
    why = ("it exists but the code graph has not ingested it (run `nervapack sync`)" if on_disk
           else "no such file or folder in the workspace")
    raise NervapackError(f"{path!r} is not a file the code graph of {root} knows: {why}.")
