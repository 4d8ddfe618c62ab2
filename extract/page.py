"""One page's HTML → main text, title, date, site name, language: :func:`extract_page`.

The main text is trafilatura's (Barbaresi 2021): a cascade of its own XPath-based
boilerplate removal with readability and jusText as fallbacks. Around it this module
adds what a crawl of the real web needs: decoding (:mod:`extract.encoding`), checks of
the input (empty, whitespace, binary, too large), a hard time cap per page, language
identification with a confidence (:mod:`extract.language`) and the filter of kept
languages. Every outcome is an :class:`PageExtraction` with an explicit ``status`` and
``reason``; no exception leaves :func:`extract_page`.

The time cap is a ``SIGALRM`` interval timer that raises :class:`PageTimeout` (a
``BaseException``, so that the ``except Exception`` blocks inside the libraries cannot
swallow it). Signals reach only the main thread, so the cap holds where pages are
extracted in worker processes (``webometrics extract``) or in the main thread; in other
threads it is skipped (the stage additionally kills a worker that stops answering).

Time: linear in the size of the page for parsing plus trafilatura's tree passes, about
10-40 ms per typical article page; memory: the lxml tree, a few times the HTML size.

References
----------
A. Barbaresi, *Trafilatura: A Web Scraping Library and Command-Line Tool for Text
Discovery and Extraction*, ACL-IJCNLP 2021 System Demonstrations.

Examples
--------
>>> html = ("<html><head><title>News</title></head><body><nav>Home | About</nav>"
...         "<article><h1>Headline</h1><p>" + "The university opened a new library. " * 8
...         + "</p></article><footer>Contact us</footer></body></html>")
>>> r = extract_page(html, url="https://example.org/a")
>>> r.status, r.language, r.title
('ok', 'en', 'Headline')
>>> "Contact us" in r.text
False
>>> extract_page(b"").status, extract_page(b"%PDF-1.4 ...").status
('empty', 'binary')
"""

from __future__ import annotations

import re
import signal
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from core import defaults as D
from core.choices import EXTRACTION_STATUSES, FAVORS, ExtractionStatus, Favor, is_text_media_type
from extract.encoding import decode_html
from extract.language import identify_language

if TYPE_CHECKING:
    from core.settings import ExtractSettings

__all__ = [
    "STATUSES",
    "ExtractOptions",
    "PageExtraction",
    "PageTimeout",
    "extract_page",
    "sniff_binary",
]

Status = ExtractionStatus
STATUSES = EXTRACTION_STATUSES
"""Every status of an :class:`PageExtraction` (``pending`` is the stored state before)."""

