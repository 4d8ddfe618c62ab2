"""Cluster themes on real texts: the BBC's five topics and Lenta.ru rubrics give the terms
a reader recognises; shingles, domains and titles behave as documented."""

from __future__ import annotations

from typing import Any

import pytest

from analyse.themes import (
    ThemeDocument,
    ThemeOptions,
    cluster_themes,
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
