"""Category agreement on the test web: the share of external sites whose assigned category
(analyse/taxonomy.toml, analyse/categories.py) matches the category in the testbed
manifest.

Two sources of the assigned categories:

* default: the test web itself. Every external site of the manifest (generated, citing,
  WebKB corpus and dead sites) is categorised exactly as the analyse stage does it, from
  up to ``[analyse] pages_per_domain`` of its served pages (each body through
  ``extract.extract_page``, as the crawler stores them) and its host names; dead sites
  (linked, never served) have their name only.
* ``--db-url URL``: the ``domain_category`` rows of a crawled and analysed database (the
  demo database after ``make demo``), compared with the same manifest (assigned category,
  not an analyst's override).

Besides the overall agreement, it reports agreement by kind of site, per category
(recall), the confusion matrix, and two ablations: names only (no page text) and texts
only (the domain name hidden), which show what each kind of evidence contributes.

Run: ``.venv/bin/python bench/categories.py [--db-url URL] [--max-sites N]``; writes
``bench/results/categories.json`` and ``.md``.
"""

from __future__ import annotations

import argparse
import platform
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from analyse.categories import Assignment, Taxonomy, categorize_domain, load_taxonomy  # noqa: E402
from bench.common import RESULTS, write_results  # noqa: E402

KINDS = ("generated", "citing", "corpus", "dead")


def _site_documents(folder: Path, sites: dict[str, Any], per_domain: int) -> dict[str, Any]:
    """domain -> (hosts, titles, texts) from the served pages, through extract_page."""
    from extract import extract_page
    from testbed.siteindex import SiteIndex

    index = SiteIndex(folder)
    out: dict[str, Any] = {}
    try:
        for dom, site in sites.items():
            titles: list[str] = []
            texts: list[str] = []
            for page in site.get("pages", [])[:per_domain]:
                resp = index.get(page["url"])
                if resp is None or resp.status != 200:
                    continue
                res = extract_page(resp.body, page["url"], content_type=resp.header("Content-Type"))
                if res.title:
                    titles.append(res.title)
                if res.text:
                    texts.append(res.text)
            out[dom] = (list(site.get("hosts", [])), titles, texts)
    finally:
        index.close()
    return out


def _kind(domain: str, site: dict[str, Any]) -> str:
    """The site's kind; dead sites split by how the testbed chose their category: by a
    rule on the name (the same whatever the seed) or by a seeded hash (no evidence can
    recover it: the site is never served and its name says nothing)."""
    if site["kind"] != "dead":
        return str(site["kind"])
    from testbed.sites import category_of

    named = len({category_of(domain, seed=s) for s in (1, 2, 3, 4, 5)}) == 1
    return "dead, named" if named else "dead, by hash"


def _score(
    truth: dict[str, str], got: dict[str, str], kinds: dict[str, str], tax: Taxonomy
) -> dict[str, Any]:
    want = {d: tax.resolve(c) for d, c in truth.items()}
    hits = [d for d in want if got.get(d) == want[d]]
    by_kind: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    by_cat: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    confusion: dict[str, Counter[str]] = defaultdict(Counter)
    for d, w in want.items():
        ok = int(got.get(d) == w)
        by_kind[kinds[d]][0] += ok
        by_kind[kinds[d]][1] += 1
        by_cat[w][0] += ok
        by_cat[w][1] += 1
        confusion[w][got.get(d, "-")] += 1
    return {
        "sites": len(want),
        "agree": len(hits),
        "agreement": round(len(hits) / len(want), 4) if want else None,
        "by_kind": {
            k: {"agree": a, "sites": n, "agreement": round(a / n, 4)}
            for k, (a, n) in sorted(by_kind.items())
        },
        "by_category": {
            c: {"agree": a, "sites": n, "recall": round(a / n, 4)}
            for c, (a, n) in sorted(by_cat.items())
        },
        "confusion": {c: dict(v) for c, v in sorted(confusion.items())},
    }


