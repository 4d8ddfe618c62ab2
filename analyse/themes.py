"""Cluster themes: most frequent word shingles, class-based TF-IDF terms, domains, titles.

The paper named the theme of each cluster by "the most frequently occurring sets of
words (shingles) present in the cluster" (seed 000_d819228b9213e10a.txt, before its
Table 3). Stored shingles are 64-bit hashes, which cannot be read back, so the themes
are computed again from the documents' texts.

A theme is made of **whole words** (:func:`whole_words`: a run of letters as written,
inner apostrophes kept, an English possessive ``'s`` dropped, a token with digits left
out), **never a stop word** (:data:`STOP_WORDS`: the English and Russian lists of the
maintained ``stop-words`` package, the Snowball lists of :mod:`extract.tokens`, a few
words of page furniture, the Russian function words in every case and gender, and the
news boilerplate of :func:`news_words`: months, weekdays, reporting verbs),
at least three letters long, and **in the language of the cluster**: its script
(Cyrillic, Latin ...) is the one most of the cluster's words are written in, and a term
in another script is left out (a Russian cluster is named in Russian words even when a
member quotes English).

* **frequent shingles** (:func:`frequent_shingles`): word n-grams (``n`` in
  ``ThemeOptions.shingle_sizes``, 2 and 3 words by default) ranked by the number of the
  cluster's documents that contain them (document frequency, so that one long page
  repeating a phrase does not win). An n-gram that begins or ends with a stop word is
  not a theme ("of the university"); ties go to the shingle met more often, then to
  the longer one, then to the one met first; an n-gram contained in a longer kept one
  with the same counts is dropped ("new york" under "new york times"). Shingles
  never cross punctuation (a sentence or list item ends the phrase).
* **distinctive terms** (:func:`distinctive_terms`): class-based TF-IDF (c-TF-IDF,
  Grootendorst 2022) against the other clusters of the same clustering (one
  university × direction): the documents of a cluster are one class; the weight of
  term ``t`` in class ``c`` is ``tf(t, c) / |c| * log(1 + A / f(t))`` with ``|c|`` the
  number of words of the class, ``A`` the average number of words per class and
  ``f(t)`` the frequency of ``t`` over all classes. A term is kept only where it is
  over-represented (a larger share of the class's words than of all words, or met in
  no other class) and only when it is over-represented in at most half of the classes:
  a word common to most clusters names none. Terms met in at least two documents of a
  cluster (that has two or more) rank before the others.
* **written terms** (:func:`readable_terms`): where the clustering weighed its own
  Snowball stems (the activity clustering), each stem is shown as its most frequent
  whole word in the cluster's texts; a stem whose word is a stop word, that no word of
  the texts has, or that is written in another script is left out.
* **largest domains**: the cluster's registered domains by number of pages.
* **typical titles**: the distinct titles whose words weigh most in the cluster's
  c-TF-IDF terms (per square root of the title's length), ties by frequency.

Complexity: for W words in all documents (each document capped at
``ThemeOptions.max_words``) and C clusters, time O(W · max(shingle_sizes) + V · C)
and memory O(V · C) with V distinct words; everything is plain Python counting.

References
----------
V. N. Korelin, I. S. Blekanov, S. L. Sergeev (2015), seed 000_d819228b9213e10a.txt.
M. Grootendorst, "BERTopic: Neural topic modeling with a class-based TF-IDF procedure",
arXiv:2203.05794 (2022).
A. Savand, ``python-stop-words`` (PyPI ``stop-words``): stop-word lists of many languages,
BSD-3-Clause licence.

Examples
--------
>>> docs = {
...     "sport": [ThemeDocument("The team won the cup final, the team played well."),
...               ThemeDocument("A cup final: the team scored twice.")],
...     "money": [ThemeDocument("Shares fell as the bank raised interest rates."),
...               ThemeDocument("The bank said interest rates and shares will rise.")],
... }
>>> themes = cluster_themes(docs, ThemeOptions(n_terms=3))
>>> themes["sport"].terms
('team', 'cup', 'final')
>>> themes["money"].shingles[:2]
('raised interest rates', 'rates and shares')
>>> whole_words("Ёлки-палки, O'Brien's MP3 player 42!")
['елки', 'палки', "o'brien", 'player']
"""

from __future__ import annotations

import heapq
import math
import re
import unicodedata
from collections import Counter
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import chain
from pathlib import Path
from typing import TypeVar

