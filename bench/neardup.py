"""Near-duplicate methods compared, in the shape of seed 002's table.

For every method of :data:`dedup.registry.METHODS`, with its default
parameters, one run on each of:

* **Clough & Stevenson** (``clough-plagiarism-short-answers``): the 95 (answer, source)
  pairs; positives are cut / light / heavy answers (57), negatives non (38); recall is
  also given per grade. Unlabelled pairs (two answers) are not scored.
* **tgcontest** (``tgcontest-toloka-ru-en``): the 250 labelled same-story pairs (117 OK)
  over the 487 distinct ru/en texts; same story is looser than near-duplicate.
* **Reuters-21578**: all 21,578 stories; the truth is every pair with exact Jaccard
  >= 0.8 over the sets of 5-word shingles (plain tokens), computed exactly with blocked
  sparse products ``X[block] @ X.T`` (no sampling, no estimate), and cross-checked with
  A11's prefix-filtered join. Precision and recall over all pairs; documents per second
  is 21,578 / the method's wall time (tokenising included, fresh corpus per method).

Also printed: seed 001's match probability ``1 - (1 - s^r)^b`` of Broder's 6x14 and of
14x6 against resemblance s, and the groups each grouping (components, cliques, FPmax)
makes from one method's pairs on Reuters.

Run: ``.venv/bin/python bench/neardup.py`` (about 10 minutes on 2 cores); writes
``bench/results/neardup.json`` and ``bench/results/neardup.md``.
"""

from __future__ import annotations

import argparse
import platform
import sys
import time
from pathlib import Path

import numpy as np
from scipy.sparse import csr_matrix

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.common import RESULTS, write_results  # noqa: E402
from corpora.clough import labelled_pairs, load_clough  # noqa: E402
from corpora.reuters import load_reuters  # noqa: E402
from corpora.tgcontest import load_story_pairs, pair_corpus  # noqa: E402
from dedup.base import Corpus  # noqa: E402
from dedup.registry import METHODS, get_method  # noqa: E402
from dedup.supershingles import match_probability  # noqa: E402

SEED_002 = {  # name -> (R, P, F) published on ROMIP
    "a12-3plus5": (0.96, 0.95, 0.95),
    "a4-long-sent": (0.84, 0.80, 0.82),
    "a1-tf": (0.60, 0.94, 0.73),
    "a10-opt-freq": (0.59, 0.94, 0.73),
    "a3-tfridf": (0.59, 0.95, 0.73),
    "a5-heavy-sent": (0.62, 0.86, 0.72),
    "a2-tfidf": (0.54, 0.96, 0.69),
    "a7-lex-rand": (0.50, 0.97, 0.66),
    "a9-descr-words": (0.44, 0.77, 0.56),
    "a8-log-shingles": (0.39, 0.97, 0.56),
    "a6-megashingles": (0.36, 0.91, 0.51),
    "a0-md5": (0.23, 1.00, 0.38),
}


def prf(tp: int, fp: int, fn: int) -> tuple[float, float, float]:
    p = tp / (tp + fp) if tp + fp else 0.0
    r = tp / (tp + fn) if tp + fn else 0.0
    f = 2 * p * r / (p + r) if p + r else 0.0
    return p, r, f


def jaccard_truth(sets: list[np.ndarray], threshold: float, block: int = 1500) -> set:
    """Every pair with exact Jaccard >= threshold: blocked sparse products."""
    n = len(sets)
    allv = np.concatenate([s for s in sets if len(s)])
    _, cols = np.unique(allv, return_inverse=True)
    sizes = np.array([len(s) for s in sets], dtype=np.int64)
    indptr = np.r_[0, np.cumsum(sizes)]
    x = csr_matrix((np.ones(len(cols), dtype=np.int32), cols, indptr), shape=(n, cols.max() + 1))
    xt = x.T.tocsr()
    out: set[tuple[int, int]] = set()
    for start in range(0, n, block):
        inter = (x[start : start + block] @ xt).tocoo()
        i = inter.row + start
        j = inter.col
        keep = i < j
        i, j, c = i[keep], j[keep], inter.data[keep]
        union = sizes[i] + sizes[j] - c
        ok = c >= threshold * union - 1e-9
        out.update(zip(i[ok].tolist(), j[ok].tolist(), strict=True))
    return out


