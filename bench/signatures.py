"""Signatures beyond one process on Reuters-21578: threads, processes, a memory-mapped store.

All 21,578 stories, 1-word shingles with the project's defaults (stemming, stop words
removed), MinHash ``affine32`` at num_perm 128 and 1,024:

* **Signing** in memory with :meth:`cluster.MinHasher.sign` on 1 and 2 threads
  (``n_jobs``), against the alternative that was not kept: 2 worker processes (a forked
  ``ProcessPoolExecutor``; blocks of shingles sent to the workers, the matrix written in
  ``multiprocessing.shared_memory``, pool start-up included). Each figure is the median
  of ``--repeats`` runs in one fresh process; the values are checked equal to 1 thread.
* **Memory-mapped store**: :meth:`cluster.sigstore.SignatureStore.write` from a stream
  of blocks of 2,000 documents (as the cluster stage streams them from the database) on
  1 and 2 threads, values checked equal.
* **Peak memory** of each in a fresh process: peak RSS (``ru_maxrss``), peak anonymous
  RSS (``RssAnon`` of ``/proc/self/status`` sampled every 5 ms: the memory the process
  cannot give back; RSS also counts pages of mapped files, which the kernel can drop),
  both above the process's level once the shingles are loaded, and the peak of
  ``tracemalloc`` (every Python and numpy allocation) in a separate run.
* **Clustering** with :class:`cluster.LSHLink` at its defaults (1,024 permutations, exact
  Jaccard, r = 12, 8, 4): signatures in memory, vs memory-mapped from the store (shingles
  of candidate pairs fetched by :func:`cluster.sigstore.pair_jaccard_segments`), at the
  default banding budget and at 64 MB (hash partitions on disk); labels and linkage
  matrix checked identical to the in-memory run.
* **The cluster stage** (``webometrics cluster --method paper``, 2 workers) over a
  SQLite database of every story as a domain document, with and without
  ``--signature-store``; the stored clusters checked identical.

Run: ``.venv/bin/python bench/signatures.py`` (about 3 minutes on 2 cores; ``--quick``
for a smoke run on 3,000 stories, written to a temporary folder). Writes
``bench/results/signatures.json`` and ``signatures.md``.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.common import (  # noqa: E402
    RESULTS,
    AnonPeak,
    load_averages,
    machine,
    peak_rss_mb,
    run_date,
    run_script,
    status_kb,
    write_results,
)
from core import defaults as D  # noqa: E402


def _default_block_mib() -> int:
    """MinHasher's default block size in MiB, read from its signature."""
    import inspect

    from cluster.minhash import MinHasher

    return inspect.signature(MinHasher).parameters["block_bytes"].default >> 20


PERMS = (128, 1024)
BLOCK_MIB = (1, 4, 16, 64)  # block sizes of the block-size sweep
STREAM_BLOCK = 2000  # documents per streamed block (the cluster stage's chunk)


# --- the shingles the parent saved ------------------------------------------------------------


def _load_sets(data: str) -> list[np.ndarray]:
    values = np.load(f"{data}/values.npy")
    lengths = np.load(f"{data}/lengths.npy")
    return np.split(values, np.cumsum(lengths)[:-1])


def _blocks(sets: list[np.ndarray]):
    for start in range(0, len(sets), STREAM_BLOCK):
        yield sets[start : start + STREAM_BLOCK]


# --- the alternative not kept: worker processes ----------------------------------------------


def _process_block(args: tuple[Any, ...]) -> int:
    from multiprocessing import shared_memory

    from cluster.minhash import HASH_FUNCTIONS, MinHasher

    name, shape, num_perm, docs, values, lengths = args
    hasher = MinHasher(num_perm=num_perm)
    shm = shared_memory.SharedMemory(name=name)
    try:
        out = np.ndarray(shape, dtype=np.uint32, buffer=shm.buf)
        offsets = np.zeros(docs.shape[0], dtype=np.int64)
        np.cumsum(lengths[:-1], out=offsets[1:])
        phv = hasher._permute(HASH_FUNCTIONS[hasher.hash_func][1](values))
        out[docs] = np.minimum.reduceat(phv, offsets, axis=1).T
        del out
    finally:
        shm.close()
    return int(docs.shape[0])


