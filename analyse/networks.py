"""Link networks of universities and their external domains (networkx).

Pure functions over edge lists ``(university, domain, weight)``; the rows of
:func:`store.analytics.environment` give them (the analyse stage stores the results
through :mod:`store.networks` for the dashboard).

* :func:`environment_graph`: the bipartite university–domain graph of one direction, a
  ``networkx.DiGraph`` whose edges follow the links: university → domain for the
  *outgoing* environment, domain → university for the *citing* one. Node ids are
  ``"u:<university>"`` and ``"d:<domain>"``, with ``label``, ``kind`` (``university`` |
  ``domain``) and ``bipartite`` (0 | 1) attributes. A university's own domain (or a
  subdomain of one, :func:`owner`) is never an external domain node: when another
  university links to it or is cited from it, the edge joins the two universities'
  nodes (a citing utexas.edu is the University of Texas citing).
* :func:`colink_overlap`: for every pair of universities, the number of external domains
  both link to (*co-outlinks*, outgoing edges) or that link to both (*co-inlinks*, citing
  edges), and the Jaccard index ``|A ∩ B| / |A ∪ B|`` of their domain sets (Thelwall 2004,
  co-link analysis; the "co-link" networks of Issue Crawler and Webometric Analyst).
* :func:`shared_domains`: the external domains shared by most universities.
* :func:`centralities`: degree, weighted degree, degree centrality, betweenness (exact up
  to ``exact_limit`` nodes, else sampled with a seed) and PageRank of every node.
* :func:`write_graph`: GEXF and GraphML (Gephi, networkx, igraph), CSV node and edge
  tables (Gephi's spreadsheet import: ``Id, Label`` and ``Source, Target, Type, Weight``)
  and VOSviewer map and network files.

Complexity, for U universities, D domains and E edges: the graph O(E) time and memory;
overlaps O(U² · D / 64) with Python integer bit sets; betweenness O(V · E) exact
(Brandes 2001) or O(k · E) sampled; PageRank O(E) per iteration.

References
----------
M. Thelwall, *Link Analysis: An Information Science Approach*, Elsevier (2004), ch. 11-12.
U. Brandes, "A faster algorithm for betweenness centrality", *J. Math. Sociol.* 25 (2001).
N. J. van Eck, L. Waltman, "VOSviewer Manual" (map and network file formats).

Examples
--------
>>> edges = [("Oxford", "arxiv.org", 3), ("Oxford", "bbc.co.uk", 1),
...          ("SPbU", "arxiv.org", 2), ("SPbU", "vk.com", 4)]
>>> g = environment_graph(edges, direction="outgoing")
>>> sorted(g.successors("u:Oxford"))
['d:arxiv.org', 'd:bbc.co.uk']
>>> colink_overlap(edges)
[Overlap(a='Oxford', b='SPbU', shared=1, jaccard=0.3333, only_a=1, only_b=1)]
>>> [(s.domain, s.n_universities) for s in shared_domains(edges)]
[('arxiv.org', 2)]
"""

from __future__ import annotations

import csv
import itertools
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import networkx as nx

from core.exceptions import ParameterError

__all__ = [
    "FORMATS",
    "Centrality",
    "Overlap",
    "SharedDomainSummary",
    "centralities",
    "colink_overlap",
    "domain_owners",
    "environment_graph",
    "overlap_graph",
    "owner",
    "shared_domains",
    "write_graph",
]

FORMATS: tuple[str, ...] = ("gexf", "graphml", "csv", "vosviewer")

Edge = tuple[str, str, float]


def _clean(edges: Iterable[Sequence[Any]]) -> dict[tuple[str, str], float]:
    """Sum the weights of repeated (university, domain) pairs; weight defaults to 1."""
    out: dict[tuple[str, str], float] = defaultdict(float)
    for e in edges:
        if len(e) < 2:
            raise ParameterError(f"an edge needs (university, domain[, weight]), got {e!r}")
        weight = float(e[2]) if len(e) > 2 and e[2] is not None else 1.0
        out[(str(e[0]), str(e[1]))] += weight
    return out


def _attr(value: Any) -> Any:
    """A value GEXF and GraphML can store (no None, no containers)."""
    if value is None:
        return ""
    if isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, list | tuple | set | frozenset):
        return ";".join(map(str, value))
    return str(value)