from stop_words import get_stop_words

from extract.tokens import STOPWORD_LANGUAGES, normalize, stem_words, stopwords_for
from extract.tokens import words as tokens

__all__ = [
    "STOP_WORDS",
    "CountedDocument",
    "Theme",
    "ThemeCache",
    "ThemeDocument",
    "ThemeOptions",
    "cluster_themes",
    "count_document",
    "counted_themes",
    "distinctive_terms",
    "frequent_shingles",
    "largest_domains",
    "news_words",
    "readable_terms",
    "script",
    "typical_titles",
    "whole_words",
    "words",
]

_WORD = re.compile(r"[^\W\d_]{2,}")
_BREAK = re.compile(r"[.,;:!?()\[\]{}<>\"«»“”„|/\\•·–—\n\r\t]+|\s-\s")
_LETTERS = re.compile(r"[^\W\d_]+(?:'[^\W\d_]+)*")

Label = TypeVar("Label", bound=Hashable)
"""The label of a group of texts (a cluster id, a category ...)."""

STOP_LANGUAGES = STOPWORD_LANGUAGES
"""Languages whose function words are never theme terms (those with a stop list)."""

# words of page furniture that name no activity (the stop lists hold the function words)
_PAGE_FURNITURE = """cookie cookies javascript browser copyright login logout password menu skip
    navigation privacy rss subscribe куки пароль войти вход регистрация меню навигация"""


def russian_function_words() -> frozenset[str]:
    """The Russian function words of ``analyse/ru_function_words.txt``, normalised.

    Every form whose likeliest reading in pymorphy3's OpenCorpora dictionary is a
    pronoun, a pronominal adjective, a preposition, a conjunction, a particle, an
    interjection or a numeral (about 1,600; written by ``scripts/ru_function_words.py``):
    the stop lists hold a few forms of each pronoun (``свой``, ``своей``) and Russian
    inflects them in six cases, so ``своем``, ``самых`` and ``благодаря`` came out as
    theme terms.

    Examples
    --------
    >>> words = russian_function_words()
    >>> sorted({"своем", "самых", "благодаря", "например", "мир", "другом"} & words)
    ['благодаря', 'например', 'самых', 'своем']
    """
    text = Path(__file__).with_name("ru_function_words.txt").read_text("utf-8")
    return frozenset(
        normalize(line) for line in text.splitlines() if line and not line.startswith("#")
    )


def news_words() -> frozenset[str]:
    """The news boilerplate of ``analyse/news_words.txt``, normalised: words that say who
    reported what and when, never what a site does.

    Russian: every form of the months, the weekdays (not ``среда``, also
    "environment"), the reporting verbs (``сообщить``, ``рассказать``, ``заявить`` ...,
    both aspects) and the adverbs dating a report (``ранее``, ``накануне``) whose
    likeliest reading in pymorphy3's dictionary is of that word; English: the months (not
    may, march, august), weekdays and forms of the reporting verbs (``said``, ``told``,
    ``according``). Written by ``scripts/ru_function_words.py``, which documents the
    lists; in a cluster of news sites these were its most frequent words and became its
    theme (``сообщает, ранее, служба``).

    Examples
    --------
    >>> words = news_words()
    >>> sorted({"сообщает", "рассказал", "ранее", "января", "said", "monday", "рублей"} & words)
    ['monday', 'said', 'ранее', 'рассказал', 'сообщает', 'января']
    """
    text = Path(__file__).with_name("news_words.txt").read_text("utf-8")
    return frozenset(
        normalize(line) for line in text.splitlines() if line and not line.startswith("#")
    )


STOP_WORDS: frozenset[str] = (
    frozenset(
        normalize(w)
        for w in (
            *(w for lang in STOP_LANGUAGES for w in get_stop_words(lang)),
            *stopwords_for(None),
            *_PAGE_FURNITURE.split(),
        )
    )
    | russian_function_words()
    | news_words()
)
"""Words never used as theme terms, normalised (:func:`extract.tokens.normalize`): the
English and Russian lists of the ``stop-words`` package, the Snowball lists, a few
words of page furniture, the Russian function words in every case and gender
(:func:`russian_function_words`) and the news boilerplate (:func:`news_words`)."""


