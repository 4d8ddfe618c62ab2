"""The one interface of every near-duplicate method: documents → signatures → pairs → groups.

A method (one module each in :mod:`dedup`) is an estimator in scikit-learn's
manner (:class:`cluster.base.Estimator`: parameters found by introspection, ``repr``,
``get_params``/``set_params``): ``__init__`` stores keyword-only parameters,
:meth:`NearDuplicateMethod.fit` validates them and sets

``signatures_``
    a :class:`Signatures`: per document, the uint64 *features* of its signature (the
    hashed keys a document is filed under: an MD5, six supershingles, a bottom-k sketch
    ...), empty when the document has none (empty documents are never duplicates);
``pairs_``
    the duplicate pairs, an ``(m, 2)`` int64 array, ``i < j``, sorted, unique;
``n_documents_``, ``seconds_``.

:meth:`NearDuplicateMethod.groups` turns the pairs into disjoint groups with a canonical
document (:mod:`dedup.groups`).

Documents reach a method as a :class:`Corpus`: texts (and languages) and/or stored
shingle hashes. Methods of ``input = "text"`` read words and sentences and need text;
methods of ``input = "shingles"`` shingle the text with their own ``k`` when there is
text, and otherwise use the stored shingles as they are (whatever their k). Tokens come
from :func:`extract.tokens.tokenize` and shingles from :func:`extract.shingles.shingle_hashes`;
the corpus caches them, so several methods over one corpus tokenise once.

Most methods find pairs without comparing all pairs: documents are filed in a dict of
signature key → documents (:func:`pairs_from_keys`, a sort over all (document, key)
rows, O(F log F) for F keys), and only documents sharing a key are paired (then, for
some methods, verified). A method that must compare more says so in ``comparison``.

Examples
--------
>>> import numpy as np
>>> feats = [np.array([1, 2], dtype=np.uint64), np.array([2], dtype=np.uint64),
...          np.array([], dtype=np.uint64), np.array([1, 2], dtype=np.uint64)]
>>> pairs_from_keys(feats).tolist()
[[0, 1], [0, 3], [1, 3]]
>>> pairs_from_keys(feats, min_shared=2).tolist()
[[0, 3]]
"""

from __future__ import annotations

import hashlib
import time
import zlib
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Self

import numpy as np
import xxhash

from cluster.base import Estimator
from core.exceptions import ParameterError
from dedup.groups import Group, build_groups, choose_canonical, make_groups

EMPTY = np.zeros(0, dtype=np.uint64)
_PAIRS_PER_STEP = 4_000_000


def hash64(value: str | bytes, seed: int = 0) -> int:
    """A 64-bit xxHash of a string (UTF-8) or bytes: the key of a signature part."""
    data = value.encode("utf-8") if isinstance(value, str) else value
    return xxhash.xxh64_intdigest(data, seed)


def md5_key(value: str) -> int:
    """The first 8 bytes of the MD5 digest of ``value`` (UTF-8), as an integer key."""
    return int.from_bytes(hashlib.md5(value.encode("utf-8")).digest()[:8], "little")


def sha1_key(value: str) -> int:
    """The first 8 bytes of the SHA-1 digest of ``value`` (UTF-8), as an integer key."""
    return int.from_bytes(hashlib.sha1(value.encode("utf-8")).digest()[:8], "little")


def crc32_key(value: str) -> int:
    """The CRC32 of ``value`` (UTF-8), as an integer key (seed 002's signature hash)."""
    return zlib.crc32(value.encode("utf-8"))


def keys_array(keys: Sequence[int]) -> np.ndarray:
    """A uint64 array of integer keys (any Python ints below 2**64)."""
    return np.array(list(keys), dtype=np.uint64) if len(keys) else EMPTY