def owner(domain: str, owners: Mapping[str, str]) -> str | None:
    """The university whose own domain ``domain`` is, or is a subdomain of.

    Parameters
    ----------
    domain : str
        A registered domain or a host.
    owners : mapping
        A university's own domain (lower case) -> its name.

    Returns
    -------
    str or None
        The university's name; ``None`` for an external domain.

    Examples
    --------
    >>> owners = {"utexas.edu": "Texas", "cs.cornell.edu": "Cornell"}
    >>> owner("utexas.edu", owners), owner("cs.utexas.edu", owners), owner("cornell.edu", owners)
    ('Texas', 'Texas', None)
    """
    host = domain.lower().rstrip(".")
    while host:
        if host in owners:
            return owners[host]
        host = host.partition(".")[2]
    return None


def domain_owners(university_domains: Mapping[str, Iterable[str]]) -> dict[str, str]:
    """``{own domain: university}`` of ``{university: its own domains}`` (lower case)."""
    return {d.lower(): uni for uni, doms in university_domains.items() for d in doms}


def environment_graph(
    edges: Iterable[Sequence[Any]],
    *,
    direction: str = "outgoing",
    university_attrs: Mapping[str, Mapping[str, Any]] | None = None,
    domain_attrs: Mapping[str, Mapping[str, Any]] | None = None,
    university_domains: Mapping[str, Iterable[str]] | None = None,
) -> nx.DiGraph:
    """The bipartite university–domain graph of one direction.

    Parameters
    ----------
    edges : iterable of (university, domain[, weight])
        Weights of repeated pairs add up (weight: links or citing pages).
    direction : {"outgoing", "citing"}
        Outgoing edges point from the university to the domain; citing edges from the
        domain to the university.
    university_attrs, domain_attrs : mapping, optional
        Extra node attributes (country, rank, category, language ...).
    university_domains : mapping, optional
        Each university's own domains. A domain that is one of them or under one is
        that university's node, never a domain node: the edge joins the two
        universities (its weight added to theirs), and a university's link to its own
        domain is no edge.

    Returns
    -------
    networkx.DiGraph
        Graph attribute ``direction``; edge attribute ``weight``.

    Raises
    ------
    ParameterError
        ``direction`` is neither "outgoing" nor "citing".
    """
    if direction not in ("outgoing", "citing"):
        raise ParameterError(f"direction must be 'outgoing' or 'citing', got {direction!r}")
    g = nx.DiGraph(direction=direction)
    uattrs = university_attrs or {}
    dattrs = domain_attrs or {}
    owners = domain_owners(university_domains or {})

    def university_node(uni: str) -> str:
        u = f"u:{uni}"
        if u not in g:
            extra = {k: _attr(v) for k, v in uattrs.get(uni, {}).items()}
            g.add_node(u, label=uni, kind="university", bipartite=0, **extra)
        return u

    for (uni, dom), weight in _clean(edges).items():
        u = university_node(uni)
        other = owner(dom, owners)
        if other == uni:
            continue  # a university's own domain is no part of its environment
        if other is not None:
            d = university_node(other)
        else:
            d = f"d:{dom}"
            if d not in g:
                extra = {k: _attr(v) for k, v in dattrs.get(dom, {}).items()}
                g.add_node(d, label=dom, kind="domain", bipartite=1, **extra)
        a, b = (u, d) if direction == "outgoing" else (d, u)
        if g.has_edge(a, b):
            g[a][b]["weight"] += weight
        else:
            g.add_edge(a, b, weight=weight)
    return g


@dataclass(frozen=True)
class Overlap:
    """Co-link overlap of two universities: shared domains, Jaccard, and the rest."""

    a: str
    b: str
    shared: int
    jaccard: float
    only_a: int
    only_b: int


def _domain_sets(edges: Iterable[Sequence[Any]]) -> dict[str, set[str]]:
    sets: dict[str, set[str]] = defaultdict(set)
    for (uni, dom), weight in _clean(edges).items():
        if weight > 0:
            sets[uni].add(dom)
    return sets


