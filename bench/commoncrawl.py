"""``webometrics citing commoncrawl-graph`` on generated web graph dumps: memory and speed.

What runs: :func:`webometrics.stages.citing_graph.run` (the code behind the command) on a
domain-level graph written by :mod:`testbed.commoncrawl_graph` in the published format --
gzip vertex parts ``id, reversed domain, num_hosts`` sorted by reversed name, gzip edge
parts ``from_id, to_id`` sorted, a ranks file with its ``#`` header -- storing into a fresh
SQLite file with 100 universities. Sizes: 1 M edges on 100 k vertices, 10 M edges on
1 M vertices and 30 M edges on 3 M vertices. Every university gets the same number of
in-links at every size (500 to 3,500 each, some 200,000 in all, from random sources);
the other edges have Zipf-law in-degrees and never point at a university: the citing
nodes stay the same while the dump grows thirtyfold, so the peak RSS shows what the
dump's size costs.

Each size runs in a child process (DuckDB ``threads = 2``, ``memory_limit = 1GB``; the
10 M size once more with ``256MB``); reported: its **peak RSS** (``VmHWM`` of
``/proc/self/status`` after reading and storing: Python, DuckDB's threads and SQLite
together; ``ru_maxrss`` would carry the generating parent's peak across ``fork`` and
``exec``), the peak RSS after the imports and the universities' insert, the seconds per
pass and **edges/s** over the whole read (gzip check + three passes, storing excluded)
and over the edge pass alone. The stored citing domains of every university are compared
with an independent count (numpy over the generated edge array, no DuckDB): they must be
equal.

Extrapolation: per-edge and per-vertex costs of the 10 M size, applied to a published
release (sizes from Common Crawl's announcement of the Nov/Dec 2024-Jan 2025 web graphs,
https://commoncrawl.org/blog/host--and-domain-level-web-graphs-november-december-2024-and-january-2025:
domain graph 100.8 M nodes and 1.9 billion edges, host graph 277.7 M nodes and 2.7 billion
edges).

Run: ``.venv/bin/python bench/commoncrawl.py`` (a few minutes); writes
``bench/results/commoncrawl.json`` and ``bench/results/commoncrawl.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

RESULTS = ROOT / "bench" / "results"
RELEASE = "cc-main-2026-bench"
N_UNIVERSITIES = 100
UNI_IN_LINKS = 2000  # mean in-links per university (fixed across sizes)
TLDS = ("com", "org", "net", "ru", "de", "edu", "fr", "info", "co.uk", "ac.uk", "jp", "io")
#: published sizes (Common Crawl blog, 1 Feb 2025: Nov/Dec 2024 and Jan 2025 web graphs)
RELEASES = {
    "domain graph (Nov/Dec 2024-Jan 2025)": {"vertices": 100_800_000, "edges": 1_900_000_000},
    "host graph (Nov/Dec 2024-Jan 2025)": {"vertices": 277_700_000, "edges": 2_700_000_000},
}


def generate(root: Path, n_vertices: int, n_edges: int, seed: int = 15) -> dict[str, Any]:
    """Write a domain graph; return the files, the university nodes and the true answer."""
    from testbed.commoncrawl_graph import reverse, write_edges, write_ranks, write_vertices

    rng = np.random.default_rng(seed)
    t0 = time.perf_counter()
    tld = rng.integers(0, len(TLDS), n_vertices)
    names = sorted(reverse(f"site{i:08d}.{TLDS[t]}") for i, t in enumerate(tld.tolist()))
    num_hosts = rng.integers(1, 60, n_vertices)
    # universities: every 10th of the 1,000 most popular nodes; each gets a fixed number
    # of in-links (the same at every size, from a seed of its own), so that the citing
    # nodes stay about equal while the dump grows
    popularity = rng.permutation(n_vertices)
    uni_ids = popularity[np.arange(10, 10 * N_UNIVERSITIES + 1, 10)]
    k_rng = np.random.default_rng(seed + 1)
    in_links = k_rng.integers(UNI_IN_LINKS // 4, UNI_IN_LINKS * 7 // 4, N_UNIVERSITIES)
    uni_key = np.unique(
        np.concatenate(
            [
                rng.choice(n_vertices, size=int(k), replace=False) * n_vertices + u
                for u, k in zip(uni_ids.tolist(), in_links.tolist(), strict=True)
            ]
        )
    )
    uni_key = uni_key[uni_key // n_vertices != uni_key % n_vertices]
    # the rest: sources uniform, targets by a Zipf law over the popularity order, never a
    # university
    weights = 1.0 / np.arange(1, n_vertices + 1) ** 0.9
    weights[np.arange(10, 10 * N_UNIVERSITIES + 1, 10)] = 0.0
    weights /= weights.sum()
    n_other = n_edges - len(uni_key)
    if n_other <= 0:
        raise SystemExit(f"{n_edges:,} edges is fewer than the universities' in-links")
    key = np.empty(0, dtype=np.int64)
    while len(key) < n_other:
        m = int((n_other - len(key)) * 1.15) + 1000
        src = rng.integers(0, n_vertices, m)
        dst = popularity[rng.choice(n_vertices, size=m, p=weights)]
        keep = src != dst
        key = np.unique(np.concatenate([key, src[keep] * n_vertices + dst[keep]]))
    if len(key) > n_other:
        key = np.sort(rng.choice(key, n_other, replace=False))
    key = np.sort(np.concatenate([key, uni_key]))
    edges = np.stack([key // n_vertices, key % n_vertices], axis=1)
    indegree = np.bincount(edges[:, 1], minlength=n_vertices).astype(float)
    harmonic = indegree + rng.random(n_vertices)
    pagerank = (indegree + 1.0) / (indegree.sum() + n_vertices)
    t_gen = time.perf_counter() - t0
    vpaths = write_vertices(root, RELEASE, "domain", names, num_hosts, parts=4, compresslevel=6)
    epaths = write_edges(root, RELEASE, "domain", edges, parts=8, compresslevel=6)
    rpath = write_ranks(root, RELEASE, "domain", names, harmonic, pagerank, num_hosts)
    # the independent answer: per university, the names of the nodes linking to it
    truth: dict[str, list[str]] = {}
    into = np.isin(edges[:, 1], uni_ids)
    sub = edges[into]
    for u in uni_ids.tolist():
        src = np.unique(sub[sub[:, 1] == u, 0])
        truth[reverse(names[u])] = sorted(reverse(names[s]) for s in src.tolist())
    size = sum(p.stat().st_size for p in (*vpaths, *epaths, rpath))
    return {
        "vertices": [str(p) for p in vpaths],
        "edges": [str(p) for p in epaths],
        "ranks": str(rpath),
        "universities": [reverse(names[u]) for u in uni_ids.tolist()],
        "truth": truth,
        "edges_into_universities": int(into.sum()),
        "bytes": size,
        "generate_seconds": round(time.perf_counter() - t0, 1),
        "array_seconds": round(t_gen, 1),
    }


CHILD = r"""
import json, sys, time
def hwm_kb():  # peak RSS of this process image (VmHWM: reset at exec, unlike ru_maxrss)
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
sys.path.insert(0, sys.argv[1])
spec = json.load(open(sys.argv[2]))
rss_start = hwm_kb()
from sqlalchemy import select
from store import make_engine, schema, session_scope
from store import models as m
from core.settings import Settings
from webometrics.stages.citing_graph import GraphScope, run
import duckdb  # noqa: F401  (counted in the imports' RSS)
engine = make_engine(spec["db"])
schema.upgrade(engine)
with session_scope(engine) as s:
    for i, d in enumerate(spec["universities"]):
        u = m.University(name=f"University {i}", country="Benchland", rank=i + 1)
        u.domains.append(m.UniversityDomain(domain=d))
        s.add(u)
