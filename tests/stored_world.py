"""The stored world the tests of ``store``, ``analyse``, the ``report`` command and the
dashboard read: one small, exactly known database, filled by :func:`fill_world` and
offered by the fixtures below (registered for the whole suite from ``tests/conftest.py``).

Four universities in three countries (:data:`UNIVERSITIES`), two finished crawl runs and
a failed one, each finished run's pages, links, citations and environment rows
consistent with :data:`ENV`; external page texts taken from the shared BBC and Lenta.ru
corpora; domain documents (one domain without: :data:`NO_DOCUMENT`), domain categories
(one overridden by an analyst: :data:`OVERRIDES`; one domain never categorised:
:data:`UNCATEGORISED`); a clustering per university and direction of
:data:`CLUSTERINGS` with its levels and level rows, whose final clusters have no theme
yet (the analyse stage names them) except those of :data:`NAMED`; a near-duplicate run
of pages with the groups of :data:`DUPLICATES`; a finished and a failed pipeline run.
Noise the queries must ignore: an internal link, an "external" link to the university's
own domain, a link from an external page, a citation that was not found.

The tests derive the numbers they expect from these facts (:func:`expected_table2`,
:func:`table2`, :func:`table3`, :func:`effective_category`...), independently of the SQL.
"""

from __future__ import annotations

import csv
import datetime as dt
import tarfile
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select
from sqlalchemy.orm import Session

from store import make_engine, schema, session_scope
from store.models import (
    Citation,
    CitingNode,
    Cluster,
    Clustering,
    ClusterMember,
    CrawlRun,
    DedupRun,
    Document,
    DomainCategory,
    DuplicateGroup,
    DuplicateMember,
    Environment,
    Link,
    Page,
    PipelineRun,
    University,
    UniversityDomain,
)

T0 = dt.datetime(2015, 4, 2, 9, 0, tzinfo=dt.UTC)

UNIVERSITIES = [
    # name, country, rank, domain
    ("Massachusetts Institute of Technology", "USA", 3, "mit.edu"),
    ("University of Oxford", "United Kingdom", 16, "ox.ac.uk"),
    ("Saint Petersburg State University", "Russia", 539, "spbu.ru"),
    ("Novosibirsk State University", "Russia", 616, "nsu.ru"),
]
UNI_BY_DOMAIN = {d: (n, c, r) for n, c, r, d in UNIVERSITIES}

# domain -> (language, category a human gives it, text source "bbc:<topic>" | "lenta:<rubric>")
DOMAINS: dict[str, tuple[str, str, str]] = {
    "arxiv.org": ("en", "scientific_communities", "bbc:tech"),
    "elibrary.ru": ("ru", "scientific_communities", "lenta:8"),
    "mit.edu": ("en", "universities", "bbc:tech"),
    "ox.ac.uk": ("en", "universities", "bbc:politics"),
    "msu.ru": ("ru", "universities", "lenta:8"),
    "cam.ac.uk": ("en", "universities", "bbc:business"),
    "google.com": ("en", "search_engines", "bbc:tech"),
    "vk.com": ("ru", "social_networks", "lenta:4"),
    "lenta.ru": ("ru", "news_portals", "lenta:0"),
    "bbc.co.uk": ("en", "media", "bbc:entertainment"),
    "gazprom.ru": ("ru", "other_organisations", "lenta:1"),
    "cnn.com": ("en", "news_portals", "bbc:politics"),
}
# the analyst moved lenta.ru from news portals to media
OVERRIDES = {"lenta.ru": "media"}
# never categorised: counts as "uncategorised"
UNCATEGORISED = {"cnn.com"}
# no domain document: its language comes from its pages
NO_DOCUMENT = {"cam.ac.uk"}

