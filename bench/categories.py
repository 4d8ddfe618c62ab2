"""Categories measured: on real labelled sites, the taxonomy alone against the text model
and the combined model (cross-validated by site); on the test web, the category the
analyse stage assigns (analyse/taxonomy.toml, analyse/categories.py) against the category
the testbed manifest records for each external site, per domain and per cluster,
*unknown* counted apart.

Real labelled sites (unless ``--no-real``): the site samples of
:mod:`corpora.site_kinds` (``--corpora``), up to 5 pages of one site labelled with the
site's category; the text model (:mod:`analyse.text_model`) cross-validated by a
stratified group k-fold by site (``--folds``, default 5: a site's samples are never in
both train and test; the BBC and Lenta.ru, one site each, are each tested by a model that
never saw them), the taxonomy alone (:func:`analyse.categories.categorize_domain` of the
name and texts) and the combined model (:func:`analyse.evidence.categorize_site` with the
text model's out-of-fold probabilities): per category precision, recall, F1 and
confusion, calibration (Brier, ECE), accuracy per corpus, alternatives of the text model
(``--no-alternatives`` skips them), and the categories without labelled text
(scientific communities, search engines) by name alone from the registries and the
taxonomy's listed domains.

A domain with nothing fetched and nothing in its name is :data:`core.choices.UNKNOWN`
(migration 0008): it is neither right nor wrong, reported apart (how many, of which kinds
of site), and every accuracy is over the domains with evidence.

Sources:

* the test web itself (always, unless ``--no-testbed``): every external site of the
  manifest (generated, citing, WebKB corpus and dead sites) categorised exactly as the
  analyse stage does it, from up to ``[analyse] pages_per_domain`` of its served pages
  (each body through ``extract.extract_page``) and its host names; dead sites (linked,
  never served) have their name only. Two ablations: names only (no page text) and texts
  only (the domain name hidden).
* a crawled and analysed database (``--db-url URL``, or ``--build [DIR]``, which runs the
  pipeline of ``make demo`` (scripts/demo.sh) on the test web into DIR, a new temporary
  folder by default, and keeps it):

  - per domain: the assigned category of ``domain_category`` (not an analyst's
    override) of fetched domains (a page with text or title was read), of domains
    categorised from their name only, and the unknown ones apart;
  - per cluster: every final cluster of the latest clustering per university x
    direction (``v_latest_cluster``) against the majority manifest category of its
    member domains, with purity (share of members whose manifest category is the
    cluster's), unknown clusters apart, and accuracy by the stored ``category_support``.

Run: ``nice .venv/bin/python bench/categories.py`` (the real sites and the test web,
about 35 minutes on a busy 2-core machine, 10 without the alternatives); ``--build``
adds the pipeline's database (about 4 more minutes on 2 cores;
``--db-url URL [--manifest DIR]`` for an existing database, e.g. the demo's after
``make demo``); writes ``bench/results/categories.json`` and ``.md``.
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
from core.choices import UNKNOWN  # noqa: E402
from corpora.site_kinds import CORPORA as SITE_CORPORA  # noqa: E402

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
    """Agreement of ``got`` with the manifest's ``truth``, *unknown* counted apart: a site
    assigned :data:`core.choices.UNKNOWN` (no evidence) is neither right nor wrong, and
    ``accuracy`` is over the sites with evidence."""
    want = {d: tax.resolve(c) for d, c in truth.items()}
    by_kind: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])
    by_cat: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])
    confusion: dict[str, Counter[str]] = defaultdict(Counter)
    for d, w in want.items():
        g = got.get(d, "-")
        for row in (by_kind[kinds[d]], by_cat[w]):
            row[0] += int(g == w)
            row[1] += int(g == UNKNOWN)
            row[2] += 1
        confusion[w][g] += 1
    agree = sum(a for a, _u, _n in by_kind.values())
    unknown = sum(u for _a, u, _n in by_kind.values())
    return {
        "sites": len(want),
        "unknown": unknown,
        "with_evidence": len(want) - unknown,
        "agree": agree,
        "accuracy": _share(agree, len(want) - unknown),
        "by_kind": {
            k: {"sites": n, "unknown": u, "agree": a, "accuracy": _share(a, n - u)}
            for k, (a, u, n) in sorted(by_kind.items())
        },
        "by_category": {
            c: {"sites": n, "unknown": u, "agree": a, "recall": _share(a, n - u)}
            for c, (a, u, n) in sorted(by_cat.items())
        },
        "confusion": {c: dict(v) for c, v in sorted(confusion.items())},
    }


def _share(part: float, whole: float) -> float | None:
    return round(part / whole, 4) if whole else None


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


def build_database(folder: Path, config: str | None) -> str:
    """Run the pipeline as ``make demo`` does (scripts/demo.sh) on the test web into an
    SQLite file in ``folder``: db upgrade, universities import, crawl (both directions,
    through the test web served on 127.0.0.1), extract, dedup, cluster, analyse. Each
    step is the console script in its own process; its output goes to ``pipeline.log``.
    Returns the database URL."""
    import os
    import subprocess

    from core.settings import load_settings
    from testbed.build import BuildOptions, shared_build
    from testbed.server import TestbedServer

    testbed = shared_build(BuildOptions.from_settings(load_settings(config)))
    folder.mkdir(parents=True, exist_ok=True)
    db = folder / "webometrics.db"
    for leftover in (db, db.with_name(db.name + "-wal"), db.with_name(db.name + "-shm")):
        leftover.unlink(missing_ok=True)
    url = f"sqlite:///{db}"
    env = {
        **os.environ,
        "WEBOMETRICS_DB_URL": url,
        # the local test web is ours: no politeness delays (as scripts/demo.sh)
        "WEBOMETRICS_CRAWL__DOWNLOAD_DELAY": "0",
        "WEBOMETRICS_CRAWL__AUTOTHROTTLE": "false",
    }
    cli = [sys.executable, "-m", "webometrics", *(["--config", config] if config else [])]
    universities = str(testbed / "universities.toml")
    with TestbedServer(testbed) as server, (folder / "pipeline.log").open("w") as log:
        steps = [
            ["db", "upgrade"],
            ["universities", "import", universities],
            [
                *("crawl", "--universities", universities, "--direction", "both"),
                *("--proxy", server.proxy_url, "--testbed", str(testbed), "--no-progress"),
            ],
            ["extract"],
            ["dedup"],
            ["cluster"],
            ["analyse"],
        ]
        for step in steps:
            t0 = time.perf_counter()
            print(f"== webometrics {' '.join(step[:2])}", file=sys.stderr, flush=True)
            log.write(f"\n== webometrics {' '.join(step)}\n")
            log.flush()
            done = subprocess.run(
                [*cli, *step], env=env, cwd=folder, stdout=log, stderr=subprocess.STDOUT
            )
            if done.returncode:
                raise SystemExit(
                    f"webometrics {step[0]} failed (exit {done.returncode}); "
                    f"see {folder / 'pipeline.log'}"
                )
            print(f"   {time.perf_counter() - t0:.0f} s", file=sys.stderr, flush=True)
    return url


def _manifest_truth(manifest: Any) -> tuple[dict[str, str], dict[str, str]]:
    """domain -> manifest category and domain -> kind of every external site of the test
    web, the studied universities' own domains included (kind ``studied``)."""
    truth: dict[str, str] = {}
    kinds: dict[str, str] = {}
    for u in manifest.universities:
        for d in u["domains"]:
            truth[d], kinds[d] = "universities", "studied"
    for d, s in manifest.data["sites"].items():
        if s.get("kind") in KINDS and s.get("category"):
            truth[d], kinds[d] = s["category"], _kind(d, s)
    return truth, kinds


