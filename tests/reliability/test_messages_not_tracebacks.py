"""Defect 5: inputs that ended in a Python traceback. Each now gives a clear message and a
non-zero exit, or a valid answer (CLI in-process through click's runner; MCP through a real
client session)."""

from __future__ import annotations

import json

import pytest


def _refused(done, *needles: str) -> None:
    assert done.exit_code != 0, done.output
    assert done.exception is None or isinstance(done.exception, SystemExit), repr(done.exception)
    assert "Traceback" not in done.output
    for needle in needles:
        assert needle in done.output, done.output


def test_huge_recall_budget_is_a_valid_answer(tmp_path, rel):
    db = str(tmp_path / "m.db")
    assert rel.invoke("memory", "--db", db, "store", "ledger totals are computed nightly").exit_code == 0
    done = rel.invoke("memory", "--db", db, "recall", "ledger", "--budget", "9223372036854775808")
    assert done.exit_code == 0 and done.exception is None, (done.output, done.exception)
    assert "ledger totals" in done.output


def test_for_code_with_a_huge_line_number_is_refused(tmp_path, rel):
    root = rel.ingested(tmp_path / "repo")
    assert rel.invoke("memory", "--db", str(tmp_path / "m.db"), "init").exit_code == 0  # a read needs a store
    done = rel.invoke("memory", "--db", str(tmp_path / "m.db"), "for-code", str(root / "shop/tax.py"),
                      "--line", str(10**23))
    _refused(done, "line must be a line number")


@pytest.mark.parametrize("payload, needle", [
    ("[" * 100_000 + "]" * 100_000, "nested too deeply"),
    ('{"content": "x", "metadata": ' + "[" * 5_000 + "]" * 5_000 + "}", "nested too deeply"),
    ('[{"content": 5}]', "content must be text"),
    ('[{"content": "x", "confidence": "high"}]', "confidence must be a number"),
    ('{"nodes": 5}', "'nodes' must be a list"),
])
def test_memory_import_of_bad_json(tmp_path, rel, payload, needle):
    bad = tmp_path / "bad.json"
    bad.write_text(payload)
    _refused(rel.invoke("memory", "--db", str(tmp_path / "m.db"), "import", str(bad)), needle)


def test_store_from_stdin_with_invalid_utf8(tmp_path, rel):
    done = rel.invoke("memory", "--db", str(tmp_path / "m.db"), "store", "-", input=b"caf\xe9 au lait")
    _refused(done, "standard input is not valid UTF-8")


def test_history_with_null_fields_skips_the_line_with_a_warning(tmp_path, rel):
    root = rel.ingested(tmp_path / "repo")
    assert rel.invoke("query", "compute tax", "--no-vectors", "--path", str(root)).exit_code == 0
    history = root / ".nervapack" / "query_history.jsonl"
    good = json.loads(history.read_text().splitlines()[0])
    lines = [json.dumps({**good, field: None}) for field in good]
    history.write_text("\n".join([*lines, json.dumps(good)]) + "\n")
    for args in (("history", "--path", str(root)), ("history", "--json", "--path", str(root))):
        done = rel.invoke(*args)
        assert done.exit_code == 0 and done.exception is None, (done.output, repr(done.exception))
        assert "compute tax" in done.output


@pytest.mark.parametrize("shape", [
    [], "x", {"encoding": "cl100k_base", "files": [1]},
    {"encoding": "cl100k_base", "files": {"shop/tax.py": ["a", "b", "c"]}},
    {"encoding": "cl100k_base", "files": {"shop/tax.py": [1, 2, None]}},
])
def test_a_token_cache_of_the_wrong_shape_is_rebuilt(tmp_path, rel, shape):
    root = rel.ingested(tmp_path / "repo")
    cache = root / ".nervapack" / "cache" / "v1" / "file_tokens.json"
    cache.parent.mkdir(parents=True, exist_ok=True)
    cache.write_text(json.dumps(shape))
    for _ in range(2):  # the first query rebuilds it, the next one reads it back
        done = rel.invoke("query", "compute tax", "--no-vectors", "--json", "--path", str(root))
        assert done.exit_code == 0 and done.exception is None, (done.output, repr(done.exception))
        assert json.loads(done.output)["naive_tokens"] > 0


def test_list_entities_with_a_one_megabyte_name(tmp_path, rel):
    root = rel.ingested(tmp_path / "repo")
    big = "compute_tax" * 100_000
    results = rel.mcp_calls(root, [("list_entities", {"name_contains": big}),
                                   ("list_entities", {"file_path": "shop/" + big}),
                                   ("list_entities", {"name_contains": "COMPUTE_tax"}),
                                   ("list_entities", {"file_path": "shop"})])
    for res in (results[0], results[2], results[3]):
        assert not res.is_error, rel.text_of(res)[:300]
    # a path the graph does not know is said so (an empty list read as "nothing there"), cut, not echoed whole
    assert results[1].is_error and "has no file or folder 'shop/compute_tax" in rel.text_of(results[1])
    assert len(rel.text_of(results[1])) < 600
    data = [json.loads(rel.text_of(r)) if not r.is_error else None for r in results]
    assert data[0]["total"] == 0
    assert "shop.tax.compute_tax" in {e["qualified_name"] for e in data[2]["entities"]} or data[2]["total"] >= 1
    assert {e["file"] for e in data[3]["entities"]} == {"shop/tax.py", "shop/cart.py"}
