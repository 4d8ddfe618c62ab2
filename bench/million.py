"""The activity cluster stage on up to a million stored documents (issue 21, item 4).

Builds SQLite databases of ``n`` domain documents with stored term counts (the
``document`` table only, as ``webometrics cluster`` reads it: no university, so one
clustering of every document) and runs the real stage on each in a fresh process:
``python -m webometrics -q --db-url sqlite:///... cluster --unit domain --method activity
--university all`` with the default settings (``[activity]``; ``[minhash] workers`` -1,
both cores). The stage streams the term counts from the database in batches into one
count matrix (:func:`webometrics.stages.cluster.documents.load_term_counts`), weighs it,
builds the k-NN graph (``candidates="auto"``: exact below
:data:`cluster.activity.EXACT_WORK`, about 200,000 documents here, NN-descent above) and
the Leiden levels, and stores the clustering.

Documents: the texts of ``bench/activity.py``'s :func:`reuters_scale` (the 21,578
Reuters-21578 stories, then perturbed copies of them: each copy drops every word with
probability 0.1, seeded; the same texts as ``bench/knn.py``'s sizes), made and counted
in batches of 20,000 (:func:`extract.terms.count_terms`, English) and inserted in
batches, so the texts of one batch only are held. The databases are kept in
``--workdir`` and reused by a later run (their build time is then the first run's).
Building is not part of the measured stage time; the table shows it apart.

Measured per size, of the child process: wall and CPU seconds (user + system, from
``os.wait4``), peak RSS (its own ``ru_maxrss``), the step seconds the clustering stores
(``parameters["graph"]["seconds"]``: ``load`` = reading the term counts from the
database into the count matrix, ``weights``, ``neighbours``, ``leiden``, ``reassign`` (the
centroid reassignment after Leiden, :mod:`cluster.reassign`), ``evidence`` =
each cluster's weighted terms), ``store`` (the rest of the stored ``Clustering.seconds``:
writing the clusters and members), ``start`` (the rest of the wall time: interpreter,
imports, schema check, exit), the neighbour method, the clusters of every level, the
load averages before and after and the cores other processes kept busy meanwhile. The
growth exponent of a measure is the least-squares slope of its log against ``log n``
over the sizes; the slopes between consecutive sizes are shown too (the neighbour step
changes method between 100,000 and 300,000).

Last, reading and weighing the stored counts of the largest size, each way in a fresh
process: streamed into the count matrix as the stage does, and with every document's
mapping held as it did before (seconds and peak RSS).

Run: ``.venv/bin/python bench/million.py`` (20,000, 100,000, 300,000 and 1,000,000:
about 50 minutes on 2 shared cores, most of it the NN-descent of 300,000 and 1,000,000
documents, and 1.7 GB of databases in ``--workdir``); ``--sizes 20000,100000``;
``--quick`` (5,000 and 20,000 into a temporary folder); ``--render`` (rewrite the .md from
the .json); ``--reading-only`` (only the reading comparison, added to the saved results).
Writes ``bench/results/million.json`` (after every size) and ``million.md``.
"""

from __future__ import annotations

import argparse
import importlib
import itertools
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.common import (  # noqa: E402
    RESULTS,
    busy_seconds,
    load_averages,
    machine,
    run_date,
    write_results,
)

SIZES = (20_000, 100_000, 300_000, 1_000_000)
QUICK_SIZES = (5_000, 20_000)
BATCH = 20_000
"""Texts made, counted and inserted at a time."""
FIT_STEPS = ("load", "terms", "weights", "neighbours", "leiden", "reassign", "evidence")
STEPS = ("load", "weights", "neighbours", "leiden", "reassign", "evidence", "store", "start")
"""The steps shown (``terms`` is about 0 on the stage: the counts arrive as a matrix)."""
WORKDIR = Path(tempfile.gettempdir()) / "webometrics-million"


# ---------------------------------------------------------------------------- databases


