"""The test tiers of tests/conftest.py: every test has exactly one, and the rule places known tests
where it says it does (so that a change to the rule which sends a server test into the fast tier,
or leaves a test without a tier, fails here)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace


def _starts_our_cli() -> None:
    """Never called: a helper as a test would use one, starting the CLI in a process of its own."""
    subprocess.run([sys.executable, "-m", "nervapack_core", "--help"], check=True)


def _calls_a_helper() -> None:
    """Never called: reaches the process only through another test-tree helper."""
    _starts_our_cli()


_COMMAND = [sys.executable, "-m", "nervapack_core", "--help"]


def _runs_a_kept_command() -> None:
    """Never called: starts the CLI through a command line kept in a module constant."""
    subprocess.run(_COMMAND, check=True)


def _pure() -> int:
    """Never called: touches nothing outside the process."""
    return len([1, 2, 3])


def test_the_names_a_test_reaches_are_followed_through_its_helpers(tiers):
    assert "executable" in tiers.names_reached([_calls_a_helper], [])
    assert "executable" in tiers.names_reached([_runs_a_kept_command], [])
    assert not tiers.names_reached([_pure], []) & (tiers.PROCESS_NAMES | tiers.WHOLE_APP_NAMES | tiers.DISK_NAMES)
    # a helper met as an attribute of a fixture's namespace (kit.run_cli) is found in the fixture's module
    kit = SimpleNamespace(starter=_starts_our_cli)
    assert "executable" in tiers.names_reached([lambda: kit.starter()], [{"starter": _starts_our_cli}])


def test_every_collected_test_has_exactly_one_tier(request, tiers):
    for item in request.session.items:
        marks = [t for t in tiers.TIERS if item.get_closest_marker(t)]
        assert len(marks) == 1, (item.nodeid, marks)
        assert marks == [tiers.tier_of(item)], item.nodeid


def test_a_test_with_a_folder_is_an_integration(request, tmp_path):
    assert request.node.get_closest_marker("unit") is None  # tmp_path: a folder on disk
    assert request.node.get_closest_marker("integration") is not None


ROOT = Path(__file__).resolve().parent.parent
KNOWN = {
    # the reliability folder is system whatever a test uses
    "tests/reliability/test_fuzz_cli.py::test_adr_import_of_hostile_folders": "system",
    # an MCP server over stdio
    "tests/memory/test_memory_mcp.py::test_mcp_round_trip_all_tools": "system",
    # the CLI in a subprocess, reached only through the kit fixture (kit.run_cli)
    "tests/code/test_code_write_faults.py::test_second_ingest_waits_for_the_first_then_stops_with_a_clear_message":
        "system",
    # the CLI in a subprocess, through a command line kept in a constant (CLI = [sys.executable, ...])
    "tests/code/test_llm_binding.py::test_unreachable_endpoint_warns_and_ingest_completes": "system",
    # git firing one of our hooks, which starts our CLI (the test names hook_env)
    "tests/test_review_changes.py::test_commit_msg_hook_reads_the_message_being_written": "system",
    # the whole dashboard in the test's process: Streamlit's AppTest of app.py and a page
    "tests/dashboard/test_dashboard_pages.py::test_dashboard_overview_numbers": "system",
    # the dashboard's loaders on a seeded workspace, without the app
    "tests/dashboard/test_dashboard_data.py::test_dashboard_search_never_raises_on_fts_syntax": "integration",
    # a folder from tmp_path, everything in-process
    "tests/code/test_code_ingest.py::test_node_ids_are_stable_across_ingests": "integration",
    # nothing on disk
    "tests/retrieval/test_retrieval_unit.py::test_stem_is_light": "unit",
}


def test_known_tests_are_in_their_tier(tmp_path):
    """Collect the known tests in a pytest of their own, once per tier: each is found in its tier only."""
    files = sorted({k.split("::")[0] for k in KNOWN})
    found: dict[str, list[str]] = {}
    for tier in ("unit", "integration", "system"):
        done = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider",
                               "-m", tier, *files], capture_output=True, text=True, timeout=600,
                              cwd=ROOT)  # the paths are the repository's: whatever folder an earlier test left us in
        assert done.returncode in (0, 5), done.stdout[-3000:] + done.stderr[-3000:]  # 5: none in this tier
        for line in done.stdout.splitlines():
            found.setdefault(line.split("[")[0], []).append(tier)
    for nodeid, tier in KNOWN.items():
        assert found.get(nodeid) == [tier], (nodeid, found.get(nodeid))
