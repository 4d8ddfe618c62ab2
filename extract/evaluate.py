"""Scores of main-text extraction against gold data, and loaders of the two gold corpora.

Two protocols, each as its authors run it:

- **Scrapinghub Article Extraction Benchmark** (Zyte 2020, 181 pages, full gold text):
  per page, the multiset of word n-grams of the prediction is matched against the gold
  text's (``\\w+`` tokens); TP/FP/FN are normalised to sum to one so that long pages do
  not weigh more; precision and recall are averaged over pages and F1 is their harmonic
  mean. ``n = 1`` is the token-level score; ``n = 4`` is the benchmark's own metric.
- **trafilatura evaluation** (Barbaresi et al., 990 pages): each page has snippets that
  must be in the main text (``with``) and snippets that must not (``without``); after
  whitespace normalisation a found ``with`` snippet is a TP, a missing one an FN, a found
  ``without`` snippet an FP; counts are summed over pages.

Time O(total text length); memory O(one page).

References
----------
Zyte (Scrapinghub), *Article extraction benchmark*, 2020,
https://github.com/scrapinghub/article-extraction-benchmark (``evaluate.py``).
A. Barbaresi, *Trafilatura*, ACL 2021; the evaluation in ``tests/evaluate.py``.

Examples
--------
>>> s = aeb_counts("the cat sat on the mat", "the cat sat", n=1)
>>> [round(x, 3) for x in s]
[0.5, 0.0, 0.5]
>>> scores_from_counts([s]).f1
0.6667
>>> snippet_counts(["cat sat"], ["the   mat"], "the cat sat on the\\nmat")
(1, 1, 0, 0)
"""

from __future__ import annotations

import gzip
import json
import re
import statistics
import tarfile
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from core.shared_data import data_dir

__all__ = [
    "AebPage",
    "EvalPage",
    "Scores",
    "aeb_counts",
    "iter_trafilatura_eval",
    "load_aeb",
    "scores_from_counts",
    "snippet_counts",
    "snippet_scores",
]

_TOKEN = re.compile(r"\w+")
_SPACE = re.compile(r"\s+")


@dataclass(frozen=True)
class Scores:
    """Precision, recall and F1 (rounded to 4 digits), and how many pages were scored."""

    precision: float
    recall: float
    f1: float
    n: int


# --- Scrapinghub AEB ---------------------------------------------------------------


@dataclass(frozen=True)
class AebPage:
    """One page of the Article Extraction Benchmark: id, URL, raw HTML bytes, gold text."""

    item_id: str
    url: str
    html: bytes
    gold: str


def load_aeb(limit: int | None = None, path: str | Path | None = None) -> list[AebPage]:
    """The 181 pages of the Scrapinghub benchmark, in item-id order.

    Raises
    ------
    DataNotFoundError
        The corpus is missing.
    """
    root = Path(path) if path else data_dir("scrapinghub-aeb")
    truth = json.loads((root / "ground-truth.json").read_text("utf-8"))
    pages = []
    for item_id in sorted(truth)[:limit]:
        html = gzip.decompress((root / "html" / f"{item_id}.html.gz").read_bytes())
        entry = truth[item_id]
        pages.append(AebPage(item_id, entry.get("url", ""), html, entry.get("articleBody", "")))
    return pages


def _ngrams(text: str, n: int) -> Counter[tuple[str, ...]]:
    tokens = _TOKEN.findall(text or "")
    if n == 1:
        return Counter((t,) for t in tokens)
    return Counter(tuple(tokens[i : i + n]) for i in range(max(1, len(tokens) - n + 1)) if tokens)


def aeb_counts(gold: str, predicted: str, n: int = 1) -> tuple[float, float, float]:
    """Normalised (TP, FP, FN) of the word n-grams of one page (sum 1, or all 0)."""
    g, p = _ngrams(gold, n), _ngrams(predicted, n)
    tp = float(sum((g & p).values()))
    fp = float(sum((p - g).values()))
    fn = float(sum((g - p).values()))
    total = tp + fp + fn
    return (tp / total, fp / total, fn / total) if total else (0.0, 0.0, 0.0)


def _precision(tp: float, fp: float, fn: float) -> float:
    if fp == fn == 0:
        return 1.0
    return tp / (tp + fp) if tp + fp else 0.0


def _recall(tp: float, fp: float, fn: float) -> float:
    if fp == fn == 0:
        return 1.0
    return tp / (tp + fn) if tp + fn else 0.0


def scores_from_counts(counts: Sequence[tuple[float, float, float]]) -> Scores:
    """Mean precision and recall over pages, F1 of the means (the benchmark's way)."""
    precisions = [_precision(*c) for c in counts if c[0] + c[1] > 0]
    recalls = [_recall(*c) for c in counts if c[0] + c[2] > 0]
    p = statistics.fmean(precisions) if precisions else 0.0
    r = statistics.fmean(recalls) if recalls else 0.0
    f1 = 2 * p * r / (p + r) if p + r else 0.0
    return Scores(round(p, 4), round(r, 4), round(f1, 4), len(counts))


# --- trafilatura evaluation ----------------------------------------------------------


@dataclass(frozen=True)
class EvalPage:
    """One annotated page of trafilatura's evaluation: URL, HTML bytes, snippets."""

    url: str
    file: str
    html: bytes
    with_: tuple[str, ...]
    without: tuple[str, ...]


def iter_trafilatura_eval(
    limit: int | None = None, path: str | Path | None = None
) -> Iterator[EvalPage]:
    """The 990 annotated pages, in the order of ``evaldata.json`` (read from the archive).

    Raises
    ------
    DataNotFoundError
        The corpus is missing.
    """
    root = Path(path) if path else data_dir("trafilatura-eval")
    annotations = json.loads((root / "evaldata.json").read_text("utf-8"))
    wanted = {}
    for url, item in annotations.items():
        wanted[item["file"]] = url
    members: dict[str, bytes] = {}
    with tarfile.open(root / "trafilatura-eval-html.tar.gz", "r:gz") as tar:
        for member in tar:
            name = member.name.rsplit("/", 1)[-1]
            if member.isfile() and name in wanted and name not in members:
                fh = tar.extractfile(member)
                if fh is not None:
                    members[name] = fh.read()
    count = 0
    for url, item in annotations.items():
        if limit is not None and count >= limit:
            return
        html = members.get(item["file"])
        if html is None:
            continue
        count += 1
        yield EvalPage(url, item["file"], html, tuple(item["with"]), tuple(item["without"]))


def _norm(text: str) -> str:
    return _SPACE.sub(" ", text).strip()


def snippet_counts(
    with_: Sequence[str], without: Sequence[str], text: str | None
) -> tuple[int, int, int, int]:
    """(TP, FP, FN, TN) of one page's snippets in an extracted text (``None``: nothing)."""
    found = _norm(text) if text else ""
    tp = sum(1 for s in with_ if found and _norm(s) in found)
    fp = sum(1 for s in without if found and _norm(s) in found)
    return tp, fp, len(with_) - tp, len(without) - fp


def snippet_scores(counts: Sequence[tuple[int, int, int, int]]) -> Scores:
    """Precision, recall, F1 of summed snippet counts."""
    tp = sum(c[0] for c in counts)
    fp = sum(c[1] for c in counts)
    fn = sum(c[2] for c in counts)
    p = tp / (tp + fp) if tp + fp else 0.0
    r = tp / (tp + fn) if tp + fn else 0.0
    f1 = 2 * p * r / (p + r) if p + r else 0.0
    return Scores(round(p, 4), round(r, 4), round(f1, 4), len(counts))
