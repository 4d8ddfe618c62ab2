"""Write ``analyse/ru_function_words.txt`` and ``analyse/news_words.txt``: the Russian
function words and the news boilerplate (Russian and English) that themes never show.

**Function words.** A stop list holds a few forms of each Russian pronoun (``свою``,
``своей``), and the language inflects them in six cases, three genders and two numbers;
prepositions, conjunctions and particles beyond the list (``благодаря``, ``например``)
came out as theme terms too. This script reads every word form of pymorphy3's OpenCorpora
dictionary (5.1 million forms, about a minute), keeps those with a reading as a pronoun
(``NPRO``), a pronominal adjective (``Apro``: свой, такой, который, каждый), a
preposition, a conjunction, a particle, an interjection or a numeral (``шестью``), and of
those the forms whose *likeliest* reading is one (so ``мир`` or ``дело`` never enter
through a rare reading). The result, about 1,600 forms as the dictionary writes them
(``нём``; :mod:`analyse.themes` reads them normalised, ``ё`` as ``е``), is data: the
dictionary is not needed at run time.

**News boilerplate.** A news text says who reported what and when: ``сообщает``,
``рассказал``, ``ранее``, ``января``, ``said``, ``Monday``. Those words name no
activity, yet in a cluster of news sites they are the most frequent and came out as its
theme (``сообщает, ранее, служба, области``). The rule: every form (pymorphy3's lexeme:
tenses, persons, participles, gerunds, cases) of the lemmas listed below, each kept only
when its likeliest reading is of that lemma (so a homonym's form stays a content word):

* :data:`MONTHS` and :data:`WEEKDAYS`, the calendar's names, but ``среда`` (also
  "environment", a topic in its own right);
* :data:`REPORTING_VERBS`: the verbs that attribute speech (verba dicendi) news agencies
  use, both aspects and the reflexive ``сообщаться`` (``сообщается``);
* :data:`TIME_WORDS`: the adverbs that date a report relative to its day (``ранее``,
  ``накануне``, ``вчера``);

and in English, written out (English inflects little): :data:`EN_NEWS_WORDS`, the
months (not ``may``, ``march`` and ``august``, ordinary words too), the weekdays, the
forms of the reporting verbs and the words of attribution (``according``,
``spokesman``).

Run: ``.venv/bin/python scripts/ru_function_words.py`` (after a new pymorphy3-dicts-ru;
``--news`` writes only the news words, in a second);
``tests/analyse/test_theme_rules.py`` checks both files against the installed
dictionary and the lists here.
"""

from __future__ import annotations

import sys
from pathlib import Path

ANALYSE = Path(__file__).resolve().parents[1] / "analyse"
OUT = ANALYSE / "ru_function_words.txt"
NEWS_OUT = ANALYSE / "news_words.txt"
FUNCTION_POS = frozenset({"NPRO", "PREP", "CONJ", "PRCL", "INTJ", "NUMR"})
"""pymorphy3's parts of speech of function words, and numerals (``шестью``: a count names
no activity); ``Apro`` (a grammeme) adds the pronominal adjectives."""

MONTHS = [
    "январь",
    "февраль",
    "март",
    "апрель",
    "май",
    "июнь",
    "июль",
    "август",
    "сентябрь",
    "октябрь",
    "ноябрь",
    "декабрь",
]
WEEKDAYS = ["понедельник", "вторник", "четверг", "пятница", "суббота", "воскресенье"]
"""The weekdays but ``среда`` (Wednesday, and "environment": a topical word)."""
REPORTING_VERBS = [
    "сообщить",
    "сообщать",
    "сообщаться",
    "рассказать",
    "рассказывать",
    "заявить",
    "заявлять",
    "отметить",
    "отмечать",
    "подчеркнуть",
    "подчёркивать",
    "пояснить",
    "пояснять",
    "уточнить",
    "уточнять",
    "добавить",
    "добавлять",
    "сказать",
    "говорить",
    "признаться",
    "признаваться",
]
"""Verbs of attribution: who said it (both aspects; ``сообщаться``: ``сообщается``)."""
TIME_WORDS = ["ранее", "накануне", "вчера", "сегодня", "завтра", "позавчера", "послезавтра"]
"""Adverbs that date a report relative to its own day."""
EN_NEWS_WORDS = [
    "january",
    "february",
    "april",
    "june",
    "july",
    "september",
    "october",
    "november",
    "december",
    "monday",
    "tuesday",
    "wednesday",
    "thursday",
    "friday",
    "saturday",
    "sunday",
    "say",
    "says",
    "said",
    "saying",
    "tell",
    "tells",
    "told",
    "telling",
    "added",
    "adds",
    "adding",
    "stated",
    "announced",
    "reportedly",
    "explained",
    "noted",
    "claimed",
    "insisted",
    "confirmed",
    "according",
    "spokesman",
    "spokeswoman",
    "spokesperson",
    "yesterday",
    "today",
    "tomorrow",
]


