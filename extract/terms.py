"""Term counts of texts: the weighted representation of a document (bag of stemmed words).

A *term* is a normalised word (:func:`extract.tokens.words`) that is not a stop word of
the text's language, has at least :data:`MIN_TERM_LENGTH` characters and is not made of
digits only, Snowball-stemmed per language (by script when the language is unknown, as
:func:`extract.tokens.tokenize` does). The counts of a document are what tf-idf weighting
(:mod:`cluster.weighting`) and the activity clustering (:class:`cluster.ActivityClusterer`)
start from; the extract stage stores them beside the shingles so that clustering never
tokenises a page twice.

:class:`TermCounter` cuts a text into chunks in C (:func:`extract.tokens.chunk_bytes`),
finds each chunk in a compiled hash table of the chunks seen so far (numba) and memoises
each distinct chunk's term (or its rejection), so a corpus costs a few C passes per text,
two compiled passes over its bytes and, once per distinct chunk, the filters and one
batched stemmer call. :func:`count_terms` counts many texts, each with the counter of its
language, and identifies the languages not given with :class:`BatchLanguageIdentifier`:
py3langid's codes, its automaton walked over a whole batch of texts in compiled code. Both
give exactly what the word-by-word counter and py3langid's ``classify`` gave before them
(``tests/extract/test_terms_speed_equivalence.py``); ``bench/terms.py`` measures them
against scikit-learn's ``CountVectorizer``.

Complexity: O(L) per text of L characters; memory O(V) for a memo of V distinct chunks
(bounded by ``max_memo`` plus one group of texts).

Examples
--------
>>> term_counts("The universities and university rankings of 2015", "en")
{'universiti': 2, 'rank': 1}
>>> term_counts("Университеты и университетские рейтинги 2015 г.", "ru")
{'университет': 1, 'университетск': 1, 'рейтинг': 1}
>>> tc = TermCounter()
>>> tc.counts("Running dogs run") == {'run': 2, 'dog': 1}
True
"""

from __future__ import annotations

import functools
import math
import operator
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from itertools import compress, pairwise
from typing import Any, NamedTuple

import numpy as np

from extract.language import MAX_CHARS
from extract.tokens import (
    STEMMER_LANGUAGES,
    WORD,
    chunk_bytes,
    stem_words,
    stopwords_for,
    words,
)

__all__ = [
    "GROUP_CHARACTERS",
    "MIN_TERM_LENGTH",
    "BatchLanguageIdentifier",
    "TermCounter",
    "count_terms",
    "merge_counts",
    "term_counts",
    "top_terms",
]

MIN_TERM_LENGTH = 2
"""Words shorter than this (in characters, before stemming) are not terms."""

GROUP_CHARACTERS = 1 << 20
"""Characters of texts :meth:`TermCounter.counts_of` passes to its compiled passes at once."""


_NO_TERM = -1
"""The term code of a chunk that is no term (no word, a stop word, too short, digits)."""

_SEVERAL = -2
"""The term code of a chunk of several words."""

OTHER_CHUNK, SHORT_CHUNK, WORD_CHUNK = 0, 1, 2
"""Kinds of new chunks (:func:`_sort_chunks`)."""


