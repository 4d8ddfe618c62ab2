"""Text normalisation and word tokens for English and Russian (and other Snowball languages).

Normalisation is Unicode NFKC, full case folding (``str.casefold``), ``ё`` → ``е``, the
typographic apostrophes mapped to ``'``, and soft hyphens / zero-width characters removed.
A *word* is a maximal run of Unicode letters and digits (``[^\\W_]``), optionally joined by
inner apostrophes (``don't``, ``o'brien``). Stop words are the Snowball stop lists of
English and Russian; stemming is Snowball (Porter 2001) through PyStemmer, one stemmer per
language. With ``language=None`` (a mixed or unknown page) both stop lists apply and every
word is stemmed by the stemmer of its script: the English rules only touch Latin endings
and the Russian rules only Cyrillic ones, so applying both in turn stems each word once.

Time O(n) in the length of the text; memory O(n) for the token list. The stemmers run in C
with a per-stemmer cache of recent words. :func:`chunks` is the fast way to the same words:
the normalised text's UTF-8 bytes cut at every ASCII character that no word holds
(``bytes.translate`` and ``bytes.split``, in C at ~70 MB/s, three times the regular
expression); a chunk holds the words :func:`words` finds in it, usually exactly one, so a
caller that memoises each distinct chunk's words (:class:`extract.terms.TermCounter`)
runs the regular expression once per distinct chunk instead of over every text.

References
----------
M. F. Porter, *Snowball: a language for stemming algorithms*, 2001,
https://snowballstem.org/ (stemmers and stop lists, BSD licence).

Examples
--------
>>> normalize("Ёлка  ＡＢＣ ﬁne")
'елка  abc fine'
>>> tokenize("Don't stop: 3 ёжика и кошки!")
["don't", 'stop', '3', 'ежика', 'и', 'кошки']
>>> tokenize("The universities were ranking", "en", stem=True, stopwords=True)
['universiti', 'rank']
>>> tokenize("Студенты университетов и преподаватели", stem=True, stopwords=True)
['студент', 'университет', 'преподавател']
"""

from __future__ import annotations

import functools
import re
import unicodedata
from importlib import resources
from typing import TypeVar

import Stemmer

__all__ = [
    "STEMMER_LANGUAGES",
    "STOPWORD_LANGUAGES",
    "WORD",
    "bare_stemmer",
    "chunk_bytes",
    "chunks",
    "memo_missing",
    "normalize",
    "stem_words",
    "stemmer",
    "stopwords_for",
    "tokenize",
    "words",
]

K = TypeVar("K", str, bytes)
"""A memo's key: a word or a chunk of UTF-8 bytes."""
V = TypeVar("V")
"""A memo's value."""

STEMMER_LANGUAGES: dict[str, str] = {
    "ar": "arabic",
    "ca": "catalan",
    "cs": "czech",
    "da": "danish",
    "de": "german",
    "el": "greek",
    "en": "english",
    "es": "spanish",
    "et": "estonian",
    "eu": "basque",
    "fi": "finnish",
    "fr": "french",
    "ga": "irish",
    "hi": "hindi",
    "hu": "hungarian",
    "hy": "armenian",
    "id": "indonesian",
    "it": "italian",
    "lt": "lithuanian",
    "ne": "nepali",
    "nl": "dutch",
    "no": "norwegian",
    "pl": "polish",
    "pt": "portuguese",
    "ro": "romanian",
    "ru": "russian",
    "sr": "serbian",
    "sv": "swedish",
    "ta": "tamil",
    "tr": "turkish",
    "yi": "yiddish",
}
"""ISO 639-1 code → PyStemmer algorithm name."""

STOPWORD_LANGUAGES: tuple[str, ...] = ("en", "ru")
"""Languages with a stop list (``extract/stopwords/<code>.txt``)."""