def is_function(tag: object) -> bool:
    """A pymorphy3 tag of a function word."""
    return getattr(tag, "POS", None) in FUNCTION_POS or "Apro" in tag  # type: ignore[operator]


def lexeme_forms(morph: object, lemma: str) -> set[str]:
    """Every form of ``lemma`` (its reading whose normal form it is) whose likeliest
    reading is of ``lemma`` too."""
    readings = [p for p in morph.parse(lemma) if p.normal_form == lemma]  # type: ignore[attr-defined]
    if not readings:
        raise SystemExit(f"{lemma!r} is no lemma of the installed dictionary")
    forms = {f.word for f in readings[0].lexeme}
    return {w for w in forms if morph.parse(w)[0].normal_form == lemma}  # type: ignore[attr-defined]


def news_words(morph: object) -> list[str]:
    """The Russian forms of :data:`MONTHS`, :data:`WEEKDAYS`, :data:`REPORTING_VERBS` and
    :data:`TIME_WORDS`, then :data:`EN_NEWS_WORDS`, each sorted."""
    lemmas = [*MONTHS, *WEEKDAYS, *REPORTING_VERBS, *TIME_WORDS]
    russian = sorted({w for lemma in lemmas for w in lexeme_forms(morph, lemma)})
    return [*russian, *sorted(set(EN_NEWS_WORDS))]


def write_news_words(morph: object) -> int:
    """Write :data:`NEWS_OUT`; returns the forms written."""
    meta = morph.dictionary.meta  # type: ignore[attr-defined]
    words = news_words(morph)
    header = (
        "# News boilerplate: words that say who reported what and when, never theme terms.\n"
        "# Russian: every form whose likeliest reading in pymorphy3's OpenCorpora dictionary\n"
        "# is of a month, a weekday (not среда), a reporting verb or a relative time\n"
        "# adverb; English: the forms listed. Generated by scripts/ru_function_words.py\n"
        f"# from pymorphy3-dicts-ru (OpenCorpora {meta.get('source_version', '?')}, "
        f"revision {meta.get('source_revision', '?')}).\n"
    )
    NEWS_OUT.write_text(header + "\n".join(words) + "\n", encoding="utf-8")
    return len(words)


def main(argv: list[str] | None = None) -> int:
    import pymorphy3
    from tqdm import tqdm

    morph = pymorphy3.MorphAnalyzer()
    n_news = write_news_words(morph)
    print(f"{n_news} news words written to {NEWS_OUT}")
    if "--news" in (sys.argv[1:] if argv is None else argv):
        return 0
    candidates = {
        word
        for word, tag, _normal, _para, _idx in tqdm(
            morph.dictionary.iter_known_words(),
            desc="forms",
            unit=" forms",
            total=morph.dictionary.meta.get("words_dawg_length"),
        )
        if is_function(tag)
    }
    kept = sorted(w for w in candidates if is_function(morph.parse(w)[0].tag))
    meta = morph.dictionary.meta
    header = (
        "# Russian function words: every form whose likeliest reading in pymorphy3's\n"
        "# OpenCorpora dictionary is a pronoun, a pronominal adjective, a preposition, a\n"
        "# conjunction, a particle, an interjection or a numeral, as it writes them (with ё).\n"
        "# Generated by "
        "scripts/ru_function_words.py from pymorphy3-dicts-ru (OpenCorpora "
        f"{meta.get('source_version', '?')}, revision {meta.get('source_revision', '?')}).\n"
    )
    OUT.write_text(header + "\n".join(kept) + "\n", encoding="utf-8")
    print(f"{len(kept)} forms of {len(candidates)} candidates written to {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
