"""A library's own test framework (``django/test/client.py``) is library code, its test suite
(``tests/``) is not: the framework is embedded and listed by a search, damped like tests unless
the question asks about testing; the suite stays evidence only."""

from __future__ import annotations

import sqlite3
import subprocess

from nervapack_core.code.ingest.pipeline import ingest
from nervapack_core.code.retrieval.ranking import node_prior
from nervapack_core.code.retrieval.retriever import Retriever
from nervapack_core.code.vectors.embed_step import EMBEDDED_WHERE
from nervapack_core.text import is_test_path, is_test_support_path, register_path_functions

from .conftest import write_repo


def test_test_framework_paths_are_told_from_test_suites():
    for path in ("django/test/client.py", "django/test/utils.py", "numpy/testing/_private/utils.py"):
        assert is_test_support_path(path) and not is_test_path(path), path
    for path in ("tests/test_client/views.py", "tests/utils.py", "numpy/core/tests/test_a.py", "pkg/test/test_a.py",
                 "pkg/test/conftest.py", "pkg/tests/helpers.py", "test/helpers.py", "src/test/java/FooTest.java",
                 "src/__tests__/a.ts", "pkg/test/fixtures/data.py"):
        assert is_test_path(path) and not is_test_support_path(path), path
    words = {"request", "build"}
    assert node_prior("function", "django/test/client.py", words) == 0.5  # listed, but damped like tests
    assert node_prior("function", "django/test/client.py", words | {"test"}) == 1.0
    assert node_prior("function", "django/test/client.py", words, named=True) == 1.0


FILES = {
    "mylib/__init__.py": "",
    "mylib/handlers.py": '''
        class Handler:
            """Runs a request through the middleware chain and returns the response."""

            def handle(self, request):
                return request
    ''',
    "mylib/test/__init__.py": "",
    "mylib/test/client.py": '''
        from mylib.handlers import Handler


        class Client:
            """The test client: builds a fake request and runs it through the handler, no server."""

            def __init__(self):
                self.handler = Handler()

            def request(self, path):
                fake_request = {"path": path}
                return self.handler.handle(fake_request)
    ''',
    "tests/test_views.py": '''
        from mylib.test.client import Client


        def test_client_request_builds_a_request():
            assert Client().request("/") == {"path": "/"}
    ''',
}


def test_the_test_client_is_embedded_and_listed(tmp_path):
    root = write_repo(tmp_path / "repo", FILES)
    for args in (["init", "-q"], ["add", "-A"],
                 ["-c", "user.email=t@example.invalid", "-c", "user.name=t", "commit", "-qm", "init"]):
        subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)
    ingest(root, embed=True, embedder="hashing", workers=1)
    conn = sqlite3.connect(root / ".nervapack" / "graph.db")
    try:  # what the ingest embeds: the framework, not the suite
        register_path_functions(conn)
        embedded = {r[0] for r in conn.execute(f"SELECT file FROM nodes WHERE {EMBEDDED_WHERE} AND kind != 'doc'")}
    finally:
        conn.close()
    assert embedded == {"mylib/handlers.py", "mylib/test/client.py"}
    retriever = Retriever(root)
    try:
        found = retriever.retrieve("how does the test client build a fake request and run it without a server?")
        listed = [(n.file, n.qualified_name) for n in found.nodes]
        assert ("mylib/test/client.py", "Client.request") in listed[:3]  # library code, listed
        found = retriever.retrieve("how does the client build a fake request and run it without a server?")
        assert not any(f.startswith("tests/") for f, _ in [(n.file, n.qualified_name) for n in found.nodes])
        # and the handler, called through the attribute the constructor typed
        assert ("mylib/handlers.py", "Handler.handle") in [(n.file, n.qualified_name) for n in found.nodes]
    finally:
        retriever.close()
