"""Decisions in code review, on real git repositories built here: node-level touches,
renames followed, deletions, acknowledgement trailers, and the git hooks run by git."""

import json
import os
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from nervapack_core.cli import cli
from nervapack_core.code.ingest.pipeline import ingest
from nervapack_core.errors import NervapackError
from nervapack_core.flows.review import failures, resolve_change, review_changes, to_markdown
from nervapack_core.memory import MemoryStore

BILLING = "def charge(amount):\n    return amount * 100\n\n\ndef refund(amount):\n    return -amount\n"


def git(repo: Path, *args: str, input: str | None = None) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True,
                          input=input).stdout.strip()


class Repo(type(Path())):  # a path that also carries the ids of the decisions stored in it
    decision: str
    proposal: str


@pytest.fixture
def repo(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("NERVAPACK_MEMORY_DB", raising=False)
    root = Repo(tmp_path / "repo")
    (root / "src").mkdir(parents=True)
    git(root, "init", "-q", "-b", "main")
    git(root, "config", "user.name", "Lin")
    git(root, "config", "user.email", "lin@example.org")
    (root / "src" / "billing.py").write_text(BILLING)
    (root / "src" / "auth.py").write_text("def login(user):\n    return user\n")
    git(root, "add", ".")
    git(root, "commit", "-qm", "first")
    ingest(root, embed=False)
    with MemoryStore(root / ".nervapack" / "memory.db") as m:
        root.decision = m.store("Amounts are charged in integer cents", kind="decision", entities=["charge"],
                                title="Cents")
        root.proposal = m.store("Login may cache users", kind="decision", entities=["login"], status="proposed")
    git(root, "checkout", "-qb", "feature")
    return root


def commit(repo: Path, message: str, **files: str | None) -> None:
    for name, text in files.items():
        path = repo / "src" / name
        if text is None:
            git(repo, "rm", "-q", str(path))
        else:
            path.write_text(text)
            git(repo, "add", str(path))
    git(repo, "commit", "-qm", message)


def touched(review) -> dict:
    return {d["id"]: [(c["change"], c["qualified_name"]) for c in d["code"]] for d in review.decisions}


def test_editing_the_governed_function_is_reported_and_makes_it_stale(repo):
    commit(repo, "round charges", **{"billing.py": BILLING.replace("amount * 100", "round(amount * 100)")})
    review = review_changes(repo)  # default: feature against its merge base with main
    assert review.label == "main...HEAD"
    assert touched(review) == {repo.decision: [("modified", "charge")]}
    d = review.decisions[0]
    assert d["status"] == "accepted" and d["makes_stale"] is True and d["acknowledged"] is False
    assert [x["id"] for x in failures(review, "accepted")] == [repo.decision]


def test_a_neighbouring_function_in_the_same_file_is_not_reported(repo):
    commit(repo, "refund twice", **{"billing.py": BILLING.replace("return -amount", "return -amount * 2")})
    review = review_changes(repo)
    assert review.decisions == [] and [f["path"] for f in review.files] == ["src/billing.py"]
    assert failures(review, "any") == []


def test_a_renamed_file_is_followed_and_a_deleted_one_reported(repo):
    git(repo, "mv", "src/billing.py", "src/payments.py")
    git(repo, "commit", "-qm", "rename")
    moved = review_changes(repo)
    assert touched(moved) == {repo.decision: [("moved", "charge")]}
    assert moved.decisions[0]["code"][0]["path"] == "src/payments.py"
    assert moved.decisions[0]["makes_stale"] is False
    commit(repo, "drop auth", **{"auth.py": None})
    gone = review_changes(repo)
    assert touched(gone)[repo.proposal] == [("removed", "login")]
    assert [d["status"] for d in gone.decisions] == ["accepted", "proposed"]
    # proposed decisions fail --fail-on proposed, never --fail-on accepted
    assert [d["id"] for d in failures(gone, "accepted")] == [repo.decision]
    assert {d["id"] for d in failures(gone, "proposed")} == {repo.decision, repo.proposal}


def test_a_trailer_acknowledges_and_fail_on_accepted_passes(repo):
    run = CliRunner()
    commit(repo, "round charges", **{"billing.py": BILLING.replace("amount * 100", "round(amount * 100)")})
    os.chdir(repo)
    blocked = run.invoke(cli, ["review-changes", "--fail-on", "accepted"])
    assert blocked.exit_code == 2, blocked.output
    assert f"Decision-Reviewed: {repo.decision}" in blocked.output
    assert "modified, makes it stale: charge" in blocked.output
    git(repo, "commit", "-q", "--allow-empty", "-m", f"noted\n\nDecision-Reviewed: {repo.decision}")
    ok = run.invoke(cli, ["review-changes", "--fail-on", "accepted", "--json"])
    assert ok.exit_code == 0, ok.output
    data = json.loads(ok.output)
    assert data["acknowledged"] == [repo.decision] and data["decisions"][0]["acknowledged"] is True
    assert data["failed"] == []
    md = run.invoke(cli, ["review-changes", "main..HEAD", "--format", "markdown"]).output
    assert md.startswith("### Decisions touched by this change (main..HEAD)")
    assert "| **Cents** (" in md and "✅ reviewed" in md and "| modified (makes it stale) |" in md


def test_staged_and_working_changes_and_bad_ranges(repo):
    (repo / "src" / "billing.py").write_text(BILLING.replace("amount * 100", "amount * 1000"))
    working = review_changes(repo, resolve_change(repo, working=True))
    assert touched(working) == {repo.decision: [("modified", "charge")]}
    assert review_changes(repo, resolve_change(repo, staged=True)).decisions == []
    git(repo, "add", ".")
    assert touched(review_changes(repo, resolve_change(repo, staged=True))) == {repo.decision: [("modified", "charge")]}
    with pytest.raises(NervapackError, match="not a commit"):
        resolve_change(repo, "nope..HEAD")
    with pytest.raises(NervapackError, match="give one of"):
        resolve_change(repo, "main..HEAD", staged=True)
    result = CliRunner().invoke(cli, ["review-changes", "--path", str(repo), "zzz..HEAD"])
    assert result.exit_code == 1 and "not a commit" in result.output and "Traceback" not in result.output


def test_markdown_escapes_decision_text(repo):
    with MemoryStore(repo / ".nervapack" / "memory.db") as m:
        m.review(repo.decision, "deprecated")
        m.store("<script>alert(1)</script> | `x` [link](http://e)", kind="decision", entities=["refund"])
    commit(repo, "refund twice", **{"billing.py": BILLING.replace("return -amount", "return -amount * 2")})
    md = to_markdown(review_changes(repo))
    assert "<script>" not in md and "&lt;script&gt;" in md and "\\| \\`x\\` \\[link]" in md



def test_an_unknown_ack_is_an_error_not_a_pass(repo):
    commit(repo, "round charges", **{"billing.py": BILLING.replace("amount * 100", "round(amount * 100)")})
    os.chdir(repo)
    run = CliRunner()
    typo = repo.decision[:-1] + ("0" if repo.decision[-1] != "0" else "1")
    for wrong in (typo, repo.decision[:10]):  # a mistyped id, a short one
        result = run.invoke(cli, ["review-changes", "--fail-on", "accepted", "--ack", wrong])
        assert result.exit_code == 1 and f"--ack {wrong}: no decision has this id" in result.output
        assert "Traceback" not in result.output
    ok = run.invoke(cli, ["review-changes", "--fail-on", "accepted", "--ack", repo.decision])
    assert ok.exit_code == 0, ok.output
    # a trailer naming no decision (an old commit's, a forgotten decision's) is not an error
    git(repo, "commit", "-q", "--allow-empty", "-m", f"noted\n\nDecision-Reviewed: {typo}")
    assert run.invoke(cli, ["review-changes", "--fail-on", "accepted"]).exit_code == 2


def test_code_spans_in_the_comment_are_literal(repo):
    refund_all = "\n\ndef refund_all(amounts):\n    return [-a for a in amounts]\n"
    commit(repo, "refunds", **{"billing.py": BILLING + refund_all})
    ingest(repo, embed=False)
    with MemoryStore(repo / ".nervapack" / "memory.db") as m:
        m.store("Refunds are negative", kind="decision", entities=["refund_all"])
    commit(repo, "refunds twice", **{"billing.py": BILLING + refund_all.replace("-a", "-2 * a")})
    md = to_markdown(review_changes(repo, resolve_change(repo, "HEAD~1..HEAD")))
    assert "`refund_all` in `src/billing.py`" in md, md  # not `refund\\_all`
    from nervapack_core.flows.review import _code
    assert _code("a|b") == "`a\\|b`" and _code("x `y` z") == "``x `y` z``" and _code("`q`") == "`` `q` ``"


def hook_env(repo):
    """The environment git runs our hooks in: the hook starts this interpreter (our CLI, a process of its
    own) with the code under test."""
    return {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(Path(__file__).parents[1]),
                                                                        os.environ.get("PYTHONPATH")]))}


