"""The citing candidates of a crawl: backlink exports, URL lists, the test web's citing
files and the links found in stored pages (:mod:`crawler.sources`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from sqlalchemy import Engine

from core.exceptions import ConfigError
from webometrics.stages.crawl.job import CrawlJob, CrawlScope, write_private

#: the job folder's file keeping the citing candidates (a resumed crawl reads them back)
CANDIDATES_FILE = "citing-candidates.json"


def job_candidates(engine: Engine, job: CrawlJob) -> tuple[list[Any], dict[str, int]]:
    """The citing candidates of the job and the rows skipped by source: those kept in
    its folder (a resumed crawl), else :func:`citing_candidates`, then kept there."""
    from crawler.storage import CitingCandidate

    path = job.path / CANDIDATES_FILE
    if path.is_file():
        stored = json.loads(path.read_text(encoding="utf-8"))
        candidates = [CitingCandidate(**c) for c in stored["candidates"]]
        return candidates, stored.get("skipped", {})
    candidates, skipped = citing_candidates(engine, job.scope, job.universities)
    write_private(
        path,
        json.dumps({"candidates": [c.__dict__ for c in candidates], "skipped": skipped}),
    )
    return candidates, skipped


def citing_candidates(
    engine: Engine, scope: CrawlScope, universities: list[dict[str, Any]]
) -> tuple[list[Any], dict[str, int]]:
    """The citing candidates of the universities (deduplicated) and the rows skipped by
    source: the scope's backlink exports, URL lists and test web, and the links found in
    stored pages."""
    from crawler.sources import (
        SourceReport,
        UniversityDomains,
        dedupe,
        read_backlinks,
        read_url_list,
        stored_candidates,
    )

    unis = [UniversityDomains(u["id"], frozenset(u["domains"])) for u in universities]
    report = SourceReport()
    for path in scope.backlinks:
        report.extend(read_backlinks(path, unis))
    for path in scope.urls:
        report.extend(read_url_list(path, unis))
    if scope.testbed_dir:
        report.extend(_testbed_candidates(Path(scope.testbed_dir), universities, unis))
    report.extend(stored_candidates(engine, unis))
    return dedupe(report.candidates), dict(report.skipped)


def _testbed_candidates(folder: Path, universities: list[dict[str, Any]], unis: list[Any]) -> Any:
    """The test web's per-university Majestic-style CSVs (``citing/<key>.majestic.csv``),
    matched to the crawled universities through its manifest."""
    from crawler.sources import SourceReport, read_backlinks

    manifest = folder / "manifest.json"
    if not manifest.is_file():
        raise ConfigError(
            f"{folder}: no manifest.json: build the test web with `webometrics testbed build "
            f"--out {folder}`"
        )
    data = json.loads(manifest.read_text(encoding="utf-8"))
    names = {u["name"] for u in universities}
    report = SourceReport()
    for uni in data.get("universities", []):
        if uni.get("name") not in names:
            continue
        path = folder / "citing" / f"{uni['key']}.majestic.csv"
        if path.is_file():
            report.extend(read_backlinks(path, unis))
    return report