def colink_overlap(
    edges: Iterable[Sequence[Any]], *, universities: Sequence[str] | None = None
) -> list[Overlap]:
    """Co-outlink (outgoing edges) or co-inlink (citing edges) overlap of every pair.

    Parameters
    ----------
    edges : iterable of (university, domain[, weight])
    universities : sequence of str, optional
        Include these universities even without edges (their overlaps are 0).

    Returns
    -------
    list of Overlap
        One per unordered pair (names in sorted order), most shared domains first, then
        by Jaccard, then by names.
    """
    sets = _domain_sets(edges)
    for name in universities or ():
        sets.setdefault(name, set())
    index = {d: i for i, d in enumerate(sorted(set().union(*sets.values())))}
    bits = {u: sum(1 << index[d] for d in doms) for u, doms in sets.items()}
    out = []
    for a, b in itertools.combinations(sorted(sets), 2):
        inter = (bits[a] & bits[b]).bit_count()
        union = (bits[a] | bits[b]).bit_count()
        out.append(
            Overlap(
                a,
                b,
                inter,
                round(inter / union, 4) if union else 0.0,
                len(sets[a]) - inter,
                len(sets[b]) - inter,
            )
        )
    out.sort(key=lambda o: (-o.shared, -o.jaccard, o.a, o.b))
    return out


def overlap_graph(overlaps: Iterable[Overlap], *, min_shared: int = 1) -> nx.Graph:
    """The university–university co-link graph: edge ``weight`` = shared domains, with
    ``jaccard``; pairs with fewer than ``min_shared`` shared domains are left out (the
    universities stay as nodes)."""
    g = nx.Graph()
    for o in overlaps:
        for name in (o.a, o.b):
            if name not in g:
                g.add_node(name, label=name, kind="university")
        if o.shared >= min_shared:
            g.add_edge(o.a, o.b, weight=o.shared, jaccard=o.jaccard)
    return g


@dataclass(frozen=True)
class SharedDomainSummary:
    """An external domain with the universities it is linked with and the total weight."""

    domain: str
    n_universities: int
    universities: tuple[str, ...]
    weight: float


def shared_domains(
    edges: Iterable[Sequence[Any]], *, min_universities: int = 2, top: int | None = None
) -> list[SharedDomainSummary]:
    """The external domains shared by most universities (at least ``min_universities``),
    most shared first, then by weight, then by name."""
    unis: dict[str, set[str]] = defaultdict(set)
    weight: dict[str, float] = defaultdict(float)
    for (uni, dom), w in _clean(edges).items():
        unis[dom].add(uni)
        weight[dom] += w
    rows = [
        SharedDomainSummary(d, len(u), tuple(sorted(u)), weight[d])
        for d, u in unis.items()
        if len(u) >= min_universities
    ]
    rows.sort(key=lambda r: (-r.n_universities, -r.weight, r.domain))
    return rows[:top] if top is not None else rows


@dataclass(frozen=True)
class Centrality:
    """Centralities of one node of a graph."""

    node: str
    label: str
    kind: str
    degree: int
    weighted_degree: float
    degree_centrality: float
    betweenness: float
    pagerank: float


def centralities(graph: nx.Graph, *, exact_limit: int = 2000, seed: int = 1) -> list[Centrality]:
    """Degree, weighted degree, degree centrality, betweenness and PageRank of every node.

    Betweenness is computed on the undirected graph (normalised); beyond ``exact_limit``
    nodes it is estimated from ``exact_limit`` sampled sources (``seed``). PageRank uses
    the edge weights and directions.

    Returns
    -------
    list of Centrality
        By PageRank, highest first, then by node id.
    """
    if graph.number_of_nodes() == 0:
        return []
    und = graph.to_undirected(as_view=True) if graph.is_directed() else graph
    n = graph.number_of_nodes()
    k = None if n <= exact_limit else exact_limit
    btw = nx.betweenness_centrality(und, k=k, normalized=True, weight=None, seed=seed)
    pr = nx.pagerank(graph, weight="weight") if graph.number_of_edges() else {}
    dc = nx.degree_centrality(und) if n > 1 else {v: 0.0 for v in graph}
    rows = [
        Centrality(
            node=str(v),
            label=str(graph.nodes[v].get("label", v)),
            kind=str(graph.nodes[v].get("kind", "")),
            degree=int(und.degree(v)),
            weighted_degree=float(und.degree(v, weight="weight")),
            degree_centrality=round(float(dc.get(v, 0.0)), 6),
            betweenness=round(float(btw.get(v, 0.0)), 6),
            pagerank=round(float(pr.get(v, 1.0 / n)), 6),
        )
        for v in graph.nodes
    ]
    rows.sort(key=lambda r: (-r.pagerank, r.node))
    return rows


