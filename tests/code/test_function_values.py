"""A function named as a value in JavaScript/TypeScript (a callback, one of two functions picked by a
condition) is linked to its caller like a call — but only a name that can only mean a function: imported
into the file or defined at its top level. Real ingest, real SQLite."""

from __future__ import annotations

from nervapack_core.code.analysis.reader import GraphReader
from nervapack_core.code.ingest.pipeline import ingest

FILES = {
    "src/utils.ts": """
        export function addToEnd<T>(items: T[], item: T, max = 0): T[] {
          const next = [...items, item]
          return max && next.length > max ? next.slice(1) : next
        }

        export function addToStart<T>(items: T[], item: T, max = 0): T[] {
          const next = [item, ...items]
          return max && next.length > max ? next.slice(0, -1) : next
        }

        export function query(): number {
          return 1
        }
    """,
    "src/pages.ts": """
        import { addToEnd, addToStart } from './utils'

        function flush(): void {}

        export function addPage(pages: string[], page: string, previous: boolean): string[] {
          const add = previous ? addToStart : addToEnd
          return add(pages, page, 3)
        }

        export function later(): void {
          setTimeout(flush, 10)
        }

        export function local(query: number): number {
          return Math.max(query, 0)
        }

        module.exports = addPage
    """,
}


def _calls(root) -> set[tuple[str, str]]:
    with GraphReader(root / ".nervapack" / "graph.db") as graph:
        names = {r["id"]: r["qualified_name"] for r in graph.nodes()}
        return {(names[e["source"]], names[e["target"]]) for e in graph.edges() if e["kind"] == "CALLS"}


def test_functions_named_as_values_are_linked_to_their_caller(tmp_path):
    for path, text in FILES.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text("\n".join(line[8:] for line in text.splitlines()))
    ingest(tmp_path, embed=False, workers=1)
    calls = _calls(tmp_path)
    assert {("addPage", "addToEnd"), ("addPage", "addToStart"), ("later", "flush")} <= calls
    # a parameter that shares a function's name is not a reference to that function, and a top-level
    # export is not a call
    assert ("local", "query") not in calls
    assert not any(target == "addPage" for _, target in calls)