def reuters_batches(n: int, batch: int = BATCH, seed: int = 1) -> Iterator[list[str]]:
    """The texts of ``reuters_scale(n, seed)`` in order, ``batch`` at a time.

    The same random draws in the same order as :func:`bench.activity.reuters_scale`, so
    the same texts, without holding them all.
    """
    from corpora.reuters import load_reuters

    # bench/activity.py's drop rate (imported by name: that script is not type-checked)
    drop = float(importlib.import_module("bench.activity").PERTURB_DROP)
    docs = load_reuters()
    rng = np.random.default_rng(seed)
    out: list[str] = []
    made = 0
    for d in docs[:n]:
        out.append(d.text)
        made += 1
        if len(out) == batch:
            yield out
            out = []
    while made < n:
        for d in docs[: n - made]:
            words = d.text.split()
            kept = rng.random(len(words)) >= drop
            out.append(" ".join(w for w, keep in zip(words, kept, strict=True) if keep))
            made += 1
            if len(out) == batch:
                yield out
                out = []
    if out:
        yield out


def build_database(path: Path, n: int) -> dict[str, Any]:
    """A SQLite database of ``n`` domain documents with their term counts (reused when
    a complete one is there); its size, entries and build seconds."""
    from sqlalchemy import insert

    from extract.terms import count_terms
    from store import make_engine, schema
    from store.models import Document

    done = path.with_suffix(".json")
    if path.exists() and done.exists():
        made = json.loads(done.read_text(encoding="utf-8"))
        if made.get("documents") == n:
            engine = make_engine(f"sqlite:///{path}")
            schema.upgrade(engine)  # made by an older revision: its schema brought up to date
            engine.dispose()
            return {**made, "reused": True}
    path.unlink(missing_ok=True)
    t0 = time.perf_counter()
    engine = make_engine(f"sqlite:///{path}")
    schema.upgrade(engine)
    entries = 0
    start = 0
    for texts in reuters_batches(n):
        counts = count_terms(texts, ["en"] * len(texts))
        rows = [
            {"unit": "domain", "key": f"d{start + i:07d}.example", "domain":
             f"d{start + i:07d}.example", "language": "en", "n_pages": 1,
             "text_length": len(t), "terms": c, "n_terms": len(c)}
            for i, (t, c) in enumerate(zip(texts, counts, strict=True))
        ]  # fmt: skip
        entries += sum(len(c) for c in counts)
        with engine.begin() as conn:
            conn.execute(insert(Document), rows)
        start += len(texts)
        if start % 100_000 == 0 or start == n:
            print(f"  database {n:,}: {start:,} documents", flush=True)
    engine.dispose()
    made = {
        "documents": n,
        "entries": entries,
        "seconds": round(time.perf_counter() - t0, 1),
        "megabytes": round(path.stat().st_size / 2**20, 1),
    }
    done.write_text(json.dumps(made), encoding="utf-8")
    return {**made, "reused": False}


# ---------------------------------------------------------------------------- the stage


def run_stage(path: Path, log: Path) -> dict[str, Any]:
    """``webometrics cluster`` (activity, every document) on the database in a fresh
    process: its wall, CPU, peak RSS and exit code."""
    cmd = [sys.executable, "-m", "webometrics", "-q", "--db-url", f"sqlite:///{path}", "cluster",
           "--unit", "domain", "--method", "activity", "--university", "all"]  # fmt: skip
    env = {k: v for k, v in os.environ.items() if not k.startswith("WEBOMETRICS_")}
    before, busy0, t0 = load_averages(), busy_seconds(), time.perf_counter()
    with log.open("w", encoding="utf-8") as out:
        child = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)
        _pid, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - t0
    child.returncode = os.waitstatus_to_exitcode(status)  # reaped by wait4
    cpu = usage.ru_utime + usage.ru_stime
    return {
        "exit": child.returncode,
        "wall": round(wall, 2),
        "cpu": round(cpu, 2),
        "rss_mb": round(usage.ru_maxrss / 1024.0, 1),
        "others_busy": round(max(0.0, (busy_seconds() - busy0 - cpu) / wall), 2),
        "load_before": before,
        "load_after": load_averages(),
    }


