"""Decode HTML bytes: byte-order mark, HTTP charset, meta charset, then detection.

The order follows the WHATWG encoding sniffing algorithm (BOM, transport-layer charset,
``<meta>`` prescan of the first bytes, then a guess), with two checks because declared
charsets are often wrong on the real web:

- a declared charset is used only if it decodes the bytes: a multi-byte declaration
  (UTF-8, Shift_JIS ...) must decode without error, and a single-byte declaration yields
  to UTF-8 when the bytes are valid UTF-8 with non-ASCII characters (random legacy text
  is practically never valid UTF-8);
- the legacy Cyrillic encodings (windows-1251, KOI8-R, ISO-8859-5, IBM866, x-mac-cyrillic)
  all decode any byte string, so among them the one giving the largest share of
  lower-case Cyrillic letters wins (in Russian text ~90 % of Cyrillic letters are lower
  case; KOI8-R read as windows-1251 swaps the cases).

Detection without a usable declaration is ``charset_normalizer`` (Ahmed Tahri) on the
first 256 KiB. Time O(n) in the size of the body; memory O(n).

References
----------
WHATWG, *Encoding Standard* and *HTML § 13.2.3.2 Determining the character encoding*.

Examples
--------
>>> text = "<p>Привет, мир! Это проверка кодировки.</p>"
>>> decode_html(text.encode("cp1251")).charset
'windows-1251'
>>> decode_html(text.encode("koi8_r")).charset
'koi8-r'
>>> d = decode_html(text.encode("utf-8"), http_charset="windows-1251")
>>> d.charset, d.text == text, d.note is not None
('utf-8', True, True)
"""

from __future__ import annotations

import codecs
import functools
import re
from dataclasses import dataclass

__all__ = ["Decoded", "decode_html", "find_meta_charset", "normalize_charset"]

_PRESCAN_BYTES = 4096
_DETECT_BYTES = 256 * 1024
_META_CHARSET = re.compile(
    rb"""<meta[^>]{0,300}?charset\s*=\s*["']?\s*([a-zA-Z0-9_.:\-]{1,40})""", re.IGNORECASE
)
_XML_DECL = re.compile(rb"""^\s*<\?xml[^>]{0,200}?encoding\s*=\s*["']([a-zA-Z0-9_.:\-]{1,40})""")
_BOMS = (
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)
# Python codec name -> the WHATWG label we report
_LABELS = {
    "utf-8": "utf-8",
    "cp1251": "windows-1251",
    "koi8-r": "koi8-r",
    "koi8-u": "koi8-u",
    "iso8859-5": "iso-8859-5",
    "cp866": "ibm866",
    "mac-cyrillic": "x-mac-cyrillic",
    "cp1252": "windows-1252",
    "latin-1": "windows-1252",
    "ascii": "windows-1252",
    "iso8859-1": "windows-1252",
}
_CYRILLIC = ("cp1251", "koi8-r", "iso8859-5", "cp866", "mac-cyrillic", "koi8-u")
_CYRILLIC_TRIED = ("cp1251", "koi8-r", "iso8859-5", "cp866", "mac-cyrillic")
_LOWER_CYR = re.compile(r"[а-яё]")
_NON_ASCII = re.compile(r"[^\x00-\x7f]")
_HIGH_BYTE = re.compile(rb"[\x80-\xff]")
_HIGH_RUN = re.compile(rb"[\x80-\xff]{3,}")


@dataclass(frozen=True)
class Decoded:
    """Decoded HTML: the text, the charset used, where it came from and what was odd.

    Attributes
    ----------
    text : str
    charset : str
        WHATWG label of the encoding used (``utf-8``, ``windows-1251``, ``koi8-r`` ...).
    source : str
        ``bom``, ``http``, ``meta``, ``detected`` or ``default``.
    note : str or None
        Why a declared charset was not used, when that happened.
    """

    text: str
    charset: str
    source: str
    note: str | None = None


