"""The rules a theme obeys, on real corpora: whole words of the members' texts, never a stop
word of the maintained English and Russian lists, in the cluster's language, distinctive.

The gold classes of four labelled corpora stand for the clusters of one clustering (one
university × direction): Lenta.ru rubrics and tgcontest's Russian categories, BBC topics
and Reuters-21578 topics. Each class is a fixed-seed sample of its documents so that
every test takes a few seconds. Both ways of naming a cluster are checked: the
class-based TF-IDF terms of :func:`analyse.themes.cluster_themes`, and the written words
of the activity clustering's own stems (:func:`cluster.activity.weighted_terms` of a
real :class:`cluster.activity.ActivityClusterer` fit, with the gold classes as clusters)
through :func:`analyse.themes.readable_terms`, as ``webometrics analyse`` shows them.
"""

from __future__ import annotations

import functools
import random
import re
import unicodedata
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from stop_words import get_stop_words

from analyse.themes import ThemeDocument, ThemeOptions, cluster_themes, readable_terms
from cluster.activity import ActivityClusterer, weighted_terms
from corpora.activity import load_activity_corpus
from extract.tokens import stopwords_for

SEED = 23
PER_CLASS = 30
MIN_CLASS = 8
N_TERMS = 10
# corpus -> the script its theme terms are written in
CORPORA = {"lenta": "CYRILLIC", "tgcontest-ru": "CYRILLIC", "bbc": "LATIN", "reuters": "LATIN"}


def _norm(text: str) -> str:
    """Case-insensitive text as a reader compares words: NFKC, case folded, ё as е."""
    return unicodedata.normalize("NFKC", text).casefold().replace("ё", "е").replace("’", "'")


# the maintained lists, read here independently of analyse.themes
STOP = frozenset(_norm(w) for lang in ("en", "ru") for w in get_stop_words(lang))
# with the Snowball lists that the stems are cut by
LISTED = STOP | stopwords_for(None)
# pymorphy3's tags of function words: pronouns, prepositions, conjunctions, particles,
# interjections, and numerals; "Apro": a pronominal adjective (свой, такой, который)
FUNCTION_POS = frozenset({"NPRO", "PREP", "CONJ", "PRCL", "INTJ", "NUMR"})


@functools.cache
def morph() -> Any:  # pymorphy3's analyser
    import pymorphy3

    return pymorphy3.MorphAnalyzer()


def function_reading(word: str) -> Any:
    """The likeliest reading of ``word`` (pymorphy3's parse) when it is a pronoun, a
    pronominal adjective, a preposition, a conjunction, a particle, an interjection or a
    numeral; else ``None``."""
    best = morph().parse(word)[0]
    return best if best.tag.POS in FUNCTION_POS or "Apro" in best.tag else None


def is_listed_function_form(term: str) -> bool:
    """``term`` is a case or gender of a listed Russian function word: its likeliest
    reading (pymorphy3) is a pronoun, preposition, conjunction or particle one of whose
    forms is on a stop list (``своем``, a form of ``свою``)."""
    best = function_reading(term) if in_script(term, "CYRILLIC") else None
    return best is not None and any(_norm(form.word) in LISTED for form in best.lexeme)


@functools.cache
def groups(name: str) -> dict[str, list[str]]:
    """Gold class -> a fixed-seed sample of its texts (classes with few texts left out)."""
    corpus = load_activity_corpus(name)
    by_class: dict[str, list[str]] = defaultdict(list)
    for text, label in zip(corpus.texts, corpus.labels, strict=True):
        by_class[label].append(text)
    rng = random.Random(SEED)
    return {
        label: rng.sample(texts, min(PER_CLASS, len(texts)))
        for label, texts in sorted(by_class.items())
        if len(texts) >= MIN_CLASS
    }


@functools.cache
def word_sets(name: str) -> dict[str, list[frozenset[str]]]:
    """Gold class -> the set of words of each sampled text, also split at apostrophes."""
    out: dict[str, list[frozenset[str]]] = {}
    for label, texts in groups(name).items():
        out[label] = []
        for text in texts:
            toks = re.findall(r"[^\W_]+(?:'[^\W_]+)*", _norm(text))
            out[label].append(frozenset(toks) | {p for t in toks for p in t.split("'")})
    return out


def is_whole_word(term: str, texts: list[str]) -> bool:
    """``term`` occurs in one of the texts with no letter or digit right before or after."""
    pattern = re.compile(rf"(?<![^\W_]){re.escape(term)}(?![^\W_])")
    return any(pattern.search(_norm(t)) for t in texts)


def in_script(term: str, script: str) -> bool:
    """Every letter of ``term`` belongs to ``script`` (``LATIN``, ``CYRILLIC``)."""
    return all(unicodedata.name(ch).startswith(script) for ch in term if ch.isalpha())


