"""Webometric read queries: the paper's Tables 2-3 and Figures 2-3, Web Impact Factors,
change between runs, clusters, link-network edges.

Convention (for the report, the dashboard and notebooks): every function takes an
``Engine`` and keyword filters, runs parameterised queries on the analyst views of
migration 0002 (so SQL users and Python see the same numbers) and returns a **list of
frozen dataclasses**; :func:`to_frame` turns any such list into a ``pandas.DataFrame``
with one column per field. ``run_id=None`` means the latest crawl run that has
environment data (:func:`latest_run_id`).

Definitions
-----------
*External link*: a :class:`~store.models.Link` flagged external, found in the run on a page
of the university (``Page.university_id``) and pointing to a registered domain that is not
one of the university's domains. *External domain*: the distinct target domains of those
links. *Citing page*: a distinct URL of a **verified** :class:`~store.models.Citation` of
the university in the run; *citing domain*: the distinct registered domains of those pages
(the paper's Table 2 counted Majestic's citing pages and domains). *Site pages*: the
university's own pages seen in the run (``first_run_id <= run <= last_run_id``).

*Domain language* (Table 3): the language of the domain's document, else the most frequent
language of its fetched external pages. *Domain category*: the analyst's override when set
(:class:`~store.models.DomainCategory.override_category` wins), else the assigned category;
domains never categorised count as ``"uncategorised"``. *Category share*: the domains of a
category over all domains of the university (Figures 2-3 per university); *per country*:
over the distinct domains of all universities of the country (a domain linked by two
Russian universities counts once for Russia).

Web Impact Factors (:func:`web_impact_factors`), all per run:

``wif_pages = citing_pages / site_pages``
    Ingwersen's (1998) external WIF: pages linking to the site per page of the site.
``wif_domains = citing_domains / site_pages``
    the same with linking *domains* (Thelwall 2002's domain-counting model, robust to one
    site linking from thousands of pages).
``outlink_density = external_links / site_pages``
    outgoing external links per page of the site (the "outlink WIF").
``in_out_ratio = citing_domains / external_domains``
    domains citing the university per domain it links to (visibility vs outreach).
``visibility_share = citing_domains / distinct citing domains of all universities``
    the university's share of the studied universities' whole citing environment.

A ratio with a zero denominator is ``None``.

References
----------
P. Ingwersen, "The calculation of Web impact factors", *J. Documentation* 54 (1998) 236-243.
M. Thelwall, "Conceptualizing documentation on the Web: an evaluation of different
heuristic-based models for counting links between university Web sites", *JASIST* 53 (2002).
A. Noruzi, "The Web Impact Factor: a critical review", *The Electronic Library* 24 (2006).
V. N. Korelin, I. S. Blekanov, S. L. Sergeev (2015), seed 000_d819228b9213e10a.txt, Tables 2-3,
Figures 2-3.
"""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import asdict, dataclass, fields, is_dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from sqlalchemy import Engine, column, func, select, table

from core.exceptions import ParameterError
from store.models import DIRECTIONS, Citation, Link, Page, University, UniversityDomain

if TYPE_CHECKING:
    import pandas as pd
    from sqlalchemy.sql.expression import TableClause

UNCATEGORISED = "uncategorised"

