"""A memory-mapped store of MinHash signatures, and exact Jaccard of pairs from a shingle source.

For corpora whose signatures do not fit in memory (``n · num_perm`` values: 4 KiB per
document at 1,024 permutations of ``affine32``), :class:`SignatureStore` signs a *stream*
of blocks of shingle sets (:meth:`SignatureStore.write`: only one block is in memory at
a time) into a folder:

``signatures.npy``
    the ``n x num_perm`` matrix in NumPy's ``.npy`` format (the scheme's dtype, row
    ``i`` = document ``i``), appended block by block after a header that is rewritten
    with the final shape (NumPy reserves room in the header for this);
``empty.npy``, ``lengths.npy``, ``ids.npy``
    the documents without shingles, the shingles of every document, and optionally the
    caller's key of every row (document ids);
``store.json``
    the MinHash parameters (num_perm, seed, scheme, hash function), the number of
    documents and the format; written last, so a folder without it holds no store.

:meth:`SignatureStore.signatures` reopens the matrix read-only with
:func:`numpy.lib.format.open_memmap`, as a :class:`~cluster.minhash.MinHashSignatures` whose rows
the operating system pages in on demand; :meth:`SignatureStore.open` refuses a store made
with other parameters than the caller's. :class:`~cluster.LSHLink` and
:class:`~cluster.LSHLeiden` fit from such signatures (``fit(signatures=...)``) and band
them in row chunks and hash partitions (:func:`cluster.lsh.candidate_pairs`), so the
matrix is never loaded whole.

Exact Jaccard similarity (``similarity="jaccard"``) needs the shingles of the candidate
pairs, not of the whole corpus: :func:`pair_jaccard_segments` fetches them from a
:class:`ShingleSource` (a database, files) a segment of documents at a time and gives
the values :meth:`cluster.single_link.ShingleMatrix.pair_jaccard` gives over the whole
corpus (the same integer intersections and unions).

Complexity: writing O(num_perm · S) time for S shingles (that of
:meth:`~cluster.minhash.MinHasher.sign`), O(block · num_perm + n) memory, ``n · num_perm``
values on disk; :func:`pair_jaccard_segments` O(C log C + Σ fetched shingles) time for C
pairs, O(memory budget + C) memory, and fetches every needed document once per pair of
segments (once in all when the needed shingles fit in the budget).

Examples
--------
>>> import tempfile
>>> import numpy as np
>>> from cluster.minhash import MinHasher
>>> hasher = MinHasher(num_perm=16)
>>> blocks = ([np.arange(40, dtype=np.uint64), np.arange(20, 60, dtype=np.uint64)],
...           [np.empty(0, dtype=np.uint64)])
>>> folder = tempfile.TemporaryDirectory()
>>> store = SignatureStore.write(folder.name, hasher, blocks)
>>> sig = store.signatures()
>>> len(sig), sig.empty.tolist(), type(sig.hashvalues).__name__
(3, [False, False, True], 'memmap')
>>> bool(np.array_equal(sig.hashvalues, hasher.sign([*blocks[0], *blocks[1]]).hashvalues))
True
>>> del sig; folder.cleanup()
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np

from cluster.minhash import DTYPES, MinHasher, MinHashSignatures
from cluster.single_link import ShingleMatrix
from core.exceptions import DataNotFoundError, ParameterError

FORMAT = 1
"""Version of the store's layout, recorded in ``store.json``."""

_FILES = ("signatures.npy", "empty.npy", "lengths.npy", "ids.npy")


def _header(f: Any, dtype: np.dtype, shape: tuple[int, int]) -> None:
    np.lib.format.write_array_header_1_0(
        f, {"descr": np.lib.format.dtype_to_descr(dtype), "fortran_order": False, "shape": shape}
    )