class TermCounter:
    """Count the terms of many texts of one language with one memo.

    Parameters
    ----------
    language : str, optional
        ISO 639-1 code (stop list and stemmer); ``None``: English and Russian stop words
        and each word stemmed by its script.
    max_memo : int
        The memo is emptied before a group of texts when it holds more chunks than this
        (bounds memory: about 80 bytes a chunk plus its bytes and its term).

    Notes
    -----
    A text is cut into chunks in C (:func:`extract.tokens.chunk_bytes`: normalise,
    encode, ``bytes.translate``: a space at every ASCII character no word holds). A
    compiled pass (numba) over the bytes of a group of texts finds each chunk in an
    open-addressing hash table of the chunks seen so far (FNV-1a, the bytes compared on
    every hit), adding the new ones; Python works out the term of each new chunk (the
    regular expression of :func:`extract.tokens.words` where the chunk is not one word,
    the filters, one stemmer call for all); a second compiled pass counts each text's
    terms in order of first occurrence. So Python runs once per distinct chunk and once
    per distinct term of a text, not once per word. The counts, and their order, are
    those of counting the term of every word of :func:`extract.tokens.words`: each
    chunk holds its words in text order. A text with a chunk of several words (rare:
    non-ASCII punctuation between two words) is counted word by word.

    Examples
    --------
    >>> TermCounter(language="ru").counts("Кошки и коты, кошка!")
    {'кошк': 2, 'кот': 1}
    """

    def __init__(self, *, language: str | None = None, max_memo: int = 1 << 20) -> None:
        self.language = language
        self.max_memo = max_memo
        self._stop = stopwords_for(language)
        self._kernels = kernels()
        self._empty()

    def _empty(self) -> None:
        """An empty memo: the chunks' hash table (``_memo``), each chunk's term code
        (:data:`_NO_TERM`, :data:`_SEVERAL` or an index of ``_terms``) and the terms."""
        self._memo = ChunkTable.empty()
        self._term_of = np.empty(0, dtype=np.int32)
        self._term_id: dict[str, int] = {}  # a term's code: the place of its first stem
        self._terms: list[str] = []  # every stem worked out, in order
        self._seen = np.full(1024, -1, dtype=np.int64)  # see _tally
        self._position = 0

    def counts(self, text: str) -> dict[str, int]:
        """The term counts of one text (terms in order of first occurrence)."""
        return self.counts_of([text])[0]

    def counts_of(self, texts: Sequence[str]) -> list[dict[str, int]]:
        """The term counts of each text, as :meth:`counts` gives them.

        The texts go through the compiled passes a group of up to
        :data:`GROUP_CHARACTERS` characters at a time.

        Examples
        --------
        >>> TermCounter(language="en").counts_of(["Running dogs", "", "dogs run"])
        [{'run': 1, 'dog': 1}, {}, {'dog': 1, 'run': 1}]
        """
        out: list[dict[str, int]] = []
        start = 0
        while start < len(texts):
            end, size = start, 0
            while end < len(texts) and (end == start or size < GROUP_CHARACTERS):
                size += len(texts[end])
                end += 1
            group = texts[start:end]
            found = self._count(list(map(chunk_bytes, group)))
            several = np.flatnonzero(found.several).tolist() if found.several.any() else []
            for d in several:  # count word by word
                by_word = b" ".join(w.encode() for w in words(group[d]))
                found.counts[d] = self._count([by_word]).counts[0]
            out.extend(found.counts)
            start = end
        return out

    def _count(self, encoded: list[bytes]) -> _Counted:
        """The term counts of texts given as :func:`extract.tokens.chunk_bytes`."""
        if self._memo.size > self.max_memo:
            self._empty()
        lengths = np.fromiter(map(len, encoded), dtype=np.int64, count=len(encoded))
        buf = np.frombuffer(b" ".join(encoded), dtype=np.uint8)
        starts = np.zeros(len(encoded), dtype=np.int64)  # each text after a space
        np.cumsum(lengths[:-1] + 1, out=starts[1:])
        k = self._kernels
        before = self._memo.size
        chunk_ids, bounds, *table = k.index(buf, starts, lengths, *self._memo)
        self._memo = ChunkTable(*table)
        if self._memo.size > before:
            self._add(before)
        if len(self._seen) < len(self._terms):
            self._seen = np.full(2 * len(self._terms), -1, dtype=np.int64)
        ids, counts, term_bounds, several = k.tally(
            chunk_ids, bounds, self._term_of, self._seen, self._position
        )
        self._position += len(ids)
        terms = list(map(self._terms.__getitem__, ids.tolist()))
        counts_list, at = counts.tolist(), term_bounds.tolist()
        return _Counted(
            [dict(zip(terms[lo:hi], counts_list[lo:hi], strict=True)) for lo, hi in pairwise(at)],
            several,
        )

    def _add(self, before: int) -> None:
        """The term codes of the chunks from ``before`` on (new in the memo): each
        chunk's words (the regular expression of :func:`extract.tokens.words`), the
        filters, and one stemmer call for all.

        A chunk of ASCII letters and digits or basic Cyrillic letters (U+0400 to U+045F)
        only, most of them, is one word whose length and digits :func:`_sort_chunks`
        reads from its bytes; such a word of at least :data:`MIN_TERM_LENGTH` characters,
        not all digits, meets only the stop list in Python. The others (other scripts,
        quotes, apostrophes, several words) go through the tests of :func:`extract.
        tokens.words` one by one.
        """
        memo = self._memo
        first = int(memo.keys[before, 1])
        # the new chunks lie in order in the arena, each followed by a space
        texts = bytes(memo.arena[first : memo.used - 1]).decode("utf-8", "surrogatepass")
        chunk_texts = texts.split(" ")
        codes = np.full(len(chunk_texts), _NO_TERM, dtype=np.int32)
        # one word of ASCII letters and digits or basic Cyrillic letters: sorted in
        # compiled code (its length and digits read from its bytes)
        kind = self._kernels.sort_chunks(memo.arena, memo.keys, before, memo.size)
        at = np.flatnonzero(kind == WORD_CHUNK).tolist()
        keep_words = list(map(chunk_texts.__getitem__, at))
        stop = self._stop
        if stop:
            stopped = list(map(stop.__contains__, keep_words))
            if any(stopped):
                kept = list(map(operator.not_, stopped))
                at = list(compress(at, kept))
                keep_words = list(compress(keep_words, kept))
        for i in np.flatnonzero(kind == OTHER_CHUNK).tolist():
            text = chunk_texts[i]
            found = [text] if text.isalnum() else WORD.findall(text)  # isalnum: one word
            if len(found) == 1:
                w = found[0]
                if len(w) >= MIN_TERM_LENGTH and not w.isdigit() and w not in stop:
                    at.append(i)
                    keep_words.append(w)
            elif found:
                codes[i] = _SEVERAL
        if keep_words:
            # a new term's code is its place in _terms, which takes every stem (a term is
            # coded by the place of its first stem: one C pass, no set of new terms)
            term_id, terms = self._term_id, self._terms
            stems = stem_words(keep_words, self.language)
            places = range(len(terms), len(terms) + len(stems))
            terms.extend(stems)
            codes[at] = np.fromiter(map(term_id.setdefault, stems, places), np.int32, len(stems))
        self._term_of = np.concatenate([self._term_of, codes])