def domains_from_database(
    conn: Any, truth: dict[str, str], kinds: dict[str, str], tax: Taxonomy
) -> dict[str, Any]:
    """Per domain: the assigned category of ``domain_category`` (not an analyst's
    override) against the manifest, split into fetched domains (a page with text or title
    was read), domains categorised from their name only, and unknown domains (apart)."""
    import json

    from sqlalchemy import select

    from store.models import DomainCategory

    rows = conn.execute(
        select(DomainCategory.domain, DomainCategory.category, DomainCategory.evidence)
    ).all()
    got: dict[str, str] = {}
    fetched: set[str] = set()
    for domain, category, evidence in rows:
        ev = json.loads(evidence) if isinstance(evidence, str) else (evidence or {})
        got[domain] = category or "-"
        if ev.get("pages") or ev.get("titles"):
            fetched.add(domain)
    stored = {d for d in truth if d in got}
    unknown = {d for d in stored if got[d] == UNKNOWN}
    named = stored - fetched - unknown
    unknown_kinds = Counter(kinds[d] for d in unknown)
    unknown_cats = Counter(tax.resolve(truth[d]) for d in unknown)

    def part(domains: set[str]) -> dict[str, Any]:
        return _score({d: truth[d] for d in domains}, got, kinds, tax)

    return {
        "manifest_sites": len(truth),
        "categorised_in_database": len(stored),
        "not_in_manifest": len(set(got) - set(truth)),
        "fetched": len(stored & fetched),
        "names_only": len(named),
        "unknown": len(unknown),
        "unknown_fetched": len(unknown & fetched),
        "unknown_by_kind": dict(unknown_kinds.most_common()),
        "unknown_by_manifest_category": dict(unknown_cats.most_common()),
        "results": {
            "fetched domains": part(stored & fetched - unknown),
            "names only (not fetched)": part(named),
            "every domain with evidence": part(stored - unknown),
        },
    }


SUPPORT_BINS = ((0.0, 0.5), (0.5, 0.75), (0.75, 1.0), (1.0, 1.01))


