"""The generated database the dashboard benchmark renders its pages on (``bench/dashboard.py``).

:func:`generate` fills a migrated, empty database with the paper's nine universities in
three countries, ``n_domains`` external registered domains and ``n_pages`` pages (the
universities' own pages, the external pages they link to and the citing pages that link
to them), with links, verified citations, the environment rows of two crawl runs, a domain
document per external domain with evidence, domain categories, a clustering per university
and direction with four levels of cluster rows, and a near-duplicate run over page
documents; SQLAlchemy Core bulk inserts, seeded.

At the schema of revision 0008 and later: the citations come from every source (a
backlink export, a crawl, Common Crawl captures: :data:`CITATION_SOURCES`), a share of
the domains has no evidence (:data:`UNKNOWN_SHARE`: no fetched text, no language, no
domain document, category ``unknown``), and an older Common Crawl web-graph run
(:data:`GRAPH_RUN`) gives a share of the domains as citing domains
(:data:`GRAPH_SHARE`: ``environment`` and ``citing_node`` rows), which ``v_environment``
shows under the graph run and under both crawl runs.
"""

from __future__ import annotations

import datetime as dt
import random
from typing import Any

from sqlalchemy import Engine, insert, select, update

UNIVERSITIES = [
    ("Saint Petersburg State University", "Russia", 539, "spbu.ru"),
    ("Lomonosov Moscow State University", "Russia", 129, "msu.ru"),
    ("Novosibirsk State University", "Russia", 616, "nsu.ru"),
    ("Harvard University", "USA", 1, "harvard.edu"),
    ("Stanford University", "USA", 2, "stanford.edu"),
    ("Massachusetts Institute of Technology", "USA", 3, "mit.edu"),
    ("University of Oxford", "United Kingdom", 16, "ox.ac.uk"),
    ("University of Cambridge", "United Kingdom", 15, "cam.ac.uk"),
    ("University College London", "United Kingdom", 24, "ucl.ac.uk"),
]
CATEGORIES = [
    "universities",
    "scientific_communities",
    "search_engines",
    "social_networks",
    "media",
    "news_portals",
    "other_organisations",
]
CITATION_SOURCES = (
    ("majestic", 0.5),
    ("crawl", 0.3),
    ("commoncrawl-index:CC-MAIN-2015-14", 0.2),
)
UNKNOWN_SHARE = 0.15  # domains without evidence: never fetched or no text
GRAPH_SHARE = 0.3  # domains a web graph finds citing some university
GRAPH_RUN = 1  # the Common Crawl graph run, older than the crawl runs
CRAWL_RUNS = (2, 3)
WORDS = [
    *("research", "university", "science", "journal", "news", "media", "forum", "blog"),
    *("search", "library", "student", "conference", "physics", "biology", "history"),
    *("archive", "portal", "company", "government", "city", "sport"),
]


def _chunks(rows: list[dict[str, Any]], size: int = 20_000):
    for i in range(0, len(rows), size):
        yield rows[i : i + size]


