"""WebKB "4 Universities" (Craven et al. 1998): 8,281 university web pages of 1997 by page type.

The archive ``webkb.tar.gz`` holds ``webkb/<class>/<university>/<file>``: the class is
the page type (student, faculty, course, project, department, staff, and ``other`` for
pages of none of these), the university one of cornell, texas, washington, wisconsin
or misc. A file name is the page URL with ``/`` written ``^`` and ``:`` written as the
private-use character U+F03A. A file is the HTTP response headers (``Date:``,
``Server:``, ``Content-type:`` ..., sometimes a ``WWW Alert`` line), a blank line, and
the raw HTML of 1996-97.

:func:`load_webkb` strips the headers (the leading lines up to the first blank line,
when the first looks like a header and none holds markup), takes the charset of ``Content-type``
(Latin-1 otherwise, the web's default then) and turns the HTML into text with lxml
(title, then the text of the body without scripts, styles and comments; the content
of ``<noframes>`` is kept as ordinary HTML) or, with
``extractor="trafilatura"``, with trafilatura's main-text extraction (falling back to
lxml when trafilatura finds no main text, as it often does on short 1997 pages).
The archive is read in memory, never unpacked. Time O(size of the archive): about 4 s
with lxml, several times that with trafilatura.

References
----------
M. Craven, D. DiPasquo, D. Freitag, A. McCallum, T. Mitchell, K. Nigam, S. Slattery,
"Learning to extract symbolic knowledge from the World Wide Web", AAAI 1998
(``../shared/data/webkb-4universities/SOURCE.txt``).

Examples
--------
>>> from corpora.webkb import split_http, url_from_filename
>>> url_from_filename("http\\uf03a^^www.cs.wisc.edu^~lederman^lederman.html")
'http://www.cs.wisc.edu/~lederman/lederman.html'
>>> headers, html = split_http(b"Date: Tue\\nContent-type: text/html\\n\\n<html>hi</html>")
>>> headers["content-type"], html
('text/html', b'<html>hi</html>')
"""

from __future__ import annotations

import re
import tarfile
from dataclasses import dataclass
from pathlib import Path

from core.shared_data import data_dir

PAGE_TYPES = ("student", "faculty", "course", "project", "department", "staff")
"""The six page types (activity types) labelled in WebKB."""

ALL_CLASSES = (*PAGE_TYPES, "other")
"""The page types and ``other`` (pages of none of them)."""

UNIVERSITIES = ("cornell", "texas", "washington", "wisconsin", "misc")
"""The universities (``misc``: pages of other universities)."""

EXTRACTORS = ("lxml", "trafilatura")
"""How HTML becomes text."""

_HEADER_LINE = re.compile(rb"^(?:[A-Za-z][A-Za-z0-9-]*:.*|WWW Alert:.*|HTTP/\d.*)$")
_CHARSET = re.compile(r"charset\s*=\s*[\"']?([A-Za-z0-9_.:-]+)", re.I)
_SPACE = re.compile(r"[ \t\r\f\v]+")
_BLANK_LINES = re.compile(r"\n\s*\n+")
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_XML_DECL = re.compile(r"^\s*<\?xml[^>]*>")
_FRAMES = re.compile(r"</?(?:noframes|frameset)\b[^>]*>", re.I)


@dataclass(frozen=True, slots=True)
class WebKBPage:
    """One WebKB page.

    Attributes
    ----------
    url : str
        The page's URL, recovered from the file name.
    label : str
        The page type, one of :data:`ALL_CLASSES`.
    university : str
        One of :data:`UNIVERSITIES`.
    title : str
        The HTML ``<title>`` ('' when there is none).
    text : str
        The page as text (title first when the extractor keeps it).
    html : bytes
        The raw HTML, without the HTTP headers.
    """

    url: str
    label: str
    university: str
    title: str
    text: str
    html: bytes


def url_from_filename(name: str) -> str:
    """The URL a WebKB file name stands for (``^`` -> ``/``, U+F03A -> ``:``)."""
    return name.replace("\uf03a", ":").replace("^", "/")


def split_http(raw: bytes) -> tuple[dict[str, str], bytes]:
    """Split a stored response into its headers (lower-case names) and its body.

    The leading lines up to the first blank line are taken for headers when the first
    one looks like a header (``Name: value``, ``HTTP/1.0 ...`` or a ``WWW Alert`` line)
    and no line that does not look like one holds a ``<`` (some later header lines are
    mangled in the collection, as ``: text/html``); otherwise the whole file is the body.

    Parameters
    ----------
    raw : bytes

    Returns
    -------
    headers : dict of str to str
    body : bytes
    """
    m = re.search(rb"\r?\n\r?\n", raw)
    if m is None or raw[:1] == b"<":
        return {}, raw
    lines = raw[: m.start()].splitlines()
    # the first line must be a header; later ones may be mangled (": text/html" happens)
    # but hold no markup
    if not lines or not _HEADER_LINE.match(lines[0].strip()):
        return {}, raw
    if any(b"<" in line and not _HEADER_LINE.match(line.strip()) for line in lines):
        return {}, raw
    headers: dict[str, str] = {}
    for line in lines:
        name, sep, value = line.decode("latin-1").partition(":")
        if sep:
            headers[name.strip().lower()] = value.strip()
    return headers, raw[m.end() :]