# run -> university domain -> direction -> external domain -> links (outgoing: one target
# page per link, spread over the university's pages) or verified citing pages (citing)
ENV: dict[int, dict[str, dict[str, dict[str, int]]]] = {
    1: {
        "spbu.ru": {
            "outgoing": {
                "mit.edu": 3,
                "arxiv.org": 2,
                "vk.com": 4,
                "lenta.ru": 1,
                "elibrary.ru": 2,
            },
            "citing": {"msu.ru": 3, "vk.com": 2, "lenta.ru": 1},
        },
        "nsu.ru": {
            "outgoing": {"msu.ru": 2, "google.com": 1, "vk.com": 1},
            "citing": {"elibrary.ru": 2},
        },
        "ox.ac.uk": {
            "outgoing": {"mit.edu": 5, "bbc.co.uk": 2, "arxiv.org": 1, "google.com": 1},
            "citing": {"mit.edu": 4, "bbc.co.uk": 1, "cam.ac.uk": 1},
        },
        "mit.edu": {"outgoing": {"arxiv.org": 2, "ox.ac.uk": 1}},
    },
    2: {
        "spbu.ru": {
            "outgoing": {"arxiv.org": 1, "vk.com": 1, "gazprom.ru": 2},
            "citing": {"msu.ru": 1, "cnn.com": 1},
        },
        "ox.ac.uk": {"outgoing": {"mit.edu": 1, "arxiv.org": 1}},
    },
}

# the clusterings of run 1: (university, direction) -> final clusters (name -> member
# domains, in label order)
CLUSTERINGS: dict[tuple[str, str], dict[str, list[str]]] = {
    ("spbu.ru", "outgoing"): {
        "science": ["arxiv.org", "elibrary.ru", "mit.edu"],
        "social": ["lenta.ru", "vk.com"],
    },
    ("spbu.ru", "citing"): {"ru-web": ["lenta.ru", "msu.ru", "vk.com"]},
    ("ox.ac.uk", "outgoing"): {
        "academia": ["arxiv.org", "mit.edu"],
        "web": ["bbc.co.uk", "google.com"],
    },
}
# the clusterings whose clusters already have a theme (``<name>-term, research``); the
# analyse stage names the others
NAMED = {("spbu.ru", "citing")}


# (citing domain, university nodes it links to, harmonic centrality, PageRank)
CITING_NODES = (("wikipedia.org", 4, 2.5e7, 1.2e-3), ("vk.com", 1, 1.9e7, 8.0e-4))


def external_url(domain: str, udom: str, i: int) -> str:
    """The external page of ``domain`` that the ``i``-th link of university ``udom`` to it
    targets."""
    return f"https://{domain}/{udom}/{i}"


# near duplicates of pages: (canonical, other members), largest group first
DUPLICATES: list[tuple[str, list[str]]] = [
    (
        external_url("vk.com", "spbu.ru", 0),
        [external_url("vk.com", "spbu.ru", 1), external_url("vk.com", "spbu.ru", 2)],
    ),
    (external_url("mit.edu", "spbu.ru", 0), [external_url("mit.edu", "ox.ac.uk", 0)]),
]


@dataclass
class Facts:
    """What the fixture stored: ids by name, and the URL."""

    url: str
    university_ids: dict[str, int] = field(default_factory=dict)  # by domain
    run_ids: dict[int, int] = field(default_factory=dict)  # fixture run -> crawl_run.id
    failed_run_id: int = 0
    clustering_ids: dict[tuple[str, str], int] = field(default_factory=dict)
    cluster_ids: dict[str, int] = field(default_factory=dict)  # by "<udom>:<name>"
    dedup_run_id: int = 0
    pipeline_run_id: int = 0

    @staticmethod
    def table2(run: int) -> dict[str, tuple[int, int, int, int]]:
        """Table 2 expected for fixture run ``run`` (see :func:`table2`)."""
        return table2(run)

    @staticmethod
    def table3(run: int) -> dict[str, tuple[int, int, int, int]]:
        """Table 3 expected for fixture run ``run`` (see :func:`table3`)."""
        return table3(run)


def site_pages(run: int, udom: str) -> int:
    """University pages seen in ``run``: page ``p{i}`` is used by the i-th link to any
    domain, and counts for every run from its first to its last use."""
    first: dict[int, int] = {}
    last: dict[int, int] = {}
    for n in sorted(ENV):
        top = max(ENV[n].get(udom, {}).get("outgoing", {}).values(), default=0)
        for i in range(top):
            first.setdefault(i, n)
            last[i] = n
    return sum(1 for i in first if first[i] <= run <= last[i])


