"""Cluster themes on real texts: the BBC's five topics and Lenta.ru rubrics give the terms
a reader recognises; shingles, domains and titles behave as documented."""

from __future__ import annotations

from typing import Any

import pytest

from analyse.themes import (
    ThemeCache,
    ThemeDocument,
    ThemeOptions,
    cluster_themes,
    count_document,
    counted_themes,
    distinctive_terms,
    frequent_shingles,
    largest_domains,
    words,
)

# words a reader expects among a topic's ten terms (at least four must be there)
BBC_EXPECTED = {
    "business": {
        "growth",
        "economy",
        "bank",
        "sales",
        "firm",
        "market",
        "prices",
        "economic",
        "company",
        "shares",
        "oil",
        "profits",
        "financial",
        "euros",
    },
    "entertainment": {
        "film",
        "best",
        "show",
        "awards",
        "actor",
        "star",
        "award",
        "music",
        "comedy",
        "album",
        "band",
        "festival",
        "oscar",
        "prize",
        "book",
        "novel",
        "ballet",
    },
    "politics": {
        "labour",
        "blair",
        "government",
        "party",
        "minister",
        "election",
        "brown",
        "howard",
        "tory",
        "tories",
        "lord",
        "mps",
        "secretary",
        "law",
    },
    # the first 40 sport articles are athletics
    "sport": {
        "olympic",
        "race",
        "athens",
        "athletics",
        "indoor",
        "champion",
        "record",
        "world",
        "game",
        "players",
        "win",
        "final",
        "match",
        "medal",
        "marathon",
    },
    "tech": {
        "technology",
        "users",
        "digital",
        "software",
        "internet",
        "computer",
        "mobile",
        "broadband",
        "phone",
        "net",
        "games",
        "microsoft",
        "security",
        "mail",
    },
}


def test_bbc_topics_give_recognisable_terms(corpora: dict[str, Any]) -> None:
    clusters = {
        topic: [ThemeDocument(body, (title,), f"{topic}.example") for title, body in items]
        for topic, items in corpora["bbc"].items()
    }
    themes = cluster_themes(clusters, ThemeOptions(n_terms=10))
    assert set(themes) == set(BBC_EXPECTED)
    for topic, theme in themes.items():
        hits = set(theme.terms) & BBC_EXPECTED[topic]
        assert len(hits) >= 4, (topic, theme.terms)
        assert theme.size == 40 and theme.domains == (f"{topic}.example",)
        assert len(theme.titles) == 5 and len(set(theme.titles)) == 5
        # the most frequent shingles are met in several articles
        assert theme.shingle_counts[0] >= 3
    assert "prime minister" in themes["politics"].shingles
    # a term distinctive of one topic is not distinctive of all of them
    assert not set.intersection(*(set(t.terms[:5]) for t in themes.values()))


def test_lenta_rubrics_give_russian_terms(corpora: dict[str, Any]) -> None:
    groups = {r: [text for _t, text in items] for r, items in corpora["lenta"].items()}
    terms = distinctive_terms(groups, top=15)
    sport = {t for t, _ in terms["4"]}  # Спорт
    assert sport & {
        "матча",
        "матче",
        "чемпионата",
        "спортсмены",
        "тренер",
        "мок",
        "команды",
        "турнира",
        "турнире",
        "олимпийских",
        "клуба",
        "сборной",
    }
    science = {t for t, _ in terms["8"]}  # Наука и техника
    assert science & {
        "ученые",
        "apple",
        "iphone",
        "исследования",
        "специалисты",
        "данные",
        "журнале",
        "ученых",
        "смартфон",
        "смартфоны",
    }
    economy = {t for t, _ in terms["1"]}  # Экономика
    assert economy & {
        "процента",
        "процентов",
        "долларов",
        "рубля",
        "рублей",
        "миллиарда",
        "компании",
        "цены",
        "банк",
    }
    for rubric, ranked in terms.items():
        assert all("ё" not in t and t == t.lower() for t, _ in ranked), rubric


def test_shingles_never_start_or_end_with_stop_words() -> None:
    texts = [
        "The University of Oxford announced results. The University of Oxford said so.",
        "University of Oxford staff; the university of oxford press",
    ]
    got = frequent_shingles(texts, top=5)
    assert got[0] == ("university of oxford", 2)
    assert frequent_shingles(texts, top=0) == []  # [analyse] theme_shingles = 0: none
    none = cluster_themes({0: [ThemeDocument(t) for t in texts]}, ThemeOptions(n_shingles=0))
    assert none[0].shingles == () and none[0].terms
    for shingle, _n in got:
        first, last = shingle.split()[0], shingle.split()[-1]
        assert first not in {"the", "of", "and"} and last not in {"the", "of", "and"}