V_ENVIRONMENT = table(
    "v_environment",
    *(
        column(c)
        for c in (
            "run_id",
            "university_id",
            "university",
            "country",
            "direction",
            "domain",
            "links",
            "pages",
            "language",
            "category",
        )
    ),
)
V_TABLE2 = table(
    "v_university_table2",
    *(
        column(c)
        for c in (
            "run_id",
            "university_id",
            "university",
            "country",
            "rank",
            "site_pages",
            "external_links",
            "external_domains",
            "citing_pages",
            "citing_domains",
        )
    ),
)
V_SHARE = table(
    "v_category_share",
    *(
        column(c)
        for c in (
            "run_id",
            "university_id",
            "university",
            "country",
            "direction",
            "category",
            "domains",
            "share",
        )
    ),
)
V_COUNTRY_SHARE = table(
    "v_country_category_share",
    *(column(c) for c in ("run_id", "country", "direction", "category", "domains", "share")),
)
V_CLUSTER = table(
    "v_cluster",
    *(
        column(c)
        for c in (
            "cluster_id",
            "clustering_id",
            "run_id",
            "university_id",
            "university",
            "country",
            "direction",
            "unit",
            "algorithm",
            "label",
            "size",
            "category",
            "assigned_category",
            "category_score",
            "overridden",
            "theme",
            "top_domains",
            "created_at",
        )
    ),
)
V_CLUSTER_MEMBER = table(
    "v_cluster_member",
    *(
        column(c)
        for c in (
            "cluster_id",
            "clustering_id",
            "run_id",
            "university_id",
            "direction",
            "document_id",
            "unit",
            "key",
            "domain",
            "language",
            "n_pages",
            "category",
        )
    ),
)
V_DOMAIN_CATEGORY = table(
    "v_domain_category",
    *(
        column(c)
        for c in (
            "domain",
            "category",
            "assigned_category",
            "override_category",
            "overridden",
            "score",
            "override_note",
            "override_at",
            "updated_at",
        )
    ),
)


def to_frame(rows: Sequence[Any], columns: Sequence[str] | None = None) -> pd.DataFrame:
    """A ``pandas.DataFrame`` of a list of the dataclasses this module returns.

    Tuple fields become ``"; "``-joined strings. ``columns`` keeps (and orders) a subset.
    An empty list gives an empty frame with ``columns`` (or none).

    Examples
    --------
    >>> to_frame([EnvironmentRow(1, 2, "U", "X", "citing", "a.org", 3, 3, "en", None)],
    ...          ["university", "domain", "pages"])
      university domain  pages
    0          U  a.org      3
    """
    import pandas as pd

    records = []
    for r in rows:
        if not is_dataclass(r):
            raise TypeError(f"to_frame expects dataclass rows, got {type(r).__name__}")
        rec = asdict(r)  # type: ignore[arg-type]
        records.append(
            {k: "; ".join(map(str, v)) if isinstance(v, tuple) else v for k, v in rec.items()}
        )
    if not records:
        return pd.DataFrame(columns=list(columns or ()))
    frame = pd.DataFrame.from_records(records)
    return frame[list(columns)] if columns is not None else frame


def _ratio(num: float | None, den: float | None) -> float | None:
    if num is None or not den:
        return None
    return round(float(num) / float(den), 6)


def _check_direction(direction: str | None) -> None:
    if direction is not None and direction not in DIRECTIONS:
        raise ParameterError(f"direction must be one of {', '.join(DIRECTIONS)}, got {direction!r}")


# --- runs -------------------------------------------------------------------------------


def run_ids(engine: Engine) -> list[int]:
    """The crawl runs that have environment data (links or verified citations), ascending.

    The same runs as ``SELECT DISTINCT run_id FROM v_environment``, read from the tables
    (the view also joins languages and categories, which costs seconds on large crawls).
    """
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
    with engine.connect() as conn:
        ids = {int(r) for (r,) in conn.execute(outgoing.union(citing))}
    return sorted(ids)


def latest_run_id(engine: Engine) -> int | None:
    """The newest crawl run that has environment data, ``None`` when there is none."""
    ids = run_ids(engine)
    return ids[-1] if ids else None


def resolve_run(engine: Engine, run_id: int | None) -> int | None:
    """``run_id`` checked against the runs with data, or the latest one when ``None``.

    Raises
    ------
    ParameterError
        ``run_id`` has no environment data; the message lists the runs that have.
    """
    ids = run_ids(engine)
    if run_id is None:
        return ids[-1] if ids else None
    if run_id not in ids:
        have = ", ".join(map(str, ids)) or "none (crawl first: `webometrics crawl`)"
        raise ParameterError(f"crawl run {run_id} has no environment data; runs with data: {have}")
    return run_id


def _university_facts(engine: Engine) -> dict[int, tuple[str, str, int | None, tuple[str, ...]]]:
    with engine.connect() as conn:
        doms: dict[int, list[str]] = defaultdict(list)
        for uid, dom in conn.execute(
            select(UniversityDomain.university_id, UniversityDomain.domain).order_by(
                UniversityDomain.domain
            )
        ):
            doms[uid].append(dom)
        return {
            uid: (name, country, rank, tuple(doms.get(uid, ())))
            for uid, name, country, rank in conn.execute(
                select(University.id, University.name, University.country, University.rank)
            )
        }