def clusters_from_database(
    conn: Any, truth: dict[str, str], kinds: dict[str, str], tax: Taxonomy
) -> dict[str, Any]:
    """Per cluster: every final cluster of the latest clustering per university x direction
    (``v_latest_cluster``), its assigned category against the manifest categories of its
    member domains (majority; ties: right when the cluster's category is one of the tied)
    and purity (share of the members with a manifest category whose category is the
    cluster's); unknown clusters apart; accuracy by the stored ``category_support``."""
    from sqlalchemy import text

    clusters = (
        conn.execute(
            text(
                "SELECT cluster_id, university, direction, unit, algorithm, size,"
                " assigned_category, category_support, category_voters FROM v_latest_cluster"
            )
        )
        .mappings()
        .all()
    )
    members: dict[int, set[str]] = defaultdict(set)
    for cid, dom in conn.execute(
        text(
            "SELECT m.cluster_id, d.domain FROM cluster_member m"
            " JOIN document d ON d.id = m.document_id"
            " JOIN v_latest_cluster c ON c.cluster_id = m.cluster_id"
        )
    ):
        members[cid].add(dom)
    rows: list[dict[str, Any]] = []
    for c in clusters:
        doms = members[c["cluster_id"]]
        cats = Counter(tax.resolve(truth[d]) for d in doms if d in truth)
        top = max(cats.values(), default=0)
        majority = sorted(k for k, v in cats.items() if v == top) if top else []
        cat = c["assigned_category"]
        labelled = sum(cats.values())
        rows.append(
            {
                "cluster_id": c["cluster_id"],
                "university": c["university"] or "all",
                "direction": c["direction"] or "both",
                "domains": len(doms),
                "labelled": labelled,
                "category": cat,
                "support": c["category_support"],
                "voters": c["category_voters"],
                "majority": majority,
                "tie": len(majority) > 1,
                "right": bool(majority) and cat in majority,
                "agreeing_members": cats.get(cat, 0),
                "purity": _share(cats.get(cat, 0), labelled),
                "dead_members": sum(1 for d in doms if kinds.get(d, "").startswith("dead")),
            }
        )
    known = [r for r in rows if r["category"] != UNKNOWN and r["labelled"]]
    unknown = [r for r in rows if r["category"] == UNKNOWN]

    def summary(rs: list[dict[str, Any]]) -> dict[str, Any]:
        members_n = sum(r["labelled"] for r in rs)
        return {
            "clusters": len(rs),
            "right": sum(r["right"] for r in rs),
            "accuracy": _share(sum(r["right"] for r in rs), len(rs)),
            "ties": sum(r["tie"] for r in rs),
            "domains": sum(r["domains"] for r in rs),
            "domain_weighted_accuracy": _share(
                sum(r["labelled"] for r in rs if r["right"]), members_n
            ),
            "mean_purity": _share(sum(r["purity"] or 0 for r in rs), len(rs)),
            "pooled_purity": _share(sum(r["agreeing_members"] for r in rs), members_n),
        }

    by_support: dict[str, Any] = {}
    for lo, hi in SUPPORT_BINS:
        name = "1" if lo == 1.0 else f"[{lo:g}, {hi:g})"
        by_support[name] = summary(
            [r for r in known if r["support"] is not None and lo <= r["support"] < hi]
        )
    by_support["no voters"] = summary([r for r in known if r["support"] is None])
    halves = {
        "support >= 0.5": summary(
            [r for r in known if r["support"] is not None and r["support"] >= 0.5]
        ),
        "support < 0.5": summary(
            [r for r in known if r["support"] is not None and r["support"] < 0.5]
        ),
    }
    by_direction = {
        d: summary([r for r in known if r["direction"] == d])
        for d in sorted({r["direction"] for r in known})
    }
    by_category = {
        c: summary([r for r in known if r["category"] == c])
        for c in sorted({r["category"] for r in known})
    }
    return {
        "clusterings": len({(r["university"], r["direction"]) for r in rows}),
        "clusters": len(rows),
        "unknown_clusters": len(unknown),
        "unknown_cluster_domains": sum(r["domains"] for r in unknown),
        "unknown_cluster_dead_members": sum(r["dead_members"] for r in unknown),
        "without_manifest_members": sum(
            1 for r in rows if r["category"] != UNKNOWN and not r["labelled"]
        ),
        "known": summary(known),
        "support_halves": halves,
        "by_support": by_support,
        "by_direction": by_direction,
        "by_category": by_category,
        "wrong_largest": sorted((r for r in known if not r["right"]), key=lambda r: -r["domains"])[
            :15
        ],
    }


def from_database(url: str, manifest_folder: Path, tax: Taxonomy) -> dict[str, Any]:
    from store import open_database
    from testbed.manifest import load_manifest

    truth, kinds = _manifest_truth(load_manifest(manifest_folder))
    engine = open_database(url, read_only=True)
    try:
        with engine.connect() as conn:
            domains = domains_from_database(conn, truth, kinds, tax)
            clusters = clusters_from_database(conn, truth, kinds, tax)
    finally:
        engine.dispose()
    return {"database": url, "domains": domains, "clusters": clusters}


