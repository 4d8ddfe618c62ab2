"""The fast term path gives what the old one gave, term for term and in the same order.

The reference is the implementation before the chunked counter and the batch language
identifier (issue 21, item 1), kept here: ``str.translate`` normalisation, the regular
expression over every text, a memo of each word's term and a Counter of the words' terms,
and py3langid's own ``classify`` one text at a time (:func:`extract.language.
identify_language`). Real texts of five corpora of the shared data (English, Russian and
both mixed), plus the edge cases of the chunking (apostrophes, underscores, non-ASCII
punctuation between words, invisible characters, lone surrogates) and of the identifier
(no letters, upper case, texts past ``max_chars``, several batches).
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter

import pytest

from corpora.activity import load_activity_corpus
from extract.language import identify_language
from extract.terms import (
    MIN_TERM_LENGTH,
    BatchLanguageIdentifier,
    TermCounter,
    count_terms,
)
from extract.tokens import STEMMER_LANGUAGES, chunks, normalize, stem_words, stopwords_for

# ---------------------------------------------------------------- the old implementation

_OLD_TRANSLATE = str.maketrans(
    {
        "ё": "е",
        "\u2019": "'",
        "\u02bc": "'",
        "\u00ad": None,
        "\u200b": None,
        "\u200c": None,
        "\u200d": None,
        "\u2060": None,
        "\ufeff": None,
    }
)
_OLD_WORD = re.compile(r"[^\W_]+(?:'[^\W_]+)*")


def old_normalize(text: str) -> str:
    if text.isascii():
        return text.lower()
    return unicodedata.normalize("NFKC", text).casefold().translate(_OLD_TRANSLATE)


class OldTermCounter:
    """extract.terms.TermCounter before issue 21 (the words' terms counted one by one)."""

    def __init__(self, language: str | None) -> None:
        self.language = language
        self.stop = stopwords_for(language)
        self.memo: dict[str, str | None] = {}

    def counts(self, text: str) -> dict[str, int]:
        toks = _OLD_WORD.findall(old_normalize(text))
        missing = set(toks).difference(self.memo)
        keep = [
            w
            for w in missing
            if len(w) >= MIN_TERM_LENGTH and not w.isdigit() and w not in self.stop
        ]
        self.memo.update(dict.fromkeys(missing))
        if keep:
            self.memo.update(zip(keep, stem_words(keep, self.language), strict=True))
        return dict(Counter(t for t in map(self.memo.__getitem__, toks) if t is not None))


def old_count_texts(texts: list[str], languages: list[str | None] | None) -> list[dict]:
    """cluster.activity._count_texts before issue 21 (one identify_language per text)."""
    langs = list(languages) if languages is not None else [None] * len(texts)
    for d, code in enumerate(langs):
        if code is None:
            found = identify_language(texts[d])[0]
            langs[d] = found if found in STEMMER_LANGUAGES else None
    counters: dict[str | None, OldTermCounter] = {}
    return [
        counters.setdefault(code, OldTermCounter(code)).counts(text)
        for text, code in zip(texts, langs, strict=True)
    ]


def same(new: list[dict[str, int]], old: list[dict[str, int]]) -> bool:
    """Equal counts and equal order of terms (first occurrence) in every document."""
    return len(new) == len(old) and all(
        list(a.items()) == list(b.items()) for a, b in zip(new, old, strict=True)
    )


# ---------------------------------------------------------------- real texts

CORPORA = {  # name: documents drawn (class-stratified, seed 1)
    "bbc": 250,
    "reuters": 400,
    "lenta": 300,
    "tgcontest-mixed": 300,
    "websites": 200,
}

EDGE_TEXTS = [
    "",
    "   ",
    "2015 1999",
    "Don't stop: 'quoted' words, ''doubled'' and a''b, rock'n'roll's o'brien'",
    "snake_case_words and __dunder__ names_2",
    "слово…слово «ёлка» — “curly” ‘single’ don’t l’école слово—слово «в»кавычках",
    "degrees°between words¤and�replacement×signs",
    "bullet•between words‐hyphen‒dash ♥heart ¬not ®mark",
    "co\u00adop zero\u200bwidth\u2060joined\ufeff ＦＵＬＬ ﬁne Straße",
    "lone \udc80 surrogate \ud800x and emoji 😀 end",
    "NBSP\u00a0between thin\u2009space line\u2028separator tab\tend",
    "ÉCOLE NORMALE SUPÉRIEURE ÉTUDIANTS",
    "УНИВЕРСИТЕТ ИМЕНИ ЛОМОНОСОВА",
    "١٢٣ arabic digits and ² superscript ½ half Ⅻ roman",
    "a b c d e f ab cd",
    "x" * 5000,
    "Mixed English text and русский текст вместе in one document 2024",
    "no-break\u00a0space… №\u0303 5 \u00a0\u0301x thin\u2009space non\u2011breaking \u202fnarrow",
]


@pytest.fixture(scope="module")
def corpora() -> dict[str, tuple[list[str], list[str | None]]]:
    out = {}
    for name, limit in CORPORA.items():
        corpus = load_activity_corpus(name, limit=limit)
        out[name] = (corpus.texts, corpus.languages)
    return out


def test_normalize_is_the_old_translation(corpora) -> None:
    texts = [t for texts, _ in corpora.values() for t in texts] + EDGE_TEXTS
    assert [normalize(t) for t in texts] == [old_normalize(t) for t in texts]


@pytest.mark.parametrize("name", list(CORPORA))
def test_term_counts_equal_the_old_counter_with_given_languages(corpora, name) -> None:
    texts, languages = corpora[name]
    new, old = count_terms(texts, languages), old_count_texts(texts, languages)
    assert same(new, old)
    assert sum(map(len, new)) > len(texts)  # real terms, not empty dicts


@pytest.mark.parametrize("language", ["en", "ru", None, "de"])
def test_term_counter_equals_the_old_counter_on_every_corpus(corpora, language) -> None:
    texts = [t for texts, _ in corpora.values() for t in texts] + EDGE_TEXTS
    new, old = TermCounter(language=language), OldTermCounter(language)
    assert same([new.counts(t) for t in texts], [old.counts(t) for t in texts])


def test_edge_texts_and_a_small_memo() -> None:
    """A memo emptied every few chunks, and texts whose chunks hold several words."""
    new = TermCounter(language=None, max_memo=7)
    old = OldTermCounter(None)
    assert same([new.counts(t) for t in EDGE_TEXTS * 2], [old.counts(t) for t in EDGE_TEXTS * 2])
    several = "слово•слово и слово"  # a chunk of two words: counted word by word
    assert len(chunks(several)) == 3
    assert new.counts(several) == {"слов": 3} == old.counts(several)


def test_language_identifier_gives_py3langid_codes(corpora) -> None:
    texts = [t for texts, _ in corpora.values() for t in texts] + EDGE_TEXTS
    texts += [t[:n] for t in texts[:300:7] for n in (3, 12, 40)]  # short, ambiguous texts
    expected = [identify_language(t)[0] for t in texts]
    assert BatchLanguageIdentifier().identify(texts) == expected
    # batches of a few texts, and a shorter reading
    small = BatchLanguageIdentifier(batch_bytes=5_000, max_chars=300)
    assert small.identify(texts[:400]) == [identify_language(t, 300)[0] for t in texts[:400]]
    assert {"en", "ru"} <= set(expected)


def test_count_terms_with_detected_languages_equals_the_old_path(corpora) -> None:
    texts = [t for name in ("tgcontest-mixed", "lenta", "bbc") for t in corpora[name][0]]
    texts += EDGE_TEXTS
    assert same(count_terms(texts), old_count_texts(texts, None))
    some = [None if d % 3 else "en" for d in range(len(texts))]
    assert same(count_terms(texts, some), old_count_texts(texts, some))


def test_count_terms_fails_early_on_bad_languages() -> None:
    with pytest.raises(ValueError, match="languages has 1 entries for 2 documents"):
        count_terms(["a", "b"], ["en"])
    with pytest.raises(ValueError, match="unknown language 'xx'"):
        count_terms(["a"], ["xx"])
    with pytest.raises(ValueError, match="batch_bytes=0"):
        BatchLanguageIdentifier(batch_bytes=0)
