"""A small, exactly known database for the analysis tests, with real page texts.

Four universities in three countries, two crawl runs; every page, link, citation and
environment row consistent with :data:`ENV`; page texts taken from the shared BBC and
Lenta.ru corpora; domain documents, domain categories (one overridden), and clusterings
whose clusters have no theme yet (the analyse stage names them). Noise the queries must
ignore: an internal link, an "external" link to the university's own domain, a link from
an external page, a citation that was not found. The expected numbers are derived from
:data:`ENV` in the tests, independently of the SQL.
"""

from __future__ import annotations

import csv
import datetime as dt
import tarfile
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from store import make_engine, schema, session_scope
from store.models import (
    Citation,
    Cluster,
    Clustering,
    ClusterMember,
    CrawlRun,
    Document,
    DomainCategory,
    Environment,
    Link,
    Page,
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

# run -> university domain -> direction -> external domain -> links (outgoing) or
# citing pages (citing)
ENV: dict[int, dict[str, dict[str, dict[str, int]]]] = {
    1: {
        "spbu.ru": {
            "outgoing": {
                "arxiv.org": 2,
                "elibrary.ru": 2,
                "vk.com": 3,
                "lenta.ru": 1,
                "mit.edu": 1,
            },
            "citing": {"msu.ru": 2, "vk.com": 1, "lenta.ru": 1},
        },
        "nsu.ru": {
            "outgoing": {"msu.ru": 1, "google.com": 1, "vk.com": 2},
            "citing": {"elibrary.ru": 1},
        },
        "ox.ac.uk": {
            "outgoing": {"mit.edu": 3, "bbc.co.uk": 2, "arxiv.org": 1, "google.com": 1},
            "citing": {"mit.edu": 2, "bbc.co.uk": 1, "cam.ac.uk": 1},
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

# clusterings of run 1 (no themes yet): (university, direction) -> clusters of domains
CLUSTERINGS: dict[tuple[str, str], dict[str, list[str]]] = {
    ("spbu.ru", "outgoing"): {
        "science": ["arxiv.org", "elibrary.ru", "mit.edu"],
        "social": ["lenta.ru", "vk.com"],
    },
    ("ox.ac.uk", "outgoing"): {
        "academia": ["arxiv.org", "mit.edu"],
        "web": ["bbc.co.uk", "google.com"],
    },
}


@dataclass
class Facts:
    """What the fixture stored: ids by name, and the URL."""

    url: str
    university_ids: dict[str, int] = field(default_factory=dict)  # by domain
    run_ids: dict[int, int] = field(default_factory=dict)  # fixture run -> crawl_run.id
    clustering_ids: dict[tuple[str, str], int] = field(default_factory=dict)
    cluster_ids: dict[str, int] = field(default_factory=dict)


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


def effective_category(domain: str) -> str:
    if domain in UNCATEGORISED:
        return "uncategorised"
    return OVERRIDES.get(domain, DOMAINS[domain][1])


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


def fill(url: str, corpora: dict[str, dict[str, list[tuple[str, str]]]]) -> Facts:
    """Insert the fixture's rows into the migrated database at ``url``."""
    facts = Facts(url=url)
    engine = make_engine(url)
    try:
        _fill(engine, facts, corpora)
    finally:
        engine.dispose()
    return facts


def _fill(engine: Any, facts: Facts, corpora: dict[str, dict[str, list[tuple[str, str]]]]) -> None:
    used: dict[str, int] = defaultdict(int)

    def text_for(domain: str) -> tuple[str, str]:
        corpus, key = DOMAINS[domain][2].split(":")
        items = corpora[corpus][key]
        i = used[DOMAINS[domain][2]] % len(items)
        used[DOMAINS[domain][2]] += 1
        return items[i]

    with session_scope(engine) as s:
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
                finished_at=T0 + dt.timedelta(days=30 * (n - 1), hours=1),
                status="finished",
            )
            s.add(runs[n])
        s.flush()
        facts.university_ids = {d: u.id for d, u in unis.items()}
        facts.run_ids = {n: r.id for n, r in runs.items()}

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
                                target = f"https://www.{dom}/from/{udom}/{i}"
                                page(target, dom, "external", None, run_id)
                                s.add(
                                    Link(
                                        run_id=run_id,
                                        source_page_id=src.id,
                                        target_url=target,
                                        target_host=f"www.{dom}",
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
                    source_page_id=pages["https://www.vk.com/from/spbu.ru/0"].id,
                    target_url="https://www.bbc.co.uk/x",
                    target_host="www.bbc.co.uk",
                    target_domain="bbc.co.uk",
                ),
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
                d = Document(unit="domain", key=dom, domain=dom, language=lang, n_pages=n_pages)
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
            members = [d for g in groups.values() for d in g]
            c = Clustering(
                unit="domain",
                parameters={"threshold": 0.3},
                filter={"university_id": unis[udom].id, "direction": direction, "run_id": r1},
                n_documents=len(members),
                n_clusters=len(groups),
                created_at=T0 + dt.timedelta(hours=2),
            )
            s.add(c)
            s.flush()
            facts.clustering_ids[(udom, direction)] = c.id
            for label, (name, doms) in enumerate(groups.items()):
                cl = Cluster(clustering_id=c.id, level=-1, label=label, size=len(doms))
                s.add(cl)
                s.flush()
                facts.cluster_ids[f"{udom}:{name}"] = cl.id
                for d in doms:
                    s.add(ClusterMember(cluster_id=cl.id, document_id=docs[d].id))
            # an intermediate level row: not in v_cluster
            s.add(Cluster(clustering_id=c.id, level=0, label=99, size=1))


@pytest.fixture
def filled(migrated_url: str, corpora: dict[str, Any]) -> Facts:
    """The fixture in a fresh database, on SQLite and on PostgreSQL."""
    return fill(migrated_url, corpora)


@pytest.fixture(scope="module")
def filled_sqlite(tmp_path_factory: pytest.TempPathFactory, corpora: dict[str, Any]) -> Facts:
    """The fixture in a migrated SQLite file, made once per test module."""
    path = tmp_path_factory.mktemp("analysis") / "analysis.db"
    url = f"sqlite:///{path}"
    engine = make_engine(url)
    schema.upgrade(engine)
    engine.dispose()
    return fill(url, corpora)


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def filled_ro(
    request: pytest.FixtureRequest,
    tmp_path_factory: pytest.TempPathFactory,
    corpora: dict[str, Any],
) -> Facts:
    """The fixture once per module and dialect, for tests that only read."""
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path_factory.mktemp('analysis-ro') / 'ro.db'}"
    else:
        url = request.getfixturevalue("postgres_server").create_database()
    engine = make_engine(url)
    schema.upgrade(engine)
    engine.dispose()
    return fill(url, corpora)
