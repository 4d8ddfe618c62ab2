"""The files of ``webometrics report`` (listed in :mod:`webometrics.commands.report`):
:func:`build_report` reads one run's tables from :mod:`store.analytics`, computes its link
networks (:mod:`analyse.networks`) and writes the tables, the figures, the networks and
the index.
"""

from __future__ import annotations

import csv
import datetime as dt
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from core import defaults as D
from webometrics.commands.report.collections import Chosen, choose, write_collections
from webometrics.commands.report.ranks import resolve_edition, write_rank_correlation
from webometrics.commands.report.render import share_figure, table_rows, write_table

TABLE_FILES = (
    "table2",
    "table3",
    "category_shares_university",
    "category_shares_country",
    "category_shares_definitions",
    "category_shares_definitions_country",
    "wif",
    "changes",
    "change_summary",
    "clusters",
    "impact_sources",
    "impact_ranks",
    "rank_factors",
    "rank_correlation",
    "rank_sensitivity",
)
FIGURE_FILES = (
    "figure2_outgoing.png",
    "figure3_citing.png",
    "figure2_outgoing_clusters.png",
    "figure3_citing_clusters.png",
    "rank_correlation.png",
)


TABLE2_FIELDS = (
    "university",
    "domains",
    "country",
    "rank",
    "external_links",
    "external_domains",
    "citing_pages",
    "citing_domains",
    "site_pages",
)
SHARE_FIELDS = (
    "direction",
    "definition",
    "category",
    "domains",
    "share",
    "known_share",
    "low_confidence",
    "low_confidence_share",
)
COMPARISON_FIELDS = (
    "direction",
    "category",
    "domain_share",
    "cluster_share",
    "difference",
    "domain_low_confidence_share",
    "cluster_low_confidence_share",
)
WIF_FIELDS = (
    "university",
    "country",
    "rank",
    "site_pages",
    "citing_pages",
    "citing_domains",
    "wif_pages",
    "wif_domains",
    "outlink_density",
    "in_out_ratio",
    "visibility_share",
)
CHANGE_FIELDS = (
    "university",
    "direction",
    "domain",
    "change",
    "run_before",
    "run_after",
    "links_before",
    "links_after",
    "category",
)
SUMMARY_FIELDS = (
    "university",
    "direction",
    "run_before",
    "run_after",
    "before",
    "after",
    "kept",
    "appeared",
    "disappeared",
    "comparable",
)
CLUSTER_FIELDS = (
    "university",
    "direction",
    "run_id",
    "clustering_id",
    "algorithm",
    "label",
    "size",
    "category",
    "category_score",
    "category_support",
    "category_voters",
    "overridden",
    "theme",
    "top_domains",
)
DOMAIN_CATEGORY_FIELDS = (
    "domain",
    "category",
    "assigned_category",
    "override_category",
    "score",
    "override_note",
)
CENTRALITY_FIELDS = (
    "node",
    "label",
    "kind",
    "degree",
    "weighted_degree",
    "degree_centrality",
    "betweenness",
    "pagerank",
)
#: the networks of each direction: the co-link file's stem
CO_LINKS = (("outgoing", "co_outlinks"), ("citing", "co_inlinks"))


