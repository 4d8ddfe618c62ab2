"""The citing environment from a Common Crawl web graph release.

Reads the stored universities and their registered domains, hands them with the dump
files to :class:`crawler.commoncrawl.graph.GraphReader`, and stores what it found in
**one transaction**: a :class:`~store.models.CrawlRun` of kind ``commoncrawl-graph``
(settings: release, level, files; statistics: sizes, timings, edges/s), one
:class:`~store.models.CitingNode` per university x citing node (source
``commoncrawl-graph:<release>``), and the run's :class:`~store.models.Environment` rows
(direction ``citing``, one per university x citing registered domain: ``link_count`` =
the edges from the domain's citing nodes into the university's nodes, ``page_count`` =
0: the graph holds no pages). Any bad input raises before anything is written, so a
failed run leaves nothing behind.

The files come from disk (:class:`GraphScope`) or from the release's published paths:
:func:`plan_release` (the dry run) and :func:`fetch_release` (the download into the cache,
resumed and checked, or the edges streamed) of a :class:`ReleaseScope`, through
:class:`crawler.commoncrawl.download.GraphDownloader`.
"""

from __future__ import annotations

import datetime as dt
import logging
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, func, insert, literal, select
from sqlalchemy.orm import Session

from core.choices import GRAPH_RUN_KIND
from core.entities import KEY_MAX_LENGTH, SiteRules
from core.exceptions import ParameterError
from core.settings import Settings
from crawler.commoncrawl.dumps import release_of
from crawler.commoncrawl.graph import GraphReader, GraphResult
from store.entities import rules_of
from store.models import CitingNode, CrawlRun, Environment, UniversityDomain
from store.session import session_scope
from webometrics.stages import StageResult, refreshes_figures

log = logging.getLogger(__name__)

RUN_KIND = GRAPH_RUN_KIND
BATCH = 5000
SOURCE_PREFIX = "commoncrawl-graph:"


