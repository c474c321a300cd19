"""The ``nervapack serve`` dashboard: data loaders and the demo workspace (the command
itself is ``nervapack_core.cli.serve``).

``data`` reads the databases into plain Python/pandas values and never imports
Streamlit; ``cache`` and ``ui`` wrap it for the pages (``pages/*.py``) and are the only
modules here that import Streamlit.
"""

ROOT_ENV = "NERVAPACK_DASHBOARD_ROOT"
MEMORY_ENV = "NERVAPACK_DASHBOARD_MEMORY_DB"
DEMO_ENV = "NERVAPACK_DASHBOARD_DEMO"

__all__ = ["ROOT_ENV", "MEMORY_ENV", "DEMO_ENV"]