_REPLACE: tuple[tuple[str, str], ...] = (
    ("ё", "е"),
    ("\u2019", "'"),  # right single quotation mark
    ("\u02bc", "'"),  # modifier letter apostrophe
    ("\u00ad", ""),  # soft hyphen
    ("\u200b", ""),  # zero-width space
    ("\u200c", ""),
    ("\u200d", ""),
    ("\u2060", ""),
    ("\ufeff", ""),
)
"""One character for another (or none) after case folding: no output is a key, so the
replacements commute and one ``str.replace`` each is ``str.translate`` of the table, in C
(``translate`` calls a Python mapping for every character of a non-ASCII text)."""
_COMPATIBLE: tuple[tuple[str, str], ...] = tuple(
    (c, unicodedata.normalize("NFKD", c))
    for c in "\u00a0\u2026\u2116\u2009\u2006\u2011\u202f\u2002\u2003\u2004\u2005\u2007\u2008\u200a"
)
"""Characters of news texts that are not in NFKC (no-break and thin spaces, ellipsis,
numero sign, non-breaking hyphen) and their compatibility decompositions. Replacing a
character by its NFKD leaves the NFKC of the text unchanged (NFKD maps each character on
its own, then reorders and composes the whole), and the text then often is in NFKC
already, which ``unicodedata.normalize`` sees in its quick check instead of decomposing
and composing every character (a third of the Russian news texts of the shared data)."""
WORD = re.compile(r"[^\W_]+(?:'[^\W_]+)*")
_WORDLESS_MARKS = (
    *("\u2013", "\u2014", "\u00ab", "\u00bb", "\u2212", "\u2044", "\u201c", "\u201d"),
    *("\u00b0", "\u2010", "\u2012", "\u00d7", "\ufffd"),
)
"""Non-ASCII marks no word holds that texts often put between words with no space (en and
em dash, guillemets, minus, fraction slash, curly double quotes; degree sign, hyphen,
figure dash, multiplication sign, replacement character): :func:`chunks` cuts there too,
so that few chunks hold several words (a text with one is counted word by word)."""
_CHUNK_TABLE = bytes(
    b if (chr(b).isalnum() or b == ord("'")) and b != ord("_") else ord(" ") for b in range(128)
) + bytes(range(128, 256))
"""ASCII characters no word holds (not a letter, a digit or the apostrophe) → space; the
bytes of non-ASCII characters (>= 128) stay, whether their characters are word
characters or not (a chunk is re-read by :data:`WORD`)."""


def normalize(text: str) -> str:
    """Unicode NFKC, case folding, ``ё`` → ``е``, one apostrophe, no invisible characters.

    Parameters
    ----------
    text : str
        Any text.

    Returns
    -------
    str
        The normalised text (same words, comparable across typographies).

    Examples
    --------
    >>> normalize("ЁЖ Straße’s\\u00adend")
    "еж strasse'send"
    """
    if text.isascii():  # NFKC, casefold and the table are identities here but lower()
        return text.lower()
    if not unicodedata.is_normalized("NFKC", text):  # a quick check, in C
        for old, new in _COMPATIBLE:
            if old in text:
                text = text.replace(old, new)
        text = unicodedata.normalize("NFKC", text)
    text = text.casefold()
    for old, new in _REPLACE:
        if old in text:
            text = text.replace(old, new)
    return text


def memo_missing(memo: dict[K, V], distinct: set[K], max_memo: int) -> set[K]:
    """The words of ``distinct`` a per-word memo lacks; the memo is emptied first (and all
    of ``distinct`` returned) when adding them would exceed ``max_memo`` entries.

    Examples
    --------
    >>> memo = {"a": 1}
    >>> sorted(memo_missing(memo, {"a", "b"}, 10)), memo
    (['b'], {'a': 1})
    >>> sorted(memo_missing(memo, {"b", "c"}, 2)), memo
    (['b', 'c'], {})
    """
    missing = distinct.difference(memo)
    if missing and len(memo) + len(missing) > max_memo:
        memo.clear()
        return set(distinct)
    return missing


@functools.cache
def stemmer(language: str) -> Stemmer.Stemmer | None:
    """The Snowball stemmer of an ISO 639-1 language, or ``None`` when there is none.

    Examples
    --------
    >>> stemmer("ru").stemWord("университетов")
    'университет'
    >>> stemmer("xx") is None
    True
    """
    name = STEMMER_LANGUAGES.get(language)
    return Stemmer.Stemmer(name) if name else None


@functools.cache
def bare_stemmer(language: str) -> Stemmer.Stemmer | None:
    """:func:`stemmer` without PyStemmer's cache of recent words (for distinct words).

    Examples
    --------
    >>> bare_stemmer("en").stemWords(["running", "runs"])
    ['run', 'run']
    """
    name = STEMMER_LANGUAGES.get(language)
    return Stemmer.Stemmer(name, 0) if name else None


@functools.cache
def stopwords_for(language: str | None) -> frozenset[str]:
    """The stop words of a language (normalised); both lists when ``language`` is ``None``;
    an empty set for a language without a list.

    Examples
    --------
    >>> "the" in stopwords_for("en"), "и" in stopwords_for("ru"), "и" in stopwords_for(None)
    (True, True, True)
    >>> len(stopwords_for("de"))
    0
    """
    if language is None:
        return frozenset().union(*(stopwords_for(code) for code in STOPWORD_LANGUAGES))
    if language not in STOPWORD_LANGUAGES:
        return frozenset()
    text = resources.files("extract").joinpath("stopwords", f"{language}.txt").read_text("utf-8")
    words = (w for line in text.splitlines() if not line.startswith("#") for w in line.split())
    return frozenset(normalize(w) for w in words)