def test_pre_push_hook_blocks_until_acknowledged(repo, tmp_path):
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", str(remote))
    git(repo, "remote", "add", "origin", str(remote))
    git(repo, "push", "-q", "origin", "main")
    result = CliRunner().invoke(cli, ["hooks", "install", "--path", str(repo)])
    assert result.exit_code == 0 and "pre-push hook installed" in result.output
    commit(repo, "round charges", **{"billing.py": BILLING.replace("amount * 100", "round(amount * 100)")})
    env = hook_env(repo)
    push = subprocess.run(["git", "-C", str(repo), "push", "-q", "origin", "feature"], capture_output=True,
                          text=True, env=env)
    assert push.returncode != 0 and repo.decision in push.stderr + push.stdout
    git(repo, "commit", "-q", "--allow-empty", "-m", f"reviewed\n\nDecision-Reviewed: {repo.decision}")
    push = subprocess.run(["git", "-C", str(repo), "push", "-q", "origin", "feature"], capture_output=True,
                          text=True, env=env)
    assert push.returncode == 0, push.stderr + push.stdout
    # a hook someone else wrote is not overwritten
    hook = repo / ".git" / "hooks" / "commit-msg"
    hook.write_text("#!/bin/sh\nexit 0\n")
    refused = CliRunner().invoke(cli, ["hooks", "install", "--hook", "commit-msg", "--path", str(repo)])
    assert refused.exit_code == 1 and "--force" in refused.output
    assert CliRunner().invoke(cli, ["hooks", "uninstall", "--path", str(repo)]).exit_code == 0
    assert not (repo / ".git" / "hooks" / "pre-push").exists()


