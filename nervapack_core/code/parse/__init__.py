"""One file into entities and references: which language a file is (:mod:`.languages`), the
tree-sitter parser with one ``queries/<language>.scm`` per language (:mod:`.parser`), what a
Python call's receiver is (:mod:`.pyscope`), Markdown/reST sections (:mod:`.docs`), and the
words of each definition for lexical search (:mod:`.terms`). Nothing here reads a database."""