def _uni_order(facts: dict[int, tuple[str, str, int | None, tuple[str, ...]]], uid: int) -> Any:
    name, _country, rank, _doms = facts[uid]
    return (rank is None, rank or 0, name)


# --- Table 2, Table 3 --------------------------------------------------------------------


@dataclass(frozen=True)
class Table2Row:
    """The paper's Table 2 for one university and run."""

    run_id: int | None
    university_id: int
    university: str
    country: str
    rank: int | None
    domains: tuple[str, ...]
    site_pages: int
    external_links: int
    external_domains: int
    citing_pages: int
    citing_domains: int


def table2(engine: Engine, *, run_id: int | None = None) -> list[Table2Row]:
    """Table 2 of the paper for every stored university (zeros without data), by rank.

    Parameters
    ----------
    engine : Engine
    run_id : int, optional
        The crawl run; the latest with data when ``None``.

    Returns
    -------
    list of Table2Row
    """
    run = resolve_run(engine, run_id)
    facts = _university_facts(engine)
    got: dict[int, Any] = {}
    if run is not None:
        with engine.connect() as conn:
            for r in conn.execute(select(V_TABLE2).where(V_TABLE2.c.run_id == run)).mappings():
                got[int(r["university_id"])] = r
    rows = []
    for uid in sorted(facts, key=lambda u: _uni_order(facts, u)):
        name, country, rank, doms = facts[uid]
        r = got.get(uid)
        rows.append(
            Table2Row(
                run,
                uid,
                name,
                country,
                rank,
                doms,
                int(r["site_pages"]) if r else 0,
                int(r["external_links"]) if r else 0,
                int(r["external_domains"]) if r else 0,
                int(r["citing_pages"]) if r else 0,
                int(r["citing_domains"]) if r else 0,
            )
        )
    return rows


@dataclass(frozen=True)
class Table3Row:
    """The paper's Table 3: domains of one university, direction and language."""

    run_id: int | None
    university_id: int
    university: str
    country: str
    rank: int | None
    direction: str
    language: str
    domains: int


def table3(
    engine: Engine,
    *,
    run_id: int | None = None,
    languages: Sequence[str] | None = ("ru", "en"),
) -> list[Table3Row]:
    """External and citing domains per language for every university (the paper's Table 3).

    Parameters
    ----------
    engine : Engine
    run_id : int, optional
        The crawl run; the latest with data when ``None``.
    languages : sequence of str, optional
        The languages shown (the paper: Russian and English); every other language,
        and domains of unknown language, count under ``"other"``. ``None``: every
        language as stored, unknown as ``"unknown"``.

    Returns
    -------
    list of Table3Row
        One row per university x direction x language (zeros included), universities
        by rank, directions outgoing then citing, languages in the given order.
    """
    run = resolve_run(engine, run_id)
    facts = _university_facts(engine)
    counts: dict[tuple[int, str, str], int] = defaultdict(int)
    seen_langs: set[str] = set()
    if run is not None:
        stmt = (
            select(
                V_ENVIRONMENT.c.university_id,
                V_ENVIRONMENT.c.direction,
                V_ENVIRONMENT.c.language,
                func.count(),
            )
            .where(V_ENVIRONMENT.c.run_id == run)
            .group_by(
                V_ENVIRONMENT.c.university_id, V_ENVIRONMENT.c.direction, V_ENVIRONMENT.c.language
            )
        )
        with engine.connect() as conn:
            for uid, direction, lang, n in conn.execute(stmt):
                if languages is None:
                    key = lang or "unknown"
                else:
                    key = lang if lang in languages else "other"
                seen_langs.add(key)
                counts[(int(uid), direction, key)] += int(n)
    if languages is None:
        langs = sorted(seen_langs)
    else:
        langs = [*languages, *(["other"] if "other" in seen_langs else [])]
    rows = []
    for uid in sorted(facts, key=lambda u: _uni_order(facts, u)):
        name, country, rank, _ = facts[uid]
        for direction in DIRECTIONS:
            for lang in langs:
                rows.append(
                    Table3Row(
                        run,
                        uid,
                        name,
                        country,
                        rank,
                        direction,
                        lang,
                        counts[(uid, direction, lang)],
                    )
                )
    return rows


