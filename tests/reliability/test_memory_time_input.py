"""Times that cannot mean what was meant are refused (issue 26, "Exhaustion and tracebacks").

On main, ``--expires-at`` in the past stored a memory already expired — never recalled, with
no word — and a number as ``valid_from`` was read as Unix seconds without a word (``2026``
became 1970-01-01T00:33:46Z). Decided, per case, and said in ``--help``:

- a number as a time (valid_from, expires_at, as_of, …) is refused everywhere: seconds,
  milliseconds or a year cannot be told apart; the message gives the ISO-8601 form of it
  read as Unix seconds, to copy if that was meant;
- an expiry not after the moment a new memory takes effect (``valid_from``, default now) is
  refused (store, add_node, an import of specs): such a memory is never recalled, now or as
  of any time;
- a past expiry after a past ``valid_from`` is history ("the freeze of 2019"): stored, with
  a warning (``PastExpiryWarning``; the CLI prints ``Warning: …``, the MCP result lists it
  under "warnings"), since it is recalled only ``as_of`` a time within it. An export's
  stored expiries import as they are.

The library, the CLI (exit 1, one line, no traceback, nothing stored) and the memory MCP
server (an error result) alike.
"""

from __future__ import annotations

import json

import pytest

from nervapack_core.errors import NervapackError
from nervapack_core.memory import MemoryStore

UNIX = 1735689600  # 2025-01-01T00:00:00Z read as Unix seconds


def _count(db) -> int:
    with MemoryStore(db) as m:
        return m.stats()["total_nodes"]


@pytest.mark.parametrize("given", [UNIX, 2026, 1735689600.5, UNIX * 1000])
def test_a_number_is_not_taken_for_a_time(tmp_path, given):
    db = tmp_path / "memory.db"
    with MemoryStore(db) as m:
        for call in (lambda: m.store("Chose flat tax", kind="decision", valid_from=given),
                     lambda: m.store("Flat tax note", expires_at=given),
                     lambda: m.add_node("fact", "Flat tax fact", valid_from=given),
                     lambda: m.import_nodes([{"content": "Imported tax fact", "valid_from": given}]),
                     lambda: m.recall("tax", as_of=given)):
            with pytest.raises(NervapackError, match="is a number, not a time") as err:
                call()
            assert "ISO-8601" in str(err.value) and "\n" not in str(err.value)
        with pytest.raises(NervapackError, match="2025-01-01T00:00:00Z"):
            m.store("Chose flat tax", valid_from=UNIX)  # what it would be as Unix seconds, to copy
    assert _count(db) == 0


def test_an_expiry_that_is_past_or_before_valid_from_is_refused(tmp_path):
    db = tmp_path / "memory.db"
    with MemoryStore(db) as m:
        with pytest.raises(NervapackError, match="is in the past") as err:
            m.store("Freeze deploys", expires_at="2020-01-01")
        assert "never be recalled" in str(err.value)
        with pytest.raises(NervapackError, match="is in the past"):
            m.add_node("fact", "Freeze deploys", expires_at="2020-01-01")
        with pytest.raises(NervapackError, match="import item 0: .*is in the past"):
            m.import_nodes([{"content": "Freeze deploys", "expires_at": "2020-01-01"}])
        with pytest.raises(NervapackError, match="not after valid_from"):
            m.store("Freeze deploys", valid_from="2031-01-01", expires_at="2030-06-01")
        assert m.stats()["total_nodes"] == 0
        kept = m.store("Freeze deploys", expires_at="2099-01-01")  # a future expiry is what it was for
        assert m.get_node(kept)["expires_at"].startswith("2099-01-01")
        # an export's expiries are history: they import as they were
        old = m.add_node("fact", "Old freeze", expires_at="2099-01-01")
        exported = m.export()
        for n in exported["nodes"]:
            if n["id"] == old:
                n["expires_at"] = "2020-01-01T00:00:00.000000Z"
    with MemoryStore(tmp_path / "copy.db") as copy:
        assert copy.import_nodes(exported)["imported"] >= 2


def test_a_past_interval_is_history_stored_with_a_warning(tmp_path, rel):
    from nervapack_core.memory.validate import PastExpiryWarning

    db = tmp_path / "memory.db"
    with MemoryStore(db) as m, pytest.warns(PastExpiryWarning, match="in the past: stored as history"):
        old = m.store("Queue freeze during the 2019 migration", valid_from="2019-01-01", expires_at="2020-01-01")
    with MemoryStore(db) as m:
        assert [i.id for i in m.recall("queue freeze", as_of="2019-06-01").items] == [old]
        assert m.recall("queue freeze").items == []
    res = rel.invoke("memory", "--db", str(db), "store", "Deploy freeze of 2018", "--valid-from", "2018-01-01",
                     "--expires-at", "2018-02-01")
    assert res.exit_code == 0 and "Warning: expires_at 2018-02-01T00:00:00Z is in the past" in res.output, res.output
    assert _count(db) == 2


def test_the_cli_refuses_with_one_line_and_says_so_in_help(tmp_path, rel):
    db = str(tmp_path / "memory.db")
    for args, said in ((["--expires-at", "2020-01-01"], "is in the past"),
                       (["--valid-from", str(UNIX)], "2025-01-01T00:00:00Z"),
                       (["--valid-from", "2031-01-01", "--expires-at", "2030-01-01"], "not after valid_from")):
        res = rel.invoke("memory", "--db", db, "store", "Freeze deploys", *args)
        assert res.exit_code == 1, (args, res.output)
        lines = [ln for ln in res.output.splitlines() if ln.strip()]
        assert len(lines) == 1 and said in lines[0] and lines[0].startswith("Error"), (args, res.output)
        assert rel.no_traceback(res)
    assert _count(tmp_path / "memory.db") == 0
    helped = rel.invoke("memory", "store", "--help").output
    assert "is refused" in helped and "stored as history" in " ".join(helped.split())
    assert "Unix" in helped


def test_the_mcp_server_answers_an_error_result(tmp_path):
    import os
    import sys

    import anyio
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    db = tmp_path / "memory.db"
    env = {k: v for k, v in os.environ.items() if k != "NERVAPACK_HOME"}
    params = StdioServerParameters(command=sys.executable, cwd=str(tmp_path), env=env,
                                   args=["-m", "nervapack_core.mcp.memory_server", "--db", str(db)])
    calls = [("memory_store", {"content": "Freeze deploys", "expires_at": "2020-01-01"}),
             ("memory_import", {"nodes": json.dumps([{"content": "Imported", "valid_from": UNIX}])}),
             ("memory_recall", {"query": "freeze", "as_of": "2020-01-01"}),
             ("memory_store", {"content": "Freeze of 2019", "valid_from": "2019-01-01", "expires_at": "2020-01-01"})]

    async def run():
        async with Client(params, read_timeout_seconds=120) as client:
            return [await client.call_tool(name, args) for name, args in calls]

    past, number, fine, history = anyio.run(run)
    assert past.is_error and "is in the past" in past.content[0].text
    assert number.is_error and "is a number, not a time" in number.content[0].text
    assert not fine.is_error
    assert not history.is_error and "stored as history" in history.structured_content["warnings"][0]
    assert _count(db) == 1
