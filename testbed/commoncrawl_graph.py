"""Common Crawl web graph dumps in the published format, for the tests and the benchmark.

A release folder as Common Crawl lays it out (``projects/hyperlinkgraph/<release>/``)::

    <release>/<level>/vertices/part-00000.txt.gz ...   id<TAB>reversed name[<TAB>num_hosts]
    <release>/<level>/edges/part-00000.txt.gz ...      from_id<TAB>to_id
    <release>/<level>/<release>-<level>-ranks.txt.gz   #harmonicc_pos #harmonicc_val #pr_pos
                                                       #pr_val #host_rev [#n_hosts]

Vertices are sorted by reversed name and numbered ``0 .. n-1`` in that order; edges are
unique, sorted by ``(from_id, to_id)``; the ranks file is ordered by harmonic centrality
position with values written as Java prints floats (``3.4626736E7``). Every file is gzip,
split into contiguous parts.

:func:`write_graph` takes node names in normal notation and edges between them (the
tests); :func:`write_vertices`, :func:`write_edges` and :func:`write_ranks` take reversed
names and id arrays (the benchmark's millions of edges).
"""

from __future__ import annotations

import gzip
import io
import itertools
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from core.choices import GRAPH_LEVELS

LEVELS = GRAPH_LEVELS


@dataclass(frozen=True)
class GraphFiles:
    """The files of one written release."""

    release: str
    level: str
    vertices: tuple[Path, ...]
    edges: tuple[Path, ...]
    ranks: Path | None
    names: tuple[str, ...]  # reversed names, index = vertex id


def reverse(name: str) -> str:
    """``cs.ox.ac.uk`` <-> ``uk.ac.ox.cs``."""
    return ".".join(reversed(name.split(".")))


def java_float(value: float) -> str:
    """A float as Java's ``Float.toString``/``Double.toString`` writes it (the ranks file).

    >>> java_float(34626736.0), java_float(0.005384977821460953), java_float(0.5)
    ('3.4626736E7', '0.005384977821460953', '0.5')
    """
    if value != 0 and (abs(value) >= 1e7 or abs(value) < 1e-3):
        mantissa, exponent = f"{value:.10e}".split("e")
        mantissa = mantissa.rstrip("0")
        if mantissa.endswith("."):
            mantissa += "0"
        return f"{mantissa}E{int(exponent)}"
    return repr(float(value))


def _parts(n: int, parts: int) -> list[tuple[int, int]]:
    parts = max(1, min(parts, n)) if n else 1
    bounds = np.linspace(0, n, parts + 1).astype(int)
    return [(int(a), int(b)) for a, b in itertools.pairwise(bounds.tolist())]


def _folder(root: Path, release: str, level: str, kind: str) -> Path:
    folder = root / release / level / kind
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def write_vertices(
    root: Path,
    release: str,
    level: str,
    names: Sequence[str],
    num_hosts: Sequence[int] | np.ndarray | None = None,
    *,
    parts: int = 3,
    compresslevel: int = 6,
) -> tuple[Path, ...]:
    """Write sorted reversed ``names`` (id = position) as gzip vertex parts."""
    if level == "domain" and num_hosts is None:
        raise ValueError("the domain graph's vertices carry num_hosts")
    folder = _folder(root, release, level, "vertices")
    paths = []
    for k, (a, b) in enumerate(_parts(len(names), parts)):
        path = folder / f"part-{k:05d}.txt.gz"
        with gzip.open(path, "wt", encoding="utf-8", compresslevel=compresslevel) as fh:
            buf = io.StringIO()
            for i in range(a, b):
                if level == "domain":
                    buf.write(f"{i}\t{names[i]}\t{int(num_hosts[i])}\n")  # type: ignore[index]
                else:
                    buf.write(f"{i}\t{names[i]}\n")
                if buf.tell() > 1 << 22:
                    fh.write(buf.getvalue())
                    buf = io.StringIO()
            fh.write(buf.getvalue())
        paths.append(path)
    return tuple(paths)


