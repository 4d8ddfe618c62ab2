"""The trouble cases: pages that misbehave, and the addresses that must never be fetched.

Under each university's main host at ``/testbed/...`` and under ``http://trouble.testbed.example/``
(:data:`TROUBLE_HOST`): redirect chains and a loop, 404, 500, a slow page, windows-1251 and
koi8-r pages, a broken charset, PDF and JPEG files, an oversized page, a robots-disallowed
page, the endless calendar (a crawler trap) and the links to internal services
(:data:`FORBIDDEN_URLS`). :class:`TroubleCases` writes them and lists each with what a crawler
should see in the manifest's ``trouble`` section.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from testbed.options import BuildOptions
from testbed.siteindex import IndexWriter
from testbed.sites import binary_body, html_headers, plain_page, redirect
from testbed.texts import Text, TextPools

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

_KOI8_SAFE = str.maketrans({"«": '"', "»": '"', "—": "-", "–": "-", "…": "...", "№": "N"})


class TroubleCases:
    """The part of the build (:class:`testbed.build._Builder`) that writes the trouble cases."""

    o: BuildOptions
    w: IndexWriter
    trouble: list[dict[str, Any]]

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
        w.add(final, 200, html_headers(), plain_page("Moved page", ["This page has moved here."]))
        w.add(base + "loop/a", 302, [("Location", base + "loop/b")], b"")
        w.add(base + "loop/b", 302, [("Location", base + "loop/a")], b"")
        w.add(base + "error.html", 500, html_headers(),
              b"<html><body><h1>500 Internal Server Error</h1></body></html>\n")  # fmt: skip
        slow = plain_page("Slow page", ["This page takes a while."])
        w.add(base + "slow.html", 200, html_headers(), slow, delay=o.slow_seconds)
        title = ru.title.translate(_KOI8_SAFE)
        paras = "".join(f"<p>{p}</p>" for p in text.split("\n"))
        cp = (
            f"<html><head><title>{title}</title></head><body><h1>{title}</h1>{paras}"
            "</body></html>\n"
        )
        w.add(base + "ru/cp1251.html", 200, html_headers("windows-1251"),
              cp.encode("cp1251", errors="replace"))  # fmt: skip
        koi = cp.replace(
            "<head>", '<head><meta http-equiv="Content-Type" content="text/html; charset=koi8-r">'
        )
        w.add(base + "ru/koi8r.html", 200, [("Content-Type", "text/html")],
              koi.encode("koi8_r", errors="replace"))  # fmt: skip
        w.add(base + "broken-charset.html", 200, html_headers("utf-8"),
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
            html_headers(),
            b"",
            generated={
                "bytes": o.oversized_bytes,
                "head": head,
                "tail": "</body></html>\n",
                "filler": "<p>Archive entry: minutes of the weekly department meeting.</p>\n",
            },
        )
        w.add(robots_url, 200, html_headers(), plain_page("Internal notes", ["Not for robots."]))
        if calendar:
            w.add_prefix(base + "calendar/", "calendar")
        else:
            host = urlsplit(base).netloc
            secure = f"https://{host}/secure.html"
            redirect(w, base + "to-https", secure)
            w.add(secure, 200, html_headers(), plain_page("Secure page", ["Served over TLS."]))
            w.add(base + "nofollow.html", 200, html_headers(),
                  plain_page("Sponsored", ["An advertisement."]))  # fmt: skip
            w.add(f"http://{host}/robots.txt", 200, [("Content-Type", "text/plain")],
                  b"User-agent: *\nDisallow: /private/\n")  # fmt: skip
            w.add(f"https://{host}/robots.txt", 200, [("Content-Type", "text/plain")],
                  b"User-agent: *\nDisallow: /private/\n")  # fmt: skip
            home_links = [(u, a) for u, a in links if urlsplit(u).netloc == host]
            w.add(base, 200, html_headers(),
                  plain_page("Trouble Inc.", ["Pages that misbehave."], home_links))  # fmt: skip
        return links