def expected_table2(run: int) -> dict[str, tuple[int, int, int, int, int]]:
    """university domain -> (site pages, external links, external domains, citing pages,
    citing domains)."""
    out = {}
    for _n, _c, _r, udom in UNIVERSITIES:
        env = ENV[run].get(udom, {})
        o, c = env.get("outgoing", {}), env.get("citing", {})
        out[udom] = (site_pages(run, udom), sum(o.values()), len(o), sum(c.values()), len(c))
    return out


def table2(run: int) -> dict[str, tuple[int, int, int, int]]:
    """The paper's Table 2 per university domain for a fixture run: external links,
    external domains, citing pages, citing domains."""
    return {udom: row[1:] for udom, row in expected_table2(run).items()}


def table3(run: int) -> dict[str, tuple[int, int, int, int]]:
    """Table 3 per university domain: outgoing domains ru, en; citing domains ru, en."""
    out = {}
    for _name, _country, _rank, udom in UNIVERSITIES:
        env = ENV[run].get(udom, {})
        row = []
        for direction in ("outgoing", "citing"):
            doms = env.get(direction, {})
            row += [
                sum(DOMAINS[d][0] == "ru" for d in doms),
                sum(DOMAINS[d][0] == "en" for d in doms),
            ]
        out[udom] = tuple(row)
    return out


def effective_category(domain: str) -> str:
    if domain in UNCATEGORISED:
        return "uncategorised"
    return OVERRIDES.get(domain, DOMAINS[domain][1])


def theme_terms(clustering: tuple[str, str], name: str) -> tuple[str, ...]:
    """The theme terms the world stores for final cluster ``name`` of a clustering of
    :data:`CLUSTERINGS`: none unless the clustering is :data:`NAMED`."""
    return (f"{name}-term", "research") if clustering in NAMED else ()


def by_rank() -> list[str]:
    """The university domains by rank (the order of Table 2 and of the dashboard's
    university choice)."""
    return [d for _n, _c, _r, d in sorted(UNIVERSITIES, key=lambda u: u[2])]


# --- real texts ---------------------------------------------------------------------------


def load_bbc(root: Path, per_topic: int = 40) -> dict[str, list[tuple[str, str]]]:
    """``topic -> [(title, body), ...]``, the first ``per_topic`` articles in file order."""
    out: dict[str, list[tuple[str, str]]] = defaultdict(list)
    path = root / "bbc-fulltext" / "bbc-fulltext.tar.gz"
    if not path.is_file():
        pytest.fail(f"BBC corpus not found at {path}", pytrace=False)
    with tarfile.open(path) as tf:
        members = sorted(
            (m for m in tf.getmembers() if m.isfile() and m.name.endswith(".txt")),
            key=lambda m: m.name,
        )
        for m in members:
            parts = m.name.split("/")
            if len(parts) != 3 or len(out[parts[1]]) >= per_topic:
                continue
            fh = tf.extractfile(m)
            assert fh is not None
            raw = fh.read().decode("utf-8", "replace")
            title, _, body = raw.partition("\n")
            out[parts[1]].append((title.strip(), body.strip()))
    return dict(out)


def load_lenta(root: Path, per_rubric: int = 40) -> dict[str, list[tuple[str, str]]]:
    """``rubric -> [(first line as title, text), ...]``."""
    out: dict[str, list[tuple[str, str]]] = defaultdict(list)
    path = root / "lenta-rubrics-asryan" / "train_news.csv"
    if not path.is_file():
        pytest.fail(f"Lenta corpus not found at {path}", pytrace=False)
    with path.open(encoding="utf-8") as fh:
        for row in csv.DictReader(fh):
            if len(out[row["topic"]]) < per_rubric:
                text = row["content"].strip()
                out[row["topic"]].append((text.split("\n", 1)[0][:120], text))
    return dict(out)


@pytest.fixture(scope="session")
def corpora(shared_data: Path) -> dict[str, dict[str, list[tuple[str, str]]]]:
    return {"bbc": load_bbc(shared_data), "lenta": load_lenta(shared_data)}


# --- the database -------------------------------------------------------------------------