def test_degenerate_input() -> None:
    assert cluster_themes({}) == {}
    themes = cluster_themes({0: [ThemeDocument("")], 1: [ThemeDocument("Solo text about cats")]})
    assert themes[0].terms == () and themes[0].label() == ""
    # "text" is a stop word of the maintained English list: never a theme term
    assert set(themes[1].terms) == {"solo", "cats"}
    assert largest_domains([("", 3), ("a.org", 1)]) == [("a.org", 1)]
    assert words("") == []
    with pytest.raises(ValueError, match="shingle_sizes"):
        ThemeOptions(shingle_sizes=(0,))
    with pytest.raises(ValueError, match="n_terms"):
        ThemeOptions(n_terms=-1)


def _grouped(labels: list[Any]) -> dict[Any, list[int]]:
    """Document indices by label, in document order."""
    groups: dict[Any, list[int]] = {}
    for i, label in enumerate(labels):
        groups.setdefault(label, []).append(i)
    return groups


def test_documents_counted_once_theme_every_partition_as_their_texts(
    corpora: dict[str, Any],
) -> None:
    """The levels of a clustering are partitions of the same documents: counted once and
    themed partition after partition through one cache, each partition's themes are those
    its texts give afresh (English and Russian clusters side by side, singletons, merges,
    a partition met again)."""
    docs = [
        ThemeDocument(body, (title,), f"{topic}.example")
        for topic, items in corpora["bbc"].items()
        for title, body in items[:8]
    ] + [
        ThemeDocument(text, (title,), f"rubric{rubric}.ru")
        for rubric, items in sorted(corpora["lenta"].items())[:2]
        for title, text in items[:6]
    ]
    topics = [d.domain for d in docs]
    partitions = {
        "singletons": list(range(len(docs))),
        "pairs": [i // 2 for i in range(len(docs))],
        "topics": topics,
        "merged topics": [sorted(set(topics)).index(t) // 2 for t in topics],
        "one cluster": [0] * len(docs),
        "topics again": topics,
    }
    options = ThemeOptions(n_terms=8, n_shingles=6)
    counted = [count_document(d, options) for d in docs]
    cache = ThemeCache(options)
    for name, labels in partitions.items():
        groups = _grouped(labels)
        fresh = cluster_themes({k: [docs[i] for i in ids] for k, ids in groups.items()}, options)
        again = counted_themes(
            {k: [counted[i] for i in ids] for k, ids in groups.items()}, options, cache=cache
        )
        assert again == fresh, name
        assert all(t.terms for t in again.values()), name  # the comparison is of themes
    # the Russian rubrics are named in Russian, beside the English topics
    assert any(ch in fresh["rubric1.ru"].terms[0] for ch in "абвгдеийклмнопрстуя")
    with pytest.raises(ValueError, match="count it with the same ThemeOptions"):
        counted_themes({0: counted[:2]}, ThemeOptions(max_words=100))
    with pytest.raises(ValueError, match="ThemeCache"):
        counted_themes({0: counted[:2]}, ThemeOptions(), cache=ThemeCache(options))


def test_shingles_of_the_terms_script_beyond_the_first_ranks() -> None:
    """Shingles are ranked a window at a time (the best 8 · top + 16); when the window
    holds only shingles in another script than the terms', the rest are ranked too."""
    nato = "alpha bravo charlie delta echo foxtrot golf hotel india juliett kilo lima mike "
    nato += "november oscar papa quebec romeo sierra tango uniform victor whiskey xray yankee zulu"
    words = nato.split()
    english = [" ".join(words[i : i + 8]) for i in range(len(words) - 7)] * 2  # each twice
    russian = "Учёные открыли новую звезду. Новую звезду назвали красиво."
    # more Latin shingles met twice than the window holds, all above the Russian ones
    assert len(frequent_shingles(english, top=100)) > 8 * 2 + 16
    got = frequent_shingles([*english, russian], top=2, in_script="cyrillic")
    assert got == frequent_shingles([russian], top=2)
    assert got[0] == ("новую звезду", 1)
    assert all(not s.isascii() for s, _ in got)
