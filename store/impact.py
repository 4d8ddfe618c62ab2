"""Link-based impact figures: the citing environment of each university by source.

Webometric studies that compare link sources (a crawl, a commercial backlink index, a
public web graph) count, per university, the citing domains each source finds, how many
of them the other sources miss, and in-link counts weighted by the citing sites' own
standing. The figures are those of the views of revision 0007 (``v_citing_overlap``,
``v_citing_rank``) as the last refresh of :mod:`store.aggregates` saved them, so SQL and
Python agree:

**Source kinds** (``kind``)
    ``crawl``: verified citations found by a crawl or from a URL list (``citation.source``
    ``crawl`` / ``urls``); ``backlinks``: verified citations of a Majestic or Ahrefs export
    (``majestic`` / ``ahrefs``); ``commoncrawl``: the citing nodes of Common Crawl web graph
    releases (``citing_node``, source ``commoncrawl-graph:<release>``). Every stored run
    counts; a domain counts once per university and kind.
**Citing domains / hosts** (:func:`source_overlap`)
    distinct registered domains, and the distinct hosts known within them (the fetched
    citing pages' hosts; the host graph's nodes; none from the domain graph alone).
**Overlap** (:func:`source_overlap`)
    ``only_here``: citing domains this kind finds and no other kind does; ``missed``:
    citing domains only the other kinds find; ``domains_all``: the union over kinds.
**Rank-weighted in-link counts** (:func:`rank_weighted`)
    per graph source and level, the sum over the distinct citing nodes of their harmonic
    centrality (Boldi & Vigna 2014) and of their PageRank, as published in the release's
    ranks file: an in-link from a central site weighs more than one from a peripheral
    site. ``ranked_nodes`` counts the citing nodes the ranks file lists.

Cost: one read of the saved rows per call (the views group ``citation`` and ``citing_node``).
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import Engine, column, exists, select, table

from core.choices import ENVIRONMENT_SOURCES

KINDS = ENVIRONMENT_SOURCES  # the kinds of citing source, in their order of display

V_CITING_SOURCE = table(
    "v_citing_source",
    *(
        column(c)
        for c in ("university_id", "university", "country", "kind", "domain", "sources", "hosts")
    ),
)
V_CITING_OVERLAP = table(
    "v_citing_overlap",
    *(
        column(c)
        for c in (
            "university_id",
            "university",
            "country",
            "kind",
            "domains",
            "hosts",
            "only_here",
            "missed",
            "domains_all",
        )
    ),
)
V_CITING_RANK = table(
    "v_citing_rank",
    *(
        column(c)
        for c in (
            "university_id",
            "university",
            "country",
            "source",
            "level",
            "nodes",
            "domains",
            "links",
            "harmonic_sum",
            "pagerank_sum",
            "ranked_nodes",
        )
    ),
)


@dataclass(frozen=True)
class SourceFigures:
    """One university x source kind: citing domains and hosts, and the overlap."""

    university_id: int
    university: str
    country: str
    kind: str
    domains: int
    hosts: int
    only_here: int
    missed: int
    domains_all: int


@dataclass(frozen=True)
class RankFigures:
    """One university x web graph source x level: the rank-weighted in-link counts."""

    university_id: int
    university: str
    country: str
    source: str
    level: str
    nodes: int
    domains: int
    links: int
    harmonic_sum: float | None
    pagerank_sum: float | None
    ranked_nodes: int


def _kind_order(kind: str) -> int:
    return KINDS.index(kind) if kind in KINDS else len(KINDS)


def has_web_graph(engine: Engine) -> bool:
    """Whether a Common Crawl web graph's citing nodes are stored (one indexed probe, so
    that a page can decide to show the impact figures without computing them)."""
    from store.models import CitingNode

    with engine.connect() as conn:
        return bool(conn.scalar(select(exists().where(CitingNode.id.is_not(None)))))


def source_overlap(engine: Engine, *, university_id: int | None = None) -> list[SourceFigures]:
    """Citing domains and hosts per university and source kind, with the overlap.

    Examples
    --------
    >>> from store import make_engine, schema
    >>> engine = make_engine("sqlite://")
    >>> schema.upgrade(engine)
    >>> source_overlap(engine)
    []
    """
    from store import aggregates

    # the views' rows as the last refresh saved them (store.aggregates)
    v = aggregates.CITING_OVERLAP_SOURCE
    q = select(v)
    if university_id is not None:
        q = q.where(v.c.university_id == university_id)
    with engine.connect() as conn:
        rows = [
            SourceFigures(
                int(r["university_id"]),
                str(r["university"]),
                str(r["country"]),
                str(r["kind"]),
                int(r["domains"]),
                int(r["hosts"] or 0),
                int(r["only_here"] or 0),
                int(r["missed"] or 0),
                int(r["domains_all"]),
            )
            for r in conn.execute(q).mappings()
        ]
    return sorted(rows, key=lambda r: (r.university, _kind_order(r.kind), r.kind))


def rank_weighted(engine: Engine, *, university_id: int | None = None) -> list[RankFigures]:
    """Rank-weighted in-link counts per university, web graph source and level."""
    from store import aggregates

    v = aggregates.CITING_RANK_SOURCE
    q = select(v)
    if university_id is not None:
        q = q.where(v.c.university_id == university_id)
    with engine.connect() as conn:
        rows = [
            RankFigures(
                int(r["university_id"]),
                str(r["university"]),
                str(r["country"]),
                str(r["source"]),
                str(r["level"]),
                int(r["nodes"]),
                int(r["domains"]),
                int(r["links"] or 0),
                None if r["harmonic_sum"] is None else float(r["harmonic_sum"]),
                None if r["pagerank_sum"] is None else float(r["pagerank_sum"]),
                int(r["ranked_nodes"] or 0),
            )
            for r in conn.execute(q).mappings()
        ]
    return sorted(rows, key=lambda r: (r.university, r.source, r.level))


def citing_domains(
    engine: Engine, university_id: int, *, kind: str | None = None
) -> dict[str, set[str]]:
    """Kind -> the citing registered domains of one university (every stored run)."""
    q = select(V_CITING_SOURCE.c.kind, V_CITING_SOURCE.c.domain).where(
        V_CITING_SOURCE.c.university_id == university_id
    )
    if kind is not None:
        q = q.where(V_CITING_SOURCE.c.kind == kind)
    out: dict[str, set[str]] = {}
    with engine.connect() as conn:
        for k, domain in conn.execute(q):
            out.setdefault(str(k), set()).add(str(domain))
    return out


def has_figures(engine: Engine) -> bool:
    """True when any citing source (verified citation or graph node) is stored."""
    with engine.connect() as conn:
        return conn.execute(select(V_CITING_SOURCE.c.domain).limit(1)).first() is not None


__all__ = [
    "KINDS",
    "RankFigures",
    "SourceFigures",
    "citing_domains",
    "has_figures",
    "rank_weighted",
    "source_overlap",
]