def sign_processes(sets: list[np.ndarray], num_perm: int, workers: int) -> np.ndarray:
    """MinHasher.sign's blocks on ``workers`` forked processes (shared-memory output)."""
    import multiprocessing as mp
    from concurrent.futures import ProcessPoolExecutor
    from multiprocessing import shared_memory

    from cluster.minhash import MinHasher

    hasher = MinHasher(num_perm=num_perm)
    n = len(sets)
    lengths = np.fromiter((len(s) for s in sets), np.int64, n)
    shm = shared_memory.SharedMemory(create=True, size=max(1, n * num_perm * 4))
    try:
        out = np.ndarray((n, num_perm), dtype=np.uint32, buffer=shm.buf)
        out[:] = np.iinfo(np.uint32).max
        tasks = [
            (shm.name, (n, num_perm), num_perm, docs,
             np.concatenate([sets[d] for d in docs]), lengths[docs])
            for docs in hasher._blocks(lengths)
        ]  # fmt: skip
        with ProcessPoolExecutor(workers, mp_context=mp.get_context("fork")) as pool:
            for _ in pool.map(_process_block, tasks, chunksize=16):
                pass
        result = out.copy()
        del out
    finally:
        shm.close()
        shm.unlink()
    return result


# --- child processes ----------------------------------------------------------------------------


def child_sign(job: dict[str, Any]) -> dict[str, Any]:
    """Time one way of signing (median of repeats) and check its values."""
    from cluster.minhash import MinHasher
    from cluster.sigstore import SignatureStore

    sets = _load_sets(job["data"])
    hasher = MinHasher(num_perm=job["num_perm"])
    ref = hasher.sign(sets).hashvalues if job["check"] else None
    base_rss, base_anon = peak_rss_mb(), status_kb("RssAnon") / 1024.0
    times, cpus = [], []
    identical = True
    folder = Path(job["tmp"]) / f"store-{job['num_perm']}-{job['mode']}-{job['workers']}"
    peak_anon = 0.0
    for _ in range(job["repeats"]):
        shutil.rmtree(folder, ignore_errors=True)
        with AnonPeak() as mem:
            t0, c0 = time.perf_counter(), time.process_time()
            if job["mode"] == "threads":
                hv = hasher.sign(sets, n_jobs=job["workers"]).hashvalues
            elif job["mode"] == "processes":
                hv = sign_processes(sets, job["num_perm"], job["workers"])
            else:  # store
                store = SignatureStore.write(folder, hasher, _blocks(sets), n_jobs=job["workers"])
                hv = None
            times.append(time.perf_counter() - t0)
            cpus.append(time.process_time() - c0)
        peak_anon = max(peak_anon, mem.peak_kb / 1024.0)
        if ref is not None:
            got = hv if hv is not None else store.signatures().hashvalues
            identical &= bool(np.array_equal(got, ref))
        del hv
    out = {
        "seconds": statistics.median(times),
        "seconds_runs": times,
        "cpu_seconds": statistics.median(cpus),
        "identical_to_one_thread": identical if ref is not None else None,
        "peak_rss_mb": peak_rss_mb(),
        "base_rss_mb": base_rss,
        "peak_anon_mb": peak_anon,
        "base_anon_mb": base_anon,
        "matrix_mb": len(sets) * job["num_perm"] * 4 / 2**20,
    }
    if job["mode"] == "store":
        out["store_mb"] = sum(p.stat().st_size for p in folder.iterdir()) / 2**20
    return out


def child_sign_traced(job: dict[str, Any]) -> dict[str, Any]:
    """The tracemalloc peak of one way of signing (a separate run: tracing slows it)."""
    from cluster.minhash import MinHasher
    from cluster.sigstore import SignatureStore

    sets = _load_sets(job["data"])
    hasher = MinHasher(num_perm=job["num_perm"])
    folder = Path(job["tmp"]) / f"traced-{job['num_perm']}-{job['mode']}"
    tracemalloc.start()
    try:
        if job["mode"] == "threads":
            hv = hasher.sign(sets, n_jobs=job["workers"]).hashvalues
            del hv
        else:
            SignatureStore.write(folder, hasher, _blocks(sets), n_jobs=job["workers"])
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return {"traced_peak_mb": peak / 2**20}