def build_report(
    engine: Any,
    out: Path,
    *,
    run_id: int | None = None,
    compare_to: int | None = None,
    category_labels: dict[str, str] | None = None,
    category_colors: dict[str, str] | None = None,
    low_confidence: float = D.ANALYSE_LOW_CONFIDENCE,
    rank_edition: str | None = None,
    collection: str | None = None,
) -> list[Path]:
    """Write every table, figure and network export of one run into ``out``.

    Parameters
    ----------
    engine : Engine
    out : Path
        The folder (created when missing).
    run_id : int, optional
        The crawl run; the latest with data when ``None``.
    compare_to : int, optional
        The earlier run for the changes; the run before ``run_id`` when ``None``.
    category_labels : dict, optional
        Category key -> label for the figures (the taxonomy's English labels by default).
    category_colors : dict, optional
        Category key -> ``#rrggbb``, the same colour in every figure (the taxonomy's).
    low_confidence : float
        ``[analyse] low_confidence``: the shares' part on domains scored below it.
    rank_edition : str, optional
        The rank edition of the rank files (:mod:`store.rank_editions`; default newest).
    collection : str, optional
        Without ``run_id``: the collection whose newest run is read (default live).

    Returns
    -------
    list of Path
        The files written.

    Raises
    ------
    ParameterError
        ``run_id`` or ``compare_to`` has no data, ``rank_edition`` is not stored,
        ``collection`` has no run with data or ``run_id`` is not of it.
    """
    from analyse.taxonomy import load_taxonomy
    from store import analytics as A

    chosen = choose(engine, run_id, collection)
    run, edition = chosen.run_id, resolve_edition(engine, rank_edition)
    out.mkdir(parents=True, exist_ok=True)
    (out / "networks").mkdir(exist_ok=True)
    taxonomy = load_taxonomy() if category_labels is None or category_colors is None else None
    labels = category_labels or taxonomy.labels(with_unknown=True)  # type: ignore[union-attr]
    colors = category_colors or taxonomy.colors()  # type: ignore[union-attr]
    t2, written = _table2(engine, out, chosen)
    written += _language_table(engine, out, run)
    written += _category_shares(engine, out, run, labels, colors, low_confidence)
    written += write_table(
        out,
        "wif",
        WIF_FIELDS,
        table_rows(A.web_impact_factors(engine, run_id=run), WIF_FIELDS),
        f"Web Impact Factor variants (run {run}; definitions in store/analytics/__init__.py)",
    )
    written += _change_tables(engine, out, run, compare_to) + _cluster_table(engine, out, run)
    written += _write_impact(engine, out)
    written += write_rank_correlation(engine, out, run, edition, low_confidence=low_confidence)
    cats = table_rows(A.domain_categories(engine), DOMAIN_CATEGORY_FIELDS)
    written.append(_write_csv(out / "domain_categories.csv", DOMAIN_CATEGORY_FIELDS, cats))
    unis = {r.university: {"country": r.country, "rank": r.rank or ""} for r in t2}
    own = {r.university: r.domains for r in t2}  # drawn as the university (analyse.networks)
    env = A.environment(engine, run_id=run) if run else []
    for direction, co in CO_LINKS:
        rows = [r for r in env if r.direction == direction]
        written += _network_files(out / "networks", direction, co, rows, unis, own)
    written.append(_write_index(out, chosen, written))
    return written


def _table2(engine: Any, out: Path, chosen: Chosen) -> tuple[list[Any], list[Path]]:
    """Table 2 of the run, naming its collection, and the collections compared."""
    from store import analytics as A

    t2 = A.table2(engine, run_id=chosen.run_id)
    written = write_table(
        out,
        "table2",
        TABLE2_FIELDS,
        table_rows(t2, TABLE2_FIELDS),
        f"Table 2: the external web environment of the universities (run {chosen.run_id}, "
        f"collection {chosen.collection or 'none'})",
    )
    return t2, written + write_collections(engine, out, chosen)


def _write_csv(path: Path, header: Sequence[str], rows: Iterable[Sequence[Any]]) -> Path:
    """One CSV file: the header, then the rows."""
    with path.open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(header)
        w.writerows(rows)
    return path


def _language_table(engine: Any, out: Path, run: int | None) -> list[Path]:
    """Table 3: one row per university, one column per direction and language."""
    from store import analytics as A

    t3 = A.table3(engine, run_id=run)
    langs = list(dict.fromkeys(r.language for r in t3))
    wide: dict[int, dict[str, Any]] = {}
    for r in t3:
        row = wide.setdefault(
            r.university_id, {"university": r.university, "country": r.country, "rank": r.rank}
        )
        row[f"{r.direction}_{r.language}"] = r.domains
    cols3 = [f"{d}_{lang}" for d in ("outgoing", "citing") for lang in langs]
    return write_table(
        out,
        "table3",
        ["university", "country", "rank", *cols3],
        [
            [w["university"], w["country"], w["rank"], *(w.get(c, 0) for c in cols3)]
            for w in wide.values()
        ],
        f"Table 3: external (outgoing) and citing domains by language (run {run})",
    )


