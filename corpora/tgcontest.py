"""Telegram Data Clustering Contest 2019, Toloka gold sets: same-story news pairs.

``clustering_pairs/{ru_train,ru_exam,ru_honey,en_train}_pool.tsv`` hold pairs of news
texts labelled ``OK`` (the two describe the same event, one story) or ``BAD``; 215
Russian pairs (99 OK) and 35 English pairs (18 OK). Same story is a looser relation
than a textual near-duplicate: syndicated copies are among the OK pairs, but so are
independent reports of one event. The TSV files are read by their header names
(the English file orders its columns differently); fields are not quoted.

Loading is O(size) (about 2 MB).

References
----------
I. Gusev, *tgcontest* (Telegram Data Clustering Contest 2019), Toloka annotation pools,
``toloka/clustering_pairs`` (Apache-2.0).

Examples
--------
>>> from corpora.tgcontest import load_story_pairs, pair_corpus
>>> pairs = load_story_pairs()
>>> len(pairs), sum(p.same_story for p in pairs)
(250, 117)
>>> texts, languages, index = pair_corpus(pairs)
>>> len(texts) == len(languages) and all(0 <= i < len(texts) for p in index for i in p)
True
"""

from __future__ import annotations

import csv
import sys
from dataclasses import dataclass
from pathlib import Path

from core.shared_data import data_dir

POOLS = ("ru_train", "ru_exam", "ru_honey", "en_train")
"""The pair files, ``clustering_pairs/<pool>_pool.tsv``."""


@dataclass(frozen=True, slots=True)
class StoryPair:
    """Two news texts and whether they tell the same story.

    Attributes
    ----------
    pool : str
        One of :data:`POOLS`.
    language : str
        ``ru`` or ``en``.
    first_url, second_url, first_title, second_title, first_text, second_text : str
    same_story : bool
        ``GOLDEN:quality == "OK"``.
    """

    pool: str
    language: str
    first_url: str
    second_url: str
    first_title: str
    second_title: str
    first_text: str
    second_text: str
    same_story: bool


def load_story_pairs(
    path: str | Path | None = None, pools: tuple[str, ...] = POOLS
) -> list[StoryPair]:
    """The labelled pairs of the given pools, in file order.

    Parameters
    ----------
    path : path-like, optional
        The corpus folder; default ``data_dir("tgcontest-toloka-ru-en")``.
    pools : tuple of str
        Which pools to read (:data:`POOLS`).

    Returns
    -------
    list of StoryPair

    Raises
    ------
    DataNotFoundError
        The shared data folder is missing.
    ValueError
        An unknown pool, or a pair whose label is neither OK nor BAD.
    """
    folder = Path(path) if path is not None else data_dir("tgcontest-toloka-ru-en")
    csv.field_size_limit(sys.maxsize)
    out: list[StoryPair] = []
    for pool in pools:
        if pool not in POOLS:
            raise ValueError(f"unknown pool {pool!r}; the pools are {', '.join(POOLS)}")
        tsv = folder / "clustering_pairs" / f"{pool}_pool.tsv"
        with tsv.open(encoding="utf-8", newline="") as fh:
            for row in csv.DictReader(fh, delimiter="\t", quoting=csv.QUOTE_NONE):
                label = row["GOLDEN:quality"].strip()
                if label not in ("OK", "BAD"):
                    raise ValueError(f"{tsv}: label {label!r} is neither OK nor BAD")
                out.append(
                    StoryPair(
                        pool=pool,
                        language=pool.split("_", 1)[0],
                        first_url=row["INPUT:first_url"],
                        second_url=row["INPUT:second_url"],
                        first_title=row["INPUT:first_title"],
                        second_title=row["INPUT:second_title"],
                        first_text=row["INPUT:first_text"],
                        second_text=row["INPUT:second_text"],
                        same_story=label == "OK",
                    )
                )
    return out


def pair_corpus(
    pairs: list[StoryPair],
) -> tuple[list[str], list[str], list[tuple[int, int]]]:
    """The distinct documents of the pairs and each pair's two indices.

    A document is identified by its URL; its text is its title and its text, separated
    by a blank line.

    Returns
    -------
    texts : list of str
    languages : list of str
    index : list of (int, int)
        Per pair, the indices of its first and second document in ``texts``.
    """
    position: dict[str, int] = {}
    texts: list[str] = []
    languages: list[str] = []
    index: list[tuple[int, int]] = []

    def add(url: str, title: str, text: str, language: str) -> int:
        if url not in position:
            position[url] = len(texts)
            texts.append(f"{title}\n\n{text}" if title else text)
            languages.append(language)
        return position[url]

    for p in pairs:
        a = add(p.first_url, p.first_title, p.first_text, p.language)
        b = add(p.second_url, p.second_title, p.second_text, p.language)
        index.append((a, b))
    return texts, languages, index
