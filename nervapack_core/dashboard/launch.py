"""``python -m nervapack_core.dashboard.launch run app.py [flags]``: ``streamlit run``,
told up front that ``app.py`` declares its pages with ``st.navigation``.

Streamlit sees the ``pages/`` folder next to ``app.py`` and, until ``app.py`` has run
once in the process, treats it as an old-style multipage app: the first visitor who
opens a deep link (``/explorer?node=…``) gets that page file run on its own, with
Streamlit's file-name navigation in the sidebar. Clearing the flag before the server
starts makes every first request go through ``app.py``'s ``st.navigation``.
"""

from __future__ import annotations

import sys


def main() -> int:
    try:
        from streamlit.runtime.pages_manager import PagesManager

        PagesManager.uses_pages_directory = False
    except (ImportError, AttributeError):  # a Streamlit without the flag needs nothing
        pass
    from streamlit.web.cli import main as streamlit_main

    return streamlit_main(prog_name="streamlit")


if __name__ == "__main__":
    sys.exit(main())
