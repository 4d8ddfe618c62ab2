"""Categories of external domains and the HTML of generated pages (and their headers, redirects).

A domain's category (the paper's groups) comes from its name where that is obvious
(``.edu``/``.ac.uk`` -> universities, ``yahoo.com`` -> search engines, ``cnn.com`` -> news
portals ...) and otherwise from a seeded hash of the name, so every build with one seed
agrees. Rendering is string templating, O(text length).

Examples
--------
>>> category_of("mit.edu", seed=1), category_of("yahoo.com", seed=1)
('universities', 'search')
>>> category_of("acm.org", seed=1), category_of("cnn.com", seed=1)
('scientific', 'news')
"""

from __future__ import annotations

import hashlib
import html
import io
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from testbed.texts import Text

if TYPE_CHECKING:
    from testbed.siteindex import IndexWriter

_UNIVERSITY_TLDS = re.compile(r"(^|\.)(edu|ac\.[a-z]{2}|edu\.[a-z]{2}|ac)$")


def _words(text: str) -> tuple[str, ...]:
    return tuple(text.split())


# keyword -> category; matched against the domain's labels without the public suffix:
# a keyword of four letters or fewer must equal a label, a longer one may be a substring.
_KEYWORDS: dict[str, tuple[str, ...]] = {
    "search": _words(
        "yahoo altavista lycos excite infoseek webcrawler metacrawler hotbot dejanews "
        "magellan opentext google yandex rambler aport search inktomi looksmart northernlight "
        "savvysearch euroseek"
    ),
    "social": _words(
        "geocities tripod angelfire xoom blog livejournal facebook twitter myspace vk forum "
        "reddit wordpress blogspot community homepages well usenet friends club"
    ),
    "media": _words(
        "imdb pathfinder unitedmedia sportszone espn mtv hollywood film movie music tv radio "
        "magazine wired hotwired disney warner sony paramount entertainment comics dilbert "
        "playboy npr pbs discovery cinema games channel"
    ),
    "news": _words(
        "cnn usatoday nytimes news washingtonpost msnbc bbc reuters latimes tribune herald "
        "times post gazette daily lenta ria wsj economist journal chronicle sfgate gazeta "
        "vesti izvestia gnn nando"
    ),
    "scientific": _words(
        "acm ieee siam ams aaai cra ncstrl w3 ietf arxiv springer elsevier computer usenix "
        "research science scientific society math physics nasa nsf anl lanl llnl nih cern "
        "sigplan sigmod genome gdb netlib ras conference cwi inria gmd mpg nist sri ercim darpa"
    ),
    "other": _words(
        "digital sun ibm apple microsoft intel sgi att xerox netscape hp oracle novell adobe "
        "motorola compaq dec cisco lucent bell bellcore dell cray unisys amazon sybase "
        "informix symantec borland java tandem nec fujitsu hitachi siemens philips nortel "
        "3com"
    ),
}
# the fallback by hash, by top-level domain: (category, weight)
_FALLBACK: dict[str, tuple[tuple[str, int], ...]] = {
    "org": (("scientific", 3), ("other", 4), ("social", 2), ("media", 1)),
    "gov": (("other", 4), ("scientific", 1)),
    "mil": (("other", 1),),
    "*": (("other", 8), ("media", 3), ("news", 3), ("social", 3), ("scientific", 2), ("search", 1)),
}


def stable_hash(*parts: object) -> int:
    """A 64-bit hash of the parts that is the same in every process (unlike ``hash``)."""
    data = "\x1f".join(str(p) for p in parts).encode()
    return int.from_bytes(hashlib.blake2b(data, digest_size=8).digest(), "big")


def category_of(domain: str, *, seed: int) -> str:
    """The category of a registered domain: by name where obvious, else by seeded hash."""
    d = domain.lower()
    if _UNIVERSITY_TLDS.search(d) or re.search(r"(^|[.-])(univ|uni-|university)", d):
        return "universities"
    labels = d.split(".")
    tld = labels[-1]
    names = labels[:-1] if len(labels) > 1 else labels
    for category, words in _KEYWORDS.items():
        for word in words:
            for label in names:
                if (len(word) <= 4 and label == word) or (len(word) > 4 and word in label):
                    return category
    choices = _FALLBACK.get(tld, _FALLBACK["*"])
    total = sum(w for _, w in choices)
    pick = stable_hash(seed, "category", d) % total
    for category, weight in choices:
        if pick < weight:
            return category
        pick -= weight
    return "other"  # pragma: no cover