def words(text: str) -> list[str]:
    """The runs of letters of ``text``: NFKC, case-folded, ``ё`` → ``е``, ≥ 2 long.

    For keyword matching (:mod:`analyse.categories`); theme terms are :func:`whole_words`.

    Examples
    --------
    >>> words("Московский ГОСУДАРСТВЕННЫЙ университет, 1755")
    ['московский', 'государственный', 'университет']
    """
    norm = unicodedata.normalize("NFKC", text).casefold().replace("ё", "е")
    return _WORD.findall(norm)


def whole_words(text: str) -> list[str]:
    """The whole words of ``text`` that a theme may show, normalised, in text order.

    A word is a token of :func:`extract.tokens.words` (letters and digits, inner
    apostrophes) made of letters only, at least two of them; an English possessive
    ``'s`` is dropped (``university's`` → ``university``). A token with a digit
    (``mp3``, ``covid19``) is no word here, so no part of it becomes a term.

    Examples
    --------
    >>> whole_words("The University’s 2 MP3s; Ёж-программа")
    ['the', 'university', 'еж', 'программа']
    """
    out = []
    for tok in tokens(text):
        if tok.endswith("'s"):
            tok = tok[:-2]
        if len(tok) >= 2 and _LETTERS.fullmatch(tok):
            out.append(tok)
    return out


def script(word: str) -> str:
    """The script a word is written in, from its first letter: ``latin``, ``cyrillic`` ...

    Examples
    --------
    >>> script("université"), script("университет"), script("ελλάδα")
    ('latin', 'cyrillic', 'greek')
    """
    first = word[:1]
    if not first or first.isascii():
        return "latin"
    return unicodedata.name(first, "unknown").split(" ", 1)[0].lower()


def _main_script(counts: Mapping[str, int], scripts: Mapping[str, str] | None = None) -> str | None:
    """The script most of the (counted) words are written in; ``None`` without words.
    ``scripts``: the words' scripts when known (:func:`script` of each)."""
    by_script: Counter[str] = Counter()
    for word, n in counts.items():
        by_script[scripts[word] if scripts is not None else script(word)] += n
    return by_script.most_common(1)[0][0] if by_script else None


@dataclass(frozen=True)
class ThemeOptions:
    """How many terms, shingles, domains and titles a theme keeps, and how words are read.

    Parameters
    ----------
    n_terms : int
        Distinctive (c-TF-IDF) terms per cluster.
    n_shingles : int
        Most frequent shingles per cluster.
    shingle_sizes : tuple of int
        Word counts of the shingles considered (the paper's shingles were k-word sets).
    n_domains : int
        Largest domains per cluster.
    n_titles : int
        Typical titles per cluster.
    max_words : int
        Words read from each document (its beginning), bounding time and memory.
    """

    n_terms: int = 10
    n_shingles: int = 10
    shingle_sizes: tuple[int, ...] = (2, 3)
    n_domains: int = 5
    n_titles: int = 5
    max_words: int = 5000

    def __post_init__(self) -> None:
        for name in ("n_terms", "n_shingles", "n_domains", "n_titles"):
            if getattr(self, name) < 0:
                raise ValueError(f"ThemeOptions.{name} must be >= 0, got {getattr(self, name)}")
        if not self.shingle_sizes or any(k < 1 or k > 10 for k in self.shingle_sizes):
            raise ValueError(
                f"ThemeOptions.shingle_sizes must hold word counts 1..10, got {self.shingle_sizes}"
            )
        if self.max_words < 1:
            raise ValueError(f"ThemeOptions.max_words must be >= 1, got {self.max_words}")


@dataclass(frozen=True)
class ThemeDocument:
    """One clustered document as themes see it: its text, titles, domain and page count.

    A domain document (the union of a domain's pages) passes the pages' texts joined,
    their titles, the domain and the number of pages.
    """

    text: str
    titles: tuple[str, ...] = ()
    domain: str | None = None
    pages: int = 1


@dataclass(frozen=True)
class Theme:
    """The theme of one cluster.

    Attributes
    ----------
    terms, term_weights : tuple
        Distinctive terms, best first, with their c-TF-IDF weights.
    shingles, shingle_counts : tuple
        Most frequent shingles with the number of the cluster's documents containing each.
    domains, domain_pages : tuple
        Largest domains with their page counts.
    titles : tuple of str
        Typical titles.
    size : int
        Number of documents of the cluster.
    """

    terms: tuple[str, ...] = ()
    term_weights: tuple[float, ...] = ()
    shingles: tuple[str, ...] = ()
    shingle_counts: tuple[int, ...] = ()
    domains: tuple[str, ...] = ()
    domain_pages: tuple[int, ...] = ()
    titles: tuple[str, ...] = ()
    size: int = 0

    def label(self, n: int = 3) -> str:
        """A short name: the first ``n`` terms, else the first shingle, else ``""``.

        Examples
        --------
        >>> Theme(terms=("film", "award", "actor", "oscar")).label()
        'film, award, actor'
        """
        if self.terms:
            return ", ".join(self.terms[:n])
        return self.shingles[0] if self.shingles else ""