# --- environment, category shares ---------------------------------------------------------

_Row = TypeVar("_Row")


def _view_rows(
    engine: Engine,
    view: TableClause,
    row_type: type[_Row],
    order: tuple[str, str, str],
    *,
    run_id: int | None,
    direction: str | None,
    university_id: int | None = None,
) -> list[_Row]:
    """The rows of a per-run view for one run, as ``row_type`` dataclasses.

    The run is ``run_id`` (default the latest); ``direction`` and ``university_id``, when
    given, keep only those rows. Ordered by ``order[0]``, direction (outgoing first),
    ``order[1]`` largest first, then ``order[2]``. No run: ``[]``. Every field of
    ``row_type`` is the view's column of that name, made ``int`` or ``float`` where the
    field is (the database may give ``Decimal``).
    """
    casts = {"int": int, "float": float}
    convert = [(f.name, casts.get(str(f.type))) for f in fields(row_type)]  # type: ignore[arg-type]
    _check_direction(direction)
    run = resolve_run(engine, run_id)
    if run is None:
        return []
    v = view
    stmt = select(v).where(v.c.run_id == run)
    if direction is not None:
        stmt = stmt.where(v.c.direction == direction)
    if university_id is not None:
        stmt = stmt.where(v.c.university_id == university_id)
    first, largest, then = (v.c[name] for name in order)
    stmt = stmt.order_by(first, v.c.direction.desc(), largest.desc(), then)
    with engine.connect() as conn:
        return [
            row_type(*(r[name] if cast is None else cast(r[name]) for name, cast in convert))
            for r in conn.execute(stmt).mappings()
        ]


@dataclass(frozen=True)
class EnvironmentRow:
    """One external domain of a university's environment in a run and direction."""

    run_id: int
    university_id: int
    university: str
    country: str
    direction: str
    domain: str
    links: int
    pages: int
    language: str | None
    category: str | None


def environment(
    engine: Engine,
    *,
    run_id: int | None = None,
    direction: str | None = None,
    university_id: int | None = None,
) -> list[EnvironmentRow]:
    """The environment rows of a run (by university, direction, most links first, domain)."""
    return _view_rows(
        engine,
        V_ENVIRONMENT,
        EnvironmentRow,
        ("university", "links", "domain"),
        run_id=run_id,
        direction=direction,
        university_id=university_id,
    )


@dataclass(frozen=True)
class CategoryShareRow:
    """Share of one category among a university's external domains (Figures 2-3)."""

    run_id: int
    university_id: int
    university: str
    country: str
    direction: str
    category: str
    domains: int
    share: float


def category_shares(
    engine: Engine,
    *,
    run_id: int | None = None,
    direction: str | None = None,
    university_id: int | None = None,
) -> list[CategoryShareRow]:
    """Category shares per university and direction (analyst overrides applied).

    Returns
    -------
    list of CategoryShareRow
        By university, direction (outgoing first), largest share first, then category.
        Categories a university has no domain of are absent (share 0).
    """
    return _view_rows(
        engine,
        V_SHARE,
        CategoryShareRow,
        ("university", "share", "category"),
        run_id=run_id,
        direction=direction,
        university_id=university_id,
    )


@dataclass(frozen=True)
class CountryShareRow:
    """Share of one category among the distinct external domains of a country's
    universities."""

    run_id: int
    country: str
    direction: str
    category: str
    domains: int
    share: float


def country_category_shares(
    engine: Engine, *, run_id: int | None = None, direction: str | None = None
) -> list[CountryShareRow]:
    """Category shares per country and direction (analyst overrides applied)."""
    return _view_rows(
        engine,
        V_COUNTRY_SHARE,
        CountryShareRow,
        ("country", "share", "category"),
        run_id=run_id,
        direction=direction,
    )


# --- Web Impact Factors --------------------------------------------------------------------