def escape(text: str) -> str:
    return html.escape(text, quote=True)


def links_html(links: list[tuple[str, str]]) -> str:
    return " | ".join(f'<a href="{escape(href)}">{escape(anchor)}</a>' for href, anchor in links)


def render_text_page(
    site: str,
    text: Text,
    nav: list[tuple[str, str]],
    extra: list[tuple[str, str]],
) -> bytes:
    """A page of a generated site around a real text (title + paragraphs), UTF-8."""
    paras = "\n".join(f"<p>{escape(p)}</p>" for p in text.paragraphs)
    footer = f"<footer><p>{links_html(extra)}</p></footer>" if extra else "<footer></footer>"
    page = (
        f'<!DOCTYPE html>\n<html lang="{text.language}"><head><meta charset="utf-8">\n'
        f"<title>{escape(text.title)} | {escape(site)}</title></head>\n<body>\n"
        f'<header><nav><a href="/">{escape(site)}</a> | {links_html(nav)}</nav></header>\n'
        f"<main><article><h1>{escape(text.title)}</h1>\n{paras}\n</article></main>\n"
        f"{footer}\n</body></html>\n"
    )
    return page.encode("utf-8")


def render_results_page(
    site: str,
    language: str,
    query: str,
    results: list[tuple[str, ...]],
    nav: list[tuple[str, str]],
    extra: list[tuple[str, str]],
) -> bytes:
    """A search engine's result list of real headlines and lead sentences, UTF-8."""
    heading = "Результаты поиска" if language == "ru" else "Search results for"
    items = "\n".join(
        f"<li><h3>{escape(title)}</h3><p>{escape(lead)}</p></li>" for _src, title, lead in results
    )
    footer = f"<footer><p>{links_html(extra)}</p></footer>" if extra else ""
    page = (
        f'<!DOCTYPE html>\n<html lang="{language}"><head><meta charset="utf-8">\n'
        f"<title>{escape(query)} - {escape(site)}</title></head>\n<body>\n"
        f'<header><nav><a href="/">{escape(site)}</a> | {links_html(nav)}</nav>\n'
        f'<form action="/search"><input name="q" value="{escape(query)}"></form></header>\n'
        f"<main><h1>{heading} «{escape(query)}»</h1>\n<ol>\n{items}\n</ol></main>\n{footer}\n"
        "</body></html>\n"
    )
    return page.encode("utf-8")


_BODY = re.compile(rb"<body[^>]*>", re.I)
_BASE = re.compile(rb"<base\s[^>]*>", re.I)
_COMMENT = re.compile(rb"<!--.*?(?:-->|$)", re.S)


def insert_into_body(page: bytes, block: bytes) -> bytes:
    """``page`` with ``block`` right after its ``<body>`` tag. The tag is found where the
    HTML parser puts the body (its source line), not in a script's string nor in a
    comment; a page without a body tag gets the block first.

    >>> insert_into_body(b"<!--<body bgcolor=red>--><body><p>x</p>", b"<nav/>")
    b'<!--<body bgcolor=red>--><body><nav/><p>x</p>'
    """
    import lxml.html

    try:
        body = lxml.html.document_fromstring(page).body
        line = body.sourceline if body is not None else None
    except (ValueError, lxml.etree.ParserError):
        line = None
    start = 0
    if line:
        for _ in range(line - 1):
            nl = page.find(b"\n", start)
            if nl < 0:
                break
            start = nl + 1
    comments = [c.span() for c in _COMMENT.finditer(page)]

    def body_tag(pos: int) -> re.Match[bytes] | None:
        # the first <body> tag from pos that is not inside an HTML comment
        for m in _BODY.finditer(page, pos):
            if not any(a <= m.start() < b for a, b in comments):
                return m
        return None

    m = body_tag(start) if line else None
    if m is None:
        m = body_tag(0)
    if m is None:
        return block + page
    return page[: m.end()] + block + page[m.end() :]


def render_real_page(text: Text, nav: list[tuple[str, str]], extra: list[tuple[str, str]]) -> bytes:
    """A real HTML page with a navigation block (and any extra links) right after
    ``<body>``; ``<base>`` tags are removed so relative links stay on the site."""
    assert text.html is not None
    block = f'<nav class="site-nav">{links_html(nav + extra)}</nav>\n'.encode()
    return insert_into_body(_BASE.sub(b"", text.html), block)


