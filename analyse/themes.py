"""Cluster themes: most frequent word shingles, class-based TF-IDF terms, domains, titles.

The paper named the theme of each cluster by "the most frequently occurring sets of
words (shingles) present in the cluster" (seed 000_d819228b9213e10a.txt, before its
Table 3). Stored shingles are 64-bit hashes, which cannot be read back, so the themes
are computed again from the documents' texts:

* **frequent shingles** (:func:`frequent_shingles`): word n-grams (``n`` in
  ``ThemeOptions.shingle_sizes``, 2 and 3 words by default) ranked by the number of the
  cluster's documents that contain them (document frequency, so that one long page
  repeating a phrase does not win). An n-gram that begins or ends with a stop word is
  not a theme ("of the university"); ties go to the shingle met more often, then to
  the longer one, then to the one met first; an n-gram contained in a longer kept one
  with the same counts is dropped ("new york" under "new york times"). Shingles
  never cross punctuation (a sentence or list item ends the phrase).
* **distinctive terms** (:func:`distinctive_terms`): class-based TF-IDF (c-TF-IDF,
  Grootendorst 2022): the documents of a cluster are one class; the weight of term
  ``t`` in class ``c`` is ``tf(t, c) / |c| * log(1 + A / f(t))`` with ``|c|`` the
  number of words of the class, ``A`` the average number of words per class and
  ``f(t)`` the frequency of ``t`` over all classes. Terms frequent in one cluster and
  rare in the others rank first. Terms met in at least two documents of a cluster
  (that has two or more) rank before the others.
* **largest domains**: the cluster's registered domains by number of pages.
* **typical titles**: the distinct titles whose words weigh most in the cluster's
  c-TF-IDF terms (per square root of the title's length), ties by frequency.

Words: Unicode NFKC, case folding, ``ё`` → ``е``, runs of letters of at least two
characters; stop words of English and Russian (and a few words of web page furniture:
"cookies", "javascript", "copyright" ...) are never terms.

Complexity: for W words in all documents (each document capped at
``ThemeOptions.max_words``) and C clusters, time O(W · max(shingle_sizes) + V · C)
and memory O(V · C) with V distinct words; everything is plain Python counting.

References
----------
V. N. Korelin, I. S. Blekanov, S. L. Sergeev (2015), seed 000_d819228b9213e10a.txt.
M. Grootendorst, "BERTopic: Neural topic modeling with a class-based TF-IDF procedure",
arXiv:2203.05794 (2022).

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
('interest rates', 'bank raised interest')
>>> words("Ёлки-палки, Hello World 42!")
['елки', 'палки', 'hello', 'world']
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections import Counter
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass

__all__ = [
    "STOP_WORDS",
    "Theme",
    "ThemeDocument",
    "ThemeOptions",
    "cluster_themes",
    "distinctive_terms",
    "frequent_shingles",
    "largest_domains",
    "typical_titles",
    "words",
]

_WORD = re.compile(r"[^\W\d_]{2,}")


def _wordlist(text: str) -> frozenset[str]:
    return frozenset(text.split())


_BREAK = re.compile(r"[.,;:!?()\[\]{}<>\"«»“”„|/\\•·–—\n\r\t]+|\s-\s")

STOP_WORDS_EN = _wordlist(
    """a about above after again against all also am an and any are aren as at be because
    been before being below between both but by can cannot could couldn did didn do does
    doesn doing don down during each etc few for from further get gets got had hadn has hasn
    have haven having he her here hers herself him himself his how however if in into is
    isn it its itself just least less let ll may me might more most much must mustn my
    myself no nor not now of off often on once one only or other others otherwise ought our
    ours ourselves out over own per quite rather re said same say says shall shan she
    should shouldn since so some such than that the their theirs them themselves then there
    these they this those though through thus to too two under until up upon us use used
    using very via was wasn we were weren what when where whether which while who whom whose
    why will with within without won would wouldn ve yet you your yours yourself yourselves
    also mr mrs ms th st nd rd"""
)

STOP_WORDS_RU = _wordlist(
    """а без более бы был была были было быть в вам вас весь во вот все всего всех вы где
    да даже для до его ее ей ему если есть еще же за здесь и из или им их к как какой
    когда кто ли либо между меня мне много может можно мы на над надо наш не него нее
    нет ни них но ну о об однако он она они оно от очень по под после при про с со так
    также такой там те тем то того тоже той только том ты у уже хотя чего чей чем что
    чтобы чье эта эти это этого этой этом этот я который которая которые которых которого
    которой котором свой своя свое свои своих своей сам сама сами себя себе будет будут
    был было ним нем ней всё её ещё раз два три год года году лет тыс млн млрд руб ранее
    словам может могут"""
)

# words of page furniture that name no activity
STOP_WORDS_WEB = _wordlist(
    """cookie cookies javascript browser copyright reserved login logout password click menu
    skip navigation privacy terms http https www html com org net rss subscribe
    cookies куки пароль войти вход регистрация меню навигация"""
)

STOP_WORDS = STOP_WORDS_EN | STOP_WORDS_RU | STOP_WORDS_WEB


def words(text: str) -> list[str]:
    """The words of ``text``: NFKC, case-folded, ``ё`` → ``е``, letters only, ≥ 2 long.

    Examples
    --------
    >>> words("Московский ГОСУДАРСТВЕННЫЙ университет, 1755")
    ['московский', 'государственный', 'университет']
    """
    norm = unicodedata.normalize("NFKC", text).casefold().replace("ё", "е")
    return _WORD.findall(norm)


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
    return word not in STOP_WORDS and len(word) >= 3


def frequent_shingles(
    texts: Iterable[str],
    *,
    sizes: Sequence[int] = (2, 3),
    top: int = 10,
    max_words: int = 5000,
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

    Returns
    -------
    list of (str, int)
        ``(shingle, number of texts containing it)``, most frequent first; ties by the
        number of occurrences, then the longer shingle, then the first met. A shingle
        inside a longer one with the same counts is left out.

    Examples
    --------
    >>> frequent_shingles(["New York Times reports", "the New York Times said",
    ...                    "New York, a big city"], top=3)
    [('new york', 3), ('new york times', 2), ('york times reports', 1)]
    """
    df: Counter[str] = Counter()
    tf: Counter[str] = Counter()
    first: dict[str, int] = {}
    for text in texts:
        seen: set[str] = set()
        budget = max_words
        for segment in _BREAK.split(text):
            if budget <= 0:
                break
            toks = words(segment)[:budget]
            budget -= len(toks)
            for k in sizes:
                for i in range(len(toks) - k + 1):
                    gram = toks[i : i + k]
                    if not (_content(gram[0]) and _content(gram[-1])):
                        continue
                    if k > 2 and sum(w in STOP_WORDS for w in gram) * 2 > k:
                        continue
                    key = " ".join(gram)
                    seen.add(key)
                    tf[key] += 1
                    first.setdefault(key, len(first))
        df.update(seen)
    ranked = sorted(df, key=lambda g: (-df[g], -tf[g], -g.count(" "), first[g]))
    kept: list[str] = []
    for gram in ranked:
        padded = f" {gram} "
        if any(df[g] == df[gram] and tf[g] == tf[gram] and padded in f" {g} " for g in kept):
            continue
        kept.append(gram)
        if len(kept) >= top:
            break
    return [(g, df[g]) for g in kept]