def write_edges(
    root: Path,
    release: str,
    level: str,
    edges: np.ndarray,
    *,
    parts: int = 4,
    compresslevel: int = 6,
    chunk: int = 1 << 20,
) -> tuple[Path, ...]:
    """Write an ``(m, 2)`` array of ``(from_id, to_id)``, sorted, as gzip edge parts."""
    folder = _folder(root, release, level, "edges")
    paths = []
    for k, (a, b) in enumerate(_parts(len(edges), parts)):
        path = folder / f"part-{k:05d}.txt.gz"
        with gzip.open(path, "wb", compresslevel=compresslevel) as fh:
            for start in range(a, b, chunk):
                block = edges[start : min(b, start + chunk)]
                lines = "\n".join(f"{x}\t{y}" for x, y in block.tolist())
                fh.write((lines + "\n").encode() if lines else b"")
        paths.append(path)
    return tuple(paths)


def write_ranks(
    root: Path,
    release: str,
    level: str,
    names: Sequence[str],
    harmonic: np.ndarray,
    pagerank: np.ndarray,
    num_hosts: Sequence[int] | np.ndarray | None = None,
    *,
    compresslevel: int = 6,
) -> Path:
    """Write the ranks file: the header, then one line per node by harmonic position."""
    folder = root / release / level
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{release}-{level}-ranks.txt.gz"
    h_order = np.lexsort((np.arange(len(names)), -harmonic))
    p_order = np.lexsort((np.arange(len(names)), -pagerank))
    p_pos = np.empty(len(names), dtype=np.int64)
    p_pos[p_order] = np.arange(1, len(names) + 1)
    header = "#harmonicc_pos\t#harmonicc_val\t#pr_pos\t#pr_val\t#host_rev"
    if level == "domain":
        header += "\t#n_hosts"
    with gzip.open(path, "wt", encoding="utf-8", compresslevel=compresslevel) as fh:
        fh.write(header + "\n")
        buf = io.StringIO()
        for pos, i in enumerate(h_order.tolist(), start=1):
            line = (
                f"{pos}\t{java_float(float(harmonic[i]))}\t{int(p_pos[i])}\t"
                f"{java_float(float(pagerank[i]))}\t{names[i]}"
            )
            if level == "domain":
                line += f"\t{int(num_hosts[i])}"  # type: ignore[index]
            buf.write(line + "\n")
            if buf.tell() > 1 << 22:
                fh.write(buf.getvalue())
                buf = io.StringIO()
        fh.write(buf.getvalue())
    return path


def write_graph(
    root: Path,
    nodes: Iterable[str],
    edges: Iterable[tuple[str, str]],
    *,
    release: str = "cc-main-2026-test",
    level: str = "domain",
    num_hosts: Mapping[str, int] | None = None,
    ranks: bool = True,
    vertex_parts: int = 3,
    edge_parts: int = 4,
) -> GraphFiles:
    """Write a small release from names in normal notation.

    Every endpoint of ``edges`` becomes a node too; duplicate edges and self-links are
    dropped (the published graphs hold neither). Harmonic centrality is computed exactly
    (``networkx``); PageRank with damping 0.85. ``num_hosts`` defaults to 1.
    """
    import networkx as nx

    if level not in LEVELS:
        raise ValueError(f"level {level!r}")
    edge_set = {(a, b) for a, b in edges if a != b}
    all_nodes = set(nodes) | {a for a, _ in edge_set} | {b for _, b in edge_set}
    names = sorted(reverse(n) for n in all_nodes)
    ids = {reverse(r): i for i, r in enumerate(names)}
    arr = np.array(sorted((ids[a], ids[b]) for a, b in edge_set), dtype=np.int64).reshape(-1, 2)
    hosts = [int((num_hosts or {}).get(reverse(r), 1)) for r in names]
    vpaths = write_vertices(root, release, level, names, hosts, parts=vertex_parts)
    epaths = write_edges(root, release, level, arr, parts=edge_parts)
    rpath = None
    if ranks:
        g = nx.DiGraph()
        g.add_nodes_from(range(len(names)))
        g.add_edges_from(map(tuple, arr.tolist()))
        hc = nx.harmonic_centrality(g)  # sum of 1/d(v, u) over v: in-link based
        pr = nx.pagerank(g, alpha=0.85)
        harmonic = np.array([hc[i] for i in range(len(names))], dtype=float)
        pagerank = np.array([pr[i] for i in range(len(names))], dtype=float)
        rpath = write_ranks(root, release, level, names, harmonic, pagerank, hosts)
    return GraphFiles(release, level, vpaths, epaths, rpath, tuple(names))


__all__ = [
    "GraphFiles",
    "java_float",
    "reverse",
    "write_edges",
    "write_graph",
    "write_ranks",
    "write_vertices",
]
