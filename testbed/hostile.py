"""A hostile university site: the traps of real university sites, with its truth.

Hostile State University (``http://www.hostile-state.edu/`` and its library at
``http://library.hostile-state.edu/``) is built the way many university sites are, and
answered by the test web's server at request time (its answers change from one response
to the next, so they are not in the site index):

* **session ids on every internal link**, a new one per response: ``;jsessionid=...`` in
  the path on most pages, ``?sid=...`` on the news, ``?sessionid=...`` on the events and
  ``?PHPSESSID=...`` on the library host; the server accepts any id, or none;
* an **endless events calendar** (``/events/calendar/YYYY/MM/`` and day pages
  ``.../DD/``, each linking to the next and previous ones);
* a **faceted library catalogue** (``/catalogue/?subject=..&format=..&year=..&sort=..``:
  each page links to every filter it does not yet hold, so the combinations never end);
* **soft-404 pages**: any unknown path answers 200 with a "not found" page that invents
  deeper paths ("perhaps you were looking for ...");
* **relative links that recurse** (``href="groups/"`` on ``/research/groups/``) and
  **repeated path segments** (``href="news/2026/"`` on ``/news/2026/``): the server
  ignores repeated runs of path segments, as rewriting servers do, so they never end;
* a page answering **429 with Retry-After** (``/research/projects/``: for
  :data:`RETRY_AFTER` seconds after its first request) and one answering **503 once**
  (``/news/archive/``), then 200;
* a **department menu built by JavaScript**: ``/departments/`` links to its departments
  only through URL literals in a script and in an ``application/ld+json`` block; the
  home page's ``sameAs`` social profiles too.

The real pages link to :data:`EXTERNAL_DOMAINS` (26 registered domains), whose sites
the server also answers (one page per URL, 200). Some domains are linked only from pages
behind scripts, some only from the 429 and 503 pages.

The truth (``manifest.json``'s ``hostile`` section, :func:`manifest_section`): the
university (``hostile.toml`` in the build folder is its universities file), the real
pages with their depths (by ``<a>`` links; ``script_depth`` with the script links too)
and external domains, the external domains with what stands before them
(``behind``: ``null``, ``"script"``, ``"429"`` or ``"503"``), and the trap kinds with
a pattern each. :func:`classify` says what any URL of the site is.

No module-level mutable state: the server's :class:`HostileState` (429/503 clocks, the
session counter) lives with the server.
"""

from __future__ import annotations

import hashlib
import html
import itertools
import re
import threading
import time
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit

from testbed.siteindex import StoredResponse

DOMAIN = "hostile-state.edu"
MAIN = "www.hostile-state.edu"
LIBRARY = "library.hostile-state.edu"
HOSTS = (MAIN, LIBRARY)
START_URL = f"http://{MAIN}/"
NAME = "Hostile State University"
#: seconds the 429 page keeps answering 429 after its first request
RETRY_AFTER = 2
PAGE_429 = (MAIN, "/research/projects/")
PAGE_503 = (MAIN, "/news/archive/")

_UNIVERSITIES_TOML = f"""# The test web's hostile university (testbed/hostile.py)
[[university]]
name = "{NAME}"
country = "USA"
domains = ["{DOMAIN}"]
home = ["{START_URL}"]
"""


@dataclass(frozen=True)
class HostilePage:
    """A real page of the site: where it is, what it says, what it links to."""

    host: str
    path: str
    title: str
    text: str
    links: tuple[str, ...] = ()  # paths on the same host, or absolute URLs of the other host
    external: tuple[str, ...] = ()  # registered domains it links to
    relative: tuple[tuple[str, str], ...] = ()  # (href as written, anchor): recursion
    script_links: tuple[str, ...] = ()  # internal URLs only in scripts / JSON-LD
    script_external: tuple[str, ...] = ()  # external domains only in scripts / JSON-LD

    @property
    def url(self) -> str:
        return f"http://{self.host}{self.path}"