def distinctive_terms(
    groups: Mapping[Hashable, Sequence[str]],
    *,
    top: int = 10,
    max_words: int = 5000,
) -> dict[Hashable, list[tuple[str, float]]]:
    """Class-based TF-IDF terms of each group of texts against the other groups.

    Parameters
    ----------
    groups : mapping of label to sequence of str
        The texts of each cluster.
    top : int
        Terms per group.
    max_words : int
        Words read from each text.

    Returns
    -------
    dict
        label -> ``[(term, weight), ...]``, best first (ties alphabetically).

    Examples
    --------
    >>> terms = distinctive_terms({"a": ["cats purr", "cats sleep"], "b": ["dogs bark"]}, top=2)
    >>> [t for t, _ in terms["a"]], [t for t, _ in terms["b"]]
    (['cats', 'purr'], ['bark', 'dogs'])
    """
    tf: dict[Hashable, Counter[str]] = {}
    df: dict[Hashable, Counter[str]] = {}
    sizes: dict[Hashable, int] = {}
    for label, texts in groups.items():
        counts: Counter[str] = Counter()
        docs: Counter[str] = Counter()
        for text in texts:
            toks = [w for w in words(text)[:max_words] if _content(w)]
            counts.update(toks)
            docs.update(set(toks))
        tf[label], df[label], sizes[label] = counts, docs, len(texts)
    total: Counter[str] = Counter()
    for counts in tf.values():
        total.update(counts)
    if not total:
        return {label: [] for label in groups}
    avg = sum(total.values()) / max(1, len(tf))
    out: dict[Hashable, list[tuple[str, float]]] = {}
    for label, counts in tf.items():
        n_words = sum(counts.values())
        need = min(2, sizes[label])
        scored = [
            (term, (n / n_words) * math.log(1.0 + avg / total[term]), df[label][term] >= need)
            for term, n in counts.items()
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
        toks = set(words(key))
        if not toks:
            return 0.0
        return sum(term_weights.get(w, 0.0) for w in toks) / math.sqrt(len(toks))

    ranked = sorted(freq, key=lambda k: (-score(k), -freq[k], k))
    return [seen[k] for k in ranked[:top]]


def cluster_themes(
    clusters: Mapping[Hashable, Sequence[ThemeDocument]],
    options: ThemeOptions | None = None,
) -> dict[Hashable, Theme]:
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
    texts = {label: [d.text or "" for d in docs] for label, docs in clusters.items()}
    terms = distinctive_terms(texts, top=max(opts.n_terms, 50), max_words=opts.max_words)
    out: dict[Hashable, Theme] = {}
    for label, docs in clusters.items():
        weights = dict(terms.get(label, []))
        best = terms.get(label, [])[: opts.n_terms]
        shingles = frequent_shingles(
            texts[label], sizes=opts.shingle_sizes, top=opts.n_shingles, max_words=opts.max_words
        )
        doms = largest_domains(((d.domain or "", d.pages) for d in docs), top=opts.n_domains)
        titles = typical_titles((t for d in docs for t in d.titles), weights, top=opts.n_titles)
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
    return out


def readable_terms(
    stems: Sequence[str], texts: Iterable[str], *, max_words: int = 20000
) -> list[str]:
    """The most frequent written form of each stemmed term in the texts (the stem itself
    when no word of the texts has it).

    The activity clustering weighs Snowball stems (``universiti``); a theme shows the
    word an analyst reads most often in the cluster (``university``). Words are stemmed
    by their script's stemmer, as :func:`extract.tokens.stem_words` does for a text of
    unknown language.

    Examples
    --------
    >>> readable_terms(["universiti", "rank", "zzz"],
    ...                ["University rankings: the university ranked first."])
    ['university', 'ranked', 'zzz']
    """
    from extract.tokens import stem_words
    from extract.tokens import words as tokens

    wanted = set(stems)
    forms: dict[str, Counter[str]] = {}
    budget = max_words
    for text in texts:
        ws = tokens(text)[:budget]
        budget -= len(ws)
        counts = Counter(ws)
        distinct = sorted(counts)
        for word, stem in zip(distinct, stem_words(distinct, None), strict=True):
            if stem in wanted:
                forms.setdefault(stem, Counter())[word] += counts[word]
        if budget <= 0:
            break
    return [
        min(forms[st].items(), key=lambda kv: (-kv[1], kv[0]))[0] if st in forms else st
        for st in stems
    ]
