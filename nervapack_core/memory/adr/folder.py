"""An ADR folder on disk: which files are records, their text and hash, their dates
(from the text, the file name, git or the file's time) and where their links point.

Reading is separate from writing: :func:`scan` lists and hashes every Markdown file (cheap);
:func:`read_records` parses only the files the caller asks for (new or changed ones) and
asks git once for the whole folder, so a re-import of an unchanged folder parses nothing.

The folder is read under the ingest's rule (:func:`nervapack_core.workspace.link_reason`,
which discovery applies too): nothing
outside the repository is read. A link to a file outside it, a broken or looping link and a
symlinked folder (never followed) are listed as skipped with their reason; a link to a file
inside the repository is read, unless it names another record of the folder (imported once,
under its own name). A folder that is itself a link out of its repository is refused.
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
import unicodedata
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import unquote, urlsplit

from ...errors import NervapackError
from ...gitrepo import git_output
from ...workspace import WORKSPACE_DIR, Workspace, link_reason
from ..provenance import repo_root
from .block import Block, front_matter_governs, parse_block, strip_block
from .parse import MEMORY_ID, AdrSkip, ParsedAdr, parse_adr

__all__ = ["AdrFile", "AdrRecord", "scan", "read_records", "find_adr_dir", "base_root", "file_name_date",
           "checked_folder", "resolved_inside",
           "AUTO_DIRS", "MARKDOWN"]

MARKDOWN = (".md", ".markdown")
# where teams keep their ADRs, looked for in this order when the workspace names none
AUTO_DIRS = ("docs/adr", "doc/adr", "docs/decisions", "docs/architecture/decisions")
_SKIP_DIRS = {"node_modules", ".git", WORKSPACE_DIR, "__pycache__"}
_GIT_TIMEOUT = 30


@dataclass
class AdrFile:
    """One Markdown file of the folder."""

    path: Path  # absolute
    source: str  # relative to the repository root, with "/" separators
    sha: str
    text: str | None = None
    error: str | None = None  # why it cannot be read


@dataclass
class AdrRecord:
    """A parsed record with everything the folder adds: where it is, its date and origin of
    that date, its author from git, and its links resolved to other files' sources."""

    file: AdrFile
    adr: ParsedAdr
    title: str
    valid_from: str
    date_from: str  # "text", "file name", "git", "file time"
    git_author: str | None = None
    targets: list[tuple[str, str]] = field(default_factory=list)  # (kind, target source or decision id)
    warnings: list[str] = field(default_factory=list)
    block: Block | None = None  # the NervaPack block (see :mod:`.block`)
    governs: list[str | dict] = field(default_factory=list)  # front matter's, then the block's, as written


def base_root(folder: Path, project: Path | None = None) -> Path:
    """The root ``source`` paths are relative to: the git working tree holding the folder,
    else ``project`` (the memory's project folder) when it holds the folder, else the
    nearest folder with ``.nervapack/``, else the folder's parent."""
    root = repo_root(folder)
    if root is not None:
        return root
    if project is not None:
        project = Path(project).resolve()
        if folder == project or project in folder.parents:
            return project
    for p in (folder, *folder.parents):
        if (p / WORKSPACE_DIR).is_dir():
            return p
    return folder.parent


def checked_folder(folder) -> Path:
    """``folder`` as an absolute directory, or a clear error (also when, named inside a
    repository, it leads out of it through a symlink: its files are not the repository's)."""
    if folder is None or not str(folder).strip():
        raise NervapackError("give the folder of ADR files (e.g. docs/adr)")
    path = Path(folder).expanduser()
    if not path.exists():
        raise NervapackError(f"ADR folder {folder} does not exist")
    if not path.is_dir():
        raise NervapackError(f"{folder} is a file, not a folder of ADR files")
    return resolved_inside(path, str(folder))


def resolved_inside(path: Path, named: str) -> Path:
    """``path`` resolved; refused when, named inside a repository, it resolves outside it (a
    link in the name leads out: its files are not the repository's, nor a place to write)."""
    resolved = path.resolve()
    for parent in Path(os.path.abspath(path)).parents:  # as named: ".." folded, links not followed
        if (parent / ".git").exists():
            refuse_outside(resolved, parent.resolve(), named)
            break
    return resolved


def inside(path: Path, root: Path) -> bool:
    """Whether the resolved ``path`` is ``root`` (resolved) or lies under it."""
    return path == root or root in path.parents