def _level(r: int, b: int, s_curve: float, n_clusters: int) -> dict[str, Any]:
    """A level as :meth:`cluster.lsh_link.LSHLevel.to_dict` stores it."""
    return {
        "r": r,
        "b": b,
        "s_curve": s_curve,
        "n_candidates": 4,
        "n_compared": 4,
        "n_linked": 1,
        "n_clusters": n_clusters,
        "seconds": 0.01,
    }


def store_clustering(
    s: Session,
    docs: Mapping[str, Document],
    flt: dict[str, Any],
    groups: dict[str, list[str]],
    created_at: dt.datetime,
    *,
    named: bool = True,
) -> tuple[int, dict[str, int]]:
    """Store a clustering of domain documents (``filter`` ``flt``) whose final clusters are
    ``groups`` (name -> member domains, in label order), with its levels and level rows;
    ``named``: the final clusters have a theme (``<name>-term, research``), top shingles
    and titles, else the analyse stage has yet to name them. Returns the clustering's id
    and the ids of its final clusters by name."""
    doms = [d for members in groups.values() for d in members]
    c = Clustering(
        algorithm="lsh-link",
        linkage="single",
        unit="domain",
        parameters={"threshold": 0.3, "r0": 8, "r_min": 2, "step": 2, "num_perm": 128},
        filter=flt,
        n_documents=len(doms),
        n_excluded_duplicates=0,
        n_clusters=len(groups),
        seconds=0.5,
        levels=[
            _level(8, 16, 0.707107, len(doms)),
            _level(6, 21, 0.601967, len(doms) - 1),
            _level(4, 32, 0.420448, len(groups)),
            _level(2, 64, 0.125, len(groups)),
        ],
        created_at=created_at,
    )
    s.add(c)
    s.flush()
    cluster_ids = {}
    for label, (name, members) in enumerate(groups.items()):
        cats = [OVERRIDES.get(d, DOMAINS[d][1]) for d in members]
        cl = Cluster(
            clustering_id=c.id,
            level=-1,
            label=label,
            size=len(members),
            theme_terms=[f"{name}-term", "research"] if named else None,  # see theme_terms
            top_shingles=[f"{name} shingle"] if named else None,
            top_domains=members[:3],
            titles=[f"{members[0]} page 0"] if named else None,
            category=max(sorted(set(cats)), key=cats.count),
            category_score=0.7,
        )
        s.add(cl)
        s.flush()
        cluster_ids[name] = cl.id
        for d in members:
            s.add(ClusterMember(cluster_id=cl.id, document_id=docs[d].id))
    # the level rows: at level 2 the clusters are the final ones
    for label, members in enumerate(groups.values()):
        s.add(Cluster(clustering_id=c.id, level=2, label=label, size=len(members)))
    for label, d in enumerate(doms):
        s.add(Cluster(clustering_id=c.id, level=0, label=label, size=1, top_domains=[d]))
    return c.id, cluster_ids


def add_clustering(
    url: str, flt: dict[str, Any], groups: dict[str, list[str]], created_at: dt.datetime
) -> int:
    """:func:`store_clustering` over the fixture's domain documents in the database at
    ``url``, committed; returns the clustering's id."""
    engine = make_engine(url)
    try:
        with session_scope(engine) as s:
            docs = {d.key: d for d in s.scalars(select(Document).where(Document.unit == "domain"))}
            cid, _ = store_clustering(s, docs, flt, groups, created_at)
    finally:
        engine.dispose()
    return cid


def fill_world(url: str, corpora: dict[str, dict[str, list[tuple[str, str]]]]) -> Facts:
    """Insert the fixture's rows into the migrated database at ``url``."""
    facts = Facts(url=url)
    engine = make_engine(url)
    try:
        _fill_world(engine, facts, corpora)
        store_analysis(engine)
    finally:
        engine.dispose()
    return facts


def store_analysis(engine: Any) -> None:
    """What the analyse stage stores for readers: the taxonomy's labels, each run's
    networks and the figures (store.aggregates; the readers read nothing else)."""
    from analyse.categories import load_taxonomy
    from store import aggregates
    from webometrics.stages.analyse import store_category_labels, store_networks

    store_category_labels(engine, load_taxonomy())
    aggregates.refresh(engine)  # the networks are those of the runs with figures
    store_networks(engine, progress=False)


