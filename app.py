"""NervaPack dashboard: ``nervapack serve`` runs this file with Streamlit.

The pages live in ``pages/`` (presentation only); everything they show is read by
``nervapack_core.dashboard``.
"""

from pathlib import Path

import streamlit as st

from nervapack_core import __version__
from nervapack_core.dashboard import housekeeping, ui
from nervapack_core.dashboard.sources import resolve_sources
from nervapack_core.dashboard.ui import favicon_png, page_end, preload_charts
from nervapack_core.errors import NervapackError

# The favicon is drawn in code: with a ":material/…:" icon here, or none (then each page's
# icon is used), the browser would fetch the favicon from fonts.gstatic.com.
st.set_page_config(page_title="NervaPack", page_icon=favicon_png(), layout="wide")

_PAGES = Path(__file__).resolve().parent / "pages"


def _page(file: str, title: str, icon: str, url_path: str, **kw) -> st.Page:
    return st.Page(_PAGES / file, title=title, icon=icon, url_path=url_path, **kw)


navigation = st.navigation({
    "Code graph": [
        _page("overview.py", "Overview", ":material/dashboard:", "overview", default=True),
        _page("analytics.py", "Analytics", ":material/analytics:", "analytics"),
        _page("query_history.py", "Query History", ":material/query_stats:", "queries"),
        _page("graph_explorer.py", "Graph Explorer", ":material/travel_explore:", "explorer"),
        _page("communities.py", "Communities", ":material/bubble_chart:", "communities"),
    ],
    "Memory": [
        _page("decisions.py", "Decisions", ":material/gavel:", "decisions"),
        _page("memory_timeline.py", "Memory Timeline", ":material/timeline:", "timeline"),
        _page("namespaces.py", "Namespaces", ":material/view_column:", "namespaces"),
    ],
})

preload_charts()  # before the page: plotly.js loads while the server computes it
_src = resolve_sources()
with st.sidebar:
    if _src.demo:
        st.caption(":material/science: Demo workspace")
    st.caption("Workspace")
    st.text(str(_src.root) if _src.root else "none found (run `nervapack ingest .`)")
    st.caption(f"NervaPack Core {__version__}")

housekeeping.run_started()
try:
    navigation.run()
except NervapackError as exc:  # a damaged or locked store a page did not catch itself: said, with its file and fix
    ui.error(exc)
finally:  # (st.stop() in a page ends the run through here too)
    housekeeping.run_finished()  # first: a rerun requested meanwhile makes the next st call raise
    page_end()
