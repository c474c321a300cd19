"""Defect 3: terminal escape injection. File names, code and memory content holding ``ESC[2J``
(clear screen) and ``ESC]0;title BEL`` (window title) must not reach the terminal raw through the
human output of either CLI: ``cli.common.safe_text`` makes control characters visible (``␛``,
``␇``) in ``echo``, ``emit`` and every rich console. JSON output stays exact JSON."""

from __future__ import annotations

import json

CLEAR = "\x1b[2J"
TITLE = "\x1b]0;pwned\x07"
EVIL_NAME = f"shop/evil{CLEAR}.py"
EVIL_CODE = f'"""Ledger {TITLE} helpers {CLEAR}."""\n\n\ndef ledger_{{n}}(x):\n    """Ledger {TITLE} {CLEAR}."""\n' \
            "    return compute_tax(x)\n"
RAW = ("\x1b", "\x07", "\x9b")


def _clean(output: str) -> bool:
    return not any(c in output for c in RAW)


def test_no_raw_escape_reaches_the_terminal(tmp_path, rel):
    files = {**rel.SHOP, EVIL_NAME: EVIL_CODE.format(n=1),
             f"docs/notes{TITLE}.md": f"# Notes {CLEAR}\n\nledger {TITLE}\n"}
    root = rel.make_repo(tmp_path / "repo", files)
    p = str(root)
    db = str(root / ".nervapack" / "memory.db")
    outputs = {}

    def run(name, *args):
        done = rel.invoke(*args)
        assert done.exit_code in (0, 2) and rel.no_traceback(done), (name, done.output, done.exception)
        outputs[name] = done.output
        return done

    run("ingest", "ingest", p, "--no-embed", "--workers", "1")
    run("status", "status", "--detailed", "--path", p)
    run("query", "query", "ledger helpers", "--no-vectors", "--path", p)
    run("store", "memory", "--db", db, "store", f"Ledger totals {CLEAR} use compute_tax {TITLE}", "--kind", "decision",
        "--title", f"Ledger {TITLE}", "--status", "proposed", "-e", f"ledger{CLEAR}", "--rationale", f"r {CLEAR}")
    run("recall", "memory", "--db", db, "recall", "ledger totals")
    run("timeline", "memory", "--db", db, "timeline", "ledger totals")
    run("stats", "memory", "--db", db, "stats")
    run("review", "memory", "--db", db, "review")
    run("decisions", "memory", "--db", db, "decisions")
    (root / EVIL_NAME).write_text(EVIL_CODE.format(n=2), encoding="utf-8")
    (root / f"shop/new{TITLE}.py").write_text(EVIL_CODE.format(n=3), encoding="utf-8")
    run("review-changes", "review-changes", "--working", "--path", p)
    run("sync", "sync", p)
    run("history", "history", "--path", p)

    dirty = [name for name, out in outputs.items() if not _clean(out)]
    assert not dirty, {name: outputs[name] for name in dirty}
    # the data is shown, made visible rather than dropped
    assert "␛[2J" in outputs["query"] or "␛]0;pwned␇" in outputs["query"]
    assert "␛" in outputs["recall"]


def test_json_output_stays_exact(tmp_path, rel):
    files = {**rel.SHOP, EVIL_NAME: EVIL_CODE.format(n=1)}
    root = rel.ingested(tmp_path / "repo", files)
    db = str(tmp_path / "m.db")
    text = f"Ledger {CLEAR} {TITLE} csi \x9b2J"
    assert rel.invoke("memory", "--db", db, "store", text).exit_code == 0
    done = rel.invoke("memory", "--db", db, "recall", "ledger", "--json")
    assert done.exit_code == 0 and _clean(done.output)
    assert text in json.loads(done.output)["text"]
    done = rel.invoke("query", "ledger", "--no-vectors", "--json", "--path", str(root))
    data = json.loads(done.output)
    assert _clean(done.output) and EVIL_NAME in {n["file"] for n in data["nodes"]}


def test_a_file_name_is_not_rich_markup(tmp_path, rel):
    """A name like ``[bold]x.py`` is shown as it is, not read as a markup tag."""
    root = rel.ingested(tmp_path / "repo")
    name = "shop/[bold]odd.py"
    (root / name).write_text("def odd():\n    return 1\n")
    done = rel.invoke("status", "--path", str(root))
    assert done.exit_code == 0 and rel.no_traceback(done), (done.output, done.exception)
    assert name in done.output