_DEPARTMENTS = (
    ("physics", "Physics", "hs-physics-society.org"),
    ("chemistry", "Chemistry", "hs-chem-consortium.org"),
    ("history", "History", "hs-history-journal.org"),
    ("mathematics", "Mathematics", "hs-math-olympiad.org"),
)
_LIB = f"http://{LIBRARY}/"


def _pages() -> tuple[HostilePage, ...]:
    """The real pages (a fresh tuple per call: nothing shared is mutable)."""
    m, lib = MAIN, LIBRARY
    dept_urls = tuple(f"http://{MAIN}/departments/{slug}/" for slug, _, _ in _DEPARTMENTS)
    pages = [
        HostilePage(
            m,
            "/",
            "Hostile State University",
            "Welcome to Hostile State University, a public research university founded in "
            "1891 on the river bank, with four faculties and a library of two million books.",
            (
                "/about/",
                "/admissions/",
                "/research/",
                "/news/",
                "/events/",
                "/departments/",
                "/contact/",
                _LIB,
                "/alumni/old-site/",
                "/intranet/",
            ),
            ("hs-alumni-network.org", "hs-student-union.org"),
            script_external=("hs-social-network.com", "hs-video-channel.tv"),
        ),
        HostilePage(
            m,
            "/about/",
            "About the university",
            "The university teaches eleven thousand students and employs nine hundred "
            "researchers; its governance and history are described below.",
            ("/about/history/", "/about/governance/"),
            ("hs-alumni-network.org", "hs-student-union.org"),
        ),
        HostilePage(
            m,
            "/about/history/",
            "Our history",
            "Founded as an agricultural college, the university grew through the twentieth "
            "century into a comprehensive institution with a medical school.",
            external=("heritage-trust-hs.org",),
        ),
        HostilePage(
            m,
            "/about/governance/",
            "Governance",
            "A board of regents appoints the president; the academic senate decides "
            "programmes, examinations and degrees.",
            external=("board-of-regents-hs.org",),
        ),
        HostilePage(
            m,
            "/admissions/",
            "Admissions",
            "Applications for the autumn term open in October. Entry requirements differ "
            "between programmes; the admissions office answers questions.",
            ("/admissions/international/",),
            ("hs-admissions-portal.com",),
        ),
        HostilePage(
            m,
            "/admissions/international/",
            "International students",
            "Students from abroad need a study visa; the international office helps with "
            "housing, insurance and language courses before the term starts.",
            external=("hs-visa-help.org",),
        ),
        HostilePage(
            m,
            "/contact/",
            "Contact",
            "Hostile State University, 1 College Road. Switchboard open on weekdays from "
            "eight to five; the press office answers media enquiries.",
        ),
        HostilePage(
            m,
            "/research/",
            "Research",
            "Research at the university spans astronomy, genomics and climate science, "
            "funded by national agencies and industry partners.",
            ("/research/groups/", "/research/projects/", "/research/centres/"),
            ("national-science-fund-hs.org",),
        ),
        HostilePage(
            m,
            "/research/groups/",
            "Research groups",
            "Our research groups work on the structure of galaxies and on the genetics of "
            "crops; each group lists its members and publications.",
            ("/research/groups/astro/", "/research/groups/bio/"),
            ("hs-astro-survey.org",),
            relative=(("groups/", "All research groups"),),
        ),
        HostilePage(
            m,
            "/research/groups/astro/",
            "Astrophysics group",
            "The astrophysics group runs a sky survey with a two-metre telescope and "
            "studies the formation of dwarf galaxies.",
            external=("hs-astro-survey.org",),
        ),
        HostilePage(
            m,
            "/research/groups/bio/",
            "Plant genomics group",
            "The plant genomics group sequences drought-resistant wheat varieties with "
            "partners in three countries.",
            external=("hs-genome-lab.org",),
        ),
        HostilePage(
            m,
            "/research/projects/",
            "Research projects",
            "Current projects include a European network on sustainable cities and an "
            "industrial partnership on battery materials.",
            external=("hs-eu-projects.eu", "hs-industry-partners.com"),
        ),
        HostilePage(
            m,
            "/research/centres/",
            "Research centres",
            "The climate centre models regional rainfall; the data centre serves the "
            "whole campus with computing and storage.",
            external=("hs-climate-centre.org",),
        ),
        HostilePage(
            m,
            "/news/",
            "News",
            "News from the campus: discoveries, prizes, visits and the reopening of the "
            "library after its renovation.",
            ("/news/2026/", "/news/archive/"),
        ),
        HostilePage(
            m,
            "/news/2026/",
            "News of 2026",
            "This year's stories from the university, newest first, with links to the "
            "articles and the press releases.",
            (
                "/news/2026/new-telescope/",
                "/news/2026/prize/",
                "/news/2026/library-reopens/",
                "/news/2026/exchange/",
            ),
            relative=(("news/2026/", "This year's news"),),
        ),
        HostilePage(
            m,
            "/news/2026/new-telescope/",
            "A new telescope",
            "The astronomy department inaugurated a robotic telescope on the mountain "
            "observatory, funded by a private donation.",
            external=("hs-telescope-news.com",),
        ),
        HostilePage(
            m,
            "/news/2026/prize/",
            "Prize for a chemist",
            "A professor of chemistry received the national prize for her work on "
            "catalysts that split water with sunlight.",
            external=("hs-prize-foundation.org",),
        ),
        HostilePage(
            m,
            "/news/2026/library-reopens/",
            "The library reopens",
            "After two years of renovation the main library reopened with new reading "
            "rooms and a digitisation workshop.",
            external=("hs-digital-library.org",),
        ),
        HostilePage(
            m,
            "/news/2026/exchange/",
            "A new exchange programme",
            "Students can now spend a semester at twelve partner universities in Europe "
            "through the new exchange network.",
            external=("hs-exchange-network.eu",),
        ),
        HostilePage(
            m,
            "/news/archive/",
            "News archive",
            "Press releases of earlier years, and the newspaper articles about the "
            "university collected by the press office since the nineties.",
            external=("hs-press-archive.com", "hs-newspaper-1990s.org"),
        ),
        HostilePage(
            m,
            "/events/",
            "Events",
            "Open days, public lectures and concerts on campus; the calendar lists every "
            "event by month.",
            ("/events/open-day/", "/events/lecture-series/", "/events/calendar/2026/11/"),
            ("hs-city-events.com",),
        ),
        HostilePage(
            m,
            "/events/open-day/",
            "Open day",
            "Visit the campus on the open day: talks by every faculty, guided tours of the "
            "laboratories and a fair of student clubs.",
            external=("hs-city-events.com",),
        ),
        HostilePage(
            m,
            "/events/lecture-series/",
            "Public lecture series",
            "Every Thursday evening a researcher presents their work to the public; the "
            "recordings are published online.",
            external=("hs-lecture-videos.tv",),
        ),
        HostilePage(
            m,
            "/departments/",
            "Departments",
            "The university's departments are listed in the menu below, which your "
            "browser builds when scripts are enabled.",
            script_links=dept_urls,
        ),
    ]
    for slug, title, domain in _DEPARTMENTS:
        pages.append(
            HostilePage(m, f"/departments/{slug}/", f"Department of {title}",
                 f"The department of {title.lower()} offers bachelor, master and doctoral "
                 f"programmes in {title.lower()} and hosts a seminar series.",
                 external=(domain,))
        )  # fmt: skip
    pages += [
        HostilePage(lib, "/", "University Library",
             "The university library holds two million books, special collections and a "
             "catalogue of everything it owns.",
             ("/catalogue/", "/collections/", "/opening-hours/", START_URL),
             ("hs-digital-library.org",)),
        HostilePage(lib, "/opening-hours/", "Opening hours",
             "The reading rooms open from eight in the morning to ten at night, on "
             "weekends from ten to six."),
        HostilePage(lib, "/collections/", "Special collections",
             "Manuscripts, historical maps and the doctoral theses of the university since "
             "its foundation.",
             ("/collections/manuscripts/", "/collections/maps/", "/collections/theses/"),
             ("hs-digital-library.org",)),
        HostilePage(lib, "/collections/manuscripts/", "Manuscripts",
             "Medieval manuscripts bequeathed by the founder, digitised page by page.",
             external=("hs-digital-library.org",)),
        HostilePage(lib, "/collections/maps/", "Historical maps",
             "Maps of the region from the seventeenth century onwards, with the survey of "
             "the river valley.",
             external=("heritage-trust-hs.org",)),
        HostilePage(lib, "/collections/theses/", "Doctoral theses",
             "Every doctoral thesis defended at the university, most of them open access "
             "since the national fund required it.",
             external=("national-science-fund-hs.org",)),
        HostilePage(lib, "/catalogue/", "Library catalogue",
             "Search the catalogue by subject, format, year and language; filters narrow "
             "the results.",
             external=("hs-digital-library.org",)),
    ]  # fmt: skip
    return tuple(pages)