def refuse_outside(resolved: Path, root: Path, named: str) -> None:
    """Refuse an ADR folder named inside ``root`` that resolves to ``resolved`` outside it."""
    if not inside(resolved, root):
        raise NervapackError(f"the ADR folder {named} leads outside the repository {root} (a symlink to "
                             f"{resolved}); it is not followed. Name that folder itself if you mean it.")


def _skip_reason(full: str, root: Path) -> str | None:
    """Why the folder entry ``full`` is not read (None: read it): a link leaving ``root``, a
    broken or looping link, a symlinked folder, anything but a regular file (a FIFO would
    block the read)."""
    if os.path.islink(full):
        reason = link_reason(root, full)
        if reason:
            return reason
    try:
        mode = os.stat(full).st_mode
    except OSError as exc:
        return f"cannot be read ({exc.strerror or exc})"
    return None if stat.S_ISREG(mode) else "not a regular file"


def _source(path: Path, root: Path) -> str:
    try:
        source = path.relative_to(root).as_posix()
    except ValueError:
        source = path.as_posix()
    return unicodedata.normalize("NFC", source)


def scan(folder: Path, root: Path) -> list[AdrFile]:
    """Every Markdown file under ``folder`` (hidden folders and ``node_modules`` aside),
    sorted by path, read and hashed; the links that are not read (see the module docstring)
    come with their reason as ``error``, so they are listed as skipped."""
    root = root.resolve()
    found: list[AdrFile] = []
    links: list[tuple[Path, str]] = []
    regular: dict[Path, str] = {}  # the folder's own files (their resolved path) -> source
    for dirpath, dirnames, filenames in os.walk(folder):  # never into a symlinked folder
        kept = []
        for d in sorted(dirnames):
            if d.startswith(".") or d in _SKIP_DIRS:
                continue
            full = os.path.join(dirpath, d)
            if os.path.islink(full):
                reason = link_reason(root, full) or "symlinked folder (not followed)"
                found.append(AdrFile(Path(full), _source(Path(full), root), "", error=reason))
                continue
            kept.append(d)
        dirnames[:] = kept
        for name in sorted(filenames):
            if name.startswith(".") or not name.lower().endswith(MARKDOWN):
                continue
            path = Path(dirpath) / name
            source = _source(path, root)
            why = _skip_reason(str(path), root)
            if why:
                found.append(AdrFile(path, source, "", error=why))
            elif path.is_symlink():
                links.append((path, source))
            else:
                regular[path.resolve()] = source
                found.append(_read(path, source))
    for path, source in links:  # inside the repository: read, unless it is another record of the folder
        twin = regular.get(path.resolve())
        if twin is not None:
            found.append(AdrFile(path, source, "", error=f"symlink to {twin} (imported under that name)"))
        else:
            found.append(_read(path, source))
    found.sort(key=lambda f: f.source)
    return found


