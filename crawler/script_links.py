"""Speculative links: URL literals of scripts and JSON blocks (as Heritrix's ExtractorJS).

A menu or a list of partner sites that a script writes into the page has no ``<a href>``
in the HTML the crawler fetches, but its URLs often stand in the script as string
literals. Heritrix's ``ExtractorJS`` takes every quoted string of a script that looks like
a URI and queues it as a *speculative* link; this module does the same for

* inline scripts (``<script>`` of a JavaScript type), event-handler attributes
  (``onclick`` ...), ``javascript:`` URLs and the ``data-href``/``data-url``/``data-link``
  attributes that script-driven links carry: ``found_in = "script"``;
* JSON blocks: ``application/ld+json`` (schema.org), ``application/json`` data islands
  (``__NEXT_DATA__`` and the like), walked as JSON, their ``@context``/``@type`` and image
  keys left out: ``found_in = "json"``;
* a fetched script or JSON file (a linked ``<script src>`` of the site,
  :func:`linked_scripts`): its literals, the same way.

A literal is kept (:func:`looks_like_link`) when it is an absolute ``http(s)`` URL with a
dotted host, a protocol-relative ``//host/...``, a site path (``/dept/``), or a relative
name of a page (``staff.html``); and it is dropped when it is an obvious non-link: the file
of a script, style, image, font or media (by extension), a template fragment (``{{``,
``${``, ``<%``, ``+`` at an end), a MIME type, a regular expression, text with spaces, an
API or asset path of the usual frameworks (``/wp-json/``, ``/api/``, ``/_next/static/``),
or a host of web infrastructure (schema.org, w3.org, analytics, tag managers, script
CDNs). The targets are absolute, fragment dropped, in the order found, each once.

References
----------
Heritrix 3, ``org.archive.modules.extractor.ExtractorJS`` (string literals of scripts
tried as URIs, ``UriUtils.isVeryLikelyUri``); Mohr et al., "An Introduction to Heritrix",
IWAW 2004.

Time: one pass over each script (a regular expression) and each JSON block (a walk):
linear in the page's size.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from urllib.parse import urldefrag, urljoin, urlsplit

from scrapy.http import Response, TextResponse

#: ``found_in`` of a literal of a script, and of a value of a JSON block
SCRIPT = "script"
JSON = "json"

#: script types run as JavaScript (the empty type included)
JS_TYPES = frozenset(
    {
        "",
        "text/javascript",
        "application/javascript",
        "application/x-javascript",
        "text/ecmascript",
        "application/ecmascript",
        "module",
        "text/jsx",
        "text/babel",
    }
)
#: script types holding JSON
JSON_TYPES = frozenset({"application/json", "application/ld+json", "text/json"})
#: JSON keys whose values are never links (vocabulary, pictures, players)
JSON_SKIP_KEYS = frozenset(
    {"@context", "@type", "@vocab", "image", "logo", "thumbnailurl", "contenturl", "embedurl"}
)
#: attributes whose value is a URL a script follows
URL_ATTRS = ("data-href", "data-url", "data-link")

#: extensions of files that are no pages (scripts, styles, pictures, fonts, media, data)
NOT_PAGES = frozenset(
    [
        "js",
        "mjs",
        "cjs",
        "jsx",
        "ts",
        "map",
        "css",
        "scss",
        "less",
        "png",
        "jpg",
        "jpeg",
        "gif",
        "svg",
        "webp",
        "avif",
        "ico",
        "bmp",
        "tif",
        "tiff",
        "woff",
        "woff2",
        "ttf",
        "eot",
        "otf",
        "mp3",
        "mp4",
        "m4a",
        "m4v",
        "webm",
        "ogg",
        "ogv",
        "wav",
        "avi",
        "mov",
        "flv",
        "swf",
        "wasm",
        "json",
        "jsonld",
        "xml",
        "rss",
        "atom",
        "txt",
        "csv",
        "tsv",
        "zip",
        "gz",
        "tgz",
        "rar",
        "7z",
        "exe",
        "dmg",
        "apk",
        "bin",
        "dat",
        "tpl",
        "hbs",
        "mustache",
        "ejs",
        "vue",
    ]
)
#: extensions of pages: a relative name (``staff.html``) is kept only with one of these
PAGE_EXTENSIONS = frozenset(
    [
        "html",
        "htm",
        "shtml",
        "xhtml",
        "php",
        "php3",
        "asp",
        "aspx",
        "jsp",
        "jspx",
        "cfm",
        "cgi",
        "pl",
        "do",
        "action",
    ]
)
#: hosts of web infrastructure, not of sites a page links to (suffix match)
INFRASTRUCTURE = (
    "schema.org",
    "w3.org",
    "xmlns.com",
    "purl.org",
    "ogp.me",
    "google-analytics.com",
    "googletagmanager.com",
    "googleadservices.com",
    "googlesyndication.com",
    "doubleclick.net",
    "gstatic.com",
    "googleapis.com",
    "recaptcha.net",
    "facebook.net",
    "connect.facebook.com",
    "fbcdn.net",
    "jsdelivr.net",
    "unpkg.com",
    "cdnjs.cloudflare.com",
    "bootstrapcdn.com",
    "jquery.com",
    "polyfill.io",
    "hotjar.com",
    "newrelic.com",
    "nr-data.net",
    "sentry.io",
    "yandex.ru/metrika",
    "mc.yandex.ru",
    "top-fwz1.mail.ru",
    "scorecardresearch.com",
    "quantserve.com",
    "chartbeat.com",
    "chartbeat.net",
    "cloudfront.net",
    "akamaihd.net",
    "s.w.org",
    "parastorage.com",
    "tinypass.com",
    "consentframework.com",
    "example.com",
    "example.org",
    "localhost",
)
#: path prefixes of APIs and assets of the usual frameworks (not pages)
NOT_PAGE_PATHS = (
    "/wp-json/",
    "/wp-admin/",
    "/wp-includes/",
    "/wp-content/plugins/",
    "/wp-content/themes/",
    "/xmlrpc.php",
    "/cdn-cgi/",
    "/api/",
    "/ajax/",
    "/graphql",
    "/_next/",
    "/static/js/",
    "/static/css/",
    "/assets/js/",
    "/assets/css/",
    "/node_modules/",
)

# a quoted string of at most 2000 characters on one line (escapes allowed)
# a quoted string on one line, escapes allowed (the unrolled loop: no backtracking)
_LITERAL = re.compile(
    r""""([^"\\\n]*(?:\\.[^"\\\n]*)*)"|'([^'\\\n]*(?:\\.[^'\\\n]*)*)'"""
    r"""|`([^`\\\n]*(?:\\.[^`\\\n]*)*)`"""
)
_UNESCAPE = re.compile(r"\\(?:u([0-9a-fA-F]{4})|x([0-9a-fA-F]{2})|(.))")
_HOST = re.compile(r"^[a-z0-9](?:[a-z0-9-]{0,62}\.)+[a-z][a-z0-9-]{1,62}\.?(?::\d{1,5})?$")
_PATH = re.compile(r"^[A-Za-z0-9._~%!$&'()*+,;=:@/\-]*(?:\?[^\s<>\"'{}|\\^`]*)?$")
_MIME = re.compile(r"^(?:text|application|image|audio|video|font|multipart)/[\w.+-]+$")
# whitespace, template marks ({ }, <% %>, %s, [[ ]], $1), markup, escapes: no URL of a page
_NOT_URL = re.compile(r"[\s{}<>\\]|%[sd>]|\[\[|\]\]|\$\d")
#: path segments of asset folders (``/themes/x/assets/img/``)
ASSET_SEGMENTS = frozenset(
    [
        "img",
        "images",
        "image",
        "assets",
        "static",
        "fonts",
        "css",
        "js",
        "scripts",
        "emoji",
        "icons",
        "ajax",
        "ajaxentry",
    ]
)
#: first labels of asset, tracking and advertising hosts (``cdn6.site.com``)
ASSET_HOSTS = re.compile(r"^(?:cdn|static|assets|img|images|tracking|stats|analytics|ads?)\d*\.")


def unescape(literal: str) -> str:
    r"""A JavaScript string literal's text (``\/``, ``\u002F``, ``\x2F`` undone).

    >>> unescape(r"https:\/\/x.org\u002Fa")
    'https://x.org/a'
    """

    def one(m: re.Match[str]) -> str:
        code = m.group(1) or m.group(2)
        return chr(int(code, 16)) if code else m.group(3)

    return _UNESCAPE.sub(one, literal) if "\\" in literal else literal


def _extension(path: str) -> str:
    name = path.rsplit("/", 1)[-1]
    return name.rsplit(".", 1)[-1].lower() if "." in name else ""


def looks_like_link(text: str) -> bool:
    """Whether a string of a script or a JSON block is taken for a link.

    Examples
    --------
    >>> [looks_like_link(s) for s in ("https://www.partner.org/", "/dept/physics/",
    ...  "staff.html", "//www.site.org/page")]
    [True, True, True, True]
    >>> [looks_like_link(s) for s in ("/js/menu.js", "text/html", "/a/{{id}}", "/",
    ...  "https://schema.org", "hello world", "/wp-json/wp/v2/posts", "images/x.png",
    ...  "/^\\\\d+$/", "'/path' +", "use strict", "https://localhost/x")]
    [False, False, False, False, False, False, False, False, False, False, False, False]
    """
    s = text.strip()
    if len(s) < 2 or len(s) > 2000 or ("/" not in s and "." not in s) or _NOT_URL.search(s):
        return False
    if s[0] == "+" or s[-1] == "+":
        return False
    if s[0] == "." and not s.startswith(("./", "../")):
        return False
    if _MIME.match(s):
        return False
    lower = s.lower()
    if lower.startswith(("http://", "https://", "//")):
        parts = urlsplit(s if not s.startswith("//") else "http:" + s)
        host = (parts.netloc.rsplit("@", 1)[-1]).lower()
        if not _HOST.match(host):
            return False
        bare = host.split(":", 1)[0].rstrip(".")
        hostpath = bare + parts.path.lower()
        if ASSET_HOSTS.match(bare) or any(
            bare == h or bare.endswith("." + h) or hostpath.startswith(h) for h in INFRASTRUCTURE
        ):
            return False
        path = parts.path
        if any(path.lower().startswith(p) for p in NOT_PAGE_PATHS):
            return False
    elif s.startswith("/"):
        if not _PATH.match(s) or s.startswith("/*") or s.count("/") == len(s):
            return False
        path = urlsplit(s).path
        if any(path.lower().startswith(p) for p in NOT_PAGE_PATHS):
            return False
    else:  # a relative name: only a page's (staff.html, dept/index.php)
        if ":" in s or not _PATH.match(s):
            return False
        path = urlsplit(s).path
        return _extension(path) in PAGE_EXTENSIONS
    segments = path.lower().strip("/").split("/")
    if ASSET_SEGMENTS.intersection(segments) or "matomo" in path or "piwik" in path:
        return False
    return _extension(path) not in NOT_PAGES


def literals(script: str) -> Iterator[str]:
    """The string literals of a script that look like links, unescaped, in order."""
    for m in _LITERAL.finditer(script):
        body = m.group(m.lastindex or 0)
        if len(body) < 2 or len(body) > 2000 or ("/" not in body and "." not in body):
            continue
        text = unescape(body)
        if looks_like_link(text):
            yield text.strip()


def json_strings(value: object, key: str = "") -> Iterator[str]:
    """The strings of a JSON value that look like links (values of
    :data:`JSON_SKIP_KEYS` left out), depth first.

    >>> list(json_strings({"@context": "https://schema.org", "url": "https://u.edu/",
    ...   "logo": "https://u.edu/logo.png", "sameAs": ["https://twitter.com/u", "x"]}))
    ['https://u.edu/', 'https://twitter.com/u']
    """
    if key.lower() in JSON_SKIP_KEYS:
        return
    if isinstance(value, str):
        if looks_like_link(value):
            yield value.strip()
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from json_strings(v, str(k))
    elif isinstance(value, list):
        for v in value:
            yield from json_strings(v, key)


def json_links(text: str) -> Iterator[str]:
    """The link-like strings of a JSON text (its literals when it does not parse)."""
    try:
        data = json.loads(text)
    except ValueError:
        yield from literals(text)
        return
    yield from json_strings(data)


def _media_type(response: Response) -> str:
    raw = response.headers.get(b"Content-Type") or b""
    return raw.decode("latin-1").split(";", 1)[0].strip().lower()


def _text(response: Response) -> str:
    if isinstance(response, TextResponse):
        return response.text
    return response.body.decode("utf-8", errors="replace")


def _html_candidates(response: TextResponse) -> Iterator[tuple[str, str]]:
    root = response.selector.root
    if not hasattr(root, "xpath"):
        return
    # one XPath (in C, in document order): inline scripts, event handlers, javascript:
    # links and the data-* URL attributes
    for node in root.xpath(_CANDIDATES):
        if not isinstance(node, str):  # a <script> element
            kind = (node.get("type") or "").split(";", 1)[0].strip().lower()
            text = node.text or ""
            if kind in JSON_TYPES:
                for url in json_links(text):
                    yield url, JSON
            elif kind in JS_TYPES:
                for url in literals(text):
                    yield url, SCRIPT
        elif node.attrname.lower() in URL_ATTRS:  # type: ignore[attr-defined]
            if looks_like_link(node):
                yield node.strip(), SCRIPT
        else:
            for url in literals(node):
                yield url, SCRIPT


_CANDIDATES = (
    "//script[not(@src)][normalize-space(.)]"
    "|//@*[starts-with(name(), 'on')]"
    "|//@href[starts-with(normalize-space(.), 'javascript:')]"
    "|" + "|".join(f"//@{name}" for name in URL_ATTRS)
)


def script_links(response: Response) -> list[tuple[str, str]]:
    """The speculative links of an answer: ``(absolute URL, found_in)``, first per target.

    An HTML page gives the literals of its inline scripts, event handlers and JSON
    blocks; a script (``javascript`` media type) its literals; a JSON file its strings.
    Other answers give none.
    """
    from scrapy.utils.response import get_base_url

    media = _media_type(response)
    candidates: Iterable[tuple[str, str]]
    if "javascript" in media or "ecmascript" in media:
        base = response.url
        candidates = ((u, SCRIPT) for u in literals(_text(response)))
    elif media in JSON_TYPES or media.endswith("+json"):
        base = response.url
        candidates = ((u, JSON) for u in json_links(_text(response)))
    elif isinstance(response, TextResponse) and (not media or "html" in media):
        base = get_base_url(response)
        candidates = _html_candidates(response)
    else:
        return []
    seen: dict[str, str] = {}
    for url, found_in in candidates:
        target = urldefrag(urljoin(base, url))[0]
        if target.startswith(("http://", "https://")) and target not in seen:
            seen[target] = found_in
    return list(seen.items())


#: linked scripts fetched for their literals, at most this many per page
MAX_LINKED_SCRIPTS = 5


def linked_scripts(response: Response) -> list[str]:
    """The scripts an HTML page loads from its own host (``<script src>`` of a JavaScript
    type), absolute, at most :data:`MAX_LINKED_SCRIPTS`; their literals are links of the
    site that only a fetch of the script shows."""
    if not isinstance(response, TextResponse) or "html" not in (_media_type(response) or "html"):
        return []
    from scrapy.utils.response import get_base_url

    base = get_base_url(response)
    host = urlsplit(response.url).hostname
    found: list[str] = []
    for el in response.xpath("//script[@src]"):
        kind = (el.attrib.get("type") or "").split(";", 1)[0].strip().lower()
        if kind not in JS_TYPES:
            continue
        url = urldefrag(urljoin(base, el.attrib["src"].strip()))[0]
        if urlsplit(url).hostname == host and url not in found:
            found.append(url)
            if len(found) == MAX_LINKED_SCRIPTS:
                break
    return found


def _scheme_key(url: str) -> tuple[str, str]:
    parts = urlsplit(url)
    return (parts.hostname or "", parts.path.strip("/").split("/", 1)[0])


def verdicts(targets: Iterable[str], anchors: Iterable[str]) -> list[str]:
    """How speculative links stand against the ``<a href>`` targets of their page:
    ``confirmed`` (one of them), ``plausible`` (on a host and under a first path segment
    that one of them has: the site's own link scheme) or ``unconfirmed`` (the measure of
    ``bench/script_links.py``).

    >>> anchors = ["https://u.edu/news/1", "https://u.edu/about"]
    >>> verdicts(["https://u.edu/about", "https://u.edu/news/2", "https://u.edu/api/x"], anchors)
    ['confirmed', 'plausible', 'unconfirmed']
    """
    exact = set(anchors)
    schemes = {_scheme_key(t) for t in exact}
    return [
        "confirmed" if t in exact else "plausible" if _scheme_key(t) in schemes else "unconfirmed"
        for t in targets
    ]