def _pct(x: float | None) -> str:
    return "–" if x is None else f"{100 * x:.1f} %"


def _markdown_testbed(report: dict[str, Any], tax: Taxonomy) -> list[str]:
    res = report["results"]
    lines = [
        "## Per domain, categorised from the test web itself",
        "",
        f"Seed {report['seed']}, up to {report['pages_per_domain']} pages per site, "
        f"{report['pages_read']} pages read through `extract.extract_page`. A site with no "
        "evidence (nothing served, nothing in its name) is *unknown*: counted apart, never "
        "wrong; accuracy is over the sites with evidence.",
        "",
        "| evidence | sites | unknown | with evidence | agree | accuracy |",
        "|---|--:|--:|--:|--:|--:|",
    ]
    for name, r in res.items():
        lines.append(
            f"| {name.replace('_', ' ')} | {r['sites']} | {r['unknown']} | "
            f"{r['with_evidence']} | {r['agree']} | {_pct(r['accuracy'])} |"
        )
    lines += [
        "",
        "Served sites have pages (generated, citing and WebKB corpus sites); dead sites are",
        "linked but never served, so only their names speak (the testbed chose the category",
        "of a dead site either by a rule on its name or by a seeded hash).",
    ]
    full = res["full, all sites"]
    served = res["full, served sites"]
    lines += [
        "",
        "By kind of site (full evidence):",
        "",
        "| kind | sites | unknown | accuracy |",
        "|---|--:|--:|--:|",
    ]
    for k, v in full["by_kind"].items():
        lines.append(f"| {k} | {v['sites']} | {v['unknown']} | {_pct(v['accuracy'])} |")
    lines += [
        "",
        "By manifest category (recall, full evidence, served sites):",
        "",
        "| category | sites | recall |",
        "|---|--:|--:|",
    ]
    for c, v in served["by_category"].items():
        lines.append(f"| {c} | {v['sites']} | {_pct(v['recall'])} |")
    lines += _confusion(served["confusion"], tax, "Confusion on served sites")
    s = report["seconds"]
    lines += [
        "",
        f"Time: extraction {s['extract']} s, categorisation {s['categorise']} s "
        f"({report['domains_per_second']} domains/s).",
    ]
    return lines


def _confusion(confusion: dict[str, dict[str, int]], tax: Taxonomy, title: str) -> list[str]:
    cats = [*tax.keys(), UNKNOWN]
    return [
        "",
        f"{title} (rows: manifest, columns: assigned):",
        "",
        "| manifest \\ assigned | " + " | ".join(c.split("_")[0] for c in cats) + " |",
        "|---|" + "--:|" * len(cats),
        *(
            f"| {c} | " + " | ".join(str(row.get(k, 0)) for k in cats) + " |"
            for c, row in confusion.items()
        ),
    ]


def _cluster_head(first: str) -> list[str]:
    cols = ("n", "right", "ties", "accuracy", "domain-weighted", "mean purity", "pooled purity")
    return [f"| {first} | " + " | ".join(cols) + " |", "|---|" + "--:|" * len(cols)]


