"""Resolving a URL exactly as the server will answer it, with robots.txt (for the manifest).

:class:`Resolution` follows a target's redirects through the site index (the server's own
answer logic), stops at forbidden addresses, robots.txt and loops, and computes the crawl
depth of every university page (breadth-first from the start URLs, the calendar trap
listed but never expanded).
"""

from __future__ import annotations

from collections import deque
from typing import TYPE_CHECKING, Any
from urllib.parse import urljoin, urlsplit

from core.domains import in_domains, registered_domain
from testbed.links import PageLink
from testbed.options import BuildOptions
from testbed.siteindex import MAX_REDIRECTS, IndexWriter, StoredResponse, is_forbidden_host, url_key

_REDIRECT = (301, 302, 303, 307, 308)


class Resolution:
    """The part of the build (:class:`testbed.build._Builder`) that resolves URLs."""

    o: BuildOptions
    w: IndexWriter

    if TYPE_CHECKING:  # of testbed.universities.UniversitySites, another part of the build

        def page_links_of(self, key: str) -> list[PageLink]: ...

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