def check_terms(name: str, themes: dict[str, list[str]]) -> None:
    """The four rules for the terms of every cluster of one corpus."""
    texts = groups(name)
    script = CORPORA[name]
    for label, terms in themes.items():
        assert len(terms) >= N_TERMS // 2, (name, label, terms)
        assert len(set(terms)) == len(terms), (name, label, terms)
        stop = [t for t in terms if t in STOP]
        assert not stop, f"{name}/{label}: stop words {stop} in {terms}"
        forms = [t for t in terms if is_listed_function_form(t)]
        assert not forms, f"{name}/{label}: forms of listed pronouns {forms} in {terms}"
        missing = [t for t in terms if not is_whole_word(t, texts[label])]
        assert not missing, f"{name}/{label}: {missing} are no whole words of the members"
        foreign = [t for t in terms if not in_script(t, script)]
        assert not foreign, f"{name}/{label}: {foreign} not in the cluster's language"
    # distinctive: no term names most of the clusters
    share: dict[str, int] = defaultdict(int)
    for terms in themes.values():
        for t in terms:
            share[t] += 1
    common = {t: n for t, n in share.items() if n > len(themes) / 2}
    assert not common, f"{name}: terms in the themes of most clusters: {common}"


@pytest.mark.parametrize("name", list(CORPORA))
def test_tfidf_themes_obey_the_rules(name: str) -> None:
    texts = groups(name)
    clusters = {label: [ThemeDocument(t) for t in ts] for label, ts in texts.items()}
    themes = cluster_themes(clusters, ThemeOptions(n_terms=N_TERMS))
    check_terms(name, {label: list(th.terms) for label, th in themes.items()})
    for label, theme in themes.items():
        for shingle in theme.shingles:  # a phrase neither begins nor ends with a stop word
            first, *_, last = shingle.split()
            assert first not in STOP and last not in STOP, (name, label, shingle)
    # a term is distinctive of its cluster: it is in a larger share of the cluster's
    # documents than of the other clusters' documents
    sets = word_sets(name)
    for label, theme in themes.items():
        rest = [ws for other, docs in sets.items() if other != label for ws in docs]
        for term in theme.terms[:5]:
            inside = sum(term in ws for ws in sets[label]) / len(sets[label])
            outside = sum(term in ws for ws in rest) / len(rest)
            assert inside > outside, (name, label, term, inside, outside)


@pytest.mark.parametrize("name", list(CORPORA))
def test_activity_stems_are_shown_as_words_that_obey_the_rules(name: str) -> None:
    texts = groups(name)
    labels = sorted(texts)
    docs = [t for label in labels for t in texts[label]]
    gold = np.array([i for i, label in enumerate(labels) for _ in texts[label]])
    model = ActivityClusterer(seed=1).fit(docs)
    stems = weighted_terms(model.matrix_, model.vocabulary_, gold, top=20)
    themes: dict[str, list[str]] = {}
    for i, label in enumerate(labels):
        written = readable_terms([s for s, _ in stems[i]], texts[label])
        assert list(written) == [s for s, _ in stems[i] if s in written]  # the stems' order
        themes[label] = list(written.values())[:N_TERMS]
    check_terms(name, themes)


def test_every_case_of_a_listed_pronoun_is_a_stop_word() -> None:
    """The stop lists hold a few forms of each Russian pronoun; the themes' list holds
    them all, and no content word with them."""
    from analyse.themes import STOP_WORDS

    for form in ("своем", "своими", "которыми", "таких", "самых", "нашей", "каждому", "шестью"):
        assert form in STOP_WORDS, form
        assert is_listed_function_form(form), form
    for word in ("миром", "рублей", "университета", "семьи", "жизни", "другом", "university"):
        assert word not in STOP_WORDS, word


def test_the_russian_function_words_match_the_installed_dictionary() -> None:
    """``analyse/ru_function_words.txt`` (written by ``scripts/ru_function_words.py``)
    holds only forms whose likeliest reading is a function word, and the function words
    of the stop lists in every case; run the script again after a new dictionary."""
    from analyse.themes import russian_function_words

    path = Path(__file__).resolve().parents[2] / "analyse" / "ru_function_words.txt"
    lines = path.read_text(encoding="utf-8").splitlines()
    written = [w for w in lines if w and not w.startswith("#")]
    words = russian_function_words()  # as the themes compare them: normalised
    assert len(written) > 1000 and words == {_norm(w) for w in written}
    wrong = sorted(w for w in written if function_reading(w) is None)
    assert not wrong, f"not a function word in pymorphy3's dictionary: {wrong[:20]}"
    missing = sorted(
        form.word
        for word in LISTED
        if in_script(word, "CYRILLIC") and (best := function_reading(word)) is not None
        for form in best.lexeme
        if function_reading(form.word) is not None and _norm(form.word) not in words
    )
    assert not missing, f"forms of listed function words not in the file: {missing[:20]}"


def test_function_word_stems_are_dropped() -> None:
    """The issue's themes: a stem standing for a function word never becomes a term."""
    economy = groups("lenta")["economy"]
    written = readable_terms(["сво", "котор", "год", "такж", "рубл", "доллар"], economy)
    assert set(written) == {"рубл", "доллар"}, written
    assert set(written.values()) <= {"рублей", "рубля", "рубль", "доллара", "долларов"}
    business = groups("bbc")["business"]
    written = readable_terms(["said", "mr", "take", "market", "firm"], business)
    assert set(written) == {"market", "firm"}, written