def _markdown_database(db: dict[str, Any], tax: Taxonomy) -> list[str]:
    d = db["domains"]
    lines = [
        "## Per domain, as the pipeline stored them",
        "",
        f"Database: {db['source']}. The assigned category of `domain_category` (not an "
        f"analyst's override) of the {d['categorised_in_database']} categorised domains that "
        f"are sites of the test web ({d['manifest_sites']} in the manifest, studied "
        "universities' own domains included): fetched (a page with text or title was read), "
        "named only (not fetched, the name speaks) and unknown (no evidence, apart).",
        "",
        "| domains | sites | agree | accuracy |",
        "|---|--:|--:|--:|",
    ]
    for name, r in d["results"].items():
        lines.append(f"| {name} | {r['sites']} | {r['agree']} | {_pct(r['accuracy'])} |")
    kinds = ", ".join(f"{k} {n}" for k, n in d["unknown_by_kind"].items())
    lines += [
        "",
        f"Unknown: {d['unknown']} domains ({kinds}); {d['unknown_fetched']} of them fetched. "
        "Their manifest categories: "
        + ", ".join(f"{k} {n}" for k, n in d["unknown_by_manifest_category"].items())
        + ". None is counted as other_organisations.",
        "",
        "By kind of site (accuracy over the domains with evidence):",
        "",
        "| kind | fetched | accuracy | names only | accuracy | unknown |",
        "|---|--:|--:|--:|--:|--:|",
    ]
    fetched = d["results"]["fetched domains"]
    named = d["results"]["names only (not fetched)"]
    empty: dict[str, Any] = {"sites": 0, "accuracy": None}
    for kind in sorted({*fetched["by_kind"], *named["by_kind"], *d["unknown_by_kind"]}):
        f = fetched["by_kind"].get(kind, empty)
        n = named["by_kind"].get(kind, empty)
        lines.append(
            f"| {kind} | {f['sites']} | {_pct(f['accuracy'])} | {n['sites']} | "
            f"{_pct(n['accuracy'])} | {d['unknown_by_kind'].get(kind, 0)} |"
        )
    lines += _confusion(fetched["confusion"], tax, "Confusion on fetched domains")
    c = db["clusters"]
    k = c["known"]
    lines += [
        "",
        "## Per cluster",
        "",
        f"The final clusters (level -1) of the latest clustering per university x direction "
        f"(`v_latest_cluster`): {c['clusters']} clusters in {c['clusterings']} clusterings. "
        "A cluster is right when its assigned category is the majority manifest category of "
        "its member domains (ties: one of the tied); purity is the share of its members "
        "whose manifest category is the cluster's. Unknown clusters (no member with "
        f"evidence, no theme keyword) apart: {c['unknown_clusters']} clusters, "
        f"{c['unknown_cluster_domains']} domains ({c['unknown_cluster_dead_members']} of "
        "them dead sites).",
        "",
        *_cluster_head("clusters"),
    ]

    def row(name: str, r: dict[str, Any]) -> str:
        return (
            f"| {name} | {r['clusters']} | {r['right']} | {r['ties']} | {_pct(r['accuracy'])} | "
            f"{_pct(r['domain_weighted_accuracy'])} | {_pct(r['mean_purity'])} | "
            f"{_pct(r['pooled_purity'])} |"
        )

    lines.append(row("every known cluster", k))
    for name, r in c["by_direction"].items():
        lines.append(row(name, r))
    for name, r in c["support_halves"].items():
        lines.append(row(name, r))
    lines += [
        "",
        "By stored `category_support` (share of the voting members that agree with the "
        "cluster's category):",
        "",
        *_cluster_head("support"),
        *(row(name, r) for name, r in c["by_support"].items()),
        "",
        "By assigned category:",
        "",
        *_cluster_head("category"),
        *(row(name, r) for name, r in c["by_category"].items()),
    ]
    return lines


def _markdown(report: dict[str, Any], tax: Taxonomy) -> str:
    lines = [
        "# Categories: real labelled sites and the test web",
        "",
        f"Machine: {report['machine']}; taxonomy: `{report['taxonomy']}`; run {report['date']}.",
        "",
        f"Repeat: `{report['command']}`.",
        "",
    ]
    if "real" in report:
        lines += [*_markdown_real(report["real"], tax), ""]
    if "database" in report:
        lines += [*_markdown_database(report["database"], tax), ""]
    if "testbed" in report:
        lines += _markdown_testbed(report["testbed"], tax)
    return "\n".join(lines) + "\n"


SMOKE_SKIP = "the real sites and the test web (35 minutes); needs a built test web and a database"
"""Why the smoke test (tests/bench) does not run this script on tiny data."""


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    src = p.add_mutually_exclusive_group()
    src.add_argument("--db-url", help="also score a crawled and analysed database")
    src.add_argument(
        "--build",
        nargs="?",
        const="",
        metavar="DIR",
        help="run the pipeline on the test web into DIR (default: a new temporary folder) "
        "and score its database",
    )
    p.add_argument("--manifest", help="testbed folder with manifest.json (with --db-url)")
    p.add_argument("--config", help="settings file")
    p.add_argument("--max-sites", type=int, default=0, help="only the first N sites (0: all)")
    p.add_argument(
        "--no-testbed", action="store_true", help="skip the per-domain scoring of the test web"
    )
    p.add_argument("--no-real", action="store_true", help="skip the real labelled sites (corpora)")
    p.add_argument(
        "--corpora",
        nargs="+",
        default=list(SITE_CORPORA),
        help="corpora of the real labelled sites (default: all of corpora.site_kinds)",
    )
    p.add_argument("--folds", type=int, default=5, help="group k-fold by site (default 5)")
    p.add_argument(
        "--no-alternatives", action="store_true", help="do not cross-validate the alternatives"
    )
    p.add_argument("--out", default=str(RESULTS), help="results folder")
    args = p.parse_args(argv)
    import tempfile

    from bench.common import run_date
    from core.settings import load_settings
    from testbed.build import BuildOptions, shared_build

    settings = load_settings(args.config)
    tax = load_taxonomy(settings.analyse.taxonomy)
    report: dict[str, Any] = {
        "command": "nice .venv/bin/python bench/categories.py "
        + " ".join(a for a in (argv if argv is not None else sys.argv[1:])),
        "date": run_date(),
    }
    report["command"] = report["command"].strip()
    url = args.db_url
    if args.build is not None:
        folder = Path(args.build or tempfile.mkdtemp(prefix="webometrics-categories-"))
        t0 = time.perf_counter()
        url = build_database(folder, args.config)
        report["build_seconds"] = round(time.perf_counter() - t0, 1)
        print(f"database: {url}", file=sys.stderr)
    if url:
        manifest = Path(args.manifest or shared_build(BuildOptions.from_settings(settings)))
        report["database"] = from_database(url, manifest, tax)
        report["database"]["source"] = (
            "built by --build (the pipeline of `make demo` on the test web)"
            if args.build is not None
            else url
        )
    if not args.no_real:
        report["real"] = from_real_sites(args, tax)
    if not args.no_testbed:
        report["testbed"] = from_testbed(args, tax)
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


