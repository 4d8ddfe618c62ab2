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


def _scripts_module() -> Any:
    """``scripts/ru_function_words.py``, which writes and documents the news words."""
    import importlib.util

    path = Path(__file__).resolve().parents[2] / "scripts" / "ru_function_words.py"
    spec = importlib.util.spec_from_file_location("ru_function_words", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def is_news_boilerplate(term: str) -> bool:
    """``term`` is a month, a weekday, a reporting verb or a relative time adverb: its
    likeliest reading in pymorphy3's dictionary is of one of the lemmas the script lists
    (read here independently of ``analyse/news_words.txt``), or one of the English words."""
    script = _scripts_module()
    if in_script(term, "CYRILLIC"):
        lemmas = {*script.MONTHS, *script.WEEKDAYS, *script.REPORTING_VERBS, *script.TIME_WORDS}
        return _norm(morph().parse(term)[0].normal_form) in {_norm(w) for w in lemmas}
    return term in set(script.EN_NEWS_WORDS)


def test_the_news_words_match_the_installed_dictionary() -> None:
    """``analyse/news_words.txt`` is what the script makes of its lists with the installed
    dictionary, and holds the issue's words in their forms."""
    from analyse.themes import STOP_WORDS, news_words

    path = Path(__file__).resolve().parents[2] / "analyse" / "news_words.txt"
    written = [w for w in path.read_text("utf-8").splitlines() if w and not w.startswith("#")]
    assert written == _scripts_module().news_words(morph())
    assert news_words() == {_norm(w) for w in written} and news_words() <= STOP_WORDS
    for word in ("сообщает", "сообщается", "рассказал", "ранее", "января", "понедельник"):
        assert word in STOP_WORDS, word
    # homonyms and topical words stay content words
    for word in ("среда", "среде", "рублей", "нефти", "матче", "weather", "march", "may"):
        assert word not in news_words(), word


@functools.cache
def _themes(name: str, stop: frozenset[str] | None) -> tuple[dict[str, list[str]], ...]:
    """The c-TF-IDF terms and the activity stems' words of every class of ``name`` with
    ``stop`` as the themes' stop words (``None``: as shipped)."""
    import analyse.themes as themes

    shipped = themes.STOP_WORDS
    themes.STOP_WORDS = shipped if stop is None else stop
    try:
        texts = groups(name)
        tfidf = cluster_themes(
            {label: [ThemeDocument(t) for t in ts] for label, ts in texts.items()},
            ThemeOptions(n_terms=N_TERMS),
        )
        labels = sorted(texts)
        docs = [t for label in labels for t in texts[label]]
        gold = np.array([i for i, label in enumerate(labels) for _ in texts[label]])
        model = ActivityClusterer(seed=1).fit(docs)
        stems = weighted_terms(model.matrix_, model.vocabulary_, gold, top=20)
        activity = {
            label: list(readable_terms([s for s, _ in stems[i]], texts[label]).values())[:N_TERMS]
            for i, label in enumerate(labels)
        }
    finally:
        themes.STOP_WORDS = shipped
    return {label: list(th.terms) for label, th in tfidf.items()}, activity


@pytest.mark.parametrize("name", ["lenta", "tgcontest-ru"])
def test_news_boilerplate_never_names_a_cluster(name: str) -> None:
    """Lenta.ru's and tgcontest's rubrics as clusters: without the news words their themes
    held сообщает, рассказали, заявил, января ...; with them none is a theme term, and every
    other term of those themes is still there (the topical words remain)."""
    from analyse.themes import STOP_WORDS, news_words

    without = _themes(name, STOP_WORDS - news_words())
    shipped = _themes(name, None)
    found_before = [t for way in without for terms in way.values() for t in terms]
    assert any(is_news_boilerplate(t) for t in found_before), "the corpus shows no boilerplate"
    for before, after in zip(without, shipped, strict=True):
        for label, terms in after.items():
            boiler = [t for t in terms if is_news_boilerplate(t)]
            assert not boiler, f"{name}/{label}: news boilerplate {boiler} in {terms}"
            kept = [t for t in before[label] if not is_news_boilerplate(t)]
            lost = [t for t in kept if t not in terms]
            assert not lost, f"{name}/{label}: topical terms {lost} lost from {terms}"