def html_headers(charset: str = "utf-8") -> list[tuple[str, str]]:
    return [("Content-Type", f"text/html; charset={charset}")]


def redirect(w: IndexWriter, url: str, to: str, status: int = 301) -> None:
    body = f'<html><body><p>Moved to <a href="{to}">{to}</a></p></body></html>\n'.encode()
    w.add(url, status, [("Location", to), ("Content-Type", "text/html")], body, replace=True)


def plain_page(title: str, paragraphs: list[str], links: Sequence[tuple[str, str]] = ()) -> bytes:
    text = Text("testbed", "en", title, tuple(paragraphs))
    return render_text_page(title, text, list(links), []).replace(
        b"<footer></footer>", f"<footer>{links_html(list(links))}</footer>".encode()
    )


def binary_body(kind: str, key: str) -> tuple[str, bytes]:
    """(content type, bytes) of a non-HTML file: ``pdf``, ``jpeg``, ``gif``, ``ps`` or
    ``octet`` (deterministic from ``key``)."""
    if kind == "pdf":
        return "application/pdf", make_pdf(f"Technical report {key}")
    if kind in ("jpeg", "gif"):
        return f"image/{kind}", make_image(key, kind)
    if kind == "ps":
        text = f"%!PS-Adobe-2.0\n%%Title: {key}\n/Times-Roman findfont 12 scalefont setfont\n"
        text += f"72 720 moveto ({key}) show\nshowpage\n%%EOF\n"
        return "application/postscript", text.encode("latin-1", "replace")
    seed = stable_hash("octet", key)
    data = bytes((seed >> (8 * (i % 8)) ^ i) & 0xFF for i in range(2048))
    return "application/octet-stream", data


def make_pdf(line: str) -> bytes:
    """A minimal valid one-page PDF 1.4 that shows ``line``."""
    safe = line.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")
    stream = f"BT /F1 18 Tf 72 720 Td ({safe}) Tj ET".encode("latin-1", "replace")
    objs = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
        b"/Resources << /Font << /F1 5 0 R >> >> >>",
        b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    out = io.BytesIO()
    out.write(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for i, obj in enumerate(objs, start=1):
        offsets.append(out.tell())
        out.write(b"%d 0 obj\n" % i + obj + b"\nendobj\n")
    xref = out.tell()
    out.write(b"xref\n0 %d\n0000000000 65535 f \n" % (len(objs) + 1))
    for off in offsets:
        out.write(b"%010d 00000 n \n" % off)
    out.write(
        b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objs) + 1, xref)
    )
    return out.getvalue()


def make_image(key: str, kind: str = "jpeg") -> bytes:
    """A small deterministic picture (64x48 gradient in a colour from ``key``)."""
    from PIL import Image

    h = stable_hash("image", key)
    base = ((h >> 16) & 0xFF, (h >> 8) & 0xFF, h & 0xFF)
    img = Image.new("RGB", (64, 48))
    img.putdata(
        [
            ((base[0] + x * 3) % 256, (base[1] + y * 5) % 256, base[2])
            for y in range(48)
            for x in range(64)
        ]
    )
    buf = io.BytesIO()
    img.save(buf, format="JPEG" if kind == "jpeg" else "GIF", quality=85)
    return buf.getvalue()


_EXT_KIND = {
    ".pdf": "pdf",
    ".jpg": "jpeg",
    ".jpeg": "jpeg",
    ".gif": "gif",
    ".ps": "ps",
}
_OCTET = (".gz", ".z", ".tar", ".zip", ".tgz", ".dvi", ".tex", ".exe", ".hqx", ".mpg", ".mpeg",
          ".au", ".wav", ".mov", ".avi", ".xbm", ".png", ".bin", ".sit", ".doc", ".ppt", ".rtf",
          ".bz2", ".rpm", ".deb", ".jar", ".class")  # fmt: skip


def kind_of_path(path: str) -> str:
    """``html`` for a web page path, else the binary kind its extension implies."""
    low = path.lower().rsplit("/", 1)[-1]
    for ext, kind in _EXT_KIND.items():
        if low.endswith(ext):
            return kind
    if low.endswith(".ps.z") or low.endswith(".ps.gz"):
        return "octet"
    if low.endswith(_OCTET):
        return "octet"
    return "html"