def _read(path: Path, source: str) -> AdrFile:
    """One file of the folder, read and hashed (or why it cannot be)."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        return AdrFile(path, source, "", error=f"cannot be read ({exc.strerror or exc})")
    sha = hashlib.sha256(raw).hexdigest()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return AdrFile(path, source, sha, error=f"is not UTF-8 text (byte {exc.start})")
    return AdrFile(path, source, sha, text=text)


def file_name_date(stem: str) -> str | None:
    """The date a file name starts with (``20200925-…``, ``2020-09-25-…``), or None."""
    m = re.match(r"^(\d{4})-?(\d{2})-?(\d{2})(?!\d)", stem)
    if not m:
        return None
    try:
        d = datetime(int(m.group(1)), int(m.group(2)), int(m.group(3)), tzinfo=UTC)
    except ValueError:
        return None
    return d.date().isoformat() if 1970 <= d.year <= 2100 else None


def _git(root: Path, *args: str) -> str | None:
    return git_output(root, *args, timeout=_GIT_TIMEOUT, locale=None, config=("core.quotePath=false",))


def git_first_seen(root: Path, folder: Path) -> dict[str, tuple[str, str]]:
    """``{source: (ISO date, "Name <email>")}``: when and by whom each file under ``folder``
    was first added, following renames inside the folder — a draft written as
    ``000x-draft.md`` and numbered at merge by someone else keeps its writer — from one
    ``git log -M`` of the folder, oldest commit first. A file deleted and added back keeps
    its first addition."""
    try:
        rel = folder.relative_to(root).as_posix() or "."
    except ValueError:
        return {}
    out = _git(root, "log", "--reverse", "-M", "--diff-filter=ADR", "--name-status",
               "--format=%x1e%aI%x1f%an <%ae>", "--", rel)
    seen: dict[str, tuple[str, str] | None] = {}
    deleted: dict[str, tuple[str, str] | None] = {}
    for record in (out or "").split("\x1e"):
        head, _, names = record.partition("\n")
        if "\x1f" not in head:
            continue
        when, who = head.split("\x1f", 1)
        here = (when.strip(), who.strip())
        for line in names.splitlines():
            fields = [unicodedata.normalize("NFC", p) for p in line.split("\t")]
            status = fields[0][:1]
            if status == "A" and len(fields) >= 2:
                seen[fields[1]] = deleted.pop(fields[1], None) or seen.get(fields[1]) or here
            elif status == "R" and len(fields) >= 3:
                seen[fields[2]] = seen.pop(fields[1], None) or deleted.pop(fields[2], None) or here
            elif status == "D" and len(fields) >= 2 and fields[1] in seen:
                deleted[fields[1]] = seen.pop(fields[1])
    return {source: first for source, first in seen.items() if first is not None}


def git_first_seen_file(root: Path, source: str) -> tuple[str, str] | None:
    """When and by whom git first saw one file, following renames."""
    out = _git(root, "log", "--diff-filter=A", "--follow", "--format=%aI%x1f%an <%ae>", "--", source)
    rows = [ln for ln in (out or "").splitlines() if "\x1f" in ln]
    if not rows:
        return None
    when, who = rows[-1].split("\x1f", 1)
    return when.strip(), who.strip()


def _title_from_name(stem: str) -> str:
    words = re.sub(r"^(\d{4}-?\d{2}-?\d{2}|\d+)[-_ .]*", "", stem)
    words = " ".join(re.split(r"[-_\s]+", words)).strip()
    return (words[:1].upper() + words[1:]) if words else stem


def read_records(files: list[AdrFile], folder: Path, root: Path, all_files: list[AdrFile]
                 ) -> tuple[list[AdrRecord], list[tuple[str, str]]]:
    """Parse ``files`` (a subset of ``all_files``, the whole folder, used to resolve
    links): ``(records, skipped [(source, reason)])``."""
    records: list[AdrRecord] = []
    skipped: list[tuple[str, str]] = []
    parsed: list[tuple[AdrFile, ParsedAdr]] = []
    blocks: dict[str, tuple[Block | None, list[str]]] = {}
    for f in files:
        if f.error:
            skipped.append((f.source, f.error))
            continue
        blocks[f.source] = parse_block(f.text or "")
        try:  # the prose alone: the block is NervaPack's, not the team's
            parsed.append((f, parse_adr(strip_block(f.text or ""), f.path.name)))
        except AdrSkip as exc:
            skipped.append((f.source, str(exc)))
    git_root = repo_root(folder)
    need_git = [f for f, a in parsed if not a.date or not (a.author or a.deciders)]
    first_seen = git_first_seen(git_root, folder) if git_root is not None and need_git else {}
    index = _LinkIndex(all_files)
    for f, a in parsed:
        warnings = list(a.warnings)
        seen = first_seen.get(f.source)
        if seen is None and git_root is not None and f in need_git and not a.date \
                and not file_name_date(f.path.stem):
            seen = git_first_seen_file(git_root, f.source)
        if a.date:
            valid_from, origin = a.date, "text"
        elif file_name_date(f.path.stem):
            valid_from, origin = file_name_date(f.path.stem) or "", "file name"
        elif seen:
            valid_from, origin = seen[0], "git"
        else:
            try:
                mtime = f.path.stat().st_mtime
            except OSError:
                mtime = datetime.now(UTC).timestamp()
            valid_from, origin = datetime.fromtimestamp(mtime, UTC).isoformat(), "file time"
        title = a.title or _title_from_name(f.path.stem)
        rec = AdrRecord(f, a, title, valid_from, origin, git_author=seen[1] if seen else None, warnings=warnings)
        for kind, text, href in a.links:
            target = index.resolve(f, text, href)
            if target is None:
                if kind in ("superseded", "supersedes", "amends", "amended"):
                    rec.warnings.append(f"link {text or href!r} ({kind}) names no ADR file of the folder")
                continue
            if target != f.source:
                rec.targets.append((kind, target))
        _read_block(rec, *blocks.get(f.source, (None, [])), index)
        rec.targets = list(dict.fromkeys(rec.targets))
        records.append(rec)
    return records, skipped


# a block's link kinds as the record's link kinds (see importer._link_actions); "block:" tells
# export they are the block's, not the prose's, to write them again
_BLOCK_LINKS = {"derived_from": "block:amends", "supersedes": "block:supersedes", "contradicts": "block:contradicts"}


def _read_block(rec: AdrRecord, block: Block | None, warnings: list[str], index: _LinkIndex) -> None:
    """What the record's NervaPack block (and front matter's hand-written ``governs``) add:
    its id, code, and links (to a file of the folder, or a decision id)."""
    rec.warnings += warnings
    governs, fm_warnings = front_matter_governs(rec.adr.extra)
    rec.warnings += fm_warnings
    rec.adr.extra.pop("governs", None)
    rec.block = block
    rec.governs = governs + (block.governs if block else [])
    if block is None:
        return
    if block.id:
        rec.adr.memory_id = block.id
    for key, kind in _BLOCK_LINKS.items():
        for target in block.links.get(key, []):
            found = target if MEMORY_ID.match(target) else index.resolve(rec.file, target, target)
            if found is None:
                rec.warnings.append(f"NervaPack block: {key} {target!r} names no ADR file of the folder nor a "
                                    "decision id")
            elif found != rec.file.source:
                rec.targets.append((kind, found))


class _LinkIndex:
    """Finds the file a link names: a relative path, the same name with ``.md``, the file
    name alone, or an ADR number (``ADR-0003``, ``3. Title``)."""

    def __init__(self, files: list[AdrFile]):
        self.by_path = {os.path.normcase(str(f.path)): f.source for f in files}
        self.by_name: dict[str, list[str]] = {}
        self.by_number: dict[int, list[str]] = {}
        for f in files:
            self.by_name.setdefault(f.path.name.casefold(), []).append(f.source)
            self.by_name.setdefault(f.path.stem.casefold(), []).append(f.source)
            m = re.match(r"^(\d{1,7})(?!\d)", f.path.stem)
            if m:
                self.by_number.setdefault(int(m.group(1)), []).append(f.source)

    def resolve(self, f: AdrFile, text: str, href: str) -> str | None:
        if href.startswith("#") and href[1:].isdigit():
            return self._number(int(href[1:]))
        parts = urlsplit(href)
        if parts.scheme or parts.netloc:
            return None
        path = unquote(parts.path)
        if path:
            target = os.path.normcase(os.path.normpath(str(f.path.parent / path)))
            if target in self.by_path:
                return self.by_path[target]
            name = Path(path).name
            for key in (name.casefold(), Path(name).stem.casefold()):
                hits = self.by_name.get(key, [])
                if len(hits) == 1:
                    return hits[0]
        m = re.match(r"^\s*(?:ADR[-\s_]?)?0*(\d+)\b", text, re.IGNORECASE)
        return self._number(int(m.group(1))) if m else None

    def _number(self, n: int) -> str | None:
        hits = self.by_number.get(n, [])
        return hits[0] if len(hits) == 1 else None


def find_adr_dir(workspace: Workspace) -> tuple[Path | None, str]:
    """The workspace's ADR folder and how it was found: ``[memory] adr_dir`` in
    ``.nervapack/config.toml`` (or ``$NERVAPACK_ADR_DIR``), else the first of
    :data:`AUTO_DIRS` that holds a Markdown file. ``(None, why)`` when there is none or
    the setting is ``false``/``""`` (turned off); a configured folder that does not exist
    is an error."""
    from ...settings import setting

    chosen = setting(workspace, "memory", "adr_dir")
    if chosen is not None:
        if chosen.value is False or chosen.value == "" or str(chosen.value).strip().lower() in ("off", "none", "false"):
            return None, f"turned off by {chosen.origin}"
        if not isinstance(chosen.value, str) or not chosen.value.strip():
            raise NervapackError(f"{chosen.origin} must name a folder, got {chosen.value!r}")
        path = Path(chosen.value).expanduser()
        path = path if path.is_absolute() else workspace.root / path
        if not path.is_dir():
            raise NervapackError(f"the ADR folder {chosen.value!r} ({chosen.origin}) does not exist")
        return path.resolve(), f"set by {chosen.origin}"
    for rel in AUTO_DIRS:
        path = workspace.root / rel
        if path.is_dir():  # a repository's docs/adr linking out of it is refused, not read
            refuse_outside(path.resolve(), workspace.root.resolve(), rel)
        if path.is_dir() and any(p.suffix.lower() in MARKDOWN for p in path.iterdir() if p.is_file()):
            return path.resolve(), f"found at {rel}"
    return None, "no ADR folder (set [memory] adr_dir in .nervapack/config.toml)"
