"""Rendering pieces the pages share: a table with its CSV download (blank cells, not
"None"), the run picker, the database URL of the session, the demo banner, the
categories' readable labels and their one palette, the dendrogram levels of either
clustering method.

The database URL is read once per script run from the settings (``WEBOMETRICS_DB_URL``
set by ``webometrics dashboard``) and passed to every cached query as a parameter.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Literal

import altair as alt
import pandas as pd
import streamlit as st

from core.choices import ENVIRONMENT_SOURCES
from core.exceptions import WebometricsError
from dashboard import cache, writes
from dashboard.readers import common


def database_url() -> str:
    """The database URL of this session; stops the page with the reason when the
    database cannot be opened (unreachable, missing file, schema not at head)."""
    url = cache.settings().database.url
    try:
        cache.read_engine(url)
    except WebometricsError as exc:
        st.error(str(exc))
        st.stop()
    return url


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "table"


def csv_bytes(df: pd.DataFrame) -> bytes:
    """The frame as UTF-8 CSV (lists and dicts written as JSON-like text)."""
    return df.to_csv(index=False).encode("utf-8")


def table(
    df: pd.DataFrame,
    name: str,
    *,
    key: str,
    column_config: dict[str, Any] | None = None,
    height: int | Literal["auto", "stretch", "content"] = "auto",
) -> None:
    """Show ``df`` (missing texts as blank cells) and a button that downloads it as
    ``<name>.csv``."""
    st.dataframe(
        flags_as_text(blank_missing(df)),
        hide_index=True,
        column_config=column_config,
        height=height,
    )
    download(df, name, key=key)


def blank_missing(df: pd.DataFrame) -> pd.DataFrame:
    """``df`` with the missing values of its text columns as empty strings, so a cell
    reads blank instead of "None" (numeric columns keep their type)."""
    text = [c for c in df.columns if df[c].dtype == object]
    if not text or df.empty:
        return df
    return df.assign(**{c: df[c].where(df[c].notna(), "") for c in text})


def flags_as_text(df: pd.DataFrame) -> pd.DataFrame:
    """``df`` with its true/false columns as ``yes`` and ``no``: a read-only table shows
    them as words, not as checkboxes that look editable but are not (the CSV download
    keeps ``True``/``False``)."""
    flags = [c for c in df.columns if df[c].dtype == bool]
    if not flags:
        return df
    return df.assign(**{c: df[c].map({True: "yes", False: "no"}) for c in flags})


def named_columns(
    spec: Mapping[str, tuple[str, str | None]], *, links: Iterable[str] = ("url",)
) -> dict[str, Any]:
    """Column configuration from ``{column: (shown name, help)}``: each column under a
    readable name with its help text (shown on the header's hover), the ``links`` columns
    as links opening the page."""
    linked = set(links)
    return {
        c: (
            st.column_config.LinkColumn(name, help=help_text, display_text=None)
            if c in linked
            else st.column_config.Column(name, help=help_text)
        )
        for c, (name, help_text) in spec.items()
    }


def download(df: pd.DataFrame, name: str, *, key: str) -> None:
    """A button that downloads ``df`` as ``<name>.csv``."""
    st.download_button(
        f"Download {name} (CSV)",
        functools.partial(csv_bytes, df),  # written when clicked, not on every render
        file_name=f"{_slug(name)}.csv",
        mime="text/csv",
        key=f"{key}-csv",
        on_click="ignore",
    )


def run_label(row: pd.Series) -> str:
    start = row["started_at"]
    when = start.strftime("%Y-%m-%d %H:%M") if pd.notna(start) else "?"
    collection = row.get("collection") or "live"
    kind = row["kind"] if collection == "live" else f"{row['kind']} · {collection}"
    return f"run {row['id']} · {kind} · {when} · {row['status']}"


#: the collection filter's choice of every collection
EVERY_COLLECTION = "every collection"


def pick_collection_run(
    url: str, *, key: str, label: str = "Crawl run", default: str | None = None
) -> int | None:
    """A select box of the collections with data (live, each archive and period;
    docs/archives.md), then :func:`pick_run` of that collection's runs with data.
    ``default``: the collection chosen first (every collection when ``None`` or absent)."""
    found = common.collections(url)
    options = [EVERY_COLLECTION, *found["collection"]] if not found.empty else []
    collection = None
    if len(options) > 2:  # more than one collection: the filter is worth a widget
        chosen = st.selectbox(
            "Collection",
            options,
            index=options.index(default) if default in options else 0,
            key=f"{key}-collection",
            help="live: the web as crawled; <archive> <from>..<to>: a web archive's "
            "captures of that period (`webometrics crawl --archive`)",
        )
        collection = None if chosen == EVERY_COLLECTION else chosen
    return pick_run(url, key=key, label=label, with_data=True, collection=collection)


def pick_run(
    url: str,
    *,
    key: str,
    label: str = "Crawl run",
    with_data: bool = False,
    collection: str | None = None,
) -> int | None:
    """A select box of the crawl runs, newest first (finished ones before the others);
    ``with_data`` keeps the runs that have environment data (links or verified
    citations), ``collection`` the runs of one collection. ``None``, with a note on what
    to run, when there is none."""
    runs = common.list_crawl_runs(url)
    if with_data:
        runs = runs[runs["id"].isin(common.run_ids(url))]
    if collection is not None:
        runs = runs[runs["collection"] == collection]
    if runs.empty:
        st.info("No crawl run with data stored yet: run `webometrics crawl` (or `make demo`).")
        return None
    ordered = pd.concat([runs[runs["status"] == "finished"], runs[runs["status"] != "finished"]])
    labels = {int(r["id"]): run_label(r) for _, r in ordered.iterrows()}
    return st.selectbox(
        label, list(labels), format_func=labels.__getitem__, key=key, help="crawl_run.id"
    )


def category_options(url: str, present: Iterable[str] = ()) -> list[str]:
    """Every category of the taxonomy (file order), then ``uncategorised`` (when present)
    and any other category found in the data: fixed options, so a filter keeps its choice
    when the run or the university changes (the taxonomy as the analyse stage stored it)."""
    keys = list(common.category_labels(url))
    extra = sorted(set(present) - set(keys) - {"uncategorised"})
    # uncategorised (analyse not run on these domains yet) only where the data have it
    return [*keys, *(["uncategorised"] if "uncategorised" in present else []), *extra]


def category_filter(
    url: str,
    key: str,
    present: Iterable[str] = (),
    *,
    label: str = "Category",
    exclude: Iterable[str] = (),
) -> list[str]:
    """A multiselect of the categories (all chosen by default), by their readable labels;
    ``exclude``: categories not offered (e.g. ``unknown`` where a toggle shows it)."""
    left_out = set(exclude)
    options = [c for c in category_options(url, present) if c not in left_out]
    return st.multiselect(label, options, default=options, key=key, format_func=category_namer(url))


def source_filter(key: str, container: Any = st) -> tuple[str, ...] | None:
    """A multiselect of the environment's sources (crawl, backlink export, Common Crawl
    web graph), all chosen by default; ``None`` when every source is chosen (no filter)."""
    chosen = container.multiselect(
        "Source",
        list(ENVIRONMENT_SOURCES),
        default=list(ENVIRONMENT_SOURCES),
        key=key,
        help="crawl: the universities' own pages and citations a crawl verified; backlinks: "
        "citations of a Majestic/Ahrefs export; commoncrawl: a Common Crawl web graph's "
        "citing domains",
    )
    return None if set(chosen) == set(ENVIRONMENT_SOURCES) else tuple(chosen)


def link_config(*columns: str) -> dict[str, Any]:
    """Column configuration that renders URL columns as links opening the page."""
    return {c: st.column_config.LinkColumn(c, display_text=None) for c in columns}


def demo_banner(url: str) -> None:
    """One line above every page when the data come from the local test web (a crawl run
    made with ``--testbed``, as ``make demo`` does)."""
    if common.testbed_runs(url):
        st.info(
            "Demo data: the local test web (`webometrics testbed`), not a measurement. "
            "Four US universities (WebKB, 1997) only, so one country; the external sites' "
            "texts are drawn from news and web corpora (BBC, Lenta.ru, tgcontest, …).",
            icon=":material/science:",
        )


STALE_ICON = ":material/update:"  # the stale banner's icon: tests tell it from a page's warnings


def stale_banner(url: str, version: str) -> None:
    """One line above every page while the figures (the aggregates of
    :mod:`store.aggregates`) are older than the data: what changed since, and a button
    that computes them again."""
    stale = cache.staleness(url, version)
    if stale is None:
        return
    left, right = st.columns([6, 1], vertical_alignment="center")
    left.warning(stale.message(), icon=STALE_ICON)
    if right.button(
        "Refresh figures",
        key="refresh-figures",
        help="Compute the figures again from the stored data (as every stage does at its "
        "end, and `webometrics refresh`); about a minute on a million pages.",
    ):
        try:
            with st.spinner("Computing the figures…"):
                writes.refresh_figures(url)
        except WebometricsError as exc:  # e.g. a read-only database: say so, keep the page
            right.error(f"{exc}")
            return
        st.rerun(scope="app")


def no_data(what: str) -> None:
    """The message of a section the chosen filters leave empty."""
    st.info(f"No {what} for these filters.")


# --- categories: readable labels, one colour each ------------------------------------------

UNCATEGORISED_LABEL = "Uncategorised (run `webometrics analyse`)"
UNKNOWN_GREY = "#b0b0b0"
FALLBACK = ["#17becf", "#bcbd22", "#7f7f7f", "#aec7e8", "#ffbb78"]  # categories not in the taxonomy


def category_colors(url: str) -> dict[str, str]:
    """``{category: "#rrggbb"}``: the one palette of every chart, as the analyse stage
    stored it from the taxonomy (``unknown`` grey), plus ``uncategorised``."""
    colors = dict(common.category_colors(url))
    colors.setdefault("unknown", UNKNOWN_GREY)
    colors.setdefault("uncategorised", "#dddddd")
    return colors


def category_namer(url: str) -> Callable[[Any], str]:
    """A function from a category key to the taxonomy's English label (blank for none)."""
    labels = common.category_labels(url)

    def name(key: Any) -> str:
        if key is None or (not isinstance(key, str) and pd.isna(key)):
            return ""
        if key == "uncategorised":
            return labels.get(key, UNCATEGORISED_LABEL)
        return labels.get(key, key)

    return name