class SignatureStore:
    """The MinHash signatures of a corpus in a folder, opened as a memory map.

    Parameters
    ----------
    path : str or Path
        The folder of a store written by :meth:`write`.

    Raises
    ------
    DataNotFoundError
        The folder holds no complete store (no ``store.json``).
    ParameterError
        ``store.json`` is not a store of this format, or the matrix does not match it.

    Attributes
    ----------
    path : Path
    meta : dict
        The contents of ``store.json``: ``format``, ``num_perm``, ``seed``, ``scheme``,
        ``hash_func``, ``dtype``, ``n_documents``, ``has_ids``, ``seconds``, ``created``.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        meta = _read_meta(self.path)
        if meta is None:
            raise DataNotFoundError(
                f"no signature store in {self.path} (no store.json): write one with "
                "SignatureStore.write or `webometrics cluster --signature-store DIR`"
            )
        self.meta: dict[str, Any] = meta
        if self.meta.get("format") != FORMAT:
            raise ParameterError(
                f"{self.path / 'store.json'} is not a signature store of format {FORMAT}: "
                "delete the folder and sign again"
            )
        shape = np.lib.format.open_memmap(self.path / "signatures.npy", mode="r").shape
        if shape != (self.meta["n_documents"], self.meta["num_perm"]):
            raise ParameterError(
                f"{self.path / 'signatures.npy'} holds {shape}, store.json says "
                f"{self.meta['n_documents']} x {self.meta['num_perm']}: the store is damaged; "
                "delete the folder and sign again"
            )

    @property
    def params(self) -> dict[str, Any]:
        """num_perm, seed, scheme and hash function of the signatures."""
        return {k: self.meta[k] for k in ("num_perm", "seed", "scheme", "hash_func")}

    def __len__(self) -> int:
        return int(self.meta["n_documents"])

    def __repr__(self) -> str:
        return f"SignatureStore({str(self.path)!r}, n={len(self)}, {self.params})"

    @classmethod
    def open(
        cls, path: str | Path, expect: MinHasher | dict[str, Any] | None = None
    ) -> SignatureStore:
        """Open a store, checking it was made with the expected MinHash parameters.

        Parameters
        ----------
        path : str or Path
        expect : MinHasher or dict, optional
            The parameters the caller needs (a hasher, or a dict with some of num_perm,
            seed, scheme, hash_func).

        Returns
        -------
        SignatureStore

        Raises
        ------
        DataNotFoundError
            No store in the folder.
        ParameterError
            The store was made with other parameters; the message names them.
        """
        store = cls(path)
        if expect is not None:
            _check_params(store.path, store.params, expect)
        return store

    @classmethod
    def write(
        cls,
        path: str | Path,
        hasher: MinHasher,
        blocks: Iterable[Sequence[np.ndarray]],
        *,
        ids: Sequence[int] | np.ndarray | None = None,
        n_jobs: int = 1,
        progress: Callable[[int], None] | None = None,
    ) -> SignatureStore:
        """Sign a stream of blocks of shingle sets into the folder ``path``.

        Parameters
        ----------
        path : str or Path
            The folder (created when missing). A store already there, made with the same
            parameters, is replaced; one made with other parameters is refused.
        hasher : MinHasher
        blocks : iterable of sequences of ndarray of uint64
            The documents in order, a block at a time (a generator: only one block is
            held); each block is signed with :meth:`MinHasher.sign`.
        ids : sequence of int, optional
            The caller's key of every document (e.g. database ids), kept in ``ids.npy``;
            their number must be the number of documents.
        n_jobs : int, default 1
            Threads signing each block (:meth:`MinHasher.sign`).
        progress : callable, optional
            Called with the number of documents of every block signed.

        Returns
        -------
        SignatureStore

        Raises
        ------
        ParameterError
            The folder holds a store made with other parameters, or ``ids`` do not match
            the number of documents.
        """
        folder = Path(path)
        old = _read_meta(folder)
        if old is not None:
            _check_params(folder, {k: old.get(k) for k in hasher.params}, hasher, replacing=True)
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "store.json").unlink(missing_ok=True)  # no store while it is rewritten
        dtype = np.dtype(DTYPES[hasher.scheme])
        part = folder / "signatures.npy.part"
        started = time.perf_counter()
        empties: list[np.ndarray] = []
        lengths: list[np.ndarray] = []
        n = 0
        try:
            with open(part, "wb") as f:
                _header(f, dtype, (0, hasher.num_perm))
                data_start = f.tell()
                for block in blocks:
                    sig = hasher.sign(block, n_jobs=n_jobs)
                    f.write(np.ascontiguousarray(sig.hashvalues).tobytes())
                    empties.append(sig.empty)
                    lengths.append(np.fromiter((len(s) for s in block), np.int64, len(block)))
                    n += len(block)
                    if progress is not None:
                        progress(len(block))
                f.seek(0)
                _header(f, dtype, (n, hasher.num_perm))  # NumPy leaves room for the digits
                if f.tell() != data_start:
                    raise RuntimeError("the .npy header grew when rewritten")  # never at 2^63
                f.flush()
                os.fsync(f.fileno())
            if ids is not None:
                ids = np.asarray(ids, dtype=np.int64)
                if ids.shape != (n,):
                    raise ParameterError(
                        f"{ids.shape[0]} ids for {n} signed documents: give one id per document"
                    )
            cat = lambda xs, dt: np.concatenate(xs) if xs else np.empty(0, dt)  # noqa: E731
            np.save(folder / "empty.npy", cat(empties, bool))
            np.save(folder / "lengths.npy", cat(lengths, np.int64))
            if ids is not None:
                np.save(folder / "ids.npy", ids)
            else:
                (folder / "ids.npy").unlink(missing_ok=True)
            os.replace(part, folder / "signatures.npy")
        except BaseException:
            part.unlink(missing_ok=True)
            raise
        meta = {
            "format": FORMAT,
            **hasher.params,
            "dtype": dtype.str,
            "n_documents": n,
            "has_ids": ids is not None,
            "seconds": round(time.perf_counter() - started, 3),
            "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        }
        tmp = folder / "store.json.part"
        tmp.write_text(json.dumps(meta, indent=1) + "\n")
        os.replace(tmp, folder / "store.json")
        return cls(folder)

    def signatures(self) -> MinHashSignatures:
        """The signatures, their matrix a read-only :class:`numpy.memmap` of the file.

        Returns
        -------
        MinHashSignatures
            ``hashvalues`` memory-mapped (rows read on demand), ``empty`` in memory.
        """
        hv = np.lib.format.open_memmap(self.path / "signatures.npy", mode="r")
        empty = np.load(self.path / "empty.npy")
        p = self.params
        return MinHashSignatures(hv, p["num_perm"], p["seed"], p["scheme"], p["hash_func"], empty)

    @property
    def lengths(self) -> np.ndarray:
        """Shingles of every document (duplicates within a document counted)."""
        return np.load(self.path / "lengths.npy")

    @property
    def ids(self) -> np.ndarray | None:
        """The caller's key of every row, when given to :meth:`write`."""
        return np.load(self.path / "ids.npy") if self.meta.get("has_ids") else None


