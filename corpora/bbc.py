"""BBC News full text (Greene & Cunningham 2006): 2,225 English articles in 5 topics.

The archive ``bbc-fulltext.tar.gz`` holds ``bbc/<topic>/NNN.txt``; the topic folder
(business, entertainment, politics, sport, tech) is the class. A file's first line is
the headline, the rest its paragraphs. Files are UTF-8 except ``sport/199.txt``, which
holds one Latin-1 byte (a pound sign): a file that is not valid UTF-8 is read as
Latin-1. The archive is read in memory, never unpacked. Loading takes O(size), about
0.3 s for the 5 MB of text.

References
----------
D. Greene, P. Cunningham, "Practical solutions to the problem of diagonal dominance in
kernel document clustering", ICML 2006 (``../shared/data/bbc-fulltext/README.TXT``).

Examples
--------
>>> from corpora.bbc import load_bbc
>>> docs = load_bbc()
>>> len(docs), sorted({d.label for d in docs})
(2225, ['business', 'entertainment', 'politics', 'sport', 'tech'])
"""

from __future__ import annotations

import tarfile
from dataclasses import dataclass
from pathlib import Path

from core.shared_data import data_dir

TOPICS = ("business", "entertainment", "politics", "sport", "tech")
"""The five classes."""

N_DOCUMENTS = 2225
"""Number of articles."""


@dataclass(frozen=True, slots=True)
class BBCDocument:
    """One BBC article.

    Attributes
    ----------
    doc_id : str
        ``<topic>/NNN`` (unique).
    title : str
        The headline (first line).
    body : str
        The paragraphs after it.
    label : str
        The topic, one of :data:`TOPICS`.
    """

    doc_id: str
    title: str
    body: str
    label: str

    @property
    def text(self) -> str:
        """Headline and body, separated by a blank line."""
        return f"{self.title}\n\n{self.body}"


def _decode(raw: bytes) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:  # sport/199.txt: one Latin-1 pound sign
        return raw.decode("latin-1")


def load_bbc(path: str | Path | None = None) -> list[BBCDocument]:
    """All articles, sorted by topic and file number.

    Parameters
    ----------
    path : path-like, optional
        ``bbc-fulltext.tar.gz`` or the folder holding it; default
        ``data_dir("bbc-fulltext")``.

    Returns
    -------
    list of BBCDocument

    Raises
    ------
    DataNotFoundError
        The shared data folder is missing.
    FileNotFoundError
        No ``bbc-fulltext.tar.gz`` there.
    """
    p = Path(path) if path is not None else data_dir("bbc-fulltext")
    archive = p / "bbc-fulltext.tar.gz" if p.is_dir() else p
    if not archive.is_file():
        raise FileNotFoundError(f"{archive} not found: is it the BBC full-text corpus?")
    out: list[BBCDocument] = []
    with tarfile.open(archive, "r:gz") as tar:
        for member in tar:
            parts = member.name.split("/")
            if not member.isfile() or len(parts) != 3 or parts[1] not in TOPICS:
                continue
            if not parts[2].endswith(".txt"):
                continue
            handle = tar.extractfile(member)
            if handle is None:
                continue
            text = _decode(handle.read()).replace("\r\n", "\n").strip()
            title, _, body = text.partition("\n")
            out.append(
                BBCDocument(
                    doc_id=f"{parts[1]}/{parts[2][:-4]}",
                    title=title.strip(),
                    body=body.strip(),
                    label=parts[1],
                )
            )
    out.sort(key=lambda d: d.doc_id)
    return out