# --- real labelled sites: taxonomy alone, text model, combined --------------------------

#: the methods of the real-data comparison, in the table's order
METHODS = ("taxonomy", "text model", "combined")


def _prf(truth: list[str], got: list[str], cats: list[str]) -> dict[str, Any]:
    """Per category precision, recall, F1 and support; the confusion (rows: truth)."""
    per: dict[str, Any] = {}
    for c in cats:
        tp = sum(1 for t, g in zip(truth, got, strict=True) if t == c and g == c)
        fp = sum(1 for t, g in zip(truth, got, strict=True) if t != c and g == c)
        fn = sum(1 for t, g in zip(truth, got, strict=True) if t == c and g != c)
        p = tp / (tp + fp) if tp + fp else 0.0
        r = tp / (tp + fn) if tp + fn else 0.0
        per[c] = {
            "precision": round(p, 4),
            "recall": round(r, 4),
            "f1": round(2 * p * r / (p + r), 4) if p + r else 0.0,
            "support": tp + fn,
        }
    confusion: dict[str, Counter[str]] = defaultdict(Counter)
    for t, g in zip(truth, got, strict=True):
        confusion[t][g] += 1
    right = sum(1 for t, g in zip(truth, got, strict=True) if t == g)
    return {
        "accuracy": round(right / len(truth), 4) if truth else None,
        "unknown": sum(1 for g in got if g == UNKNOWN),
        "per_category": per,
        "confusion": {c: dict(v) for c, v in sorted(confusion.items())},
    }


def _oof(
    docs: list[dict[str, int]], y: list[str], groups: list[str], folds: int, **params: Any
) -> tuple[Any, list[str]]:
    """Out-of-fold probabilities of the text model, a stratified group k-fold by site."""
    import numpy as np
    from sklearn.model_selection import StratifiedGroupKFold

    from analyse.text_model import TextCategoryModel

    classes = sorted(set(y))
    proba = np.zeros((len(y), len(classes)))
    ya, ga = np.array(y), np.array(groups)
    split = StratifiedGroupKFold(n_splits=folds, shuffle=True, random_state=0)
    for train, test in split.split(np.zeros(len(y)), ya, ga):
        m = TextCategoryModel(**params).fit([docs[i] for i in train], ya[train], ga[train])
        cols = [classes.index(c) for c in m.classes_]
        proba[np.ix_(test, cols)] = m.predict_proba([docs[i] for i in test])
    return proba, classes