class Corpus:
    """The documents a method sees: texts with languages, and/or stored shingles.

    Parameters
    ----------
    texts : sequence of str or None, optional
        One text per document (``None`` or ``""`` for a document without text).
    languages : sequence of str or None, optional
        ISO 639-1 code per document (``None``: unknown).
    shingles : sequence of ndarray or None, optional
        Stored uint64 shingle hashes per document, used by shingle methods when a
        document has no text.
    shingle_k : int, optional
        The ``k`` the stored shingles were made with (reported, not used).

    Raises
    ------
    ParameterError
        Neither texts nor shingles, or sequences of different lengths.

    Examples
    --------
    >>> c = Corpus(["One text here.", ""])
    >>> len(c), c.has_text(1)
    (2, False)
    """

    def __init__(
        self,
        texts: Sequence[str | None] | None = None,
        *,
        languages: Sequence[str | None] | None = None,
        shingles: Sequence[np.ndarray | None] | None = None,
        shingle_k: int | None = None,
    ) -> None:
        if texts is None and shingles is None:
            raise ParameterError("a corpus needs texts or shingles")
        n = len(texts) if texts is not None else len(shingles or ())
        if shingles is not None and len(shingles) != n:
            raise ParameterError(f"{len(shingles)} shingle arrays for {n} texts")
        if languages is not None and len(languages) != n:
            raise ParameterError(f"{len(languages)} languages for {n} documents")
        self._n = n
        self._texts: list[str] = [t or "" for t in texts] if texts is not None else [""] * n
        self._languages: list[str | None] = list(languages) if languages else [None] * n
        self._stored = list(shingles) if shingles is not None else None
        self.shingle_k = shingle_k
        self._tokens: dict[tuple[bool, bool], list[list[str]]] = {}
        self._shingles: dict[int, list[np.ndarray]] = {}
        self._sentences: list[list[list[str]]] | None = None
        self._stems: dict[str | None, dict[str, str]] = {}

    def __len__(self) -> int:
        return self._n

    def text(self, i: int) -> str:
        """Document ``i``'s text ('' when it has none)."""
        return self._texts[i]

    def language(self, i: int) -> str | None:
        """Document ``i``'s language code, or ``None``."""
        return self._languages[i]

    def has_text(self, i: int) -> bool:
        """Whether document ``i`` has non-blank text."""
        return bool(self._texts[i].strip())

    @property
    def has_stored_shingles(self) -> bool:
        """Whether any document has stored shingles."""
        return self._stored is not None and any(s is not None and len(s) for s in self._stored)

    @property
    def any_text(self) -> bool:
        """Whether any document has text."""
        return any(t.strip() for t in self._texts)

    def lengths(self) -> np.ndarray:
        """Text length in characters (or the number of stored shingles without text)."""
        out = np.fromiter((len(t) for t in self._texts), dtype=np.int64, count=self._n)
        if self._stored is not None:
            for i, s in enumerate(self._stored):
                if out[i] == 0 and s is not None:
                    out[i] = len(s)
        return out

    def tokens(self, *, stem: bool = False, drop_stopwords: bool = False) -> list[list[str]]:
        """Every document's word tokens (lower case), cached per option pair.

        Parameters
        ----------
        stem : bool
            Snowball-stem each word (the document's language).
        drop_stopwords : bool
            Leave out the language's stop words.
        """
        key = (stem, drop_stopwords)
        if key not in self._tokens:
            if key == (False, False):
                from extract.tokens import tokenize

                self._tokens[key] = [
                    tokenize(t, lang) if t.strip() else []
                    for t, lang in zip(self._texts, self._languages, strict=True)
                ]
            else:
                # derived from the plain tokens: the same result as
                # tokenize(text, language, stem=stem, stopwords=drop_stopwords)
                out = []
                for toks, lang in zip(self.tokens(), self._languages, strict=True):
                    if drop_stopwords:
                        stop = self.stopwords(lang)
                        toks = [t for t in toks if t not in stop]
                    if stem:
                        toks = self.stems(toks, lang)
                    out.append(toks)
                self._tokens[key] = out
        return self._tokens[key]

    def stopwords(self, language: str | None) -> frozenset[str]:
        """The stop words of a language (:func:`extract.tokens.stopwords_for`)."""
        from extract.tokens import stopwords_for

        return stopwords_for(language)

    def stems(self, words: list[str], language: str | None) -> list[str]:
        """Snowball stems of words (as :func:`extract.tokens.tokenize` stems), cached per
        language in the corpus."""
        from extract.tokens import stemmer

        cache = self._stems.setdefault(language, {})
        new = [w for w in set(words) if w not in cache]
        if new:
            stemmed = new
            for code in [language] if language is not None else ["en", "ru"]:
                st = stemmer(code)
                if st is not None:
                    stemmed = st.stemWords(stemmed)
            cache.update(zip(new, stemmed, strict=True))
        return [cache[w] for w in words]

    def sentences(self) -> list[list[list[str]]]:
        """Every document's sentences as word tokens (:mod:`dedup.sentences`)."""
        if self._sentences is None:
            from dedup.sentences import sentence_tokens

            self._sentences = [
                sentence_tokens(t, lang) if t.strip() else []
                for t, lang in zip(self._texts, self._languages, strict=True)
            ]
        return self._sentences

    def shingles(self, k: int) -> list[np.ndarray]:
        """Every document's distinct k-word shingle hashes (uint64, sorted).

        A document with text is shingled with ``k`` over its plain tokens (no stemming,
        stop words kept; :func:`extract.shingles.shingle_hashes_from_tokens`); one without
        text gets its stored shingles.
        """
        if k not in self._shingles:
            from extract.shingles import shingle_hashes_from_tokens

            tokens = self.tokens()
            out: list[np.ndarray] = []
            for i, toks in enumerate(tokens):
                if toks:
                    h = shingle_hashes_from_tokens(toks, k)
                elif self._stored is not None and self._stored[i] is not None:
                    h = np.unique(np.asarray(self._stored[i], dtype=np.uint64))
                else:
                    h = EMPTY
                out.append(h)
            self._shingles[k] = out
        return self._shingles[k]


