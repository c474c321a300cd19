"""Ignore rules of a plain folder (pathspec) against git's own answer for the same tree.

Every case builds a folder, lists it as a plain folder (``list_files``: the walk with
nested ``.gitignore`` files), copies it into a fresh git repository and asks git
(``git ls-files --others --exclude-standard`` + ``git ls-files``): the two lists must be
identical. Each case also states the answer it expects, so agreement is never vacuous.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nervapack_core.code.ingest.discovery import discover, list_files


def _git_env(home: Path) -> dict[str, str]:
    # no global or system excludes file may change git's answer
    home.mkdir(exist_ok=True)
    return {**os.environ, "HOME": str(home), "XDG_CONFIG_HOME": str(home), "GIT_CONFIG_NOSYSTEM": "1"}


def git_listing(tree: Path, scratch: Path) -> list[str]:
    """What git lists for a copy of ``tree`` made a repository (nothing committed)."""
    copy = scratch / "as-git"
    if copy.exists():
        shutil.rmtree(copy)
    shutil.copytree(tree, copy, symlinks=True)
    env = _git_env(scratch / "home")
    subprocess.run(["git", "init", "-q", str(copy)], check=True, env=env)
    names: set[str] = set()
    for args in (["--others", "--exclude-standard"], []):
        out = subprocess.run(["git", "-C", str(copy), "ls-files", "-z", *args], check=True, env=env,
                             capture_output=True).stdout
        names.update(n for n in out.decode().split("\0") if n)
    return sorted(names)


def build(root: Path, files: dict[str, str]) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def plain_listing(tree: Path) -> list[str]:
    names, is_git = list_files(tree)
    assert not is_git
    return names


def check_like_git(tmp_path: Path, files: dict[str, str]) -> list[str]:
    tree = build(tmp_path / "tree", files)
    ours = plain_listing(tree)
    assert ours == git_listing(tree, tmp_path)
    return ours


def test_nested_gitignore_applies_below_its_folder_relative_to_it(tmp_path):
    kept = check_like_git(tmp_path, {
        ".gitignore": "*.log\n",
        "a.log": "", "main.py": "",
        "pkg/.gitignore": "/local.py\ngen/\n!keep.log\n",
        "pkg/local.py": "", "pkg/mod.py": "", "pkg/keep.log": "", "pkg/other.log": "",
        "pkg/gen/out.py": "",
        "pkg/sub/local.py": "",  # /local.py is anchored to pkg/: pkg/sub/local.py stays
        "other/local.py": "",  # pkg's rules do not reach a sibling folder
        "other/gen/out.py": "",
    })
    assert kept == [".gitignore", "main.py", "other/gen/out.py", "other/local.py", "pkg/.gitignore",
                    "pkg/keep.log", "pkg/mod.py", "pkg/sub/local.py"]


def test_deeper_gitignore_overrides_a_shallower_one(tmp_path):
    kept = check_like_git(tmp_path, {
        ".gitignore": "!*.tmp\nnotes.md\n",
        "notes.md": "",
        "docs/.gitignore": "*.tmp\n!notes.md\n",
        "docs/notes.md": "", "docs/draft.tmp": "", "top.tmp": "",
    })
    assert kept == [".gitignore", "docs/.gitignore", "docs/notes.md", "top.tmp"]


def test_negation_cannot_reach_into_an_ignored_folder(tmp_path):
    kept = check_like_git(tmp_path, {
        ".gitignore": "out/\n!out/keep.py\nvendor/*\n!vendor/ours/\n*.log\n!important.log\n",
        "out/keep.py": "", "out/x.py": "",  # out/ is ignored: git never looks inside, !out/keep.py is moot
        "vendor/theirs/a.py": "", "vendor/ours/b.py": "", "vendor/top.py": "",
        "debug.log": "", "important.log": "", "sub/important.log": "",
    })
    assert kept == [".gitignore", "important.log", "sub/important.log", "vendor/ours/b.py"]


def test_a_rule_on_a_kept_folder_says_nothing_about_what_is_inside(tmp_path):
    # build* and !build-tools/ both name the folder build-tools, not x.log in it: the root's
    # *.log is the rule that matches x.log
    kept = check_like_git(tmp_path, {
        ".gitignore": "*.log\n",
        "sub/.gitignore": "build*\n!build-tools/\n",
        "sub/build-tools/x.log": "", "sub/build-tools/x.py": "", "sub/build.py": "",
    })
    assert kept == [".gitignore", "sub/.gitignore", "sub/build-tools/x.py"]


def test_double_star_leading_middle_and_trailing(tmp_path):
    kept = check_like_git(tmp_path, {
        ".gitignore": "**/cache\nsrc/**/gen_*.py\nlogs/**\n!keep.txt\ntmp/**/\n",
        "cache": "", "a/b/cache/x.py": "", "a/cached.py": "",
        "src/gen_top.py": "", "src/x/y/gen_deep.py": "", "src/x/real.py": "",
        # logs/** ignores logs/old itself (not logs): logs/old/keep.txt cannot come back
        "logs/a.txt": "", "logs/keep.txt": "", "logs/old/b.txt": "", "logs/old/keep.txt": "",
        "tmp/direct.py": "", "tmp/sub/inner.py": "",  # tmp/**/ ignores the folders below tmp, not tmp itself
    })
    assert kept == [".gitignore", "a/cached.py", "logs/keep.txt", "src/x/real.py", "tmp/direct.py"]


def test_anchored_patterns(tmp_path):
    kept = check_like_git(tmp_path, {
        ".gitignore": "/root_only.py\nlib/config.py\nanywhere.py\n",
        "root_only.py": "", "sub/root_only.py": "",
        "lib/config.py": "", "sub/lib/config.py": "",  # a slash in the middle anchors too
        "anywhere.py": "", "sub/deep/anywhere.py": "",
    })
    assert kept == [".gitignore", "sub/lib/config.py", "sub/root_only.py"]


def test_directory_only_patterns_leave_files_of_that_name(tmp_path):
    kept = check_like_git(tmp_path, {
        ".gitignore": "build/\n/data/\nnotes/\n",
        "build/x.py": "", "src/build": "",  # a file named build is not the folder build/
        "data/d.csv": "", "src/data/d.py": "",  # /data/ is anchored
        "notes": "", "src/notes/n.md": "",
    })
    assert kept == [".gitignore", "notes", "src/build", "src/data/d.py"]


def test_unusable_lines_are_skipped_as_git_skips_them(tmp_path):
    kept = check_like_git(tmp_path, {
        ".gitignore": "!\n/\n[z-a]\n# comment\n\n\\#literal\n   \n*.pyc\n",
        "#literal": "", "a.pyc": "", "a.py": "", "[z-a]": "",
    })
    assert kept == [".gitignore", "[z-a]", "a.py"]


def test_ignored_files_are_absent_from_discovery_and_nervapackignore_brings_build_back(tmp_path):
    tree = build(tmp_path / "tree", {
        "pkg/.gitignore": "secret.py\n",
        "pkg/secret.py": "x = 1\n", "pkg/mod.py": "x = 1\n",
        "build/lib.py": "x = 1\n", "dist/app.py": "x = 1\n",
        ".nervapackignore": "!build/\npkg/mod.py\n",
    })
    found = discover(tree)
    assert [c.path for c in found.files] == ["build/lib.py"]
    assert dict(found.skipped) == {"dist/app.py": "build output", "pkg/mod.py": "ignored by .nervapackignore"}


# -- random trees and rules, against git ----------------------------------------------------

_NAMES = ["a", "b", "build", "x.py", "y.log", "keep", "ba"]
_PARTS = ["a", "b", "build", "*.py", "*", "**", "x?py", "*.log", "keep", "[ab]", "y*", "[!a]", "*a*"]


@st.composite
def _pattern(draw) -> str:
    text = "/".join(draw(st.lists(st.sampled_from(_PARTS), min_size=1, max_size=3)))
    if draw(st.booleans()):
        text = "/" + text
    if draw(st.booleans()):
        text += "/"
    return ("!" if draw(st.integers(0, 3)) == 0 else "") + text


@st.composite
def _tree(draw, depth: int = 0) -> dict[str, str]:
    files: dict[str, str] = {}
    for name in draw(st.lists(st.sampled_from(_NAMES), min_size=1, max_size=3, unique=True)):
        if depth < 3 and "." not in name and draw(st.booleans()):
            files.update({f"{name}/{rel}": "" for rel in draw(_tree(depth + 1))})
        else:
            files[name] = ""
    if draw(st.booleans()):
        files[".gitignore"] = "".join(p + "\n" for p in draw(st.lists(_pattern(), min_size=1, max_size=4)))
    return files


@settings(max_examples=60, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(files=_tree())
def test_random_trees_and_rules_list_as_git_lists_them(tmp_path, files):
    tree = tmp_path / "tree"
    if tree.exists():
        shutil.rmtree(tree)
    build(tree, files)
    assert plain_listing(tree) == git_listing(tree, tmp_path)