def _category_shares(
    engine: Any,
    out: Path,
    run: int | None,
    labels: dict[str, str],
    colors: dict[str, str],
    low_confidence: float,
) -> list[Path]:
    """The category shares per university and per country under both definitions (by
    domain, the default, and by cluster, the paper's way), side by side with their
    difference, and Figures 2 and 3 under each."""
    from store import analytics as A
    from store.analytics import shares as S

    args: dict[str, Any] = {"run_id": run, "low_confidence": low_confidence}
    uni = {
        d: S.university_shares(engine, definition=d, **args) if run else [] for d in A.DEFINITIONS
    }
    country = {
        d: S.country_shares(engine, definition=d, **args) if run else [] for d in A.DEFINITIONS
    }
    low = (
        f"low_confidence(_share): the domains (the part of known_share) resting on unreviewed "
        f"domains (no analyst override) scored below {low_confidence:g} "
        "([analyse] low_confidence)"
    )
    definitions = (
        "definition domain: each domain in its own category (the default); cluster: each "
        "final cluster's member domains in the cluster's voted category, as the paper counted "
        f"(a cluster whose vote has support <= {S.MAJORITY:g} is mixed; domains in no cluster "
        "are left out)"
    )
    written = write_table(
        out,
        "category_shares_university",
        ["university", "country", *SHARE_FIELDS],
        table_rows([*uni["domain"], *uni["cluster"]], ["university", "country", *SHARE_FIELDS]),
        f"Category shares per university (Figures 2-3; analyst overrides applied; run {run}). "
        f"{definitions}. share: of every domain; known_share: of the domains with evidence "
        f"(unknown = never fetched or no text, left out). {low}",
    )
    written += write_table(
        out,
        "category_shares_country",
        ["country", *SHARE_FIELDS],
        table_rows([*country["domain"], *country["cluster"]], ["country", *SHARE_FIELDS]),
        f"Category shares per country (distinct domains; run {run}). {definitions}. {low}",
    )
    compared = (
        "known_share by domain and by cluster side by side, difference = cluster - domain "
        "(empty: no clustering of the run); the low-confidence parts of each"
    )
    written += write_table(
        out,
        "category_shares_definitions",
        ["university", "country", *COMPARISON_FIELDS],
        table_rows(
            S.compare(uni["domain"], uni["cluster"]), ["university", "country", *COMPARISON_FIELDS]
        ),
        f"The two share definitions per university (run {run}): {compared}",
    )
    written += write_table(
        out,
        "category_shares_definitions_country",
        ["country", *COMPARISON_FIELDS],
        table_rows(
            S.compare(country["domain"], country["cluster"]), ["country", *COMPARISON_FIELDS]
        ),
        f"The two share definitions per country (run {run}): {compared}",
    )
    return written + _share_figures(out, run, uni, country, labels, colors)


def _share_figures(
    out: Path,
    run: int | None,
    uni: dict[str, list[Any]],
    country: dict[str, list[Any]],
    labels: dict[str, str],
    colors: dict[str, str],
) -> list[Path]:
    """Figures 2 and 3 under each share definition (``uni`` and ``country``: the rows of
    each definition)."""
    from store import analytics as A

    order = [*labels, A.UNCATEGORISED, A.MIXED]
    names = {**labels, A.UNCATEGORISED: "uncategorised", A.MIXED: "mixed (no majority)"}
    written = []
    for name, direction, fig_title in (
        ("figure2_outgoing", "outgoing", "Figure 2: sites the universities link to"),
        ("figure3_citing", "citing", "Figure 3: sites citing the universities"),
    ):
        for definition, suffix, how in (
            ("domain", "", "each domain in its own category"),
            ("cluster", "_clusters", "each cluster's members in its category, as the paper"),
        ):
            written.append(
                share_figure(
                    out / f"{name}{suffix}.png",
                    [r for r in uni[definition] if r.direction == direction],
                    [r for r in country[definition] if r.direction == direction],
                    order,
                    names,
                    colors,
                    f"{fig_title} (run {run}; share of the domains with evidence; {how})",
                )
            )
    return written