_MAGIC: tuple[tuple[bytes, str], ...] = (
    (b"%PDF-", "PDF document"),
    (b"PK\x03\x04", "ZIP archive (or DOCX/XLSX/ODT)"),
    (b"\x89PNG\r\n\x1a\n", "PNG image"),
    (b"GIF87a", "GIF image"),
    (b"GIF89a", "GIF image"),
    (b"\xff\xd8\xff", "JPEG image"),
    (b"\x1f\x8b", "gzip data (not decompressed)"),
    (b"BZh", "bzip2 data"),
    (b"\xfd7zXZ\x00", "xz data"),
    (b"7z\xbc\xaf\x27\x1c", "7-Zip archive"),
    (b"Rar!\x1a\x07", "RAR archive"),
    (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1", "MS Office (OLE) document"),
    (b"\x7fELF", "ELF executable"),
    (b"MZ", "Windows executable"),
    (b"OggS", "Ogg media"),
    (b"ID3", "MP3 audio"),
    (b"fLaC", "FLAC audio"),
    (b"wOFF", "WOFF font"),
    (b"wOF2", "WOFF2 font"),
    (b"\x00\x00\x01\x00", "ICO image"),
    (b"RIFF", "RIFF media (WebP/WAV/AVI)"),
)
_XML_DECL = re.compile(r"^\s*<\?xml[^>]*\?>")
_MAX_REASON = 500


class PageTimeout(BaseException):
    """Raised by the time cap inside :func:`extract_page` (a ``BaseException`` so that
    libraries' ``except Exception`` cannot swallow it)."""


@dataclass(frozen=True)
class ExtractOptions:
    """How pages are extracted; one object built from ``[extract]`` settings.

    Parameters
    ----------
    favor : {"balanced", "precision", "recall"}
        trafilatura's trade-off: ``precision`` keeps less but surer text, ``recall`` more.
    include_tables : bool
        Keep text inside ``<table>``.
    include_comments : bool
        Append the comment section (when trafilatura finds one) to the main text.
    fallback : bool
        Let trafilatura compare its result with readability and jusText (slower, better
        on odd layouts); ``False`` is trafilatura's ``fast`` mode.
    extensive_date : bool
        htmldate's extensive search for the page date (a few more dates found, slower).
    languages : tuple of str
        ISO 639-1 codes kept; a page in another language gets ``language-filtered``.
        Empty: keep every language.
    timeout_seconds : float or None
        Hard cap on the time of one page; ``None``: no cap.
    max_html_bytes : int
        Larger bodies are not parsed (``too-large``).
    with_metadata : bool
        Extract title, date and site name (``htmldate`` for the date).

    Examples
    --------
    >>> from core.settings import Settings
    >>> ExtractOptions.from_settings(Settings().extract).languages
    ('en', 'ru')
    """

    favor: Favor = D.EXTRACT_FAVOR
    include_tables: bool = D.EXTRACT_INCLUDE_TABLES
    include_comments: bool = D.EXTRACT_INCLUDE_COMMENTS
    fallback: bool = D.EXTRACT_FALLBACK
    extensive_date: bool = D.EXTRACT_EXTENSIVE_DATE
    languages: tuple[str, ...] = D.EXTRACT_LANGUAGES
    timeout_seconds: float | None = D.EXTRACT_TIMEOUT_SECONDS
    max_html_bytes: int = D.EXTRACT_MAX_HTML_BYTES
    with_metadata: bool = True

    def __post_init__(self) -> None:
        if self.favor not in FAVORS:
            raise ValueError(
                f"favor={self.favor!r}: use one of {', '.join(FAVORS)} ([extract] favor)"
            )
        if self.timeout_seconds is not None and self.timeout_seconds <= 0:
            raise ValueError(f"timeout_seconds={self.timeout_seconds}: must be > 0 or None")
        if self.max_html_bytes < 1:
            raise ValueError(f"max_html_bytes={self.max_html_bytes}: must be >= 1")

    @classmethod
    def from_settings(cls, settings: ExtractSettings) -> ExtractOptions:
        """The options of an ``[extract]`` settings section."""
        values: dict[str, Any] = {
            "favor": settings.favor,
            "include_tables": settings.include_tables,
            "include_comments": settings.include_comments,
            "fallback": settings.fallback,
            "extensive_date": settings.extensive_date,
            "languages": tuple(settings.languages),
            "timeout_seconds": settings.timeout_seconds,
            "max_html_bytes": settings.max_html_bytes,
        }
        return cls(**values)

    def trafilatura_kwargs(self) -> dict[str, Any]:
        """Keyword arguments for ``trafilatura.bare_extraction``."""
        return {
            "favor_precision": self.favor == "precision",
            "favor_recall": self.favor == "recall",
            "include_tables": self.include_tables,
            "include_comments": self.include_comments,
            "fast": not self.fallback,
            "with_metadata": self.with_metadata,
            "date_extraction_params": {
                "extensive_search": self.extensive_date,
                "original_date": True,
            },
        }


@dataclass
class PageExtraction:
    """What :func:`extract_page` found (or why it found nothing).

    Attributes
    ----------
    status : str
        One of :data:`STATUSES`; only ``ok`` pages are shingled and clustered.
    reason : str or None
        Why the status is not ``ok`` (or a note, e.g. a wrong declared charset).
    text : str
        The main text (paragraphs separated by newlines); ``""`` when none.
    title, date, sitename : str or None
        Metadata; ``date`` is ISO ``YYYY-MM-DD``.
    language : str or None
        ISO 639-1 code of the main text; ``language_score`` its probability.
    charset : str or None
        The encoding the bytes were decoded with.
    seconds : float
        Wall time spent.
    """

    status: Status
    reason: str | None = None
    text: str = ""
    title: str | None = None
    date: str | None = None
    sitename: str | None = None
    language: str | None = None
    language_score: float | None = None
    charset: str | None = None
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        """True when the status is ``ok``."""
        return self.status == "ok"


def sniff_binary(data: bytes) -> str | None:
    """What a binary body looks like, or ``None`` when it may be text.

    Examples
    --------
    >>> sniff_binary(b"\\x89PNG\\r\\n\\x1a\\n...")
    'PNG image'
    >>> sniff_binary(b"<html>") is None
    True
    """
    head = data[:1024]
    for magic, what in _MAGIC:
        if head.startswith(magic):
            return what
    if head.startswith((b"\xff\xfe", b"\xfe\xff")):
        return None  # UTF-16 with a byte-order mark: text, zero bytes are expected
    if b"\x00" in head:
        return "binary data (NUL bytes)"
    controls = sum(1 for b in head if b < 9 or 13 < b < 32)
    if head and controls > 0.1 * len(head):
        return "binary data (control bytes)"
    return None


@contextmanager
def _time_cap(seconds: float | None) -> Iterator[None]:
    """Raise :class:`PageTimeout` in the block after ``seconds`` (main thread only).

    An interval timer already running (e.g. pytest-timeout's) is saved and restored; if
    it would fire first, it is left alone.
    """
    usable = (
        seconds is not None
        and hasattr(signal, "setitimer")
        and threading.current_thread() is threading.main_thread()
    )
    if not usable:
        yield
        return
    assert seconds is not None
    old_delay, old_interval = signal.getitimer(signal.ITIMER_REAL)
    if old_delay and old_delay <= seconds:
        yield
        return

    def _raise(signum: int, frame: Any) -> None:
        raise PageTimeout

    started = time.monotonic()
    old_handler = signal.signal(signal.SIGALRM, _raise)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old_handler)
        if old_delay:
            left = max(old_delay - (time.monotonic() - started), 1e-3)
            signal.setitimer(signal.ITIMER_REAL, left, old_interval)