def normalize_charset(name: str | None) -> str | None:
    """Python codec name of a charset label, or ``None`` when unknown.

    ``iso-8859-1``, ``latin1`` and ``us-ascii`` map to windows-1252 as browsers do.

    Examples
    --------
    >>> normalize_charset("Windows-1251"), normalize_charset("KOI8-R")
    ('cp1251', 'koi8-r')
    >>> normalize_charset("ISO-8859-1"), normalize_charset("no-such-thing")
    ('cp1252', None)
    """
    if not name:
        return None
    name = name.strip().strip("\"'").lower()
    if name in ("x-user-defined", "none", "unknown"):
        return None
    try:
        codec = codecs.lookup(name).name
    except LookupError:
        return None
    if codec in ("latin-1", "iso8859-1", "ascii"):
        return "cp1252"
    return codec


def label(codec: str) -> str:
    """The WHATWG-style label of a Python codec name.

    Examples
    --------
    >>> [label(c) for c in ("cp1251", "cp1250", "euc_jp", "iso8859-2", "shift_jis", "gbk")]
    ['windows-1251', 'windows-1250', 'euc-jp', 'iso-8859-2', 'shift_jis', 'gbk']
    """
    if codec in _LABELS:
        return _LABELS[codec]
    if m := re.fullmatch(r"cp(125\d)", codec):
        return f"windows-{m.group(1)}"
    if m := re.fullmatch(r"iso8859-(\d+)", codec):
        return f"iso-8859-{m.group(1)}"
    if codec == "shift_jis":
        return codec
    return codec.replace("_", "-")


def find_meta_charset(data: bytes) -> str | None:
    """The charset named by ``<meta charset>``/``http-equiv`` or an XML declaration in the
    first 4 KiB, as written (not normalised).

    Examples
    --------
    >>> find_meta_charset(b'<meta http-equiv="Content-Type" content="text/html; charset=koi8-r">')
    'koi8-r'
    >>> find_meta_charset(b"<html><body>none</body></html>") is None
    True
    """
    head = data[:_PRESCAN_BYTES]
    m = _META_CHARSET.search(head) or _XML_DECL.search(head)
    return m.group(1).decode("ascii") if m else None


def _is_utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _cyrillic_score(text: str) -> float:
    non_ascii = len(_NON_ASCII.findall(text))
    return len(_LOWER_CYR.findall(text)) / non_ascii if non_ascii else 0.0


def _cyrillic_guess(data: bytes) -> tuple[str, dict[str, float]] | None:
    """The legacy Cyrillic codec the bytes read best in, or ``None`` when they are not
    Cyrillic text: most high bytes must sit in runs of three or more (whole words, unlike
    the isolated accents of Western text) and the best codec must give > 75 % lower-case
    Cyrillic letters among the non-ASCII characters."""
    sample = data[:_DETECT_BYTES]
    high = len(_HIGH_BYTE.findall(sample))
    if not high:
        return None
    in_runs = sum(len(run) for run in _HIGH_RUN.findall(sample))
    if in_runs < 0.5 * high:
        return None
    scores = {c: _cyrillic_score(sample.decode(c, errors="replace")) for c in _CYRILLIC_TRIED}
    best = max(scores, key=lambda c: scores[c])
    return (best, scores) if scores[best] > 0.75 else None


def _single_byte(data: bytes, codec: str, source: str) -> Decoded:
    """Decode with a declared or detected single-byte codec, after the two checks."""
    if not data.isascii() and _is_utf8(data):
        return Decoded(
            data.decode("utf-8"),
            "utf-8",
            "detected",
            f"{source} charset {label(codec)} declared but the bytes are valid UTF-8",
        )
    guess = _cyrillic_guess(data)
    if guess is not None and guess[0] != codec:
        best, scores = guess
        own = scores.get(codec)
        if own is None or own < scores[best] - 0.3:
            return Decoded(
                data.decode(best, errors="replace"),
                label(best),
                "detected",
                f"{source} charset {label(codec)} declared but the text reads as {label(best)}",
            )
    return Decoded(data.decode(codec, errors="replace"), label(codec), source)


