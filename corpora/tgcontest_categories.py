"""Telegram Data Clustering Contest 2019, Toloka gold categories: 292 ru + 153 en news texts.

``categories/{ru,en}_cat_{training,exam,honey}.tsv`` (tab-separated, UTF-8) give a news
text's URL, title, text (often only the first paragraphs) and its gold category
(``GOLDEN:res``), one of :data:`CATEGORIES`. The three files of a language are read in
the order training, exam, honey; a URL already read is skipped (one Russian page is
in two files), so every document appears once. The English files also hold a machine
translation (``INPUT:trans_title``/``INPUT:trans_text``) into Russian, kept in
``translation``. The same-story pairs of the contest are read by
:mod:`corpora.tgcontest`. Loading is O(size), well under a second.

References
----------
I. Gusev, *tgcontest* (GitHub ``IlyaGusev/tgcontest``, Apache-2.0), ``toloka/categories``,
in ``../shared/data/tgcontest-toloka-ru-en``.

Examples
--------
>>> from corpora.tgcontest_categories import load_tgcontest_categories
>>> ru = load_tgcontest_categories("ru")
>>> len(ru), ru[0].language
(291, 'ru')
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path

from core.shared_data import data_dir

CATEGORIES = (
    "society",
    "economy",
    "technology",
    "sports",
    "entertainment",
    "science",
    "other",
    "not_news",
)
"""The gold categories."""

LANGUAGES = ("ru", "en")
"""The languages of the category files."""

_PARTS = ("training", "exam", "honey")


@dataclass(frozen=True, slots=True)
class TGDocument:
    """One categorised news text.

    Attributes
    ----------
    url : str
    title : str
    body : str
    label : str
        Its gold category, one of :data:`CATEGORIES`.
    language : str
        ``ru`` or ``en``.
    part : str
        The file it came from: training, exam or honey.
    translation : str
        The machine translation of title and text into Russian (English files only).
    """

    url: str
    title: str
    body: str
    label: str
    language: str
    part: str
    translation: str = ""

    @property
    def text(self) -> str:
        """Title and text, separated by a blank line."""
        return f"{self.title}\n\n{self.body}" if self.title else self.body


def load_tgcontest_categories(
    language: str = "ru", path: str | Path | None = None
) -> list[TGDocument]:
    """The categorised news texts of one language (or both with ``"all"``).

    Parameters
    ----------
    language : {"ru", "en", "all"}, default "ru"
    path : path-like, optional
        The corpus folder; default ``data_dir("tgcontest-toloka-ru-en")``.

    Returns
    -------
    list of TGDocument
        Files in the order training, exam, honey (Russian first for ``"all"``); each URL
        once.

    Raises
    ------
    ValueError
        An unknown language, or a category outside :data:`CATEGORIES`.
    DataNotFoundError
        The shared data folder is missing.
    FileNotFoundError
        A category file is missing.
    """
    if language not in (*LANGUAGES, "all"):
        raise ValueError(f"language must be one of ru, en, all; got {language!r}")
    root = Path(path) if path is not None else data_dir("tgcontest-toloka-ru-en")
    out: list[TGDocument] = []
    for lang in LANGUAGES if language == "all" else (language,):
        seen: set[str] = set()
        for part in _PARTS:
            tsv = root / "categories" / f"{lang}_cat_{part}.tsv"
            if not tsv.is_file():
                raise FileNotFoundError(f"{tsv} not found: is it the tgcontest Toloka data?")
            with tsv.open(encoding="utf-8", newline="") as fh:
                rows = csv.DictReader(fh, delimiter="\t", quoting=csv.QUOTE_NONE)
                for row in rows:
                    url = row["INPUT:url"].strip()
                    label = row["GOLDEN:res"].strip()
                    if label not in CATEGORIES:
                        raise ValueError(f"{tsv}: unknown category {label!r} for {url}")
                    if url in seen:
                        continue
                    seen.add(url)
                    trans = "\n\n".join(
                        x for x in (row.get("INPUT:trans_title"), row.get("INPUT:trans_text")) if x
                    )
                    out.append(
                        TGDocument(
                            url=url,
                            title=(row["INPUT:title"] or "").strip(),
                            body=(row["INPUT:text"] or "").strip(),
                            label=label,
                            language=lang,
                            part=part,
                            translation=trans.strip(),
                        )
                    )
    return out