def child_fit(job: dict[str, Any]) -> dict[str, Any]:
    """LSHLink at its defaults from signatures in memory or memory-mapped from a store."""
    from cluster import LSHLink, MinHasher
    from cluster.sigstore import ListShingles, SignatureStore

    sets = _load_sets(job["data"])
    budget = job["band_memory_mb"] or D.CLUSTER_BAND_MEMORY_MB
    model = LSHLink(n_jobs=job["workers"], band_memory_mb=budget)
    store = None
    if job["source"] == "store":
        store = SignatureStore.open(job["store"], expect=MinHasher(num_perm=model.num_perm))
    base_rss, base_anon = peak_rss_mb(), status_kb("RssAnon") / 1024.0
    if job["traced"]:
        tracemalloc.start()
    with AnonPeak() as mem:
        t0, c0 = time.perf_counter(), time.process_time()
        if store is None:
            signatures = MinHasher(num_perm=model.num_perm).sign(sets, n_jobs=job["workers"])
            t1 = time.perf_counter()
            model.fit(sets, signatures=signatures)
        else:
            t1 = t0
            model.fit(ListShingles(sets), signatures=store.signatures())
        seconds, cpu = time.perf_counter() - t0, time.process_time() - c0
    out: dict[str, Any] = {}
    if job["traced"]:
        out["traced_peak_mb"] = tracemalloc.get_traced_memory()[1] / 2**20
        tracemalloc.stop()
        return out
    np.save(job["labels"], model.labels_)
    np.save(job["linkage"], model.linkage_matrix_)
    return {
        "seconds": seconds,
        "sign_seconds": t1 - t0,
        "levels_seconds": seconds - (t1 - t0),
        "cpu_seconds": cpu,
        "peak_rss_mb": peak_rss_mb(),
        "base_rss_mb": base_rss,
        "peak_anon_mb": mem.peak_kb / 1024.0,
        "base_anon_mb": base_anon,
        "n_clusters": int(model.labels_.max()) + 1,
        "levels": [lvl.to_dict() for lvl in model.levels_],
    }


def child_blocks(job: dict[str, Any]) -> dict[str, Any]:
    """Signing time against the block size (MinHasher.block_bytes), 1 and 2 threads."""
    from cluster.minhash import MinHasher

    sets = _load_sets(job["data"])
    configs = [(p, mib, nj) for p in PERMS for mib in BLOCK_MIB for nj in (1, 2)]
    times: dict[str, list[float]] = {f"{p}/{mib}/{nj}": [] for p, mib, nj in configs}
    for _ in range(job["repeats"]):
        for num_perm, mib, n_jobs in configs:
            hasher = MinHasher(num_perm=num_perm, block_bytes=mib << 20)
            t0 = time.perf_counter()
            hasher.sign(sets, n_jobs=n_jobs)
            times[f"{num_perm}/{mib}/{n_jobs}"].append(time.perf_counter() - t0)
    return {"runs": times}


def child_stage(job: dict[str, Any]) -> dict[str, Any]:
    """``webometrics cluster`` (the stage) over the SQLite database, with or without a store."""
    from sqlalchemy import select

    from core.settings import Settings
    from store import make_engine
    from store.models import Cluster, ClusterMember
    from store.session import session_scope
    from webometrics.stages import cluster as stage

    engine = make_engine(job["db"])
    base_rss, base_anon = peak_rss_mb(), status_kb("RssAnon") / 1024.0
    with AnonPeak() as mem:
        t0 = time.perf_counter()
        settings = Settings().replace(
            cluster={"unit": "domain", "method": "paper", "signature_store": job["store"]},
            minhash={"workers": 2},
        )
        stats = stage.cluster_one(engine, settings)
        seconds = time.perf_counter() - t0
    with session_scope(engine) as s:
        labels = s.scalars(
            select(Cluster.label)
            .join(ClusterMember, ClusterMember.cluster_id == Cluster.id)
            .where(Cluster.clustering_id == stats.clustering_id, Cluster.level == -1)
            .order_by(ClusterMember.document_id)
        ).all()
    np.save(job["labels"], np.asarray(labels))
    return {
        "seconds": seconds,
        "peak_rss_mb": peak_rss_mb(),
        "base_rss_mb": base_rss,
        "peak_anon_mb": mem.peak_kb / 1024.0,
        "base_anon_mb": base_anon,
        "n_clusters": stats.n_clusters,
        "signatures_written": stats.signatures_written,
    }


CHILDREN = {
    "stage": child_stage,
    "sign": child_sign,
    "sign_traced": child_sign_traced,
    "fit": child_fit,
    "blocks": child_blocks,
}


