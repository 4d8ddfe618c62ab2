"""Website Classification (Kaggle): 556 real websites labelled by their kind of activity.

``website_classification.csv`` (UTF-8; columns ``website_url``, ``cleaned_website_text``,
``category``) holds one row per site: its URL, the text of its home page as the
publisher cleaned it (lower-cased, stop words removed, lemmatised, no punctuation) and
its category, one of :data:`CATEGORIES` (Travel 101, Sports 100, Streaming Services 95,
Photography 90, Social Networking and Messaging 82, News 73, Law and Government 15).
Nine URLs occur twice (547 distinct); every row is kept, as in the source, and a
document's id is its row number. All texts are English. Loading is O(size), well under
a second for the 2.7 MB of text.

References
----------
*Website Classification* data set (``website_classification.csv``, Kaggle), from the
copy in GitHub ``mayurbanale/git-demo``; ``../shared/data/website-classification/SOURCE.txt``.

Examples
--------
>>> from corpora.websites import load_websites
>>> sites = load_websites()
>>> len(sites), len({s.label for s in sites})
(556, 7)
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path

from core.shared_data import data_dir

CATEGORIES = (
    "Travel",
    "Sports",
    "Streaming Services",
    "Photography",
    "Social Networking and Messaging",
    "News",
    "Law and Government",
)
"""The categories (kinds of activity), largest first."""

N_DOCUMENTS = 556
"""Number of rows (websites)."""


@dataclass(frozen=True, slots=True)
class WebsiteDocument:
    """One website.

    Attributes
    ----------
    doc_id : int
        Row number in the CSV (0-based).
    url : str
        The site's URL.
    text : str
        The cleaned text of its home page.
    label : str
        Its category, one of :data:`CATEGORIES`.
    """

    doc_id: int
    url: str
    text: str
    label: str


def load_websites(path: str | Path | None = None) -> list[WebsiteDocument]:
    """All 556 websites in file order.

    Parameters
    ----------
    path : path-like, optional
        ``website_classification.csv`` or its folder; default
        ``data_dir("website-classification")``.

    Returns
    -------
    list of WebsiteDocument

    Raises
    ------
    DataNotFoundError
        The shared data folder is missing.
    FileNotFoundError
        No ``website_classification.csv`` there.
    ValueError
        A row has a category outside :data:`CATEGORIES`.
    """
    p = Path(path) if path is not None else data_dir("website-classification")
    csv_path = p / "website_classification.csv" if p.is_dir() else p
    if not csv_path.is_file():
        raise FileNotFoundError(f"{csv_path} not found: is it the Website Classification data?")
    out: list[WebsiteDocument] = []
    with csv_path.open(encoding="utf-8", newline="") as fh:
        for row_no, row in enumerate(csv.DictReader(fh)):
            label = row["category"].strip()
            if label not in CATEGORIES:
                raise ValueError(f"{csv_path} row {row_no + 2}: unknown category {label!r}")
            out.append(
                WebsiteDocument(
                    row_no, row["website_url"].strip(), row["cleaned_website_text"].strip(), label
                )
            )
    return out
