"""Small Common Crawl web graphs for the tests, with the answers counted in plain Python.

The graphs are written by :func:`testbed.commoncrawl_graph.write_graph` in the published
format (several gzip parts, sorted by reversed name, a ranks file with its header). The
expected citing nodes of each university are counted here from the edge list alone --
no DuckDB, no reversed names -- so the tests compare two independent computations.
"""

from __future__ import annotations

import gzip
import random
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy import Engine

from store import models as m
from store import session_scope
from testbed.commoncrawl_graph import GraphFiles, write_graph

#: name, country, rank, registered domains (stored form: one is Unicode, one has www.)
UNIVERSITIES = [
    ("Saint Petersburg State University", "Russia", 539, ["spbu.ru", "спбгу.рф"]),
    ("Massachusetts Institute of Technology", "USA", 3, ["mit.edu"]),
    ("University of Oxford", "UK", 7, ["ox.ac.uk", "www.oxford.edu"]),
    ("Nowhere University", "Nowhere", None, ["nowhere-university.example"]),
]
#: the graph's names of the university domains (IDNA)
GRAPH_DOMAINS = {
    "Saint Petersburg State University": ["spbu.ru", "xn--90ae8ahn.xn--p1ai"],
    "Massachusetts Institute of Technology": ["mit.edu"],
    "University of Oxford": ["ox.ac.uk", "oxford.edu"],
    "Nowhere University": [],
}
TLDS = ["com", "org", "net", "ru", "de", "co.uk", "ac.uk", "edu", "xn--p1ai"]


def add_universities(engine: Engine) -> dict[str, int]:
    """Store :data:`UNIVERSITIES`; name -> id."""
    ids = {}
    with session_scope(engine) as s:
        for name, country, rank, domains in UNIVERSITIES:
            u = m.University(name=name, country=country, rank=rank)
            for d in domains:
                u.domains.append(m.UniversityDomain(domain=d))
            s.add(u)
            s.flush()
            ids[name] = u.id
    return ids


@dataclass(frozen=True)
class GraphCase:
    files: GraphFiles
    edges: frozenset[tuple[str, str]]
    expected: dict[str, set[str]]  # university name -> citing node names
    expected_links: dict[tuple[str, str], int]  # (university, node) -> university nodes linked
    num_hosts: dict[str, int]


def _other_domains(rng: random.Random, n: int) -> list[str]:
    names = set()
    while len(names) < n:
        label = "".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(3, 8)))
        names.add(f"{label}.{rng.choice(TLDS)}")
    return sorted(names)


def domain_graph(root: Path, seed: int = 7) -> GraphCase:
    """A domain graph of some 400 domains and 3,000 edges, with links between the two
    domains of a university (internal: not citing) and IDNA names."""
    rng = random.Random(seed)
    uni_nodes = [d for ds in GRAPH_DOMAINS.values() for d in ds]
    others = _other_domains(rng, 400)
    nodes = others + uni_nodes
    edges: set[tuple[str, str]] = set()
    while len(edges) < 3000:
        a = rng.choice(nodes)
        # a third of the edges point at a university domain
        b = rng.choice(uni_nodes) if rng.random() < 0.33 else rng.choice(nodes)
        if a != b:
            edges.add((a, b))
    edges |= {("ox.ac.uk", "oxford.edu"), ("oxford.edu", "ox.ac.uk"), ("spbu.ru", "mit.edu")}
    num_hosts = {n: rng.randint(1, 40) for n in nodes}
    files = write_graph(
        root,
        nodes,
        edges,
        release="cc-main-2026-jan-feb-mar",
        level="domain",
        num_hosts=num_hosts,
        vertex_parts=3,
        edge_parts=4,
    )
    expected: dict[str, set[str]] = {}
    links: dict[tuple[str, str], int] = defaultdict(int)
    for uni, doms in GRAPH_DOMAINS.items():
        expected[uni] = set()
        for a, b in edges:
            if b in doms and a not in doms:
                expected[uni].add(a)
                links[(uni, a)] += 1
    return GraphCase(files, frozenset(edges), expected, dict(links), num_hosts)


def host_graph(root: Path, seed: int = 11) -> GraphCase:
    """A host graph: university hosts (subdomains; ``www.`` already stripped as in the
    published graph), other hosts, links between a university's own hosts."""
    rng = random.Random(seed)
    uni_hosts = {
        "Saint Petersburg State University": ["spbu.ru", "news.spbu.ru", "xn--90ae8ahn.xn--p1ai"],
        "Massachusetts Institute of Technology": ["mit.edu", "cs.mit.edu", "web.mit.edu"],
        "University of Oxford": ["ox.ac.uk", "maths.ox.ac.uk", "oxford.edu"],
        "Nowhere University": [],
    }
    # hosts that only look like a university's: a suffix match without the dot is not one
    decoys = ["notmit.edu", "mit.edu.example.com", "spbu.ru.evil.net", "box.ac.uk"]
    others = []
    for d in _other_domains(rng, 120):
        others.append(d)
        others += [f"{sub}.{d}" for sub in rng.sample(["blog", "news", "shop", "m"], 2)]
    all_uni = [h for hs in uni_hosts.values() for h in hs]
    nodes = others + all_uni + decoys
    edges: set[tuple[str, str]] = set()
    while len(edges) < 2500:
        a = rng.choice(nodes)
        b = rng.choice(all_uni) if rng.random() < 0.4 else rng.choice(nodes)
        if a != b:
            edges.add((a, b))
    edges |= {
        ("cs.mit.edu", "mit.edu"),
        ("maths.ox.ac.uk", "oxford.edu"),
        ("box.ac.uk", "ox.ac.uk"),
    }
    files = write_graph(
        root, nodes, edges, release="cc-main-2026-jan-feb-mar", level="host", vertex_parts=3
    )

    def belongs(host: str, domains: list[str]) -> bool:
        return any(host == d or host.endswith("." + d) for d in domains)

    expected: dict[str, set[str]] = {}
    links: dict[tuple[str, str], int] = defaultdict(int)
    for uni, doms in GRAPH_DOMAINS.items():
        expected[uni] = set()
        for a, b in edges:
            if belongs(b, doms) and not belongs(a, doms):
                expected[uni].add(a)
                links[(uni, a)] += 1
    return GraphCase(files, frozenset(edges), expected, dict(links), {})


def read_ranks(path: Path) -> dict[str, tuple[int, float, int, float]]:
    """Node name (normal notation) -> (harmonic position, value, PageRank position, value),
    parsed from the ranks file with the standard library."""
    out = {}
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        header = fh.readline().rstrip("\n").split("\t")
        assert header[:5] == ["#harmonicc_pos", "#harmonicc_val", "#pr_pos", "#pr_val", "#host_rev"]
        for line in fh:
            f = line.rstrip("\n").split("\t")
            name = ".".join(reversed(f[4].split(".")))
            out[name] = (int(f[0]), float(f[1]), int(f[2]), float(f[3]))
    return out