@dataclass(frozen=True)
class WIFRow:
    """Web Impact Factor variants of one university and run (see the module docstring)."""

    run_id: int | None
    university_id: int
    university: str
    country: str
    rank: int | None
    site_pages: int
    external_links: int
    external_domains: int
    citing_pages: int
    citing_domains: int
    wif_pages: float | None
    wif_domains: float | None
    outlink_density: float | None
    in_out_ratio: float | None
    visibility_share: float | None


def web_impact_factors(engine: Engine, *, run_id: int | None = None) -> list[WIFRow]:
    """Web Impact Factor variants for every university (by rank)."""
    rows = table2(engine, run_id=run_id)
    run = rows[0].run_id if rows else None
    all_citing = 0
    if run is not None:
        v = V_ENVIRONMENT
        stmt = select(func.count(func.distinct(v.c.domain))).where(
            v.c.run_id == run, v.c.direction == "citing"
        )
        with engine.connect() as conn:
            all_citing = int(conn.execute(stmt).scalar() or 0)
    return [
        WIFRow(
            r.run_id,
            r.university_id,
            r.university,
            r.country,
            r.rank,
            r.site_pages,
            r.external_links,
            r.external_domains,
            r.citing_pages,
            r.citing_domains,
            _ratio(r.citing_pages, r.site_pages),
            _ratio(r.citing_domains, r.site_pages),
            _ratio(r.external_links, r.site_pages),
            _ratio(r.citing_domains, r.external_domains),
            _ratio(r.citing_domains, all_citing),
        )
        for r in rows
    ]


# --- change between runs ---------------------------------------------------------------------


@dataclass(frozen=True)
class ChangeRow:
    """A domain that appeared in or disappeared from a university's environment."""

    university_id: int
    university: str
    direction: str
    domain: str
    change: str  # appeared | disappeared
    run_before: int
    run_after: int
    links_before: int
    links_after: int
    category: str | None


@dataclass(frozen=True)
class ChangeSummaryRow:
    """How a university's environment in one direction changed between two runs.

    ``comparable`` is false when one of the runs has no data for this university and
    direction (e.g. a citing-only crawl): its domains are then not listed as changes.
    """

    university_id: int
    university: str
    direction: str
    run_before: int
    run_after: int
    before: int
    after: int
    kept: int
    appeared: int
    disappeared: int
    comparable: bool


def _two_runs(engine: Engine, before: int | None, after: int | None) -> tuple[int, int] | None:
    ids = run_ids(engine)
    if after is None:
        after = ids[-1] if ids else None
    elif after not in ids:
        raise ParameterError(f"crawl run {after} has no environment data; runs with data: {ids}")
    if after is None:
        return None
    if before is None:
        earlier = [i for i in ids if i < after]
        if not earlier:
            return None
        before = earlier[-1]
    elif before not in ids:
        raise ParameterError(f"crawl run {before} has no environment data; runs with data: {ids}")
    if before == after:
        raise ParameterError(f"compare two different runs (both are {before})")
    return before, after


def _changes(
    engine: Engine,
    before: int | None,
    after: int | None,
    university_id: int | None,
    direction: str | None,
) -> tuple[list[ChangeRow], list[ChangeSummaryRow]]:
    _check_direction(direction)
    pair = _two_runs(engine, before, after)
    if pair is None:
        return [], []
    b, a = pair
    v = V_ENVIRONMENT
    stmt = select(
        v.c.run_id,
        v.c.university_id,
        v.c.university,
        v.c.direction,
        v.c.domain,
        v.c.links,
        v.c.category,
    ).where(v.c.run_id.in_([b, a]))
    if university_id is not None:
        stmt = stmt.where(v.c.university_id == university_id)
    if direction is not None:
        stmt = stmt.where(v.c.direction == direction)
    data: dict[tuple[int, str], dict[int, dict[str, tuple[int, str | None]]]] = defaultdict(
        lambda: {b: {}, a: {}}
    )
    names: dict[int, str] = {}
    with engine.connect() as conn:
        for run, uid, uni, dirn, dom, links, cat in conn.execute(stmt):
            data[(int(uid), dirn)][int(run)][dom] = (int(links), cat)
            names[int(uid)] = uni
    changes: list[ChangeRow] = []
    summary: list[ChangeSummaryRow] = []
    for (uid, dirn), runs in sorted(data.items(), key=lambda kv: (names[kv[0][0]], kv[0][1])):
        old, new = runs[b], runs[a]
        comparable = bool(old) and bool(new)
        appeared = sorted(set(new) - set(old)) if comparable else []
        gone = sorted(set(old) - set(new)) if comparable else []
        for dom in appeared:
            changes.append(
                ChangeRow(uid, names[uid], dirn, dom, "appeared", b, a, 0, new[dom][0], new[dom][1])
            )
        for dom in gone:
            changes.append(
                ChangeRow(
                    uid, names[uid], dirn, dom, "disappeared", b, a, old[dom][0], 0, old[dom][1]
                )
            )
        summary.append(
            ChangeSummaryRow(
                uid,
                names[uid],
                dirn,
                b,
                a,
                len(old),
                len(new),
                len(set(old) & set(new)),
                len(appeared),
                len(gone),
                comparable,
            )
        )
    return changes, summary


