"""Who calls and imports whom in Python code: each resolution rule on a small repository
built in tmp_path, the guessed calls kept out of centrality and impact analysis, and
syncs that change only what a rule depends on (a base class, a re-export, an alias, a
``*`` import, a module coming) giving exactly a fresh ingest's graph."""

from __future__ import annotations

import sqlite3
import textwrap
from pathlib import Path

import pytest

from nervapack_core.code.analysis.explore import explore
from nervapack_core.code.analysis.health import most_connected, top_files
from nervapack_core.code.graph.confidence import CONFIDENT
from nervapack_core.code.ingest.pipeline import ingest
from nervapack_core.code.retrieval.retriever import Retriever
from nervapack_core.flows.sync import sync

from .synckit import assert_same_graph, new_repo, write


def build(tmp_path: Path, files: dict[str, str]) -> Path:
    repo = new_repo(tmp_path / "repo", {path: textwrap.dedent(text).lstrip() for path, text in files.items()})
    ingest(repo, embed=False, workers=1)
    return repo


def edges(repo: Path, kind: str) -> dict[tuple[str, str], float]:
    """``{(source, target): confidence}``, each end as ``file::qualified name`` (or the file's path)."""
    conn = sqlite3.connect(repo / ".nervapack" / "graph.db")
    try:
        rows = conn.execute(
            "SELECT s.kind, s.file, s.qualified_name, t.kind, t.file, t.qualified_name, e.confidence FROM edges e"
            " JOIN nodes s ON s.id = e.source JOIN nodes t ON t.id = e.target WHERE e.kind = ?", (kind,)).fetchall()
    finally:
        conn.close()

    def label(k, f, q):
        return f if k == "file" else f"{f}::{q}"

    return {(label(*r[0:3]), label(*r[3:6])): r[6] for r in rows}


def calls_from(repo: Path, source: str) -> dict[str, float]:
    return {t: c for (s, t), c in edges(repo, "CALLS").items() if s == source}


# -- imports -------------------------------------------------------------------------------------------

FLASK_LIKE = {
    "src/flask/__init__.py": "from .app import Flask\n",
    "src/flask/app.py": """
        class Flask:
            def route(self):
                return None
    """,
    "tests/conftest.py": "import flask\n",
    "tests/test_basic.py": """
        import flask


        def test_app():
            app = flask.Flask()
            app.route()
    """,
    # a test application named like the package, as Flask's own tests have one
    "tests/test_apps/cliapp/__init__.py": "",
    "tests/test_apps/cliapp/inner1/__init__.py": "",
    "tests/test_apps/cliapp/inner1/inner2/__init__.py": "",
    "tests/test_apps/cliapp/inner1/inner2/flask.py": "from flask import Flask\n\napp = Flask()\n",
    "third_party/flask/__init__.py": "VENDORED = True\n",
    "scripts/run.py": "import flask\n",
}


def test_imports_resolve_to_the_package_before_test_fixtures_and_vendored_copies(tmp_path):
    repo = build(tmp_path, FLASK_LIKE)
    imports = set(edges(repo, "IMPORTS"))
    for importer in ("tests/conftest.py", "tests/test_basic.py", "scripts/run.py",
                     "tests/test_apps/cliapp/inner1/inner2/flask.py"):
        assert (importer, "src/flask/__init__.py") in imports, importer
    copies = {"tests/test_apps/cliapp/inner1/inner2/flask.py", "third_party/flask/__init__.py"}
    assert not {t for _, t in imports} & copies
    # and the calls through it: flask.Flask() is the class, app.route() its method
    assert set(calls_from(repo, "tests/test_basic.py::test_app")) == {"src/flask/app.py::Flask",
                                                                      "src/flask/app.py::Flask.route"}


