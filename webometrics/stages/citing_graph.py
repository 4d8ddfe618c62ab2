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
"""

from __future__ import annotations

import datetime as dt
import logging
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, func, insert, literal, select

from core.choices import GRAPH_RUN_KIND
from core.domains import registered_domain
from core.exceptions import ParameterError
from crawler.commoncrawl.dumps import release_of
from crawler.commoncrawl.graph import GraphReader, GraphResult
from store.models import CitingNode, CrawlRun, Environment, UniversityDomain
from store.session import session_scope

log = logging.getLogger(__name__)

RUN_KIND = GRAPH_RUN_KIND
BATCH = 5000
SOURCE_PREFIX = "commoncrawl-graph:"


@dataclass(frozen=True)
class GraphOptions:
    """How to read a release: level, release name and DuckDB's resources."""

    level: str | None = None
    release: str | None = None
    memory_limit: str = "1GB"
    threads: int = 2


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


def _release(options: GraphOptions, files: Sequence[Path]) -> str:
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


def store_graph(engine: Engine, result: GraphResult, files: dict[str, Any]) -> dict[str, Any]:
    """Store a read release as one crawl run, in one transaction; returns a summary.

    The citing nodes come from :meth:`GraphResult.batches` (DuckDB's result, a batch at
    a time); the environment rows are grouped from them by the database.
    """
    source = f"{SOURCE_PREFIX}{result.release}"
    now = dt.datetime.now(dt.UTC)
    stats: dict[str, Any] = {
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
    with session_scope(engine) as s:
        run = CrawlRun(
            kind=RUN_KIND,
            status="running",
            started_at=now,
            settings={"release": result.release, "level": result.level, **files},
            stats={},
        )
        s.add(run)
        s.flush()
        run_id = run.id
        stored = 0
        for batch in result.batches(BATCH):
            rows = []
            for node in batch:
                domain = node.name if node.level == "domain" else registered_domain(node.name)
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
            s.execute(insert(CitingNode), rows)
            stored += len(rows)
            log.debug("%s of %s citing nodes stored", f"{stored:,}", f"{result.citing_nodes:,}")
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
        stats["environment"] = {"citing_domains": int(n_domains or 0)}
        run.stats = stats
        run.status = "finished"
        run.finished_at = dt.datetime.now(dt.UTC)
    log.info(
        "crawl run %d: %s citing %ss in %s citing domains stored (%s)",
        run_id,
        f"{stored:,}",
        result.level,
        f"{stats['environment']['citing_domains']:,}",
        source,
    )
    return {"run_id": run_id, **stats}


def run(
    engine: Engine,
    vertices: Sequence[str | Path],
    edges: Sequence[str | Path],
    ranks: str | Path | None = None,
    options: GraphOptions | None = None,
) -> dict[str, Any]:
    """Read a release for the stored universities and store its citing nodes.

    Returns
    -------
    dict
        ``run_id`` and the run's statistics.

    Raises
    ------
    ParameterError
        No university is stored, or the release or level cannot be told.
    GraphInputError
        A file is missing, truncated or malformed, or the files do not belong together.
    """
    options = options or GraphOptions()
    files = [Path(p) for p in [*vertices, *edges, *([ranks] if ranks else [])]]
    release = _release(options, files)
    universities = stored_universities(engine)
    if not universities:
        raise ParameterError(
            "no university is stored: load them first with `webometrics universities import FILE`"
        )
    reader = GraphReader(
        level=options.level, memory_limit=options.memory_limit, threads=options.threads
    )
    described = {
        "vertices": [str(p) for p in vertices],
        "edges": [str(p) for p in edges],
        "ranks": str(ranks) if ranks else None,
    }
    with reader.stream(universities, vertices, edges, ranks, release=release) as result:
        return store_graph(engine, result, described)