def calibration(corpus: Corpus, pairs: list[tuple[int, int, bool]]) -> list[dict]:
    """Best-F thresholds of exact resemblance and containment over k-word shingles."""
    out = []
    for k in (3, 5):
        sh = corpus.shingles(k)
        res, con, lab = [], [], []
        for a, b, positive in pairs:
            sa, sb = set(sh[a].tolist()), set(sh[b].tolist())
            inter = len(sa & sb)
            res.append(inter / len(sa | sb) if sa | sb else 0.0)
            con.append(inter / min(len(sa), len(sb)) if sa and sb else 0.0)
            lab.append(positive)
        y = np.array(lab)
        for measure, values in (("resemblance", np.array(res)), ("containment", np.array(con))):
            best = (0.0, 0.0, 0.0, 0.0)
            for t in np.round(np.arange(0.02, 1.0, 0.02), 2):
                hit = values >= t
                tp = int((hit & y).sum())
                p, r, f = prf(tp, int((hit & ~y).sum()), int((~hit & y).sum()))
                if f > best[0]:
                    best = (f, float(t), p, r)
            out.append(
                {"k": k, "measure": measure, "threshold": best[1], "p": best[2], "r": best[3],
                 "f": best[0]}
            )  # fmt: skip
    return out


def run_method(name: str, texts: list[str], languages: list[str]) -> tuple[set, float, object]:
    m = get_method(name)
    started = time.perf_counter()
    m.fit(Corpus(texts, languages=languages))
    return {tuple(p) for p in m.pairs_.tolist()}, time.perf_counter() - started, m


SMOKE_SKIP = "every near-duplicate method on three labelled corpora (about 10 minutes)"
"""Why the smoke test (tests/bench) does not run this script on tiny data."""