def test_a_module_inside_a_package_is_not_the_standard_library_module_of_its_name(tmp_path):
    """``import asyncio`` is the standard library's, not ``pkg/utils/asyncio.py`` (that one is
    ``pkg.utils.asyncio``), so neither the import nor ``asyncio.run()`` links to it."""
    repo = build(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/utils/__init__.py": "",
        "pkg/utils/asyncio.py": "def run(x):\n    return x\n",
        "pkg/handler.py": "import asyncio\nfrom pkg.utils import asyncio as ours\n\n\n"
                          "def handle():\n    asyncio.run(1)\n    ours.run(2)\n",
    })
    assert set(edges(repo, "IMPORTS")) == {("pkg/handler.py", "pkg/utils/asyncio.py")}  # the `from` one
    assert calls_from(repo, "pkg/handler.py::handle") == {"pkg/utils/asyncio.py::run": 0.9}


def test_an_importer_next_to_a_module_gets_that_module(tmp_path):
    """A script (or a test pytest runs from its folder) imports its sibling first."""
    repo = build(tmp_path, {
        "tools/helpers.py": "def tool():\n    return 1\n",
        "tools/run.py": "import helpers\n\nhelpers.tool()\n",
        "lib/helpers.py": "def tool():\n    return 2\n",
    })
    assert ("tools/run.py", "tools/helpers.py") in edges(repo, "IMPORTS")
    assert calls_from(repo, "tools/run.py") == {"tools/helpers.py::tool": pytest.approx(0.9)}


# -- calls ---------------------------------------------------------------------------------------------