def as_corpus(documents: Corpus | Sequence[str]) -> Corpus:
    """A :class:`Corpus` from a corpus or a sequence of texts.

    Raises
    ------
    ParameterError
        Anything else.
    """
    if isinstance(documents, Corpus):
        return documents
    if isinstance(documents, str) or not isinstance(documents, Sequence):
        raise ParameterError("documents must be a Corpus or a sequence of texts")
    return Corpus(list(documents))


@dataclass(eq=False)
class Signatures:
    """What a method computed for each document.

    Attributes
    ----------
    features : list of ndarray of uint64
        Per document, the keys of its signature (empty: no signature, never a duplicate).
    min_common : int
        How many features a set of documents must share to be a group under ``fpmax``
        grouping (seed 003's threshold on common sketch elements).
    data : dict
        Method-specific arrays needed to decide pairs (fingerprints, weights ...).
    """

    features: list[np.ndarray]
    min_common: int = 1
    data: dict[str, Any] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.features)

    @property
    def empty(self) -> np.ndarray:
        """Boolean mask of documents without a signature."""
        return np.fromiter((len(f) == 0 for f in self.features), dtype=bool, count=len(self))


def unique_pairs(i: np.ndarray, j: np.ndarray, n: int) -> np.ndarray:
    """Sorted unique ``(min, max)`` pairs of two index arrays, self-pairs dropped."""
    i = np.asarray(i, dtype=np.int64)
    j = np.asarray(j, dtype=np.int64)
    lo, hi = np.minimum(i, j), np.maximum(i, j)
    keep = lo != hi
    codes = np.unique(lo[keep] * n + hi[keep])
    return np.column_stack([codes // n, codes % n]) if codes.size else np.zeros((0, 2), np.int64)


def pairs_from_keys(
    features: Sequence[np.ndarray],
    *,
    min_shared: int = 1,
    max_bucket: int | None = None,
    return_counts: bool = False,
) -> Any:
    """Pairs of documents that share at least ``min_shared`` keys.

    Parameters
    ----------
    features : sequence of ndarray of uint64
        Keys per document (duplicates within a document count once).
    min_shared : int
        Minimum number of shared keys.
    max_bucket : int, optional
        Keys held by more documents are skipped (their documents are not paired through
        them), bounding the quadratic cost of very common keys.
    return_counts : bool
        Also return, per pair, the number of shared keys.

    Returns
    -------
    pairs : ndarray of shape (m, 2)
    counts : ndarray of int64, only with ``return_counts``

    Notes
    -----
    One sort of all (key, document) rows: O(F log F) for F keys in total, plus the
    pairs generated inside each bucket.
    """
    n = len(features)
    empty_pairs = np.zeros((0, 2), dtype=np.int64)
    lens = np.fromiter((len(f) for f in features), dtype=np.int64, count=n)
    if n < 2 or lens.sum() == 0:
        return (empty_pairs, np.zeros(0, np.int64)) if return_counts else empty_pairs
    docs = np.repeat(np.arange(n, dtype=np.int64), lens)
    keys = np.concatenate([np.asarray(f, dtype=np.uint64) for f in features if len(f)])
    order = np.lexsort((docs, keys))
    keys, docs = keys[order], docs[order]
    fresh = np.ones(keys.shape[0], dtype=bool)
    fresh[1:] = (keys[1:] != keys[:-1]) | (docs[1:] != docs[:-1])
    keys, docs = keys[fresh], docs[fresh]
    starts = np.flatnonzero(np.r_[True, keys[1:] != keys[:-1]])
    sizes = np.diff(np.r_[starts, keys.shape[0]])
    ok = sizes >= 2
    if max_bucket is not None:
        ok &= sizes <= max_bucket
    codes: list[np.ndarray] = []
    for s in np.unique(sizes[ok]).tolist():
        a, b = np.triu_indices(s, 1)
        st = starts[ok & (sizes == s)]
        step = max(1, _PAIRS_PER_STEP // a.shape[0])
        for c in range(0, st.shape[0], step):
            block = st[c : c + step, None]
            codes.append((docs[block + a[None, :]] * n + docs[block + b[None, :]]).ravel())
    if not codes:
        return (empty_pairs, np.zeros(0, np.int64)) if return_counts else empty_pairs
    uniq, counts = np.unique(np.concatenate(codes), return_counts=True)
    keep = counts >= min_shared
    uniq, counts = uniq[keep], counts[keep]
    pairs = np.column_stack([uniq // n, uniq % n])
    return (pairs, counts) if return_counts else pairs


class NearDuplicateMethod(Estimator, ABC):
    """Base class of the near-duplicate methods (one subclass per module).

    Class attributes
    ----------------
    name : str
        Registry key, e.g. ``"a4-long-sent"``.
    label : str
        Human name, e.g. ``"A4 Long Sent"``.
    reference : str
        Where the method comes from (seed file, paper).
    input : {"text", "shingles"}
        What the method reads.
    comparison : str
        How pairs are found; says so when the method compares all pairs (of a bucket,
        of a partition) rather than only documents with equal keys.
    """

    name: ClassVar[str] = ""
    label: ClassVar[str] = ""
    reference: ClassVar[str] = ""
    input: ClassVar[str] = "text"
    comparison: ClassVar[str] = "equal signature keys (hash buckets)"

    @staticmethod
    def _check(condition: bool, message: str) -> None:
        if not condition:
            raise ParameterError(message)

    @abstractmethod
    def signatures(self, corpus: Corpus) -> Signatures:
        """Compute every document's signature."""

    def pairs(self, signatures: Signatures) -> np.ndarray:
        """Duplicate pairs from signatures; by default documents sharing a key."""
        return pairs_from_keys(signatures.features, min_shared=signatures.min_common)

    def fit(self, documents: Corpus | Sequence[str]) -> Self:
        """Compute signatures and duplicate pairs.

        Parameters
        ----------
        documents : Corpus or sequence of str

        Returns
        -------
        self

        Raises
        ------
        ParameterError
            A parameter is out of range, or the method needs text and the corpus has
            only shingles.
        """
        self.check_params()
        corpus = as_corpus(documents)
        if self.input == "text" and corpus.has_stored_shingles and not corpus.any_text:
            raise ParameterError(
                f"method {self.name!r} reads text and these documents have only shingles: "
                "run it on page units, or choose a shingle method (webometrics dedup "
                "--list-methods)"
            )
        started = time.perf_counter()
        self.n_documents_ = len(corpus)
        self.signatures_ = self.signatures(corpus)
        self.pairs_ = np.asarray(self.pairs(self.signatures_), dtype=np.int64).reshape(-1, 2)
        self.seconds_ = time.perf_counter() - started
        return self

    def groups(
        self,
        *,
        grouping: str = "components",
        canonical: str = "longest",
        lengths: np.ndarray | None = None,
        times: np.ndarray | None = None,
        max_clique_size: int = 100,
        fpmax_max_docs: int = 40,
    ) -> list[Group]:
        """Disjoint duplicate groups of the fitted corpus, each with a canonical document.

        Parameters
        ----------
        grouping : {"components", "cliques", "fpmax"}
        canonical : {"longest", "earliest"}
        lengths : ndarray, optional
            Text lengths (default: all equal, so the first member is canonical).
        times : ndarray of float, optional
            Fetch times, needed by ``earliest``.
        max_clique_size, fpmax_max_docs : int
            Bounds of the clique and FPmax groupings.

        Returns
        -------
        list of Group

        Raises
        ------
        ParameterError
            Not fitted, or a bad grouping or canonical rule.
        """
        if not hasattr(self, "pairs_"):
            raise ParameterError(f"{type(self).__name__} is not fitted: call fit() first")
        n = self.n_documents_
        members = build_groups(
            n,
            self.pairs_,
            grouping=grouping,
            features=self.signatures_.features,
            min_common=self.signatures_.min_common,
            max_clique_size=max_clique_size,
            fpmax_max_docs=fpmax_max_docs,
        )
        lens = np.zeros(n, dtype=np.int64) if lengths is None else np.asarray(lengths)
        chosen = choose_canonical(members, rule=canonical, lengths=lens, times=times)
        return make_groups(members, chosen)
