"""The ``nervapack serve`` dashboard: its loaders, its UI and the demo workspace (the command
itself is ``nervapack_core.cli.serve``; the pages are ``app.py`` and ``pages/*.py`` at the top).

- ``loaders/``: what each page shows, one module per page, typed results, through library calls
  (no SQL here, no Streamlit); ``data`` gathers them under one name;
- ``sources``: the workspace files a dashboard reads and their change markers; ``markup``: the
  escapes of user text for Markdown and Plotly;
- ``ui``: the one part that imports Streamlit (with ``launch``, which starts its server): the
  pages' shared widgets, and ``ui.cache``, the loaders cached on the change markers.
"""

ROOT_ENV = "NERVAPACK_DASHBOARD_ROOT"
MEMORY_ENV = "NERVAPACK_DASHBOARD_MEMORY_DB"
DEMO_ENV = "NERVAPACK_DASHBOARD_DEMO"

__all__ = ["ROOT_ENV", "MEMORY_ENV", "DEMO_ENV"]