def _read_meta(folder: Path) -> dict[str, Any] | None:
    path = folder / "store.json"
    if not path.is_file():
        return None
    try:
        meta = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise ParameterError(
            f"{path} cannot be read ({exc}): delete the folder and sign again"
        ) from exc
    if not isinstance(meta, dict):
        raise ParameterError(f"{path} is not a signature store: delete it and sign again")
    return meta


def _check_params(
    folder: Path,
    have: dict[str, Any],
    expect: MinHasher | dict[str, Any],
    replacing: bool = False,
) -> None:
    want = expect.params if isinstance(expect, MinHasher) else dict(expect)
    diffs = [f"{k}={have.get(k)!r} (wanted {v!r})" for k, v in want.items() if have.get(k) != v]
    if diffs:
        action = "replace it" if replacing else "use it"
        raise ParameterError(
            f"the signature store {folder} was made with other MinHash parameters: "
            f"{', '.join(diffs)}; cannot {action}: choose another folder (e.g. one per "
            f"parameter set), or delete {folder} to sign again with these parameters"
        )


@runtime_checkable
class ShingleSource(Protocol):
    """Shingle sets fetched on demand (from a database, files), for exact Jaccard.

    Attributes
    ----------
    lengths : ndarray of int64, shape (n_documents,)
        Shingles of every document (an upper bound is enough: it sizes the segments).
    """

    lengths: np.ndarray

    def __len__(self) -> int: ...

    def fetch(self, index: np.ndarray) -> list[np.ndarray]:
        """The shingle hashes (uint64) of documents ``index`` (sorted, distinct), in order."""
        ...


