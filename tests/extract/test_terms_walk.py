"""The compiled walk of py3langid's automaton gives py3langid's own features and counts.

:meth:`extract.terms.BatchLanguageIdentifier.feature_counts` (numba: stretches of a
batch walked in lockstep, then one counting pass per text) against
``py3langid.langid.visit_counts`` (the byte-by-byte walk in Python) on the edge cases of
the walk: empty texts, texts without letters, a batch shorter than the number of
stretches, stretch boundaries inside texts and at separators, random bytes (every byte
value but the separator), texts past ``max_chars`` and several batches.
"""

from __future__ import annotations

import random
from collections import Counter

import numpy as np
import pytest
from py3langid.langid import LanguageIdentifier, visit_counts

from extract.language import identifier, identify_language
from extract.terms import CHAINS, BatchLanguageIdentifier, kernels, walk_tables


def reference(data: bytes) -> list[tuple[int, int]]:
    """py3langid's (feature, count) pairs of one byte string, first occurrence first."""
    model = identifier()
    found = visit_counts(model.tk_nextmove, model._rowbase, model.tk_output, data)
    return list((found or Counter()).items())


def python_walk(data: bytes) -> list[int]:
    """The feature of every byte (-1: none), walking from the root byte by byte."""
    model = identifier()
    state, out = 0, []
    for byte in data:
        state = model.tk_nextmove[model._rowbase[state] + byte]
        out.append(int(model.tk_output[state]))
    return out


def compiled(encoded: list[bytes]) -> list[list[tuple[int, int]]]:
    ids, counts, bounds = BatchLanguageIdentifier().feature_counts(encoded)
    return [
        list(zip(ids[lo:hi].tolist(), counts[lo:hi].tolist(), strict=True))
        for lo, hi in zip(bounds[:-1].tolist(), bounds[1:].tolist(), strict=True)
    ]


TEXTS = [
    "",
    "a",
    "   ",
    "2015 — 1999!",
    "The students of the university",
    "Студенты университета имени Ломоносова",
    "Mixed English и русский текст",
    "ÉCOLE NORMALE SUPÉRIEURE",
    "lone \udc80 surrogate and emoji 😀",
    "the " * 700,
    "ab" * 3,
]


def test_feature_counts_equal_py3langid_visit_counts() -> None:
    encoded = [LanguageIdentifier._encode(t) for t in TEXTS]
    assert compiled(encoded) == [reference(e) for e in encoded]
    for k in range(len(encoded)):  # one text alone, and batches shorter than the stretches
        assert compiled(encoded[k : k + 1]) == [reference(encoded[k])]
    assert compiled([]) == []
    assert compiled([b""]) == [[]]


@pytest.mark.parametrize("size", [0, 1, 5, CHAINS - 1, CHAINS, CHAINS + 1, 97, 4099])
def test_lockstep_walk_equals_the_byte_by_byte_walk(size: int) -> None:
    """Random bytes (0xff aside, the separator) of every length around the stretches."""
    rng = random.Random(size)
    data = bytes(rng.choice(range(255)) for _ in range(size))
    tables = walk_tables()
    walk = kernels().walk
    b = np.frombuffer(data, dtype=np.uint8)
    for chains in (1, 2, 3, CHAINS):
        got = walk(b, tables.transitions, tables.root, 6, chains).tolist()
        assert got == python_walk(data)


def test_stretch_boundaries_fall_inside_texts_and_on_separators() -> None:
    """Many short texts of every length: stretches start anywhere in the batch."""
    rng = random.Random(7)
    words = ["the", "и", "university", "университет", "über", "日本", "a1", "x"]
    texts = [" ".join(rng.choice(words) for _ in range(n)) for n in range(60)]
    encoded = [LanguageIdentifier._encode(t) for t in texts]
    assert compiled(encoded) == [reference(e) for e in encoded]


def test_texts_past_max_chars_and_several_batches() -> None:
    texts = [t * 300 for t in TEXTS if t.strip()] + TEXTS
    for ids in (BatchLanguageIdentifier(max_chars=50, batch_bytes=64), BatchLanguageIdentifier()):
        assert ids.identify(texts) == [identify_language(t, ids.max_chars)[0] for t in texts]