def clustering_of(path: Path) -> dict[str, Any]:
    """The newest stored clustering of the database: step seconds, clusters, graph."""
    from sqlalchemy import select

    from store import make_engine
    from store.models import Clustering

    engine = make_engine(f"sqlite:///{path}")
    with engine.connect() as conn:
        row = conn.execute(select(Clustering).order_by(Clustering.id.desc()).limit(1)).one()
    engine.dispose()
    graph = row.parameters["graph"]
    seconds = {k: float(graph["seconds"].get(k, 0.0)) for k in FIT_STEPS}
    seconds["store"] = max(0.0, float(row.seconds) - sum(seconds.values()))
    return {
        "stage_seconds": float(row.seconds),
        "seconds": {k: round(v, 2) for k, v in seconds.items()},
        "n_clusters": int(row.n_clusters),
        "levels": [int(lvl["n_clusters"]) for lvl in row.levels],
        "candidates": graph.get("candidates"),
        "n_neighbors": graph.get("n_neighbors"),
        "n_terms": graph.get("n_terms"),
        "n_empty": graph.get("n_empty"),
        "edges": graph.get("edges"),
    }


def measure(n: int, workdir: Path) -> dict[str, Any]:
    """Build (or reuse) the database of ``n`` documents and run the stage on it."""
    path = workdir / f"million-{n}.db"
    database = build_database(path, n)
    print(f"{n:,} documents: database {database}", flush=True)
    run = run_stage(path, workdir / f"million-{n}.log")
    row: dict[str, Any] = {"documents": n, "database": database, **run}
    if run["exit"] != 0:
        tail = (workdir / f"million-{n}.log").read_text(encoding="utf-8")[-2000:]
        row["error"] = tail
        print(f"  failed ({run['exit']}):\n{tail}", flush=True)
        return row
    row.update(clustering_of(path))
    row["seconds"]["start"] = round(max(0.0, run["wall"] - row["stage_seconds"]), 2)
    print(f"  {json.dumps({k: v for k, v in row.items() if k != 'database'})}", flush=True)
    return row


# ---------------------------------------------------------------------------- reading the counts


def read_counts(path: Path, how: str) -> dict[str, Any]:
    """Read and weigh every document's stored counts, as the stage does (``streamed``:
    :func:`load_term_counts`) or with every mapping held (``mappings``:
    ``load(with_terms=True)``, what the stage did before); seconds and peak RSS."""
    import resource

    from cluster.weighting import TfidfWeighting
    from core import defaults as D
    from store import make_engine
    from webometrics.stages.cluster.documents import Selection, load, load_term_counts

    engine = make_engine(f"sqlite:///{path}")
    selection = Selection("domain")
    t0 = time.perf_counter()
    data = load(engine, selection, with_shingles=False, with_terms=how == "mappings")
    counts = (
        data["terms"] if how == "mappings" else load_term_counts(engine, data["ids"], selection)
    )
    X = TfidfWeighting(min_df=D.ACTIVITY_MIN_DF, max_df=D.ACTIVITY_MAX_DF).fit_transform(counts)
    return {
        "how": how,
        "documents": int(X.shape[0]),
        "entries": int(X.nnz),
        "seconds": round(time.perf_counter() - t0, 1),
        "rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0, 1),
    }


def compare_reading(path: Path) -> list[dict[str, Any]]:
    """:func:`read_counts` both ways, each in a fresh process."""
    rows = []
    for how in ("mappings", "streamed"):
        out = subprocess.run(
            [sys.executable, __file__, "--read-counts", str(path), how],
            capture_output=True, text=True, check=True, cwd=ROOT,
        )  # fmt: skip
        rows.append(json.loads(out.stdout.strip().splitlines()[-1]))
        print(f"  reading the counts: {rows[-1]}", flush=True)
    return rows


# ---------------------------------------------------------------------------- the report


def slope(ns: list[int], ys: list[float]) -> float | None:
    """Least-squares slope of ``log y`` against ``log n`` (None: fewer than 2 points)."""
    pts = [(n, y) for n, y in zip(ns, ys, strict=True) if y > 0]
    if len(pts) < 2:
        return None
    x = np.log([p[0] for p in pts])
    y = np.log([p[1] for p in pts])
    return round(float(np.polyfit(x, y, 1)[0]), 2)


