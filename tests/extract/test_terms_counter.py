"""The compiled chunk memo of :class:`extract.terms.TermCounter` on its edge cases.

The counts themselves are compared with the old word-by-word counter on real corpora in
``test_terms_speed_equivalence.py``; here: texts counted in groups equal texts counted
one by one, a text of several-word chunks inside a group, a memo emptied between groups,
the hash table grown many times, and two chunks of one hash (the bytes decide).
"""

from __future__ import annotations

import numpy as np
import pytest

import extract.terms as terms
from extract.terms import ChunkTable, TermCounter, kernels

TEXTS = [
    "",
    "   ",
    "Running dogs run",
    "слово•слово и слово",  # a chunk of several words: counted word by word
    "Кошки и коты, кошка! 2015 'quoted' don't",
    "a b c d",
    "The universities and university rankings of 2015",
    "¡¿ — «» …",
    "Бегущие собаки и running dogs",
]


def one_by_one(language: str | None, texts: list[str]) -> list[dict[str, int]]:
    return [TermCounter(language=language).counts(t) for t in texts]


@pytest.mark.parametrize("language", ["en", "ru", None])
@pytest.mark.parametrize("group", [1, 30, 1 << 20])
def test_groups_of_texts_count_as_texts_one_by_one(monkeypatch, language, group) -> None:
    monkeypatch.setattr(terms, "GROUP_CHARACTERS", group)
    texts = TEXTS * 3
    got = TermCounter(language=language).counts_of(texts)
    assert got == one_by_one(language, texts)
    assert [list(c) for c in got] == [list(c) for c in one_by_one(language, texts)]  # order


def test_a_small_memo_is_emptied_between_groups(monkeypatch) -> None:
    monkeypatch.setattr(terms, "GROUP_CHARACTERS", 20)
    counter = TermCounter(language="en", max_memo=3)
    texts = [f"word{i} other{i} running dogs" for i in range(50)] + TEXTS
    assert counter.counts_of(texts) == one_by_one("en", texts)
    assert counter._memo.size <= 3 + 200  # emptied before a group once past max_memo


def test_the_table_grows_and_keeps_every_chunk() -> None:
    """Thousands of distinct chunks: slots, keys and arena doubled many times."""
    words = [f"w{i}x{i * 7919 % 1000}" for i in range(20_000)]
    counter = TermCounter(language="en")
    (counts,) = counter.counts_of([" ".join(words + words[::-1])])
    assert len(counts) == 20_000 and set(counts.values()) == {2}
    table = counter._memo
    assert table.size == 20_000 and len(table.slots) >= 2 * table.size
    assert (np.sort(table.slots[table.slots >= 0]) == np.arange(20_000)).all()


def run(data: bytes, table: ChunkTable) -> tuple[list[int], ChunkTable]:
    """The compiled index of the chunks of one text, and the table it returns."""
    buf = np.frombuffer(data, dtype=np.uint8)
    starts, lengths = np.zeros(1, dtype=np.int64), np.array([len(buf)], dtype=np.int64)
    ids, _, *arrays = kernels().index(buf, starts, lengths, *table)
    return ids.tolist(), ChunkTable(*arrays)


def fnv1a(data: bytes) -> int:
    h = 14695981039346656037
    for byte in data:
        h = ((h ^ byte) * 1099511628211) % (1 << 64)
    return h


def test_chunks_of_one_hash_are_told_apart_by_their_bytes() -> None:
    table = ChunkTable.empty()

    ids, table = run(b"ab", table)
    assert ids == [0]
    # make "ab" look like "cd" to the table: same hash, same length, other bytes
    h = fnv1a(b"cd")
    table.keys[0, 0] = np.uint64(h).view(np.int64)
    table.slots[:] = -1
    table.slots[h & (len(table.slots) - 1)] = 0
    ids, table = run(b"cd ab cd", table)
    assert ids[0] == ids[2] == 1 and table.size == 3  # "cd" is new; "ab" not found again
    assert bytes(table.arena[: table.used]) == b"ab cd ab "


def test_chunks_sorted_in_compiled_code_match_the_python_tests() -> None:
    """A chunk the compiled pass calls a word is one word for ``str.isalnum`` and the
    word pattern, of the length and digits Python sees; ASCII and basic Cyrillic words
    are sorted there, anything else is left to Python."""
    chunks = [
        "a", "ab", "7", "2015", "a1", "1a", "don't", "'x'", "и", "ид", "ёж", "ѐѝ",
        "\u0400\u045f", "\u0460x", "ђѕ", "іїє", "école", "日本", "w\u0301",
        "слово°слово", "mixedкириллица", "ж1", "١٢", "x" * 300,
    ]  # fmt: skip
    counter = TermCounter(language=None)
    data = " ".join(chunks).encode("utf-8")
    counter._count([data])
    table = counter._memo
    kind = kernels().sort_chunks(table.arena, table.keys, 0, table.size).tolist()
    assert table.size == len(chunks)
    simple = set("abcdefghijklmnopqrstuvwxyz0123456789") | {chr(c) for c in range(0x400, 0x460)}
    for text, k in zip(chunks, kind, strict=True):
        if k == terms.OTHER_CHUNK:
            assert not set(text) <= simple, text
            continue
        assert set(text) <= simple and text.isalnum() and terms.WORD.findall(text) == [text]
        short = len(text) < terms.MIN_TERM_LENGTH or text.isdigit()
        assert k == (terms.SHORT_CHUNK if short else terms.WORD_CHUNK), text


def test_a_table_whose_last_call_was_not_kept_reads_as_before_it() -> None:
    """The kernel writes the slots in place; if its returned arrays are lost (an
    interrupted call), the slots past the table's size are free, not chunks."""
    table = ChunkTable.empty()

    assert run(b"a b c", table)[0] == [0, 1, 2]  # its table is dropped
    ids, kept = run(b"c d c", table)
    assert ids == [0, 1, 0] and kept.size == 2
    assert bytes(kept.arena[: kept.used]) == b"c d "