#: every external registered domain the real pages link to (plain, script, 429, 503)
EXTERNAL_DOMAINS: tuple[str, ...] = tuple(
    sorted({d for p in _pages() for d in (*p.external, *p.script_external)})
)

_FACETS = {
    "subject": ("physics", "history", "biology", "law"),
    "format": ("book", "journal", "map"),
    "year": ("1990", "2000", "2010"),
    "sort": ("title", "date"),
}
_SOFT_WORDS = (("archive", "Archive"), ("index", "Index"), ("old", "Older pages"))
_SEGMENTS_RUN = re.compile(r"^(.*?/)((?:[^/]+/){1,3}?)\2+(.*)$")
_SESSION_PATH = re.compile(r";(?:jsessionid|phpsessid|sid|sessionid)=[^/?#;]*", re.IGNORECASE)
_SESSION_KEYS = frozenset({"jsessionid", "phpsessid", "sid", "sessionid"})
_CALENDAR = re.compile(r"^/events/calendar/(\d{4})/(\d{2})/(?:(\d{2})/)?$")


def _clean(url: str) -> tuple[str, str, list[tuple[str, str]]]:
    """(host, path, query pairs) of a URL of the site, its session ids removed."""
    parts = urlsplit(url)
    path = _SESSION_PATH.sub("", parts.path) or "/"
    pairs = [
        (k, v)
        for k, v in parse_qsl(parts.query, keep_blank_values=True)
        if k.lower() not in _SESSION_KEYS
    ]
    return (parts.hostname or "").lower(), path, pairs


