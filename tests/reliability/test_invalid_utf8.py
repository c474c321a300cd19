"""Defect 1: a file name or a command-line argument that is not valid UTF-8.

Decision: such a file is *skipped* with the reason "file name is not valid UTF-8" and recorded
under its escaped name (``caf\\xe9.py``): the graph, FTS, JSON and every output are UTF-8, so a
name that cannot be written as UTF-8 cannot be stored or shown as is. The rest of the repository
is indexed. An argument that is not valid UTF-8 is refused with a usage message (exit 2)."""

from __future__ import annotations

import json
import os


def test_a_file_named_with_invalid_utf8_is_skipped_with_a_reason(tmp_path, rel):
    root = rel.make_repo(tmp_path / "repo", git=False)
    with open(os.path.join(os.fsencode(root), b"caf\xe9.py"), "wb") as fh:
        fh.write(b"def cafe():\n    return 1\n")
    rel.git_init(root)
    done = rel.run_cli("ingest", str(root), "--no-embed", "--workers", "1", "--json")
    assert done.returncode == 0, done.stderr.decode("utf-8", "replace")
    report = json.loads(done.stdout)
    assert ["caf\\xe9.py", "file name is not valid UTF-8"] in report["skipped"]
    status = rel.run_cli("status", "--detailed", "--path", str(root))
    assert status.returncode == 0 and b"caf\\xe9.py: file name is not valid UTF-8" in status.stdout
    found = rel.run_cli("query", "compute tax", "--no-vectors", "--json", "--path", str(root))
    assert found.returncode == 0 and "shop/tax.py" in {e["file"] for e in json.loads(found.stdout)["nodes"]}


def test_an_argument_with_invalid_utf8_gets_a_message(tmp_path, rel):
    root = rel.ingested(tmp_path / "repo")
    for args in ([b"query", b"tax\xe9", b"--no-vectors", b"--path", os.fsencode(root)],
                 [b"memory", b"--db", os.fsencode(tmp_path / "m.db"), b"recall", b"caf\xe9"],
                 [b"memory", b"--db", os.fsencode(tmp_path / "m.db"), b"store", b"caf\xe9"]):
        done = rel.run_cli(*args)
        assert done.returncode == 2, done
        assert b"Traceback" not in done.stderr
        assert b"the argument 'tax\\xe9' is not valid UTF-8" in done.stderr or b"'caf\\xe9' is not valid" in done.stderr
