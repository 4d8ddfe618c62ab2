"""The external sites: the generated sites the universities link to, and the citing sites.

:class:`ExternalSites` gives every registered domain the universities link to a kind
(university, trouble, corpus, generated up to ``max_sites``, dead beyond), writes the
generated sites' pages from real texts (some targets rotten, some sites HTTPS-only, some
linking back), then the ``tb-*`` citing sites whose pages link to a university page.
"""

from __future__ import annotations

import random
from collections import Counter, defaultdict
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit, urlunsplit

from core.domains import registered_domain
from testbed import CATEGORIES
from testbed.links import is_html
from testbed.options import BuildOptions
from testbed.siteindex import IndexWriter, is_forbidden_host
from testbed.sites import (
    binary_body,
    category_of,
    html_headers,
    insert_into_body,
    kind_of_path,
    redirect,
    render_real_page,
    render_results_page,
    render_text_page,
    stable_hash,
)
from testbed.texts import ORIGINS, REAL, Text, TextPools
from testbed.trouble import TROUBLE_HOST

_SECTIONS = {
    "universities": "people",
    "scientific": "research",
    "search": "search",
    "social": "posts",
    "media": "shows",
    "news": "news",
    "other": "about",
}


class ExternalSites:
    """The part of the build (:class:`testbed.build._Builder`) that writes the other sites."""

    o: BuildOptions
    w: IndexWriter
    sites: dict[str, dict[str, Any]]
    citing: dict[str, list[dict[str, Any]]]
    webkb_source: dict[str, str]

    if TYPE_CHECKING:  # of testbed.universities.UniversitySites, another part of the build

        def university_pages(self, uni: dict[str, Any]) -> list[str]: ...

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
            listed = self.sites.get(dom)
            if listed is not None and listed["kind"] in ("corpus", "university"):
                listed["text_origin"] = REAL
                listed["pages"].append(
                    {"url": self.w.original[key], "source": source, "language": "en",
                     **Text(source, "en", "").provenance()}
                )  # fmt: skip
                host = urlsplit(key).netloc
                if host not in listed["hosts"]:
                    listed["hosts"].append(host)

    def _site(
        self, dom: str, kind: str, category: str, language: str | None, https: bool = False
    ) -> dict[str, Any]:
        site = self.sites.setdefault(
            dom,
            {"category": category, "kind": kind, "language": language, "https": https,
             "text_origin": None, "hosts": [], "pages": []},
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
        site["text_origin"] = ORIGINS[(category, language)]
        if category != "search":
            pools.begin_site(category, language)

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
                    origin: dict[str, Any] = {"corpus": None, "document": None}
                else:
                    text = pools.take(category, language)
                    if text.html is not None:
                        body = render_real_page(text, nav, extra)
                    else:
                        body = render_text_page(dom, text, nav, extra)
                    source = text.source
                    origin = text.provenance()
                self.w.add(key_url, 200, html_headers(), body)
                site["pages"].append({"url": url, "source": source, "language": language, **origin})
            if url.startswith("https://"):
                redirect(self.w, "http://" + url[len("https://") :], url)
        for netloc in site["hosts"]:
            robots = f"{scheme_for(netloc)}://{netloc}/robots.txt"
            self.w.add(robots, 200, [("Content-Type", "text/plain")],
                       b"User-agent: *\nDisallow: /cgi-bin/\n")  # fmt: skip
            if robots.startswith("https://"):
                redirect(self.w, "http://" + robots[len("https://") :], robots)
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
        from testbed.sites import escape

        stored = self.w.get(page)
        assert stored is not None and stored.status == 200, page
        href = escape(target)
        link = f'<p class="see-also">See also: <a href="{href}">{escape(anchor)}</a></p>\n'
        body = insert_into_body(stored.body, link.encode())
        self.w.add(page, 200, stored.headers, body, replace=True)
