"""Ignore files (``.gitignore``, ``.nervapackignore``) read and matched with pathspec.

Patterns are parsed and translated by pathspec's ``GitIgnoreSpecPattern``; a line pathspec
rejects (``!`` alone, an inverted range) is skipped, as git skips what it cannot use.

Two ways of applying them, because git itself works two ways:

- :func:`walk_unignored` lists a plain folder the way ``git ls-files --others
  --exclude-standard`` lists an untracked tree: top-down, with the ``.gitignore`` of every
  folder it enters applying to the paths below it (relative to that folder), the deepest
  file that has a say deciding, the last matching line within a file winning, and an
  ignored folder never entered — so nothing inside it can be brought back, exactly as in
  git. Each pattern is asked whether it matches the entry *itself* (:func:`_matches_entry`):
  pathspec's regular expressions also match everything under a matching folder, which is
  right for a whole path but not for a walk that has already decided about that folder.
- :func:`ignore_file_spec` gives a ``GitIgnoreSpec`` over whole paths, for
  ``.nervapackignore`` applied to the final file list: there a ``!`` rule brings back a file
  even under an ignored folder (``!build/`` keeps build output, which is skipped otherwise).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path

from pathspec import GitIgnoreSpec
from pathspec.patterns.gitignore.spec import GitIgnoreSpecPattern

__all__ = ["read_patterns", "ignore_file_spec", "walk_unignored", "GITIGNORE"]

GITIGNORE = ".gitignore"


def read_patterns(path: Path) -> list[GitIgnoreSpecPattern]:
    """The usable patterns of one ignore file, in order (none when it cannot be read)."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    patterns = []
    for line in text.splitlines():
        try:
            pattern = GitIgnoreSpecPattern(_as_git_reads(line))
        except (ValueError, re.error):  # GitIgnorePatternError, a bad range: git skips the line
            continue
        if pattern.include is not None:  # blank lines and comments carry no rule
            patterns.append(pattern)
    return patterns


def _as_git_reads(line: str) -> str:
    """``line`` rewritten where pathspec reads it otherwise than git: a trailing ``dir/**/``
    matches the folders *below* ``dir`` in git, while pathspec takes it for ``dir/`` itself;
    ``dir/**/*/`` says the same thing in a form both read alike."""
    body = line.rstrip(" ")
    while body.endswith("/**/**/"):
        body = body[:-3]
    if body.endswith("/**/") and body[:-4].lstrip("!") not in ("", "**"):
        return body + "*/"
    return line


def ignore_file_spec(path: Path) -> GitIgnoreSpec:
    """A whole-path spec of the ignore file at ``path`` (empty when absent)."""
    return GitIgnoreSpec(read_patterns(path))


def _dir_mark(match) -> bool:
    """Whether pathspec's match went through its folder marker (the named group its
    regular expressions put on a ``/`` that closes a folder name)."""
    return any(v is not None for v in match.groupdict().values())


def _matches_entry(pattern: GitIgnoreSpecPattern, rel: str, is_dir: bool) -> bool:
    """Whether ``pattern`` matches the entry ``rel`` itself (git's rule), not a folder above it.

    Without the folder marker a match is on the path itself: a name or glob ending where
    the path ends, or ``dir/**`` matching anything strictly below ``dir``. With it, the
    match names a folder: the entry itself only when ``rel`` is a folder and the marked
    ``/`` is the one closing ``rel`` (``build/`` matches the folder ``build``, not files in it).
    """
    regex = pattern.regex
    if regex is None:  # read_patterns keeps none of these
        return False
    if any(not _dir_mark(m) for m in regex.finditer(rel)):
        return True
    if is_dir:
        closed = rel + "/"
        return any(_dir_mark(m) and m.end() == len(closed) for m in regex.finditer(closed))
    return False


def _ignored(rules: list[tuple[str, list[GitIgnoreSpecPattern]]], rel: str, is_dir: bool) -> bool:
    """git's verdict on an entry whose folders are all kept: the deepest ``.gitignore`` with a
    matching line decides, and within it the last matching line."""
    for base, patterns in reversed(rules):
        local = rel[len(base):]
        for pattern in reversed(patterns):
            if _matches_entry(pattern, local, is_dir):
                return bool(pattern.include)
    return False


def walk_unignored(root: Path, skip_dirs: set[str] | frozenset[str] = frozenset()) -> Iterator[str]:
    """The files under ``root`` that its ``.gitignore`` files keep, as ``/``-separated paths.

    Folders named in ``skip_dirs`` and symlinked folders are not entered (no loops); a symlinked
    folder is listed as an entry, as ``git ls-files`` lists it;
    order is ``os.walk``'s with sorted folder names.
    """
    # the .gitignore rules in force for the folder being walked: (its path + "/", patterns)
    stack: list[tuple[str, list[GitIgnoreSpecPattern]]] = []
    for folder, dirs, files in os.walk(root, followlinks=False):
        rel_folder = os.path.relpath(folder, root).replace(os.sep, "/")
        rel_folder = "" if rel_folder == "." else rel_folder + "/"
        while stack and not rel_folder.startswith(stack[-1][0]):
            stack.pop()
        patterns = read_patterns(Path(folder) / GITIGNORE) if GITIGNORE in files else []
        if patterns:
            stack.append((rel_folder, patterns))
        links = [d for d in dirs if d not in skip_dirs and os.path.islink(os.path.join(folder, d))]
        dirs[:] = sorted(
            d for d in dirs
            if d not in skip_dirs and not os.path.islink(os.path.join(folder, d))
            and not _ignored(stack, rel_folder + d, is_dir=True)
        )
        # a folder link is listed as an entry, as git lists it, so that its skip is said; never entered
        yield from (rel_folder + f for f in files + links if not _ignored(stack, rel_folder + f, is_dir=False))