def readable_categories(df: pd.DataFrame, url: str, *columns: str) -> pd.DataFrame:
    """``df`` with the category keys of ``columns`` (default ``category``) as labels."""
    name = category_namer(url)
    return df.assign(**{c: df[c].map(name) for c in columns or ("category",) if c in df})


def category_color(
    url: str, present: Iterable[str], *, field: str = "category label", **legend: Any
) -> alt.Color:
    """An Altair colour channel on the readable label column ``field``: each category in
    its fixed colour, the legend in the taxonomy's order (only ``present`` ones)."""
    colors = category_colors(url)
    name = category_namer(url)
    keys = [k for k in category_options(url, present) if k in set(present)]
    extra = iter(FALLBACK * 4)
    rng = [colors.get(k) or next(extra) for k in keys]
    return alt.Color(
        f"{field}:N",
        title="category",
        scale=alt.Scale(domain=[name(k) for k in keys], range=rng),
        sort=[name(k) for k in keys],
        legend=alt.Legend(**{"labelLimit": 320, **legend}),
    )


# --- dendrogram levels: Leiden resolutions (activity) or rows per band r (the paper) -------

LEVELS_CAPTIONS = {
    "leiden": (
        "The activity clustering's levels: Leiden partitions of the same k-NN graph, one "
        "per resolution γ (Traag et al. 2019); a higher resolution gives more, smaller "
        "clusters. role: the clusters above are the level of role 'clusters' (resolution 1, "
        "the partition of largest modularity, measured the best grain on labelled corpora, "
        "then a pass, one by default ([activity] reassign), moving each site to a "
        "neighbouring cluster whose centroid it is closer to); a 'finer' level splits each "
        "of them into sub-themes, a 'coarser' one merges them into broader groups (pick "
        "either below). Older clusterings without a role: the "
        "clusters are the last level's. quality = the partition's modularity at its "
        "resolution."
    ),
    "paper": (
        "How clusters merge as r (rows per band) falls: each level admits less similar "
        "pairs; s-curve = (1/b)^(1/r), the similarity near which a level's candidate "
        "probability rises."
    ),
    "other": "The levels this clustering stored.",
}
# the x axis of the levels chart: column, title, sort
LEVELS_AXES = {
    "leiden": ("resolution", "Leiden resolution γ (falling: coarser)", "descending"),
    "paper": ("r", "rows per band r (falling)", "descending"),
}