def from_testbed(args: argparse.Namespace, tax: Taxonomy) -> dict[str, Any]:
    from core.settings import load_settings
    from testbed.build import BuildOptions, shared_build
    from testbed.manifest import load_manifest

    settings = load_settings(args.config)
    t0 = time.perf_counter()
    folder = shared_build(BuildOptions.from_settings(settings))
    build_s = time.perf_counter() - t0
    manifest = load_manifest(folder)
    sites = {
        d: s
        for d, s in sorted(manifest.data["sites"].items())
        if s.get("kind") in KINDS and s.get("category")
    }
    if args.max_sites:
        sites = dict(list(sites.items())[: args.max_sites])
    known = {d: "universities" for u in manifest.universities for d in u["domains"]}
    per_domain = settings.analyse.pages_per_domain
    t0 = time.perf_counter()
    docs = _site_documents(folder, sites, per_domain)
    extract_s = time.perf_counter() - t0
    truth = {d: s["category"] for d, s in sites.items()}
    kinds = {d: _kind(d, s) for d, s in sites.items()}
    runs: dict[str, dict[str, str]] = {"full": {}, "names_only": {}, "texts_only": {}}
    sample: dict[str, Assignment] = {}
    t0 = time.perf_counter()
    for dom, (hosts, titles, texts) in docs.items():
        a = categorize_domain(
            dom,
            taxonomy=tax,
            hosts=hosts,
            titles=titles,
            texts=texts,
            known=known,
            max_words=settings.analyse.max_words,
        )
        runs["full"][dom] = a.category
        sample[dom] = a
    full_s = time.perf_counter() - t0
    for dom, (hosts, titles, texts) in docs.items():
        runs["names_only"][dom] = categorize_domain(
            dom, taxonomy=tax, hosts=hosts, known=known
        ).category
        runs["texts_only"][dom] = categorize_domain(
            "site.invalid", taxonomy=tax, titles=titles, texts=texts
        ).category
    served = {d for d, k in kinds.items() if not k.startswith("dead")}
    result: dict[str, Any] = {}
    for name, got in runs.items():
        result[f"{name}, served sites"] = _score(
            {d: c for d, c in truth.items() if d in served}, got, kinds, tax
        )
    for name, got in runs.items():
        result[f"{name}, all sites"] = _score(truth, got, kinds, tax)
    misses = [
        {
            "domain": d,
            "kind": kinds[d],
            "manifest": truth[d],
            "assigned": runs["full"][d],
            "score": sample[d].score,
            "pages": len(docs[d][2]),
        }
        for d in sorted(truth)
        if d in served and runs["full"][d] != tax.resolve(truth[d])
    ][:40]
    return {
        "source": "testbed",
        "testbed": str(folder),
        "seed": settings.testbed.seed,
        "pages_per_domain": per_domain,
        "pages_read": sum(len(t) for _h, _t, t in docs.values()),
        "seconds": {
            "build_or_cache": round(build_s, 2),
            "extract": round(extract_s, 2),
            "categorise": round(full_s, 2),
        },
        "domains_per_second": round(len(docs) / full_s, 1) if full_s else None,
        "results": result,
        "misses": misses,
    }


def from_database(args: argparse.Namespace, tax: Taxonomy) -> dict[str, Any]:
    from sqlalchemy import select

    from core.settings import load_settings
    from store import open_database
    from store.models import DomainCategory
    from testbed.build import BuildOptions, shared_build
    from testbed.manifest import load_manifest

    settings = load_settings(args.config)
    manifest = load_manifest(args.manifest or shared_build(BuildOptions.from_settings(settings)))
    engine = open_database(args.db_url, read_only=True)
    with engine.connect() as conn:
        got = dict(
            conn.execute(select(DomainCategory.domain, DomainCategory.category)).tuples().all()
        )
    engine.dispose()
    sites = {
        d: s
        for d, s in manifest.data["sites"].items()
        if s.get("kind") in KINDS and s.get("category")
    }
    stored = {d: s for d, s in sites.items() if got.get(d)}
    truth = {d: s["category"] for d, s in stored.items()}
    kinds = {d: _kind(d, s) for d, s in stored.items()}
    return {
        "source": "database",
        "database": args.db_url,
        "manifest_sites": len(sites),
        "categorised_in_database": len(stored),
        "results": {"full": _score(truth, {d: got[d] for d in stored}, kinds, tax)},
    }


