"""The dashboard's data access: engines in ``st.cache_resource``, query results in
``st.cache_data``.

Every cached function takes the database URL as its first parameter (never a global),
reads through a read-only engine and the queries of :mod:`store` (parameterised SQL
only), and returns plain values or pandas frames, which Streamlit can copy out of its
cache. The only write, the analyst's category override, goes through
:mod:`store.overrides` on a separate read-write engine and clears the cached results.

Cached results live for :data:`TTL_SECONDS` at most, until the sidebar's *Reload data*,
or until the data change: every script run calls :func:`follow_changes`, which reads the
database's data version (:func:`store.freshness.data_version`, at most once per
:data:`CHECK_SECONDS`) and forgets every cached result when it differs from the version
the cache was filled at. A change from the command line (``webometrics category set``,
``analyse``) therefore shows on the next interaction after at most
:data:`CHECK_SECONDS`; the sidebar says when the data were last read.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import importlib
import threading
from collections.abc import Iterable, Sequence
from typing import Any

import pandas as pd
import streamlit as st
from sqlalchemy import Engine

from core.settings import Settings, load_settings
from store import aggregates, analytics, freshness, networks, open_database, queries

TTL_SECONDS = 600


def settings() -> Settings:
    """The settings, from ``WEBOMETRICS_CONFIG`` / ``WEBOMETRICS_DB_URL`` set by
    ``webometrics dashboard`` (or the defaults and ``./webometrics.toml``)."""
    return load_settings()


@st.cache_resource(show_spinner=False)
def read_engine(url: str) -> Engine:
    """A read-only engine for ``url`` whose schema is at head (made once per URL)."""
    return open_database(url, read_only=True)


@st.cache_resource(show_spinner=False)
def write_engine(url: str) -> Engine:
    """A read-write engine for ``url``: only the category override uses it."""
    return open_database(url)


WARM_IMPORTS = ("scipy.stats", "networkx", "pyvis.network", "altair")
WARM_THREAD = "webometrics-warm-imports"


@st.cache_resource(show_spinner=False)
def warm_imports() -> threading.Thread:
    """Import the libraries some pages need (:data:`WARM_IMPORTS`: scipy.stats alone
    takes 2 s) in a background thread, once per server, while the analyst reads the
    first page; a page that needs one before it is done waits on Python's import lock as
    it would have without this."""

    def run() -> None:
        for name in WARM_IMPORTS:
            importlib.import_module(name)

    thread = threading.Thread(target=run, name=WARM_THREAD, daemon=True)
    thread.start()
    return thread


def frame(rows: Iterable[Any], columns: Sequence[str] | None = None) -> pd.DataFrame:
    """A DataFrame of dataclass rows (or tuples with ``columns``)."""
    rows = list(rows)
    if rows and dataclasses.is_dataclass(rows[0]):
        return pd.DataFrame([dataclasses.asdict(r) for r in rows])
    if not rows and columns is None:
        return pd.DataFrame()
    return pd.DataFrame(rows, columns=list(columns) if columns is not None else None)


def _empty(cls: type) -> pd.DataFrame:
    return pd.DataFrame(columns=[f.name for f in dataclasses.fields(cls)])


def _frame_of(cls: type, rows: Sequence[Any]) -> pd.DataFrame:
    return frame(rows) if rows else _empty(cls)


def reload(url: str | None = None) -> None:
    """Forget every cached query result (not the engines); with ``url``, its data are
    read anew from now (:func:`follow_changes` restarts its clock)."""
    st.cache_data.clear()
    if url is not None:
        data_clock(url).version = None


CHECK_SECONDS = 5  # how often the data version is read: the longest a change waits


@dataclasses.dataclass
class DataClock:
    """The data version the cached results of one database were read at, and when they
    were last forgotten (``read_at``: every result shown was read since)."""

    version: str | None = None
    read_at: dt.datetime | None = None
    lock: threading.Lock = dataclasses.field(default_factory=threading.Lock)


@st.cache_resource(show_spinner=False)
def data_clock(url: str) -> DataClock:
    """The :class:`DataClock` of ``url``, one per server (shared by every session)."""
    return DataClock()


@st.cache_data(ttl=CHECK_SECONDS, show_spinner=False)
def data_version(url: str) -> str:
    """The database's data version (:func:`store.freshness.data_version`), read at most
    once per :data:`CHECK_SECONDS`."""
    return freshness.data_version(read_engine(url))


def follow_changes(url: str) -> DataClock:
    """Forget every cached result when the data version of ``url`` changed since they
    were read (a stage or an analyst wrote, from this dashboard or the command line);
    returns the clock, whose ``read_at`` the sidebar shows."""
    clock = data_clock(url)
    now = data_version(url)
    with clock.lock:
        if clock.version != now:
            if clock.version is not None:
                st.cache_data.clear()
            clock.version = now
            clock.read_at = dt.datetime.now(dt.UTC)
    return clock


@st.cache_data(ttl=TTL_SECONDS, show_spinner=False)
def staleness(url: str, version: str) -> freshness.Staleness | None:
    """What changed since the figures were computed (:func:`store.freshness.staleness`),
    ``None`` while they are fresh; read once per data ``version``."""
    return freshness.staleness(read_engine(url))


def refresh_figures(url: str) -> dict[str, Any]:
    """Compute the figures again (:func:`store.aggregates.refresh_if_stale`, what every
    stage ends with and ``webometrics refresh`` does) and read everything anew."""
    built = aggregates.refresh_if_stale(write_engine(url))
    reload(url)
    return built


# --- universities and runs -------------------------------------------------------------


@st.cache_data(ttl=TTL_SECONDS, show_spinner=False)
def universities(url: str) -> pd.DataFrame:
    """id, name, country, rank, domains (comma-separated), by rank."""
    df = _frame_of(queries.UniversityRow, queries.list_universities(read_engine(url)))
    df["domains"] = df["domains"].map(", ".join)
    return df.drop(columns=["home_urls"])


@st.cache_data(ttl=TTL_SECONDS, show_spinner=False)
def crawl_runs(url: str) -> pd.DataFrame:
    """Every crawl run, newest first."""
    return _frame_of(queries.CrawlRunRow, queries.list_crawl_runs(read_engine(url)))


@st.cache_data(ttl=TTL_SECONDS, show_spinner=False)
def testbed_runs(url: str) -> list[int]:
    """The crawl runs that crawled the local test web (``--testbed``: the demo's data)."""
    runs = crawl_runs(url)
    return [
        int(run_id)
        for run_id, stored in zip(runs["id"], runs["settings"], strict=True)
        if isinstance(stored, dict) and stored.get("testbed")
    ]


@st.cache_data(ttl=TTL_SECONDS, show_spinner=False)
def pipeline_runs(url: str) -> pd.DataFrame:
    """Every whole-pipeline run, newest first."""
    return _frame_of(queries.PipelineRunRow, queries.list_pipeline_runs(read_engine(url)))


@st.cache_data(ttl=TTL_SECONDS, show_spinner=False)
def dedup_runs(url: str) -> pd.DataFrame:
    """Every near-duplicate run, newest first."""
    return _frame_of(queries.DedupRunRow, queries.list_dedup_runs(read_engine(url)))


@st.cache_data(ttl=TTL_SECONDS, show_spinner=False)
def languages(url: str) -> list[str]:
    """Languages of the stored documents, most frequent first."""
    return queries.document_languages(read_engine(url))


# --- clusterings ------------------------------------------------------------------------


@st.cache_data(ttl=TTL_SECONDS, show_spinner=False)
def clusterings(
    url: str, university_id: int | None = None, direction: str | None = None
) -> pd.DataFrame:
    """Clusterings (of one university and direction when given), newest first."""
    rows = queries.list_clusterings(
        read_engine(url), university_id=university_id, direction=direction
    )
    return _frame_of(queries.ClusteringRow, rows)


@st.cache_data(ttl=TTL_SECONDS, show_spinner=False)
def university_clusterings(
    url: str, university_id: int, direction: str
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The clusterings of one university's environment in ``direction``, and the global
    ones (over every university), each newest first.

    Parameters
    ----------
    url : str
        The database URL.
    university_id : int
        ``university.id``.
    direction : {"outgoing", "citing"}
        The environment's direction; clusterings of both directions count for either.

    Returns
    -------
    own, global_ : pandas.DataFrame
        Rows of :class:`store.queries.ClusteringRow`: those whose scope is this
        university, and those whose scope is no one university. A clustering of another
        university is in neither.
    """
    found = clusterings(url, university_id, direction)
    found = found.sort_values(["created_at", "id"], ascending=False, ignore_index=True)
    scope = found["university_id"]
    return found[scope == university_id], found[scope.isna()]


@st.cache_data(ttl=TTL_SECONDS, show_spinner=False)
def clusters(
    url: str,
    clustering_id: int,
    level: int = -1,
    categories: tuple[str, ...] | None = None,
) -> pd.DataFrame:
    """The clusters of one level of a clustering, largest first."""
    rows = queries.list_clusters(
        read_engine(url), clustering_id, level=level, categories=categories
    )
    return _frame_of(queries.ClusterRow, rows)


@st.cache_data(ttl=TTL_SECONDS, show_spinner=False)
def cluster_levels(url: str, clustering_id: int) -> list[tuple[int, int]]:
    """``(level, n_clusters)`` of the stored cluster rows."""
    return queries.cluster_levels(read_engine(url), clustering_id)


MEMBERS_PER_CLUSTER = 200  # the largest members of each cluster listed on the page


@st.cache_data(ttl=TTL_SECONDS, show_spinner=False)
def cluster_members(url: str, cluster_ids: tuple[int, ...]) -> pd.DataFrame:
    """The documents of the given final clusters (the :data:`MEMBERS_PER_CLUSTER` largest
    of each) with their domain's category (override applied), whether it is overridden,
    and the assigned category."""
    engine = read_engine(url)
    members = _frame_of(
        analytics.ClusterMemberRow,
        analytics.cluster_members(engine, list(cluster_ids), per_cluster=MEMBERS_PER_CLUSTER),
    )
    domains = sorted(set(members["domain"]))
    cats = _frame_of(
        analytics.DomainCategoryRow, analytics.domain_categories(engine, domains=domains)
    )
    merged = members.merge(
        cats[["domain", "assigned_category", "overridden"]], on="domain", how="left"
    )
    merged["overridden"] = merged["overridden"].fillna(False).astype(bool)
    return merged


@st.cache_data(ttl=TTL_SECONDS, show_spinner=False)
def domain_pages(
    url: str,
    domains: tuple[str, ...],
    per_domain: int = 20,
    roles: tuple[str, ...] = ("external", "citing"),
) -> pd.DataFrame:
    """Up to ``per_domain`` pages of each domain with one of ``roles``."""
    rows = queries.domain_pages(read_engine(url), domains, per_domain=per_domain, roles=roles)
    return _frame_of(queries.DomainPageRow, rows)


@st.cache_data(ttl=TTL_SECONDS, show_spinner=False)
def reached_pages(
    url: str,
    domains: tuple[str, ...],
    per_domain: int = 20,
    roles: tuple[str, ...] = ("external", "citing"),
) -> pd.DataFrame:
    """Like :func:`domain_pages`, the pages a visitor reaches: the hops of a redirect
    (HTTP 3xx, no text) are left out when the domain has other pages (the page stores no
    redirect target, so the page reached is the domain's own stored page)."""
    rows = queries.domain_pages(read_engine(url), domains, per_domain=per_domain * 4, roles=roles)
    pages = _frame_of(queries.DomainPageRow, rows)
    hop = pages["http_status"].between(300, 399)
    has_other = pages.assign(other=~hop).groupby("domain")["other"].transform("any")
    kept = pages[~hop | ~has_other]
    return kept.groupby("domain", sort=False).head(per_domain).reset_index(drop=True)


@st.cache_data(ttl=TTL_SECONDS, show_spinner=False)
def member_pages(
    url: str,
    domains: tuple[str, ...],
    per_domain: int,
    direction: str,
    university_id: int,
    run_id: int | None = None,
) -> pd.DataFrame:
    """The pages that explain each domain's membership of a cluster of ``direction``, with
    ``cites``: whether the page links to the university.

    Outgoing: the domain's pages of role ``external`` (those the universities link to).
    Citing: first its pages that cite the university (verified citations of ``run_id``,
    whatever role the page was fetched in: a backlink export's citing page is often an
    ``external`` page too), then the pages its document is built from (the extract stage
    builds a domain's document from its fetched pages of every role but ``university``).
    """
    if direction == "outgoing":
        return reached_pages(url, domains, per_domain, ("external",)).assign(cites=False)
    rows = queries.citing_pages(
        read_engine(url), university_id, domains, run_id=run_id, per_domain=per_domain
    )
    citing = _frame_of(queries.DomainPageRow, rows)
    built = reached_pages(url, domains, per_domain, ("external", "citing"))
    both = pd.concat(
        [citing.assign(cites=True), built.assign(cites=built["url"].isin(set(citing["url"])))],
        ignore_index=True,
    )
    both = both.drop_duplicates("url").sort_values(
        ["domain", "cites"], ascending=[True, False], kind="stable"
    )
    return both.groupby("domain", sort=False).head(per_domain).reset_index(drop=True)


@st.cache_data(ttl=TTL_SECONDS, show_spinner=False)
def cluster_support(url: str, clustering_id: int) -> pd.DataFrame:
    """``cluster_id``, ``category_support`` and ``category_voters`` of a clustering's final
    clusters (``v_cluster``)."""
    rows = analytics.clusters(read_engine(url), clustering_id=clustering_id)
    df = _frame_of(analytics.ClusterViewRow, rows)
    return df[["cluster_id", "category_support", "category_voters"]]


@st.cache_data(ttl=TTL_SECONDS, show_spinner=False)
def document_pages(url: str, document_ids: tuple[int, ...]) -> pd.DataFrame:
    """The pages of page-unit documents."""
    return _frame_of(queries.DomainPageRow, queries.document_pages(read_engine(url), document_ids))


# --- near duplicates --------------------------------------------------------------------


@st.cache_data(ttl=TTL_SECONDS, show_spinner=False)
def duplicate_groups(
    url: str, dedup_run_id: int, language: str | None = None, limit: int | None = None
) -> pd.DataFrame:
    """The groups of a near-duplicate run, largest first."""
    rows = queries.duplicate_groups(read_engine(url), dedup_run_id, language=language, limit=limit)
    return _frame_of(queries.DuplicateGroupRow, rows)


@st.cache_data(ttl=TTL_SECONDS, show_spinner=False)
def duplicate_members(url: str, group_ids: tuple[int, ...]) -> pd.DataFrame:
    """The members of the given near-duplicate groups, canonical first."""
    rows = queries.duplicate_members(read_engine(url), group_ids)
    return _frame_of(queries.DuplicateMemberRow, rows)


# --- webometric tables (store.analytics) ----------------------------------------------


@st.cache_data(ttl=TTL_SECONDS, show_spinner=False)
def runs_with_data(url: str) -> list[int]:
    """The crawl runs that have environment data, ascending."""
    return analytics.run_ids(read_engine(url))


@st.cache_data(ttl=TTL_SECONDS, show_spinner=False)
def collections(url: str) -> pd.DataFrame:
    """The collections with data (live, each archive and period) and their newest run."""
    return _frame_of(analytics.CollectionRow, analytics.collections(read_engine(url)))


@st.cache_data(ttl=TTL_SECONDS, show_spinner=False)
def compare_collections(url: str, labels: tuple[str, ...]) -> pd.DataFrame:
    """Table 2 of each chosen collection's newest run, by university then collection."""
    rows = analytics.compare_collections(read_engine(url), list(labels))
    return _frame_of(analytics.CollectionTable2Row, rows)


@st.cache_data(ttl=TTL_SECONDS, show_spinner=False)
def table2(url: str, run_id: int) -> pd.DataFrame:
    """The paper's Table 2 per university for a run, by rank."""
    return _frame_of(analytics.Table2Row, analytics.table2(read_engine(url), run_id=run_id))


@st.cache_data(ttl=TTL_SECONDS, show_spinner=False)
def table3(url: str, run_id: int, languages: tuple[str, ...] = ("ru", "en")) -> pd.DataFrame:
    """The paper's Table 3 (domains per direction and language) per university, long form."""
    rows = analytics.table3(read_engine(url), run_id=run_id, languages=languages)
    return _frame_of(analytics.Table3Row, rows)


@st.cache_data(ttl=TTL_SECONDS, show_spinner=False)
def web_impact_factors(url: str, run_id: int) -> pd.DataFrame:
    """Web Impact Factor variants per university."""
    rows = analytics.web_impact_factors(read_engine(url), run_id=run_id)
    return _frame_of(analytics.WIFRow, rows)


@st.cache_data(ttl=TTL_SECONDS, show_spinner=False)
def change_summary(url: str, run_id: int) -> pd.DataFrame:
    """Kept, appeared and disappeared domains since the run before ``run_id``."""
    rows = analytics.change_summary(read_engine(url), after=run_id)
    return _frame_of(analytics.ChangeSummaryRow, rows)


@st.cache_data(ttl=TTL_SECONDS, show_spinner=False)
def environment_changes(url: str, run_id: int) -> pd.DataFrame:
    """The domains that appeared or disappeared since the run before ``run_id``."""
    rows = analytics.environment_changes(read_engine(url), after=run_id)
    return _frame_of(analytics.ChangeRow, rows)


# --- the Network page: its domains chosen and counted in SQL (on the aggregates) ---------

Filter = tuple[str, ...] | None  # categories or sources chosen; None: all of them
_NETWORK_KEYS = ["university", "country", "domain", "category", "language"]


@st.cache_data(ttl=TTL_SECONDS, show_spinner=False)
def network_summary(
    url: str, run_id: int, direction: str, categories: Filter = None, sources: Filter = None
) -> analytics.EnvironmentSummaryRow | None:
    """Universities, domains, edges, the most universities one domain is linked with and
    the categories present in a run and direction, over the chosen categories and
    sources; ``None`` when nothing is left."""
    rows = analytics.environment_summary(
        read_engine(url), run_id=run_id, direction=direction, categories=categories,
        sources=sources,
    )  # fmt: skip
    return rows[0] if rows else None


@st.cache_data(ttl=TTL_SECONDS, show_spinner=False)
def network_domains(
    url: str,
    run_id: int,
    direction: str,
    min_universities: int,
    categories: Filter = None,
    sources: Filter = None,
    limit: int | None = None,
) -> tuple[pd.DataFrame, int]:
    """The domains linked with at least ``min_universities`` universities, those shared
    by most first (at most ``limit``), and how many there are in all."""
    engine = read_engine(url)
    rows = analytics.network_domains(
        engine, run_id=run_id, direction=direction, min_universities=min_universities,
        categories=categories, sources=sources, limit=limit,
    )  # fmt: skip
    total = len(rows)
    if limit is not None and total >= limit:
        total = analytics.network_domain_count(
            engine, run_id=run_id, direction=direction, min_universities=min_universities,
            categories=categories, sources=sources,
        )  # fmt: skip
    frame = _frame_of(analytics.NetworkDomainRow, rows)
    return frame.assign(category=frame["category"].fillna(analytics.UNCATEGORISED)), total


@st.cache_data(ttl=TTL_SECONDS, show_spinner=False)
def network_edges(
    url: str, run_id: int, direction: str, domains: tuple[str, ...], sources: Filter = None
) -> pd.DataFrame:
    """One row per university and domain of ``domains`` (links and pages summed over the
    chosen sources: a domain two sources found is one edge)."""
    rows = analytics.environment(
        read_engine(url), run_id=run_id, direction=direction, domains=domains
    )
    env = _frame_of(analytics.EnvironmentRow, rows)
    env = env.assign(category=env["category"].fillna(analytics.UNCATEGORISED))
    if sources is not None:
        env = env[env["source"].isin(sources)]
    env = env[env["domain"].isin(domains)]
    return (
        env.groupby(_NETWORK_KEYS, dropna=False)
        .agg(links=("links", "sum"), pages=("pages", "sum"))
        .reset_index()
    )


@st.cache_data(ttl=TTL_SECONDS, show_spinner=False)
def network_overlaps(
    url: str, run_id: int, direction: str, categories: Filter = None, sources: Filter = None
) -> pd.DataFrame:
    """Co-link overlap of every pair of universities over the chosen categories and
    sources (:func:`overlaps`: the whole environment, as analysed)."""
    rows = analytics.colink_overlaps(
        read_engine(url), run_id=run_id, direction=direction, categories=categories,
        sources=sources,
    )  # fmt: skip
    return _frame_of(networks.OverlapRow, rows)


@st.cache_data(ttl=TTL_SECONDS, show_spinner=False)
def domain_categories(url: str, domains: tuple[str, ...]) -> pd.DataFrame:
    """Category, assigned category, override and note of the given domains."""
    rows = analytics.domain_categories(read_engine(url), domains=list(domains))
    return _frame_of(analytics.DomainCategoryRow, rows)


# --- networks and the taxonomy's labels: written by the analyse stage ---------------------


@st.cache_data(ttl=TTL_SECONDS, show_spinner=False)
def gexf(url: str, run_id: int, direction: str) -> bytes | None:
    """The whole university-domain graph of a run and direction as GEXF (Gephi), as the
    analyse stage stored it; ``None`` before it has seen the run."""
    return networks.network_file(read_engine(url), run_id, direction, "gexf")


@st.cache_data(ttl=TTL_SECONDS, show_spinner=False)
def overlaps(url: str, run_id: int, direction: str) -> pd.DataFrame:
    """Co-link overlap of every pair of universities (shared domains, Jaccard)."""
    rows = networks.colink_overlaps(read_engine(url), run_id, direction)
    return _frame_of(networks.OverlapRow, rows)


@st.cache_data(ttl=TTL_SECONDS, show_spinner=False)
def shared_domains(url: str, run_id: int, direction: str, min_universities: int) -> pd.DataFrame:
    """The external domains shared by at least ``min_universities`` universities."""
    rows = networks.shared_domains(
        read_engine(url), run_id, direction, min_universities=min_universities
    )
    df = _frame_of(networks.SharedDomainSummary, rows)
    df["universities"] = df["universities"].map(", ".join)
    return df


@st.cache_data(ttl=TTL_SECONDS, show_spinner=False)
def category_labels(url: str) -> dict[str, str]:
    """``{key: English label}`` of the taxonomy's categories, in the file's order, as the
    analyse stage stored them (empty before its first run)."""
    return networks.category_labels(read_engine(url), "en")


@st.cache_data(ttl=TTL_SECONDS, show_spinner=False)
def category_colors(url: str) -> dict[str, str]:
    """``{key: "#rrggbb"}``: each category's fixed colour from the taxonomy, as the analyse
    stage stored it (empty before its first run)."""
    return networks.category_colors(read_engine(url))


# --- the analyst's override: the one write -----------------------------------------------


@st.cache_data(ttl=TTL_SECONDS, show_spinner=False)
def overrides(url: str) -> pd.DataFrame:
    """Every domain with an analyst's override."""
    from store import overrides as ov

    return _frame_of(ov.OverrideRow, ov.list_overrides(read_engine(url)))


def write_override(
    url: str, domain: str, category: str | None, note: str | None, analyst: str | None = None
) -> str:
    """Set (``category``) or clear (``None``) the override of ``domain`` through
    :mod:`store.overrides` (validated against the taxonomy of the settings; ``analyst``
    is who, for the history) on the read-write engine, move the domain in the saved
    aggregates, then forget the cached results; returns what was done.

    Several sessions may write at once: the override and the aggregates' update each run
    under the override write lock (:func:`store.overrides.write_locked`), one after the
    other, so none fails on a busy database and no count is moved twice.

    Raises
    ------
    ParameterError
        Not a domain, not a category of the taxonomy, or too long a name.
    """
    from store import aggregates
    from store import overrides as ov

    taxonomy = settings().analyse.taxonomy
    engine = write_engine(url)
    if category is None:
        cleared = ov.clear_override(engine, domain, analyst=analyst, taxonomy=taxonomy)
    else:
        row = ov.set_override(
            engine, domain, category, note=note, analyst=analyst, taxonomy=taxonomy
        )
    aggregates.sync_categories(engine)  # the saved counts follow (under the same lock)
    reload()
    if category is None:
        return f"override of {domain} cleared" if cleared else f"{domain} had no override"
    labels = category_labels(url)
    now, before = (labels.get(c, c) if c else "–" for c in (row.override_category, row.category))
    return f"{row.domain} is now {now} (assigned: {before})"


@st.cache_data(ttl=TTL_SECONDS, show_spinner=False)
def override_history(url: str) -> pd.DataFrame:
    """Every override action, newest first: domain, when, set or clear, the category,
    the note and who."""
    from store import overrides as ov

    return _frame_of(ov.OverrideEvent, ov.override_history(read_engine(url)))


# --- the review workflow (store.review): its reads cached, its writes on the write engine --


@st.cache_data(ttl=TTL_SECONDS, show_spinner=False)
def review_queue(url: str, run_id: int, direction: str | None, limit: int | None) -> pd.DataFrame:
    """The review queue of a run (:func:`store.review.review_queue`: the columns of
    :class:`store.review.QueueRow`), ``limit`` rows at most (``None``: every one)."""
    from store import review

    rows = review.review_queue(read_engine(url), run_id=run_id, direction=direction, limit=limit)
    return _frame_of(review.QueueRow, rows)


@st.cache_data(ttl=TTL_SECONDS, show_spinner=False)
def queue_summary(url: str, run_id: int, direction: str | None) -> tuple[int, float]:
    """The whole review queue's domains and summed priority
    (:func:`store.review.queue_summary`)."""
    from store import review

    summary = review.queue_summary(read_engine(url), run_id=run_id, direction=direction)
    return summary.domains, summary.priority


@st.cache_data(ttl=TTL_SECONDS, show_spinner=False)
def uncertain_shares(url: str, run_id: int, below: float) -> pd.DataFrame:
    """Per university and direction: its domains, those without an override below
    confidence ``below``, and their share (:func:`store.review.uncertain_shares`)."""
    from store import review

    rows = review.uncertain_shares(read_engine(url), run_id=run_id, below=below)
    return _frame_of(review.UncertainShareRow, rows)


@st.cache_data(ttl=TTL_SECONDS, show_spinner=False)
def coding_sheet(url: str, run_id: int, direction: str | None, limit: int | None) -> bytes:
    """The coding sheet of the queue's first ``limit`` domains (UTF-8 with a byte-order
    mark, :func:`store.review.write_sheet`)."""
    import io

    from store import review

    rows = review.review_queue(read_engine(url), run_id=run_id, direction=direction, limit=limit)
    out = io.StringIO()
    review.write_sheet(rows, out)
    return ("\ufeff" + out.getvalue()).encode("utf-8")


@st.cache_data(ttl=TTL_SECONDS, show_spinner=False)
def coders(url: str) -> pd.DataFrame:
    """Every coder, their codings and last import (:class:`store.review.CoderRow`)."""
    from store import review

    return _frame_of(review.CoderRow, review.coders(read_engine(url)))


@st.cache_data(ttl=TTL_SECONDS, show_spinner=False)
def agreement(url: str, coder_a: str, coder_b: str) -> tuple[dict[str, Any], pd.DataFrame]:
    """Two coders compared: the figures of :class:`store.review.Agreement` (without its
    lists, plus ``summary``) and the disagreements."""
    from store import review

    result = review.agreement(read_engine(url), coder_a, coder_b)
    figures = {
        f.name: getattr(result, f.name)
        for f in dataclasses.fields(result)
        if f.name not in ("disagreements", "agreements")
    }
    figures["summary"] = result.summary
    figures["to_accept"] = sum(1 for _d, _k, over in result.agreements if over is None)
    return figures, _frame_of(review.Disagreement, result.disagreements)


def import_sheet(url: str, content: bytes, coder: str, name: str) -> str:
    """Store a filled coding sheet as ``coder``'s (:func:`store.review.import_sheet`,
    validated against the taxonomy of the settings; nothing stored on error), then forget
    the cached results; returns what was done.

    Raises
    ------
    ParameterError
        The sheet's problems, each with its line; or no coder named.
    """
    from store import review

    done = review.import_sheet(
        write_engine(url), content, coder=coder, sheet=name, taxonomy=settings().analyse.taxonomy
    )
    reload()
    replaced = f", replacing {done.replaced} earlier codings" if done.replaced else ""
    return (
        f"{done.sheet}: stored {done.stored} codings by {done.coder}{replaced}; "
        f"{done.blank} rows without a category skipped"
    )


def accept_agreements(url: str, coder_a: str, coder_b: str, analyst: str) -> str:
    """Make the two coders' agreed categories overrides (:func:`store.review.
    accept_agreements`), move the domains in the saved aggregates, forget the cached
    results; returns what was done."""
    from store import aggregates, review

    engine = write_engine(url)
    done = review.accept_agreements(
        engine, coder_a, coder_b, analyst=analyst, taxonomy=settings().analyse.taxonomy
    )
    aggregates.sync_categories(engine)
    reload()
    kept = f"; the other override of {', '.join(done.kept)} kept" if done.kept else ""
    return f"{len(done.set)} agreements stored as overrides{kept}"


def adjudicate(url: str, domain: str, category: str, analyst: str, note: str | None) -> str:
    """Settle a coded domain's category as its override (:func:`store.review.adjudicate`),
    move it in the saved aggregates, forget the cached results; returns what was done.

    Raises
    ------
    ParameterError
        No analyst, an unknown category, or a domain no coder coded.
    """
    from store import aggregates, review

    engine = write_engine(url)
    row = review.adjudicate(
        engine, domain, category, analyst=analyst, note=note, taxonomy=settings().analyse.taxonomy
    )
    aggregates.sync_categories(engine)
    reload()
    label = category_labels(url).get(row.override_category or "", row.override_category)
    return f"{row.domain} is now {label} (adjudicated by {analyst.strip()})"


# --- the two share definitions and the part resting on low-confidence domains ------------


def low_confidence() -> float:
    """``[analyse] low_confidence``: an unreviewed domain scored below it is low-confidence."""
    return settings().analyse.low_confidence


@st.cache_data(ttl=TTL_SECONDS, show_spinner=False)
def shares_by(
    url: str,
    run_id: int,
    direction: str,
    definition: str,
    sources: tuple[str, ...] | None = None,
    threshold: float = 0.5,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Category shares per university and per country under ``definition`` (``domain``:
    each domain's own category; ``cluster``: the paper's way,
    :mod:`store.analytics.shares`) with ``low_confidence`` and ``low_confidence_share``
    (the part resting on unreviewed domains scored below ``threshold``)."""
    from store.analytics import shares as S

    engine = read_engine(url)
    args: dict[str, Any] = {
        "definition": definition,
        "run_id": run_id,
        "direction": direction,
        "sources": sources,
        "low_confidence": threshold,
    }
    return (
        _frame_of(S.ShareRow, S.university_shares(engine, **args)),
        _frame_of(S.CountryShareRow, S.country_shares(engine, **args)),
    )


@st.cache_data(ttl=TTL_SECONDS, show_spinner=False)
def share_comparison(
    url: str,
    run_id: int,
    direction: str | None,
    sources: tuple[str, ...] | None = None,
    threshold: float = 0.5,
    by_country: bool = False,
) -> pd.DataFrame:
    """Both share definitions side by side per university (or country) and category,
    with their difference (cluster - domain) and the low-confidence parts."""
    from store.analytics import shares as S

    rows = S.share_comparison(
        read_engine(url), run_id=run_id, direction=direction, sources=sources,
        low_confidence=threshold, by_country=by_country,
    )  # fmt: skip
    return _frame_of(S.ShareComparisonRow, rows)


@st.cache_data(ttl=TTL_SECONDS, show_spinner=False)
def rank_editions(url: str) -> pd.DataFrame:
    """The stored rank editions, newest (the default) first
    (:class:`store.rank_editions.EditionInfo`)."""
    from store import rank_editions as R

    return _frame_of(R.EditionInfo, R.list_editions(read_engine(url)))


@st.cache_data(ttl=TTL_SECONDS, show_spinner=False)
def rank_analysis(
    url: str, run_id: int, definition: str = "domain", edition: str | None = None
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The factors of every university of a run (both directions) under the share
    ``definition`` with the ranks of ``edition`` (the newest when ``None``), and their
    rank correlations, the p-values adjusted over every factor x statistic x direction x
    target of the run (Holm, Benjamini-Hochberg)."""
    engine = read_engine(url)
    rows = analytics.rank_factors(engine, run_id=run_id, definition=definition, edition=edition)
    corr = analytics.correlations_of(rows, definition=definition)
    return _frame_of(analytics.RankFactorRow, rows), _frame_of(analytics.RankCorrelationRow, corr)


@st.cache_data(ttl=TTL_SECONDS, show_spinner=False)
def rank_sensitivity(
    url: str, run_id: int, edition: str | None = None
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Whether each correlation's sign holds under both share definitions and every
    stored clustering setting (with the ranks of ``edition``), and the settings
    (:func:`store.analytics.rank_sensitivity`)."""
    engine = read_engine(url)
    rows = analytics.rank_sensitivity(engine, run_id=run_id, edition=edition)
    settings_ = analytics.clustering_settings(engine, run_id=run_id)
    return (
        _frame_of(analytics.SensitivityRow, rows),
        _frame_of(analytics.ClusteringSetting, settings_),
    )