def environment_changes(
    engine: Engine,
    *,
    before: int | None = None,
    after: int | None = None,
    university_id: int | None = None,
    direction: str | None = None,
) -> list[ChangeRow]:
    """Domains that appeared and disappeared per university and direction between runs.

    Parameters
    ----------
    engine : Engine
    before, after : int, optional
        The runs compared; by default the latest run with data and the one before it.
    university_id : int, optional
    direction : {"outgoing", "citing"}, optional

    Returns
    -------
    list of ChangeRow
        By university, direction, change (appeared first), domain. Empty when fewer
        than two runs have data. A university and direction with no data in one of the
        runs is not compared (see :func:`change_summary`).

    Raises
    ------
    ParameterError
        A run has no data, or both runs are the same.
    """
    return _changes(engine, before, after, university_id, direction)[0]


def change_summary(
    engine: Engine,
    *,
    before: int | None = None,
    after: int | None = None,
    university_id: int | None = None,
    direction: str | None = None,
) -> list[ChangeSummaryRow]:
    """Counts of kept, appeared and disappeared domains per university and direction."""
    return _changes(engine, before, after, university_id, direction)[1]


# --- clusters -----------------------------------------------------------------------------


@dataclass(frozen=True)
class ClusterViewRow:
    """A final cluster with its scope, size, category (override applied) and theme."""

    cluster_id: int
    clustering_id: int
    run_id: int | None
    university_id: int | None
    university: str | None
    country: str | None
    direction: str | None
    unit: str
    algorithm: str
    label: int
    size: int
    category: str | None
    assigned_category: str | None
    category_score: float | None
    overridden: bool
    theme: str | None
    top_domains: str | None
    created_at: dt.datetime | None


def clusters(
    engine: Engine,
    *,
    clustering_id: int | None = None,
    run_id: int | None = None,
    university_id: int | None = None,
    direction: str | None = None,
    category: str | None = None,
    min_size: int = 1,
) -> list[ClusterViewRow]:
    """The final clusters (``v_cluster``), optionally of one clustering, run, university,
    direction or category; by clustering, largest first, then label.

    ``run_id=None`` does not filter on the run here (clusterings may span runs).
    """
    _check_direction(direction)
    v = V_CLUSTER
    stmt = select(v).where(v.c.size >= min_size)
    for col, value in (
        (v.c.clustering_id, clustering_id),
        (v.c.run_id, run_id),
        (v.c.university_id, university_id),
        (v.c.direction, direction),
        (v.c.category, category),
    ):
        if value is not None:
            stmt = stmt.where(col == value)
    stmt = stmt.order_by(v.c.clustering_id.desc(), v.c.size.desc(), v.c.label)
    with engine.connect() as conn:
        out = []
        for r in conn.execute(stmt).mappings():
            created = r["created_at"]
            if isinstance(created, str):  # SQLite views return the stored text
                created = dt.datetime.fromisoformat(created)
            if created is not None and created.tzinfo is None:
                created = created.replace(tzinfo=dt.UTC)
            out.append(
                ClusterViewRow(
                    int(r["cluster_id"]),
                    int(r["clustering_id"]),
                    None if r["run_id"] is None else int(r["run_id"]),
                    None if r["university_id"] is None else int(r["university_id"]),
                    r["university"],
                    r["country"],
                    r["direction"],
                    r["unit"],
                    r["algorithm"],
                    int(r["label"]),
                    int(r["size"]),
                    r["category"],
                    r["assigned_category"],
                    None if r["category_score"] is None else float(r["category_score"]),
                    bool(r["overridden"]),
                    r["theme"],
                    r["top_domains"],
                    created,
                )
            )
        return out


