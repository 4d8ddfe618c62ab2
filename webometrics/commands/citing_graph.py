"""``webometrics citing commoncrawl-graph`` (registered by :mod:`webometrics.commands.citing`)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from core.choices import GRAPH_LEVELS

if TYPE_CHECKING:
    from webometrics.cli import Context

EPILOG = """\
files (one release, as published under https://data.commoncrawl.org/projects/hyperlinkgraph/):
  domain graph  <release>-domain-vertices.txt.gz   id, reversed domain, number of hosts
                <release>-domain-edges.txt.gz      from_id, to_id
                <release>-domain-ranks.txt.gz      harmonic centrality and PageRank
  host graph    host/vertices/part-*.gz, host/edges/part-*.gz, <release>-host-ranks.txt.gz
Give every part of the vertices and of the edges (a shell glob does). Gzip parts are
checked to be complete before they are read.

example:
  webometrics citing commoncrawl-graph \\
      --vertices cc-main-2024-nov-feb-apr-domain-vertices.txt.gz \\
      --edges cc-main-2024-nov-feb-apr-domain-edges.txt.gz \\
      --ranks cc-main-2024-nov-feb-apr-domain-ranks.txt.gz

exit codes: 0 stored, 2 bad input (missing, truncated or malformed file, files that do
not belong together, no university stored: nothing is stored), 3 schema out of date.
"""


def add_parser(csub: argparse._SubParsersAction) -> None:
    """Register ``commoncrawl-graph``."""
    p = csub.add_parser(
        "commoncrawl-graph",
        help="the domains or hosts that link to each university in a Common Crawl web graph",
        description=(
            "Stream the text dumps of a Common Crawl web graph release (domain or host\n"
            "level) with DuckDB, find each stored university's nodes (reversed names, IDNA,\n"
            "a leading www. stripped; at host level every host under its domains), collect\n"
            "every node with an edge into them (the university's own links excluded) and\n"
            "store them as a citing crawl run: the citing domains or hosts with their source\n"
            "commoncrawl-graph:<release>, the number of hosts of a citing domain and, from\n"
            "the ranks file, harmonic centrality and PageRank. Memory is bounded by\n"
            "--memory-limit, not by the size of the dumps; everything is stored in one\n"
            "transaction, or nothing."
        ),
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "--vertices", nargs="+", required=True, metavar="FILE", help="every vertices part"
    )
    p.add_argument("--edges", nargs="+", required=True, metavar="FILE", help="every edges part")
    p.add_argument("--ranks", metavar="FILE", help="the release's ranks file (optional)")
    p.add_argument(
        "--level",
        choices=GRAPH_LEVELS,
        help="the graph's level (default: told by the vertices' columns)",
    )
    p.add_argument(
        "--release",
        metavar="NAME",
        help="the release name, e.g. cc-main-2024-nov-feb-apr (default: from the file names)",
    )
    p.add_argument(
        "--memory-limit",
        default="1GB",
        metavar="SIZE",
        help="DuckDB's memory limit; beyond it DuckDB spills to disk (default 1GB)",
    )
    p.add_argument(
        "--threads", type=int, default=2, metavar="N", help="DuckDB's threads (default 2)"
    )
    p.set_defaults(func=_run)


def _run(ctx: Context) -> int:
    from core.exceptions import ParameterError
    from webometrics.stages.citing_graph import GraphScope, run

    args = ctx.args
    if args.threads < 1:
        raise ParameterError(f"--threads {args.threads}: use 1 or more")
    scope = GraphScope(
        vertices=tuple(args.vertices),
        edges=tuple(args.edges),
        ranks=args.ranks,
        level=args.level,
        release=args.release,
        memory_limit=args.memory_limit,
        threads=args.threads,
    )
    summary = run(ctx.engine(), ctx.settings, scope)
    missing = list(summary.universities_not_in_graph)
    print(
        f"crawl run {summary.run_id}: {summary.citing_nodes:,} citing "
        f"{summary.level}s ({summary.environment.citing_domains:,} registered "
        "domains) of "
        f"{summary.universities - len(missing)} universities from {summary.source} "
        f"({summary.vertices:,} vertices, {summary.edges:,} edges, "
        f"{summary.edges_per_second:,} edges/s)"
    )
    if missing:
        print(f"  {len(missing)} universities have no node in the graph: ids {missing}")
    return 0