def term_counts(text: str, language: str | None = None) -> dict[str, int]:
    """The term counts of one text (see the module docstring).

    Parameters
    ----------
    text : str
    language : str, optional
        ISO 639-1 code; ``None``: by script (English and Russian).

    Returns
    -------
    dict of str to int
    """
    return TermCounter(language=language).counts(text)


def count_terms(
    texts: Sequence[str],
    languages: Sequence[str | None] | None = None,
    *,
    identifier: BatchLanguageIdentifier | None = None,
) -> list[dict[str, int]]:
    """The term counts of many texts, each with the counter of its language.

    A text without a language (``languages`` is ``None``, or its entry is) gets the one
    :class:`BatchLanguageIdentifier` finds, or ``None`` (both stop lists, stemmed by
    script) when that language has no stemmer.

    Parameters
    ----------
    texts : sequence of str
    languages : sequence of str or None, optional
        ISO 639-1 code of each text (one of :data:`extract.tokens.STEMMER_LANGUAGES`) or
        ``None`` to identify it.
    identifier : BatchLanguageIdentifier, optional
        Made when a language must be identified and none is given (loads py3langid's
        model, ~1 s once per process).

    Returns
    -------
    list of dict of str to int
        :meth:`TermCounter.counts` of each text, in order.

    Raises
    ------
    ValueError
        ``languages`` of another length than ``texts``, or a code without a stemmer.

    Examples
    --------
    >>> count_terms(["Running dogs", "Бегущие собаки"], ["en", "ru"])
    [{'run': 1, 'dog': 1}, {'бегущ': 1, 'собак': 1}]
    """
    if languages is not None and len(languages) != len(texts):
        raise ValueError(
            f"languages has {len(languages)} entries for {len(texts)} documents: give one "
            "ISO 639-1 code (or None) per document"
        )
    langs: list[str | None] = list(languages) if languages is not None else [None] * len(texts)
    for code in set(langs):
        if code is not None and code not in STEMMER_LANGUAGES:
            raise ValueError(
                f"unknown language {code!r}: give an ISO 639-1 code with a Snowball "
                f"stemmer ({', '.join(sorted(STEMMER_LANGUAGES))}) or None to detect it"
            )
    missing = [d for d, code in enumerate(langs) if code is None]
    if missing:
        found = (identifier or BatchLanguageIdentifier()).identify([texts[d] for d in missing])
        for d, code in zip(missing, found, strict=True):
            langs[d] = code if code in STEMMER_LANGUAGES else None
    by_language: dict[str | None, list[int]] = {}
    for d, code in enumerate(langs):
        by_language.setdefault(code, []).append(d)
    out: list[dict[str, int]] = [{}] * len(texts)
    for code, docs in by_language.items():
        counted = TermCounter(language=code).counts_of([texts[d] for d in docs])
        for d, counts in zip(docs, counted, strict=True):
            out[d] = counts
    return out


