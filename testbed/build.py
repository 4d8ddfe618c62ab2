"""Build the local test web and its manifest (``webometrics testbed build``).

The build is deterministic: the same seed, options and shared data give byte-identical
output. Steps: read WebKB (one pass), add the universities' robots.txt and trouble cases,
extract the links of every university page with the crawler's rules
(:mod:`testbed.links`), generate the most-linked external sites (real texts from
:mod:`testbed.texts`), the citing sites, then resolve every external target exactly as the
server will answer it (:class:`testbed.siteindex.IndexWriter` shares the server's answer
logic) and write the site index, the manifest and the backlink files.

Time: O(corpus + generated pages); 20-40 s on the project's shared 2-core machine
(``bench/testbed.py``), a third of it Scrapy's link extractor on the 4,300 university
pages. Memory: the corpus and the texts (about 150 MB peak).
"""

from __future__ import annotations

import csv
import json
import random
import shutil
from collections import Counter, defaultdict, deque
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urljoin, urlsplit, urlunsplit

from core import defaults as D
from core.domains import in_domains, registered_domain
from testbed import CATEGORIES
from testbed.links import LINK_RULES, PageLink, is_html, page_links
from testbed.siteindex import (
    MAX_REDIRECTS,
    IndexWriter,
    StoredResponse,
    is_forbidden_host,
    url_key,
)
from testbed.sites import (
    binary_body,
    category_of,
    insert_into_body,
    kind_of_path,
    render_real_page,
    render_results_page,
    render_text_page,
    stable_hash,
)
from testbed.texts import Text, TextPools, load_pools
from testbed.webkb import UNIVERSITIES, WebkbPage, read_webkb

UNIVERSITIES_FILE = Path(__file__).with_name("universities.toml")
TROUBLE_HOST = "trouble.testbed.example"
FORBIDDEN_URLS = (
    "http://169.254.169.254/latest/meta-data/",
    "http://10.0.0.1/admin",
    "http://127.0.0.1:8080/admin/",
    "http://192.168.1.1/",
    "http://localhost/server-status",
    "http://[::1]/",
    "http://2130706433/",
    "http://intranet/",
    "http://metadata.google.internal/computeMetadata/v1/",
)
_REDIRECT = (301, 302, 303, 307, 308)
_SECTIONS = {
    "universities": "people",
    "scientific": "research",
    "search": "search",
    "social": "posts",
    "media": "shows",
    "news": "news",
    "other": "about",
}


@dataclass(frozen=True)
class BuildOptions:
    """What the build makes; see ``[testbed]`` in README 'Configuration'."""

    seed: int = D.TESTBED_SEED
    max_sites: int = D.TESTBED_MAX_SITES
    min_pages: int = D.TESTBED_MIN_PAGES
    max_pages: int = D.TESTBED_MAX_PAGES
    link_rot: float = D.TESTBED_LINK_ROT
    https_share: float = D.TESTBED_HTTPS_SHARE
    russian_share: float = D.TESTBED_RUSSIAN_SHARE
    backlink_share: float = D.TESTBED_BACKLINK_SHARE
    citing_sites: int = D.TESTBED_CITING_SITES
    slow_seconds: float = D.TESTBED_SLOW_SECONDS
    oversized_bytes: int = D.TESTBED_OVERSIZED_BYTES
    max_response_bytes: int = D.CRAWL_MAX_RESPONSE_BYTES

    @classmethod
    def from_settings(cls, settings: Any) -> BuildOptions:
        t = settings.testbed
        return cls(
            seed=t.seed,
            max_sites=t.max_sites,
            min_pages=t.min_pages,
            max_pages=t.max_pages,
            link_rot=t.link_rot,
            https_share=t.https_share,
            russian_share=t.russian_share,
            backlink_share=t.backlink_share,
            citing_sites=t.citing_sites,
            slow_seconds=t.slow_seconds,
            oversized_bytes=t.oversized_bytes,
            max_response_bytes=settings.crawl.max_response_bytes,
        )

    def validate(self) -> None:
        from core.exceptions import ParameterError

        if not 1 <= self.min_pages <= self.max_pages:
            raise ParameterError(
                f"testbed pages per site: need 1 <= min_pages ({self.min_pages}) <= "
                f"max_pages ({self.max_pages})"
            )
        for name in ("link_rot", "https_share", "russian_share", "backlink_share"):
            v = getattr(self, name)
            if not 0.0 <= v <= 1.0:
                raise ParameterError(f"testbed {name}={v} must lie in [0, 1]")
        if self.max_sites < 0 or self.citing_sites < 1:
            raise ParameterError("testbed max_sites must be >= 0 and citing_sites >= 1")


def _html_headers(charset: str = "utf-8") -> list[tuple[str, str]]:
    return [("Content-Type", f"text/html; charset={charset}")]


def _redirect(w: IndexWriter, url: str, to: str, status: int = 301) -> None:
    body = f'<html><body><p>Moved to <a href="{to}">{to}</a></p></body></html>\n'.encode()
    w.add(url, status, [("Location", to), ("Content-Type", "text/html")], body, replace=True)


def _plain_page(title: str, paragraphs: list[str], links: list[tuple[str, str]] = ()) -> bytes:
    from testbed.sites import links_html

    text = Text("testbed", "en", title, tuple(paragraphs))
    return render_text_page(title, text, list(links), []).replace(
        b"<footer></footer>", f"<footer>{links_html(list(links))}</footer>".encode()
    )