def _change_tables(engine: Any, out: Path, run: int | None, compare_to: int | None) -> list[Path]:
    """The domains that appeared or disappeared since ``compare_to``, and their summary."""
    from store import analytics as A

    changes = A.environment_changes(engine, before=compare_to, after=run) if run else []
    summary = A.change_summary(engine, before=compare_to, after=run) if run else []
    return write_table(
        out,
        "changes",
        CHANGE_FIELDS,
        table_rows(changes, CHANGE_FIELDS),
        "Domains that appeared or disappeared",
    ) + write_table(
        out,
        "change_summary",
        SUMMARY_FIELDS,
        table_rows(summary, SUMMARY_FIELDS),
        "Change between runs",
    )


def _cluster_table(engine: Any, out: Path, run: int | None) -> list[Path]:
    """The clusters of the newest activity clustering of the run per university, direction
    and unit (the default method, as ``v_rank_factors`` reads: a comparison run of the
    paper's method does not replace them); the newest of another method where none."""
    from store import analytics as A

    of_run = [c for c in A.clusters(engine) if c.run_id in (None, run)]
    newest: dict[tuple[Any, ...], tuple[bool, int]] = {}
    for c in of_run:
        scope = (c.university_id, c.direction, c.unit)
        this = (c.algorithm == D.CLUSTER_METHOD, c.clustering_id)
        newest[scope] = max(newest.get(scope, this), this)
    cl_rows = [
        c for c in of_run if c.clustering_id == newest[(c.university_id, c.direction, c.unit)][1]
    ]
    return write_table(
        out,
        "clusters",
        CLUSTER_FIELDS,
        table_rows(cl_rows, CLUSTER_FIELDS),
        f"Clusters of the newest {D.CLUSTER_METHOD} clustering (else the newest of another "
        f"method) per university and direction, with their themes and the category vote's "
        f"support (run {run})",
    )


def _network_files(
    net: Path,
    direction: str,
    co: str,
    rows: Sequence[Any],
    unis: dict[str, dict[str, Any]],
    own: dict[str, tuple[str, ...]],
) -> list[Path]:
    """The environment graph of one direction (``own``: each university's own domains,
    drawn as the university), the universities' co-link overlaps (table and graph), the
    most shared domains and the centralities."""
    from analyse.networks import (
        centralities,
        colink_overlap,
        environment_graph,
        overlap_graph,
        shared_domains,
        write_graph,
    )

    edges = [
        (r.university, r.domain, r.links if direction == "outgoing" else r.pages) for r in rows
    ]
    doms = {r.domain: {"category": r.category or "", "language": r.language or ""} for r in rows}
    graph = environment_graph(
        edges, direction=direction, university_attrs=unis, domain_attrs=doms,
        university_domains=own,
    )  # fmt: skip
    written = write_graph(graph, net / direction)
    overlaps = colink_overlap(edges, universities=sorted(unis))
    written.append(
        _write_csv(
            net / f"{co}.csv",
            ["university_a", "university_b", "shared", "jaccard", "only_a", "only_b"],
            [[o.a, o.b, o.shared, o.jaccard, o.only_a, o.only_b] for o in overlaps],
        )
    )
    written += write_graph(overlap_graph(overlaps), net / co, formats=["gexf", "graphml"])
    shared = [
        [
            s.domain,
            "; ".join(s.universities),
            s.n_universities,
            s.weight,
            doms.get(s.domain, {}).get("category", ""),
        ]
        for s in shared_domains(edges, min_universities=1, top=200)
    ]
    written.append(
        _write_csv(
            net / f"shared_{direction}.csv",
            ["domain", "universities", "n_universities", "weight", "category"],
            shared,
        )
    )
    centrality = table_rows(centralities(graph), CENTRALITY_FIELDS)
    written.append(_write_csv(net / f"centrality_{direction}.csv", CENTRALITY_FIELDS, centrality))
    return written