rss_imports = hwm_kb()
t0 = time.perf_counter()
scope = GraphScope(tuple(spec["vertices"]), tuple(spec["edges"]), spec["ranks"],
                   threads=2, memory_limit=spec["memory_limit"])
summary = run(engine, Settings(), scope).stats()
total = time.perf_counter() - t0
rss_read = hwm_kb()
found = {}
with session_scope(engine) as s:
    on = m.CitingNode.university_id == m.UniversityDomain.university_id
    rows = s.execute(select(m.UniversityDomain.domain, m.CitingNode.node).join(m.CitingNode, on))
    for dom, node in rows:
        found.setdefault(dom, []).append(node)
json.dump({"summary": summary, "seconds_total": total, "rss_start_kb": rss_start,
           "rss_imports_kb": rss_imports, "rss_peak_kb": rss_read,
           "found": {k: sorted(v) for k, v in found.items()}}, open(sys.argv[3], "w"))
"""


def measure(root: Path, spec: dict[str, Any], memory_limit: str) -> dict[str, Any]:
    job = {**spec, "db": f"sqlite:///{root / 'bench.db'}", "memory_limit": memory_limit}
    (root / "bench.db").unlink(missing_ok=True)
    spec_path, out_path = root / "spec.json", root / "out.json"
    spec_path.write_text(json.dumps(job))
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run(
        [sys.executable, "-c", CHILD, str(ROOT), str(spec_path), str(out_path)], check=True
    )
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = json.loads(out_path.read_text())
    truth = spec["truth"]
    found = out["found"]
    exact = all(sorted(found.get(u, [])) == truth[u] for u in truth) and set(found) <= set(truth)
    s = out["summary"]
    read_seconds = sum(s["seconds"].values())
    return {
        "vertices_n": s["vertices"],
        "edges_n": s["edges"],
        "gzip_bytes": spec["bytes"],
        "edges_into_universities": s["edges_into_universities"],
        "citing_nodes": s["citing_nodes"],
        "citing_domains_true": sum(len(v) for v in truth.values()),
        "exact": bool(exact),
        "peak_rss_mb": round(out["rss_peak_kb"] / 1024, 1),
        "rss_after_imports_mb": round(out["rss_imports_kb"] / 1024, 1),
        "seconds": s["seconds"],
        "read_seconds": round(read_seconds, 2),
        "store_seconds": round(out["seconds_total"] - read_seconds, 2),
        "wall_seconds": round(wall, 2),
        "cpu_seconds": round(
            (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), 2
        ),
        "edges_per_second": round(s["edges"] / read_seconds),
        "edge_pass_edges_per_second": round(s["edges"] / s["seconds"]["edges"]),
        "memory_limit": memory_limit,
    }


def extrapolate(full: dict[str, Any]) -> list[dict[str, Any]]:
    """Per-edge and per-vertex seconds from the full size, applied to published releases.

    The gzip check and the edge pass scale with the edges (and the vertices' share of
    the check is small); the two vertex passes scale with the vertices.
    """
    sec = full["seconds"]
    per_edge = (sec["edges"] + sec["check"]) / full["edges_n"]
    per_vertex = (sec["vertices"] + sec["names"]) / full["vertices_n"]
    rows = []
    for name, size in RELEASES.items():
        t = per_edge * size["edges"] + per_vertex * size["vertices"]
        rows.append(
            {
                "release": name,
                "vertices": size["vertices"],
                "edges": size["edges"],
                "hours": round(t / 3600, 2),
                "edges_per_second": round(size["edges"] / t),
            }
        )
    return rows


SMOKE_SKIP = "reads a Common Crawl web graph release (minutes); no tiny mode yet"
"""Why the smoke test (tests/bench) does not run this script on tiny data."""


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--edges", type=int, default=10_000_000)
    ap.add_argument("--vertices", type=int, default=1_000_000)
    ap.add_argument("--memory-limit", default="1GB")
    ap.add_argument(
        "--low-memory-limit",
        default="256MB",
        help="the full size once more with this DuckDB memory limit ('' to skip)",
    )
    ap.add_argument(
        "--larger",
        type=int,
        default=3,
        help="also run a graph this many times larger than the full size, to show where "
        "the peak RSS levels off (0 to skip)",
    )
    ap.add_argument("--no-save", action="store_true")
    args = ap.parse_args(argv)
    sizes = [(args.vertices // 10, args.edges // 10), (args.vertices, args.edges)]
    if args.larger > 1:
        sizes.append((args.vertices * args.larger, args.edges * args.larger))
    results = []
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="ccgraph-bench-") as tmp:
        for n_v, n_e in sizes:
            root = Path(tmp) / f"g{n_e}"
            root.mkdir()
            for old in Path(tmp).iterdir():  # one graph on disk at a time
                if old != root:
                    shutil.rmtree(old)
            spec = generate(root, n_v, n_e)
            print(
                f"generated {n_v:,} vertices, {n_e:,} edges "
                f"({spec['bytes'] / 1e6:.0f} MB gzip) in {spec['generate_seconds']} s",
                flush=True,
            )
            limits = [args.memory_limit]
            if n_e == args.edges and args.low_memory_limit:
                limits.append(args.low_memory_limit)
            for limit in limits:
                r = measure(root, spec, limit)
                r["generate_seconds"] = spec["generate_seconds"]
                print(json.dumps(r), flush=True)
                results.append(r)
            del spec
    full = next(r for r in results if r["edges_n"] == args.edges)  # the first, at 1GB
    out = {
        "what": "webometrics citing commoncrawl-graph on generated domain graphs",
        "machine": {
            "cpus": os.cpu_count(),
            "python": platform.python_version(),
            "load_1min_before": round(load_before, 2),
            "load_1min_after": round(os.getloadavg()[0], 2),
        },
        "universities": N_UNIVERSITIES,
        "results": results,
        "extrapolation": extrapolate(full),
        "extrapolation_base_edges": full["edges_n"],
        "extrapolation_source": (
            "Common Crawl blog, 1 Feb 2025, Host- and Domain-Level Web Graphs "
            "November/December 2024 and January 2025"
        ),
    }
    md = render(out)
    print(md)
    if not args.no_save:
        RESULTS.mkdir(parents=True, exist_ok=True)
        (RESULTS / "commoncrawl.json").write_text(json.dumps(out, indent=1) + "\n")
        (RESULTS / "commoncrawl.md").write_text(md)
    return 0 if all(r["exact"] for r in results) else 1


def render(out: dict[str, Any]) -> str:
    lines = [
        "# Common Crawl web graph: memory and throughput",
        "",
        f"`webometrics citing commoncrawl-graph` (library path) on generated domain graphs in "
        f"the published format, {out['universities']} universities, DuckDB 2 threads, "
        f"{out['machine']['cpus']} cores (shared; 1-min load {out['machine']['load_1min_before']}"
        f" before, {out['machine']['load_1min_after']} after).",
        "",
        "| vertices | edges | gzip MB | edges into universities | citing nodes | exact | "
        "DuckDB memory_limit | peak RSS MB | RSS after imports MB | check s | vertices s | "
        "edges s | names+ranks s | store s | edges/s (read) | edges/s (edge pass) |",
        "|--:|--:|--:|--:|--:|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|",
    ]
    for r in out["results"]:
        s = r["seconds"]
        lines.append(
            f"| {r['vertices_n']:,} | {r['edges_n']:,} | {r['gzip_bytes'] / 1e6:.0f} | "
            f"{r['edges_into_universities']:,} | {r['citing_nodes']:,} | "
            f"{'yes' if r['exact'] else 'NO'} | {r['memory_limit']} | {r['peak_rss_mb']} | "
            f"{r['rss_after_imports_mb']} | {s['check']:.1f} | {s['vertices']:.1f} | "
            f"{s['edges']:.1f} | {s['names']:.1f} | {r['store_seconds']:.1f} | "
            f"{r['edges_per_second']:,} | {r['edge_pass_edges_per_second']:,} |"
        )
    lines += [
        "",
        "`exact`: the stored citing domains of every university equal an independent count "
        "over the generated edge array (numpy).",
        "",
        f"Extrapolation to published releases (per-edge and per-vertex costs of the "
        f"{out['extrapolation_base_edges']:,}-edge run at 1GB; sizes: "
        f"{out['extrapolation_source']}):",
        "",
        "| release | vertices | edges | hours | edges/s |",
        "|---|--:|--:|--:|--:|",
    ]
    for e in out["extrapolation"]:
        lines.append(
            f"| {e['release']} | {e['vertices']:,} | {e['edges']:,} | {e['hours']} | "
            f"{e['edges_per_second']:,} |"
        )
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    raise SystemExit(main())