def merge_counts(many: Iterable[Mapping[str, int]]) -> dict[str, int]:
    """The sum of several term-count mappings (a site's pages into one domain document).

    Examples
    --------
    >>> merge_counts([{"a": 1, "b": 2}, {"b": 1}])
    {'a': 1, 'b': 3}
    """
    total: Counter[str] = Counter()
    for c in many:
        total.update(c)
    return dict(total)


def top_terms(counts: Mapping[str, int], max_terms: int) -> dict[str, int]:
    """The ``max_terms`` most frequent terms (ties: the smaller term first), all when fewer.

    Examples
    --------
    >>> top_terms({"b": 2, "a": 2, "c": 1}, 2)
    {'a': 2, 'b': 2}
    """
    if len(counts) <= max_terms:
        return dict(counts)
    ranked = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:max_terms]
    return dict(ranked)


class BatchLanguageIdentifier:
    """:func:`extract.language.identify_language` of many texts at once, the same codes.

    py3langid walks its byte n-gram automaton (an Aho-Corasick DFA over the UTF-8 bytes of
    the first ``max_chars`` characters) one byte at a time in Python, ~0.5 µs a byte, then
    scores each text with one float32 product of its feature counts and the model's table.
    Here both run compiled (numba) over a batch of texts: the walk follows
    :data:`CHAINS` stretches of the batch in lockstep, so that the cache misses of the
    automaton's 78 MB table overlap (the state after a byte depends only on the last
    :attr:`depth` bytes, so a stretch starts exactly after walking the ``depth - 1``
    bytes before it from the root; a byte no n-gram holds, ``0xff``, separates the
    texts and leads back to the root); one pass per text then counts its features in
    py3langid's order (first occurrence), and one more adds each feature's row of the
    table into the text's scores. A text whose best label leads the next by more than
    twice the bound on the rounding of any order of summation (Higham's γ) is decided
    there, and every other text (a near tie, no feature) goes through py3langid's own
    product, softmax and folding of aliased labels, so every code is py3langid's (tests
    compare them on the real corpora).

    Parameters
    ----------
    max_chars : int
        Read only this many characters of each text (as
        :func:`extract.language.identify_language`).
    batch_bytes : int
        Bytes walked at once (bounds memory: ~10 bytes of arrays per byte, plus 568
        bytes of scores per text).

    Raises
    ------
    ValueError
        ``batch_bytes`` outside 1 to 2**31 - 1 (a batch's places are int32).
    RuntimeError
        py3langid's model is not the one this walk was written for.

    Notes
    -----
    Time O(L) per text of L bytes (up to ``max_chars`` characters) plus the product of its
    F distinct features with the model's 142 labels, O(142 F). Memory O(batch_bytes)
    plus, once per process (read-only, shared by every identifier), the automaton's
    transitions in one int64 table (next row and feature: 78 MB) and a float32 copy of
    the model's table (57 MB). The compiled walk is cached on disk by numba (the first
    process compiles it, a few seconds; later ones load it, well under a second:
    ``bench/results/terms.md``).

    Examples
    --------
    >>> ids = BatchLanguageIdentifier()
    >>> ids.identify(["Студенты университета", "The students of the university", "42"])
    ['ru', 'en', None]
    """

    def __init__(self, *, max_chars: int = MAX_CHARS, batch_bytes: int = 1 << 22) -> None:
        if not 0 < batch_bytes < 1 << 31:
            raise ValueError(f"batch_bytes={batch_bytes}: give 1 to 2**31 - 1")
        self.max_chars = max_chars
        self.batch_bytes = batch_bytes
        self.depth = _DEPTH
        walk = walk_tables()
        self._model = walk.model
        self._root = walk.root
        self._transitions = walk.transitions
        self._table = walk.table
        self._largest = walk.largest
        self._bias = walk.bias
        self._classes = list(walk.model.nb_classes)
        self._kernels = kernels()

    def identify(self, texts: Sequence[str]) -> list[str | None]:
        """The language code of each text (``None``: no letter in its first characters).

        Parameters
        ----------
        texts : sequence of str

        Returns
        -------
        list of str or None
            What ``identify_language(text, max_chars)[0]`` gives for each text.
        """
        from py3langid.langid import LanguageIdentifier

        encode = LanguageIdentifier._encode
        out: list[str | None] = [None] * len(texts)
        batch: list[int] = []
        encoded: list[bytes] = []
        size = 0
        for d, text in enumerate(texts):
            sample = text[: self.max_chars]
            if not any(c.isalpha() for c in sample):
                continue
            data = encode(sample)
            batch.append(d)
            encoded.append(data)
            size += len(data) + 1
            if size >= self.batch_bytes:
                self._classify(batch, encoded, out)
                batch, encoded, size = [], [], 0
        if batch:
            self._classify(batch, encoded, out)
        return out

    def feature_counts(self, encoded: list[bytes]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The automaton's features of each byte string and their counts, in py3langid's
        order (``py3langid.langid.visit_counts``: first occurrence).

        Parameters
        ----------
        encoded : list of bytes
            Texts as py3langid encodes them (``LanguageIdentifier._encode``).

        Returns
        -------
        ids, counts : ndarray of int32
            Text ``i``'s features and their counts are ``ids[bounds[i]:bounds[i + 1]]``
            and ``counts[...]``.
        bounds : ndarray of int64
            ``len(encoded) + 1`` offsets.

        Examples
        --------
        >>> ids, counts, bounds = BatchLanguageIdentifier().feature_counts([b"the the", b""])
        >>> bounds.tolist(), counts.tolist()
        ([0, 3, 3], [1, 1, 1])
        """
        lengths = np.fromiter(map(len, encoded), dtype=np.int64, count=len(encoded))
        sep = bytes([_SEPARATOR])
        b = np.frombuffer(sep + sep.join(encoded), dtype=np.uint8)  # each text after one
        starts = np.cumsum(lengths + 1) - lengths
        k = self._kernels
        feature = k.walk(b, self._transitions, self._root, self.depth, CHAINS)
        return k.count(feature, starts, lengths, len(self._table))  # type: ignore[no-any-return]

    def _classify(self, batch: list[int], encoded: list[bytes], out: list[str | None]) -> None:
        ids, count, bounds = self.feature_counts(encoded)
        lengths = np.fromiter(map(len, encoded), dtype=np.int64, count=len(encoded))
        sure = self._certain(lengths, count, ids, bounds, out, batch)
        model = self._model
        for i, d in enumerate(batch):
            if sure[i]:
                continue
            lo, hi = bounds[i], bounds[i + 1]
            if hi > lo:  # py3langid's _sparse_score
                counts = count[lo:hi].astype(np.float32)
                scores = np.log1p(counts) @ self._table[ids[lo:hi]] + model.nb_pc
            else:
                scores = np.zeros(len(self._classes), dtype=np.float32)
            scores *= 1.0 / math.sqrt(int(lengths[i]) or 1)  # py3langid's _decide
            np.exp(scores - scores.max(), out=scores)
            scores /= scores.sum()
            for a, c in model._alias_pairs:
                scores[a] += scores[c]
                scores[c] = 0.0
            out[d] = str(self._classes[int(scores.argmax())])

    def _certain(
        self,
        lengths: np.ndarray,
        count: np.ndarray,
        ids: np.ndarray,
        bounds: np.ndarray,
        out: list[str | None],
        batch: list[int],
    ) -> np.ndarray:
        """Decide the texts whose winner no rounding can change; a mask of them.

        The compiled product scores the batch in float32 in another order of summation
        than py3langid's (a dense product per text). Each score then lies within
        ``2 γ_(F+1) Σ|x_i t_ij|`` (Higham's bound for any order of F products summed in
        float32, u = 2^-24) of py3langid's, plus the rounding of its bias, scale and
        softmax. A text is decided when, after folding the aliased labels
        (``log(p_a + p_c)``), its best label leads every other by more than twice that
        bound plus 10^-3 (py3langid's exp and division are far more exact); the others
        go through py3langid's own arithmetic.
        """
        model = self._model
        log1p = np.log1p(np.arange(int(count.max(initial=0)) + 1, dtype=np.float32))
        # z: sum_i x_i t_ij; mass: sum_i x_i max_j |t_ij| (>= sum_i x_i |t_ij| for every j)
        z, mass = self._kernels.score(ids, count, bounds, log1p, self._table, self._largest)
        scale = 1.0 / np.sqrt(np.maximum(lengths, 1).astype(np.float64))
        z = (z.astype(np.float64) + model.nb_pc) * scale[:, None]
        f = np.diff(bounds).astype(np.float64)
        bound = scale * (4 * (f + 2) * _U * mass + 4 * _U * self._bias) + 4 * _U * np.abs(z).max(
            axis=1
        )
        for a, c in model._alias_pairs:
            z[:, a] = np.logaddexp(z[:, a], z[:, c])
            z[:, c] = -np.inf
        rows = np.arange(len(z))
        best = z.argmax(axis=1)
        top = z[rows, best].copy()
        z[rows, best] = -np.inf
        sure = (f > 0) & (top - z.max(axis=1) > 2 * bound + 1e-3)
        for i in np.flatnonzero(sure).tolist():
            out[batch[i]] = str(self._classes[best[i]])
        return sure


def _walk(b: np.ndarray, transitions: np.ndarray, root: int, depth: int, chains: int) -> np.ndarray:
    """The feature of each byte of ``b`` (-1: none) on the automaton's walk from the root.

    ``chains`` stretches of ``b`` are walked in lockstep (independent loads, so their
    cache misses overlap); each starts from the root ``depth - 1`` bytes before its
    first byte, which gives the state the whole walk has there (it depends only on the
    last ``depth`` bytes). An entry of ``transitions`` (at the current state's row plus
    the byte) holds the next state's row in its low 32 bits and its feature plus one in
    the high ones.
    """
    n = len(b)
    feature = np.empty(n, dtype=np.int32)
    if n == 0:
        return feature
    size = (n + chains - 1) // chains  # bytes of each stretch; the last may be shorter
    whole = n // size  # stretches of `size` bytes
    row = np.empty(whole + 1, dtype=np.int64)
    for k in range(whole + 1):
        row[k] = root
        for p in range(max(0, k * size - depth + 1), min(k * size, n)):
            row[k] = transitions[row[k] + b[p]] & 0xFFFFFFFF
    for s in range(size):
        for k in range(whole):
            p = k * size + s
            e = transitions[row[k] + b[p]]
            row[k] = e & 0xFFFFFFFF
            feature[p] = (e >> 32) - 1
    for p in range(whole * size, n):
        e = transitions[row[whole] + b[p]]
        row[whole] = e & 0xFFFFFFFF
        feature[p] = (e >> 32) - 1
    return feature


def _count(
    feature: np.ndarray, starts: np.ndarray, lengths: np.ndarray, n_features: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each text's features (``feature[starts[i]:starts[i] + lengths[i]]``) and their
    counts, in order of first occurrence; see :meth:`BatchLanguageIdentifier.
    feature_counts`. ``slot[f]`` is where feature ``f`` was last listed: before the
    current text's first place, it is not yet in the text (no reset between texts)."""
    n = len(starts)
    ids = np.empty(len(feature), dtype=np.int32)
    counts = np.empty(len(feature), dtype=np.int32)
    bounds = np.empty(n + 1, dtype=np.int64)
    slot = np.full(n_features, -1, dtype=np.int32)
    k = 0
    for i in range(n):
        bounds[i] = k
        for p in range(starts[i], starts[i] + lengths[i]):
            f = feature[p]
            if f >= 0:
                at = slot[f]
                if at < bounds[i]:
                    slot[f] = k
                    ids[k] = f
                    counts[k] = 1
                    k += 1
                else:
                    counts[at] += 1
    bounds[n] = k
    return ids[:k].copy(), counts[:k].copy(), bounds


def _score(
    ids: np.ndarray,
    counts: np.ndarray,
    bounds: np.ndarray,
    log1p: np.ndarray,
    table: np.ndarray,
    largest: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """Each text's ``sum_i log1p(c_i) t_i`` in float32 (any order of summation) and
    ``sum_i log1p(c_i) largest_i`` in float64."""
    n = len(bounds) - 1
    labels = table.shape[1]
    z = np.zeros((n, labels), dtype=np.float32)
    mass = np.zeros(n, dtype=np.float64)
    for i in range(n):
        acc = z[i]
        m = 0.0
        for j in range(bounds[i], bounds[i + 1]):
            f = ids[j]
            x = log1p[counts[j]]
            row = table[f]
            for c in range(labels):
                acc[c] += x * row[c]
            m += x * largest[f]
        mass[i] = m
    return z, mass


_FNV_OFFSET = 14695981039346656037
_FNV_PRIME = 1099511628211
_SPACE = 0x20


def _index(
    buf: np.ndarray,
    starts: np.ndarray,
    lengths: np.ndarray,
    slots: np.ndarray,
    keys: np.ndarray,
    arena: np.ndarray,
    size: int,
    used: int,
) -> tuple[Any, ...]:
    """The memo's index of every chunk of ``buf`` (runs of bytes other than a space) of
    each text (``buf[starts[i]:starts[i] + lengths[i]]``), adding the new chunks.

    Returns the chunks' indexes, each text's offsets into them and the memo's arrays
    (:class:`ChunkTable`), grown by doubling where they had to be: the table stays at
    most half full.
    """
    n_texts = len(starts)
    ids = np.empty(len(buf) // 2 + 1, dtype=np.int64)
    bounds = np.empty(n_texts + 1, dtype=np.int64)
    mask = len(slots) - 1
    k = 0
    for d in range(n_texts):
        bounds[d] = k
        p = starts[d]
        end = p + lengths[d]
        while p < end:
            if buf[p] == _SPACE:
                p += 1
                continue
            q = p
            h = np.uint64(_FNV_OFFSET)
            while q < end and buf[q] != _SPACE:
                h = (h ^ np.uint64(buf[q])) * np.uint64(_FNV_PRIME)
                q += 1
            n = q - p
            key = np.int64(h)
            i = np.int64(h & np.uint64(mask))
            while True:
                s = slots[i]
                if s < 0 or s >= size:  # a new chunk (a slot past size: left by a call
                    # whose grown arrays were not kept, e.g. interrupted; free)
                    if size == len(keys):
                        bigger = np.empty((2 * size, 3), dtype=np.int64)
                        bigger[:size] = keys
                        keys = bigger
                    while used + n + 1 > len(arena):
                        longer = np.empty(2 * len(arena), dtype=np.uint8)
                        longer[:used] = arena[:used]
                        arena = longer
                    arena[used : used + n] = buf[p:q]
                    arena[used + n] = _SPACE
                    keys[size, 0] = key
                    keys[size, 1] = used
                    keys[size, 2] = n
                    used += n + 1
                    s = size
                    slots[i] = s
                    size += 1
                    if 2 * size > len(slots):  # rehash into twice the slots
                        slots = np.full(2 * len(slots), -1, dtype=np.int64)
                        mask = len(slots) - 1
                        for t in range(size):
                            j = np.int64(np.uint64(keys[t, 0]) & np.uint64(mask))
                            while slots[j] >= 0:
                                j = (j + 1) & mask
                            slots[j] = t
                    break
                if keys[s, 0] == key and keys[s, 2] == n:
                    a = keys[s, 1]
                    same = True
                    for m in range(n):
                        if arena[a + m] != buf[p + m]:
                            same = False
                            break
                    if same:
                        break
                i = (i + 1) & mask
            ids[k] = s
            k += 1
            p = q
    bounds[n_texts] = k
    return ids[:k], bounds, slots, keys, arena, size, used


def _sort_chunks(arena: np.ndarray, keys: np.ndarray, first: int, size: int) -> np.ndarray:
    """The kind of each chunk from ``first`` to ``size`` of the memo: :data:`WORD_CHUNK`
    (ASCII letters and digits or basic Cyrillic letters only, at least
    :data:`MIN_TERM_LENGTH` characters, not all digits: ``str.isalnum`` holds, and the
    regular expression of :func:`extract.tokens.words` finds the chunk itself),
    :data:`SHORT_CHUNK` (such a chunk too short, or all digits: no term) or
    :data:`OTHER_CHUNK` (anything else: Python reads it)."""
    kind = np.empty(size - first, dtype=np.int8)
    for s in range(first, size):
        p = keys[s, 1]
        end = p + keys[s, 2]
        chars = 0
        digits = 0
        simple = True
        while p < end:
            b = arena[p]
            if b < 0x80:  # in a chunk: an ASCII letter or digit, or the apostrophe
                if b == 0x27:
                    simple = False
                    break
                if 0x30 <= b <= 0x39:
                    digits += 1
                p += 1
            elif p + 1 < end and (
                (b == 0xD0 and 0x80 <= arena[p + 1] <= 0xBF)
                or (b == 0xD1 and 0x80 <= arena[p + 1] <= 0x9F)
            ):  # U+0400 to U+045F: letters
                p += 2
            else:
                simple = False
                break
            chars += 1
        if not simple:
            kind[s - first] = OTHER_CHUNK
        elif chars < MIN_TERM_LENGTH or digits == chars:
            kind[s - first] = SHORT_CHUNK
        else:
            kind[s - first] = WORD_CHUNK
    return kind


def _tally(
    chunk_ids: np.ndarray,
    bounds: np.ndarray,
    term_of: np.ndarray,
    seen: np.ndarray,
    position: int,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Each text's terms (``term_of`` its chunks: a term's index, or none, or several
    words) and their counts, in order of first occurrence, and whether it has a chunk of
    several words. ``seen[t]`` is the place where term ``t`` was last listed, counted
    from ``position`` on (places of earlier calls are smaller, so nothing is reset)."""
    n = len(bounds) - 1
    ids = np.empty(len(chunk_ids), dtype=np.int64)
    counts = np.empty(len(chunk_ids), dtype=np.int64)
    term_bounds = np.empty(n + 1, dtype=np.int64)
    several = np.zeros(n, dtype=np.bool_)
    k = 0
    for d in range(n):
        term_bounds[d] = k
        for j in range(bounds[d], bounds[d + 1]):
            t = term_of[chunk_ids[j]]
            if t >= 0:
                at = seen[t] - position
                if at < term_bounds[d]:
                    seen[t] = position + k
                    ids[k] = t
                    counts[k] = 1
                    k += 1
                else:
                    counts[at] += 1
            elif t == _SEVERAL:
                several[d] = True
    term_bounds[n] = k
    return ids[:k], counts[:k], term_bounds, several


class _Counted(NamedTuple):
    counts: list[dict[str, int]]
    several: np.ndarray  # bool per text: a chunk of several words


class ChunkTable(NamedTuple):
    """A memo of chunks for the compiled passes: an open-addressing hash table."""

    slots: np.ndarray  # int64, a power of two of them: a chunk's index or -1 (empty)
    keys: np.ndarray  # int64 (chunks, 3): FNV-1a hash, start in the arena, length
    arena: np.ndarray  # uint8: every chunk's bytes, each followed by a space
    size: int  # chunks
    used: int  # bytes of the arena

    @classmethod
    def empty(cls) -> ChunkTable:
        return cls(
            slots=np.full(1 << 10, -1, dtype=np.int64),
            keys=np.empty((1 << 9, 3), dtype=np.int64),
            arena=np.empty(1 << 12, dtype=np.uint8),
            size=0,
            used=0,
        )


class _Kernels(NamedTuple):
    walk: Any
    count: Any
    score: Any
    index: Any
    sort_chunks: Any
    tally: Any


@functools.cache
def kernels() -> _Kernels:
    """:func:`_walk`, :func:`_count`, :func:`_score`, :func:`_index`,
    :func:`_sort_chunks` and :func:`_tally` compiled by numba (without the GIL; cached on
    disk beside this module, so only the first process compiles them)."""
    import numba

    jit = numba.njit(cache=True, nogil=True)
    return _Kernels(
        walk=jit(_walk),
        count=jit(_count),
        score=numba.njit(cache=True, nogil=True, fastmath=True)(_score),
        index=jit(_index),
        sort_chunks=jit(_sort_chunks),
        tally=jit(_tally),
    )


class _WalkTables(NamedTuple):
    model: Any
    root: int
    transitions: np.ndarray
    table: np.ndarray
    largest: np.ndarray
    bias: float


@functools.cache
def walk_tables() -> _WalkTables:
    """The read-only tables of :class:`BatchLanguageIdentifier`, made once per process
    from py3langid's model (itself loaded once, :mod:`extract.language`): transitions
    that give, in one load, the next state's row and its feature (one cache line a byte,
    not two); the model's table in float32 and each feature's largest magnitude."""
    from extract.language import identifier

    model = identifier()
    nextmove = np.asarray(model.tk_nextmove).view(np.int32)
    row = np.asarray(model.tk_row, dtype=np.int64) << 8
    out = np.asarray(model.tk_output, dtype=np.int64)
    if nextmove.reshape(-1, 256)[:, _SEPARATOR].any() or out[0] >= 0:
        raise RuntimeError(
            "py3langid's model changed: byte 0xff no longer leads back to its root; "
            "pin py3langid to a version whose model the batch identifier knows"
        )
    transitions = row.take(nextmove)
    transitions |= (out.take(nextmove) + 1) << 32
    table = np.asarray(model.nb_ptc, dtype=np.float32)
    tables = _WalkTables(
        model=model,
        root=int(row[0]),
        transitions=transitions,
        table=table,
        largest=np.abs(table).max(axis=1).astype(np.float64),  # max_j |t_ij|
        bias=float(np.abs(model.nb_pc).max()),
    )
    for array in (tables.transitions, tables.table, tables.largest):
        array.flags.writeable = False
    return tables


_DEPTH = 6
"""Bytes of the deepest node of py3langid's trie (its longest n-gram)."""

CHAINS = 16
"""Stretches of a batch the compiled walk follows at once."""

_U = 2.0**-24
"""The unit roundoff of float32."""

_SEPARATOR = 0xFF
"""A byte of no UTF-8 text and of no n-gram of py3langid's model: from every state of its
automaton it leads to the root."""