def _decode(body: bytes, headers: dict[str, str]) -> str:
    m = _CHARSET.search(headers.get("content-type", ""))
    encoding = m.group(1) if m else "latin-1"
    try:
        return body.decode(encoding, errors="replace")
    except LookupError:  # an unknown charset name
        return body.decode("latin-1")


def _tidy(text: str) -> str:
    lines = (_SPACE.sub(" ", line).strip() for line in text.splitlines())
    return _BLANK_LINES.sub("\n\n", "\n".join(lines)).strip()


def html_to_text(html: str) -> tuple[str, str]:
    """Title and text of a page with lxml (scripts, styles and comments removed).

    Parameters
    ----------
    html : str

    Returns
    -------
    title, text : str
        ``text`` starts with the title; both '' for a page lxml cannot parse.

    Examples
    --------
    >>> html_to_text("<html><title>T</title><body><p>a <b>b</b></p><script>x</script></body>")
    ('T', 'T\\n\\na b')
    """
    import lxml.etree
    import lxml.html

    # libxml2 keeps the content of <noframes> as raw text: drop the frame set tags
    html = _FRAMES.sub(" ", _XML_DECL.sub("", _CONTROL.sub(" ", html)))
    if not html.strip():
        return "", ""
    try:
        root = lxml.html.fromstring(html)
    except (lxml.etree.ParserError, ValueError):
        return "", ""
    title_el = root.find(".//title")
    title = _tidy(title_el.text_content()) if title_el is not None else ""
    for el in root.xpath("//script|//style|//title|//comment()"):
        if el.getparent() is not None:
            el.drop_tree()
    body = _tidy(root.text_content())
    return title, f"{title}\n\n{body}".strip() if title else body


def _trafilatura_text(html: str, url: str) -> str | None:
    import trafilatura

    return trafilatura.extract(html, url=url, include_comments=False, favor_recall=True)


def load_webkb(
    classes: tuple[str, ...] = PAGE_TYPES,
    *,
    extractor: str = "lxml",
    path: str | Path | None = None,
) -> list[WebKBPage]:
    """The pages of some classes, sorted by class, university and URL.

    Parameters
    ----------
    classes : tuple of str, default :data:`PAGE_TYPES`
        Which page types to load (``ALL_CLASSES`` adds the 3,763 ``other`` pages).
    extractor : {"lxml", "trafilatura"}, default "lxml"
        How HTML becomes text (see the module docstring).
    path : path-like, optional
        ``webkb.tar.gz`` or the folder holding it; default
        ``data_dir("webkb-4universities")``.

    Returns
    -------
    list of WebKBPage

    Raises
    ------
    ValueError
        An unknown class or extractor.
    DataNotFoundError
        The shared data folder is missing.
    FileNotFoundError
        No ``webkb.tar.gz`` there.
    """
    unknown = set(classes) - set(ALL_CLASSES)
    if unknown:
        raise ValueError(f"unknown WebKB classes {sorted(unknown)}: use some of {ALL_CLASSES}")
    if extractor not in EXTRACTORS:
        raise ValueError(f"extractor must be one of {EXTRACTORS}, got {extractor!r}")
    p = Path(path) if path is not None else data_dir("webkb-4universities")
    archive = p / "webkb.tar.gz" if p.is_dir() else p
    if not archive.is_file():
        raise FileNotFoundError(f"{archive} not found: is it the WebKB 4 Universities data?")
    wanted = set(classes)
    out: list[WebKBPage] = []
    with tarfile.open(archive, "r:gz") as tar:
        for member in tar:
            parts = member.name.split("/")
            if not member.isfile() or len(parts) != 4 or parts[1] not in wanted:
                continue
            handle = tar.extractfile(member)
            if handle is None:
                continue
            headers, body = split_http(handle.read())
            html = _decode(body, headers)
            url = url_from_filename(parts[3])
            title, text = html_to_text(html)
            if extractor == "trafilatura":
                main = _trafilatura_text(html, url)
                if main:
                    text = f"{title}\n\n{main}".strip() if title else main
            out.append(WebKBPage(url, parts[1], parts[2], title, text, body))
    out.sort(key=lambda d: (d.label, d.university, d.url))
    return out