def test_self_cls_and_super_calls_resolve_to_the_class_and_its_bases(tmp_path):
    repo = build(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/base.py": """
            class Base:
                def run(self):
                    return 1

                def get(self):
                    return 2
        """,
        "pkg/impl.py": """
            from pkg.base import Base


            class Impl(Base):
                def get(self):
                    return self.run()

                @classmethod
                def make(cls):
                    return cls.build()

                @classmethod
                def build(cls):
                    return None

                def again(self):
                    return super().get()

                def own(self):
                    return self.get()
        """,
        "pkg/other.py": """
            class Other:
                def run(self):
                    return 3

                def build(self):
                    return 4
        """,
    })
    calls = edges(repo, "CALLS")
    assert calls[("pkg/impl.py::Impl.get", "pkg/base.py::Base.run")] == 1.0  # inherited, another file
    assert calls[("pkg/impl.py::Impl.make", "pkg/impl.py::Impl.build")] == 1.0
    assert calls[("pkg/impl.py::Impl.again", "pkg/base.py::Base.get")] == 1.0  # super(): the base's
    assert calls[("pkg/impl.py::Impl.own", "pkg/impl.py::Impl.get")] == 1.0  # self: the override
    assert not [e for e in calls if e[1].startswith("pkg/other.py")]


TYPED = {
    "pkg/__init__.py": "",
    "pkg/session.py": """
        class Session:
            def get(self):
                return 1

            def close(self):
                return None
    """,
    "pkg/cache.py": """
        class Cache:
            def get(self):
                return 2
    """,
    "pkg/use.py": """
        from pkg.session import Session
        from pkg import cache
        import pkg.session as sessions


        def constructed():
            s = Session()
            return s.get()


        def annotated(s: Session, c: "cache.Cache | None" = None):
            return s.get() + c.get()


        def with_block():
            with sessions.Session() as s:
                s.close()


        def chained():
            return cache.Cache().get()


        class Holder:
            def __init__(self):
                self.session = Session()

            def fetch(self):
                return self.session.get()


        def literals_and_unknowns(d, *args, **kwargs):
            return {}.get("a"), ", ".join(args), kwargs.get("b"), d.get("c")
    """,
}


def test_calls_on_typed_names_resolve_to_that_class(tmp_path):
    repo = build(tmp_path, TYPED)
    assert calls_from(repo, "pkg/use.py::constructed") == {"pkg/session.py::Session": 0.9,
                                                           "pkg/session.py::Session.get": 0.9}
    assert calls_from(repo, "pkg/use.py::annotated") == {"pkg/session.py::Session.get": 0.9,
                                                         "pkg/cache.py::Cache.get": 0.9}
    assert set(calls_from(repo, "pkg/use.py::with_block")) == {"pkg/session.py::Session",
                                                               "pkg/session.py::Session.close"}
    assert set(calls_from(repo, "pkg/use.py::chained")) == {"pkg/cache.py::Cache", "pkg/cache.py::Cache.get"}
    assert calls_from(repo, "pkg/use.py::Holder.fetch") == {"pkg/session.py::Session.get": 0.9}
    # literals, *args and **kwargs are builtin values; `d.get` could be either class's: no edge
    assert calls_from(repo, "pkg/use.py::literals_and_unknowns") == {}


def test_calls_on_what_a_function_returns(tmp_path):
    repo = build(tmp_path, {
        "pkg/__init__.py": "from .sessions import session\n",
        "pkg/sessions.py": """
            class Session:
                def get(self):
                    return 1

                @classmethod
                def create(cls):
                    return cls()


            def session():
                return Session()


            def annotated() -> "Session":
                return make_somehow()


            def indirect():
                return session()


            def undecided(flag):
                if flag:
                    return Session()
                return flag
        """,
        "app.py": """
            import pkg
            from pkg import sessions


            def use():
                s = pkg.session()
                s.get()
                sessions.annotated().get()
                sessions.indirect().get()
                sessions.Session.create().get()


            def unknown():
                return sessions.undecided(1).get()
        """,
    })
    assert calls_from(repo, "app.py::use") == {
        "pkg/sessions.py::session": 0.9, "pkg/sessions.py::annotated": 0.9, "pkg/sessions.py::indirect": 0.9,
        "pkg/sessions.py::Session.create": 0.9, "pkg/sessions.py::Session.get": 0.85}
    assert calls_from(repo, "app.py::unknown") == {"pkg/sessions.py::undecided": 0.9,
                                                   "pkg/sessions.py::Session.get": pytest.approx(0.3)}


def test_calls_on_a_module_level_instance(tmp_path):
    repo = build(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/dispatch.py": "class Signal:\n    def send(self):\n        return 1\n",
        "pkg/signals.py": "from pkg.dispatch import Signal\n\nrequest_started = Signal()\n",
        "pkg/handler.py": "from pkg import signals\nfrom pkg.signals import request_started as started\n\n\n"
                          "def handle():\n    signals.request_started.send()\n    started.send()\n",
    })
    assert calls_from(repo, "pkg/handler.py::handle") == {"pkg/dispatch.py::Signal.send": 0.9}
    write(repo, {"pkg/dispatch.py": "class Base:\n    def send(self):\n        return 1\n\n\nclass Signal(Base):\n"
                                    "    pass\n"})
    sync(repo, embed=False, workers=1)
    assert calls_from(repo, "pkg/handler.py::handle") == {"pkg/dispatch.py::Base.send": 0.9}
    assert_same_graph(repo, tmp_path / "fresh")
    write(repo, {"pkg/signals.py": "from pkg.dispatch import Signal\n\nrequest_started = None\n"})
    sync(repo, embed=False, workers=1)  # its type no longer known: `send` is only guessed
    assert calls_from(repo, "pkg/handler.py::handle") == {"pkg/dispatch.py::Base.send": pytest.approx(0.3)}
    assert_same_graph(repo, tmp_path / "fresh")


ATTRIBUTES = {
    # the shape of Django's QuerySet / MigrationExecutor: what an attribute holds is known from
    # `x or Cls()` in __init__, a property returning it, an annotation, a class of another file
    "pkg/__init__.py": "",
    "pkg/sql.py": """
        class Query:
            def chain(self):
                return self

            def get_aggregation(self):
                return 1


        class Other:
            def chain(self):
                return 2
    """,
    "pkg/graph.py": """
        class MigrationGraph:
            def forwards_plan(self):
                return []
    """,
    "pkg/loader.py": """
        from pkg.graph import MigrationGraph


        class MigrationLoader:
            graph: "MigrationGraph | None"

            def build_graph(self):
                self.graph = MigrationGraph()
    """,
    "pkg/query.py": """
        from pkg import sql
        from pkg.loader import MigrationLoader


        class QuerySet:
            def __init__(self, query=None):
                self._query = query or sql.Query()
                self.loader = MigrationLoader()

            @property
            def query(self):
                return self._query

            def aggregate(self):
                return self.query.chain().get_aggregation()

            def plan(self):
                return self.loader.graph.forwards_plan()


        class Sub(QuerySet):
            def again(self):
                return self._query.chain()


        def use():
            loader = MigrationLoader()
            return loader.graph.forwards_plan()


        class Planner:
            def __init__(self, loader: MigrationLoader, other):
                self.loader = loader
                self.other = other

            def plan(self):
                return self.loader.graph.forwards_plan(), self.other.forwards_plan()
    """,
}


def test_calls_through_typed_attributes_and_properties(tmp_path):
    repo = build(tmp_path, ATTRIBUTES)
    assert calls_from(repo, "pkg/query.py::QuerySet.aggregate") == {"pkg/sql.py::Query.chain": 0.85,
                                                                    "pkg/sql.py::Query.get_aggregation": 0.85}
    assert calls_from(repo, "pkg/query.py::QuerySet.plan") == {"pkg/graph.py::MigrationGraph.forwards_plan": 0.85}
    assert calls_from(repo, "pkg/query.py::Sub.again") == {"pkg/sql.py::Query.chain": 0.85}  # a base's attribute
    assert calls_from(repo, "pkg/query.py::use") == {"pkg/loader.py::MigrationLoader": 0.9,
                                                     "pkg/graph.py::MigrationGraph.forwards_plan": 0.85}
    # a typed parameter kept in an attribute; an untyped one is a guess
    assert calls_from(repo, "pkg/query.py::Planner.plan") == {
        "pkg/graph.py::MigrationGraph.forwards_plan": pytest.approx(0.85)}
    # the attribute's class changes in another file: the callers through it follow, as a fresh ingest
    write(repo, {"pkg/loader.py": "from pkg.sql import Other\n\n\nclass MigrationLoader:\n"
                                  "    def build_graph(self):\n        self.graph = Other()\n"})
    sync(repo, embed=False, workers=1)
    assert calls_from(repo, "pkg/query.py::QuerySet.plan") == {}  # Other has no forwards_plan
    assert calls_from(repo, "pkg/query.py::Planner.plan") == {
        "pkg/graph.py::MigrationGraph.forwards_plan": pytest.approx(0.3)}  # only the guess is left
    assert_same_graph(repo, tmp_path / "fresh")


def test_re_exports_aliases_and_star_imports_are_followed(tmp_path):
    repo = build(tmp_path, {
        "pkg/__init__.py": "from .api import get\nfrom .models import *\n",
        "pkg/api.py": "def get():\n    return 1\n",
        "pkg/models.py": "class Response:\n    def json(self):\n        return {}\n",
        "tests/test_api.py": """
            import pkg
            from pkg import get as fetch
            from pkg import Response


            def test_get():
                pkg.get()
                fetch()
                Response().json()
                pkg.Response().json()
        """,
    })
    assert set(calls_from(repo, "tests/test_api.py::test_get")) == {
        "pkg/api.py::get", "pkg/models.py::Response", "pkg/models.py::Response.json"}


def test_names_bound_to_nothing_in_the_repository_make_no_edge(tmp_path):
    repo = build(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/util.py": "def len(x):\n    return 0\n\n\ndef handler():\n    return 1\n",
        "pkg/other.py": """
            import os
            from collections import OrderedDict


            def handler():
                return 2


            def run(callback, items):
                callback()  # a parameter, not the module's handler()
                os.path.join("a", "b")
                OrderedDict().get("x")
                return len(items)  # the builtin: pkg/util.py is not imported
        """,
    })
    assert calls_from(repo, "pkg/other.py::run") == {}


def test_a_method_name_with_nothing_known_of_its_receiver_is_a_guess(tmp_path):
    repo = build(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/holder.py": "class Holder:\n    def unique_method(self):\n        return 1\n",
        "pkg/user.py": "def use(x):\n    return x.unique_method()\n",
    })
    assert calls_from(repo, "pkg/user.py::use") == {"pkg/holder.py::Holder.unique_method": pytest.approx(0.3)}


# -- guesses stay out of centrality and impact -----------------------------------------------------------

def test_guessed_calls_are_left_out_of_centrality_impact_and_explore(tmp_path):
    users = "\n\n".join(f"def user_{i}(d):\n    return d.get('key')" for i in range(12))
    repo = build(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/holder.py": "class GraphHolder:\n    def get(self):\n        return 1\n",
        "pkg/users.py": users + "\n",
        "pkg/core.py": "def compute():\n    return 1\n",
        "pkg/calls.py": "from pkg.core import compute\n\n\n" + "\n\n".join(
            f"def caller_{i}():\n    return compute()" for i in range(3)) + "\n",
    })
    guesses = {s: c for (s, t), c in edges(repo, "CALLS").items() if t == "pkg/holder.py::GraphHolder.get"}
    assert len(guesses) == 12 and max(guesses.values()) < CONFIDENT  # dict.get(), guessed by name
    conn = sqlite3.connect(repo / ".nervapack" / "graph.db")
    conn.row_factory = sqlite3.Row
    try:
        top = most_connected(conn, limit=5)
        assert top[0]["qualified_name"] == "compute" and top[0]["degree"] == 3
        assert "GraphHolder.get" not in [r["qualified_name"] for r in top]
        assert [f["file"] for f in top_files(conn)][0] != "pkg/users.py"
        holder = conn.execute("SELECT id FROM nodes WHERE qualified_name = 'GraphHolder.get'").fetchone()[0]
        assert [n["qualified_name"] for n in explore(conn, holder).nodes] == ["GraphHolder.get", "GraphHolder"]
        assert len(explore(conn, holder, guesses=True).nodes) == 14
    finally:
        conn.close()
    retriever = Retriever(repo, use_vectors=False)
    try:
        impact = [n.qualified_name for n in retriever.impact("GraphHolder.get").nodes]
        assert "GraphHolder.get" in impact and not [q for q in impact if q.startswith("user_")]
        callers = [n.qualified_name for n in retriever.impact("compute").nodes]
        assert {"caller_0", "caller_1", "caller_2"} <= set(callers)
    finally:
        retriever.close()


# -- sync: what the rules depend on changes, the graph is a fresh ingest's ---------------------------------

def test_sync_when_only_a_base_class_changes(tmp_path):
    repo = build(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/root.py": "class Root:\n    def load(self):\n        return 1\n",
        "pkg/base.py": "class Cache:\n    pass\n",
        "pkg/store.py": "from pkg.base import Cache\n\n\nclass Store(Cache):\n    pass\n",
        "pkg/use.py": "from pkg.store import Store\n\n\ndef use():\n    s = Store()\n    return s.load()\n",
    })
    assert "pkg/root.py::Root.load" not in calls_from(repo, "pkg/use.py::use")
    write(repo, {"pkg/base.py": "from pkg.root import Root\n\n\nclass Cache(Root):\n    pass\n"})
    sync(repo, embed=False, workers=1)
    assert calls_from(repo, "pkg/use.py::use")["pkg/root.py::Root.load"] == 0.9  # Store -> Cache -> Root
    assert_same_graph(repo, tmp_path / "fresh")
    # the same in one file: no import changes, only the base list
    write(repo, {"pkg/base.py": "class Near:\n    def load(self):\n        return 2\n\n\nclass Cache:\n    pass\n"})
    sync(repo, embed=False, workers=1)
    write(repo, {"pkg/base.py": "class Near:\n    def load(self):\n        return 2\n\n\nclass Cache(Near):\n"
                                "    pass\n"})
    sync(repo, embed=False, workers=1)
    assert calls_from(repo, "pkg/use.py::use")["pkg/base.py::Near.load"] == 0.9
    assert_same_graph(repo, tmp_path / "fresh")


def test_sync_when_a_re_export_or_an_alias_changes(tmp_path):
    repo = build(tmp_path, {
        "pkg/__init__.py": "from pkg.first import helper\n",
        "pkg/first.py": "def helper():\n    return 1\n",
        "pkg/second.py": "def helper():\n    return 2\n",
        "pkg/mid.py": "from pkg import helper as assist\n",
        "pkg/use.py": "from pkg.mid import assist as aid\nimport pkg\n\n\ndef use():\n"
                      "    return aid() + pkg.helper()\n",
    })
    assert set(calls_from(repo, "pkg/use.py::use")) == {"pkg/first.py::helper"}
    write(repo, {"pkg/__init__.py": "from pkg.second import helper\n"})
    sync(repo, embed=False, workers=1)
    assert set(calls_from(repo, "pkg/use.py::use")) == {"pkg/second.py::helper"}
    assert_same_graph(repo, tmp_path / "fresh")


def test_sync_when_a_star_import_changes(tmp_path):
    repo = build(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/a.py": "def tool():\n    return 1\n",
        "pkg/b.py": "def tool():\n    return 2\n",
        "pkg/hub.py": "from pkg.a import *\n",
        "pkg/use.py": "from pkg.hub import *\n\n\ndef use():\n    return tool()\n",
    })
    assert set(calls_from(repo, "pkg/use.py::use")) == {"pkg/a.py::tool"}
    write(repo, {"pkg/hub.py": "from pkg.b import *\n"})
    sync(repo, embed=False, workers=1)
    assert set(calls_from(repo, "pkg/use.py::use")) == {"pkg/b.py::tool"}
    assert_same_graph(repo, tmp_path / "fresh")


def test_sync_when_a_module_comes_and_goes(tmp_path):
    repo = build(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/deep/__init__.py": "",
        "app.py": "import pkg.deep\n\n\ndef use():\n    return pkg.deep.extra.go()\n",
    })
    assert calls_from(repo, "app.py::use") == {}
    write(repo, {"pkg/deep/extra.py": "def go():\n    return 1\n"})
    sync(repo, embed=False, workers=1)
    assert set(calls_from(repo, "app.py::use")) == {"pkg/deep/extra.py::go"}
    assert_same_graph(repo, tmp_path / "fresh")
    (repo / "pkg/deep/extra.py").unlink()
    sync(repo, embed=False, workers=1)
    assert calls_from(repo, "app.py::use") == {}
    assert_same_graph(repo, tmp_path / "fresh")


def test_sync_when_what_a_function_returns_changes(tmp_path):
    repo = build(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/models.py": "class Store:\n    def load(self):\n        return 1\n\n\nclass Cache:\n    def load(self):\n"
                         "        return 2\n",
        "pkg/factory.py": "from pkg.models import Store\n\n\ndef make():\n    return Store()\n",
        "pkg/indirect.py": "from pkg.factory import make\n\n\ndef again():\n    return make()\n",
        "pkg/use.py": "from pkg.indirect import again\n\n\ndef use():\n    return again().load()\n",
    })
    assert calls_from(repo, "pkg/use.py::use")["pkg/models.py::Store.load"] == 0.85
    write(repo, {"pkg/factory.py": "from pkg.models import Cache\n\n\ndef make():\n    return Cache()\n"})
    sync(repo, embed=False, workers=1)
    assert set(calls_from(repo, "pkg/use.py::use")) == {"pkg/indirect.py::again", "pkg/models.py::Cache.load"}
    assert_same_graph(repo, tmp_path / "fresh")
    write(repo, {"pkg/models.py": "class Store:\n    def load(self):\n        return 1\n\n\nclass Cache(Store):\n"
                                  "    pass\n"})
    sync(repo, embed=False, workers=1)
    assert set(calls_from(repo, "pkg/use.py::use")) == {"pkg/indirect.py::again", "pkg/models.py::Store.load"}
    assert_same_graph(repo, tmp_path / "fresh")
