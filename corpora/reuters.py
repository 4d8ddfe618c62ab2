"""Reuters-21578, Distribution 1.0 (Lewis 1997): the corpus of the paper's Table 1.

The 22 SGML files ``reut2-000.sgm`` .. ``reut2-021.sgm`` (latin-1) hold 21,578
``<REUTERS>`` elements. A story's text is its ``<TITLE>`` and ``<BODY>``; stories
of ``TYPE="UNPROC"`` have no such elements and their whole ``<TEXT>`` is taken. Its
topics are the ``<D>`` codes of ``<TOPICS>`` in file order; the *class* used to score a
clustering is the first topic, and a story with no topic has no class (``None``), so
the scores leave it out (see :func:`cluster.evaluate.score_clustering`).

Parsing is one regular-expression pass per file, O(size of the corpus); all 21,578
stories (about 27 MB of SGML) load in well under a second.

References
----------
D. D. Lewis, *Reuters-21578 text categorization test collection, Distribution 1.0*,
README.txt, 1997 (in ``../shared/data/reuters21578``).

Examples
--------
>>> from corpora.reuters import load_reuters
>>> docs = load_reuters(limit=3)
>>> [d.newid for d in docs]
[1, 2, 3]
>>> docs[0].title, docs[0].label
('BAHIA COCOA REVIEW', 'cocoa')
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from core.shared_data import data_dir

N_DOCUMENTS = 21578
"""Number of stories in the collection."""

_REUTERS = re.compile(r"<REUTERS(?P<attrs>[^>]*)>(?P<body>.*?)</REUTERS>", re.S)
_ATTR = re.compile(r'(\w+)="([^"]*)"')
_TOPICS = re.compile(r"<TOPICS>(.*?)</TOPICS>", re.S)
_D = re.compile(r"<D>(.*?)</D>", re.S)
_TITLE = re.compile(r"<TITLE>(.*?)</TITLE>", re.S)
_BODY = re.compile(r"<BODY>(.*?)</BODY>", re.S)
_TEXT = re.compile(r"<TEXT[^>]*>(.*?)</TEXT>", re.S)
_TAG = re.compile(r"<[^>]+>")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


@dataclass(frozen=True, slots=True)
class ReutersDocument:
    """One Reuters story.

    Attributes
    ----------
    newid : int
        The ``NEWID`` attribute (1 .. 21578, the file order).
    title : str
        The headline ('' when the story has none).
    body : str
        The body text (the whole ``<TEXT>`` of unprocessed stories).
    topics : tuple of str
        The ``TOPICS`` codes in file order (may be empty).
    lewis_split : str
        ``TRAIN``, ``TEST`` or ``NOT-USED``.
    """

    newid: int
    title: str
    body: str
    topics: tuple[str, ...]
    lewis_split: str

    @property
    def text(self) -> str:
        """Title and body, separated by a blank line (either may be empty)."""
        return "\n\n".join(part for part in (self.title, self.body) if part)

    @property
    def label(self) -> str | None:
        """The class used for scoring: the first topic, or ``None`` without topics."""
        return self.topics[0] if self.topics else None


def _clean(fragment: str) -> str:
    text = html.unescape(_TAG.sub(" ", fragment))
    return _CONTROL.sub(" ", text).strip()


def _parse_file(path: Path) -> Iterator[ReutersDocument]:
    raw = path.read_bytes().decode("latin-1")
    for m in _REUTERS.finditer(raw):
        attrs = dict(_ATTR.findall(m.group("attrs")))
        body_sgml = m.group("body")
        topics_m = _TOPICS.search(body_sgml)
        topics = tuple(t.strip() for t in _D.findall(topics_m.group(1))) if topics_m else ()
        text_m = _TEXT.search(body_sgml)
        text_sgml = text_m.group(1) if text_m else ""
        title_m = _TITLE.search(text_sgml)
        body_m = _BODY.search(text_sgml)
        title = _clean(title_m.group(1)) if title_m else ""
        if body_m:
            body = _clean(body_m.group(1))
        elif title_m:  # BRIEF stories: a title and no body
            body = ""
        else:  # UNPROC stories: the whole text
            body = _clean(text_sgml)
        yield ReutersDocument(
            newid=int(attrs["NEWID"]),
            title=title,
            body=body,
            topics=topics,
            lewis_split=attrs.get("LEWISSPLIT", ""),
        )


def iter_reuters(path: str | Path | None = None) -> Iterator[ReutersDocument]:
    """Yield the stories in file order (``reut2-000.sgm`` first).

    Parameters
    ----------
    path : path-like, optional
        The folder of the ``.sgm`` files; default ``data_dir("reuters21578")``.

    Yields
    ------
    ReutersDocument

    Raises
    ------
    DataNotFoundError
        The shared data folder is missing.
    FileNotFoundError
        The folder holds no ``reut2-*.sgm`` file.
    """
    folder = Path(path) if path is not None else data_dir("reuters21578")
    files = sorted(folder.glob("reut2-*.sgm"))
    if not files:
        raise FileNotFoundError(f"no reut2-*.sgm files in {folder}: is it Reuters-21578?")
    for f in files:
        yield from _parse_file(f)


def load_reuters(limit: int | None = None, path: str | Path | None = None) -> list[ReutersDocument]:
    """The first ``limit`` stories in file order (all 21,578 when ``None``).

    Parameters
    ----------
    limit : int, optional
        How many stories to return, from the start of the collection.
    path : path-like, optional
        The folder of the ``.sgm`` files; default ``data_dir("reuters21578")``.

    Returns
    -------
    list of ReutersDocument

    Raises
    ------
    ValueError
        ``limit`` is negative.
    """
    if limit is not None and limit < 0:
        raise ValueError(f"limit must be >= 0 or None, got {limit}")
    out: list[ReutersDocument] = []
    for doc in iter_reuters(path):
        if limit is not None and len(out) >= limit:
            break
        out.append(doc)
    return out