def _content(word: str) -> bool:
    """A word that may be a theme term: no stop word, at least three letters."""
    return word not in STOP_WORDS and len(word) >= 3


def frequent_shingles(
    texts: Iterable[str],
    *,
    sizes: Sequence[int] = (2, 3),
    top: int = 10,
    max_words: int = 5000,
    in_script: str | None = None,
) -> list[tuple[str, int]]:
    """The most frequent word shingles of a group of texts, by document frequency.

    Parameters
    ----------
    texts : iterable of str
        The documents of one cluster.
    sizes : sequence of int
        Numbers of words per shingle.
    top : int
        How many to return.
    max_words : int
        Words read from each text.
    in_script : str, optional
        Keep only shingles whose first and last words are in this script
        (:func:`script`); ``None``: any.

    Returns
    -------
    list of (str, int)
        ``(shingle, number of texts containing it)``, most frequent first; ties by the
        number of occurrences, then the longer shingle, then the first met. A shingle
        inside a longer one with the same counts is left out.

    Examples
    --------
    >>> frequent_shingles(["Oxford University Press reports", "the Oxford University Press said",
    ...                    "Oxford University, a college"], top=3)
    [('oxford university', 3), ('oxford university press', 2), ('university press reports', 1)]
    """
    counts = (_shingle_counts(text, sizes, max_words) for text in texts)
    return _ranked_shingles(counts, top=top, in_script=in_script)


def _shingle_counts(text: str, sizes: Sequence[int], max_words: int) -> dict[str, int]:
    """The candidate shingles of one text with their occurrences, in the order first met
    (segment by segment, each size in turn): no stop word at either end, no more stop
    words than others inside; any script."""
    counts: dict[str, int] = {}
    budget = max_words
    for segment in _BREAK.split(text):
        if budget <= 0:
            break
        toks = whole_words(segment)[:budget]
        budget -= len(toks)
        for k in sizes:
            for i in range(len(toks) - k + 1):
                gram = toks[i : i + k]
                if not (_content(gram[0]) and _content(gram[-1])):
                    continue
                if k > 2 and sum(w in STOP_WORDS for w in gram) * 2 > k:
                    continue
                key = " ".join(gram)
                counts[key] = counts.get(key, 0) + 1
    return counts


def _ranked_shingles(
    documents: Iterable[Mapping[str, int]], *, top: int, in_script: str | None
) -> list[tuple[str, int]]:
    """:func:`frequent_shingles` from the shingle counts of each document
    (:func:`_shingle_counts`).

    The candidates are ranked a window at a time: the best ``8 · top + 16`` of them
    (a partial sort), and all of them only when the window holds too few kept ones.
    ``top`` 0 (``[analyse] theme_shingles = 0``) asks for none.
    """
    if top <= 0:
        return []
    df: Counter[str] = Counter()
    tf: Counter[str] = Counter()  # its keys in the order first met
    for counts in documents:
        tf.update(counts)
        df.update(counts.keys())
    first = {g: i for i, g in enumerate(tf)}

    def rank(g: str) -> tuple[int, int, int, int]:
        return (-df[g], -tf[g], -g.count(" "), first[g])

    def kept_of(ranked: Iterable[str]) -> list[str]:
        kept: list[str] = []
        for shingle in ranked:
            if in_script and not script(shingle) == script(_last_word(shingle)) == in_script:
                continue
            padded = f" {shingle} "
            if any(
                df[g] == df[shingle] and tf[g] == tf[shingle] and padded in f" {g} " for g in kept
            ):
                continue
            kept.append(shingle)
            if len(kept) >= top:
                break
        return kept

    window = 8 * top + 16
    if len(df) > window:
        kept = kept_of(heapq.nsmallest(window, df, key=rank))
        if len(kept) >= top:
            return [(g, df[g]) for g in kept]
    return [(g, df[g]) for g in kept_of(sorted(df, key=rank))]