def clustering_levels(stored: Iterable[Mapping[str, Any]]) -> pd.DataFrame:
    """A clustering's stored levels, ``level`` first (numbered in order when the levels
    do not carry it)."""
    levels = pd.DataFrame(list(stored))
    if levels.empty:
        return levels
    if "level" not in levels.columns:
        levels.insert(0, "level", range(len(levels)))
    return levels[["level", *[c for c in levels.columns if c != "level"]]]


def levels_kind(levels: pd.DataFrame) -> str:
    """``leiden`` (levels by resolution), ``paper`` (by rows per band r) or ``other``."""
    if "resolution" in levels.columns:
        return "leiden"
    if "r" in levels.columns:
        return "paper"
    return "other"


LEVEL_ROLES = {
    "finer": "sub-themes of the clusters",
    "clusters": "the clusters",
    "coarser": "broader groups of the clusters",
}
"""How the level picker names a Leiden level's role (:class:`cluster.graph_leiden.LeidenLevel`)."""


def level_name(level: int, n_clusters: int, row: pd.Series | None, kind: str) -> str:
    """``final (5 clusters)``, ``level 0 · resolution 2 · sub-themes of the clusters (71
    clusters)``, ``level 2 · r=8 (4 clusters)``."""
    if level < 0:
        return f"final ({n_clusters} clusters)"
    what = ""
    if row is not None and kind == "leiden" and pd.notna(row.get("resolution")):
        what = f" · resolution {float(row['resolution']):g}"
        role = row.get("role")
        if isinstance(role, str) and role in LEVEL_ROLES:
            what += f" · {LEVEL_ROLES[role]}"
    elif row is not None and kind == "paper" and pd.notna(row.get("r")):
        what = f" · r={int(row['r'])}"
    return f"level {level}{what} ({n_clusters} clusters)"


# --- numbers as text: percentages and blank cells, never "None" ----------------------------


def percent_text(value: Any, digits: int = 1) -> str:
    """A fraction as a percentage (``0.4567`` -> ``"45.7 %"``), blank when missing."""
    if value is None or (isinstance(value, float) and pd.isna(value)):
        return ""
    return f"{100 * float(value):.{digits}f} %"


def number_text(value: Any, spec: str = ".3f") -> str:
    """A number formatted with ``spec``, blank when missing (a table never reads "None")."""
    if value is None or (isinstance(value, float) and pd.isna(value)) or value is pd.NA:
        return ""
    return format(value, spec)


def points_text(value: Any) -> str:
    """A difference of two fractions in percentage points (``-0.146`` -> ``"-14.6"``,
    never ``"-0.0"``), blank when missing."""
    if value is None or (isinstance(value, float) and pd.isna(value)):
        return ""
    return f"{round(100 * float(value), 1) + 0.0:+.1f}"
