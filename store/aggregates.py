"""The figures the dashboard and the report read (revision 0010): the aggregates, their
refresh and their freshness. **The only read path** of every per-run figure.

At a million pages the analyst views (``v_environment`` and the tables on it) group the
links, the citations and the page languages again on every read (10-14 s per dashboard
page on SQLite). :func:`refresh` saves the rows of ``v_environment`` once
(``agg_environment``) and derives from them what the pages read: distinct domains, links
and pages per run x university x direction x source x category x language
(``agg_domain_count``; source :data:`ALL_SOURCES` counts a domain found by two sources
once), Table 2 per run x university (``agg_table2``), distinct domains per run x country
x direction x category (``agg_country_count``), per run x direction x domain the
universities linked with it (``agg_network_domain``), and the impact figures of
``v_citing_overlap`` and ``v_citing_rank``.

:mod:`store.analytics` reads nothing else, fresh or stale, so every page renders in
milliseconds in every state. When they are refreshed:

- at the end of every stage that changes their inputs (crawl, the Common Crawl stages,
  extract, dedup, cluster, analyse: :func:`refresh_if_stale`, which costs a few indexed
  reads when nothing changed);
- after an analyst's override (:func:`sync_categories`: only the domains that moved);
- on demand: ``webometrics refresh``, the dashboard's *Refresh figures* button, and
  ``webometrics report`` before it writes.

Between two refreshes (during a crawl, after rows written by hand) the figures are those
of the last refresh; :func:`store.freshness.staleness` says what changed since, and the
dashboard shows it in a banner.

Freshness: every refresh stores the database's :func:`fingerprint` (the newest id or
timestamp of every input of ``v_environment``: crawl runs, links, citations and their
verification, environment rows, pages and their extraction, documents, categories and
overrides, and the universities with their domains), read from indexes in one query.

The ``*_SOURCE`` selectables have the columns of the views they stand in for
(:mod:`store.analytics.views`); the shares and the rank factors are views over the
aggregates (``agg_v_category_share``, ``agg_v_country_category_share``,
``agg_v_rank_factors``, ``agg_v_rank_factor_share``: the SQL of ``v_category_share`` and
the others, over the saved rows; :data:`store.analytics.views.AGG_SHARE`, ...). The views
themselves stay for SQL users (``store/sql/``), and the tests check that they and the
aggregates give the same rows.

Examples
--------
>>> from store import make_engine, schema
>>> engine = make_engine("sqlite://")
>>> schema.upgrade(engine)
>>> refresh(engine)["aggregate_runs"]
0
>>> built_run_ids(engine)  # no run has data
[]
>>> refresh_if_stale(engine)["aggregate_fresh"]  # nothing to compute
True
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable
from typing import Any

from sqlalchemy import (
    Column,
    Connection,
    Engine,
    MetaData,
    Table,
    case,
    delete,
    func,
    insert,
    literal,
    select,
    text,
    update,
)
from sqlalchemy.sql.expression import Subquery

from core.choices import GRAPH_RUN_KIND
from store.models import (
    AggregateCitingOverlap,
    AggregateCitingRank,
    AggregateCountryCount,
    AggregateDomainCount,
    AggregateEnvironment,
    AggregateNetworkDomain,
    AggregateState,
    AggregateTable2,
    Base,
    Citation,
    CrawlRun,
    DomainCategory,
    Environment,
    Link,
    Page,
    University,
    UniversityDomain,
    utcnow,
)

ALL_SOURCES = "all"  # agg_domain_count's rows over every source (a domain counted once)
UNCATEGORISED = "uncategorised"  # as store.analytics.views.UNCATEGORISED
UNKNOWN_CATEGORY = "unknown"


def _table(model: type[Base]) -> Table:
    """The table of a model (typed as a ``Table``)."""
    table = model.__table__
    assert isinstance(table, Table)
    return table


_TABLES = (
    AggregateCitingRank,
    AggregateCitingOverlap,
    AggregateNetworkDomain,
    AggregateCountryCount,
    AggregateTable2,
    AggregateDomainCount,
    AggregateEnvironment,
    AggregateState,
)

# the newest row of every input of v_environment, each read from an index
_FINGERPRINT = text(
    """
    SELECT (SELECT MAX(id) FROM crawl_run),
           (SELECT MAX(id) FROM citing_node),
           (SELECT COUNT(*) FROM crawl_run),
           (SELECT MAX(id) FROM link),
           (SELECT MAX(id) FROM citation),
           (SELECT MAX(checked_at) FROM citation),
           (SELECT MAX(id) FROM environment),
           (SELECT MAX(id) FROM page),
           (SELECT MAX(extracted_at) FROM page),
           (SELECT MAX(id) FROM document),
           (SELECT MAX(created_at) FROM document),
           (SELECT COUNT(*) FROM document WHERE unit = 'domain'),
           (SELECT MAX(updated_at) FROM domain_category),
           (SELECT MAX(override_at) FROM domain_category),
           (SELECT COUNT(*) FROM domain_category WHERE override_at IS NOT NULL),
           (SELECT COUNT(*) FROM domain_category)
    """
)


def fingerprint(conn: Connection) -> str:
    """What the aggregates are computed from, in one string.

    The newest id (rows added) and timestamp (rows changed: a citation verified, a page
    extracted, a document rebuilt, a category assigned, an override set) of each input,
    the number of crawl runs (one deleted), of domain documents and of overrides (one
    deleted or cleared), and a
    digest of the universities' names, countries and domains.

    Parameters
    ----------
    conn : Connection

    Returns
    -------
    str
        Equal for two calls exactly when none of these changed in between; what
        concerns the categories and overrides only follows a ``"|"``.
    """
    facts = [str(v) for v in conn.execute(_FINGERPRINT).one()]
    unis = conn.execute(
        select(University.id, University.name, University.country).order_by(University.id)
    ).all()
    doms = conn.execute(
        select(UniversityDomain.university_id, UniversityDomain.domain).order_by(
            UniversityDomain.id
        )
    ).all()
    digest = hashlib.sha256(repr((unis, doms)).encode()).hexdigest()[:16]
    # what changes a domain's category only comes last, after "|" (see sync_categories)
    return ";".join([*facts[:-4], digest]) + "|" + ";".join(facts[-4:])


def _data_part(stamp: str) -> str:
    """The fingerprint without its categories part."""
    return stamp.split("|", 1)[0]


def fresh_run_ids(engine: Engine) -> list[int] | None:
    """The crawl runs with computed figures, ascending, when the stored aggregates are
    fresh (built and their fingerprint still the database's); ``None`` otherwise."""
    with engine.connect() as conn:
        rows = conn.execute(select(AggregateState.run_id, AggregateState.fingerprint)).all()
        if not rows:
            return None
        now = fingerprint(conn)
    if any(fp != now for _run, fp in rows):
        return None
    return sorted(int(run) for run, _fp in rows)


def built_run_ids(engine: Engine) -> list[int]:
    """The crawl runs whose figures are computed, fresh or not, ascending: the runs the
    readers of :mod:`store.analytics` know."""
    with engine.connect() as conn:
        return sorted(int(r) for r in conn.execute(select(AggregateState.run_id)).scalars())


def is_fresh(engine: Engine, run_id: int | None) -> bool:
    """Whether ``run_id``'s aggregates are stored and fresh."""
    ids = fresh_run_ids(engine) if run_id is not None else None
    return ids is not None and run_id in ids


def refresh_if_stale(engine: Engine, *, force: bool = False) -> dict[str, Any]:
    """Make the figures fresh, doing only what changed: nothing when they are fresh,
    :func:`sync_categories` when only categories or overrides changed, else
    :func:`refresh`. What every stage calls at its end.

    Parameters
    ----------
    engine : Engine
    force : bool
        Refresh whenever there are data, fresh or not (after a migration changed a
        view's SQL, which no fingerprint sees).

    Returns
    -------
    dict
        ``aggregate_fresh`` (``True`` when nothing had to be computed), then
        :func:`refresh`'s statistics when it ran, or ``recounted`` (domains moved).
    """
    with engine.connect() as conn:
        stored = conn.execute(select(AggregateState.fingerprint)).scalars().all()
        now = fingerprint(conn)
        if not stored and not _has_environment(conn):
            return {"aggregate_fresh": True}
    if not stored and not data_run_ids(engine):  # pages without links: nothing to count
        return {"aggregate_fresh": True}
    if force:
        return {"aggregate_fresh": False, **refresh(engine)}
    if stored and all(fp == now for fp in stored):
        return {"aggregate_fresh": True}
    if stored and all(_data_part(fp) == _data_part(now) for fp in stored):
        synced = sync_categories(engine)
        if synced["fresh"]:
            return {"aggregate_fresh": False, "recounted": synced["recounted"]}
    return {"aggregate_fresh": False, **refresh(engine)}


def data_run_ids(engine: Engine) -> list[int]:
    """The crawl runs with environment data now (links, verified citations or a web
    graph's citing domains), ascending, read from the tables: those a refresh would give
    figures (the same runs as ``SELECT DISTINCT run_id FROM v_environment``, which also
    joins languages and categories)."""
    outgoing = (
        select(Link.run_id)
        .join(Page, Page.id == Link.source_page_id)
        .outerjoin(
            UniversityDomain,
            (UniversityDomain.domain == Link.target_domain)
            & (UniversityDomain.university_id == Page.university_id),
        )
        .where(
            Link.external.is_(True),
            Link.run_id.is_not(None),
            Page.university_id.is_not(None),
            UniversityDomain.id.is_(None),
        )
        .distinct()
    )
    citing = (
        select(Citation.run_id)
        .where(Citation.status == "verified", Citation.run_id.is_not(None))
        .distinct()
    )
    graph = (
        select(Environment.run_id)
        .join(CrawlRun, CrawlRun.id == Environment.run_id)
        .where(CrawlRun.kind == GRAPH_RUN_KIND)
        .distinct()
    )
    with engine.connect() as conn:
        ids = {int(r) for (r,) in conn.execute(outgoing.union(citing, graph)) if r is not None}
    return sorted(ids)


def describe(done: dict[str, Any]) -> str:
    """What :func:`refresh_if_stale` did, in words (for a command's output or a log).

    >>> describe({"aggregate_fresh": False, "recounted": 2})
    '2 domains moved to their new category'
    >>> describe({"aggregate_fresh": False, "aggregate_runs": 1, "aggregate_rows": 4200,
    ...           "aggregate_seconds": 0.25})
    '1 crawl run, 4,200 environment rows in 0.2 s'
    """
    if done["aggregate_fresh"]:
        return "nothing changed since they were computed"
    if "recounted" in done:
        return f"{done['recounted']} domains moved to their new category"
    runs = done["aggregate_runs"]
    return (
        f"{runs} crawl run{'' if runs == 1 else 's'}, {done['aggregate_rows']:,} environment "
        f"rows in {done['aggregate_seconds']:.1f} s"
    )


def _has_environment(conn: Connection) -> bool:
    """Whether anything could make a figure: a link, a citation, an environment row or a
    web graph's citing node (one indexed read each)."""
    return any(
        conn.execute(text(f"SELECT 1 FROM {t} LIMIT 1")).first() is not None
        for t in ("link", "citation", "environment", "citing_node")
    )


def refresh(engine: Engine, *, on_step: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Rebuild every aggregate from the views. Readers see the old aggregates or the new
    ones, never half; writers wait only for the short copy at the end.

    Parameters
    ----------
    engine : Engine
    on_step : callable, optional
        Called with ``"computed"`` once the new rows are computed (nothing of the
        database written yet, no lock held) and with ``"copied"`` once they replaced the
        aggregates (e.g. to log each step's time).

    Returns
    -------
    dict
        ``aggregate_runs`` (crawl runs with data), ``aggregate_rows`` (environment rows
        saved), ``aggregate_seconds``.

    Notes
    -----
    Two steps on one connection. First the new rows are computed into temporary tables
    (one pass over ``v_environment``, whose cost is the links, citations and page
    languages grouped once, then groupings of the saved rows): only reads of the
    database, so on SQLite (WAL) a crawl or an extraction goes on writing meanwhile. Then
    one write transaction replaces the aggregates with the temporary tables' rows (a
    copy: seconds at a million pages, within SQLite's 30 s busy timeout of the other
    writers), and ``ANALYZE`` tells the planner their size. The fingerprint is read
    before the first step, so a change made during it leaves the aggregates stale, never
    wrongly fresh.
    """
    started = time.perf_counter()
    with engine.connect() as conn:
        stamp = fingerprint(conn)
        conn.commit()
        staged = _temporary_tables(conn)
        try:
            states = _build(conn, staged, stamp)
            conn.commit()
            if on_step is not None:
                on_step("computed")
            n_rows = _publish(conn, staged, states)
            conn.commit()
            if on_step is not None:
                on_step("copied")
        finally:
            conn.rollback()
            for table in staged.values():
                table.drop(conn, checkfirst=True)
            conn.commit()
        for model in _TABLES:
            conn.execute(text(f"ANALYZE {model.__tablename__}"))
        conn.commit()
    return {
        "aggregate_runs": len(states),
        "aggregate_rows": n_rows,
        "aggregate_seconds": round(time.perf_counter() - started, 3),
    }


_STAGED = tuple(m for m in _TABLES if m is not AggregateState)


def _temporary_tables(conn: Connection) -> dict[type[Base], Table]:
    """A temporary table of each aggregate's columns (not its ``id``), seen by this
    connection only: where :func:`refresh` computes the new rows."""
    meta = MetaData()
    out: dict[type[Base], Table] = {}
    for model in _STAGED:
        columns = [Column(c.name, c.type) for c in _table(model).c if c.name != "id"]
        table = Table(f"tmp_{model.__tablename__}", meta, *columns, prefixes=["TEMPORARY"])
        table.drop(conn, checkfirst=True)  # left by a refresh killed on this connection
        table.create(conn)
        out[model] = table
    conn.commit()
    return out


def _build(conn: Connection, staged: dict[type[Base], Table], stamp: str) -> list[dict[str, Any]]:
    """Compute every aggregate into ``staged``; return the rows of ``agg_state``."""
    ae = staged[AggregateEnvironment]
    cols = ("run_id", "university_id", "direction", "source", "domain", "links", "pages")
    conn.execute(
        text(
            f"INSERT INTO {ae.name} ({', '.join(cols)}, language, category) "
            f"SELECT {', '.join(cols)}, COALESCE(language, :unknown), category "
            "FROM v_environment"
        ),
        {"unknown": UNKNOWN_CATEGORY},
    )
    category = func.coalesce(ae.c.category, UNCATEGORISED)
    keys = (ae.c.run_id, ae.c.university_id, ae.c.direction)
    counts = (func.count(func.distinct(ae.c.domain)), func.sum(ae.c.links), func.sum(ae.c.pages))
    per_source = select(*keys, ae.c.source, category, ae.c.language, *counts).group_by(
        *keys, ae.c.source, category, ae.c.language
    )
    every_source = select(*keys, literal(ALL_SOURCES), category, ae.c.language, *counts).group_by(
        *keys, category, ae.c.language
    )
    dc = staged[AggregateDomainCount]
    count_cols = ("run_id", "university_id", "direction", "source", "category", "language")
    conn.execute(
        insert(dc).from_select(
            [*count_cols, "domains", "links", "pages"], per_source.union_all(every_source)
        )
    )
    _insert_table2(conn, dc, staged[AggregateTable2])
    country = (
        select(
            ae.c.run_id,
            University.country,
            ae.c.direction,
            category,
            func.count(func.distinct(ae.c.domain)),
        )
        .join(University, University.id == ae.c.university_id)
        .group_by(ae.c.run_id, University.country, ae.c.direction, category)
    )
    conn.execute(
        insert(staged[AggregateCountryCount]).from_select(
            ["run_id", "country", "direction", "category", "domains"], country
        )
    )
    network = select(
        ae.c.run_id,
        ae.c.direction,
        ae.c.domain,
        func.count(func.distinct(ae.c.university_id)),
        func.sum(ae.c.links),
        func.sum(ae.c.pages),
        func.min(ae.c.language),
        func.min(ae.c.category),
    ).group_by(ae.c.run_id, ae.c.direction, ae.c.domain)
    nd = staged[AggregateNetworkDomain]
    network_cols = ("run_id", "direction", "domain", "universities", "links", "pages")
    conn.execute(insert(nd).from_select([*network_cols, "language", "category"], network))
    for model, view in (
        (AggregateCitingOverlap, "v_citing_overlap"),
        (AggregateCitingRank, "v_citing_rank"),
    ):
        names = [c.name for c in staged[model].c]
        conn.execute(
            text(
                f"INSERT INTO {staged[model].name} ({', '.join(names)}) "
                f"SELECT {', '.join(names)} FROM {view}"
            )
        )
    totals = (
        select(
            nd.c.run_id,
            func.sum(case((nd.c.direction == "outgoing", 1), else_=0)),
            func.sum(case((nd.c.direction == "citing", 1), else_=0)),
        )
        .group_by(nd.c.run_id)
        .order_by(nd.c.run_id)
    )
    built = utcnow()
    return [
        {
            "run_id": int(run),
            "fingerprint": stamp,
            "built_at": built,
            "outgoing_domains": int(out or 0),
            "citing_domains": int(cit or 0),
        }
        for run, out, cit in conn.execute(totals)
    ]


def _publish(
    conn: Connection, staged: dict[type[Base], Table], states: list[dict[str, Any]]
) -> int:
    """Replace the aggregates with the staged rows (one write transaction; the caller
    commits); the number of environment rows."""
    for model in _TABLES:
        conn.execute(delete(model))
    for saved, table in staged.items():
        names = [c.name for c in table.c]
        conn.execute(insert(_table(saved)).from_select(names, select(*table.c)))
    if states:
        conn.execute(insert(_table(AggregateState)), states)
    ae = staged[AggregateEnvironment]
    return int(conn.execute(select(func.count()).select_from(ae)).scalar_one())


def _insert_table2(conn: Connection, dc: Table, into: Table) -> None:
    """Table 2 per run x university from the every-source domain counts ``dc`` into
    ``into`` (the counts of ``v_university_table2``; site pages as it counts them)."""
    out = dc.c.direction == "outgoing"
    cit = dc.c.direction == "citing"
    t = (
        select(
            dc.c.run_id,
            dc.c.university_id,
            func.sum(case((out, dc.c.links), else_=0)).label("external_links"),
            func.sum(case((out, dc.c.domains), else_=0)).label("external_domains"),
            func.sum(case((cit, dc.c.pages), else_=0)).label("citing_pages"),
            func.sum(case((cit, dc.c.domains), else_=0)).label("citing_domains"),
        )
        .where(dc.c.source == ALL_SOURCES)
        .group_by(dc.c.run_id, dc.c.university_id)
        .subquery("t")
    )
    site_pages = text(
        "(SELECT COUNT(*) FROM page p WHERE p.university_id = t.university_id "
        "AND p.role = 'university' AND p.first_run_id <= t.run_id "
        "AND COALESCE(p.last_run_id, p.first_run_id) >= t.run_id "
        # the run's collection only (migration 0018: a live page is no archived run's)
        "AND COALESCE(p.archive, '') = "
        "COALESCE((SELECT r.archive FROM crawl_run r WHERE r.id = t.run_id), ''))"
    )
    rows = select(
        t.c.run_id,
        t.c.university_id,
        site_pages,
        t.c.external_links,
        t.c.external_domains,
        t.c.citing_pages,
        t.c.citing_domains,
    ).select_from(t)
    conn.execute(
        insert(into).from_select(
            [
                "run_id",
                "university_id",
                "site_pages",
                "external_links",
                "external_domains",
                "citing_pages",
                "citing_domains",
            ],
            rows,
        )
    )


def sync_categories(engine: Engine, *, max_domains: int = 1000) -> dict[str, Any]:
    """Bring fresh aggregates up to date with changed domain categories (an analyst's
    override set or cleared), without a whole :func:`refresh`.

    When nothing but categories and overrides changed since the aggregates were built,
    each domain whose saved category is no longer its category (override applied) is
    moved from its old category to its new one in every aggregate, and the aggregates
    are fresh again; otherwise nothing is written (the readers keep the saved figures
    until the next :func:`refresh`).

    Parameters
    ----------
    engine : Engine
    max_domains : int
        Give up (leave the aggregates stale) when more domains changed: a new
        categorisation is the analyse stage's, which refreshes everything.

    Returns
    -------
    dict
        ``recounted`` (domains moved) and ``fresh`` (whether the aggregates are fresh now).

    Notes
    -----
    Runs under the override write lock (:func:`store.overrides.write_locked`), as the
    override writers do: two sessions syncing at once would move a domain twice (SQLite)
    or deadlock (PostgreSQL); one after the other, the second finds nothing to move.
    """
    from store.overrides import write_locked

    nd = _table(AggregateNetworkDomain)
    with write_locked(engine).begin() as conn:
        stored = conn.execute(select(AggregateState.fingerprint)).scalars().all()
        now = fingerprint(conn)
        if not stored or any(_data_part(fp) != _data_part(now) for fp in stored):
            return {"recounted": 0, "fresh": False}
        if all(fp == now for fp in stored):
            return {"recounted": 0, "fresh": True}
        effective = func.coalesce(DomainCategory.override_category, DomainCategory.category)
        changed = conn.execute(
            select(nd.c.domain, effective)
            .select_from(nd.outerjoin(DomainCategory, DomainCategory.domain == nd.c.domain))
            .where(nd.c.category.is_distinct_from(effective))
            .distinct()
            .limit(max_domains + 1)
        ).all()
        if len(changed) > max_domains:
            return {"recounted": 0, "fresh": False}
        runs = list(conn.execute(select(AggregateState.run_id)).scalars())
        for domain, category in changed:
            _move_domain(conn, runs, domain, category)
        conn.execute(update(AggregateState).values(fingerprint=now))
    return {"recounted": len(changed), "fresh": True}


def _move_domain(conn: Connection, runs: list[int], domain: str, category: str | None) -> None:
    """Move one domain of every run to ``category`` in the saved aggregates."""
    ae = _table(AggregateEnvironment)
    where = (ae.c.run_id.in_(runs), ae.c.direction.in_(("outgoing", "citing")))
    rows = conn.execute(
        select(
            ae.c.run_id,
            ae.c.university_id,
            University.country,
            ae.c.direction,
            ae.c.source,
            ae.c.links,
            ae.c.pages,
            ae.c.language,
            ae.c.category,
        )
        .join(University, University.id == ae.c.university_id)
        .where(*where, ae.c.domain == domain)
    ).all()
    new = category or UNCATEGORISED
    counts: dict[tuple[Any, ...], list[int]] = {}
    countries: dict[tuple[Any, ...], int] = {}

    def add(key: tuple[Any, ...], sign: int, links: int, pages: int) -> None:
        got = counts.setdefault(key, [0, 0, 0])
        got[0] += sign
        got[1] += sign * links
        got[2] += sign * pages

    every: dict[tuple[Any, ...], tuple[str, str, int, int]] = {}
    for run, uni, country, direction, source, links, pages, language, old in rows:
        old = old or UNCATEGORISED
        for cat, sign in ((old, -1), (new, 1)):
            add((run, uni, direction, source, cat, language), sign, links, pages)
            countries[(run, country, direction, cat)] = sign
        # over every source the domain counts once, with its links and pages summed
        _, _, n_links, n_pages = every.get((run, uni, direction), (old, language, 0, 0))
        every[(run, uni, direction)] = (old, language, n_links + links, n_pages + pages)
    for (run, uni, direction), (old, language, links, pages) in every.items():
        for cat, sign in ((old, -1), (new, 1)):
            add((run, uni, direction, ALL_SOURCES, cat, language), sign, links, pages)
    dc = _table(AggregateDomainCount)
    for (run, uni, direction, source, cat, language), (n, links, pages) in counts.items():
        key = {
            "run_id": run,
            "university_id": uni,
            "direction": direction,
            "source": source,
            "category": cat,
            "language": language,
        }
        _add_or_insert(conn, dc, key, {"domains": n, "links": links, "pages": pages})
    cc = _table(AggregateCountryCount)
    for (run, country, direction, cat), sign in countries.items():
        key = {"run_id": run, "country": country, "direction": direction, "category": cat}
        _add_or_insert(conn, cc, key, {"domains": sign})
    conn.execute(delete(dc).where(dc.c.domains <= 0))
    conn.execute(delete(cc).where(cc.c.domains <= 0))
    conn.execute(update(ae).where(*where, ae.c.domain == domain).values(category=category))
    nd = _table(AggregateNetworkDomain)
    conn.execute(
        update(nd).where(nd.c.run_id.in_(runs), nd.c.domain == domain).values(category=category)
    )


def _add_or_insert(
    conn: Connection, table: Any, key: dict[str, Any], deltas: dict[str, int]
) -> None:
    """Add ``deltas`` to the row of ``key``, or insert it (a category new to the key)."""
    if not any(deltas.values()):
        return
    match = [table.c[k] == v for k, v in key.items()]
    done = conn.execute(
        update(table).where(*match).values({k: table.c[k] + v for k, v in deltas.items()})
    )
    if done.rowcount == 0:
        conn.execute(insert(table).values({**key, **deltas}))


# --- the aggregates as the views they stand in for ---------------------------------------


def _with_university(t: Any, rest: list[Any], name: str, *, rank: bool = False) -> Subquery:
    """``run_id``, ``university_id``, the university's name and country (and rank), then
    ``rest``: the columns of a view on the university table."""
    uni: list[Any] = [University.name.label("university"), University.country.label("country")]
    if rank:
        uni.append(University.rank.label("rank"))
    return (
        select(t.c.run_id, t.c.university_id, *uni, *rest)
        .join(University, University.id == t.c.university_id)
        .subquery(name)
    )


def _environment_source() -> Subquery:
    ae = _table(AggregateEnvironment)
    rest = ("direction", "source", "domain", "links", "pages", "language", "category")
    return _with_university(ae, [ae.c[c] for c in rest], "agg_v_environment")


def _table2_source() -> Subquery:
    t = _table(AggregateTable2)
    rest = ("site_pages", "external_links", "external_domains", "citing_pages", "citing_domains")
    return _with_university(t, [t.c[c] for c in rest], "agg_v_university_table2", rank=True)


def _network_source() -> Subquery:
    nd = _table(AggregateNetworkDomain)
    return select(*nd.c).subquery("agg_v_network_domain")


ENVIRONMENT_SOURCE = _environment_source()
TABLE2_SOURCE = _table2_source()
NETWORK_DOMAIN_SOURCE = _network_source()
# the impact figures' views, saved (the columns of v_citing_overlap and v_citing_rank)
CITING_OVERLAP_SOURCE = _table(AggregateCitingOverlap)
CITING_RANK_SOURCE = _table(AggregateCitingRank)