def _last_word(shingle: str) -> str:
    return shingle[shingle.rfind(" ") + 1 :]


def distinctive_terms(
    groups: Mapping[Label, Sequence[str]],
    *,
    top: int = 10,
    max_words: int = 5000,
) -> dict[Label, list[tuple[str, float]]]:
    """Class-based TF-IDF terms of each group of texts against the other groups.

    Parameters
    ----------
    groups : mapping of label to sequence of str
        The texts of each cluster (all clusters of one clustering).
    top : int
        Terms per group.
    max_words : int
        Words read from each text.

    Returns
    -------
    dict
        label -> ``[(term, weight), ...]``, best first (ties alphabetically): whole
        words (:func:`whole_words`), no stop word, in the group's main script, each
        over-represented in its group (a larger share of the group's words than of all
        words, or met in no other group) and in at most half of the groups.

    Examples
    --------
    >>> terms = distinctive_terms({"a": ["cats purr", "cats sleep"], "b": ["dogs bark"]}, top=2)
    >>> [t for t, _ in terms["a"]], [t for t, _ in terms["b"]]
    (['cats', 'purr'], ['bark', 'dogs'])
    >>> terms = distinctive_terms({"a": ["Рынок акций и рынок нефти, OPEC"], "b": ["Матч"]})
    >>> [t for t, _ in terms["a"]]
    ['рынок', 'акций', 'нефти']
    """
    counted = {
        label: [_term_counts(text, max_words) for text in texts] for label, texts in groups.items()
    }
    return _weighed_terms(counted, top=top)


def _term_counts(text: str, max_words: int) -> Counter[str]:
    """The content words (no stop word, three letters or more) among the first
    ``max_words`` whole words of a text, with their occurrences, in the order first met."""
    return Counter(w for w in whole_words(text)[:max_words] if _content(w))


@dataclass(frozen=True)
class _Sums:
    """The term counts of a group of documents summed: occurrences, documents holding each
    term, documents, words."""

    terms: Counter[str]
    docs: Counter[str]
    size: int
    n_words: int


def _summed(documents: Sequence[Counter[str]]) -> _Sums:
    if len(documents) == 1:  # its counts as they are (read, never changed)
        counts = documents[0]
    else:
        counts = Counter()
        for doc in documents:
            counts.update(doc)
    docs: Counter[str] = Counter(chain.from_iterable(documents))  # the documents' keys
    return _Sums(counts, docs, len(documents), sum(counts.values()))


@dataclass(frozen=True)
class _Totals:
    """The term counts of all groups summed, their sum and each term's script."""

    counts: Counter[str]
    grand: int
    scripts: dict[str, str]


def _totals(groups: Iterable[_Sums]) -> _Totals:
    total: Counter[str] = Counter()
    for g in groups:
        total.update(g.terms)
    return _Totals(total, sum(total.values()), {t: script(t) for t in total})


@dataclass(frozen=True)
class _Profile:
    """What a group's terms are against the totals: those over-represented in it (a larger
    share of its words than of all words, or met in no other group), and its main
    script."""

    over: frozenset[str]
    main: str | None


def _profile(g: _Sums, totals: _Totals) -> _Profile:
    total, grand = totals.counts, totals.grand
    over = frozenset(
        t for t, n in g.terms.items() if n * grand > total[t] * g.n_words or n == total[t]
    )
    return _Profile(over, _main_script(g.terms, totals.scripts))


def _weighed_terms(
    groups: Mapping[Label, Sequence[Counter[str]]], *, top: int
) -> dict[Label, list[tuple[str, float]]]:
    """:func:`distinctive_terms` from the term counts of each group's documents
    (:func:`_term_counts`)."""
    sums = {label: _summed(docs) for label, docs in groups.items()}
    totals = _totals(sums.values())
    return _weighed({k: (g, _profile(g, totals)) for k, g in sums.items()}, totals, top=top)


