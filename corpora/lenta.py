"""Lenta.ru articles by rubric (the AsryanArmen/News collection): 773 Russian news texts.

``train_news.csv`` (UTF-8; columns ``index``, ``content``, ``topic``) holds the article
body as shown on the page, paragraphs on separate lines, with some page boilerplate
left in (photo credits, headlines of related articles); ``topic`` is the Lenta.ru
rubric code 0-8 (:data:`RUBRICS`). ``index`` is only unique within a rubric; a
document's id here is its row number. 30 rows repeat the text of another row, as in the
source; they are kept. No licence: internal tests only. Loading is O(size), well under
a second.

References
----------
A. Asryan, *News* (GitHub ``AsryanArmen/News``, 2024), ``README.md`` (rubric codes), in
``../shared/data/lenta-rubrics-asryan``.

Examples
--------
>>> from corpora.lenta import load_lenta
>>> docs = load_lenta()
>>> len(docs), len({d.label for d in docs})
(773, 9)
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path

from core.shared_data import data_dir

RUBRICS = {
    0: "society",  # Россия / Общество
    1: "economy",  # Экономика
    2: "security",  # Силовые структуры
    3: "former-ussr",  # Бывший СССР
    4: "sport",  # Спорт
    5: "self-care",  # Забота о себе
    6: "construction",  # Строительство / Среда обитания
    7: "travel",  # Путешествия
    8: "science",  # Наука и техника
}
"""Rubric code -> the class name used here."""


@dataclass(frozen=True, slots=True)
class LentaDocument:
    """One Lenta.ru article.

    Attributes
    ----------
    doc_id : int
        Row number in ``train_news.csv`` (0-based).
    text : str
        The article text.
    label : str
        The rubric, a value of :data:`RUBRICS`.
    """

    doc_id: int
    text: str
    label: str


def load_lenta(path: str | Path | None = None) -> list[LentaDocument]:
    """All 773 articles in file order.

    Parameters
    ----------
    path : path-like, optional
        ``train_news.csv`` or its folder; default ``data_dir("lenta-rubrics-asryan")``.

    Returns
    -------
    list of LentaDocument

    Raises
    ------
    DataNotFoundError
        The shared data folder is missing.
    FileNotFoundError
        No ``train_news.csv`` there.
    ValueError
        A row has a rubric code outside 0-8.
    """
    p = Path(path) if path is not None else data_dir("lenta-rubrics-asryan")
    csv_path = p / "train_news.csv" if p.is_dir() else p
    if not csv_path.is_file():
        raise FileNotFoundError(f"{csv_path} not found: is it the Lenta.ru rubrics corpus?")
    out: list[LentaDocument] = []
    with csv_path.open(encoding="utf-8", newline="") as fh:
        for row_no, row in enumerate(csv.DictReader(fh)):
            code = int(row["topic"])
            if code not in RUBRICS:
                raise ValueError(f"{csv_path} row {row_no + 2}: unknown rubric code {code}")
            out.append(LentaDocument(row_no, row["content"].strip(), RUBRICS[code]))
    return out
