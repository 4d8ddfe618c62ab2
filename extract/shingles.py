"""Word shingles hashed to 64-bit integers (seed 001: Tsimbalov & Zolotarev 2016).

A *k-shingle* is a run of ``k`` consecutive tokens (Broder 1997). Each shingle is hashed to
an unsigned 64-bit integer and a document is represented by the sorted array of its
distinct shingle hashes (``numpy.uint64``).

Hashing. Every token is hashed once with XXH3-64 (Collet; passes SMHasher). For ``k = 1``
the shingle hash is XXH3-64 of the token with seed 1. For ``k > 1`` the token hashes
``t_0 .. t_{k-1}`` of a window are combined like a Rabin–Karp fingerprint over the token
alphabet, ``h = (((k·M + t_0)·M + t_1)·M + ...) mod 2**64`` with an odd multiplier ``M``,
then passed through the MurmurHash3 64-bit finaliser ``fmix64`` (a bijection with full
avalanche), all vectorised with numpy. Two different windows collide only when their
token-hash differences cancel, probability about 2**-64 per pair for random token hashes,
so over the ~10**7 distinct shingles of the shared corpora the expected number of
collisions is ~10**-5 (the seed's Table 3; checked in ``bench/collisions.py``).

Time O(n·k) vectorised for n tokens (one C hash call per token); memory O(n).
:class:`Shingler` shingles many texts with a bounded memo of word → hash of its stem, so
that each distinct word is stemmed and hashed once per run (all 21,578 Reuters stories,
2.8 M words, in about a second on one core).

References
----------
A. Z. Broder, *On the resemblance and containment of documents*, SEQUENCES 1997.
Yu. Tsimbalov, O. Zolotarev, *The shingle method* (seed 001_05c19045332a695a.txt), 2016.
Y. Collet, *xxHash: XXH3*, https://github.com/Cyan4973/xxHash.
A. Appleby, *MurmurHash3* ``fmix64``, https://github.com/aappleby/smhasher.

Examples
--------
>>> h = shingle_hashes("the cat sat on the mat", k=2, stopwords=False)
>>> h.dtype, len(h)
(dtype('uint64'), 5)
>>> bool((shingle_hashes("The CAT sat on the mat.", k=2, stopwords=False) == h).all())
True
>>> len(shingle_hashes("go go go go", k=1)), len(shingle_hashes("", k=3))
(1, 0)
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from itertools import repeat

import numpy as np
import xxhash

from core import defaults as D
from extract.tokens import memo_missing, stem_words, stopwords_for, words

__all__ = [
    "HASH_NAME",
    "Shingler",
    "fmix64",
    "shingle_hashes",
    "shingle_hashes_from_tokens",
    "token_hashes",
]

HASH_NAME = "xxh3_64+fmix64"
"""Name of the shingle hash scheme (stored beside shingle sets that must stay comparable)."""

_M = np.uint64(0x9E3779B97F4A7C15)  # odd: golden-ratio multiplier
_C1 = np.uint64(0xFF51AFD7ED558CCD)
_C2 = np.uint64(0xC4CEB9FE1A85EC53)
_S33 = np.uint64(33)
_EMPTY = np.empty(0, dtype=np.uint64)
_xxh3 = xxhash.xxh3_64_intdigest


def fmix64(h: np.ndarray) -> np.ndarray:
    """MurmurHash3's 64-bit finaliser, vectorised (a bijection of ``uint64``).

    Examples
    --------
    >>> int(fmix64(np.array([0, 1], dtype=np.uint64))[1])
    12994781566227106604
    """
    h = h ^ (h >> _S33)
    h = h * _C1
    h = h ^ (h >> _S33)
    h = h * _C2
    return h ^ (h >> _S33)


def token_hashes(tokens: Sequence[str]) -> np.ndarray:
    """XXH3-64 (seed 0) of each token, in order, as ``uint64``.

    Examples
    --------
    >>> token_hashes(["a", "b"]).shape
    (2,)
    """
    return np.fromiter(map(_xxh3, tokens), dtype=np.uint64, count=len(tokens))


def shingle_hashes_from_tokens(tokens: Sequence[str], k: int = D.SHINGLE_K) -> np.ndarray:
    """The sorted distinct 64-bit hashes of the k-word shingles of a token sequence.

    Parameters
    ----------
    tokens : sequence of str
        Tokens in text order (see :func:`extract.tokens.tokenize`).
    k : int
        Words per shingle, ``k >= 1``. A text with fewer than ``k`` (but at least one) tokens
        has one shingle: all its tokens.

    Returns
    -------
    numpy.ndarray of uint64
        Sorted, distinct.

    Raises
    ------
    ValueError
        ``k < 1``.

    Examples
    --------
    >>> shingle_hashes_from_tokens(["a", "b", "a", "b"], k=2).size
    2
    >>> shingle_hashes_from_tokens(["a"], k=3).size
    1
    """
    _check_k(k)
    if len(tokens) == 0:
        return _EMPTY.copy()
    if k == 1:
        distinct = set(tokens)
        return _sorted(map(_xxh3, distinct, repeat(1)), len(distinct))
    return _combine(token_hashes(tokens), k)


def _check_k(k: int) -> None:
    if k < 1:
        raise ValueError(f"k={k}: a shingle has at least one word; set [shingle] k >= 1")


def _sorted(values: Iterable[int], count: int) -> np.ndarray:
    out = np.fromiter(values, dtype=np.uint64, count=count)
    out.sort()
    return out


def _combine(t: np.ndarray, k: int) -> np.ndarray:
    """Distinct shingle hashes of k >= 2 from the token hashes ``t`` (non-empty)."""
    n = len(t)
    if n < k:
        k = n
    m = n - k + 1
    with np.errstate(over="ignore"):
        h = np.full(m, k, dtype=np.uint64)
        for j in range(k):
            h = h * _M + t[j : j + m]
        h = fmix64(h)
    return np.unique(h)


class Shingler:
    """Shingle many texts with one set of options, memoising each word's hash.

    Gives exactly :func:`shingle_hashes` for every text, faster on a corpus: each distinct
    word is normalised-stemmed-hashed once, then looked up.

    Parameters
    ----------
    k : int
        Words per shingle.
    language : str, optional
        ISO 639-1 code for stop words and stemming; ``None`` = by script (en + ru).
    stem : bool
        Snowball-stem the words.
    stopwords : bool
        Drop the stop words.
    max_memo : int
        The memo is emptied when it would hold more words than this (bounds memory).

    Raises
    ------
    ValueError
        ``k < 1``.

    Examples
    --------
    >>> sh = Shingler(k=2, language="en")
    >>> [len(h) for h in sh.hashes_many(["Cats sat on mats", "the cat sat"])]
    [2, 1]
    >>> bool(np.array_equal(sh.hashes("cat sat"), shingle_hashes("cat sat", 2, "en")))
    True
    """

    def __init__(
        self,
        *,
        k: int = D.SHINGLE_K,
        language: str | None = None,
        stem: bool = D.SHINGLE_STEM,
        stopwords: bool = D.SHINGLE_STOPWORDS,
        max_memo: int = 1 << 20,
    ) -> None:
        _check_k(k)
        self.k = k
        self.language = language
        self.stem = stem
        self.stopwords = stopwords
        self.max_memo = max_memo
        self._stop = stopwords_for(language) if stopwords else frozenset()
        self._seed = 1 if k == 1 else 0
        self._memo: dict[str, int | None] = {}

    def _fill(self, distinct: set[str]) -> None:
        memo = self._memo
        missing = memo_missing(memo, distinct, self.max_memo)  # type: ignore[arg-type]
        if not missing:
            return
        stop = self._stop
        if stop:
            memo.update(dict.fromkeys(missing.intersection(stop)))  # stop word -> None
            missing.difference_update(stop)
        miss = list(missing)
        stems = stem_words(miss, self.language) if self.stem and miss else miss
        memo.update(zip(miss, map(_xxh3, stems, repeat(self._seed)), strict=True))

    def hashes(self, text: str) -> np.ndarray:
        """The sorted distinct shingle hashes of one text (``uint64``)."""
        toks = words(text)
        distinct = set(toks)
        self._fill(distinct)
        memo = self._memo
        if self.k == 1:
            values = {memo[w] for w in distinct}
            values.discard(None)
            return _sorted(values, len(values))  # type: ignore[arg-type]
        hashed = [v for v in map(memo.__getitem__, toks) if v is not None]
        if not hashed:
            return _EMPTY.copy()
        return _combine(np.array(hashed, dtype=np.uint64), self.k)

    def hashes_many(self, texts: Iterable[str]) -> list[np.ndarray]:
        """:meth:`hashes` of every text, in order."""
        return [self.hashes(text) for text in texts]


def shingle_hashes(
    text: str,
    k: int = D.SHINGLE_K,
    language: str | None = None,
    *,
    stem: bool = D.SHINGLE_STEM,
    stopwords: bool = D.SHINGLE_STOPWORDS,
) -> np.ndarray:
    """The sorted distinct 64-bit hashes of the k-word shingles of a text.

    Parameters
    ----------
    text : str
        Plain text.
    k : int
        Words per shingle (``[shingle] k``).
    language : str, optional
        ISO 639-1 code for stop words and stemming (see :func:`extract.tokens.tokenize`).
    stem : bool
        Snowball-stem the words first (``[shingle] stem``).
    stopwords : bool
        Drop stop words first (``[shingle] stopwords``).

    Returns
    -------
    numpy.ndarray of uint64
        Sorted, distinct; empty for a text without words.

    Examples
    --------
    >>> a = shingle_hashes("Universities of Russia", k=1, language="en")
    >>> b = shingle_hashes("university, russia!", k=1, language="en")
    >>> bool(np.array_equal(a, b))
    True
    """
    return Shingler(k=k, language=language, stem=stem, stopwords=stopwords).hashes(text)