def _fill_world(
    engine: Any, facts: Facts, corpora: dict[str, dict[str, list[tuple[str, str]]]]
) -> None:
    used: dict[str, int] = defaultdict(int)

    def text_for(domain: str) -> tuple[str, str]:
        corpus, key = DOMAINS[domain][2].split(":")
        items = corpora[corpus][key]
        i = used[DOMAINS[domain][2]] % len(items)
        used[DOMAINS[domain][2]] += 1
        return items[i]

    with session_scope(engine) as s:
        pipe = PipelineRun(
            started_at=T0,
            finished_at=T0 + dt.timedelta(minutes=42),
            status="finished",
            trigger="schedule",
            universities_file="universities.toml",
            stages=[
                {"name": "crawl", "status": "finished", "seconds": 1800.0, "stats": {"pages": 61}},
                {"name": "extract", "status": "finished", "seconds": 300.5, "stats": {"ok": 58}},
                {"name": "dedup", "status": "finished", "seconds": 12.0, "stats": {"groups": 2}},
                {"name": "cluster", "status": "finished", "seconds": 7.25, "stats": {}},
            ],
        )
        failed_pipe = PipelineRun(
            started_at=T0 + dt.timedelta(days=7),
            finished_at=T0 + dt.timedelta(days=7, minutes=1),
            status="failed",
            trigger="manual",
            stages=[
                {
                    "name": "crawl",
                    "status": "failed",
                    "seconds": 61.0,
                    "error": "StageError: proxy refused",
                }
            ],
            error="stage crawl: proxy refused the connection",
        )
        s.add_all([pipe, failed_pipe])
        s.flush()
        facts.pipeline_run_id = pipe.id

        unis = {}
        for name, country, rank, udom in UNIVERSITIES:
            u = University(name=name, country=country, rank=rank, home_urls=[f"https://{udom}/"])
            u.domains.append(UniversityDomain(domain=udom))
            s.add(u)
            unis[udom] = u
        runs = {}
        for n in sorted(ENV):
            runs[n] = CrawlRun(
                kind="both",
                started_at=T0 + dt.timedelta(days=30 * (n - 1)),
                finished_at=T0 + dt.timedelta(days=30 * (n - 1), minutes=30),
                status="finished",
                settings={"depth": 3},
                stats={"pages": 10 * n, "links": 20 * n},
                pipeline_run_id=pipe.id if n == 1 else None,
            )
            s.add(runs[n])
        failed = CrawlRun(
            kind="citing",
            started_at=T0 + dt.timedelta(days=7),
            finished_at=T0 + dt.timedelta(days=7, minutes=1),
            status="failed",
            stats={},
            error="proxy refused the connection: start the test web or unset --proxy",
            pipeline_run_id=failed_pipe.id,
        )
        s.add(failed)
        s.flush()
        facts.university_ids = {d: u.id for d, u in unis.items()}
        facts.run_ids = {n: r.id for n, r in runs.items()}
        facts.failed_run_id = failed.id

        pages: dict[str, Page] = {}

        def page(url: str, domain: str, role: str, uid: int | None, run_id: int) -> Page:
            p = pages.get(url)
            if p is None:
                if role == "university":
                    title, text = f"{domain} home", "University news and events."
                    lang = "en"
                else:
                    title, text = text_for(domain)
                    lang = DOMAINS[domain][0]
                p = Page(
                    url=url,
                    host=url.split("/")[2],
                    registered_domain=domain,
                    university_id=uid,
                    role=role,
                    http_status=200,
                    content_type="text/html",
                    fetched_at=T0,
                    language=lang,
                    title=title,
                    text=text,
                    extraction_status="ok",
                    first_run_id=run_id,
                    last_run_id=run_id,
                )
                s.add(p)
                s.flush()
                pages[url] = p
            else:
                p.last_run_id = max(p.last_run_id or run_id, run_id)
            return p

        for n, per_uni in ENV.items():
            run_id = runs[n].id
            for udom, dirs in per_uni.items():
                uni = unis[udom]
                for direction, doms in dirs.items():
                    for dom, count in doms.items():
                        for i in range(count):
                            if direction == "outgoing":
                                src = page(
                                    f"https://{udom}/p{i}", udom, "university", uni.id, run_id
                                )
                                target = external_url(dom, udom, i)
                                page(target, dom, "external", None, run_id)
                                s.add(
                                    Link(
                                        run_id=run_id,
                                        source_page_id=src.id,
                                        target_url=target,
                                        target_host=dom,
                                        target_domain=dom,
                                        anchor=f"link {i}",
                                    )
                                )
                            else:
                                citing = f"https://{dom}/cites/{udom}/{i}"
                                p = page(citing, dom, "citing", None, run_id)
                                s.add(
                                    Citation(
                                        run_id=run_id,
                                        university_id=uni.id,
                                        citing_url=citing,
                                        citing_domain=dom,
                                        page_id=p.id,
                                        source="majestic",
                                        status="verified",
                                        target_url=f"https://{udom}/",
                                        checked_at=T0,
                                    )
                                )
                        s.add(
                            Environment(
                                run_id=run_id,
                                university_id=uni.id,
                                domain=dom,
                                direction=direction,
                                link_count=count,
                                page_count=count,
                            )
                        )
        # noise the queries must ignore
        r1 = runs[1].id
        spbu_p0 = pages["https://spbu.ru/p0"]
        s.add_all(
            [
                Link(
                    run_id=r1,
                    source_page_id=spbu_p0.id,
                    target_url="https://www.spbu.ru/about",
                    target_host="www.spbu.ru",
                    target_domain="spbu.ru",
                    external=False,
                ),
                Link(
                    run_id=r1,
                    source_page_id=spbu_p0.id,
                    target_url="https://news.spbu.ru/",
                    target_host="news.spbu.ru",
                    target_domain="spbu.ru",
                    external=True,
                ),
                Link(
                    run_id=r1,
                    source_page_id=pages[external_url("vk.com", "spbu.ru", 0)].id,
                    target_url="https://www.bbc.co.uk/x",
                    target_host="www.bbc.co.uk",
                    target_domain="bbc.co.uk",
                ),
                # a citation that was not found on its page: never counted
                Citation(
                    run_id=r1,
                    university_id=unis["spbu.ru"].id,
                    citing_url="https://gazprom.ru/old",
                    citing_domain="gazprom.ru",
                    source="majestic",
                    status="missing",
                ),
            ]
        )
        docs = {}
        for dom, (lang, cat, _src) in DOMAINS.items():
            if dom not in NO_DOCUMENT:
                n_pages = sum(1 for p in pages.values() if p.registered_domain == dom)
                d = Document(
                    unit="domain",
                    key=dom,
                    domain=dom,
                    language=lang,
                    n_pages=n_pages,
                    text_length=400,
                )
                s.add(d)
                docs[dom] = d
            if dom not in UNCATEGORISED:
                s.add(
                    DomainCategory(
                        domain=dom,
                        category=cat,
                        score=0.9,
                        evidence={"fixture": True},
                        override_category=OVERRIDES.get(dom),
                        override_note="analyst" if dom in OVERRIDES else None,
                        override_at=T0 if dom in OVERRIDES else None,
                    )
                )
        s.flush()
        for (udom, direction), groups in CLUSTERINGS.items():
            flt = {
                "university_id": unis[udom].id,
                "university": unis[udom].name,
                "direction": direction,
                "run_id": r1,
            }
            cid, cluster_ids = store_clustering(
                s,
                docs,
                flt,
                groups,
                T0 + dt.timedelta(hours=1),
                named=(udom, direction) in NAMED,
            )
            facts.clustering_ids[(udom, direction)] = cid
            facts.cluster_ids.update({f"{udom}:{name}": i for name, i in cluster_ids.items()})

        # near duplicates of pages
        page_docs = {}
        for url in (u for canonical, others in DUPLICATES for u in (canonical, *others)):
            p = pages[url]
            d = Document(
                unit="page",
                key=url,
                page_id=p.id,
                domain=p.registered_domain,
                language=p.language,
                text_length=100,
            )
            s.add(d)
            page_docs[url] = d
        dd = DedupRun(
            method="minhash-lsh",
            grouping="components",
            unit="page",
            parameters={"threshold": 0.8},
            n_documents=len(page_docs),
            n_groups=len(DUPLICATES),
            n_duplicates=sum(len(others) for _c, others in DUPLICATES),
            seconds=0.02,
        )
        s.add(dd)
        s.flush()
        facts.dedup_run_id = dd.id
        for canonical, others in DUPLICATES:
            g = DuplicateGroup(
                dedup_run_id=dd.id,
                method="minhash-lsh",
                canonical_document_id=page_docs[canonical].id,
                size=1 + len(others),
            )
            s.add(g)
            s.flush()
            for url in [canonical, *others]:
                s.add(DuplicateMember(group_id=g.id, document_id=page_docs[url].id))
        # a Common Crawl web graph's citing domains of spbu.ru in the latest run, one of
        # them found by no other source (revision 0007's impact views)
        for node, links, harmonic, pagerank in CITING_NODES:
            s.add(
                CitingNode(
                    run_id=facts.run_ids[2],
                    university_id=facts.university_ids["spbu.ru"],
                    source="commoncrawl-graph:cc-main-test",
                    level="domain",
                    node=node,
                    domain=node,
                    links=links,
                    num_hosts=3,
                    harmonic_centrality=harmonic,
                    pagerank=pagerank,
                )
            )