def _weighed(
    groups: Mapping[Label, tuple[_Sums, _Profile]], totals: _Totals, *, top: int
) -> dict[Label, list[tuple[str, float]]]:
    """:func:`distinctive_terms` from each group's summed term counts and profile."""
    if not totals.counts:
        return {label: [] for label in groups}
    total = totals.counts
    avg = totals.grand / max(1, len(groups))
    n_over: Counter[str] = Counter()  # the number of groups a term is over-represented in
    for _g, prof in groups.values():
        n_over.update(prof.over)
    most = len(groups) / 2 if len(groups) > 1 else math.inf
    out: dict[Label, list[tuple[str, float]]] = {}
    for label, (g, prof) in groups.items():
        need = min(2, g.size)
        scored = [
            (t, (g.terms[t] / g.n_words) * math.log(1.0 + avg / total[t]), g.docs[t] >= need)
            for t in prof.over
            if n_over[t] <= most and totals.scripts[t] == prof.main
        ]
        scored.sort(key=lambda kv: (not kv[2], -kv[1], kv[0]))
        out[label] = [(t, round(w, 6)) for t, w, _ in scored[:top]]
    return out


def largest_domains(domains: Iterable[tuple[str, int]], *, top: int = 5) -> list[tuple[str, int]]:
    """The domains with most pages: ``[(domain, pages), ...]``, ties alphabetically.

    Examples
    --------
    >>> largest_domains([("a.org", 2), ("b.org", 5), ("a.org", 4)], top=2)
    [('a.org', 6), ('b.org', 5)]
    """
    pages: Counter[str] = Counter()
    for domain, n in domains:
        if domain:
            pages[domain] += max(0, int(n))
    return sorted(pages.items(), key=lambda kv: (-kv[1], kv[0]))[:top]


def typical_titles(
    titles: Iterable[str], term_weights: Mapping[str, float], *, top: int = 5
) -> list[str]:
    """The titles that weigh most in the cluster's terms, each title once.

    A title's score is the sum of the weights of its distinct words (per square root
    of its number of words); ties by how often the title occurs, then alphabetically.

    Examples
    --------
    >>> typical_titles(["Home", "Cup final report", "Cup final report", "Weather"],
    ...                {"cup": 0.5, "final": 0.3}, top=2)
    ['Cup final report', 'Home']
    """
    seen: dict[str, str] = {}
    freq: Counter[str] = Counter()
    for title in titles:
        clean = " ".join((title or "").split())
        if not clean:
            continue
        key = clean.casefold()
        seen.setdefault(key, clean)
        freq[key] += 1

    def score(key: str) -> float:
        toks = set(whole_words(key))
        if not toks:
            return 0.0
        # summed in a fixed order: a set's order follows the hash seed, and near-equal sums
        # of floats in another order could rank two titles the other way round
        return sum(term_weights.get(w, 0.0) for w in sorted(toks)) / math.sqrt(len(toks))

    ranked = sorted(freq, key=lambda k: (-score(k), -freq[k], k))
    return [seen[k] for k in ranked[:top]]


@dataclass(frozen=True, eq=False)
class CountedDocument:
    """A :class:`ThemeDocument` with its words counted once (:func:`count_document`).

    The themes of the clusters holding it are sums of these counts, so the clusters of
    several partitions of the same documents (the levels of one clustering) are themed
    without reading the texts again (:func:`counted_themes`).

    Attributes
    ----------
    document : ThemeDocument
    terms : Counter
        The content words (no stop word, three letters or more) of its first
        ``max_words`` whole words, with their occurrences, in the order first met.
    shingles : dict
        Its candidate shingles (:func:`frequent_shingles`' rules, any script) with their
        occurrences, in the order first met.
    shingle_sizes : tuple of int
    max_words : int
        The :class:`ThemeOptions` it was counted with.

    Two counted documents are equal only when they are the same object (a cluster's
    documents name it in a :class:`ThemeCache`).
    """

    document: ThemeDocument
    terms: Counter[str]
    shingles: dict[str, int]
    shingle_sizes: tuple[int, ...]
    max_words: int


def count_document(document: ThemeDocument, options: ThemeOptions | None = None) -> CountedDocument:
    """Count the words and shingles of one document as its clusters' themes read them.

    Time and memory O(w · max(shingle_sizes)) for its first w ≤ ``max_words`` words.

    Examples
    --------
    >>> counted = count_document(ThemeDocument("Cup final: the team scored in the cup final."))
    >>> counted.terms
    Counter({'cup': 2, 'final': 2, 'team': 1, 'scored': 1})
    >>> counted.shingles
    {'cup final': 2, 'team scored': 1}
    """
    opts = options or ThemeOptions()
    text = document.text or ""
    return CountedDocument(
        document,
        _term_counts(text, opts.max_words),
        _shingle_counts(text, opts.shingle_sizes, opts.max_words),
        tuple(opts.shingle_sizes),
        opts.max_words,
    )


