"""``nervapack review-changes`` and ``nervapack hooks``: decisions in code review.

Thin over :mod:`nervapack_core.flows.review` and :mod:`nervapack_core.flows.hooks`. The exit code is
the CI contract: 0 when the check passes, 1 for an error, 2 when ``--fail-on`` finds a
touched decision nobody acknowledged.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from ..errors import NervapackError
from .common import console, echo, emit, json_mode, to_json

__all__ = ["register"]

FAILED_EXIT = 2


def _root(path: str | None) -> Path:
    from ..gitrepo import repo_root

    root = repo_root(Path(path or "."))
    if root is None:
        raise NervapackError(f"{Path(path or '.').resolve()} is not inside a git repository")
    return root


def _pre_push_specs(root: Path, stdin_text: str):
    """One change per pushed ref, from the lines git gives a pre-push hook."""
    from ..flows.review import ChangeSpec, _git, default_branch, merge_base

    zero = "0" * 40
    for line in stdin_text.splitlines():
        parts = line.split()
        if len(parts) != 4 or parts[1] == zero:
            continue  # malformed, or a branch deletion: nothing to check
        local_ref, local_sha, _remote_ref, remote_sha = parts
        if remote_sha != zero and _git(root, "rev-parse", "--verify", "--quiet", f"{remote_sha}^{{commit}}",
                                       check=False).strip():
            base = remote_sha  # an update of a branch the remote has: the commits being pushed
        else:  # a new branch (or a remote commit we do not have): against the default branch
            branch = default_branch(root)
            base = merge_base(root, branch, local_sha, local_ref) if branch else local_sha
        yield ChangeSpec(base, local_sha, f"push {local_ref}")


def _text(review, failed, fail_on) -> str:
    head = review.head if review.head.startswith(":") else review.head[:10]
    lines = [f"Decisions touched by {review.label} ({review.base[:10]}..{head})"]
    if not review.memory:
        lines.append("  no decision memory here (.nervapack/memory.db): nothing to check")
    for d in review.decisions:
        ack = "  [acknowledged]" if d["acknowledged"] else ""
        lines.append(f"  {d['id']} ({d['status']}){ack} — {' '.join(str(d['title'] or d['content']).split())}")
        for c in d["code"]:
            stale = ", makes it stale" if c["makes_stale"] else ""
            moved = f" → {c['path']}" if c["path"] and c["path"] != c["file"] else ""
            lines.append(f"      {c['change']}{stale}: {c['qualified_name']} ({c['file']}{moved})")
    if not review.decisions and review.memory:
        lines.append("  no decision governs the code this change touches")
    for a in review.adr:
        lines.append(f"  ADR {a['path']} {a['change']}: {a['status_before'] or '-'} → {a['status_after'] or '-'}")
    for u in review.undecided:
        lines.append(f"  new code without a decision in {u['area']} ({u['decisions_in_area']} decisions there): "
                     f"{u['path']}: {', '.join(u['definitions'])}")
    if failed:
        from ..flows.review import TRAILER

        lines.append(f"✗ {len(failed)} {fail_on} decision(s) touched and not acknowledged. Once reviewed, add "
                     f"'{TRAILER}: {failed[0]['id']}' to a commit message (or pass --ack ID).")
    return "\n".join(lines)


def register(cli: click.Group) -> None:
    @cli.command("review-changes")
    @click.argument("range_", metavar="[BASE..HEAD]", required=False)
    @click.option("--staged", is_flag=True, help="Review the staged changes (against HEAD).")
    @click.option("--working", is_flag=True, help="Review the working tree, untracked files included (against HEAD).")
    @click.option("--path", "path", default=None, type=click.Path(file_okay=False, exists=True),
                  help="The repository (default: the one you are in).")
    @click.option("--format", "fmt", type=click.Choice(["text", "markdown", "json"]), default="text",
                  show_default=True, help="markdown: a pull-request comment.")
    @click.option("--json", "as_json", is_flag=True, help="Same as --format json.")
    @click.option("--fail-on", type=click.Choice(["accepted", "proposed", "any"]), default=None,
                  help="Exit 2 when the change touches decisions of this status (proposed: accepted or proposed; "
                       "any: every status) that no 'Decision-Reviewed: ID' trailer or --ack acknowledges.")
    @click.option("--ack", multiple=True, metavar="ID", help="Acknowledge a decision (repeatable).")
    @click.option("--message-file", type=click.Path(dir_okay=False, exists=True), default=None,
                  help="A commit message whose Decision-Reviewed trailers count (the commit-msg hook passes it).")
    @click.option("--namespace", default=None, help="Only decisions of this memory namespace (default: all).")
    @click.option("--hook", type=click.Choice(["pre-push"]), default=None, hidden=True)
    def review_changes_cmd(range_, staged, working, path, fmt, as_json, fail_on, ack, message_file, namespace, hook):
        """Which decisions does a change touch? The decisions (accepted, proposed,
        deprecated) whose code — definitions, not just files — the change modifies, removes
        or moves; ADR files it adds or edits with their status transitions; decisions it
        makes stale; new code without a decision where many exist.

        The change: BASE..HEAD (BASE...HEAD: from their merge base), --staged, --working,
        or by default the current branch against its merge base with the default branch.
        Offline; nothing is written.
        """
        from ..flows.review import failures, resolve_change, review_changes, to_markdown

        root = _root(path)
        messages = [Path(message_file).read_text(encoding="utf-8", errors="replace")] if message_file else []
        if hook == "pre-push":
            specs = list(_pre_push_specs(root, sys.stdin.read()))
        else:
            specs = [resolve_change(root, range_, staged=staged, working=working)]
        fmt = "json" if as_json or json_mode() else fmt
        failed_any = False
        results = []
        for spec in specs:
            review = review_changes(root, spec, namespace=namespace, acknowledged=list(ack),
                                    messages=messages)
            failed = failures(review, fail_on)
            failed_any = failed_any or bool(failed)
            results.append(review.to_dict() | {"failed": [d["id"] for d in failed]})
            if fmt == "markdown":
                echo(to_markdown(review, fail_on), nl=False)
            elif fmt == "text":
                console().print(_text(review, failed, fail_on), markup=False, highlight=False)
        if fmt == "json":
            echo(to_json(results[0] if len(results) == 1 else results))
        if failed_any:
            sys.exit(FAILED_EXIT)

    @cli.group("hooks")
    def hooks_group():
        """Install git hooks that run `review-changes --fail-on accepted` before a push or commit."""

    @hooks_group.command("install")
    @click.option("--hook", type=click.Choice(["pre-push", "commit-msg"]), default="pre-push", show_default=True,
                  help="pre-push checks the pushed commits; commit-msg the staged change and its message.")
    @click.option("--fail-on", type=click.Choice(["accepted", "proposed", "any"]), default="accepted",
                  show_default=True, help="What blocks the push or commit until acknowledged.")
    @click.option("--force", is_flag=True, help="Replace a hook nervapack did not write (moved aside as "
                  "HOOK.before-nervapack; a symlink is moved, never written through).")
    @click.option("--path", "path", default=None, type=click.Path(file_okay=False, exists=True),
                  help="The repository (default: the one you are in).")
    def hooks_install_cmd(hook, fail_on, force, path):
        """Write HOOK where git runs hooks (.git/hooks, or core.hooksPath inside the repository)
        running the decisions check."""
        from ..flows.hooks import install

        d = install(_root(path), hook, fail_on=fail_on, force=force)
        emit(d, lambda d: f"✓ {d['hook']} hook installed at {d['path']} (fails on {d['fail_on']} decisions)"
             + (f"; the previous hook is kept at {d['backup']}" if d["backup"] else ""))

    @hooks_group.command("uninstall")
    @click.option("--hook", type=click.Choice(["pre-push", "commit-msg"]), default="pre-push", show_default=True,
                  help="Which of the two hooks to remove.")
    @click.option("--path", "path", default=None, type=click.Path(file_okay=False, exists=True),
                  help="The repository (default: the one you are in).")
    def hooks_uninstall_cmd(hook, path):
        """Remove the hook nervapack installed (restoring the one it replaced)."""
        from ..flows.hooks import uninstall

        d = uninstall(_root(path), hook)
        emit(d, lambda d: (f"✓ removed {d['path']}" + (" (previous hook restored)" if d.get("restored") else ""))
             if d["removed"] else f"No nervapack {d['hook']} hook at {d['path']}.")