def main(argv: list[str] | None = None) -> None:
    argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0]).parse_args(argv)
    started = time.time()
    clough = load_clough()
    c_texts = [d.text for d in clough]
    c_pairs = labelled_pairs(clough)
    story = load_story_pairs()
    t_texts, t_langs, t_index = pair_corpus(story)
    reuters = load_reuters()
    r_texts = [d.text for d in reuters]
    r_langs = ["en"] * len(r_texts)

    print(f"Reuters truth: exact Jaccard >= 0.8 over 5-word shingles of {len(r_texts)} stories")
    t0 = time.perf_counter()
    truth_corpus = Corpus(r_texts, languages=r_langs)
    truth = jaccard_truth(truth_corpus.shingles(5), 0.8)
    truth_seconds = time.perf_counter() - t0
    print(f"  {len(truth)} pairs ({truth_seconds:.1f} s)")

    rows = []
    a11_pairs: set = set()
    for name, cls in METHODS.items():
        row: dict = {"name": name, "label": cls.label, "comparison": cls.comparison}
        found, secs, _ = run_method(name, c_texts, ["en"] * len(c_texts))
        tp = fp = 0
        grade_hits: dict[str, list[int]] = {}
        for p in c_pairs:
            hit = (min(p.answer, p.source), max(p.answer, p.source)) in found
            grade_hits.setdefault(p.category, [0, 0])
            grade_hits[p.category][0] += hit
            grade_hits[p.category][1] += 1
            tp += hit and p.positive
            fp += hit and not p.positive
        n_pos = sum(p.positive for p in c_pairs)
        row["clough"] = dict(zip("prf", prf(tp, fp, n_pos - tp), strict=True))
        row["clough"]["recall_by_grade"] = {g: h / t for g, (h, t) in grade_hits.items()}

        found, secs, _ = run_method(name, t_texts, t_langs)
        tp = fp = fn = 0
        for (a, b), sp in zip(t_index, story, strict=True):
            hit = (min(a, b), max(a, b)) in found
            tp += hit and sp.same_story
            fp += hit and not sp.same_story
            fn += (not hit) and sp.same_story
        row["tgcontest"] = dict(zip("prf", prf(tp, fp, fn), strict=True))

        found, secs, _ = run_method(name, r_texts, r_langs)
        if name == "a11-decomposition":
            a11_pairs = found
        tp = len(found & truth)
        row["reuters"] = dict(zip("prf", prf(tp, len(found) - tp, len(truth) - tp), strict=True))
        row["reuters"]["pairs"] = len(found)
        row["seconds"] = secs
        row["docs_per_second"] = len(r_texts) / secs
        row["seed_002"] = SEED_002.get(name)
        rows.append(row)
        print(
            f"{name:18s} Reuters P {row['reuters']['p']:.3f} R {row['reuters']['r']:.3f} "
            f"F {row['reuters']['f']:.3f} {secs:6.1f} s | Clough F {row['clough']['f']:.3f} "
            f"| tgcontest F {row['tgcontest']['f']:.3f}",
            flush=True,
        )

    calib = {
        "clough": calibration(
            Corpus(c_texts, languages=["en"] * len(c_texts)),
            [(p.answer, p.source, p.positive) for p in c_pairs],
        ),
        "tgcontest": calibration(
            Corpus(t_texts, languages=t_langs),
            [(a, b, p.same_story) for (a, b), p in zip(t_index, story, strict=True)],
        ),
    }

    s_values = [0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 1.0]
    probability = {
        "s": s_values,
        "6x14": [match_probability(s, rows=14, bands=6) for s in s_values],
        "14x6": [match_probability(s, rows=6, bands=14) for s in s_values],
    }

    grouping = {}
    m = get_method("minhash-lsh").fit(Corpus(r_texts, languages=r_langs))
    lengths = np.array([len(t) for t in r_texts])
    for g in ("components", "cliques", "fpmax"):
        t0 = time.perf_counter()
        groups = m.groups(grouping=g, lengths=lengths)
        sizes = [len(x.members) for x in groups]
        within = sum(
            len(x.members) * (len(x.members) - 1) // 2 for x in groups
        )  # pairs implied by the groups
        implied = {
            (a, b) for x in groups for i, a in enumerate(x.members) for b in x.members[i + 1 :]
        }
        grouping[g] = {
            "groups": len(groups),
            "duplicates_left_out": sum(sizes) - len(sizes),
            "largest": max(sizes, default=0),
            "implied_pairs": within,
            "implied_precision": len(implied & truth) / len(implied) if implied else 0.0,
            "seconds": time.perf_counter() - t0,
        }

    result = {
        "machine": {"python": platform.python_version(), "cpus": 2, "node": platform.machine()},
        "reuters_truth": {
            "pairs": len(truth),
            "seconds": truth_seconds,
            "a11_agrees": a11_pairs == truth,
        },
        "methods": rows,
        "match_probability": probability,
        "calibration": calib,
        "grouping_minhash_lsh_reuters": grouping,
        "total_seconds": time.time() - started,
    }
    md = render(result)
    write_results(RESULTS / "neardup", result, md, indent=2)
    print(md)


