"""Normalisation, tokens, stop words and stemming on real English and Russian text."""

from __future__ import annotations

from corpora.reuters import load_reuters
from corpora.tgcontest import load_story_pairs, pair_corpus
from extract.tokens import normalize, stopwords_for, tokenize, words


def test_normalize_unicode_forms_case_and_yo():
    assert normalize("ЁЛКА Ёж ёж") == "елка еж еж"
    assert normalize("ｆｕｌｌｗｉｄｔｈ ﬁ ²") == "fullwidth fi 2"  # NFKC
    assert normalize("STRASSE Straße") == "strasse strasse"  # casefold, not lower
    assert normalize("it’s soft\u00adhyphen\u200b") == "it's softhyphen"


def test_words_are_unicode_letters_and_digits():
    assert words("Москва-2015: МГУ_им. Ломоносова, l'école") == [
        "москва",
        "2015",
        "мгу",
        "им",
        "ломоносова",
        "l'école",
    ]
    assert words("   \n\t ") == []
    assert words("日本語 テキスト") == ["日本語", "テキスト"]


def test_stopwords_and_stemming_per_language():
    ru = "Студенты и преподаватели университетов России обсуждали это"
    assert tokenize(ru, "ru", stem=True, stopwords=True) == [
        "студент",
        "преподавател",
        "университет",
        "росс",
        "обсужда",
    ]
    en = "The students of the universities were discussing it"
    assert tokenize(en, "en", stem=True, stopwords=True) == ["student", "universiti", "discuss"]
    # language unknown: both stop lists, each word stemmed by its own script
    mixed = tokenize(ru + " " + en, None, stem=True, stopwords=True)
    assert mixed == [
        "студент",
        "преподавател",
        "университет",
        "росс",
        "обсужда",
        "student",
        "universiti",
        "discuss",
    ]


def test_stop_lists_are_normalised():
    ru = stopwords_for("ru")
    assert "ее" in ru and "её" not in ru and "еще" in ru
    assert "don't" in stopwords_for("en")
    assert stopwords_for(None) == stopwords_for("en") | stopwords_for("ru")


def test_real_russian_news_tokenise_to_cyrillic_stems():
    texts, languages, _ = pair_corpus(load_story_pairs())
    ru_texts = [t for t, lang in zip(texts, languages, strict=True) if lang == "ru"]
    assert len(ru_texts) > 100
    unstemmed = [tok for t in ru_texts for tok in tokenize(t, "ru", stopwords=True)]
    assert not set(unstemmed) & stopwords_for("ru")
    all_tokens = [tok for t in ru_texts for tok in tokenize(t, "ru", stem=True, stopwords=True)]
    assert len(all_tokens) > 10_000
    assert "ё" not in "".join(all_tokens)
    assert "университет" in all_tokens  # университета, университете ... -> one stem
    cyrillic = sum(any("а" <= c <= "я" for c in tok) for tok in all_tokens)
    assert cyrillic / len(all_tokens) > 0.8


def test_reuters_tokens_lower_case_and_without_punctuation():
    docs = load_reuters(limit=300)
    for doc in docs:
        for tok in tokenize(doc.text):
            assert tok == tok.lower()
            assert all(c.isalnum() or c == "'" for c in tok)
