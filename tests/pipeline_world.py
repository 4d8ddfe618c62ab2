"""The pipeline-made world: one database filled by the real stages, once per session.

``pipeline_db`` crawls the local test web (:mod:`testbed`, served as the crawler's HTTP
proxy on 127.0.0.1) in both directions, then runs extract, dedup, cluster (the default
method, one clustering per university and direction; ``--method paper``; ``--university
all``) and analyse in-process, on SQLite — what ``make demo`` stores, in a reduced scope:
depth 1 and at most :data:`MAX_PAGES` pages per university, one page per external
domain. The hand-made world of :mod:`tests.stored_world` has the shapes the tests chose;
this one has the shapes the pipeline stores (Leiden levels, the paper's r levels,
redirect stubs, unknown categories), so the dashboard's views are tested on both.

It takes about 25 s on 2 cores (the test web's build is cached per machine; see
``shared_build``); ``seconds`` holds the time of each stage.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from sqlalchemy import Engine

    from core.settings import Settings

REPO = Path(__file__).resolve().parent.parent
UNIVERSITIES = REPO / "testbed" / "universities.toml"
DEPTH = 1
MAX_PAGES = 40  # per university: enough for clusters in both directions of all four
EXTERNAL_PAGES = 1  # per external domain


@dataclass
class PipelineWorld:
    """A database the real pipeline filled: its URL, what each stage returned, the
    seconds each stage took, and after each stage the crawl runs whose figures were fresh
    (``store.aggregates.fresh_run_ids``: ``None`` when stale)."""

    url: str
    stats: dict[str, Any] = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=dict)
    fresh_after: dict[str, list[int] | None] = field(default_factory=dict)

    @property
    def engine(self) -> Engine:
        """A new engine on the database (the caller disposes of it)."""
        from store import make_engine

        return make_engine(self.url)


def pipeline_settings() -> Settings:
    """The default settings with test-crawl speeds (no politeness delays, short
    timeouts) and the reduced scope."""
    from core.settings import Settings

    return Settings().replace(
        crawl={
            "depth": DEPTH,
            "max_pages_per_university": MAX_PAGES,
            "external_pages_per_domain": EXTERNAL_PAGES,
            "download_delay": 0.0,
            "autothrottle": False,
            "download_timeout": 15.0,
            "concurrent_requests": 32,
            "concurrent_per_domain": 8,
            "retry_times": 1,
            "flush_seconds": 0.5,
        }
    )


def build_pipeline_world(folder: Path, data_dir: Path) -> PipelineWorld:
    """Run the pipeline into ``folder/pipeline.db``; returns the world."""
    from store import aggregates, make_engine, schema
    from testbed.build import shared_build
    from testbed.server import TestbedServer
    from webometrics.stages import analyse, cluster, crawl, dedup, extract

    world = PipelineWorld(url=f"sqlite:///{folder / 'pipeline.db'}")
    settings = pipeline_settings()
    testbed_dir = shared_build(data_dir=data_dir)
    engine = make_engine(world.url)
    schema.upgrade(engine)

    def stage(name: str, fn: Callable[..., Any], config: Any, scope: Any = None) -> None:
        t0 = time.monotonic()
        world.stats[name] = fn(engine, config, scope).stats()
        world.seconds[name] = round(time.monotonic() - t0, 2)
        world.fresh_after[name] = aggregates.fresh_run_ids(engine)

    try:
        with TestbedServer(testbed_dir) as server:
            crawl_settings = settings.replace(
                crawl={"proxy": server.proxy_url, "jobdir": str(folder / "job")}
            )
            scope = crawl.CrawlScope(
                universities_file=str(UNIVERSITIES), direction="both", testbed_dir=str(testbed_dir)
            )
            stage("crawl", crawl.run, crawl_settings, scope)
        # in-process extraction: no pool to start
        stage("extract", extract.run, settings.replace(extract={"workers": 0}))
        stage("dedup", dedup.run, settings)
        stage("cluster", cluster.run, settings)
        stage("cluster --method paper", cluster.run, settings.replace(cluster={"method": "paper"}))
        stage("cluster --university all", cluster.run, settings, cluster.ClusterScope("all"))
        stage("analyse", analyse.run, settings)
    finally:
        engine.dispose()
    return world


@pytest.fixture(scope="session")
def pipeline_db(tmp_path_factory: pytest.TempPathFactory, shared_data: Path) -> PipelineWorld:
    """The database the real pipeline made from the local test web (read it, do not
    write to it: it is shared by the session; copy it for a test that writes)."""
    return build_pipeline_world(tmp_path_factory.mktemp("pipeline-world"), shared_data)


@pytest.fixture
def pipeline_db_copy(pipeline_db: PipelineWorld, tmp_path: Path) -> Iterator[PipelineWorld]:
    """A copy of the pipeline-made database, for a test that writes (e.g. an override)."""
    import shutil

    src = Path(pipeline_db.url.removeprefix("sqlite:///"))
    dst = tmp_path / "pipeline-copy.db"
    shutil.copyfile(src, dst)
    yield PipelineWorld(url=f"sqlite:///{dst}", stats=pipeline_db.stats)