def _sanitised(graph: nx.Graph) -> nx.Graph:
    g = graph.copy()
    g.graph = {k: _attr(v) for k, v in g.graph.items()}
    for _, data in g.nodes(data=True):
        for key, value in list(data.items()):
            data[key] = _attr(value)
    for *_, data in g.edges(data=True):
        for key, value in list(data.items()):
            data[key] = _attr(value)
    return g


def write_graph(graph: nx.Graph, stem: str | Path, formats: Sequence[str] = FORMATS) -> list[Path]:
    """Write ``graph`` as ``<stem>.gexf``, ``<stem>.graphml``, CSV tables and VOSviewer files.

    Parameters
    ----------
    graph : networkx.Graph or DiGraph
    stem : path-like
        The output path without extension (its folder must exist).
    formats : sequence of {"gexf", "graphml", "csv", "vosviewer"}
        ``csv`` writes ``<stem>.nodes.csv`` (``Id, Label`` and every node attribute) and
        ``<stem>.edges.csv`` (``Source, Target, Type, Weight`` and every edge attribute);
        ``vosviewer`` writes ``<stem>.vos_map.txt`` (``id``, ``label`` and ``cluster``:
        1 for universities, 2 for domains) and ``<stem>.vos_network.txt`` (tab-separated
        ``id id strength``, no header).

    Returns
    -------
    list of Path
        The files written.

    Raises
    ------
    ParameterError
        An unknown format.
    """
    unknown = [f for f in formats if f not in FORMATS]
    if unknown:
        raise ParameterError(
            f"unknown graph format(s) {', '.join(unknown)}; choose from {', '.join(FORMATS)}"
        )
    stem = Path(stem)
    g = _sanitised(graph)
    written: list[Path] = []
    if "gexf" in formats:
        path = stem.with_name(stem.name + ".gexf")
        nx.write_gexf(g, path)
        written.append(path)
    if "graphml" in formats:
        path = stem.with_name(stem.name + ".graphml")
        nx.write_graphml(g, path)
        written.append(path)
    if "csv" in formats:
        node_keys = sorted({k for _, d in g.nodes(data=True) for k in d} - {"label"})
        path = stem.with_name(stem.name + ".nodes.csv")
        with path.open("w", newline="", encoding="utf-8") as fh:
            w = csv.writer(fh)
            w.writerow(["Id", "Label", *node_keys])
            for v, d in g.nodes(data=True):
                w.writerow([v, d.get("label", v), *(d.get(k, "") for k in node_keys)])
        written.append(path)
        edge_keys = sorted({k for *_, d in g.edges(data=True) for k in d} - {"weight"})
        kind = "Directed" if g.is_directed() else "Undirected"
        path = stem.with_name(stem.name + ".edges.csv")
        with path.open("w", newline="", encoding="utf-8") as fh:
            w = csv.writer(fh)
            w.writerow(["Source", "Target", "Type", "Weight", *edge_keys])
            for a, b, d in g.edges(data=True):
                w.writerow([a, b, kind, d.get("weight", 1), *(d.get(k, "") for k in edge_keys)])
        written.append(path)
    if "vosviewer" in formats:
        ids = {v: i for i, v in enumerate(g.nodes, start=1)}
        path = stem.with_name(stem.name + ".vos_map.txt")
        with path.open("w", newline="", encoding="utf-8") as fh:
            w = csv.writer(fh, delimiter="\t", lineterminator="\n")
            w.writerow(["id", "label", "cluster"])
            for v, d in g.nodes(data=True):
                cluster = 1 if d.get("kind") == "university" else 2
                w.writerow([ids[v], str(d.get("label", v)).replace("\t", " "), cluster])
        written.append(path)
        path = stem.with_name(stem.name + ".vos_network.txt")
        strength: dict[tuple[int, int], float] = defaultdict(float)
        for a, b, d in g.edges(data=True):
            i, j = sorted((ids[a], ids[b]))
            strength[(i, j)] += float(d.get("weight", 1) or 1)
        with path.open("w", newline="", encoding="utf-8") as fh:
            w = csv.writer(fh, delimiter="\t", lineterminator="\n")
            for (i, j), s in sorted(strength.items()):
                w.writerow([i, j, round(s, 6)])
        written.append(path)
    return written