@dataclass(frozen=True)
class GraphScope:
    """The files of one release and how to read them.

    Attributes
    ----------
    vertices, edges : tuple of str
        Every part of the vertices and of the edges.
    ranks : str, optional
        The release's ranks file (harmonic centrality and PageRank).
    level : {"domain", "host"}, optional
        The graph's level (default: told by the vertices' columns).
    release : str, optional
        The release's name (default: from the file names).
    memory_limit : str
        DuckDB's memory limit; beyond it DuckDB spills to disk.
    threads : int
        DuckDB's threads.
    lines : mapping
        File -> its line count, for files a download has already proven complete.

    An edges part may be a :class:`crawler.commoncrawl.download.StreamedPart` (read over
    the network, ``--stream``) instead of a path.
    """

    vertices: tuple[str, ...]
    edges: tuple[Any, ...]
    ranks: str | None = None
    level: str | None = None
    release: str | None = None
    memory_limit: str = "1GB"
    threads: int = 2
    lines: Mapping[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class GraphEnvironment:
    """The run's environment rows: one per university and citing registered domain."""

    citing_domains: int


@dataclass(frozen=True)
class CitingGraphResult(StageResult):
    """The stored crawl run's id and statistics (as in its ``stats``): the source, level,
    the graph's size, the edges into the universities, the citing nodes, the universities
    (those without a node in the graph by id, and each one's nodes), the seconds of each
    pass, the edges read per second and the environment stored."""

    run_id: int
    source: str
    level: str
    vertices: int
    edges: int
    edges_into_universities: int
    citing_nodes: int
    universities: int
    universities_not_in_graph: tuple[int, ...]
    university_nodes: dict[str, int]
    seconds: dict[str, float]
    edges_per_second: int
    environment: GraphEnvironment


def stored_universities(engine: Engine) -> dict[int, list[str]]:
    """University id -> its registered domains, from the store."""
    out: dict[int, list[str]] = defaultdict(list)
    with session_scope(engine) as s:
        for uid, domain in s.execute(
            select(UniversityDomain.university_id, UniversityDomain.domain).order_by(
                UniversityDomain.university_id, UniversityDomain.domain
            )
        ):
            out[uid].append(domain)
    return dict(out)


def _release(options: GraphScope, files: Sequence[Path]) -> str:
    if options.release:
        name = options.release.strip()
        if not name or len(SOURCE_PREFIX) + len(name) > 80 or any(c.isspace() for c in name):
            raise ParameterError(
                f"--release {options.release!r}: give the release's name without spaces "
                "(e.g. cc-main-2024-nov-feb-apr)"
            )
        return name
    found = sorted({r[0] for p in files if (r := release_of(p)) is not None})
    if len(found) == 1:
        return found[0]
    if len(found) > 1:
        raise ParameterError(
            f"the files belong to different releases ({', '.join(found)}): give the files "
            "of one release"
        )
    raise ParameterError(
        "the release is not in the file names: give it with --release NAME "
        "(e.g. cc-main-2024-nov-feb-apr)"
    )


def _node_rows(
    batch: Sequence[Any], run_id: int, source: str, sites: SiteRules
) -> list[dict[str, Any]]:
    """The :class:`CitingNode` rows of a batch of citing nodes; a node's ``domain`` is the
    key of its site (web entity) by ``sites``."""
    rows = []
    for node in batch:
        domain = sites.key(node.name)[:KEY_MAX_LENGTH]
        rows.append(
            {
                "run_id": run_id,
                "university_id": node.university_id,
                "source": source,
                "level": node.level,
                "node": node.name[:253],
                "domain": domain[:253],
                "links": node.links,
                "num_hosts": node.num_hosts,
                "harmonic_rank": node.harmonic_rank,
                "harmonic_centrality": node.harmonic_centrality,
                "pagerank_rank": node.pagerank_rank,
                "pagerank": node.pagerank,
            }
        )
    return rows


def _environment(s: Session, run_id: int) -> int:
    """Group the run's citing nodes into its environment rows; return how many."""
    grouped = (
        select(
            CitingNode.run_id,
            CitingNode.university_id,
            CitingNode.domain,
            literal("citing"),
            func.sum(CitingNode.links),
            literal(0),
        )
        .where(CitingNode.run_id == run_id)
        .group_by(CitingNode.run_id, CitingNode.university_id, CitingNode.domain)
    )
    s.execute(
        insert(Environment).from_select(
            ["run_id", "university_id", "domain", "direction", "link_count", "page_count"],
            grouped,
        )
    )
    n_domains = s.scalar(
        select(func.count()).select_from(Environment).where(Environment.run_id == run_id)
    )
    return int(n_domains or 0)


def _summary(result: GraphResult, source: str) -> dict[str, Any]:
    """The run's statistics but its environment."""
    return {
        "source": source,
        "level": result.level,
        "vertices": result.vertices,
        "edges": result.edges,
        "edges_into_universities": result.edges_in,
        "citing_nodes": result.citing_nodes,
        "universities": len(result.university_nodes),
        "universities_not_in_graph": sorted(
            uid for uid, n in result.university_nodes.items() if n == 0
        ),
        "university_nodes": {str(k): v for k, v in sorted(result.university_nodes.items())},
        "seconds": {k: round(v, 3) for k, v in result.seconds.items()},
        "edges_per_second": round(result.edges_per_second),
    }


def store_graph(engine: Engine, result: GraphResult, files: dict[str, Any]) -> CitingGraphResult:
    """Store a read release as one crawl run, in one transaction; returns a summary.

    The citing nodes come from :meth:`crawler.commoncrawl.graph.GraphResult.batches`
    (DuckDB's result, a batch at a time); the environment rows are grouped from them by
    the database.
    """
    source = f"{SOURCE_PREFIX}{result.release}"
    stats = _summary(result, source)
    with session_scope(engine) as s:
        run = CrawlRun(
            kind=RUN_KIND,
            status="running",
            started_at=dt.datetime.now(dt.UTC),
            settings={"release": result.release, "level": result.level, **files},
            stats={},
        )
        s.add(run)
        s.flush()
        run_id = run.id
        stored = 0
        sites = rules_of(s)
        for batch in result.batches(BATCH):
            rows = _node_rows(batch, run_id, source, sites)
            s.execute(insert(CitingNode), rows)
            stored += len(rows)
            log.debug("%s of %s citing nodes stored", f"{stored:,}", f"{result.citing_nodes:,}")
        n_domains = _environment(s, run_id)
        stats["environment"] = {"citing_domains": n_domains}
        run.stats = stats
        run.status = "finished"
        run.finished_at = dt.datetime.now(dt.UTC)
    log.info(
        "crawl run %d: %s citing %ss in %s citing domains stored (%s)",
        run_id,
        f"{stored:,}",
        result.level,
        f"{n_domains:,}",
        source,
    )
    return _result(run_id, stats)


def _result(run_id: int, stats: dict[str, Any]) -> CitingGraphResult:
    """The stage's result of the run's ``stats``."""
    return CitingGraphResult(
        run_id=run_id,
        source=stats["source"],
        level=stats["level"],
        vertices=stats["vertices"],
        edges=stats["edges"],
        edges_into_universities=stats["edges_into_universities"],
        citing_nodes=stats["citing_nodes"],
        universities=stats["universities"],
        universities_not_in_graph=tuple(stats["universities_not_in_graph"]),
        university_nodes=stats["university_nodes"],
        seconds=stats["seconds"],
        edges_per_second=stats["edges_per_second"],
        environment=GraphEnvironment(**stats["environment"]),
    )


@refreshes_figures
def run(
    engine: Engine,
    settings: Settings,
    scope: GraphScope | None = None,
    *,
    progress: bool = False,
) -> CitingGraphResult:
    """Read a release for the stored universities and store its citing nodes.

    Parameters
    ----------
    engine : Engine
    settings : Settings
        Not read: the stage's options are its scope's (DuckDB's resources included).
    scope : GraphScope
        The release's files and how to read them (required).
    progress : bool
        Not used: DuckDB reads the dumps without a progress bar.

    Returns
    -------
    CitingGraphResult
        ``run_id`` and the run's statistics.

    Raises
    ------
    ParameterError
        No files given, no university is stored, or the release or level cannot be told.
    GraphInputError
        A file is missing, truncated or malformed, or the files do not belong together.
    """
    if scope is None or not scope.vertices or not scope.edges:
        raise ParameterError(
            "give the web graph's vertices and edges files (every part of each; "
            "`webometrics run --graph-vertices FILE... --graph-edges FILE...`)"
        )
    vertices, edges, ranks = scope.vertices, scope.edges, scope.ranks
    files = [Path(str(p)) for p in [*vertices, *edges, *([ranks] if ranks else [])]]
    release = _release(scope, files)
    universities = stored_universities(engine)
    if not universities:
        raise ParameterError(
            "no university is stored: load them first with `webometrics universities import FILE`"
        )
    reader = GraphReader(level=scope.level, memory_limit=scope.memory_limit, threads=scope.threads)
    described = {
        "vertices": [str(p) for p in vertices],
        "edges": [str(p) for p in edges],
        "ranks": str(ranks) if ranks else None,
    }
    with reader.stream(
        universities, vertices, edges, ranks, release=release, lines=scope.lines
    ) as result:
        return store_graph(engine, result, described)


# -- a release from Common Crawl's published paths ----------------------------------------------
@dataclass(frozen=True)
class ReleaseScope:
    """Which release to fetch, where to cache it and how.

    Attributes
    ----------
    release : str
        The release's name (``cc-main-2024-nov-feb-apr``).
    level : {"domain", "host"}
    ranks : bool
        Fetch the ranks file too.
    cache_dir : str, optional
        The cache folder (default ``[commoncrawl] cache_dir``, else the user's data folder).
    base_url : str, optional
        The data root (default ``[commoncrawl] data_url``).
    stream : bool
        Read the edges parts not yet cached over the network instead of storing them.
    """

    release: str
    level: str = "domain"
    ranks: bool = True
    cache_dir: str | None = None
    base_url: str | None = None
    stream: bool = False


def downloader(settings: Settings, scope: ReleaseScope, *, progress: bool = False) -> Any:
    """The :class:`~crawler.commoncrawl.download.GraphDownloader` of ``scope``."""
    from crawler.commoncrawl.download import DownloadPolicy, GraphDownloader, default_cache_dir

    cc = settings.commoncrawl
    cache = scope.cache_dir or cc.cache_dir
    return GraphDownloader(
        Path(cache) if cache else default_cache_dir(),
        base_url=scope.base_url or cc.data_url,
        policy=DownloadPolicy.from_settings(settings),
        assumed_bytes_per_second=cc.assumed_mb_per_second * 1e6,
        reserve_bytes=int(cc.reserve_mb * 2**20),
        graphinfo_url=cc.graphinfo_url or None,
        progress=progress,
    )


def plan_release(settings: Settings, scope: ReleaseScope) -> Any:
    """The release's files, their sizes and states in the cache, the disk and the time
    (:class:`~crawler.commoncrawl.download.Plan`); requests only what the cache lacks
    (the listings and a HEAD per file, once)."""
    dl = downloader(settings, scope)
    rel = dl.resolve(scope.release, scope.level, ranks=scope.ranks)
    return dl.plan(rel, stream=scope.stream)


def fetch_release(
    settings: Settings, scope: ReleaseScope, *, progress: bool = False
) -> tuple[Any, GraphScope]:
    """Download (or reuse) the release into the cache; return the fetch's summary
    (:class:`~crawler.commoncrawl.download.Fetched`) and the :class:`GraphScope` that reads
    it (the parts checked on the way are not inflated again).

    Raises
    ------
    ParameterError
        Not a release name.
    ConfigError
        No such release on the server, the disk is short, a part fails its check twice.
    StageError
        The server cannot be reached or keeps failing.
    """
    dl = downloader(settings, scope, progress=progress)
    rel = dl.resolve(scope.release, scope.level, ranks=scope.ranks)
    fetched = dl.fetch(rel, stream=scope.stream)
    graph = GraphScope(
        vertices=tuple(str(p) for p in fetched.vertices),
        edges=tuple(p if not isinstance(p, Path) else str(p) for p in fetched.edges),
        ranks=str(fetched.ranks) if fetched.ranks else None,
        level=scope.level,
        release=rel.release,
        lines=dict(fetched.lines),
    )
    return fetched, graph