def growth(rows: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """The growth exponents of wall, CPU, RSS and every step: over all sizes, and
    between consecutive sizes."""
    ok = [r for r in rows if r.get("exit") == 0]
    ns = [r["documents"] for r in ok]
    measures: dict[str, list[float]] = {
        "wall": [r["wall"] for r in ok],
        "cpu": [r["cpu"] for r in ok],
        "rss": [r["rss_mb"] for r in ok],
        **{step: [r["seconds"][step] for r in ok] for step in STEPS},
    }
    return {
        key: {
            "all": slope(ns, ys),
            "pairs": [slope(ns[i : i + 2], ys[i : i + 2]) for i in range(len(ns) - 1)],
        }
        for key, ys in measures.items()
    }


def _fmt(x: float | None) -> str:
    return "—" if x is None else f"{x:.2f}"


def render(res: dict[str, Any]) -> str:
    rows = res["sizes"]
    lines = [
        "# The activity cluster stage on up to 1,000,000 stored documents",
        "",
        f"Machine: {res['machine']}; run {res['date']}; load averages {res['load_start']} "
        f"before, {res.get('load_end', '—')} after. `webometrics cluster --method activity "
        "--university all` on SQLite databases of Reuters-21578 stories and perturbed "
        "copies (bench/million.py), default settings, in a fresh process per size.",
        "",
        "| documents | database (build) | wall s | CPU s | peak RSS MB | load s | weights s "
        "| neighbours s (method, k) | Leiden s | reassign s | evidence s | store s | start s "
        "| clusters (levels) | terms | load avg before → after, others busy |",
        "|---:|---|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|---|---:|---|",
    ]
    for r in rows:
        db = r["database"]
        build = f"{db['megabytes']:,.0f} MB ({db['seconds']:,.0f} s)"
        if r.get("exit") != 0:
            lines.append(f"| {r['documents']:,} | {build} | failed: exit {r['exit']} "
                         + "| " * 13 + "|")  # fmt: skip
            continue
        s = r["seconds"]
        levels = " / ".join(f"{c:,}" for c in r["levels"])
        lines.append(
            f"| {r['documents']:,} | {build} | {r['wall']:,.1f} | {r['cpu']:,.1f} "
            f"| {r['rss_mb']:,.0f} | {s['load']:,.1f} | {s['weights']:,.1f} "
            f"| {s['neighbours']:,.1f} ({r['candidates']}, {r['n_neighbors']}) "
            f"| {s['leiden']:,.1f} | {s.get('reassign', 0.0):,.1f} | {s['evidence']:,.1f} "
            f"| {s['store']:,.1f} | {s['start']:,.1f} "
            f"| {r['n_clusters']:,} ({levels}) | {r['n_terms']:,} "
            f"| {r['load_before']} → {r['load_after']}, {r['others_busy']} |"
        )
    g = growth(rows)
    sizes = [r["documents"] for r in rows if r.get("exit") == 0]
    pairs = [f"{a:,}→{b:,}" for a, b in itertools.pairwise(sizes)]
    lines += [
        "",
        "Growth exponents (slope of log measure against log n, least squares over the "
        "sizes; then between consecutive sizes):",
        "",
        "| measure | all sizes | " + " | ".join(pairs) + " |",
        "|---|---:|" + "---:|" * len(pairs),
    ]
    for key, v in g.items():
        lines.append(f"| {key} | {_fmt(v['all'])} | " + " | ".join(_fmt(p) for p in v["pairs"])
                     + " |")  # fmt: skip
    reading = res.get("reading", [])
    if reading:
        lines += [
            "",
            f"Reading and weighing the stored counts of {reading[0]['documents']:,} documents "
            "(`load` + `TfidfWeighting`, a fresh process each, nothing else):",
            "",
            "| how | seconds | peak RSS MB |",
            "|---|---:|---:|",
            *(
                f"| {READING[r['how']]} | {r['seconds']:,.1f} | {r['rss_mb']:,.0f} |"
                for r in reading
            ),
        ]
    lines += ["", "Notes:", "", *(f"- {note}" for note in res.get("notes", []))]
    return "\n".join(lines) + "\n"


READING = {
    "mappings": "every document's mapping held (`load(with_terms=True)`, the stage before)",
    "streamed": "streamed into the count matrix (`load_term_counts`, the stage now)",
}
NOTES = [
    "wall and CPU seconds and peak RSS are the child process's (os.wait4); the step "
    "seconds are those the clustering stores (parameters.graph.seconds); `store` is the "
    "rest of the stored Clustering.seconds (writing the clusters and members of every "
    "level), `start` the rest of the wall time (interpreter, imports, schema check).",
    "`load` reads each document's stored term counts (JSON) from the database 5,000 at a "
    "time into one count matrix (int32 columns, float32 counts); the mappings of one "
    "batch are held at a time, never every document's.",
    "The neighbour step is exact (blocked product) up to cluster.activity.EXACT_WORK "
    "(about 200,000 documents here) and NN-descent above, so its exponent between 100,000 "
    "and 300,000 compares two methods.",
    "The database build (counting the terms of the texts, inserting them) is not part of "
    "the stage; a reused database shows the build time of the run that made it.",
]


SMOKE_SKIP = "builds databases of 20,000 to 1,000,000 documents (--quick still minutes)"
"""Why the smoke test (tests/bench) does not run this script on tiny data."""


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default=",".join(map(str, SIZES)))
    ap.add_argument("--quick", action="store_true", help="5k and 20k into a temporary folder")
    ap.add_argument("--workdir", default=str(WORKDIR), help="where the databases are kept")
    ap.add_argument("--render", action="store_true", help="rewrite the .md from the .json")
    ap.add_argument("--out", default=str(RESULTS))
    ap.add_argument("--note", action="append", default=[], help="a line for the report")
    ap.add_argument("--read-counts", nargs=2, metavar=("DB", "HOW"), help=argparse.SUPPRESS)
    ap.add_argument(
        "--reading-only",
        action="store_true",
        help="only compare reading the counts (mappings / streamed) on the largest size's "
        "database, added to the saved results",
    )
    args = ap.parse_args(argv)
    if args.read_counts:
        print(json.dumps(read_counts(Path(args.read_counts[0]), args.read_counts[1])))
        return 0
    out = Path(tempfile.mkdtemp()) if args.quick else Path(args.out)
    stem = out / "million"
    if args.render:
        saved = json.loads(stem.with_suffix(".json").read_text(encoding="utf-8"))
        stem.with_suffix(".md").write_text(render(saved), encoding="utf-8")
        return 0
    sizes = list(QUICK_SIZES) if args.quick else [int(s) for s in args.sizes.split(",") if s]
    workdir = Path(args.workdir)
    workdir.mkdir(parents=True, exist_ok=True)
    largest = workdir / f"million-{max(sizes)}.db"
    if args.reading_only:
        saved = json.loads(stem.with_suffix(".json").read_text(encoding="utf-8"))
        build_database(largest, max(sizes))
        saved["reading"] = compare_reading(largest)
        write_results(stem, saved, render(saved), newline=True, ensure_ascii=False)
        return 0
    res: dict[str, Any] = {
        "machine": machine("cores"),
        "date": run_date(),
        "load_start": load_averages(),
        "sizes": [],
        "notes": [*args.note, *NOTES],
    }
    print(f"load averages {res['load_start']}", flush=True)
    for n in sorted(sizes):
        res["sizes"].append(measure(n, workdir))
        res["growth"] = growth(res["sizes"])
        write_results(stem, res, render(res), newline=True, ensure_ascii=False)
    res["reading"] = compare_reading(largest)
    res["load_end"] = load_averages()
    write_results(stem, res, render(res), newline=True, ensure_ascii=False)
    print(render(res))
    print(f"wrote {stem}.md and .json")
    return 0


if __name__ == "__main__":
    sys.exit(main())
