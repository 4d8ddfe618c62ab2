"""The analysts' dashboard: ``streamlit run dashboard/app.py`` (``webometrics dashboard``).

Six pages (:func:`streamlit.navigation`), each a script in ``pages/`` that only renders:
Overview (the paper's Tables 2 and 3), University (clusters, their domains and pages,
dendrogram levels, category override), Countries (category shares, Figures 2 and 3),
Network (university-domain graph, co-link overlaps, GEXF), Duplicates and Runs.
The database URL comes from ``WEBOMETRICS_DB_URL`` (set by ``webometrics dashboard``).
"""

from __future__ import annotations

import streamlit as st

from dashboard import data, widgets
from store import redact

st.set_page_config(page_title="webometrics", page_icon=":material/hub:", layout="wide")

PAGES = [
    st.Page("pages/overview.py", title="Overview", icon=":material/table:", default=True),
    st.Page("pages/university.py", title="University", icon=":material/school:"),
    st.Page("pages/countries.py", title="Countries", icon=":material/public:"),
    st.Page("pages/network.py", title="Network", icon=":material/hub:"),
    st.Page("pages/duplicates.py", title="Duplicates", icon=":material/content_copy:"),
    st.Page("pages/runs.py", title="Runs", icon=":material/history:"),
]

page = st.navigation(PAGES)
url = widgets.database_url()
with st.sidebar:
    st.caption(f"database: `{redact(url)}`")
    if st.button("Reload data", help="forget cached query results", key="reload"):
        data.reload()
page.run()
