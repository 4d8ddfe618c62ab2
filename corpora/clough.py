"""Clough & Stevenson's corpus of plagiarised short answers: graded near-duplicates.

Five source texts (``orig_task{a..e}.txt``, Wikipedia articles on computer science) and
95 answers ``g{group}p{person}_task{a..e}.txt`` written by 19 students, each graded in
``file_information.csv`` as ``cut`` (copy-paste), ``light`` (light revision), ``heavy``
(heavy revision) or ``non`` (written independently). The labelled pairs are (answer,
source of the same task): positive for cut / light / heavy, negative for non.

The files mix encodings (UTF-8 and Windows-1252); each is decoded as UTF-8 when it is
valid UTF-8, else as Windows-1252. Loading is O(size) (0.4 MB).

References
----------
P. Clough, M. Stevenson, "Developing a corpus of plagiarised short answers",
*Language Resources and Evaluation* 45(1), 2011.

Examples
--------
>>> from corpora.clough import load_clough, labelled_pairs
>>> docs = load_clough()
>>> len(docs), sum(d.category == "orig" for d in docs)
(100, 5)
>>> pairs = labelled_pairs(docs)
>>> len(pairs), sum(p.positive for p in pairs)
(95, 57)
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path

from core.shared_data import data_dir

CATEGORIES = ("cut", "light", "heavy", "non", "orig")
"""The grades of ``file_information.csv``; ``orig`` marks the five source texts."""

POSITIVE = frozenset({"cut", "light", "heavy"})
"""Grades that make an (answer, source) pair a near-duplicate."""


@dataclass(frozen=True, slots=True)
class CloughDocument:
    """One text of the corpus.

    Attributes
    ----------
    file : str
        File name, e.g. ``g0pA_taska.txt``.
    task : str
        ``a`` .. ``e``: which source text the answer is about.
    category : str
        One of :data:`CATEGORIES`.
    text : str
    """

    file: str
    task: str
    category: str
    text: str


@dataclass(frozen=True, slots=True)
class LabelledPair:
    """An answer and the source text of its task.

    Attributes
    ----------
    answer, source : int
        Indices into the list returned by :func:`load_clough`.
    category : str
        The answer's grade (cut, light, heavy or non).
    positive : bool
        Whether the grade makes the pair a near-duplicate (:data:`POSITIVE`).
    """

    answer: int
    source: int
    category: str
    positive: bool


def _read_text(path: Path) -> str:
    raw = path.read_bytes()
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw.decode("cp1252", errors="replace")


def load_clough(path: str | Path | None = None) -> list[CloughDocument]:
    """The 100 texts in the order of ``file_information.csv`` (answers), then the sources.

    Parameters
    ----------
    path : path-like, optional
        The corpus folder; default ``data_dir("clough-plagiarism-short-answers")``.

    Returns
    -------
    list of CloughDocument

    Raises
    ------
    DataNotFoundError
        The shared data folder is missing.
    FileNotFoundError
        ``file_information.csv`` or a file it names is missing.
    """
    folder = Path(path) if path is not None else data_dir("clough-plagiarism-short-answers")
    info = folder / "file_information.csv"
    if not info.is_file():
        raise FileNotFoundError(f"{info} not found: is {folder} the Clough & Stevenson corpus?")
    docs: list[CloughDocument] = []
    with info.open(encoding="utf-8", newline="") as fh:
        for row in csv.DictReader(fh):
            category = row["Category"].strip()
            docs.append(
                CloughDocument(
                    file=row["File"].strip(),
                    task=row["Task"].strip(),
                    category=category,
                    text=_read_text(folder / row["File"].strip()),
                )
            )
    present = {d.file for d in docs}
    for task in "abcde":
        name = f"orig_task{task}.txt"
        if name not in present:
            docs.append(CloughDocument(name, task, "orig", _read_text(folder / name)))
    return docs


def labelled_pairs(docs: list[CloughDocument]) -> list[LabelledPair]:
    """Every (answer, source of the same task) pair with its grade.

    Parameters
    ----------
    docs : list of CloughDocument
        As returned by :func:`load_clough`.

    Returns
    -------
    list of LabelledPair
        One per answer (95): 57 positive (cut, light, heavy) and 38 negative (non).
    """
    source = {d.task: i for i, d in enumerate(docs) if d.category == "orig"}
    return [
        LabelledPair(i, source[d.task], d.category, d.category in POSITIVE)
        for i, d in enumerate(docs)
        if d.category != "orig"
    ]
