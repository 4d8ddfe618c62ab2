"""Build the local test web and its manifest (``webometrics testbed build``).

The build is deterministic: the same seed, options and shared data give byte-identical
output. Steps: read WebKB (one pass), add the universities' robots.txt and trouble cases,
extract the links of every university page with the crawler's rules
(:mod:`testbed.links`), generate the most-linked external sites (real texts from
:mod:`testbed.texts`), the citing sites, then resolve every external target exactly as the
server will answer it (:class:`testbed.siteindex.IndexWriter` shares the server's answer
logic) and write the site index, the manifest and the backlink files.

This module runs the steps and writes the manifest; the parts of the test web are written
by the base classes of its builder, one module each: :mod:`testbed.universities` (WebKB's
pages, robots.txt, sitemaps), :mod:`testbed.trouble` (the trouble cases),
:mod:`testbed.external` (generated and citing sites), :mod:`testbed.resolution` (targets
resolved as the server answers); :mod:`testbed.backlinks` writes the backlink files,
:mod:`testbed.options` holds :class:`BuildOptions` and :mod:`testbed.cache` the shared
cached build (:func:`shared_build`), both importable from here.

Time: O(corpus + generated pages); 20-40 s on the project's shared 2-core machine
(``bench/testbed.py``), a third of it Scrapy's link extractor on the 4,300 university
pages. Memory: the corpus and the texts (about 150 MB peak).
"""

from __future__ import annotations

import json
import shutil
from collections import Counter, defaultdict
from dataclasses import asdict
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from core.domains import in_domains
from testbed.archive import archive_truth
from testbed.backlinks import write_citing
from testbed.cache import shared_build
from testbed.external import ExternalSites
from testbed.hostile import manifest_section as hostile_section
from testbed.hostile import universities_toml as hostile_universities
from testbed.links import LINK_RULES, PageLink
from testbed.options import BuildOptions
from testbed.resolution import Resolution
from testbed.siteindex import IndexWriter
from testbed.texts import load_pools
from testbed.trouble import FORBIDDEN_URLS, TroubleCases
from testbed.universities import UNIVERSITIES_FILE, UniversitySites

__all__ = ["BuildOptions", "build", "shared_build"]


class _Builder(UniversitySites, TroubleCases, ExternalSites, Resolution):
    """The build's state; each base class writes one part of the test web."""

    def __init__(self, options: BuildOptions, data_dir: Path) -> None:
        self.o = options
        self.root = data_dir
        self.w = IndexWriter()
        self.trouble: list[dict[str, Any]] = []
        self.sites: dict[str, dict[str, Any]] = {}
        self.citing: dict[str, list[dict[str, Any]]] = defaultdict(list)
        self.links: dict[str, list[PageLink]] = {}
        self.webkb_source: dict[str, str] = {}
        self._uni_pages: dict[str, list[str]] = {}