def store_link(engine: Any, run_id: int, domain: str, university_id: int | None = None) -> None:
    """A link of ``run_id`` from a university page (of ``university_id``, else any) to
    ``domain``, as a crawl stores it: what makes the figures stale."""
    from sqlalchemy import insert

    where = [Page.role == "university"]
    if university_id is not None:
        where.append(Page.university_id == university_id)
    with engine.begin() as conn:
        page_id = conn.execute(select(Page.id).where(*where).order_by(Page.id)).scalars().first()
        conn.execute(
            insert(Link).values(
                run_id=run_id,
                source_page_id=page_id,
                target_url=f"https://{domain}/x",
                target_host=domain,
                target_domain=domain,
                nofollow=False,
                external=True,
            )
        )


def migrated_world_url(url: str) -> str:
    engine = make_engine(url)
    schema.upgrade(engine)
    engine.dispose()
    return url


# --- fixtures: the world on SQLite and PostgreSQL ------------------------------------------


@pytest.fixture
def filled(migrated_url: str, corpora: dict[str, Any]) -> Facts:
    """The world in a fresh database, on SQLite and on PostgreSQL (for tests that write)."""
    return fill_world(migrated_url, corpora)


@pytest.fixture(scope="module")
def filled_sqlite(tmp_path_factory: pytest.TempPathFactory, corpora: dict[str, Any]) -> Facts:
    """The world in a migrated SQLite file, made once per test module."""
    path = tmp_path_factory.mktemp("analysis") / "analysis.db"
    return fill_world(migrated_world_url(f"sqlite:///{path}"), corpora)


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def filled_ro(
    request: pytest.FixtureRequest,
    tmp_path_factory: pytest.TempPathFactory,
    corpora: dict[str, Any],
) -> Facts:
    """The world once per module and dialect, for tests that only read."""
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path_factory.mktemp('analysis-ro') / 'ro.db'}"
    else:
        url = request.getfixturevalue("postgres_server").create_database()
    return fill_world(migrated_world_url(url), corpora)


@pytest.fixture(scope="module")
def dashboard_db(tmp_path_factory: pytest.TempPathFactory, corpora: dict[str, Any]) -> Facts:
    """The world in a migrated SQLite file named ``dashboard.db`` (the dashboard shows the
    name), made once per test module."""
    path: Path = tmp_path_factory.mktemp("dashboard") / "dashboard.db"
    return fill_world(migrated_world_url(f"sqlite:///{path}"), corpora)


@pytest.fixture
def fresh_dashboard_db(tmp_path: Path, corpora: dict[str, Any]) -> Facts:
    """The world in a SQLite database of its own, for a dashboard test that writes."""
    return fill_world(migrated_world_url(f"sqlite:///{tmp_path / 'dashboard.db'}"), corpora)