def _mostly_utf8(data: bytes) -> tuple[str, str | None] | None:
    """The text when the bytes are UTF-8 but for a few stray bytes (at most 3, or 1 % of
    the non-ASCII characters), with a note on how many were replaced; else ``None``."""
    try:
        return data.decode("utf-8"), None
    except UnicodeDecodeError:
        pass
    text = data.decode("utf-8", errors="replace")
    bad = text.count("\ufffd")
    non_ascii = len(_NON_ASCII.findall(text))
    if bad <= max(3, 0.01 * non_ascii):
        return text, f"{bad} invalid UTF-8 sequence(s) replaced by U+FFFD"
    return None


def _join(*notes: str | None) -> str | None:
    return "; ".join(n for n in notes if n) or None


@functools.cache
def _is_single_byte(codec: str) -> bool:
    """True for a codec that maps each byte to one character (windows-125x, KOI8 ...)."""
    if codec.startswith("utf"):
        return False
    return len(bytes(range(256)).decode(codec, errors="replace")) == 256


def decode_html(data: bytes, http_charset: str | None = None) -> Decoded:
    """Decode an HTML body to text.

    Parameters
    ----------
    data : bytes
        The raw body.
    http_charset : str, optional
        The ``charset`` parameter of the HTTP ``Content-Type`` header.

    Returns
    -------
    Decoded
        Never raises: undecodable bytes become U+FFFD.

    Examples
    --------
    >>> d = decode_html("<p>ünïcödé</p>".encode("utf-8"), http_charset="utf-8")
    >>> d.charset, d.source
    ('utf-8', 'http')
    >>> decode_html("<p>ünïcödé</p>".encode("cp1252"), http_charset="utf-8").note
    'http charset utf-8 declared but the bytes are not UTF-8'
    """
    for bom, bom_codec in _BOMS:
        if data.startswith(bom):
            return Decoded(data[len(bom) :].decode(bom_codec, errors="replace"), bom_codec, "bom")
    notes: list[str] = []
    declared = (("http", http_charset), ("meta", find_meta_charset(data)))
    for source, name in declared:
        if not name:
            continue
        codec = normalize_charset(name)
        if codec is None:
            notes.append(f"{source} charset {name!r} is unknown")
            continue
        if codec in ("utf-16-le", "utf-16-be", "utf-16", "utf-32"):
            # a meta tag readable as ASCII cannot be in UTF-16: the declaration is wrong
            notes.append(f"{source} charset {name} declared for ASCII-compatible bytes")
            continue
        if _is_single_byte(codec):
            decoded = _single_byte(data, codec, source)
        elif codec == "utf-8" and (mostly := _mostly_utf8(data)) is not None:
            decoded = Decoded(mostly[0], "utf-8", source, mostly[1])
        else:
            try:
                decoded = Decoded(data.decode(codec), label(codec), source)
            except UnicodeDecodeError:
                notes.append(
                    f"{source} charset {label(codec)} declared but the bytes are not "
                    f"{label(codec).upper() if codec == 'utf-8' else label(codec)}"
                )
                continue
        if notes:
            decoded = Decoded(
                decoded.text, decoded.charset, decoded.source, _join(*notes, decoded.note)
            )
        return decoded
    note = "; ".join(notes) or None
    if data.isascii():
        return Decoded(data.decode("ascii"), "utf-8", "default", note)
    if _is_utf8(data):
        return Decoded(data.decode("utf-8"), "utf-8", "detected", note)
    mostly = _mostly_utf8(data)
    if mostly is not None:
        return Decoded(mostly[0], "utf-8", "detected", _join(note, mostly[1]))
    guess = _cyrillic_guess(data)
    if guess is not None:
        return Decoded(data.decode(guess[0], errors="replace"), label(guess[0]), "detected", note)
    from charset_normalizer import from_bytes

    best = from_bytes(data[:_DETECT_BYTES]).best()
    codec = normalize_charset(best.encoding) if best is not None else None
    if codec is None or codec == "utf-8":
        codec = "cp1252"
    return Decoded(data.decode(codec, errors="replace"), label(codec), "detected", note)
