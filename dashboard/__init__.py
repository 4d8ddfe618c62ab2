"""The analysts' dashboard (Streamlit): ``dashboard/app.py`` and its page scripts in
``views/``."""

PAGE_TITLES: tuple[str, ...] = (
    "Overview",
    "University",
    "Countries",
    "Rank vs groups",
    "Network",
    "Review",
    "Duplicates",
    "Runs",
    "Sites",
)
"""The titles of the dashboard's pages in navigation order, without importing Streamlit
(for ``webometrics dashboard --help``); ``dashboard/app.py``'s ``st.Page`` titles, which a
test keeps equal."""