def extract_page(
    html: bytes | str | None,
    url: str | None = None,
    options: ExtractOptions | None = None,
    *,
    charset: str | None = None,
    content_type: str | None = None,
) -> PageExtraction:
    """Extract a page's main text, metadata and language.

    Parameters
    ----------
    html : bytes or str
        The raw body (bytes are decoded here) or already decoded HTML.
    url : str, optional
        The page's URL (helps trafilatura with relative links and site names).
    options : ExtractOptions, optional
        Defaults from :mod:`core.defaults` when ``None``.
    charset : str, optional
        The HTTP ``Content-Type`` charset of the response.
    content_type : str, optional
        The HTTP ``Content-Type`` media type; a non-text type gives ``binary``.

    Returns
    -------
    PageExtraction
        Never raises on any input: problems become a status and a reason.
    """
    opts = options or ExtractOptions()
    started = time.perf_counter()
    try:
        with _time_cap(opts.timeout_seconds):
            result = _extract(html, url, opts, charset, content_type)
    except PageTimeout:
        result = PageExtraction(
            "timeout",
            f"extraction took longer than {opts.timeout_seconds:g} s "
            "([extract] timeout_seconds); page skipped",
        )
    except RecursionError:
        result = PageExtraction("error", "HTML nested too deeply to parse (RecursionError)")
    except MemoryError:
        result = PageExtraction("error", "out of memory while parsing the page")
    except Exception as exc:  # the pipeline must go on; the reason is kept
        result = PageExtraction("error", f"{type(exc).__name__}: {exc}"[:_MAX_REASON])
    result.seconds = round(time.perf_counter() - started, 4)
    return result


def _extract(
    html: bytes | str | None,
    url: str | None,
    opts: ExtractOptions,
    charset: str | None,
    content_type: str | None,
) -> PageExtraction:
    if html is None or len(html) == 0:
        return PageExtraction("empty", "empty body (0 bytes)")
    if not isinstance(html, bytes | bytearray | memoryview | str):
        return PageExtraction("error", f"expected bytes or str, got {type(html).__name__}")
    size = len(html) if not isinstance(html, str) else len(html.encode("utf-8", "surrogatepass"))
    if size > opts.max_html_bytes:
        return PageExtraction(
            "too-large",
            f"body of {size:,} bytes exceeds [extract] max_html_bytes = {opts.max_html_bytes:,}",
        )
    if not is_text_media_type(content_type):
        return PageExtraction("binary", f"content type {content_type!r} is not HTML or text")
    note = None
    used_charset = None
    if isinstance(html, str):
        text = html
        what = sniff_binary(text[:1024].encode("utf-8", "surrogatepass"))
    else:
        data = bytes(html)
        what = sniff_binary(data)
        if what is None:
            decoded = decode_html(data, charset)
            text, used_charset, note = decoded.text, decoded.charset, decoded.note
    if what is not None:
        return PageExtraction("binary", f"body is {what}, not HTML")
    if not text.strip():
        return PageExtraction("empty", "body is whitespace only", charset=used_charset)
    text = _XML_DECL.sub("", text, count=1)
    if "<" not in text:  # plain text: wrap so that trafilatura parses it as one document
        text = "<html><body><pre>" + _escape(text) + "</pre></body></html>"
    import trafilatura
    from trafilatura.utils import normalize_unicode
    from trafilatura.xml import xmltotxt

    # output_format="txt": the extraction path of trafilatura.extract(); "python" differs
    doc: Any = trafilatura.bare_extraction(
        text, url=url, output_format="txt", **opts.trafilatura_kwargs()
    )
    main = ""
    if doc is not None and doc.body is not None:
        main = xmltotxt(doc.body, False)
        if doc.commentsbody is not None:
            main = f"{main}\n{xmltotxt(doc.commentsbody, False)}"
        main = normalize_unicode(main).strip()
    meta: dict[str, Any] = {
        "title": _clean(getattr(doc, "title", None)),
        "date": _clean(getattr(doc, "date", None)),
        "sitename": _clean(getattr(doc, "sitename", None)),
    }
    if not main:
        return PageExtraction(
            "empty",
            _join("no main text found in the HTML", note),
            charset=used_charset,
            **meta,
        )
    language, score = identify_language(main)
    if opts.languages and language not in opts.languages:
        return PageExtraction(
            "language-filtered",
            _join(
                f"language {language} (p={score}) is not among the kept languages "
                f"{', '.join(opts.languages)} ([extract] languages)",
                note,
            ),
            text=main,
            language=language,
            language_score=score,
            charset=used_charset,
            **meta,
        )
    return PageExtraction(
        "ok",
        note,
        text=main,
        language=language,
        language_score=score,
        charset=used_charset,
        **meta,
    )


def _clean(value: Any) -> str | None:
    if value is None:
        return None
    value = " ".join(str(value).split())
    return value or None


def _join(reason: str, note: str | None) -> str:
    return f"{reason}; {note}" if note else reason


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