_KOI8_SAFE = str.maketrans({"«": '"', "»": '"', "—": "-", "–": "-", "…": "...", "№": "N"})


class _Builder:
    def __init__(self, options: BuildOptions, data_dir: Path) -> None:
        self.o = options
        self.root = data_dir
        self.w = IndexWriter()
        self.trouble: list[dict[str, Any]] = []
        self.sites: dict[str, dict[str, Any]] = {}
        self.citing: dict[str, list[dict[str, Any]]] = defaultdict(list)
        self.links: dict[str, list[PageLink]] = {}
        self.webkb_source: dict[str, str] = {}
        self._uni_pages: dict[str, list[str]] = {}

    # -- corpus ---------------------------------------------------------------------------
    def load_corpus(self) -> list[WebkbPage]:
        archive = self.root / "webkb-4universities" / "webkb.tar.gz"
        if not archive.is_file():
            from core.exceptions import DataNotFoundError

            raise DataNotFoundError(
                f"{archive} not found: set WEBOMETRICS_DATA to the shared data folder"
            )
        pages = list(read_webkb(archive))
        for p in pages:
            if p.url in self.w:
                continue
            if p.location:
                target = urljoin(p.url, p.location)
                if url_key(target) != url_key(p.url):
                    _redirect(self.w, p.url, target)
                continue
            headers = list(p.headers)
            if not any(k.lower() == "content-type" for k, _ in headers):
                headers.append(("Content-Type", "text/html"))
            key = self.w.add(p.url, 200, headers, p.body)
            self.webkb_source[key] = f"webkb/{p.label}/{p.url}"
        return pages

    # -- universities: robots.txt, trouble cases, injected links ---------------------------
    def setup_universities(self, pools: TextPools) -> list[dict[str, Any]]:
        from core.universities import parse_universities

        specs = parse_universities(UNIVERSITIES_FILE)
        by_domain = {dom: key for key, (_n, dom) in UNIVERSITIES.items()}
        unis = []
        for spec in specs:
            key = by_domain[spec.domains[0]]
            unis.append(
                {
                    "key": key,
                    "name": spec.name,
                    "country": spec.country,
                    "rank": spec.rank,
                    "domains": list(spec.domains),
                    "start_urls": list(spec.start_urls),
                }
            )
        ru = self._russian_text(pools)
        for uni in unis:
            domains = set(uni["domains"])
            start = uni["start_urls"][0]
            for s in uni["start_urls"]:  # a page's URL in the manifest: as the crawler asks
                self.w.original[url_key(s)] = s
            main_host = urlsplit(start).hostname or ""
            hosts = sorted(
                {
                    urlsplit(k).netloc
                    for k, e in self.w.entries.items()
                    if in_domains(urlsplit(k).hostname or "", domains)
                }
            )
            real_dir = self._pick_disallowed_dir(main_host, start)
            uni["robots_disallowed_dirs"] = ["/testbed/private/", real_dir]
            for netloc in hosts:
                rules = ["User-agent: *"]
                if netloc == main_host:
                    sitemap = f"http://{netloc}/sitemap.xml"
                    rules += ["Disallow: /testbed/private/", f"Disallow: {real_dir}", "",
                              f"Sitemap: {sitemap}"]  # fmt: skip
                    locs = "".join(f"<url><loc>{u}</loc></url>" for u in uni["start_urls"])
                    xml = (
                        '<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns='
                        f'"http://www.sitemaps.org/schemas/sitemap/0.9">{locs}</urlset>\n'
                    )
                    self.w.add(sitemap, 200, [("Content-Type", "application/xml")], xml.encode())
                    uni["sitemaps"] = [sitemap]
                else:
                    rules += ["Disallow: /cgi-bin/"]
                self.w.add(
                    f"http://{netloc}/robots.txt",
                    200,
                    [("Content-Type", "text/plain")],
                    ("\n".join(rules) + "\n").encode(),
                    replace=True,
                )
            base = f"http://{main_host}/testbed/"
            links = self._trouble_set(base, f"university:{uni['key']}", ru, calendar=True)
            links += self._trouble_set(
                f"http://{TROUBLE_HOST}/", "external", ru, calendar=False, first=uni is unis[0]
            )
            links += [(u, "internal service") for u in FORBIDDEN_URLS]
            self._inject(start, links)
        return unis

    def _pick_disallowed_dir(self, host: str, start: str) -> str:
        counts: Counter[str] = Counter()
        for k, e in self.w.entries.items():
            parts = urlsplit(k)
            if parts.netloc != host or e[0] != 200:
                continue
            segs = parts.path.split("/")[1:-1]
            for i in range(1, len(segs) + 1):
                counts["/" + "/".join(segs[:i]) + "/"] += 1
        start_path = urlsplit(start).path
        candidates = sorted(
            d
            for d, c in counts.items()
            if 3 <= c <= 25 and not start_path.startswith(d) and not d.startswith("/testbed/")
        )
        rng = random.Random(f"{self.o.seed}:robots:{host}")
        return rng.choice(candidates) if candidates else "/cgi-bin/"

    def _russian_text(self, pools: TextPools) -> Text:
        for text in pools.pools.get(("news", "ru"), []):
            if text.paragraphs and sum(len(p) for p in text.paragraphs) > 600:
                return text
        raise RuntimeError("no Russian news text found in the shared data")  # pragma: no cover

    def _trouble_set(
        self, base: str, where: str, ru: Text, *, calendar: bool, first: bool = True
    ) -> list[tuple[str, str]]:
        """Add the trouble cases under ``base``; return the links that reach them."""
        o = self.o
        add_cases = first  # the external host's cases are added once, linked from all
        links: list[tuple[str, str]] = []

        def case(name: str, url: str, anchor: str, expected: dict[str, Any]) -> None:
            links.append((url, anchor))
            if add_cases:
                self.trouble.append(
                    {"case": name, "url": url, "where": where, "expected": expected}
                )

        final = base + "redirect/final.html"
        case(
            "redirect_chain",
            base + "redirect/301",
            "Moved page",
            {"status": 301, "final_url": final, "final_status": 200, "redirects": 2},
        )
        case(
            "redirect_loop",
            base + "loop/a",
            "Looping page",
            {"status": 302, "error": "redirect_loop"},
        )
        case("not_found", base + "missing.html", "Missing page", {"status": 404})
        case("server_error", base + "error.html", "Broken script", {"status": 500})
        case("slow", base + "slow.html", "Slow page", {"status": 200, "delay": o.slow_seconds})
        text = " ".join(ru.paragraphs).translate(_KOI8_SAFE)
        sample = " ".join(text.split()[:8])
        case(
            "cp1251",
            base + "ru/cp1251.html",
            "Русская страница (windows-1251)",
            {"status": 200, "charset": "windows-1251", "declared": "http", "contains": sample},
        )
        case(
            "koi8r",
            base + "ru/koi8r.html",
            "Русская страница (koi8-r)",
            {"status": 200, "charset": "koi8-r", "declared": "meta", "contains": sample},
        )
        case(
            "broken_charset",
            base + "broken-charset.html",
            "Page with a wrong charset",
            {"status": 200, "charset": "utf-8", "actual_charset": "windows-1251"},
        )
        case("pdf", base + "files/report.pdf", "Annual report (PDF)",
             {"status": 200, "content_type": "application/pdf"})  # fmt: skip
        case(
            "jpeg", base + "files/photo.jpg", "Photo", {"status": 200, "content_type": "image/jpeg"}
        )
        case(
            "oversized",
            base + "huge.html",
            "Complete archive on one page",
            {"status": 200, "bytes": o.oversized_bytes,
             "error": "too_large" if o.oversized_bytes > o.max_response_bytes else None},
        )  # fmt: skip
        robots_url = base + "private/notes.html"
        case(
            "robots",
            robots_url,
            "Internal notes",
            {"status": 200, "fetch": False, "error": "robots"},
        )
        if calendar:
            case("trap", base + "calendar/1997/01/", "Events calendar",
                 {"status": 200, "endless": True})  # fmt: skip
        else:
            secure = f"https://{urlsplit(base).netloc}/secure.html"
            case("https_redirect", base + "to-https", "Secure page",
                 {"status": 301, "final_url": secure, "final_status": 200})  # fmt: skip
            nofollow = base + "nofollow.html"
            links.append((nofollow, "Sponsored link"))
        if not add_cases:
            return links

        w = self.w
        w.add(base + "redirect/301", 301, [("Location", base + "redirect/302")], b"")
        w.add(base + "redirect/302", 302, [("Location", final)], b"")
        w.add(final, 200, _html_headers(), _plain_page("Moved page", ["This page has moved here."]))
        w.add(base + "loop/a", 302, [("Location", base + "loop/b")], b"")
        w.add(base + "loop/b", 302, [("Location", base + "loop/a")], b"")
        w.add(base + "error.html", 500, _html_headers(),
              b"<html><body><h1>500 Internal Server Error</h1></body></html>\n")  # fmt: skip
        slow = _plain_page("Slow page", ["This page takes a while."])
        w.add(base + "slow.html", 200, _html_headers(), slow, delay=o.slow_seconds)
        title = ru.title.translate(_KOI8_SAFE)
        paras = "".join(f"<p>{p}</p>" for p in text.split("\n"))
        cp = (
            f"<html><head><title>{title}</title></head><body><h1>{title}</h1>{paras}"
            "</body></html>\n"
        )
        w.add(base + "ru/cp1251.html", 200, _html_headers("windows-1251"),
              cp.encode("cp1251", errors="replace"))  # fmt: skip
        koi = cp.replace(
            "<head>", '<head><meta http-equiv="Content-Type" content="text/html; charset=koi8-r">'
        )
        w.add(base + "ru/koi8r.html", 200, [("Content-Type", "text/html")],
              koi.encode("koi8_r", errors="replace"))  # fmt: skip
        w.add(base + "broken-charset.html", 200, _html_headers("utf-8"),
              cp.encode("cp1251", errors="replace"))  # fmt: skip
        for path, kind in (("files/report.pdf", "pdf"), ("files/photo.jpg", "jpeg")):
            ctype, data = binary_body(kind, base + path)
            w.add(base + path, 200, [("Content-Type", ctype)], data)
        head = (
            "<!DOCTYPE html>\n<html><head><meta charset='utf-8'><title>Archive</title>"
            "</head><body>\n"
        )
        w.add(
            base + "huge.html",
            200,
            _html_headers(),
            b"",
            generated={
                "bytes": o.oversized_bytes,
                "head": head,
                "tail": "</body></html>\n",
                "filler": "<p>Archive entry: minutes of the weekly department meeting.</p>\n",
            },
        )
        w.add(robots_url, 200, _html_headers(), _plain_page("Internal notes", ["Not for robots."]))
        if calendar:
            w.add_prefix(base + "calendar/", "calendar")
        else:
            host = urlsplit(base).netloc
            secure = f"https://{host}/secure.html"
            _redirect(w, base + "to-https", secure)
            w.add(secure, 200, _html_headers(), _plain_page("Secure page", ["Served over TLS."]))
            w.add(base + "nofollow.html", 200, _html_headers(),
                  _plain_page("Sponsored", ["An advertisement."]))  # fmt: skip
            w.add(f"http://{host}/robots.txt", 200, [("Content-Type", "text/plain")],
                  b"User-agent: *\nDisallow: /private/\n")  # fmt: skip
            w.add(f"https://{host}/robots.txt", 200, [("Content-Type", "text/plain")],
                  b"User-agent: *\nDisallow: /private/\n")  # fmt: skip
            home_links = [(u, a) for u, a in links if urlsplit(u).netloc == host]
            w.add(base, 200, _html_headers(),
                  _plain_page("Trouble Inc.", ["Pages that misbehave."], home_links))  # fmt: skip
        return links

    def _inject(self, url: str, links: list[tuple[str, str]]) -> None:
        from testbed.sites import _e

        stored = self.w.get(url)
        assert stored is not None and stored.status == 200, url
        items = []
        for href, anchor in links:
            rel = ' rel="nofollow"' if anchor == "Sponsored link" else ""
            items.append(f'<li><a href="{_e(href)}"{rel}>{_e(anchor)}</a></li>')
        block = (
            "\n<!-- testbed: injected links -->\n<div><h2>Department services</h2><ul>\n"
            + "\n".join(items)
            + "\n</ul></div>\n"
        ).encode()
        body = stored.body
        low = body.lower()
        at = low.rfind(b"</body>")
        if at < 0:
            at = low.rfind(b"</html>")
        body = body[:at] + block + body[at:] if at >= 0 else body + block
        self.w.add(url, 200, stored.headers, body, replace=True)

    # -- links ---------------------------------------------------------------------------------
    def page_links_of(self, key: str) -> list[PageLink]:
        if key not in self.links:
            e = self.w.entries[key]
            if e[0] != 200 or not is_html(e[1]) or e[4] is not None:
                self.links[key] = []
            else:
                self.links[key] = page_links(self.w.original[key], e[1], e[2])
        return self.links[key]

    def university_pages(self, uni: dict[str, Any]) -> list[str]:
        domains = set(uni["domains"])
        return sorted(k for k in self.w.entries if in_domains(urlsplit(k).hostname or "", domains))

    # -- external sites ----------------------------------------------------------------------
    def generate_sites(
        self, unis: list[dict[str, Any]], pools: TextPools, external: dict[str, list[dict]]
    ) -> None:
        o = self.o
        link_count: Counter[str] = Counter()
        targets: dict[str, set[str]] = defaultdict(set)
        linked_from: dict[str, set[str]] = defaultdict(set)
        for uni in unis:
            for link in external[uni["key"]]:
                host = urlsplit(link["target"]).hostname or ""
                if is_forbidden_host(host):
                    continue
                dom = registered_domain(host)
                link_count[dom] += 1
                targets[dom].add(link["target"])
                linked_from[dom].add(uni["key"])
        uni_domains = {d: u["key"] for u in unis for d in u["domains"]}
        stored_domains = {registered_domain(urlsplit(k).hostname or "") for k in self.w.entries}
        candidates = []
        for dom in sorted(link_count):
            if dom in uni_domains:
                self._site(dom, "university", "universities", "en")
            elif dom == registered_domain(TROUBLE_HOST):
                self._site(dom, "trouble", "other", "en")
            elif dom in stored_domains:
                self._site(dom, "corpus", category_of(dom, seed=o.seed), "en")
            else:
                candidates.append(dom)
        candidates.sort(key=lambda d: (-link_count[d], d))
        chosen = candidates[: o.max_sites]
        for dom in candidates[o.max_sites :]:
            site = self._site(dom, "dead", category_of(dom, seed=o.seed), None)
            site["hosts"] = sorted({urlsplit(t).netloc.lower() for t in targets[dom]})
        names = {u["key"]: u for u in unis}
        for dom in chosen:
            back = None
            if stable_hash(o.seed, "backlink", dom) % 10_000 < o.backlink_share * 10_000:
                back = names[sorted(linked_from[dom])[0]]
            self._generate_site(dom, sorted(targets[dom]), pools, back)
        for uni in unis:
            self._citing_sites(uni, pools)
        # list the corpus pages of corpus / university sites
        for key, source in sorted(self.webkb_source.items()):
            dom = registered_domain(urlsplit(key).hostname or "")
            site = self.sites.get(dom)
            if site is not None and site["kind"] in ("corpus", "university"):
                site["pages"].append(
                    {"url": self.w.original[key], "source": source, "language": "en"}
                )
                host = urlsplit(key).netloc
                if host not in site["hosts"]:
                    site["hosts"].append(host)

    def _site(
        self, dom: str, kind: str, category: str, language: str | None, https: bool = False
    ) -> dict[str, Any]:
        site = self.sites.setdefault(
            dom,
            {"category": category, "kind": kind, "language": language, "https": https,
             "hosts": [], "pages": []},
        )  # fmt: skip
        return site

    def _language(self, dom: str, category: str, pools: TextPools) -> str:
        langs = pools.languages(category)
        if "ru" in langs and (
            dom.endswith((".ru", ".su"))
            or stable_hash(self.o.seed, "lang", dom) % 10_000 < self.o.russian_share * 10_000
        ):
            return "ru"
        return "en" if "en" in langs else langs[0]

    def _generate_site(
        self,
        dom: str,
        targets: list[str],
        pools: TextPools,
        back: dict[str, Any] | None,
        *,
        category: str | None = None,
        language: str | None = None,
        https: bool | None = None,
        main_host: str | None = None,
        kind: str = "generated",
        extra_links: dict[str, list[tuple[str, str]]] | None = None,
    ) -> dict[str, Any]:
        o = self.o
        category = category or category_of(dom, seed=o.seed)
        language = language or self._language(dom, category, pools)
        if https is None:
            https = stable_hash(o.seed, "https", dom) % 10_000 < o.https_share * 10_000
        rng = random.Random(f"{o.seed}:site:{dom}")
        hosts = Counter(urlsplit(t).netloc.lower() for t in targets)
        if main_host is None:
            main_host = sorted(hosts, key=lambda h: (-hosts[h], h))[0] if hosts else f"www.{dom}"
        site = self._site(dom, kind, category, language, https)
        site["hosts"] = sorted(set(hosts) | {main_host})

        def scheme_for(netloc: str) -> str:
            return "https" if https and ":" not in netloc else "http"

        # the pages: every linked target (some rotten), the home page, extra pages
        page_urls: list[str] = []
        for t in targets:
            parts = urlsplit(t)
            path = parts.path or "/"
            rotten = path != "/" and (stable_hash(o.seed, "rot", t) % 10_000 < o.link_rot * 10_000)
            if not rotten:
                page_urls.append(
                    urlunsplit((scheme_for(parts.netloc.lower()), parts.netloc.lower(), path,
                                parts.query, ""))
                )  # fmt: skip
        home = f"{scheme_for(main_host)}://{main_host}/"
        section = _SECTIONS[category]
        root = f"{scheme_for(main_host)}://{main_host}/{section}/"
        extras = [
            f"{root}{rng.randrange(100, 999)}-{i + 1}.html"
            for i in range(rng.randint(o.min_pages, o.max_pages))
        ]
        ordered = list(dict.fromkeys([home, *extras, *page_urls]))
        nav = [(home, "Home")] + [(u, f"{section.title()} {i + 1}") for i, u in enumerate(extras)]
        extra_links = extra_links or {}
        if back is not None:
            extra_links.setdefault(home, []).append((back["start_urls"][0], back["name"]))
            self.citing[back["key"]].append(
                {"url": home, "target": back["start_urls"][0], "anchor": back["name"],
                 "expected": "verified"}
            )  # fmt: skip
        for url in ordered:
            key_url = url
            kind_ = kind_of_path(urlsplit(url).path)
            if kind_ != "html":
                ctype, data = binary_body(kind_, url)
                self.w.add(key_url, 200, [("Content-Type", ctype)], data)
            else:
                extra = extra_links.get(url, [])
                if category == "search":
                    results = pools.take_headlines(language, 8, rng)
                    query = results[0][1].split()[0].strip(".,:;«»\"'") if results else dom
                    body = render_results_page(dom, language, query, results, nav, extra)
                    source = "headlines/" + ",".join(r[0] for r in results[:3])
                else:
                    text = pools.take(category, language)
                    if text.html is not None:
                        body = render_real_page(text, nav, extra)
                    else:
                        body = render_text_page(dom, text, nav, extra)
                    source = text.source
                self.w.add(key_url, 200, _html_headers(), body)
                site["pages"].append({"url": url, "source": source, "language": language})
            if url.startswith("https://"):
                _redirect(self.w, "http://" + url[len("https://") :], url)
        for netloc in site["hosts"]:
            robots = f"{scheme_for(netloc)}://{netloc}/robots.txt"
            self.w.add(robots, 200, [("Content-Type", "text/plain")],
                       b"User-agent: *\nDisallow: /cgi-bin/\n")  # fmt: skip
            if robots.startswith("https://"):
                _redirect(self.w, "http://" + robots[len("https://") :], robots)
        return site

    def _citing_sites(self, uni: dict[str, Any], pools: TextPools) -> None:
        o = self.o
        rng = random.Random(f"{o.seed}:citing:{uni['key']}")
        pages = [
            k
            for k in self.university_pages(uni)
            if self.w.entries[k][0] == 200 and is_html(self.w.entries[k][1])
            and "/testbed/" not in k and k in self.webkb_source
        ]  # fmt: skip
        for i in range(o.citing_sites):
            category = CATEGORIES[
                stable_hash(o.seed, "citing-cat", uni["key"], i) % len(CATEGORIES)
            ]
            ru = (
                stable_hash(o.seed, "citing-ru", uni["key"], i) % 10_000
                < 2 * o.russian_share * 10_000
            )
            language = "ru" if ru and "ru" in pools.languages(category) else "en"
            tld = {"universities": "edu", "scientific": "org", "social": "net"}.get(category, "com")
            if language == "ru":
                tld = "ru"
            dom = f"tb-{category}-{uni['key']}-{i + 1}.{tld}"
            host = f"www.{dom}"
            target = (
                uni["start_urls"][0] if i == 0 or not pages else self.w.original[rng.choice(pages)]
            )
            anchor = uni["name"] if i % 2 == 0 else f"{uni['name']}: department page"
            # the citing page is the first extra page; its text links to the university
            site = self._generate_site(
                dom,
                [],
                pools,
                None,
                category=category,
                language=language,
                https=True,
                main_host=host,
                kind="citing",
                extra_links={},
            )
            extras = [p["url"] for p in site["pages"] if p["url"] != f"https://{host}/"]
            citing_page = extras[0] if extras else f"https://{host}/"
            self._add_link(citing_page, target, anchor)
            self.citing[uni["key"]].append(
                {"url": citing_page, "target": target, "anchor": anchor, "expected": "verified"}
            )
            if i == o.citing_sites - 1:
                # the backlink export still lists links that are gone
                other = f"https://{host}/"
                self.citing[uni["key"]].append(
                    {"url": other, "target": target, "anchor": anchor, "expected": "missing"}
                )
                self.citing[uni["key"]].append(
                    {"url": f"https://{host}/removed-{uni['key']}.html", "target": target,
                     "anchor": anchor, "expected": "gone"}
                )  # fmt: skip

    def _add_link(self, page: str, target: str, anchor: str) -> None:
        from testbed.sites import _e

        stored = self.w.get(page)
        assert stored is not None and stored.status == 200, page
        link = f'<p class="see-also">See also: <a href="{_e(target)}">{_e(anchor)}</a></p>\n'
        body = insert_into_body(stored.body, link.encode())
        self.w.add(page, 200, stored.headers, body, replace=True)

    # -- resolution as the server answers, with robots.txt ------------------------------------
    def robots_allows(self, url: str, cache: dict[str, Any]) -> bool:
        from protego import Protego

        parts = urlsplit(url)
        origin = f"{parts.scheme}://{parts.netloc}"
        if origin not in cache:
            cur = origin + "/robots.txt"
            parser = None
            for _ in range(5):
                r = self.w.answer(cur)
                if r.status in _REDIRECT and r.header("Location"):
                    cur = urljoin(cur, r.header("Location") or "")
                    continue
                if r.status == 200:
                    parser = Protego.parse(r.body.decode("utf-8", errors="ignore"))
                break
            cache[origin] = parser
        parser = cache[origin]
        return parser is None or parser.can_fetch(url, "webometrics-crawler")

    def resolve(self, url: str, robots: dict[str, Any]) -> dict[str, Any]:
        info: dict[str, Any] = {
            "domain": registered_domain(urlsplit(url).hostname or ""),
            "status": None, "final_url": url, "final_status": None, "redirects": [],
            "content_type": None, "bytes": None, "delay": 0.0, "reachable": False, "error": None,
        }  # fmt: skip
        cur = url
        seen = {url_key(url)}
        for _ in range(MAX_REDIRECTS + 1):
            if is_forbidden_host(urlsplit(cur).hostname or ""):
                info["error"] = "forbidden_address"
                return info
            if not self.robots_allows(cur, robots):
                info["error"] = "robots"
                return info
            r: StoredResponse = self.w.answer(cur)
            if info["status"] is None:
                info["status"] = r.status
            info["delay"] += r.delay
            location = r.header("Location")
            if r.status in _REDIRECT and location:
                nxt = urljoin(cur, location)
                info["redirects"].append(nxt)
                if url_key(nxt) in seen:
                    info["error"] = "redirect_loop"
                    return info
                seen.add(url_key(nxt))
                cur = nxt
                continue
            info.update(
                final_url=cur,
                final_status=r.status,
                content_type=r.header("Content-Type"),
                bytes=r.length,
            )
            if r.status != 200:
                info["error"] = f"http_{r.status}"
            elif r.length > self.o.max_response_bytes:
                info["error"] = "too_large"
            else:
                info["reachable"] = True
            return info
        info["error"] = "redirect_loop"
        return info

    def depths(self, uni: dict[str, Any], robots: dict[str, Any]) -> dict[str, int]:
        domains = set(uni["domains"])
        calendar = [p["prefix"] for p in self.w.prefixes]
        depth: dict[str, int] = {}
        queue: deque[tuple[str, int]] = deque()
        for s in uni["start_urls"]:
            depth[url_key(s)] = 0
            queue.append((s, 0))
        while queue:
            url, d = queue.popleft()
            key = url_key(url)
            if any(key.startswith(p) for p in calendar):
                continue  # the trap: listed, never expanded
            r = self.w.answer(url)
            nexts: list[tuple[str, int]] = []
            location = r.header("Location")
            if r.status in _REDIRECT and location:
                nexts.append((urljoin(url, location), d))
            elif key in self.w.entries:
                nexts.extend((link.target, d + 1) for link in self.page_links_of(key))
            for target, nd in nexts:
                host = urlsplit(target).hostname or ""
                if not in_domains(host, domains):
                    continue
                tkey = url_key(target)
                if tkey in depth or not self.robots_allows(target, robots):
                    continue
                depth[tkey] = nd
                queue.append((target, nd))
        return depth


