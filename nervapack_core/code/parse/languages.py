"""Which files are which language, and which of them we parse with tree-sitter.

A language is parsed when ``tree-sitter-language-pack`` ships its grammar and the
package has a query file ``queries/<name>.scm`` for it. Other recognised text files
are counted in the language statistics but not parsed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tree_sitter_language_pack import SupportedLanguage

__all__ = ["Language", "LANGUAGES", "language_for_path", "PARSED", "DOC_LANGUAGES"]


@dataclass(frozen=True)
class Language:
    name: str  # our name, shown to users and stored in the graph
    grammar: SupportedLanguage | None  # tree-sitter-language-pack name, None when not parsed
    extensions: tuple[str, ...]


LANGUAGES: tuple[Language, ...] = (
    Language("python", "python", (".py", ".pyi")),
    Language("javascript", "javascript", (".js", ".mjs", ".cjs")),
    Language("jsx", "javascript", (".jsx",)),
    Language("typescript", "typescript", (".ts", ".mts", ".cts")),
    Language("tsx", "tsx", (".tsx",)),
    Language("go", "go", (".go",)),
    Language("rust", "rust", (".rs",)),
    Language("java", "java", (".java",)),
    Language("c", "c", (".c", ".h")),
    Language("cpp", "cpp", (".cc", ".cpp", ".cxx", ".hpp", ".hh", ".hxx")),
    Language("csharp", "csharp", (".cs",)),
    Language("ruby", "ruby", (".rb",)),
    Language("php", "php", (".php",)),
    Language("markdown", None, (".md", ".markdown")),
    Language("rst", None, (".rst",)),
    # counted, not parsed
    Language("text", None, (".txt",)),
    Language("json", None, (".json",)),
    Language("yaml", None, (".yml", ".yaml")),
    Language("toml", None, (".toml",)),
    Language("html", None, (".html", ".htm")),
    Language("css", None, (".css", ".scss")),
    Language("shell", None, (".sh", ".bash")),
    Language("sql", None, (".sql",)),
    Language("kotlin", None, (".kt", ".kts")),
    Language("swift", None, (".swift",)),
    Language("scala", None, (".scala",)),
)

_BY_EXTENSION = {ext: lang for lang in LANGUAGES for ext in lang.extensions}
_BY_FILENAME = {"Makefile": "make", "Dockerfile": "dockerfile", "Gemfile": "ruby", "Rakefile": "ruby"}

PARSED = frozenset(lang.name for lang in LANGUAGES if lang.grammar)
DOC_LANGUAGES = frozenset({"markdown", "rst"})
GRAMMAR: dict[str, SupportedLanguage] = {lang.name: lang.grammar for lang in LANGUAGES if lang.grammar}
# JSX and TSX are dialects parsed by grammars whose queries they share
QUERY_FILE = {name: {"jsx": "javascript", "tsx": "typescript"}.get(name, name) for name in GRAMMAR}


def language_for_path(path: str) -> str | None:
    """Our language name for ``path``, or ``None`` for files we do not recognise."""
    name = path.rsplit("/", 1)[-1]  # string work, not PurePosixPath: called for every file listed
    if name in _BY_FILENAME:
        return _BY_FILENAME[name]
    dot = name.rfind(".")
    suffix = name[dot:] if 0 < dot < len(name) - 1 else ""  # PurePosixPath.suffix's rule
    lang = _BY_EXTENSION.get(suffix.lower())
    return lang.name if lang else None