def collapse(path: str) -> str:
    """``path`` with consecutive repeats of runs of 1-3 segments kept once (what the
    server serves: ``/a/b/b/`` and ``/a/b/c/b/c/`` are ``/a/b/`` and ``/a/b/c/``)."""
    while True:
        m = _SEGMENTS_RUN.match(path)
        if m is None:
            return path
        path = m.group(1) + m.group(2) + m.group(3)


class HostileSite:
    """The site's pages, what each URL is, and what the server answers."""

    def __init__(self) -> None:
        self.pages = _pages()
        self.by_key = {(p.host, p.path): p for p in self.pages}

    # -- truth -------------------------------------------------------------------------
    def classify(self, url: str) -> str:
        """What ``url`` is: ``real``, ``robots``, ``external``, ``other`` (not this site)
        or its trap kind: ``calendar``, ``faceted``, ``relative_recursion``,
        ``repeated_segments`` or ``soft_404``. Session ids do not matter."""
        host, path, pairs = _clean(url)
        if host in HOSTS:
            if path == "/robots.txt":
                return "robots"
            if host == LIBRARY and path == "/catalogue/" and pairs:
                return "faceted"
            if (host, path) in self.by_key:
                return "real"
            if host == MAIN and _CALENDAR.match(path):
                return "calendar"
            folded = collapse(path)
            if folded != path and (host, folded) in self.by_key:
                segs = [s for s in path.split("/") if s]
                single = any(a == b for a, b in itertools.pairwise(segs))
                return "relative_recursion" if single else "repeated_segments"
            return "soft_404"
        if _external_domain(host) is not None:
            return "external"
        return "other"

    def depths(self, *, scripts: bool) -> dict[str, int]:
        """Real page URL -> shortest link distance from the start page (``<a>`` links;
        with ``scripts`` the script links too)."""
        depth = {START_URL: 0}
        frontier = [self.by_key[(MAIN, "/")]]
        while frontier:
            nxt = []
            for page in frontier:
                targets = [_absolute(page.host, link) for link in page.links]
                if scripts:
                    targets += list(page.script_links)
                for url in targets:
                    key = _clean(url)[:2]
                    if key in self.by_key and url not in depth:
                        depth[url] = depth[page.url] + 1
                        nxt.append(self.by_key[key])
            frontier = nxt
        return depth

    # -- answers -----------------------------------------------------------------------
    def answer(self, url: str, state: HostileState) -> StoredResponse | None:
        """The server's answer for ``url``, or None when the URL is not of this site."""
        host, path, pairs = _clean(url)
        if host not in HOSTS:
            domain = _external_domain(host)
            if domain is None:
                return None
            return _html(_external_page(domain, path))
        if path == "/robots.txt":
            robots = b"User-agent: *\nDisallow:\n"
            return StoredResponse(200, [("Content-Type", "text/plain")], robots)
        sid = state.session()
        if host == LIBRARY and path == "/catalogue/" and pairs:
            return _html(self._catalogue(dict(pairs), sid))
        page = self.by_key.get((host, path))
        if page is None:
            cal = _CALENDAR.match(path) if host == MAIN else None
            if cal:
                return _html(self._calendar(cal, sid))
            page = self.by_key.get((host, collapse(path)))
        if page is None:
            return _html(self._soft_404(host, path, sid))
        if (host, page.path) == PAGE_429:
            wait = state.blocked(page.url)
            if wait > 0:
                return StoredResponse(
                    429,
                    [("Content-Type", "text/html"), ("Retry-After", str(RETRY_AFTER))],
                    b"<html><body><h1>429 Too Many Requests</h1></body></html>\n",
                )
        if (host, page.path) == PAGE_503 and state.first_time(page.url):
            return StoredResponse(
                503,
                [("Content-Type", "text/html"), ("Retry-After", "1")],
                b"<html><body><h1>503 Service Unavailable</h1></body></html>\n",
            )
        return _html(self._page(page, sid))

    def _nav(self, host: str, sid: str) -> str:
        items = [(f"http://{MAIN}/", "Home"), (f"http://{MAIN}/about/", "About"),
                 (f"http://{MAIN}/research/", "Research"), (f"http://{MAIN}/news/", "News"),
                 (f"http://{MAIN}/events/", "Events"), (_LIB, "Library")]  # fmt: skip
        return " | ".join(_a(_with_session(u, sid), a) for u, a in items)

    def _page(self, page: HostilePage, sid: str) -> str:
        body = [f"<h1>{_e(page.title)}</h1>", f"<p>{_e(page.text)}</p>", "<ul>"]
        for link in page.links:
            url = _absolute(page.host, link)
            target = self.by_key.get(_clean(url)[:2])
            anchor = target.title if target is not None else "More"
            body.append(f"<li>{_a(_with_session(url, sid), anchor)}</li>")
        for href, anchor in page.relative:
            body.append(f"<li>{_a(href, anchor)}</li>")
        body.append("</ul>")
        if page.external:
            body.append("<p>Partners: ")
            body.append(", ".join(_a(_external_url(d), d) for d in page.external))
            body.append("</p>")
        if page.host == LIBRARY and page.path == "/catalogue/":
            body.append(self._facet_links({}, sid))
        head = ""
        if page.script_links:
            items = ", ".join(
                f'{{"name": "{_e(t)}", "url": "{u}"}}'
                for u, t in zip(page.script_links, [d[1] for d in _DEPARTMENTS], strict=True)
            )
            body.append(
                '<div id="menu"></div><script>var departments = ['
                + items
                + "];\nfor (var i = 0; i < departments.length; i++) {"
                "document.getElementById('menu').innerHTML += '<a href=\"' + "
                "departments[i].url + '\">' + departments[i].name + '</a> ';}</script>"
            )
            parts = ", ".join(
                f'{{"@type": "Organization", "url": "{u}"}}' for u in page.script_links
            )
            head += (
                '<script type="application/ld+json">{"@context": "https://schema.org", '
                f'"@type": "CollegeOrUniversity", "department": [{parts}]}}</script>'
            )
        if page.script_external:
            same = ", ".join(f'"{_external_url(d)}"' for d in page.script_external)
            head += (
                '<script type="application/ld+json">{"@context": "https://schema.org", '
                f'"@type": "CollegeOrUniversity", "name": "{NAME}", "url": "{START_URL}", '
                f'"sameAs": [{same}]}}</script>'
            )
        return _document(page.title, head, self._nav(page.host, sid), "\n".join(body))

    def _calendar(self, m: re.Match[str], sid: str) -> str:
        year, month, day = int(m.group(1)), int(m.group(2)), m.group(3)
        ny, nm = (year, month + 1) if month < 12 else (year + 1, 1)
        py, pm = (year, month - 1) if month > 1 else (year - 1, 12)
        base = f"http://{MAIN}/events/calendar/"
        links = [(f"{base}{py:04d}/{pm:02d}/", "Previous month"),
                 (f"{base}{ny:04d}/{nm:02d}/", "Next month")]  # fmt: skip
        if day is None:
            title = f"Events in {year}-{month:02d}"
            links += [(f"{base}{year:04d}/{month:02d}/{d:02d}/", f"{d}") for d in range(1, 29)]
        else:
            title = f"Events on {year}-{month:02d}-{day}"
            links.append((f"{base}{year:04d}/{month:02d}/", "The whole month"))
        body = (
            f"<h1>{title}</h1><p>No events are scheduled for this period.</p><p>"
            + " ".join(_a(_with_session(u, sid), a) for u, a in links)
            + "</p>"
        )
        return _document(title, "", self._nav(MAIN, sid), body)

    def _facet_links(self, chosen: dict[str, str], sid: str) -> str:
        links = []
        for facet, values in _FACETS.items():
            if facet in chosen:
                continue
            for value in values:
                query = urlencode(sorted({**chosen, facet: value}.items()))
                links.append((f"{_LIB}catalogue/?{query}", f"{facet}: {value}"))
        items = " ".join(_a(_with_session(u, sid), a) for u, a in links)
        return f"<p>Refine: {items}</p>"

    def _catalogue(self, chosen: dict[str, str], sid: str) -> str:
        shown = ", ".join(f"{k} = {v}" for k, v in sorted(chosen.items()))
        body = (
            f"<h1>Catalogue: {_e(shown)}</h1><p>Results 1-10 of many. Titles held by the "
            "library that match your filters.</p>" + self._facet_links(chosen, sid)
        )
        return _document("Library catalogue", "", self._nav(LIBRARY, sid), body)

    def _soft_404(self, host: str, path: str, sid: str) -> str:
        base = path if path.endswith("/") else path + "/"
        links = " ".join(
            _a(_with_session(f"http://{host}{base}{w}/", sid), anchor) for w, anchor in _SOFT_WORDS
        )
        body = (
            "<h1>Page not found</h1><p>Sorry, we could not find the page "
            f"{_e(path)}. It may have moved during the redesign of our web site.</p>"
            f"<p>Perhaps you were looking for: {links}</p>"
        )
        return _document("Page not found", "", self._nav(host, sid), body)