def run_child(kind: str, **job: Any) -> dict[str, Any]:
    """Run one job in a fresh process; add ``others_cores``: the cores other processes
    kept busy meanwhile (the machine's busy CPU time less the job's, over its wall time)."""
    out, others_cores = run_script([__file__, "--child", kind, json.dumps(job)])
    if out.returncode != 0:
        raise RuntimeError(f"{kind} job failed:\n{out.stderr[-3000:]}")
    result = json.loads(out.stdout.strip().splitlines()[-1])
    result["others_cores"] = others_cores
    return result


# --- the parent ---------------------------------------------------------------------------------


def prepare(n: int | None, folder: Path) -> dict[str, Any]:
    """Shingle the stories once; save them for the children."""
    from corpora.reuters import load_reuters
    from extract import Shingler

    docs = load_reuters(limit=n)
    sh = Shingler(k=D.SHINGLE_K, language="en", stem=D.SHINGLE_STEM, stopwords=D.SHINGLE_STOPWORDS)
    sets = sh.hashes_many(d.text for d in docs)
    lengths = np.array([len(s) for s in sets], dtype=np.int64)
    np.save(folder / "values.npy", np.concatenate(sets))
    np.save(folder / "lengths.npy", lengths)
    return {"n_documents": len(sets), "n_shingles": int(lengths.sum())}


def measure(args: argparse.Namespace, tmp: Path) -> dict[str, Any]:
    data = tmp / "data"
    data.mkdir()
    res: dict[str, Any] = {
        "machine": machine(),
        "date": run_date(),
        "load_start": load_averages(),
        "repeats": args.repeats,
        "corpus": prepare(args.docs, data),
    }
    print(f"corpus: {res['corpus']}", flush=True)
    common = {"data": str(data), "tmp": str(tmp), "repeats": 1}
    configs = [
        (num_perm, mode, workers)
        for num_perm in PERMS
        for mode, workers in (
            ("threads", 1),
            ("threads", 2),
            ("processes", 2),
            ("store", 1),
            ("store", 2),
        )
    ]
    # repeats round-robin over the configurations, so that the load of the shared machine
    # falls on all of them alike
    runs: dict[tuple[int, str, int], list[dict[str, Any]]] = {c: [] for c in configs}
    for rep in range(args.repeats):
        for num_perm, mode, workers in configs:
            before = load_averages()[0]
            got = run_child("sign", **common, num_perm=num_perm, mode=mode, workers=workers,
                            check=rep == 0)  # fmt: skip
            got["load"] = [before, load_averages()[0]]
            runs[num_perm, mode, workers].append(got)
            print(f"run {rep + 1}: num_perm {num_perm} {mode} x{workers}: "
                  f"{got['seconds']:.3f} s (load {before})", flush=True)  # fmt: skip
    rows = []
    for (num_perm, mode, workers), rs in runs.items():
        row: dict[str, Any] = {"num_perm": num_perm, "mode": mode, "workers": workers}
        row["seconds_runs"] = [r["seconds"] for r in rs]
        row["seconds"] = statistics.median(row["seconds_runs"])
        row["best_seconds"] = min(row["seconds_runs"])
        row["cpu_seconds"] = statistics.median(r["cpu_seconds"] for r in rs)
        row["loads"] = [r["load"] for r in rs]
        row["others_cores"] = statistics.median(r["others_cores"] for r in rs)
        row["identical_to_one_thread"] = rs[0]["identical_to_one_thread"]
        for key in ("peak_rss_mb", "peak_anon_mb"):
            base = key.replace("peak", "base")
            row[key.replace("_mb", "_above_base_mb")] = max(r[key] - r[base] for r in rs)
        row["matrix_mb"] = rs[0]["matrix_mb"]
        if "store_mb" in rs[0]:
            row["store_mb"] = rs[0]["store_mb"]
        if mode != "processes":
            row.update(
                run_child("sign_traced", **common, num_perm=num_perm, mode=mode, workers=workers)
            )
        rows.append(row)
    res["signing"] = rows
    before = load_averages()[0]
    blocks_job = run_child("blocks", **{**common, "repeats": args.repeats})
    blocks = blocks_job["runs"]
    res["block_size"] = {
        "load": [before, load_averages()[0]],
        "others_cores": blocks_job["others_cores"],
        "rows": [
            {
                "num_perm": int(key.split("/")[0]),
                "block_mib": int(key.split("/")[1]),
                "workers": int(key.split("/")[2]),
                "seconds": statistics.median(ts),
                "best_seconds": min(ts),
                "seconds_runs": ts,
            }
            for key, ts in blocks.items()
        ],
    }
    # clustering from memory and from the store (the store of the default num_perm)
    store = tmp / "fit-store"
    run_child("sign", **common, num_perm=D.MINHASH_NUM_PERM, mode="store", workers=2,
              check=False)  # fmt: skip
    shutil.move(tmp / f"store-{D.MINHASH_NUM_PERM}-store-2", store)
    fit_configs = [("memory", None), ("store", None), ("store", 64)]
    fit_runs: dict[tuple[str, int | None], list[dict[str, Any]]] = {c: [] for c in fit_configs}
    ref_labels: np.ndarray | None = None
    ref_linkage: np.ndarray | None = None
    for rep in range(args.repeats):
        for source, budget in fit_configs:
            job: dict[str, Any] = {
                **common,
                "source": source,
                "store": str(store),
                "band_memory_mb": budget,
                "workers": 2,
                "labels": str(tmp / "labels.npy"),
                "linkage": str(tmp / "linkage.npy"),
            }
            before = load_averages()[0]
            got = run_child("fit", **job, traced=False)
            got["load"] = [before, load_averages()[0]]
            labels, linkage = np.load(job["labels"]), np.load(job["linkage"])
            if ref_labels is None or ref_linkage is None:
                ref_labels, ref_linkage = labels, linkage
            got["identical_to_memory"] = bool(
                np.array_equal(labels, ref_labels) and np.array_equal(linkage, ref_linkage)
            )
            if rep == 0:
                got.update(run_child("fit", **job, traced=True))
            fit_runs[source, budget].append(got)
            print(f"run {rep + 1}: fit from {source} (budget {budget}): {got['seconds']:.2f} s, "
                  f"identical {got['identical_to_memory']}", flush=True)  # fmt: skip
    fits = []
    for (source, budget), rs in fit_runs.items():
        row = {"source": source, "band_memory_mb": budget or D.CLUSTER_BAND_MEMORY_MB}
        for key in ("seconds", "sign_seconds", "levels_seconds", "cpu_seconds"):
            row[f"{key}_runs"] = [r[key] for r in rs]
            row[key] = statistics.median(row[f"{key}_runs"])
        row["loads"] = [r["load"] for r in rs]
        row["others_cores"] = statistics.median(r["others_cores"] for r in rs)
        row["identical_to_memory"] = all(r["identical_to_memory"] for r in rs)
        for key in ("peak_rss_mb", "peak_anon_mb"):
            base = key.replace("peak", "base")
            row[key.replace("_mb", "_above_base_mb")] = max(r[key] - r[base] for r in rs)
        row["traced_peak_mb"] = rs[0]["traced_peak_mb"]
        row["n_clusters"] = rs[0]["n_clusters"]
        row["levels"] = rs[0]["levels"]
        fits.append(row)
    res["clustering"] = fits
    res["stage"] = measure_stage(args, tmp, data)
    res["load_end"] = load_averages()
    return res