class ListShingles:
    """A :class:`ShingleSource` over shingle sets in memory (tests, small corpora).

    Parameters
    ----------
    shingle_sets : sequence of ndarray of uint64

    Attributes
    ----------
    n_fetched : int
        Documents fetched so far.
    """

    def __init__(self, shingle_sets: Sequence[np.ndarray]) -> None:
        self._sets = shingle_sets
        self.lengths = np.fromiter((len(s) for s in shingle_sets), np.int64, len(shingle_sets))
        self.n_fetched = 0

    def __len__(self) -> int:
        return len(self._sets)

    def fetch(self, index: np.ndarray) -> list[np.ndarray]:
        """The shingle sets of documents ``index``."""
        self.n_fetched += len(index)
        return [np.asarray(self._sets[int(d)], dtype=np.uint64) for d in index]


_BYTES_PER_SHINGLE = 48
"""Memory per fetched shingle while a segment's :class:`ShingleMatrix` is built (the
values, their sort and inverse, the sparse matrix), an upper estimate."""


def pair_jaccard_segments(
    source: ShingleSource,
    i: np.ndarray,
    j: np.ndarray,
    memory_bytes: int = 256 << 20,
) -> np.ndarray:
    """Exact Jaccard similarity of document pairs whose shingles are fetched on demand.

    The documents are cut into contiguous segments of about
    ``memory_bytes / 96`` shingles (by :attr:`ShingleSource.lengths`); the pairs are
    grouped by the segments of their two documents, and for every group the documents
    it needs (of at most two segments) are fetched and compared with
    :meth:`ShingleMatrix.pair_jaccard` over them alone.

    Parameters
    ----------
    source : ShingleSource
    i, j : ndarray of int, same shape
    memory_bytes : int, default 256 MiB
        Memory of the fetched shingles and their matrix.

    Returns
    -------
    ndarray of float64
        Equal to ``ShingleMatrix.from_sets(all sets).pair_jaccard(i, j)``.

    Examples
    --------
    >>> import numpy as np
    >>> sets = [np.arange(10, dtype=np.uint64), np.arange(5, 15, dtype=np.uint64)]
    >>> pair_jaccard_segments(ListShingles(sets), np.array([0]), np.array([1])).tolist()
    [0.3333333333333333]
    """
    i = np.asarray(i, dtype=np.int64)
    j = np.asarray(j, dtype=np.int64)
    out = np.zeros(i.shape[0], dtype=np.float64)
    if i.shape[0] == 0:
        return out
    lengths = np.asarray(source.lengths, dtype=np.int64)
    half = max(1, memory_bytes // _BYTES_PER_SHINGLE // 2)
    seg = (np.cumsum(lengths) - lengths) // half  # segment of every document
    si, sj = seg[i], seg[j]
    lo, hi = np.minimum(si, sj), np.maximum(si, sj)
    order = np.lexsort((hi, lo))
    lo_s, hi_s = lo[order], hi[order]
    starts = np.flatnonzero(np.r_[True, (lo_s[1:] != lo_s[:-1]) | (hi_s[1:] != hi_s[:-1])])
    ends = np.r_[starts[1:], order.shape[0]]
    cached_seg, cached_docs, cached_sets = -1, np.empty(0, np.int64), []
    for a, b in zip(starts.tolist(), ends.tolist(), strict=True):
        pos = order[a:b]
        gi, gj = i[pos], j[pos]
        docs = np.unique(np.concatenate([gi, gj]))
        first_seg = int(lo_s[a])
        if first_seg != cached_seg:
            # the first segment's documents needed by any group that starts with it
            grp = order[a : int(np.searchsorted(lo_s, first_seg, side="right"))]
            both = np.concatenate([i[grp], j[grp]])
            cached_docs = np.unique(both[seg[both] == first_seg])
            cached_sets = source.fetch(cached_docs)
            cached_seg = first_seg
        other = docs[seg[docs] != first_seg]
        have = np.concatenate([cached_docs, other])
        sets = [*cached_sets, *(source.fetch(other) if other.shape[0] else [])]
        sort = np.argsort(have, kind="stable")
        have = have[sort]
        matrix = ShingleMatrix.from_sets([sets[k] for k in sort])
        out[pos] = matrix.pair_jaccard(np.searchsorted(have, gi), np.searchsorted(have, gj))
    return out