class HostileState:
    """The server's memory of the hostile site: when the 429 page was first asked for,
    which URLs have had their 503, and a counter for session ids (thread-safe)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._first: dict[str, float] = {}
        self._served: set[str] = set()
        self._count = 0

    def reset(self) -> None:
        """Forget every 429 clock and 503 (a new crawl meets them again)."""
        with self._lock:
            self._first.clear()
            self._served.clear()

    def session(self) -> str:
        """A new session id (32 hex digits)."""
        with self._lock:
            self._count += 1
            n = self._count
        return hashlib.blake2b(f"session-{n}".encode(), digest_size=16).hexdigest().upper()

    def blocked(self, url: str) -> float:
        """Seconds ``url`` still answers 429 (counted from its first request)."""
        now = time.monotonic()
        with self._lock:
            first = self._first.setdefault(url, now)
        return max(0.0, first + RETRY_AFTER - now)

    def first_time(self, url: str) -> bool:
        """True the first time ``url`` is asked for."""
        with self._lock:
            if url in self._served:
                return False
            self._served.add(url)
            return True


def manifest_section(site: HostileSite | None = None) -> dict[str, Any]:
    """The manifest's ``hostile`` section: the truth of the site (module docstring)."""
    site = site or HostileSite()
    plain = site.depths(scripts=False)
    scripted = site.depths(scripts=True)
    pages = []
    behind: dict[str, set[str]] = {}
    for p in site.pages:
        gate = None
        if p.url not in plain:
            gate = "script"
        elif (p.host, p.path) == PAGE_429:
            gate = "429"
        elif (p.host, p.path) == PAGE_503:
            gate = "503"
        pages.append(
            {"url": p.url, "depth": plain.get(p.url), "script_depth": scripted.get(p.url),
             "behind": gate, "external": sorted(p.external),
             "script_external": sorted(p.script_external)}
        )  # fmt: skip
        for d in p.external:
            behind.setdefault(d, set()).add(gate or "")
        for d in p.script_external:
            behind.setdefault(d, set()).add("script")
    domains = {
        d: {"behind": None if "" in gates else sorted(gates)[0]}
        for d, gates in sorted(behind.items())
    }
    return {
        "university": {
            "key": "hostile",
            "name": NAME,
            "domains": [DOMAIN],
            "start_urls": [START_URL],
            "hosts": list(HOSTS),
        },
        "pages": pages,
        "external_domains": domains,
        "retry_after": RETRY_AFTER,
        "session_ids": ["path ;jsessionid=", "query sid=", "query sessionid=", "query PHPSESSID="],
        "traps": [
            {
                "kind": "calendar",
                "host": MAIN,
                "pattern": _CALENDAR.pattern,
                "example": f"http://{MAIN}/events/calendar/2026/12/",
            },
            {
                "kind": "faceted",
                "host": LIBRARY,
                "pattern": r"^/catalogue/\?.+",
                "example": f"{_LIB}catalogue/?format=book&subject=physics",
            },
            {
                "kind": "relative_recursion",
                "host": MAIN,
                "pattern": "a path whose segment repeats, collapsing to a real page",
                "example": f"http://{MAIN}/research/groups/groups/",
            },
            {
                "kind": "repeated_segments",
                "host": MAIN,
                "pattern": "a path whose run of segments repeats, collapsing to a real page",
                "example": f"http://{MAIN}/news/2026/news/2026/",
            },
            {
                "kind": "soft_404",
                "host": "*",
                "pattern": "any other URL of the hosts",
                "example": f"http://{MAIN}/alumni/old-site/",
            },
        ],
    }