def measure_stage(args: argparse.Namespace, tmp: Path, data: Path) -> list[dict[str, Any]]:
    """The cluster stage over a SQLite database of every story as a domain document."""
    from store import make_engine, schema
    from store.models import Document
    from store.session import session_scope

    db = f"sqlite:///{tmp / 'stage.db'}"
    engine = make_engine(db)
    schema.upgrade(engine)
    with session_scope(engine) as s:
        s.add_all(
            Document(unit="domain", key=f"story{k}.example", domain=f"story{k}.example",
                     language="en", n_shingles=len(x), shingles=x.astype("<u8").tobytes(),
                     shingle_k=D.SHINGLE_K)
            for k, x in enumerate(_load_sets(str(data)))
        )  # fmt: skip
    engine.dispose()
    # the first run writes the Signature rows; the measured ones find them unchanged
    run_child("stage", db=db, store=None, labels=str(tmp / "stage-labels.npy"))
    configs = [("memory", None), ("store", str(tmp / "stage-store"))]
    runs: dict[str, list[dict[str, Any]]] = {name: [] for name, _ in configs}
    ref = None
    for rep in range(args.repeats):
        for name, store in configs:
            got = run_child("stage", db=db, store=store, labels=str(tmp / "stage-labels.npy"))
            labels = np.load(tmp / "stage-labels.npy")
            ref = labels if ref is None else ref
            got["identical_to_memory"] = bool(np.array_equal(labels, ref))
            runs[name].append(got)
            print(f"run {rep + 1}: stage, signatures {name}: {got['seconds']:.2f} s", flush=True)
    rows = []
    for name, rs in runs.items():
        rows.append(
            {
                "signatures": name,
                "seconds_runs": [r["seconds"] for r in rs],
                "seconds": statistics.median(r["seconds"] for r in rs),
                "others_cores": statistics.median(r["others_cores"] for r in rs),
                "identical_to_memory": all(r["identical_to_memory"] for r in rs),
                "peak_rss_above_base_mb": max(r["peak_rss_mb"] - r["base_rss_mb"] for r in rs),
                "peak_anon_above_base_mb": max(r["peak_anon_mb"] - r["base_anon_mb"] for r in rs),
                "n_clusters": rs[0]["n_clusters"],
            }
        )
    return rows


