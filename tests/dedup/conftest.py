"""Real texts for the near-duplicate tests: Reuters stories with planted copies."""

from __future__ import annotations

import re
from dataclasses import dataclass

import pytest

from corpora.reuters import load_reuters
from dedup.sentences import split_sentences
from extract.tokens import tokenize


@dataclass(frozen=True)
class Planted:
    """A corpus of unrelated stories plus planted copies.

    ``exact`` is an exact copy of story 0, ``reformatted`` a re-wrapped copy of story 1
    (whitespace only), ``edited`` a re-wrapped copy of story 2 with one article changed in
    a short sentence near its end.
    """

    texts: list[str]
    n_base: int
    exact: int
    reformatted: int
    edited: int


def _rewrap(text: str, width: int = 50) -> str:
    """Re-wrap every paragraph at ``width`` characters (paragraph breaks kept)."""
    out = []
    for para in re.split(r"\n\s*\n", text):
        lines, line = [], []
        for w in para.split():
            line.append(w)
            if sum(len(x) + 1 for x in line) > width:
                lines.append(" ".join(line))
                line = []
        lines.append(" ".join(line))
        out.append("\n".join(lines))
    return "\n\n".join(out)


def _edit(text: str) -> str | None:
    """Change one article ("the" -> "a") in a short sentence after byte 600, not one of
    the three longest sentences: a light copy-editing change."""
    sents = split_sentences(text)
    longest = set(sorted(range(len(sents)), key=lambda i: -len(sents[i].split()))[:3])
    for i in sorted(range(len(sents)), key=lambda i: len(sents[i].split())):
        s = sents[i]
        pos = text.find(s)
        if i in longest or len(s.split()) < 6 or pos < 600:
            continue
        m = re.search(r"\bthe\b", s)
        if m:
            new_s = s[: m.start()] + "a" + s[m.end() :]
            return text[:pos] + new_s + text[pos + len(s) :]
    return None


@pytest.fixture(scope="session")
def planted(shared_data) -> Planted:
    stories = [d.text for d in load_reuters(limit=600) if 180 <= len(d.text.split()) <= 500]
    # unrelated: every two chosen stories share under a third of their vocabulary
    base: list[str] = []
    vocab: list[set[str]] = []
    for text in stories:
        words = set(tokenize(text, "en", stopwords=True))
        if all(len(words & v) / len(words | v) < 0.33 for v in vocab):
            base.append(text)
            vocab.append(words)
        if len(base) == 40:
            break
    # story 2 must admit the edit: move the first story that does to position 2
    for k in range(2, len(base)):
        if _edit(base[k]) is not None:
            base[2], base[k] = base[k], base[2]
            break
    edited = _edit(base[2])
    assert edited is not None
    texts = [*base, base[0], _rewrap(base[1]), _rewrap(edited)]
    n = len(base)
    return Planted(texts, n, n, n + 1, n + 2)
