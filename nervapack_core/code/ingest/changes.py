"""What changed in a repository since the graph was last brought up to date.

``sync`` asks git (through GitPython) instead of trusting file times:

- the graph records the commit it reflects and the paths that were dirty (modified,
  staged or untracked) at that moment (:func:`git_state`, stored by every ingest/sync);
- when that commit is an ancestor of ``HEAD``, the paths to look at are those of
  ``git diff recorded..HEAD`` (renames detected, as ``git mv`` makes them), those dirty
  now, and those dirty then (a file edited then, reverted since, must be parsed again);
  every other file is, by git's word, as it was;
- when it is not (a branch switch, a rebase that dropped it, a merge that rewrote
  history, no commit recorded), or the folder is not a git repository, every file's
  content hash is compared with the stored one.

Either way a looked-at path is parsed again only when its content hash differs from
the stored one, so touching a file, or a checkout that restores the same bytes, costs
nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from .discovery import Discovery, file_sha

__all__ = ["GitState", "ChangeSource", "git_state", "git_changes"]


@dataclass
class GitState:
    """The repository as it is: ``HEAD`` and the paths (relative to the indexed root)
    that differ from it in the index or the working tree, untracked ones included."""

    commit: str | None
    dirty: list[str] = field(default_factory=list)


@dataclass
class ChangeSource:
    """How ``sync`` found its candidates: ``git`` (a diff from the recorded commit) or
    ``hashes`` (every file's content hash), with the commit range and why."""

    mode: str
    from_commit: str | None = None
    to_commit: str | None = None
    commits: int = 0
    reason: str = ""
    paths: set[str] = field(default_factory=set)  # git mode: the paths to look at
    renames: list[tuple[str, str]] = field(default_factory=list)  # (old, new) as git detected them


def _repo(root: Path):
    """The git repository holding ``root`` and ``root``'s path inside it, or ``(None, "")``."""
    try:
        import git
    except ImportError:  # GitPython is a dependency; without a git executable it cannot load
        return None, ""
    try:
        repo = git.Repo(root, search_parent_directories=True)
        top = Path(repo.working_tree_dir or "").resolve()
        prefix = root.resolve().relative_to(top).as_posix()
    except (git.InvalidGitRepositoryError, git.NoSuchPathError, git.GitCommandError, ValueError, OSError):
        return None, ""
    return repo, "" if prefix == "." else prefix + "/"


def _under(prefix: str, paths) -> list[str]:
    """``paths`` (relative to the repository top) that lie under the indexed root, relative to it."""
    return [p[len(prefix):] for p in paths if p.startswith(prefix)]


def _head(repo) -> str | None:
    try:
        return repo.head.commit.hexsha
    except ValueError:  # a repository without commits
        return None


def git_state(root: Path) -> GitState | None:
    """``HEAD`` and the dirty paths of the repository at ``root``; ``None`` when it is not one."""
    repo, prefix = _repo(root)
    if repo is None:
        return None
    with repo:
        out = repo.git.status("--porcelain=v1", "-z", "--untracked-files=all", "--no-renames")
        dirty = [entry[3:] for entry in out.split("\0") if len(entry) > 3]
        return GitState(_head(repo), sorted(set(_under(prefix, dirty))))


def git_changes(root: Path, recorded: str | None, recorded_dirty: list[str], now: GitState) -> ChangeSource:
    """The paths that may differ from what the graph holds, by git; or the ``hashes``
    fallback with its reason when git cannot say."""
    if now.commit is None:
        return ChangeSource("hashes", None, None, reason="the repository has no commit yet")
    if not recorded:
        return ChangeSource("hashes", None, now.commit, reason="the graph records no commit")
    repo, prefix = _repo(root)
    if repo is None:
        return ChangeSource("hashes", recorded, now.commit, reason="not a git repository")
    import git

    with repo:
        try:
            if recorded != now.commit and not repo.is_ancestor(recorded, now.commit):
                return ChangeSource("hashes", recorded, now.commit,
                                    reason=f"{recorded[:10]} is not an ancestor of HEAD (branch switch, rebase)")
            commits = int(repo.git.rev_list("--count", f"{recorded}..{now.commit}")) if recorded != now.commit else 0
            diff = repo.git.diff("--name-status", "-z", "-M", recorded, now.commit) if commits else ""
        except git.GitCommandError:
            return ChangeSource("hashes", recorded, now.commit,
                                reason=f"{recorded[:10]} is no longer in the repository (rebase, gc)")
    paths: set[str] = set()
    renames: list[tuple[str, str]] = []
    fields = diff.split("\0")
    i = 0
    while i < len(fields) and fields[i]:
        status = fields[i]
        if status.startswith(("R", "C")):
            old, new = fields[i + 1], fields[i + 2]
            paths |= {old, new}
            if status.startswith("R"):
                renames.append((old, new))
            i += 3
        else:
            paths.add(fields[i + 1])
            i += 2
    renames = [(o[len(prefix):], n[len(prefix):]) for o, n in renames if o.startswith(prefix) and n.startswith(prefix)]
    return ChangeSource("git", recorded, now.commit, commits,
                        paths=set(_under(prefix, paths)) | set(now.dirty) | set(recorded_dirty), renames=renames)


def candidates_to_parse(found: Discovery, stored: dict, source: ChangeSource) -> tuple[list, list[str]]:
    """The discovered files whose content differs from the stored one (new files
    included), and the stored paths no longer discovered.

    In ``git`` mode only the paths git names are hashed; in ``hashes`` mode all are.
    """
    parse = []
    for cand in found.files:
        row = stored.get(cand.path)
        if row is None or row["language"] != cand.language:
            parse.append(cand)
        elif source.mode == "hashes" or cand.path in source.paths:
            if row["size"] != cand.size or file_sha(found.root / cand.path) != row["sha"]:
                parse.append(cand)
    present = {c.path for c in found.files}
    return parse, sorted(p for p in stored if p not in present)


def renames_by_content(added: list[str], removed: list[str], shas: dict[str, str],
                       stored: dict) -> list[tuple[str, str]]:
    """(old, new) pairs where a removed file's stored hash equals an added file's new hash:
    the renames of a folder that is not a git repository (or that git did not report)."""
    by_sha: dict[str, list[str]] = {}
    for old in removed:
        sha = stored[old]["sha"] if old in stored else None
        if sha:
            by_sha.setdefault(sha, []).append(old)
    pairs = []
    for new in added:
        olds = by_sha.get(shas.get(new, ""))
        if olds:
            pairs.append((olds.pop(0), new))
    return sorted(pairs)