def from_real_sites(args: argparse.Namespace, tax: Taxonomy) -> dict[str, Any]:
    """The taxonomy alone, the text model and the combined model on the real labelled
    sites of :mod:`corpora.site_kinds`, the model cross-validated by site."""
    import numpy as np

    from analyse.evidence import TextEvidence, categorize_site
    from analyse.registries import Registry
    from analyse.text_model import TextCategoryModel, calibration_scores, site_terms
    from corpora.site_kinds import load_site_kinds

    t0 = time.perf_counter()
    samples = load_site_kinds(args.corpora)
    docs = site_terms([s.texts for s in samples])
    load_s = time.perf_counter() - t0
    y = [s.category for s in samples]
    groups = [s.site for s in samples]
    registry = Registry.load()
    default = TextCategoryModel().get_params()
    runs: dict[str, Any] = {}
    t0 = time.perf_counter()
    proba, classes = _oof(docs, y, groups, args.folds)
    model_s = time.perf_counter() - t0
    yi = [classes.index(c) for c in y]
    runs["text model"] = [classes[i] for i in proba.argmax(axis=1)]
    calibration = {"text model": calibration_scores(proba, yi)}
    alternatives: dict[str, Any] = {}
    for name, params in (
        ("svm, uncalibrated (softmax of the scores)", {"calibration_folds": 0}),
        ("logistic regression C=10, calibrated", {"linear": "logistic", "C": 10.0}),
    ):
        if args.no_alternatives:
            break
        t1 = time.perf_counter()
        p_alt, _ = _oof(docs, y, groups, args.folds, **params)
        alternatives[name] = {
            **calibration_scores(p_alt, yi),
            **{
                f"f1 {c}": v["f1"]
                for c, v in _prf(y, [classes[i] for i in p_alt.argmax(axis=1)], classes)[
                    "per_category"
                ].items()
            },
            "seconds": round(time.perf_counter() - t1, 1),
        }
    t0 = time.perf_counter()
    taxonomy_alone: list[str] = []
    combined: list[str] = []
    conf: list[float] = []
    decided: Counter[str] = Counter()
    for s, p in zip(samples, proba, strict=True):
        taxonomy_alone.append(
            categorize_domain(s.site, taxonomy=tax, hosts=(s.site,), texts=s.texts).category
        )
        text = TextEvidence(
            {c: float(v) for c, v in zip(classes, p, strict=True)}, (), len(s.texts)
        )
        a = categorize_site(
            s.site, taxonomy=tax, hosts=(s.site,), texts=s.texts, registry=registry, text=text
        )
        combined.append(a.category)
        conf.append(a.score)
        decided[a.evidence["decided_by"] or "-"] += 1
    combine_s = time.perf_counter() - t0
    runs["taxonomy"] = taxonomy_alone
    runs["combined"] = combined
    present = set(y)
    cats = [c for c in [*tax.keys()] if c in present]
    right = np.array([g == t for g, t in zip(combined, y, strict=True)], float)
    conf_a = np.array(conf)
    bins = np.minimum((conf_a * 10).astype(int), 9)
    ece = sum(
        abs(right[bins == b].mean() - conf_a[bins == b].mean()) * (bins == b).sum()
        for b in range(10)
        if (bins == b).any()
    ) / len(y)
    calibration["combined"] = {
        "ece": round(float(ece), 4),
        "accuracy": round(float(right.mean()), 4),
        "mean_confidence": round(float(conf_a.mean()), 4),
    }
    by_corpus: dict[str, Any] = {}
    for corpus in dict.fromkeys(s.corpus for s in samples):
        idx = [i for i, s in enumerate(samples) if s.corpus == corpus]
        by_corpus[corpus] = {
            "samples": len(idx),
            "sites": len({samples[i].site for i in idx}),
            **{m: round(sum(runs[m][i] == y[i] for i in idx) / len(idx), 4) for m in METHODS},
        }
    sites = {c: len({g for g, t in zip(groups, y, strict=True) if t == c}) for c in cats}
    return {
        "corpora": list(args.corpora),
        "folds": args.folds,
        "samples": len(samples),
        "sites": sites,
        "samples_per_category": dict(Counter(y)),
        "model": default,
        "results": {m: _prf(y, runs[m], cats) for m in METHODS},
        "calibration": calibration,
        "alternatives": alternatives,
        "by_corpus": by_corpus,
        "decided_by": dict(decided.most_common()),
        "names": from_names(tax, registry),
        "seconds": {
            "load_and_terms": round(load_s, 1),
            "text_model_cv": round(model_s, 1),
            "taxonomy_and_combined": round(combine_s, 1),
        },
    }


def from_names(tax: Taxonomy, registry: Any) -> dict[str, Any]:
    """The categories without labelled text, by name alone (no page): the taxonomy's
    listed domains of each category, and every 25th record of the registries whose
    category (``analyse.registries.category_of``) is scientific communities or
    universities, looked up by a made-up subdomain of its first website
    (``dept.<host>``)."""
    from analyse.evidence import categorize_site
    from analyse.registries import category_of
    from core.domains import host_of

    out: dict[str, Any] = {}
    cases: dict[str, tuple[str, list[str]]] = {}
    for c in tax.categories:
        if c.key in ("search_engines", "scientific_communities"):
            cases[f"{c.key}: the taxonomy's listed domains"] = (c.key, list(c.exact_domains))
    for cat in ("scientific_communities", "universities"):
        recs = [
            r
            for r in registry.records
            if r.websites and category_of(r.source, r.kind, r.name) == cat and r.status == "active"
        ][::25]
        hosts = [host_of(w if "//" in w else f"http://{w}") for w in (r.websites[0] for r in recs)]
        cases[f"{cat}: every 25th registry record, as dept.<its host>"] = (
            cat,
            [f"dept.{h.removeprefix('www.')}" for h in hosts if h],
        )
    for name, (cat, domains) in cases.items():
        got = [categorize_site(d, taxonomy=tax, registry=registry) for d in domains]
        out[name] = {
            "category": cat,
            "domains": len(domains),
            "found": sum(a.category == cat for a in got),
            "recall": _share(sum(a.category == cat for a in got), len(domains)),
            "decided_by": dict(Counter(str(a.evidence.get("decided_by")) for a in got)),
        }
    return out