def markdown(res: dict[str, Any]) -> str:
    c = res["corpus"]
    L = [
        "# Signatures beyond one process: threads, processes, a memory-mapped store",
        "",
        f"Run: `.venv/bin/python bench/signatures.py` on {res['machine']} ({res['date']}); "
        f"Reuters-21578, {c['n_documents']:,} stories, {c['n_shingles']:,} 1-word shingles "
        "(stemmed, stop words removed); MinHash affine32. Each configuration runs in a fresh "
        f"process; seconds are the median of {res['repeats']} runs, taken round-robin over "
        "the configurations so that other work falls on all alike (all runs, and the load "
        "before and after each, in signatures.json). The 2 cores are shared with other "
        "work: **others' cores** is the median number of cores that other processes kept "
        "busy during a configuration's runs (the machine's busy time from /proc/stat less "
        "the run's own CPU time, over its wall time); with 0.5 or more, two threads cannot "
        "have had two whole cores.",
        "",
        "Memory: **peak RSS** and **peak anon** (anonymous RSS sampled every 5 ms, the "
        "memory the process cannot give back; RSS also counts pages of the memory-mapped "
        "file, which the kernel drops under pressure) are given above the process's level "
        "once the shingles are loaded; **traced** is the peak of every Python and numpy "
        "allocation (tracemalloc, a separate run).",
        "",
        "## Signing",
        "",
        "| num_perm | how | workers | seconds (median) | best | speed-up | CPU s | others' "
        "cores | identical | peak RSS MB | peak anon MB | traced MB | matrix MB |",
        "|---:|---|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|",
    ]
    names = {
        "threads": "in memory, threads",
        "processes": "in memory, processes (not kept)",
        "store": "memory-mapped store, threads",
    }
    for num_perm in PERMS:
        rows = [r for r in res["signing"] if r["num_perm"] == num_perm]
        one = next(r for r in rows if r["mode"] == "threads" and r["workers"] == 1)
        for r in rows:
            traced = f"{r['traced_peak_mb']:.0f}" if "traced_peak_mb" in r else "-"
            L.append(
                f"| {num_perm:,} | {names[r['mode']]} | {r['workers']} | {r['seconds']:.3f} | "
                f"{r['best_seconds']:.3f} | {one['seconds'] / r['seconds']:.2f}x | "
                f"{r['cpu_seconds']:.2f} | {r['others_cores']:.2f} | "
                f"{'yes' if r['identical_to_one_thread'] else 'NO'} | "
                f"{r['peak_rss_above_base_mb']:.0f} | "
                f"{r['peak_anon_above_base_mb']:.0f} | {traced} | "
                f"{r['matrix_mb']:.0f} |"
            )
    fits = res["clustering"]
    b = res["block_size"]
    L += [
        "",
        "### Block size",
        "",
        "Seconds to sign all stories in memory against ``MinHasher.block_bytes`` (the "
        "memory of one block of permuted values per thread; the default is "
        f"{_default_block_mib()} MiB), median (best) of {res['repeats']} runs "
        f"round-robin in one process (others' cores {b['others_cores']:.2f}):",
        "",
        "| num_perm | block MiB | shingles a block | 1 thread | 2 threads |",
        "|---:|---:|---:|---:|---:|",
    ]
    for num_perm in PERMS:
        for mib in BLOCK_MIB:
            cells = []
            for workers in (1, 2):
                r = next(
                    x
                    for x in b["rows"]
                    if (x["num_perm"], x["block_mib"], x["workers"]) == (num_perm, mib, workers)
                )
                cells.append(f"{r['seconds']:.3f} ({r['best_seconds']:.3f})")
            L.append(
                f"| {num_perm:,} | {mib} | {(mib << 20) // (num_perm * 4):,} | "
                f"{cells[0]} | {cells[1]} |"
            )
    L += [
        "",
        "speed-up: median against the median of 1 thread in memory at the same num_perm; "
        "best: the fastest run (the least disturbed by other work). identical: every value "
        "equal to 1 thread's. The store is written from a stream of blocks of "
        f"{STREAM_BLOCK:,} documents; its seconds include writing the file.",
        "",
        f"## The paper's LSH single link at its defaults ({D.MINHASH_NUM_PERM} permutations, "
        "exact Jaccard, r = 12, 8, 4)",
        "",
        "| signatures | banding budget MB | sign s | levels s | total s | CPU s | others' cores "
        "| identical clusters | peak RSS MB | peak anon MB | traced MB | clusters |",
        "|---|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|",
    ]
    for f in fits:
        src = "in memory" if f["source"] == "memory" else "memory-mapped store"
        L.append(
            f"| {src} | {f['band_memory_mb']:,} | {f['sign_seconds']:.2f} | "
            f"{f['levels_seconds']:.2f} | {f['seconds']:.2f} | {f['cpu_seconds']:.2f} | "
            f"{f['others_cores']:.2f} | "
            f"{'yes' if f['identical_to_memory'] else 'NO'} | "
            f"{f['peak_rss_above_base_mb']:.0f} | "
            f"{f['peak_anon_above_base_mb']:.0f} | {f['traced_peak_mb']:.0f} | "
            f"{f['n_clusters']:,} |"
        )
    L += [
        "",
        "In memory: signing (2 threads) then the levels, the matrix held in memory. From "
        "the store (written beforehand): the levels only, over the memory-mapped matrix, "
        "the shingles of the candidate pairs fetched from a ShingleSource (here over the "
        "loaded stories; the cluster stage reads them from the database). At the 64 MB "
        "budget each level's bucket entries go through hash partitions on disk. identical: "
        "labels and linkage matrix equal to the in-memory run's.",
        "",
        "## The cluster stage over SQLite",
        "",
        "`webometrics cluster --method paper` (the stage, 2 workers) over a SQLite database "
        "holding every story as a domain document, after a first run that stored the "
        "signatures. With the store the documents are streamed from the database in chunks "
        "of 2,000 into it and the shingles of candidate pairs are read back from the "
        "database for exact Jaccard; identical: the stored clusters equal the in-memory "
        "run's. Memory is that of the whole process above its level before the stage.",
        "",
        "| signatures | seconds | others' cores | identical clusters | peak RSS MB | "
        "peak anon MB | clusters |",
        "|---|---:|---:|---|---:|---:|---:|",
    ]
    for r in res["stage"]:
        src = "in memory" if r["signatures"] == "memory" else "memory-mapped store"
        L.append(
            f"| {src} | {r['seconds']:.2f} | {r['others_cores']:.2f} | "
            f"{'yes' if r['identical_to_memory'] else 'NO'} | "
            f"{r['peak_rss_above_base_mb']:.0f} | {r['peak_anon_above_base_mb']:.0f} | "
            f"{r['n_clusters']:,} |"
        )
    return "\n".join(L) + "\n"


SMOKE_SKIP = "fresh processes on 21,578 stories (--quick: 3,000, still a minute)"
"""Why the smoke test (tests/bench) does not run this script on tiny data."""


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--child", nargs=2, metavar=("KIND", "JOB"), help=argparse.SUPPRESS)
    ap.add_argument("--docs", type=int, default=None, help="first n stories (default all)")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="3,000 stories, 1 run: a smoke run")
    ap.add_argument("--out", default=str(RESULTS))
    args = ap.parse_args(argv)
    if args.child:
        kind, job = args.child
        print(json.dumps(CHILDREN[kind](json.loads(job))))
        return 0
    if args.quick:
        args.docs, args.repeats = 3000, 1
        if args.out == str(RESULTS):
            args.out = tempfile.mkdtemp(prefix="signatures-quick-")
    with tempfile.TemporaryDirectory(prefix="bench-signatures-") as tmp:
        res = measure(args, Path(tmp))
    out = Path(args.out)
    md = markdown(res)
    write_results(out / "signatures", res, md)
    print(md)
    print(f"written to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
