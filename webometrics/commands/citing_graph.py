"""``webometrics citing commoncrawl-graph`` (registered by :mod:`webometrics.commands.citing`)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from core.choices import GRAPH_LEVELS

if TYPE_CHECKING:
    from webometrics.cli import Context
    from webometrics.stages.citing_graph import GraphScope

EPILOG = """\
two ways to give a release:
  --release NAME alone   the files are found from the release's published paths below
                         https://data.commoncrawl.org/projects/hyperlinkgraph/NAME/LEVEL/
                         (NAME-LEVEL-{vertices,edges}.txt.gz, or the .paths.gz listings
                         of their parts, and NAME-LEVEL-ranks.txt.gz), downloaded into the
                         cache (--cache, [commoncrawl] cache_dir; default the user's data
                         folder), resumed after an interruption, checked (size and gzip end)
                         and reused next time without a request
  --vertices/--edges     files already on disk (the old way; every part of each)

files of a release:
  domain graph  <release>-domain-vertices.txt.gz   id, reversed domain, number of hosts
                <release>-domain-edges.txt.gz      from_id, to_id
                <release>-domain-ranks.txt.gz      harmonic centrality and PageRank
  host graph    host/vertices/part-*.gz, host/edges/part-*.gz (listed in
                <release>-host-vertices.paths.gz, -edges.paths.gz), <release>-host-ranks.txt.gz

examples:
  webometrics citing commoncrawl-graph --release cc-main-2024-nov-feb-apr --dry-run
  webometrics citing commoncrawl-graph --release cc-main-2024-nov-feb-apr
  webometrics citing commoncrawl-graph --release cc-main-2024-nov-feb-apr --stream
  webometrics citing commoncrawl-graph \\
      --vertices cc-main-2024-nov-feb-apr-domain-vertices.txt.gz \\
      --edges cc-main-2024-nov-feb-apr-domain-edges.txt.gz \\
      --ranks cc-main-2024-nov-feb-apr-domain-ranks.txt.gz

politeness: one file at a time, at most one request a second ([commoncrawl]
request_interval), 503/429/5xx, time-outs and cut connections retried with a growing pause
(Retry-After honoured), as Common Crawl's status page asks.

