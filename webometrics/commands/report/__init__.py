"""``webometrics report --out DIR [--run ID | --collection LABEL]``: the paper's tables
and figures from the database, as CSV, Markdown and PNG, with the link networks for
Gephi and VOSviewer.

Files written (every one, also when a table is empty: then it has its header only):

======================================  ===================================================
``README.md``                           index of the files, the run, the definitions
``table2.csv|md``                       Table 2: external links/domains, citing pages/domains
``collections.csv|md``                  Table 2 of each collection's newest run (only
                                        when two or more collections have data: the
                                        live web, archive periods; ``--collection``)
``table3.csv|md``                       Table 3: outgoing and citing domains in ru / en
``category_shares_university.csv|md``   Figures 2-3 per university (overrides applied)
``category_shares_country.csv|md``      Figures 2-3 per country
``figure2_outgoing.png``                Figure 2: categories of the outgoing environment
``figure3_citing.png``                  Figure 3: categories of the citing environment
``wif.csv|md``                          Web Impact Factor variants
``changes.csv|md``                      domains that appeared / disappeared since the
                                        previous run (or ``--compare-to``)
``change_summary.csv|md``               kept / appeared / disappeared per university
``clusters.csv|md``                     final clusters: university, direction, size,
                                        category, theme
``impact_sources.csv|md``               citing domains and hosts per university and source
                                        (crawl, backlink export, Common Crawl graph), with
                                        the overlap between sources (every stored run)
``impact_ranks.csv|md``                 rank-weighted in-link counts: sums of the citing
                                        nodes' harmonic centrality and PageRank per web
                                        graph release and level
``rank_factors.csv|md``                 per direction and university: rank, impact rank,
                                        clusters (two or more members), their size, the
                                        category shares over the domains with evidence
``rank_correlation.csv|md``             Spearman's ρ and Kendall's τ of each factor with
                                        the rank: n, bootstrap 95 % interval, p-value,
                                        the sign in words, a note when n < 5 or undefined
``rank_correlation.png``                universities + scientific communities share
                                        against the rank, one panel per direction
                                        (the ranks of ``--rank-edition``, default
                                        the newest edition)
``domain_categories.csv``               every categorised domain, override applied
``networks/<direction>.*``              university–domain graph: ``.gexf``, ``.graphml``,
                                        ``.nodes.csv``, ``.edges.csv``, ``.vos_map.txt``,
                                        ``.vos_network.txt``
``networks/co_<out|in>links.csv|gexf``  co-outlink / co-inlink overlaps of universities
``networks/shared_<direction>.csv``     domains shared by most universities
``networks/centrality_<direction>.csv`` degree, betweenness, PageRank
======================================  ===================================================

The package: this module is the command; :mod:`.build` writes the files
(:func:`build_report`); :mod:`.ranks` the groups against the rank; :mod:`.render`
renders a table as CSV and Markdown and the category shares as a figure; :mod:`.i18n`
translates the report (``--language ru``).
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from webometrics.commands.report import i18n
from webometrics.commands.report.build import FIGURE_FILES, TABLE_FILES, build_report
from webometrics.commands.report.render import markdown_table

if TYPE_CHECKING:
    from webometrics.cli import Context

__all__ = ["FIGURE_FILES", "ORDER", "TABLE_FILES", "build_report", "markdown_table", "register"]

ORDER = 70


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "report",
        help="write the tables (CSV, Markdown), figures (PNG) and networks (GEXF, GraphML)",
        description=(
            "Write the paper's Table 2 and Table 3, the category shares per university and "
            "per country (Figures 2 and 3), Web Impact Factors, the change since the previous "
            "run, the clusters with their themes, and the university-domain networks "
            "(GEXF, GraphML, CSV, VOSviewer) of one crawl run into a folder."
        ),
    )
    p.add_argument("--out", required=True, metavar="DIR", help="output folder (created)")
    p.add_argument(
        "--run", type=int, metavar="ID", help="crawl run (default: the latest with data)"
    )
    p.add_argument(
        "--collection",
        metavar="LABEL",
        help="the collection whose newest run with data the report reads (default: live, "
        "the web as crawled; an archived one is named `<archive> <from>..<to>`, e.g. "
        "'wayback 2015-01-01..2015-12-31', as `webometrics crawl --archive` stored it; an "
        "unknown label is refused with the list of labels). With two or more collections "
        "the report adds collections.csv|md: Table 2 of each collection's newest run",
    )
    p.add_argument(
        "--compare-to",
        type=int,
        metavar="ID",
        help="earlier run for the changes (default: the run before --run)",
    )
    p.add_argument(
        "--rank-edition",
        metavar="NAME",
        help="the rank edition the groups are correlated with (rank_factors, "
        "rank_correlation, rank_sensitivity; default: the newest; `webometrics "
        "universities ranks` lists them)",
    )
    p.add_argument(
        "--language",
        choices=("en", "ru"),
        default="en",
        help="language of the report: headings, captions, table headers, notes, the "
        "figures and the category labels (default en; the CSV files keep their English "
        "column names)",
    )
    p.set_defaults(func=_report)


def _fresh_figures(ctx: Context) -> None:
    """Compute the figures first when the data changed since (a crawl still running, rows
    written by hand); on a database that cannot be written, say how old they are."""
    from core.exceptions import ReadOnlyDatabaseError
    from store import aggregates
    from store.freshness import staleness

    try:
        engine = ctx.engine()
    except ReadOnlyDatabaseError:
        stale = staleness(ctx.engine(read_only=True))
        if stale is not None:
            print(f"webometrics: warning: {stale.message()}", file=sys.stderr)
        return
    done = aggregates.refresh_if_stale(engine)
    if not done["aggregate_fresh"]:
        print("figures were stale: computed again before the report")


def _report(ctx: Context) -> int:
    from analyse.taxonomy import load_taxonomy

    out = ctx.output_folder(ctx.args.out)
    _fresh_figures(ctx)
    engine = ctx.engine(read_only=True)
    taxonomy = load_taxonomy(ctx.settings.analyse.taxonomy)
    with i18n.language(ctx.args.language):  # the figures' texts
        written = build_report(
            engine,
            out,
            run_id=ctx.args.run,
            compare_to=ctx.args.compare_to,
            category_labels=taxonomy.labels(ctx.args.language, with_unknown=True),
            category_colors=taxonomy.colors(),
            low_confidence=ctx.settings.analyse.low_confidence,
            rank_edition=ctx.args.rank_edition,
            collection=ctx.args.collection,
        )
    i18n.translate_report(written, ctx.args.language)  # the Markdown files
    print(f"report: {len(written)} files in {ctx.args.out}")
    for path in written:
        print(f"  {path}")
    return 0
