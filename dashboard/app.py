"""The analysts' dashboard: ``streamlit run dashboard/app.py`` (``webometrics dashboard``).

Eight pages (:func:`streamlit.navigation`; their titles are :data:`dashboard.PAGE_TITLES`
too, for the command line's help), each a script in ``views/`` that only renders: Overview
(the paper's Tables 2 and 3), University (clusters, their domains and pages, dendrogram
levels, category override), Countries (category shares, Figures 2 and 3), Rank vs groups
(the groups against the Webometrics rank), Network (university-domain graph, co-link
overlaps, GEXF), Review (the review queue of uncertain categories, coding sheets, coders'
agreement and adjudication), Duplicates, Runs and Sites (web entities: split and merge
rules).
The database URL comes from ``WEBOMETRICS_DB_URL`` (set by ``webometrics dashboard``).
"""

from __future__ import annotations

import streamlit as st

from dashboard import cache, widgets
from store import redact

st.set_page_config(page_title="webometrics", page_icon=":material/hub:", layout="wide")

# the page scripts live in views/, not pages/: Streamlit would take a pages/ folder beside
# this script for its own automatic navigation (one entry per file), which a first visit
# by a deep link such as /countries would get instead of these pages and this sidebar.
# Each st.Page is written out with its script as a literal: tools find the pages by
# reading this file (tests/dashboard/test_walk.py, ../shared/tools/walk_dashboard.py)
PAGES = [
    st.Page("views/overview.py", title="Overview", icon=":material/table:", default=True),
    st.Page("views/university.py", title="University", icon=":material/school:"),
    st.Page("views/countries.py", title="Countries", icon=":material/public:"),
    st.Page("views/ranks.py", title="Rank vs groups", icon=":material/leaderboard:"),
    st.Page("views/network.py", title="Network", icon=":material/hub:"),
    st.Page("views/review.py", title="Review", icon=":material/rule:"),
    st.Page("views/duplicates.py", title="Duplicates", icon=":material/content_copy:"),
    st.Page("views/runs.py", title="Runs", icon=":material/history:"),
    st.Page("views/sites.py", title="Sites", icon=":material/call_split:"),
]

page = st.navigation(PAGES)
url = widgets.database_url()
with st.sidebar:
    if st.button("Reload data", help="forget cached query results", key="reload"):
        cache.reload(url)
    clock = cache.follow_changes(url)
    read = f" · data read {clock.read_at:%Y-%m-%d %H:%M:%S} UTC" if clock.read_at else ""
    st.caption(
        f"database: `{redact(url)}`{read}",
        help=f"Data read: when the numbers on the page were read. The database is checked "
        f"for changes every {cache.CHECK_SECONDS} s: a change from the command line "
        "(`webometrics category set`, `analyse`, a crawl) shows at your next click after "
        "that, and the time here moves. Reload data reads everything again now.",
    )


@st.fragment(run_every=cache.CHECK_SECONDS)
def watch_changes() -> None:
    """Say so in the sidebar when the data changed since the page read them (checked
    every :data:`dashboard.cache.CHECK_SECONDS`): the next click shows the new data, or
    the button now. (The page is not run again by itself: while a crawl writes, the data
    change every few seconds.)"""
    if cache.data_version(url) != cache.data_clock(url).version:
        st.info("The data changed since they were read: your next click shows them.")
        if st.button("Show the new data", key="show-new-data"):
            st.rerun(scope="app")


with st.sidebar:
    watch_changes()
widgets.demo_banner(url)
widgets.stale_banner(url, clock.version or "")
cache.warm_imports()
page.run()