def generate(engine: Engine, *, n_pages: int, n_domains: int, seed: int = 1) -> dict[str, int]:
    """Fill a migrated, empty database; return the row counts."""
    from store import models as m

    rng = random.Random(seed)
    t0 = dt.datetime(2015, 3, 1, tzinfo=dt.UTC)
    counts: dict[str, int] = {}

    def put(conn: Any, model: Any, rows: list[dict[str, Any]]) -> None:
        # executemany needs one shape: fill what a row leaves out with the column default
        keys = sorted({k for r in rows for k in r})
        cols = model.__table__.c
        fill = {
            k: cols[k].default.arg
            if cols[k].default is not None and cols[k].default.is_scalar
            else None
            for k in keys
        }
        rows = [{k: r.get(k, fill[k]) for k in keys} for r in rows]
        for chunk in _chunks(rows):
            conn.execute(insert(model), chunk)
        counts[model.__tablename__] = counts.get(model.__tablename__, 0) + len(rows)

    with engine.begin() as conn:
        put(
            conn,
            m.PipelineRun,
            [
                {
                    "id": 1,
                    "started_at": t0,
                    "finished_at": t0 + dt.timedelta(hours=5),
                    "status": "finished",
                    "trigger": "schedule",
                    "stages": [
                        {"name": s, "status": "finished", "seconds": 60.0, "stats": {"n": 1}}
                        for s in ("crawl", "extract", "dedup", "cluster", "analyse")
                    ],
                }
            ],
        )
        put(
            conn,
            m.University,
            [
                {"id": i + 1, "name": n, "country": c, "rank": r, "home_urls": [f"https://{d}/"]}
                for i, (n, c, r, d) in enumerate(UNIVERSITIES)
            ],
        )
        put(
            conn,
            m.UniversityDomain,
            [{"university_id": i + 1, "domain": u[3]} for i, u in enumerate(UNIVERSITIES)],
        )
        runs = list(CRAWL_RUNS)
        put(
            conn,
            m.CrawlRun,
            [
                {
                    "id": GRAPH_RUN,
                    "kind": "commoncrawl-graph",
                    "started_at": t0 - dt.timedelta(days=10),
                    "finished_at": t0 - dt.timedelta(days=10, hours=-1),
                    "status": "finished",
                    "settings": {"release": "cc-main-2015-feb-mar-apr"},
                    "stats": {"domains": int(n_domains * GRAPH_SHARE)},
                },
                *(
                    {
                        "id": r,
                        "kind": "both",
                        "started_at": t0 + dt.timedelta(days=30 * i),
                        "finished_at": t0 + dt.timedelta(days=30 * i, hours=4),
                        "status": "finished",
                        "settings": {"depth": 3},
                        "stats": {"pages": n_pages // 2, "links": n_pages},
                        "pipeline_run_id": 1 if i == 0 else None,
                    }
                    for i, r in enumerate(runs)
                ),
            ],
        )
        domains = [
            f"site{i:05d}.{rng.choice(['com', 'org', 'ru', 'edu', 'net'])}"
            for i in range(n_domains)
        ]
        lang: dict[str, str | None] = {
            d: None
            if rng.random() < UNKNOWN_SHARE
            else ("ru" if d.endswith(".ru") or rng.random() < 0.3 else "en")
            for d in domains
        }
        category = {d: rng.choice(CATEGORIES) if lang[d] else "unknown" for d in domains}
        source_names = [name for name, _ in CITATION_SOURCES]
        source_weights = [w for _, w in CITATION_SOURCES]
        n_uni_pages = max(len(UNIVERSITIES), n_pages // 20)
        per_uni = n_uni_pages // len(UNIVERSITIES)
        n_external = n_pages - per_uni * len(UNIVERSITIES)
        pages: list[dict[str, Any]] = []
        for ui, u in enumerate(UNIVERSITIES):
            for j in range(per_uni):
                pages.append(
                    {
                        "id": len(pages) + 1,
                        "url": f"https://{u[3]}/p/{j}",
                        "host": u[3],
                        "registered_domain": u[3],
                        "university_id": ui + 1,
                        "role": "university",
                        "http_status": 200,
                        "extraction_status": "ok",
                        "first_run_id": 1,
                        "last_run_id": 2,
                    }
                )
        # external pages: each domain gets pages, ~half linked from universities
        # (external), ~half citing one
        ext_pages: list[tuple[int, str, str]] = []  # id, domain, role
        for k in range(n_external):
            d = domains[k % n_domains]
            role = "external" if (k // n_domains) % 2 == 0 else "citing"
            pid = len(pages) + 1
            pages.append(
                {
                    "id": pid,
                    "url": f"https://{d}/{role}/{k}",
                    "host": d,
                    "registered_domain": d,
                    "role": role,
                    "http_status": 200 if lang[d] else None,
                    "language": lang[d],
                    "title": f"{rng.choice(WORDS)} {rng.choice(WORDS)} {k}" if lang[d] else None,
                    "text": "text" if lang[d] else None,
                    "extraction_status": "ok" if lang[d] else "failed",
                    "first_run_id": 1,
                    "last_run_id": 2,
                }
            )
            ext_pages.append((pid, d, role))
        put(conn, m.Page, pages)

        links, citations = [], []
        env: dict[tuple[int, int, str, str], list[int]] = {}
        for pid, d, role in ext_pages:
            uid = rng.randrange(len(UNIVERSITIES)) + 1
            for run in runs:
                if run == runs[1] and rng.random() < 0.2:
                    continue  # some environment disappears in the second run
                key = (run, uid, d, "outgoing" if role == "external" else "citing")
                if role == "external":
                    src = (uid - 1) * per_uni + rng.randrange(per_uni) + 1
                    links.append(
                        {
                            "run_id": run,
                            "source_page_id": src,
                            "target_url": f"https://{d}/external/{pid}",
                            "target_host": d,
                            "target_domain": d,
                            "anchor": rng.choice(WORDS),
                            "nofollow": False,
                            "external": True,
                        }
                    )
                else:
                    citations.append(
                        {
                            "run_id": run,
                            "university_id": uid,
                            "citing_url": f"https://{d}/citing/{pid}",
                            "citing_domain": d,
                            "page_id": pid,
                            "source": rng.choices(source_names, source_weights)[0],
                            "status": "verified",
                            "checked_at": t0,
                        }
                    )
                env.setdefault(key, []).append(pid)
        put(conn, m.Link, links)
        put(conn, m.Citation, citations)
        put(
            conn,
            m.Environment,
            [
                {
                    "run_id": run,
                    "university_id": uid,
                    "domain": d,
                    "direction": direction,
                    "link_count": len(pids),
                    "page_count": len(pids),
                }
                for (run, uid, d, direction), pids in env.items()
            ],
        )
        # the web graph's citing domains: environment rows of the graph run and their nodes
        graph: dict[tuple[int, str], int] = {}
        for d in rng.sample(domains, int(n_domains * GRAPH_SHARE)):
            for uid in rng.sample(range(1, len(UNIVERSITIES) + 1), rng.randint(1, 3)):
                graph[(uid, d)] = rng.randint(1, 50)
        put(
            conn,
            m.Environment,
            [
                {
                    "run_id": GRAPH_RUN,
                    "university_id": uid,
                    "domain": d,
                    "direction": "citing",
                    "link_count": n,
                    "page_count": 0,
                }
                for (uid, d), n in graph.items()
            ],
        )
        put(
            conn,
            m.CitingNode,
            [
                {
                    "run_id": GRAPH_RUN,
                    "university_id": uid,
                    "source": "commoncrawl-graph:cc-main-2015-feb-mar-apr",
                    "level": "domain",
                    "node": d,
                    "domain": d,
                    "links": n,
                    "num_hosts": 1 + n // 5,
                    "harmonic_centrality": round(rng.random() * 1e7, 1),
                    "pagerank": rng.random() * 1e-4,
                }
                for (uid, d), n in graph.items()
            ],
        )
        evidence = [d for d in domains if lang[d]]
        docs = [
            {
                "id": i + 1,
                "unit": "domain",
                "key": d,
                "domain": d,
                "language": lang[d],
                "n_pages": 10,
                "text_length": 1000,
                "n_shingles": 100,
            }
            for i, d in enumerate(evidence)
        ]
        doc_id = {d: i + 1 for i, d in enumerate(evidence)}
        with_text = [(pid, d, role) for pid, d, role in ext_pages if lang[d]]
        page_docs = [
            {
                "id": len(evidence) + i + 1,
                "unit": "page",
                "key": f"https://{d}/external/{pid}"
                if role == "external"
                else f"https://{d}/citing/{pid}",
                "page_id": pid,
                "domain": d,
                "language": lang[d],
                "text_length": 500,
            }
            for i, (pid, d, role) in enumerate(with_text[: n_external // 5])
        ]
        put(conn, m.Document, docs + page_docs)
        overridden = {d: rng.choice(CATEGORIES) for d in domains if rng.random() < 0.01}
        put(
            conn,
            m.DomainCategory,
            [
                {
                    "domain": d,
                    "category": category[d],
                    "score": round(rng.random(), 3) if lang[d] else 0.0,
                    "evidence": {"pattern": d.rsplit(".", 1)[-1]} if lang[d] else {},
                    "override_category": overridden.get(d),
                    "override_at": t0 if d in overridden else None,
                    "updated_at": t0,
                }
                for d in domains
            ],
        )
        # one clustering per university and direction of the first crawl run, over the
        # domains with a document
        cluster_id = 0
        clusterings: list[dict[str, Any]] = []
        clusters: list[dict[str, Any]] = []
        members: list[dict[str, Any]] = []
        for uid in range(1, len(UNIVERSITIES) + 1):
            for direction in ("outgoing", "citing"):
                doms = sorted(
                    {
                        d
                        for (run, u, d, dr) in env
                        if run == runs[0] and u == uid and dr == direction and d in doc_id
                    }
                )
                rng.shuffle(doms)
                cid = len(clusterings) + 1
                n_final = max(1, len(doms) // 8)
                labels = [min(int(rng.paretovariate(1.2)) - 1, n_final - 1) for _ in doms]
                levels = []
                for li, r in enumerate((8, 6, 4, 2)):
                    n_lvl = max(n_final, len(doms) - (len(doms) - n_final) * (li + 1) // 4)
                    levels.append(
                        {
                            "r": r,
                            "b": 128 // r,
                            "s_curve": round((r / 128) ** (1 / r), 6),
                            "n_candidates": len(doms),
                            "n_compared": len(doms),
                            "n_linked": 10,
                            "n_clusters": n_lvl,
                            "seconds": 0.1,
                        }
                    )
                clusterings.append(
                    {
                        "id": cid,
                        "algorithm": "lsh-link",
                        "linkage": "single",
                        "unit": "domain",
                        "parameters": {"threshold": 0.3, "r0": 8, "r_min": 2, "step": 2},
                        "filter": {
                            "university_id": uid,
                            "direction": direction,
                            "run_id": runs[0],
                        },
                        "n_documents": len(doms),
                        "n_excluded_duplicates": 0,
                        "n_clusters": n_final,
                        "seconds": 1.0,
                        "levels": levels,
                        "created_at": t0,
                    }
                )
                by_label: dict[int, list[str]] = {}
                for d, lab in zip(doms, labels, strict=True):
                    by_label.setdefault(lab, []).append(d)
                for level in (-1, 0, 1, 2, 3):
                    groups = (
                        by_label
                        if level in (-1, 3)
                        else {i: [d] for i, d in enumerate(doms[: levels[level]["n_clusters"]])}
                    )
                    for lab, ds in groups.items():
                        cluster_id += 1
                        cats = [category[d] for d in ds]
                        agree = max(set(cats), key=cats.count)
                        clusters.append(
                            {
                                "id": cluster_id,
                                "clustering_id": cid,
                                "level": level,
                                "label": lab,
                                "size": len(ds),
                                "theme_terms": rng.sample(WORDS, 5),
                                "top_shingles": rng.sample(WORDS, 3),
                                "top_domains": ds[:5],
                                "titles": [f"{rng.choice(WORDS)} title"],
                                "category": agree,
                                "category_score": 0.5,
                                "category_support": round(cats.count(agree) / len(cats), 3),
                                "category_voters": len(cats),
                                "category_evidence": {},
                            }
                        )
                        if level == -1:
                            members += [
                                {"cluster_id": cluster_id, "document_id": doc_id[d]} for d in ds
                            ]
        put(conn, m.Clustering, clusterings)
        put(conn, m.Cluster, clusters)
        put(conn, m.ClusterMember, members)
        # near duplicates over the page documents: groups of 2-5
        put(
            conn,
            m.DedupRun,
            [
                {
                    "id": 1,
                    "method": "minhash-lsh",
                    "grouping": "components",
                    "unit": "page",
                    "parameters": {"threshold": 0.8},
                    "n_documents": len(page_docs),
                    "n_groups": 0,
                    "n_duplicates": 0,
                    "seconds": 3.0,
                    "created_at": t0,
                }
            ],
        )
        dgroups: list[dict[str, Any]] = []
        dmembers: list[dict[str, Any]] = []
        i, gid = 0, 0
        ids = [d["id"] for d in page_docs]
        while i < len(ids) - 5:
            size = rng.randint(2, 5)
            gid += 1
            dgroups.append(
                {
                    "id": gid,
                    "dedup_run_id": 1,
                    "method": "minhash-lsh",
                    "canonical_document_id": ids[i],
                    "size": size,
                }
            )
            dmembers += [{"group_id": gid, "document_id": ids[i + k]} for k in range(size)]
            i += size + rng.randint(0, 10)
        put(conn, m.DuplicateGroup, dgroups)
        put(conn, m.DuplicateMember, dmembers)
        conn.execute(
            update(m.DedupRun).values(
                n_groups=len(dgroups), n_duplicates=len(dmembers) - len(dgroups)
            )
        )
    with engine.connect() as conn:
        n_dom = conn.execute(
            select(m.Page.registered_domain).where(m.Page.role != "university").distinct()
        ).all()
    counts["external domains"] = len(n_dom)
    return counts