def universities_toml() -> str:
    """The universities file of the hostile site (``hostile.toml`` in the build)."""
    return _UNIVERSITIES_TOML


# -- helpers ------------------------------------------------------------------------------
def _external_domain(host: str) -> str | None:
    for d in EXTERNAL_DOMAINS:
        if host == d or host.endswith("." + d):
            return d
    return None


def _external_url(domain: str) -> str:
    return f"http://www.{domain}/"


def _external_page(domain: str, path: str) -> str:
    title = domain.split(".")[0].replace("-", " ").title()
    body = f"<h1>{_e(title)}</h1><p>The web site of {_e(title)}. You asked for {_e(path)}.</p>"
    return _document(title, "", "", body)


def _absolute(host: str, link: str) -> str:
    return link if link.startswith("http") else f"http://{host}{link}"


def _with_session(url: str, sid: str) -> str:
    """``url`` with a session id in the form its part of the site uses."""
    parts = urlsplit(url)
    if parts.hostname == LIBRARY:
        sep = "&" if parts.query else "?"
        return f"{url}{sep}PHPSESSID={sid[:26].lower()}"
    if parts.path.startswith("/news/"):
        return f"{url}{'&' if parts.query else '?'}sid={sid}"
    if parts.path.startswith("/events/"):
        return f"{url}{'&' if parts.query else '?'}sessionid={sid}"
    query = f"?{parts.query}" if parts.query else ""
    return f"{parts.scheme}://{parts.netloc}{parts.path};jsessionid={sid}{query}"