@dataclass(frozen=True)
class ClusterMemberRow:
    """A document of a final cluster with its domain, language and category."""

    cluster_id: int
    document_id: int
    unit: str
    key: str
    domain: str
    language: str | None
    n_pages: int
    category: str | None


def cluster_members(engine: Engine, cluster_ids: Sequence[int]) -> list[ClusterMemberRow]:
    """The members of the given final clusters, by cluster then domain and key."""
    if not cluster_ids:
        return []
    v = V_CLUSTER_MEMBER
    stmt = (
        select(
            v.c.cluster_id,
            v.c.document_id,
            v.c.unit,
            v.c.key,
            v.c.domain,
            v.c.language,
            v.c.n_pages,
            v.c.category,
        )
        .where(v.c.cluster_id.in_([int(c) for c in cluster_ids]))
        .order_by(v.c.cluster_id, v.c.domain, v.c.key)
    )
    with engine.connect() as conn:
        return [
            ClusterMemberRow(int(c), int(d), u, k, dom, lang, int(n or 0), cat)
            for c, d, u, k, dom, lang, n, cat in conn.execute(stmt)
        ]


# --- domain categories --------------------------------------------------------------------


@dataclass(frozen=True)
class DomainCategoryRow:
    """A domain's category (override applied), the assigned one, score and override."""

    domain: str
    category: str | None
    assigned_category: str | None
    override_category: str | None
    overridden: bool
    score: float | None
    override_note: str | None


def domain_categories(
    engine: Engine, *, domains: Sequence[str] | None = None, overridden_only: bool = False
) -> list[DomainCategoryRow]:
    """The categorised domains (``v_domain_category``), by domain."""
    v = V_DOMAIN_CATEGORY
    stmt = select(
        v.c.domain,
        v.c.category,
        v.c.assigned_category,
        v.c.override_category,
        v.c.overridden,
        v.c.score,
        v.c.override_note,
    ).order_by(v.c.domain)
    if domains is not None:
        stmt = stmt.where(v.c.domain.in_(list(domains)))
    if overridden_only:
        stmt = stmt.where(v.c.overridden == 1)
    with engine.connect() as conn:
        return [
            DomainCategoryRow(d, c, a, o, bool(ov), None if s is None else float(s), note)
            for d, c, a, o, ov, s, note in conn.execute(stmt)
        ]


def row_fields(row_type: type) -> list[str]:
    """The field names of one of this module's row dataclasses (for empty tables)."""
    return [f.name for f in fields(row_type)]


# --- SQL examples -------------------------------------------------------------------------


@dataclass(frozen=True)
class SQLExample:
    """One example query of ``store/examples.sql``: its name, description and SQL."""

    name: str
    description: str
    sql: str


def sql_examples() -> list[SQLExample]:
    """The example queries on the analyst views (``store/examples.sql``), in file order.

    Each block starts with ``-- name: <name>``, then comment lines (the description),
    then one statement ending with ``;``.

    Examples
    --------
    >>> [e.name for e in sql_examples()][:2]
    ['table2', 'table3']
    """
    from pathlib import Path

    text = (Path(__file__).resolve().parent / "examples.sql").read_text(encoding="utf-8")
    out: list[SQLExample] = []
    name: str | None = None
    desc: list[str] = []
    body: list[str] = []
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith("-- name:"):
            name, desc, body = stripped.split(":", 1)[1].strip(), [], []
        elif name is None:
            continue
        elif stripped.startswith("--") and not body:
            desc.append(stripped[2:].strip())
        elif stripped:
            body.append(line.rstrip())
            if stripped.endswith(";"):
                out.append(SQLExample(name, " ".join(desc), "\n".join(body).rstrip(";")))
                name = None
    return out