def _markdown_real(real: dict[str, Any], tax: Taxonomy) -> list[str]:
    res = real["results"]
    cats = list(res["taxonomy"]["per_category"])
    sites = real["sites"]
    lines = [
        "## Real labelled sites: the taxonomy alone, the text model, the combined model",
        "",
        f"Site samples of the shared corpora ({', '.join(real['corpora'])}; "
        "`corpora/site_kinds.py`): up to 5 pages of one site (its registered domain) "
        "labelled with the site's category (WebKB -> universities; BBC, Lenta.ru, "
        "tgcontest -> news portals; website-classification: social networking -> social "
        "networks, news -> news portals, streaming -> media, travel, sports, photography, "
        "law and government -> other organisations); at most 20 samples a site. "
        f"{real['samples']} samples of {sum(sites.values())} sites. The text model is "
        f"cross-validated by site ({real['folds']}-fold stratified group k-fold: a "
        "site's samples are never in both train and test); the BBC and Lenta.ru are one "
        "site each, so each is tested only by a model that never saw it (their own fold), "
        "and they count 20 samples each, not 2,225 and 773. The taxonomy reads the "
        "site's name and texts (no training); the combined model pools the registries, "
        "the taxonomy's listings, patterns, name parts and keywords and the text model's "
        "out-of-fold probabilities (`analyse.evidence.categorize_site`). Defaults set "
        "before this measurement, nothing tuned on its folds. Model: "
        + ", ".join(f"{k}={v}" for k, v in real["model"].items())
        + ".",
        "",
        "| category | sites | samples | " + " | ".join(f"{m} P / R / F1" for m in METHODS) + " |",
        "|---|--:|--:|" + "--:|" * len(METHODS),
    ]
    for c in cats:
        cells = []
        for m in METHODS:
            v = res[m]["per_category"][c]
            cells.append(f"{v['precision']:.3f} / {v['recall']:.3f} / **{v['f1']:.3f}**")
        lines.append(
            f"| {c} | {sites.get(c, 0)} | {res['taxonomy']['per_category'][c]['support']} | "
            + " | ".join(cells)
            + " |"
        )
    lines.append(
        "| accuracy (unknown) | | | "
        + " | ".join(f"{_pct(res[m]['accuracy'])} ({res[m]['unknown']})" for m in METHODS)
        + " |"
    )
    cal = real["calibration"]
    lines += [
        "",
        "Calibration of the confidence (ECE: expected calibration error over 10 bins of the "
        "top probability; Brier: summed over categories, 0 best, 2 worst): text model "
        f"Brier {cal['text model']['brier']}, ECE {cal['text model']['ece']}, log loss "
        f"{cal['text model']['log_loss']}; combined ECE {cal['combined']['ece']} "
        f"(accuracy {_pct(cal['combined']['accuracy'])}, mean confidence "
        f"{_pct(cal['combined']['mean_confidence'])}). Decided by: "
        + ", ".join(f"{k} {v}" for k, v in real["decided_by"].items())
        + ".",
        "",
        "By corpus (accuracy):",
        "",
        "| corpus | sites | samples | " + " | ".join(METHODS) + " |",
        "|---|--:|--:|" + "--:|" * len(METHODS),
    ]
    for corpus, r in real["by_corpus"].items():
        lines.append(
            f"| {corpus} | {r['sites']} | {r['samples']} | "
            + " | ".join(_pct(r[m]) for m in METHODS)
            + " |"
        )
    for m in METHODS:
        lines += ["", *_confusion(res[m]["confusion"], tax, f"Confusion of the {m}")]
    alts = {"svm, calibrated (the default)": {**cal["text model"]}, **real["alternatives"]}
    if real["alternatives"]:
        alts["svm, calibrated (the default)"].update(
            {f"f1 {c}": res["text model"]["per_category"][c]["f1"] for c in cats}
        )
        alts["svm, calibrated (the default)"]["seconds"] = real["seconds"]["text_model_cv"]
        lines += [
            "",
            "Alternatives of the text model (same features and folds; seconds of the whole "
            "cross-validation on a shared machine):",
            "",
            "| model | accuracy | Brier | ECE | log loss | "
            + " | ".join(f"F1 {c}" for c in cats)
            + " | seconds |",
            "|---|--:|--:|--:|--:|" + "--:|" * len(cats) + "--:|",
        ]
        for name, a in alts.items():
            lines.append(
                f"| {name} | {_pct(a['accuracy'])} | {a['brier']} | {a['ece']} | "
                f"{a['log_loss']} | "
                + " | ".join(f"{a.get(f'f1 {c}', 0):.3f}" for c in cats)
                + f" | {a.get('seconds', '')} |"
            )
    names = real["names"]
    lines += [
        "",
        "Categories without real labelled text here (scientific communities, search "
        "engines): their figure comes from the registries and the taxonomy's known "
        "domains, by name alone (no page read), through the same `categorize_site`:",
        "",
        "| domains | category | n | found | recall | decided by |",
        "|---|---|--:|--:|--:|---|",
    ]
    for name, r in names.items():
        by = ", ".join(f"{k} {v}" for k, v in r["decided_by"].items())
        lines.append(
            f"| {name.split(': ', 1)[1]} | {r['category']} | {r['domains']} | {r['found']} | "
            f"{_pct(r['recall'])} | {by} |"
        )
    return lines


if __name__ == "__main__":
    sys.exit(main())