def tokenize(
    text: str,
    language: str | None = None,
    *,
    stem: bool = False,
    stopwords: bool = False,
) -> list[str]:
    """The words of a text, normalised, optionally without stop words and stemmed.

    Parameters
    ----------
    text : str
        Plain text (the extracted main text of a page, a news story ...).
    language : str, optional
        ISO 639-1 code of the text (``"en"``, ``"ru"`` ...). ``None``: English and Russian
        stop words both apply and each word is stemmed by its script's stemmer.
    stem : bool
        Replace each word by its Snowball stem (no-op for a language without a stemmer).
    stopwords : bool
        Drop stop words (before stemming; only English and Russian have lists).

    Returns
    -------
    list of str
        The tokens in text order.

    Examples
    --------
    >>> tokenize("Hello, WORLD_wide  web-sites 2015")
    ['hello', 'world', 'wide', 'web', 'sites', '2015']
    >>> tokenize("Running dogs", "en", stem=True)
    ['run', 'dog']
    >>> tokenize("")
    []
    """
    tokens = words(text)
    if stopwords and tokens:
        stop = stopwords_for(language)
        if stop:
            tokens = [t for t in tokens if t not in stop]
    if stem and tokens:
        tokens = stem_words(tokens, language)
    return tokens


def words(text: str) -> list[str]:
    """The normalised words of a text, in order (no stop-word removal, no stemming).

    Examples
    --------
    >>> words("Ёж’s  co-op_2")
    ["еж's", 'co', 'op', '2']
    """
    return WORD.findall(normalize(text))


def chunks(text: str) -> list[bytes]:
    """The normalised text as UTF-8 bytes, cut at ASCII characters that no word holds.

    The words of the text (:func:`words`) are, in order, the words of each chunk in turn
    (``words(chunk.decode("utf-8", "surrogatepass"))``): a word never holds such a
    character, and the regular expression restarts at each, so it finds the same matches
    in a chunk as in the whole text. Most chunks are one word; ``"'quoted'"`` or
    ``"«ёлка»"`` is one word with characters around it, ``"''"`` none, and a rare chunk
    is several (``"слово…слово"``: non-ASCII punctuation with no space).

    Examples
    --------
    >>> [c.decode() for c in chunks("Don't stop: 'Ёжика' и кошки_2!")]
    ["don't", 'stop', "'ежика'", 'и', 'кошки', '2']
    >>> [words(c.decode()) for c in chunks("a''b ...")]
    [['a', 'b']]
    """
    return chunk_bytes(text).split()


def chunk_bytes(text: str) -> bytes:
    """The normalised text as UTF-8 bytes, a space at every ASCII character no word holds
    (and at the marks of :data:`_WORDLESS_MARKS`): :func:`chunks` are its runs of other
    bytes.

    Examples
    --------
    >>> chunk_bytes("Ёж, ёж_2!")
    b'\\xd0\\xb5\\xd0\\xb6  \\xd0\\xb5\\xd0\\xb6 2 '
    """
    text = normalize(text)
    if not text.isascii():
        for mark in _WORDLESS_MARKS:
            if mark in text:
                text = text.replace(mark, " ")
    return text.encode("utf-8", "surrogatepass").translate(_CHUNK_TABLE)


def stem_words(tokens: list[str], language: str | None) -> list[str]:
    """Snowball stems of normalised words; by script when ``language`` is ``None``;
    the words unchanged for a language without a stemmer.

    The stemmers here keep no cache of their own (:func:`bare_stemmer`): the callers
    (:class:`extract.terms.TermCounter`, the shingler, the themes) pass distinct words
    they memoise, and PyStemmer's cache makes each new word cost three to four times
    its stemming (0.65 µs a Russian word without it, 1.8 µs with it, measured on
    Lenta.ru's 29,479 distinct words).

    Examples
    --------
    >>> stem_words(["running", "бегущие"], None)
    ['run', 'бегущ']
    """
    if language is None:
        english = bare_stemmer("en").stemWords(tokens)  # type: ignore[union-attr]
        return bare_stemmer("ru").stemWords(english)  # type: ignore[union-attr]
    st = bare_stemmer(language)
    return tokens if st is None else st.stemWords(tokens)
