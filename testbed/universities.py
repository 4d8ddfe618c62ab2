"""The university sites: WebKB's pages as served, their robots.txt and sitemaps.

:class:`UniversitySites` loads the WebKB corpus into the site index at its original URLs,
gives every university host a ``robots.txt`` (the main host's disallows one real directory
and names a sitemap), injects the links to the trouble cases into each start page and
lists the links of a university's pages with the crawler's rules.
"""

from __future__ import annotations

import random
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urljoin, urlsplit

from core.domains import in_domains
from testbed.links import PageLink, is_html, page_links
from testbed.options import BuildOptions
from testbed.siteindex import IndexWriter, url_key
from testbed.sites import redirect
from testbed.texts import Text, TextPools
from testbed.trouble import FORBIDDEN_URLS, TROUBLE_HOST
from testbed.webkb import UNIVERSITIES, WebkbPage, read_webkb

UNIVERSITIES_FILE = Path(__file__).with_name("universities.toml")


class UniversitySites:
    """The part of the build (:class:`testbed.build._Builder`) that serves the universities."""

    o: BuildOptions
    root: Path
    w: IndexWriter
    links: dict[str, list[PageLink]]
    webkb_source: dict[str, str]

    if TYPE_CHECKING:  # of testbed.trouble.TroubleCases, another part of the build

        def _russian_text(self, pools: TextPools) -> Text: ...

        def _trouble_set(
            self, base: str, where: str, ru: Text, *, calendar: bool, first: bool = True
        ) -> list[tuple[str, str]]: ...

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
                    redirect(self.w, p.url, target)
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
        unis: list[dict[str, Any]] = []
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

    def _inject(self, url: str, links: list[tuple[str, str]]) -> None:
        from testbed.sites import escape

        stored = self.w.get(url)
        assert stored is not None and stored.status == 200, url
        items = []
        for href, anchor in links:
            rel = ' rel="nofollow"' if anchor == "Sponsored link" else ""
            items.append(f'<li><a href="{escape(href)}"{rel}>{escape(anchor)}</a></li>')
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