def _write_index(out: Path, chosen: Chosen, written: Sequence[Path]) -> Path:
    """``README.md``: what the report is, the collection it was built from and one line
    per file written."""
    index = out / "README.md"
    when = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    others = [c.collection for c in chosen.found if c.collection != chosen.collection]
    lines = [
        f"# Webometrics report: crawl run {chosen.run_id}",
        "",
        f"Collection: {chosen.collection or 'none'} (`webometrics report --collection`).",
        *(
            [f"Other collections with data: {', '.join(others)} (`collections.md`)."]
            if others
            else []
        ),
        "",
        f"Written {when}. Categories apply the analysts' overrides. Definitions (external",
        "links and domains, citing pages and domains, domain language, category shares, Web",
        "Impact Factors) are in the docstring of `store/analytics/__init__.py`; the same numbers",
        "come from the SQL views (`v_university_table2`, `v_environment`, `v_category_share`,",
        "...).",
        "",
        "| file | what |",
        "|---|---|",
    ]
    for p in written:
        lines.append(f"| `{p.relative_to(out)}` | {_describe(p.name)} |")
    index.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return index


def _write_impact(engine: Any, out: Path) -> list[Path]:
    """The impact tables of :mod:`store.impact` (every stored run, not only ``--run``)."""
    from store import impact
    from store.analytics import row_fields

    # the figures' columns without the university's id (the name and country say it)
    src_fields = [f for f in row_fields(impact.SourceFigures) if f != "university_id"]
    rank_fields = [f for f in row_fields(impact.RankFigures) if f != "university_id"]
    return write_table(
        out,
        "impact_sources",
        src_fields,
        table_rows(impact.source_overlap(engine), src_fields),
        "Citing domains by source and the overlap between sources (every stored run; "
        "definitions in store/impact.py)",
    ) + write_table(
        out,
        "impact_ranks",
        rank_fields,
        table_rows(impact.rank_weighted(engine), rank_fields),
        "Rank-weighted in-link counts from Common Crawl web graphs (sums of the citing "
        "nodes' harmonic centrality and PageRank)",
    )


def _describe(name: str) -> str:
    stem = name.split(".")[0]
    return {
        "table2": "Table 2: external links/domains, citing pages/domains per university",
        "table3": "Table 3: outgoing and citing domains by language",
        "collections": "Table 2 of each collection's newest run (live, archive periods)",
        "category_shares_university": "category shares per university (Figures 2-3)",
        "category_shares_country": "category shares per country (Figures 2-3)",
        "category_shares_definitions": "shares by domain and by cluster (the paper's way) "
        "per university, side by side with their difference",
        "category_shares_definitions_country": "shares by domain and by cluster per country",
        "figure2_outgoing_clusters": "Figure 2 by cluster (each cluster's members in its "
        "category, as the paper)",
        "figure3_citing_clusters": "Figure 3 by cluster (as the paper)",
        "rank_sensitivity": "does each correlation's sign hold under both share definitions "
        "and every stored clustering setting",
        "figure2_outgoing": "Figure 2: categories of the sites the universities link to",
        "figure3_citing": "Figure 3: categories of the sites citing the universities",
        "wif": "Web Impact Factor variants",
        "changes": "domains that appeared or disappeared since the earlier run",
        "change_summary": "kept, appeared and disappeared domains per university",
        "clusters": "final clusters with size, category and theme",
        "impact_sources": "citing domains per university and source, overlap of sources",
        "impact_ranks": "rank-weighted in-link counts (harmonic centrality, PageRank)",
        "rank_factors": "clusters, their size and the category shares per university, by rank",
        "rank_correlation": "Spearman's ρ and Kendall's τ of the groups with the rank "
        "under both share definitions (n, p, p adjusted by Holm and by Benjamini-Hochberg, "
        "95 % interval from 10 universities on, note); figure: the headline share against "
        "the rank",
        "domain_categories": "every categorised domain (override applied)",
        "outgoing": "university→domain graph of the outgoing environment",
        "citing": "domain→university graph of the citing environment",
        "co_outlinks": "co-outlink overlap of the universities (shared domains, Jaccard)",
        "co_inlinks": "co-inlink overlap of the universities (shared domains, Jaccard)",
        "shared_outgoing": "domains most universities link to",
        "shared_citing": "domains citing most universities",
        "centrality_outgoing": "centralities in the outgoing graph",
        "centrality_citing": "centralities in the citing graph",
    }.get(stem, "")