def render(result: dict) -> str:
    lines = [
        "# Near-duplicate methods (bench/neardup.py)",
        "",
        f"Reuters truth: {result['reuters_truth']['pairs']} pairs with exact Jaccard >= 0.8 "
        f"over 5-word shingles ({result['reuters_truth']['seconds']:.1f} s, blocked sparse "
        f"products); A11's prefix-filtered join finds the same set: "
        f"{result['reuters_truth']['a11_agrees']}.",
        "",
        "Sorted by F on Reuters. R / P / F as in seed 002; docs/s = 21,578 Reuters stories "
        "over the method's wall time (tokenising included) on a shared 2-core machine.",
        "",
        "| method | Reuters R | P | F | docs/s | Clough R | P | F | cut / light / heavy R "
        "| tgcontest R | P | F | seed 002 (ROMIP) R / P / F | pairs found by |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in sorted(result["methods"], key=lambda r: -r["reuters"]["f"]):
        g = r["clough"]["recall_by_grade"]
        seed = r["seed_002"]
        lines.append(
            f"| {r['label']} (`{r['name']}`) | {r['reuters']['r']:.2f} | {r['reuters']['p']:.2f} "
            f"| {r['reuters']['f']:.2f} | {r['docs_per_second']:,.0f} | {r['clough']['r']:.2f} "
            f"| {r['clough']['p']:.2f} | {r['clough']['f']:.2f} | {g['cut']:.2f} / "
            f"{g['light']:.2f} / {g['heavy']:.2f} | {r['tgcontest']['r']:.2f} "
            f"| {r['tgcontest']['p']:.2f} | {r['tgcontest']['f']:.2f} | "
            + (f"{seed[0]:.2f} / {seed[1]:.2f} / {seed[2]:.2f}" if seed else "-")
            + f" | {r['comparison']} |"
        )
    slow = [r for r in result["methods"] if r["seconds"] > 30]
    lines += [
        "",
        "Goal: every method handles the 21,578 Reuters stories in <= 30 s on 2 cores: "
        + (
            "met by all."
            if not slow
            else "NOT met by " + ", ".join(f"{r['name']} ({r['seconds']:.0f} s)" for r in slow)
        ),
        "No method compares all pairs: each files documents under signature keys (or LSH "
        "bands, permuted tables, partitioned prefix-filtered inverted lists) and verifies "
        "only documents that share a key.",
        "",
        "## What the labelled pairs of Clough and tgcontest are",
        "",
        "Clough's answers copy *parts* of a longer source (median 5-shingle resemblance of a "
        "cut answer to its source 0.28, containment 0.61), and tgcontest pairs are "
        "independent reports of one event: both are partial or topical overlap, not the "
        "near-duplicates (resemblance >= 0.8) the defaults above are set for, hence the low "
        "recall. The best-F threshold of the exact measures on the labelled pairs:",
        "",
        "| data | k | measure | best threshold | P | R | F |",
        "|---|---|---|---|---|---|---|",
    ]
    for data, entries in result["calibration"].items():
        for c in entries:
            lines.append(
                f"| {data} | {c['k']} | {c['measure']} | {c['threshold']:.2f} | {c['p']:.2f} "
                f"| {c['r']:.2f} | {c['f']:.2f} |"
            )
    lines += [
        "",
        "## Seed 001: match probability 1 - (1 - s^r)^b",
        "",
        "| s | " + " | ".join(f"{s:.2f}" for s in result["match_probability"]["s"]) + " |",
        "|---|" + "---|" * len(result["match_probability"]["s"]),
        "| 6x14 (b = 6, r = 14) | "
        + " | ".join(f"{p:.4f}" for p in result["match_probability"]["6x14"])
        + " |",
        "| 14x6 (b = 14, r = 6) | "
        + " | ".join(f"{p:.4f}" for p in result["match_probability"]["14x6"])
        + " |",
        "",
        "(Seed 001 quotes 0.98 for 6x14 at s = 0.9; its formula gives 0.79 there and 0.98 "
        "at s = 0.95.)",
        "",
        "## Groupings of MinHash + LSH pairs on Reuters (seed 003)",
        "",
        "| grouping | groups | duplicates left out | largest | pairs implied | "
        "precision of implied pairs | seconds |",
        "|---|---|---|---|---|---|---|",
    ]
    for g, v in result["grouping_minhash_lsh_reuters"].items():
        lines.append(
            f"| {g} | {v['groups']} | {v['duplicates_left_out']} | {v['largest']} | "
            f"{v['implied_pairs']} | {v['implied_precision']:.3f} | {v['seconds']:.2f} |"
        )
    lines += ["", f"Total bench time {result['total_seconds']:.0f} s.", ""]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