exit codes: 0 stored (or dry run shown), 1 the server could not be reached or kept
failing (what was downloaded is kept and resumed next time), 2 bad input (not a release
name, no such release, disk short, missing, truncated or malformed file, files that do
not belong together, no university stored: nothing is stored), 3 schema out of date,
4 another download of the release into the same cache is running.
"""


def add_parser(csub: argparse._SubParsersAction) -> None:
    """Register ``commoncrawl-graph``."""
    p = csub.add_parser(
        "commoncrawl-graph",
        help="the domains or hosts that link to each university in a Common Crawl web graph",
        description=(
            "Download (--release NAME: found from the published paths, cached, resumed,\n"
            "checked) or take (--vertices/--edges) the text dumps of a Common Crawl web\n"
            "graph release (domain or host level) and stream them with DuckDB: find each\n"
            "stored university's nodes (reversed names, IDNA, a leading www. stripped; at\n"
            "host level every host under its domains), collect every node with an edge\n"
            "into them (the university's own links excluded) and store them as a citing\n"
            "crawl run: the citing domains or hosts with their source\n"
            "commoncrawl-graph:<release>, the number of hosts of a citing domain and, from\n"
            "the ranks file, harmonic centrality and PageRank. Memory is bounded by\n"
            "--memory-limit, not by the size of the dumps; everything is stored in one\n"
            "transaction, or nothing."
        ),
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "--vertices", nargs="+", metavar="FILE", help="every vertices part (local files)"
    )
    p.add_argument("--edges", nargs="+", metavar="FILE", help="every edges part (local files)")
    p.add_argument("--ranks", metavar="FILE", help="the release's ranks file (optional)")
    p.add_argument(
        "--level",
        choices=GRAPH_LEVELS,
        help="the graph's level (default: domain with --release alone, else told by the "
        "vertices' columns)",
    )
    p.add_argument(
        "--release",
        metavar="NAME",
        help="the release, e.g. cc-main-2024-nov-feb-apr; alone, its files are downloaded "
        "(cached); with --vertices/--edges, the name (default: from the file names)",
    )
    p.add_argument(
        "--cache",
        metavar="DIR",
        help="the download cache (default [commoncrawl] cache_dir, else the user's data "
        "folder: ~/.local/share/webometrics/commoncrawl on Linux)",
    )
    p.add_argument(
        "--dry-run",
        action="store_true",
        help="show the release's files, their sizes, what the cache holds, the disk free and "
        "the time to expect; download and store nothing",
    )
    p.add_argument(
        "--stream",
        action="store_true",
        help="read the edges parts not yet in the cache over the network instead of "
        "storing them (when the disk is short); vertices and ranks are still cached",
    )
    p.add_argument("--no-ranks", action="store_true", help="do not download the ranks file")
    p.add_argument(
        "--base-url",
        metavar="URL",
        help="the data root (default [commoncrawl] data_url, https://data.commoncrawl.org/)",
    )
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
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
    local = bool(args.vertices or args.edges)
    if local:
        if not (args.vertices and args.edges):
            raise ParameterError(
                "give both --vertices and --edges (every part of each), or --release NAME "
                "alone to download the release"
            )
        remote_only = [
            name
            for name, given in (
                ("--dry-run", args.dry_run),
                ("--stream", args.stream),
                ("--cache", args.cache),
                ("--base-url", args.base_url),
                ("--no-ranks", args.no_ranks),
            )
            if given
        ]
        if remote_only:
            raise ParameterError(
                f"{', '.join(remote_only)}: only with --release NAME alone (a download); "
                "local files are read as given"
            )
        scope = GraphScope(
            vertices=tuple(args.vertices),
            edges=tuple(args.edges),
            ranks=args.ranks,
            level=args.level,
            release=args.release,
            memory_limit=args.memory_limit,
            threads=args.threads,
        )
    else:
        if not args.release:
            raise ParameterError(
                "give --release NAME (e.g. cc-main-2024-nov-feb-apr: its files are "
                "downloaded) or the local files with --vertices FILE... --edges FILE..."
            )
        if args.ranks:
            raise ParameterError("--ranks FILE: only with --vertices/--edges (local files)")
        fetched = _download(ctx)
        if fetched is None:
            return 0
        scope = fetched
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


def _download(ctx: Context) -> GraphScope | None:
    """The dry run (``None``), or the release downloaded and its :class:`GraphScope`."""
    from dataclasses import replace
    from pathlib import Path

    from crawler.commoncrawl.download import check_release, describe, duration, human
    from webometrics.stages.citing_graph import ReleaseScope, fetch_release, plan_release

    args = ctx.args
    scope = ReleaseScope(
        release=check_release(args.release),
        level=args.level or "domain",
        ranks=not args.no_ranks,
        cache_dir=args.cache,
        base_url=args.base_url,
        stream=args.stream,
    )
    if args.dry_run:
        for line in describe(plan_release(ctx.settings, scope)):
            print(line)
        return None
    progress = not args.no_progress and not getattr(args, "quiet", False)
    fetched, graph = fetch_release(ctx.settings, scope, progress=progress)
    streamed = sum(1 for p in fetched.edges if not isinstance(p, Path))
    rate = fetched.downloaded / fetched.seconds if fetched.seconds else 0.0
    print(
        f"{fetched.release.release} {fetched.release.level}: "
        f"{len(fetched.vertices) + len(fetched.edges) + bool(fetched.ranks)} files; "
        f"{fetched.reused} from the cache, {human(fetched.downloaded)} downloaded"
        + (f" in {duration(fetched.seconds)} ({human(rate)}/s)" if fetched.downloaded else "")
        + (f", {fetched.resumed} resumed" if fetched.resumed else "")
        + (f", {fetched.refetched} fetched again after a failed check" if fetched.refetched else "")
        + (f"; {streamed} edges parts streamed" if streamed else "")
    )
    return replace(graph, memory_limit=args.memory_limit, threads=args.threads)