def test_commit_msg_hook_reads_the_message_being_written(repo):
    assert CliRunner().invoke(cli, ["hooks", "install", "--hook", "commit-msg", "--path", str(repo)]).exit_code == 0
    (repo / "src" / "billing.py").write_text(BILLING.replace("amount * 100", "round(amount * 100)"))
    git(repo, "add", ".")
    env = hook_env(repo)
    blocked = subprocess.run(["git", "-C", str(repo), "commit", "-qm", "round"], capture_output=True, text=True,
                             env=env)
    assert blocked.returncode != 0 and repo.decision in blocked.stdout + blocked.stderr
    done = subprocess.run(["git", "-C", str(repo), "commit", "-qm", f"round\n\nDecision-Reviewed: {repo.decision}"],
                          capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stdout + done.stderr


def test_pre_push_of_an_existing_branch_checks_only_the_new_commits(repo, tmp_path):
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", str(remote))
    git(repo, "remote", "add", "origin", str(remote))
    commit(repo, "round charges", **{"billing.py": BILLING.replace("amount * 100", "round(amount * 100)")})
    git(repo, "push", "-q", "origin", "main", "feature")  # pushed before the hook existed
    CliRunner().invoke(cli, ["hooks", "install", "--path", str(repo)])
    commit(repo, "refund twice", **{"billing.py": BILLING.replace("amount * 100", "round(amount * 100)")
                                    .replace("return -amount", "return -amount * 2")})
    push = subprocess.run(["git", "-C", str(repo), "push", "-q", "origin", "feature"], capture_output=True,
                          text=True, env=hook_env(repo))
    assert push.returncode == 0, push.stderr + push.stdout  # the pushed commit leaves charge() alone


def test_decisions_for_change_over_mcp_by_definition_and_never_over_budget(repo):
    import anyio
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    from nervapack_core.tokens import count_tokens

    params = StdioServerParameters(
        command=os.sys.executable, cwd=str(repo),
        args=["-m", "nervapack_core.mcp.memory_server", "--db", str(repo / ".nervapack" / "memory.db")],
        env={"HOME": str(repo.parent / "home"), "PYTHONPATH": hook_env(repo)["PYTHONPATH"]})
    charge_diff = ("--- a/src/billing.py\n+++ b/src/billing.py\n@@ -1,2 +1,2 @@\n def charge(amount):\n"
                   "-    return amount * 100\n+    return round(amount * 100)\n")
    refund_diff = ("--- a/src/billing.py\n+++ b/src/billing.py\n@@ -5,2 +5,2 @@\n def refund(amount):\n"
                   "-    return -amount\n+    return -amount * 2\n")

    async def scenario():
        async with Client(params, read_timeout_seconds=60) as client:
            async def call(**args):
                result = await client.call_tool("decisions_for_change", args)
                assert not result.is_error, result.content
                # the Markdown is the text block; ids and counts are the structured part
                return {**result.structured_content, "text": result.content[0].text, "result": result}

            hit = await call(diff=charge_diff)
            assert [d["id"] for d in hit["decisions"]] == [repo.decision] and "governs charge (src/billing.py)" in hit[
                "text"]
            assert (await call(diff=refund_diff))["total"] == 0  # a neighbour of the governed function
            both = await call(paths=["src/billing.py", "src/auth.py"])
            assert both["total"] == 2 and "PROPOSED, not agreed yet" in both["text"]
            for budget in (1, 5, 12, 20, 40, 80, 600):
                result = await client.call_tool("decisions_for_change", {"paths": ["src/billing.py", "src/auth.py"],
                                                                         "budget_tokens": budget})
                if result.is_error:  # not one decision fits: said, with how many matched
                    assert "2 decisions that matched" in result.content[0].text and budget <= 80
                    continue
                r = result.structured_content
                # the whole result as received: the Markdown and the structured part (compact JSON)
                sent = count_tokens(result.content[0].text) + count_tokens(
                    json.dumps(r, ensure_ascii=False, separators=(",", ":")))
                assert sent <= r["tokens"] <= budget
                assert 1 <= r["shown"] <= r["total"] == 2 and r["omitted"]["decisions"] == 2 - r["shown"]
            bad = await client.call_tool("decisions_for_change", {})
            assert bad.is_error and "give the paths" in bad.content[0].text

    anyio.run(scenario)


def test_decisions_by_commit_pages_the_history(repo):
    from nervapack_core.flows.review import decisions_by_commit

    commit(repo, "round charges", **{"billing.py": BILLING.replace("amount * 100", "round(amount * 100)")})
    commit(repo, "refund twice", **{"billing.py": BILLING.replace("amount * 100", "round(amount * 100)")
                                    .replace("return -amount", "return -amount * 2")})
    page = decisions_by_commit(repo, limit=2)
    assert page["total"] == 3 and [c["summary"] for c in page["commits"]] == ["refund twice", "round charges"]
    assert page["commits"][0]["decisions"] == []
    assert [d["id"] for d in page["commits"][1]["decisions"]] == [repo.decision]
    rest = decisions_by_commit(repo, limit=2, offset=2)
    assert [c["summary"] for c in rest["commits"]] == ["first"] and rest["commits"][0]["decisions"] == []


def test_new_code_inside_a_governed_class_is_governed_and_a_namesake_elsewhere_is_not(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("NERVAPACK_MEMORY_DB", raising=False)
    root = tmp_path / "repo"
    (root / "shop").mkdir(parents=True)
    git(root, "init", "-q", "-b", "main")
    git(root, "config", "user.name", "Lin")
    git(root, "config", "user.email", "lin@example.org")
    (root / "shop" / "cart.py").write_text("class Cart:\n    def add(self, item):\n        return item\n")
    (root / "shop" / "tax.py").write_text("def vat(x):\n    return x * 0.2\n")
    (root / "shop" / "ship.py").write_text("def cost(x):\n    return 5\n")
    git(root, "add", ".")
    git(root, "commit", "-qm", "shop")
    ingest(root, embed=False)
    with MemoryStore(root / ".nervapack" / "memory.db") as m:
        cart = m.store("The cart holds items, not prices", kind="decision", entities=["Cart"])
        m.store("VAT is computed once", kind="decision", entities=["vat"])
        m.store("Shipping is flat", kind="decision", entities=["cost"])
    git(root, "checkout", "-qb", "feature")
    (root / "shop" / "cart.py").write_text((root / "shop" / "cart.py").read_text()
                                           + "\n    def remove(self, item):\n        return None\n")
    (root / "shop" / "gift.py").write_text("class Cart:\n    pass\n\n\ndef wrap(x):\n    return x\n")
    git(root, "add", ".")
    git(root, "commit", "-qm", "remove from cart; gifts")
    review = review_changes(root)
    assert touched(review) == {cart: [("modified", "Cart")]}  # the change to the governed class is reported
    # Cart.remove is the cart decision's code; gift.py's Cart is a namesake, not governed
    assert [(u["path"], u["definitions"]) for u in review.undecided] == [("shop/gift.py", ["Cart", "wrap"])]