def build(
    out: str | Path,
    options: BuildOptions | None = None,
    data_dir: str | Path | None = None,
    *,
    progress: bool = False,
) -> dict[str, Any]:
    """Build the test web into ``out`` and return its statistics.

    Parameters
    ----------
    out : path-like
        The output folder (created; its ``site/``, ``citing/`` and ``manifest.json`` are
        replaced).
    options : BuildOptions, optional
    data_dir : path-like, optional
        The shared data folder (default: ``$WEBOMETRICS_DATA`` or ``../shared/data``).
    progress : bool
        Show a progress bar on standard error.

    Returns
    -------
    dict
        Counts: pages served, universities' pages, external links, targets, sites by kind
        and category, citing pages, trouble cases, seconds.

    Raises
    ------
    DataNotFoundError
        The shared data folder (or a corpus in it) is missing.
    ParameterError
        An option is out of range.
    """
    import time

    from tqdm import tqdm

    started = time.monotonic()
    options = options or BuildOptions()
    options.validate()
    if data_dir is None:
        from core.shared_data import data_dir as shared

        data_dir = shared()
    root = Path(data_dir)
    out = Path(out)
    steps = tqdm(total=7, desc="testbed build", disable=not progress, unit="step")
    b = _Builder(options, root)
    pages = b.load_corpus()
    steps.update()
    misc = [p for p in pages if p.folder == "misc"]
    pools = load_pools(root, misc, options.seed)
    steps.update()
    unis = b.setup_universities(pools)
    steps.update()

    external: dict[str, list[dict[str, Any]]] = {}
    for uni in unis:
        domains = set(uni["domains"])
        rows = []
        for key in b.university_pages(uni):
            source = b.w.original[key]
            for link in b.page_links_of(key):
                host = urlsplit(link.target).hostname or ""
                if in_domains(host, domains):
                    continue
                rows.append(
                    {"source": source, "target": link.target, "anchor": link.anchor,
                     "nofollow": link.nofollow}
                )  # fmt: skip
        external[uni["key"]] = rows
    steps.update()
    b.generate_sites(unis, pools, external)
    steps.update()

    robots: dict[str, Any] = {}
    targets: dict[str, dict[str, Any]] = {}
    for uni in unis:
        for row in external[uni["key"]]:
            if row["target"] not in targets:
                targets[row["target"]] = b.resolve(row["target"], robots)
    disallowed: set[str] = {t for t, info in targets.items() if info["error"] == "robots"}
    for uni in unis:
        depth = b.depths(uni, robots)
        uni_pages = []
        for key in b.university_pages(uni):
            e = b.w.entries[key]
            url = b.w.original[key]
            allowed = b.robots_allows(url, robots)
            if not allowed:
                disallowed.add(url)
            uni_pages.append(
                {"url": url, "status": e[0], "depth": depth.get(key),
                 "robots_allowed": allowed,
                 "content_type": dict((k.lower(), v) for k, v in e[1]).get("content-type")}
            )  # fmt: skip
        uni["pages"] = uni_pages
        source_depth = {p["url"]: p["depth"] for p in uni_pages}
        for row in external[uni["key"]]:
            row["source_depth"] = source_depth.get(row["source"])
        uni["external_links"] = external[uni["key"]]
        uni["citing"] = b.citing[uni["key"]]
    for entry in b.trouble:
        if entry["case"] == "robots":
            disallowed.add(entry["url"])
    steps.update()

    manifest = {
        "format": 1,
        "seed": options.seed,
        "options": asdict(options),
        "link_rules": LINK_RULES,
        "universities": unis,
        "targets": targets,
        "sites": dict(sorted(b.sites.items())),
        "trouble": b.trouble,
        "robots_disallowed": sorted(disallowed),
        "forbidden": list(FORBIDDEN_URLS)
        + sorted(
            t
            for t, info in targets.items()
            if info["error"] == "forbidden_address" and t not in FORBIDDEN_URLS
        ),
    }
    out.mkdir(parents=True, exist_ok=True)
    for sub in ("site", "citing"):
        shutil.rmtree(out / sub, ignore_errors=True)
    b.w.write(out / "site")
    (out / "manifest.json").write_text(
        json.dumps(manifest, ensure_ascii=False, indent=1, sort_keys=False), encoding="utf-8"
    )
    _write_citing(out / "citing", unis)
    shutil.copyfile(UNIVERSITIES_FILE, out / "universities.toml")
    steps.update()
    steps.close()

    kinds = Counter(s["kind"] for s in b.sites.values())
    cats = Counter(s["category"] for s in b.sites.values() if s["kind"] in ("generated", "citing"))
    return {
        "served_urls": len(b.w.entries),
        "university_pages": sum(len(u["pages"]) for u in unis),
        "external_links": sum(len(u["external_links"]) for u in unis),
        "targets": len(targets),
        "reachable_targets": sum(1 for t in targets.values() if t["reachable"]),
        "sites": dict(sorted(kinds.items())),
        "generated_categories": dict(sorted(cats.items())),
        "citing_pages": sum(len(u["citing"]) for u in unis),
        "trouble_cases": len(b.trouble),
        "seconds": round(time.monotonic() - started, 2),
    }


