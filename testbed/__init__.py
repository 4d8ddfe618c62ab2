"""The local test web: real 1997 university sites, generated external sites, trouble cases.

These machines have no internet, so the crawler is developed, tested and demonstrated
against a test web served on 127.0.0.1. ``webometrics testbed build --out DIR`` writes it
(deterministically from ``[testbed] seed``); ``webometrics testbed serve --dir DIR`` (or
:class:`testbed.server.TestbedServer`) answers every absolute URL of it as an HTTP proxy.

What the test web holds
-----------------------
* **University sites**: the WebKB "4 Universities" pages (Craven et al. 1998; cornell,
  texas, washington, wisconsin, Jan 1997) at their original URLs with their original
  HTML, ``Content-Type`` and ``Last-Modified``; WebKB's recorded redirects are served as
  301. The start page of each university gets one injected block of links (marked
  ``<!-- testbed: injected links -->``) to the trouble cases below. Every university host
  serves a generated ``robots.txt``; the main host's disallows one real directory and
  ``/testbed/private/`` and names a ``sitemap.xml`` that lists the start pages only (so a
  crawl seeded from sitemaps meets the same depths).
* **Other universities**: WebKB's *misc* pages, served at their original URLs.
* **Generated external sites**: the registered domains the four universities link to and
  the corpus lacks, most-linked first, up to ``[testbed] max_sites``. Each gets a category
  of the paper (below), a language (en/ru) and pages whose bodies are real texts of its
  kind where a corpus of the kind exists (:mod:`testbed.texts`: WebKB pages of other
  universities; BBC, Lenta.ru, tgcontest and scrapinghub-aeb news; website-classification's
  home pages of social networks, streaming and photography sites, travel, sports, law and
  government sites), real texts of a neighbouring kind standing in where none does
  (scientific communities; Russian social networks, media and other organisations), and
  result lists of real headlines for search engines; the manifest says which
  (``text_origin``): every linked target URL (a share ``link_rot`` of them 404), a home
  page and 1-4 more pages. A share ``https_share`` of the
  sites redirect every ``http://`` URL to ``https://``. Linked domains beyond the cap are
  *dead*: the proxy answers ``502`` with ``X-Testbed-Error: unknown-host``.
* **Citing sites**: generated domains (``tb-*``) whose pages link to a university page;
  some generated outgoing sites link back too. Listed in a Majestic-style CSV and a URL list.
* **A hostile university** (``www.hostile-state.edu``, ``library.hostile-state.edu``;
  :mod:`testbed.hostile`): session ids on every link, an endless calendar, a faceted
  catalogue, soft-404 pages, recursing relative links, a 429 and a 503 page and a menu
  built by JavaScript, answered at request time; its own universities file
  ``hostile.toml`` and its truth in the manifest's ``hostile`` section.
* **Trouble cases** (under each university's main host at ``/testbed/...`` and under
  ``http://trouble.testbed.example/``): robots-disallowed pages, 301/302 chains, a redirect
  loop, 404, 500, slow responses, an endless calendar (crawler trap), windows-1251 and koi8-r
  pages, a broken charset (declares utf-8, sends cp1251), PDF and JPEG files, an oversized
  page, and links to private, loopback and link-local addresses, internal names and
  single-label hosts that must never be fetched (see
  :func:`testbed.siteindex.is_forbidden_host`; the server answers them ``403``).

Categories (the paper's groups, Korelin et al. 2015): ``universities``, ``scientific``
(scientific communities), ``search`` (search engines), ``social`` (social networks,
blogs and forums), ``media``, ``news`` (news portals), ``other`` (other organisations).

HTTPS through the proxy
-----------------------
The server is a plain HTTP proxy. ``http://`` URLs arrive in absolute form
(``GET http://www.cs.cornell.edu/ HTTP/1.1``). ``https://`` URLs arrive either as a
``CONNECT host:443`` tunnel (what Scrapy and urllib do): the server answers 200, speaks TLS
with a self-signed certificate made at start-up (Scrapy does not verify certificates; with
urllib use ``ssl._create_unverified_context()``), and serves ``https://host/path``; or in
absolute form ``GET https://host/path`` over the plain connection (also accepted). Direct
requests (``GET /path`` with a ``Host`` header) serve ``http://<Host>/path``, so a browser
or ``curl -H 'Host: www.cs.cornell.edu' 127.0.0.1:8899/`` can look.

Give the proxy to *every* request, robots.txt requests included: set the environment
variables ``http_proxy`` and ``https_proxy`` (Scrapy's ``HttpProxyMiddleware`` reads them)
or set ``meta["proxy"]`` in a downloader middleware. A ``meta["proxy"]`` set only on the
spider's own requests misses Scrapy's robots.txt requests, which then fail DNS and count
as "allow all". Scrapy follows the redirect loop 20 times, then drops it ("max
redirections reached"). Through the proxy nothing resolves names, so a real DNS failure
never happens: an unknown host answers ``502`` (``X-Testbed-Error: unknown-host``).

Control endpoints (direct requests only, ``Host`` = the server's own address):
``GET /__testbed__/log`` (JSON list of fetches), ``POST /__testbed__/log/clear``,
``GET /__testbed__/manifest`` (the manifest), ``POST /__testbed__/hostile/reset`` (the
hostile site's 429 and 503 pages answer so again). Every proxied request is logged, whatever
the answer, including requests for forbidden addresses (answered ``403``).

Output directory
----------------
``manifest.json``
    below.
``site/index.json``, ``site/bodies.bin``
    the site index: every served URL (key: :func:`testbed.siteindex.url_key`) -> status,
    headers, body slice; plus prefix rules for generated responses (the calendar).
``citing/backlinks-majestic.csv``, ``citing/citing-urls.txt``
    all universities; ``citing/<key>.majestic.csv`` and ``citing/<key>.txt`` per university.
``universities.toml``
    the test web's universities file (also ``testbed/universities.toml`` in the repository).
``hostile.toml``
    the hostile university's universities file (:mod:`testbed.hostile`).

Manifest format (``manifest.json``, format 1)
----------------------------------------------
Top level::

    {"format": 1, "seed": int, "options": {...build options...},
     "link_rules": "...",                 # the link-extraction rules, as text
     "universities": [University, ...],
     "targets": {target_url: Target, ...},   # every external link target of every university
     "sites": {registered_domain: Site, ...},
     "trouble": [Trouble, ...],
     "robots_disallowed": [url, ...],     # every linked or served URL robots.txt disallows
     "hostile": {...},                    # the hostile site's truth (testbed.hostile)
     "forbidden": [url, ...]}             # internal addresses and names: never fetch
                                          # (the injected ones first, then linked ones)

``University``::

    {"key": "cornell", "name": "Cornell University", "country": "USA", "rank": int,
     "domains": ["cornell.edu"], "start_urls": ["http://www.cs.cornell.edu/"],
     "robots_disallowed_dirs": ["/testbed/private/", "/Info/Projects/SimLab/"],
     "sitemaps": ["http://www.cs.cornell.edu/sitemap.xml"],
     "pages": [{"url", "status", "depth", "robots_allowed", "content_type"}, ...],
     "external_links": [{"source", "target", "anchor", "nofollow", "source_depth"}, ...],
     "citing": [{"url", "target", "anchor", "expected"}, ...]}

URLs are kept as written (a page's ``url`` as WebKB recorded it, start pages as in
``start_urls``, targets as the link extractor made them): compare them through
:func:`testbed.siteindex.url_key`, as :class:`testbed.manifest.Manifest` does.
``pages`` are all served URLs inside the university's domains; ``depth`` is the shortest
link distance from a start URL, following in-domain links of HTML pages, redirects at the
same depth, never into robots-disallowed URLs, and stopping at the calendar trap's first
page (``null`` when unreachable). ``external_links`` come from every served HTML page of
the university with ``status`` 200, whether or not reachable: filter on ``source_depth <=
crawl depth`` to compare with a depth-limited crawl. One entry per distinct (source,
target); ``anchor`` (the link text, whitespace collapsed) and ``nofollow`` are those of
the first link with that target.
``citing[].expected`` is ``"verified"`` (the page is served and links to ``target``),
``"missing"`` (served, the link is gone) or ``"gone"`` (404).

Link rules (the same as ``scrapy.linkextractors.LinkExtractor(tags=("a", "area"),
attrs=("href",), deny_extensions=(), canonicalize=False, unique=False, strip=True)`` on
the served response, so ``<base href>`` and the response encoding apply): keep ``http``
and ``https`` URLs, drop the fragment, keep those whose registered domain
(:func:`core.domains.registered_domain`) is not one of the university's domains
nor a subdomain of one. ``nofollow``: the link's ``rel`` contains ``nofollow``.

``Target``::

    {"domain": "yahoo.com", "status": int|null, "final_url": str, "final_status": int|null,
     "redirects": [url, ...], "content_type": str|null, "bytes": int|null,
     "delay": float, "reachable": bool, "error": null|"http_404"|"http_500"|"http_502"|
     "redirect_loop"|"robots"|"forbidden_address"|"too_large"}

``reachable`` means: robots.txt allows every hop, no hop is a forbidden address, the
chain ends in 200 within 10 redirects, and the body is at most 10 MiB (the crawl default
``max_response_bytes``; ``too_large`` otherwise). ``status`` is the first answer;
``redirects`` the hops after the first URL.

``Site``::

    {"category": str, "kind": "generated"|"corpus"|"university"|"dead"|"citing"|"trouble",
     "language": "en"|"ru"|null, "https": bool,
     "text_origin": "real"|"stand-in"|"generated"|null,
     "hosts": [str, ...],
     "pages": [{"url", "source", "language", "corpus", "document", ["part"]}, ...]}

``pages`` are the HTML pages served with status 200 (for ``kind="generated"`` and
``"citing"``, ``source`` names the real text, e.g. ``bbc/tech/042.txt``,
``lenta/8/123``, ``webkb/project/http://...``, ``aeb/<id>``, ``trafilatura/<file>``,
``websites/<row>/<part>``; ``corpus`` and ``university`` sites list their WebKB pages).
``corpus`` is the text's folder in the shared data (``bbc-fulltext``,
``website-classification`` ...) and ``document`` its id there (``tech/042.txt``, a row
number ...); a website-classification home page is split over several pages, ``part``
says which (0 first). A search engine's result lists are assembled from several
headlines: ``corpus`` and ``document`` are null.
``text_origin`` says how the site's texts match its category: ``real`` (texts of its
kind: university pages, news articles, home pages of social networks, media, travel,
sports, law and government sites; and the WebKB pages of ``corpus`` and ``university``
sites), ``stand-in`` (no corpus of the kind here: real texts of a neighbouring kind, e.g.
research-project pages and science news for scientific communities, Telegram posts for
Russian social networks), ``generated`` (search engines' result lists), null (dead
sites, the trouble host). :data:`testbed.texts.ORIGINS` holds the table.

``Trouble``::

    {"case": "redirect_chain"|"redirect_loop"|"not_found"|"server_error"|"slow"|"trap"|
             "cp1251"|"koi8r"|"broken_charset"|"pdf"|"jpeg"|"oversized"|"robots"|
             "forbidden_address",
     "url": str, "where": "university:<key>"|"external", "expected": {...}}

``expected`` holds the HTTP facts a crawler must meet: ``status``, ``final_url``,
``content_type``, ``charset``, ``bytes``, ``delay``, ``fetch`` (false for robots and
forbidden addresses).

Use :func:`testbed.manifest.load_manifest` for a typed view with helpers, and
:func:`testbed.build.shared_build` in test suites: one cached build per machine, keyed by
the options and the testbed's code.
"""

from __future__ import annotations

__all__ = ["CATEGORIES"]

#: The paper's groups of external sites, in the order of its figures.
CATEGORIES: tuple[str, ...] = (
    "universities",
    "scientific",
    "search",
    "social",
    "media",
    "news",
    "other",
)