def _a(href: str, anchor: str) -> str:
    return f'<a href="{_e(href)}">{_e(anchor)}</a>'


def _e(text: str) -> str:
    return html.escape(text, quote=True)


def _document(title: str, head: str, nav: str, body: str) -> str:
    return (
        f"<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'><title>{_e(title)}"
        f"</title>{head}</head><body><header><nav>{nav}</nav></header><main>{body}</main>"
        "</body></html>\n"
    )


def _html(text: str) -> StoredResponse:
    return StoredResponse(200, [("Content-Type", "text/html; charset=utf-8")], text.encode())


def score(site: HostileSite, log: list[dict[str, Any]], found: set[str]) -> dict[str, Any]:
    """A crawl of the site measured against its truth.

    Parameters
    ----------
    site : HostileSite
    log : list of dict
        The server's fetch log (``url``, ``status``) of the crawl.
    found : set of str
        The external registered domains the crawl found linked from the site's pages.

    Returns
    -------
    dict
        ``site_fetches`` (requests to the site's hosts but robots.txt), ``trap_fetches``
        and ``trap_share`` (of the site fetches), ``trap_kinds`` (fetches per kind),
        ``fetches`` (every request, external sites included) and ``trap_share_all``,
        ``fetched_twice`` (canonical pages, session ids removed, answered 200 more than
        once) and ``repeats`` (the answers beyond the first), ``real_fetched`` (real
        pages answered 200), ``domains`` (found / truth, overall and by what stands
        before them: ``plain``, ``429``, ``503``, ``script``) and ``missing``.
    """
    truth = manifest_section(site)["external_domains"]
    kinds: dict[str, int] = {}
    ok: dict[tuple[str, str, tuple[tuple[str, str], ...]], int] = {}
    real: set[tuple[str, str]] = set()
    site_fetches = 0
    for entry in log:
        kind = site.classify(entry["url"])
        if kind in ("robots", "other", "external"):
            continue
        site_fetches += 1
        if kind != "real":
            kinds[kind] = kinds.get(kind, 0) + 1
        if entry["status"] == 200:
            host, path, pairs = _clean(entry["url"])
            canonical = (host, path, tuple(sorted(pairs)))
            ok[canonical] = ok.get(canonical, 0) + 1
            if kind == "real":
                real.add((host, path))
    traps = sum(kinds.values())
    fetches = sum(1 for e in log if site.classify(e["url"]) != "robots")
    groups: dict[str, list[str]] = {"plain": [], "429": [], "503": [], "script": []}
    for domain, info in truth.items():
        groups[info["behind"] or "plain"].append(domain)
    domains = {
        name: {"found": len(set(members) & found), "truth": len(members)}
        for name, members in groups.items()
    }
    domains["all"] = {"found": len(set(truth) & found), "truth": len(truth)}
    without = [d for d, i in truth.items() if i["behind"] != "script"]
    domains["without_script"] = {"found": len(set(without) & found), "truth": len(without)}
    return {
        "site_fetches": site_fetches,
        "trap_fetches": traps,
        "trap_share": round(traps / site_fetches, 4) if site_fetches else 0.0,
        "trap_kinds": dict(sorted(kinds.items())),
        "fetches": fetches,
        "trap_share_all": round(traps / fetches, 4) if fetches else 0.0,
        "fetched_twice": sum(1 for n in ok.values() if n > 1),
        "repeats": sum(n - 1 for n in ok.values()),
        "real_fetched": len(real),
        "real_pages": len(site.pages),
        "domains": domains,
        "missing": sorted(set(truth) - found),
    }