class ThemeCache:
    """What :func:`counted_themes` computed for the last partition it themed: the term
    totals of its documents and, for each cluster (by its documents), the summed term
    counts, the terms over-represented in it and its shingles per script. A later
    partition of the same documents reuses the totals, and a cluster met again (a level
    that neither split nor merged it) is neither summed nor ranked again: theming such a
    partition costs O(terms over-represented in its clusters) plus what changed.

    Only the last partition's clusters are kept (memory: one partition's sums, which
    theming it holds anyway). Made once per set of counted documents and passed to each
    call; the options are those of every call.
    """

    def __init__(self, options: ThemeOptions | None = None) -> None:
        self.options = options or ThemeOptions()
        self.documents: frozenset[CountedDocument] = frozenset()
        self.totals: _Totals | None = None
        self.groups: dict[tuple[CountedDocument, ...], tuple[_Sums, _Profile]] = {}
        self.shingles: dict[
            tuple[tuple[CountedDocument, ...], str | None], list[tuple[str, int]]
        ] = {}


def _grouped(
    keys: Mapping[Label, tuple[CountedDocument, ...]], cache: ThemeCache
) -> tuple[dict[Label, tuple[_Sums, _Profile]], _Totals]:
    """Each cluster's summed term counts and profile, and the totals: the cache's when it
    holds the same documents (each once), else summed again."""
    documents = frozenset(d for key in keys.values() for d in key)
    once = len(documents) == sum(map(len, keys.values()))
    if once and cache.totals is not None and documents == cache.documents:
        totals = cache.totals
        groups = {}
        for label, key in keys.items():
            kept = cache.groups.get(key)
            if kept is None:
                sums = _summed([d.terms for d in key])
                kept = (sums, _profile(sums, totals))
            groups[label] = kept
        return groups, totals
    all_sums = {label: _summed([d.terms for d in key]) for label, key in keys.items()}
    totals = _totals(all_sums.values())
    return {k: (g, _profile(g, totals)) for k, g in all_sums.items()}, totals


def cluster_themes(
    clusters: Mapping[Label, Sequence[ThemeDocument]],
    options: ThemeOptions | None = None,
) -> dict[Label, Theme]:
    """The theme of every cluster: terms against the other clusters, shingles, domains,
    titles.

    Parameters
    ----------
    clusters : mapping of label to sequence of ThemeDocument
        Every cluster of one clustering (distinctive terms compare the clusters with
        each other, so pass them all at once).
    options : ThemeOptions, optional

    Returns
    -------
    dict
        label -> :class:`Theme`.
    """
    opts = options or ThemeOptions()
    counted = {label: [count_document(d, opts) for d in docs] for label, docs in clusters.items()}
    return counted_themes(counted, opts)


