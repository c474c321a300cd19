"""A read never creates a database: a mistyped ``--db`` given to ``nervapack memory
recall/show/stats/…`` is an error naming the path (exit 1), and no file appears."""

import pytest
from click.testing import CliRunner

from nervapack_core.cli import cli as nervapack_cli
from nervapack_core.cli.memory import memory_cli
from nervapack_core.errors import NervapackError
from nervapack_core.memory import MemoryStore

READS = [
    ["recall", "auth"],
    ["show", "d_0019e9739ad0"],
    ["stats"],
    ["search", "auth"],
    ["timeline", "auth"],
    ["about", "AuthService"],
    ["why", "d_0019e9739ad0"],
    ["sessions"],
    ["namespaces"],
    ["decisions"],
    ["review"],
    ["recall-log"],
    ["export"],
    ["for-code", "src/auth.py"],
    ["to-code", "d_0019e9739ad0"],
    ["staleness"],
    ["stale"],
    ["consolidate", "--dry-run"],
    ["backup", "copy.db"],
    ["export-adr", "adr"],
]


def _leftovers(folder):
    return sorted(p.name for p in folder.iterdir())


@pytest.mark.parametrize("args", READS, ids=lambda a: a[0] + ("-dry" if "--dry-run" in a else ""))
def test_a_read_command_with_a_mistyped_db_is_an_error_and_creates_nothing(tmp_path, args):
    typo = tmp_path / "memroy.db"
    args = [str(tmp_path / a) if a in ("copy.db", "adr") else a for a in args]
    r = CliRunner().invoke(memory_cli, [*args, "--db", str(typo)])
    assert r.exit_code == 1, r.output
    assert "Traceback" not in r.output and f"no memory database at {typo}" in r.output
    assert not typo.exists() and _leftovers(tmp_path) == []


def test_through_the_nervapack_cli_too(tmp_path):
    typo = tmp_path / "nested" / "memroy.db"
    r = CliRunner().invoke(nervapack_cli, ["memory", "--db", str(typo), "stats", "--json"])
    assert r.exit_code == 1 and str(typo) in r.output
    assert not typo.parent.exists()  # not even the folder


def test_a_write_command_still_creates_it_and_reads_then_work(tmp_path):
    db = tmp_path / "memory.db"
    runner = CliRunner()
    assert runner.invoke(memory_cli, ["store", "kafka carries events", "--db", str(db)]).exit_code == 0
    assert db.exists()
    r = runner.invoke(memory_cli, ["recall", "kafka", "--db", str(db)])
    assert r.exit_code == 0 and "kafka carries events" in r.output


def test_the_library_option(tmp_path):
    missing = tmp_path / "none" / "memory.db"
    with pytest.raises(NervapackError, match=f"no memory database at {missing}"):
        MemoryStore(missing, create=False)
    assert not missing.parent.exists()
    with pytest.raises(NervapackError, match="is a directory"):
        MemoryStore(tmp_path, create=False)
    MemoryStore(tmp_path / "made.db").close()  # the default creates
    with MemoryStore(tmp_path / "made.db", create=False) as m:  # and an existing one opens
        assert m.stats()["total_nodes"] == 0
