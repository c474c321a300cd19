"""What each dashboard page shows, one module per page (``pages/<name>.py`` presents what
``loaders/<name>.py`` loads): plain functions over the workspace's files that return typed
results (``TypedDict``\\ s: the shape a page reads is declared here, not guessed there).

Every read goes through the library (:class:`~nervapack_core.code.analysis.reader.GraphReader`
for the code graph, :mod:`nervapack_core.memory.views` and ``MemoryStore`` for the memory,
:mod:`nervapack_core.query_log` for the query history): no SQL here, no Streamlit
(:mod:`nervapack_core.dashboard.ui.cache` caches these loaders for the pages). Counts are the
library's, over all rows; lists are paged there.
"""