def counted_themes(
    clusters: Mapping[Label, Sequence[CountedDocument]],
    options: ThemeOptions | None = None,
    *,
    cache: ThemeCache | None = None,
) -> dict[Label, Theme]:
    """:func:`cluster_themes` of documents counted once (:func:`count_document`).

    The themes are those :func:`cluster_themes` gives the same documents; counting each
    document once serves every partition of them (a clustering's levels): theming one
    partition then costs O(E + S log S) for E counted words and shingles of its
    documents and S distinct shingles of a cluster, no text read.

    Parameters
    ----------
    clusters : mapping of label to sequence of CountedDocument
        Every cluster of one partition.
    options : ThemeOptions, optional
        The options the documents were counted with (their ``shingle_sizes`` and
        ``max_words``).
    cache : ThemeCache, optional
        The clusters of the partition themed before (read) and of this one (kept): pass
        the same cache for each partition of the same documents.

    Returns
    -------
    dict
        label -> :class:`Theme`.

    Raises
    ------
    ValueError
        A document was counted with other ``shingle_sizes`` or ``max_words``, or the
        cache was made with other options.

    Examples
    --------
    >>> a, b, c = (count_document(ThemeDocument(t)) for t in
    ...            ["Cup final: the team scored.", "The team lost the cup final.", "Rates rose."])
    >>> counted_themes({"sport": [a, b], "money": [c]}, ThemeOptions(n_terms=3))["sport"].terms
    ('cup', 'final', 'team')
    >>> counted_themes({"all": [a, b, c]})["all"].shingles[:3]
    ('cup final', 'lost the cup', 'team scored')
    """
    opts = options or ThemeOptions()
    for docs in clusters.values():
        for d in docs:
            if (d.shingle_sizes, d.max_words) != (tuple(opts.shingle_sizes), opts.max_words):
                raise ValueError(
                    f"a document counted with shingle_sizes={d.shingle_sizes}, max_words="
                    f"{d.max_words} is themed with shingle_sizes={opts.shingle_sizes}, "
                    f"max_words={opts.max_words}: count it with the same ThemeOptions"
                )
    if cache is not None and cache.options != opts:
        raise ValueError(f"a ThemeCache of {cache.options} is used with {opts}")
    last = cache or ThemeCache(opts)
    keys = {label: tuple(docs) for label, docs in clusters.items()}
    groups, totals = _grouped(keys, last)
    terms = _weighed(groups, totals, top=max(opts.n_terms, 50))
    ranked: dict[tuple[tuple[CountedDocument, ...], str | None], list[tuple[str, int]]] = {}
    out: dict[Label, Theme] = {}
    for label, docs in clusters.items():
        weights = dict(terms.get(label, []))
        best = terms.get(label, [])[: opts.n_terms]
        in_script = script(best[0][0]) if best else None  # the terms' script is the cluster's
        key = (keys[label], in_script)
        shingles = ranked[key] = last.shingles.get(key) or _ranked_shingles(
            (d.shingles for d in docs), top=opts.n_shingles, in_script=in_script
        )
        members = [d.document for d in docs]
        doms = largest_domains(((d.domain or "", d.pages) for d in members), top=opts.n_domains)
        titles = typical_titles((t for d in members for t in d.titles), weights, top=opts.n_titles)
        out[label] = Theme(
            terms=tuple(t for t, _ in best),
            term_weights=tuple(w for _, w in best),
            shingles=tuple(s for s, _ in shingles),
            shingle_counts=tuple(n for _, n in shingles),
            domains=tuple(d for d, _ in doms),
            domain_pages=tuple(n for _, n in doms),
            titles=tuple(titles),
            size=len(docs),
        )
    if cache is not None:  # this partition, for the next
        cache.documents = frozenset(d for key in keys.values() for d in key)
        cache.totals = totals
        cache.groups = {keys[label]: groups[label] for label in keys}
        cache.shingles = ranked
    return out


def readable_terms(
    stems: Sequence[str], texts: Iterable[str], *, max_words: int = 20000
) -> dict[str, str]:
    """The written word of each stemmed term that a theme may show, in the stems' order.

    The activity clustering weighs Snowball stems (``universiti``); a theme shows the
    whole word an analyst reads most often in the cluster (``university``). Words are
    stemmed by their script's stemmer, as :func:`extract.tokens.stem_words` does for a
    text of unknown language. A stem is left out when no word of the texts has it, when
    its most frequent word is a stop word or shorter than three letters (``сво`` →
    ``своего``), when that word is written in another script than most of the texts'
    words, or when an earlier stem gave the same word.

    Parameters
    ----------
    stems : sequence of str
        The cluster's stems, best first.
    texts : iterable of str
        The texts of the cluster's members.
    max_words : int
        Words read from all texts together.

    Returns
    -------
    dict
        stem -> word, for the stems kept, in the order of ``stems``.

    Examples
    --------
    >>> readable_terms(["universiti", "rank", "zzz", "the", "сво"],
    ...                ["University rankings: the university ranked first, their own way."])
    {'universiti': 'university', 'rank': 'ranked'}
    """
    wanted = set(stems)
    forms: dict[str, Counter[str]] = {}
    seen: Counter[str] = Counter()
    budget = max_words
    for text in texts:
        ws = whole_words(text)[:budget]
        budget -= len(ws)
        counts = Counter(ws)
        seen.update({w: n for w, n in counts.items() if _content(w)})
        distinct = sorted(counts)
        for word, stem in zip(distinct, stem_words(distinct, None), strict=True):
            if stem in wanted:
                forms.setdefault(stem, Counter())[word] += counts[word]
        if budget <= 0:
            break
    main = _main_script(seen)
    out: dict[str, str] = {}
    for st in stems:
        if st not in forms or st in out:
            continue
        word = min(forms[st].items(), key=lambda kv: (-kv[1], kv[0]))[0]
        if _content(word) and script(word) == main and word not in out.values():
            out[st] = word
    return out