MAJESTIC_COLUMNS = (
    "Target URL", "Source URL", "Anchor Text", "Source Crawl Date", "Source First Found Date",
    "Flag No Follow", "Flag Image Link", "Flag Redirect", "Flag Frame", "Flag Old Crawl",
    "Flag Alt Text", "Flag Mention", "Source Citation Flow", "Source Trust Flow",
    "Target Citation Flow", "Target Trust Flow", "Source Topical Trust Flow Topic 0",
    "Source Topical Trust Flow Value 0",
)  # fmt: skip


def _write_citing(folder: Path, unis: list[dict[str, Any]]) -> None:
    """Majestic-style backlink CSVs (its web export's column names) and URL lists."""
    folder.mkdir(parents=True, exist_ok=True)
    all_rows: list[list[str]] = []
    all_urls: list[str] = []
    for uni in unis:
        rows = []
        for i, c in enumerate(uni["citing"]):
            flow = 10 + stable_hash("flow", c["url"]) % 40
            rows.append(
                [c["target"], c["url"], c["anchor"], f"2015-03-0{1 + i % 9}",
                 f"2014-11-1{i % 10}", "False", "False", "False", "False",
                 "False" if c["expected"] != "gone" else "True", "False", "False",
                 str(flow), str(flow // 2), "40", "35", "Reference/Education", str(flow // 3)]
            )  # fmt: skip
        urls = list(dict.fromkeys(c["url"] for c in uni["citing"]))
        for name, data in ((f"{uni['key']}.majestic.csv", rows),):
            with open(folder / name, "w", newline="", encoding="utf-8") as f:
                writer = csv.writer(f)
                writer.writerow(MAJESTIC_COLUMNS)
                writer.writerows(data)
        (folder / f"{uni['key']}.txt").write_text("\n".join(urls) + "\n", encoding="utf-8")
        all_rows.extend(rows)
        all_urls.extend(urls)
    with open(folder / "backlinks-majestic.csv", "w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(MAJESTIC_COLUMNS)
        writer.writerows(all_rows)
    (folder / "citing-urls.txt").write_text(
        "\n".join(dict.fromkeys(all_urls)) + "\n", encoding="utf-8"
    )


def _code_digest() -> str:
    """A digest of the testbed's code and universities file (a cached build's version)."""
    import hashlib

    h = hashlib.blake2b(digest_size=8)
    folder = Path(__file__).parent
    skip = ("server.py", "manifest.py")  # they do not change what a build writes
    built_by = [p for p in sorted(folder.glob("*.py")) if p.name not in skip]
    for path in [*built_by, UNIVERSITIES_FILE]:
        h.update(path.name.encode())
        h.update(path.read_bytes())
    return h.hexdigest()


def shared_build(options: BuildOptions | None = None, data_dir: str | Path | None = None) -> Path:
    """A built test web in a cache folder shared by every process on the machine.

    The folder (under the system temporary directory) is named after the options, the
    testbed's code and the shared data's WebKB archive, so a change of any of them builds
    anew; concurrent callers wait on a file lock and build once. Meant for test suites
    (the crawler's and the testbed's) that all need the same test web.

    Returns
    -------
    Path
        The folder to give :class:`testbed.server.TestbedServer`.
    """
    import fcntl
    import hashlib
    import tempfile

    options = options or BuildOptions()
    if data_dir is None:
        from core.shared_data import data_dir as shared

        data_dir = shared()
    archive = Path(data_dir) / "webkb-4universities" / "webkb.tar.gz"
    stat = archive.stat() if archive.is_file() else None
    ident = json.dumps(
        [asdict(options), _code_digest(), str(Path(data_dir).resolve()),
         stat.st_size if stat else None, stat.st_mtime_ns if stat else None],
        sort_keys=True,
    )  # fmt: skip
    digest = hashlib.blake2b(ident.encode(), digest_size=8).hexdigest()
    folder = Path(tempfile.gettempdir()) / f"webometrics-testbed-{digest}"
    stamp = folder / "BUILD-OK"
    if stamp.is_file():
        stamp.touch()  # marks it as in use for the pruning below
        return folder
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder.with_suffix(".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            if not stamp.is_file():
                build(folder, options, data_dir)
                stamp.write_text(ident, encoding="utf-8")
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
    _prune_shared_builds(folder)
    return folder


def _prune_shared_builds(keep: Path, max_age_seconds: float = 3600) -> None:
    """Remove other cached builds (about 100 MB each) unused for ``max_age_seconds``."""
    import time

    now = time.time()
    for other in keep.parent.glob("webometrics-testbed-*"):
        if other == keep or not other.is_dir():
            continue
        stamp = other / "BUILD-OK"
        used = stamp.stat().st_mtime if stamp.is_file() else other.stat().st_mtime
        if now - used > max_age_seconds:
            shutil.rmtree(other, ignore_errors=True)
            other.with_suffix(".lock").unlink(missing_ok=True)