def _markdown(report: dict[str, Any], tax: Taxonomy) -> str:
    res = report["results"]
    lines = [
        "# Category agreement on the test web",
        "",
        f"Source: {report['source']}"
        + (
            f" (seed {report.get('seed')}, up to {report.get('pages_per_domain')} pages per site, "
            f"{report.get('pages_read')} pages read)"
            if report["source"] == "testbed"
            else ""
        ),
        f"Machine: {report['machine']}; taxonomy: `{report['taxonomy']}`.",
        "",
        "| evidence | sites | agree | agreement |",
        "|---|--:|--:|--:|",
    ]
    for name, r in res.items():
        pct = 100 * (r["agreement"] or 0)
        lines.append(f"| {name.replace('_', ' ')} | {r['sites']} | {r['agree']} | {pct:.1f} % |")
    lines += [
        "",
        "Served sites have pages (generated, citing and WebKB corpus sites); dead sites are",
        "linked but never served, so only their names speak (the testbed chose the category",
        "of a dead site either by a rule on its name or by a seeded hash).",
    ]
    full = res.get("full, all sites") or res["full"]
    served = res.get("full, served sites") or full
    lines += [
        "",
        "By kind of site (full evidence):",
        "",
        "| kind | sites | agreement |",
        "|---|--:|--:|",
    ]
    for k, v in full["by_kind"].items():
        lines.append(f"| {k} | {v['sites']} | {100 * v['agreement']:.1f} % |")
    lines += [
        "",
        "By manifest category (recall, full evidence, served sites):",
        "",
        "| category | sites | recall |",
        "|---|--:|--:|",
    ]
    for c, v in served["by_category"].items():
        lines.append(f"| {c} | {v['sites']} | {100 * v['recall']:.1f} % |")
    cats = list(tax.keys())
    lines += [
        "",
        "Confusion on served sites (rows: manifest, columns: assigned):",
        "",
        "| manifest \\ assigned | " + " | ".join(c.split("_")[0] for c in cats) + " |",
        "|---|" + "--:|" * len(cats),
    ]
    for c, row in served["confusion"].items():
        lines.append(f"| {c} | " + " | ".join(str(row.get(k, 0)) for k in cats) + " |")
    if "seconds" in report:
        s = report["seconds"]
        lines += [
            "",
            f"Time: extraction {s['extract']} s, categorisation {s['categorise']} s "
            f"({report['domains_per_second']} domains/s).",
        ]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--db-url", help="compare a crawled and analysed database instead")
    p.add_argument("--manifest", help="testbed folder with manifest.json (with --db-url)")
    p.add_argument("--config", help="settings file")
    p.add_argument("--max-sites", type=int, default=0, help="only the first N sites (0: all)")
    p.add_argument("--out", default=str(RESULTS), help="results folder")
    args = p.parse_args(argv)
    from core.settings import load_settings

    tax = load_taxonomy(load_settings(args.config).analyse.taxonomy)
    report = from_database(args, tax) if args.db_url else from_testbed(args, tax)
    report["taxonomy"] = (
        str(Path(tax.source).relative_to(REPO)) if tax.source.startswith(str(REPO)) else tax.source
    )
    report["machine"] = (
        f"{platform.machine()}, {platform.python_implementation()} {platform.python_version()}"
    )
    out = Path(args.out)
    md = _markdown(report, tax)
    write_results(out / "categories", report, md, indent=2, newline=True, ensure_ascii=False)
    print(md)
    return 0


if __name__ == "__main__":
    sys.exit(main())
