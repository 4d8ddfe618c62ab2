"""Sentence splitting for the sentence-signature methods (A4, A5, A12 of seed 002).

Seed 002 signs "the longest sentences" without saying what a sentence is. The rule here:

* a paragraph break (a blank line) always ends a sentence; single line breaks do not
  (Reuters and many extracted pages wrap lines inside sentences);
* ``.``, ``!``, ``?``, ``…`` (optionally followed by closing quotes or brackets) end a
  sentence when whitespace follows and the next character is not a lower-case letter;
* a full stop does not end a sentence after a single letter (``U.S.``, ``J. Smith``) or
  after a common abbreviation (``Mr``, ``Dr``, ``Inc``, ``Corp``, ``Jan`` ..., ``г``,
  ``т.д`` ...).

A sentence is then represented by its word tokens (:func:`extract.tokens.tokenize`, case
folded, no stemming, stop words kept), so formatting and punctuation changes do not
change its signature; its length is its number of words. Time O(n) in the text length.

Examples
--------
>>> split_sentences("The U.S. said so. Mr. Smith agreed!\\n\\nNew paragraph here")
['The U.S. said so.', 'Mr. Smith agreed!', 'New paragraph here']
>>> split_sentences("")
[]
"""

from __future__ import annotations

import re

_PARAGRAPH = re.compile(r"\n\s*\n")
_END = re.compile(r"[.!?…]+[\"'»”’)\]]*\s+")
_LAST_WORD = re.compile(r"([^\W\d_]+)$")
_ABBREVIATIONS = frozenset(
    [
        "mr",
        "mrs",
        "ms",
        "dr",
        "prof",
        "sr",
        "jr",
        "st",
        "vs",
        "etc",
        "inc",
        "ltd",
        "co",
        "corp",
        "dept",
        "univ",
        "no",
        "nos",
        "fig",
        "est",
        "approx",
        "jan",
        "feb",
        "mar",
        "apr",
        "jun",
        "jul",
        "aug",
        "sep",
        "sept",
        "oct",
        "nov",
        "dec",
        "gen",
        "col",
        "lt",
        "sgt",
        "rep",
        "sen",
        "gov",
        "pres",
        "г",
        "гг",
        "т",
        "д",
        "др",
        "пр",
        "им",
        "ул",
        "стр",
        "рис",
        "см",
        "тыс",
        "млн",
        "млрд",
        "руб",
        "проф",
        "акад",
    ]
)


def _ends_sentence(paragraph: str, match: re.Match[str]) -> bool:
    end = match.end()
    if end < len(paragraph) and paragraph[end].islower():
        return False
    if paragraph[match.start()] != ".":
        return True
    word = _LAST_WORD.search(paragraph, max(0, match.start() - 40), match.start())
    if word is None:
        return True
    w = word.group(1)
    return not (len(w) == 1 or w.casefold() in _ABBREVIATIONS)


def split_sentences(text: str) -> list[str]:
    """The sentences of a text, stripped, empty ones dropped.

    Parameters
    ----------
    text : str

    Returns
    -------
    list of str
    """
    out: list[str] = []
    for paragraph in _PARAGRAPH.split(text):
        start = 0
        for m in _END.finditer(paragraph):
            if _ends_sentence(paragraph, m):
                piece = paragraph[start : m.end()].strip()
                if piece:
                    out.append(" ".join(piece.split()))
                start = m.end()
        piece = paragraph[start:].strip()
        if piece:
            out.append(" ".join(piece.split()))
    return out


def sentence_tokens(text: str, language: str | None = None) -> list[list[str]]:
    """Each sentence of ``text`` as its word tokens (sentences without words dropped)."""
    from extract.tokens import tokenize

    out = []
    for s in split_sentences(text):
        toks = tokenize(s, language)
        if toks:
            out.append(toks)
    return out
