"""Cross-file edges: an import statement to the file it brings in (:mod:`.imports`), Python
calls and bases as Python would find them (:mod:`.pyresolve`), every language's calls, bases
and imports written as edges (:mod:`.edges`), and deterministic doc -> code ``EXPLAINS``
links (:mod:`.binder`)."""