def build(
    out: str | Path,
    options: BuildOptions | None = None,
    data_dir: str | Path | None = None,
    *,
    progress: bool = False,
) -> dict[str, Any]:
    """Build the test web into ``out`` and return its statistics.

    Parameters
    ----------
    out : path-like
        The output folder (created; its ``site/``, ``citing/`` and ``manifest.json`` are
        replaced).
    options : BuildOptions, optional
    data_dir : path-like, optional
        The shared data folder (default: ``$WEBOMETRICS_DATA`` or ``../shared/data``).
    progress : bool
        Show a progress bar on standard error.

    Returns
    -------
    dict
        Counts: pages served, universities' pages, external links, targets, sites by kind
        and category, citing pages, trouble cases, seconds.

    Raises
    ------
    DataNotFoundError
        The shared data folder (or a corpus in it) is missing.
    ParameterError
        An option is out of range.
    """
    import time

    from tqdm import tqdm

    started = time.monotonic()
    options = options or BuildOptions()
    options.validate()
    if data_dir is None:
        from core.shared_data import data_dir as shared

        data_dir = shared()
    root = Path(data_dir)
    out = Path(out)
    steps = tqdm(total=7, desc="testbed build", disable=not progress, unit="step")
    b = _Builder(options, root)
    pages = b.load_corpus()
    steps.update()
    misc = [p for p in pages if p.folder == "misc"]
    pools = load_pools(root, misc, options.seed)
    steps.update()
    unis = b.setup_universities(pools)
    steps.update()

    external: dict[str, list[dict[str, Any]]] = {}
    for uni in unis:
        domains = set(uni["domains"])
        rows = []
        for key in b.university_pages(uni):
            source = b.w.original[key]
            for link in b.page_links_of(key):
                host = urlsplit(link.target).hostname or ""
                if in_domains(host, domains):
                    continue
                rows.append(
                    {"source": source, "target": link.target, "anchor": link.anchor,
                     "nofollow": link.nofollow}
                )  # fmt: skip
        external[uni["key"]] = rows
    steps.update()
    b.generate_sites(unis, pools, external)
    steps.update()

    robots: dict[str, Any] = {}
    targets: dict[str, dict[str, Any]] = {}
    for uni in unis:
        for row in external[uni["key"]]:
            if row["target"] not in targets:
                targets[row["target"]] = b.resolve(row["target"], robots)
    disallowed: set[str] = {t for t, info in targets.items() if info["error"] == "robots"}
    for uni in unis:
        depth = b.depths(uni, robots)
        uni_pages = []
        for key in b.university_pages(uni):
            e = b.w.entries[key]
            url = b.w.original[key]
            allowed = b.robots_allows(url, robots)
            if not allowed:
                disallowed.add(url)
            uni_pages.append(
                {"url": url, "status": e[0], "depth": depth.get(key),
                 "robots_allowed": allowed,
                 "content_type": dict((k.lower(), v) for k, v in e[1]).get("content-type")}
            )  # fmt: skip
        uni["pages"] = uni_pages
        source_depth = {p["url"]: p["depth"] for p in uni_pages}
        for row in external[uni["key"]]:
            row["source_depth"] = source_depth.get(row["source"])
        uni["external_links"] = external[uni["key"]]
        uni["citing"] = b.citing[uni["key"]]
    for entry in b.trouble:
        if entry["case"] == "robots":
            disallowed.add(entry["url"])
    steps.update()

    archived = [*b.w.entries, *(p["url"] for u in unis for p in u["pages"]), *targets]
    manifest = {
        "format": 1,
        "seed": options.seed,
        "options": asdict(options),
        "link_rules": LINK_RULES,
        "universities": unis,
        "targets": targets,
        "sites": dict(sorted(b.sites.items())),
        "trouble": b.trouble,
        "robots_disallowed": sorted(disallowed),
        # what the test web's archives hold (testbed.archive)
        "archive": archive_truth(archived, b.w.__contains__),
        "hostile": hostile_section(),
        "forbidden": list(FORBIDDEN_URLS)
        + sorted(
            t
            for t, info in targets.items()
            if info["error"] == "forbidden_address" and t not in FORBIDDEN_URLS
        ),
    }
    out.mkdir(parents=True, exist_ok=True)
    for sub in ("site", "citing"):
        shutil.rmtree(out / sub, ignore_errors=True)
    b.w.write(out / "site")
    (out / "manifest.json").write_text(
        json.dumps(manifest, ensure_ascii=False, indent=1, sort_keys=False), encoding="utf-8"
    )
    write_citing(out / "citing", unis)
    shutil.copyfile(UNIVERSITIES_FILE, out / "universities.toml")
    (out / "hostile.toml").write_text(hostile_universities(), encoding="utf-8")
    steps.update()
    steps.close()

    kinds = Counter(s["kind"] for s in b.sites.values())
    cats = Counter(s["category"] for s in b.sites.values() if s["kind"] in ("generated", "citing"))
    return {
        "served_urls": len(b.w.entries),
        "university_pages": sum(len(u["pages"]) for u in unis),
        "external_links": sum(len(u["external_links"]) for u in unis),
        "targets": len(targets),
        "reachable_targets": sum(1 for t in targets.values() if t["reachable"]),
        "sites": dict(sorted(kinds.items())),
        "generated_categories": dict(sorted(cats.items())),
        "citing_pages": sum(len(u["citing"]) for u in unis),
        "trouble_cases": len(b.trouble),
        "seconds": round(time.monotonic() - started, 2),
    }
