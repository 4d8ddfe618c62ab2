"""Pages run in a headless browser for the links their scripts build (``[crawl] render``).

Some sites build their menus in the browser: a script writes the ``<a>`` elements into
the page, from strings no literal scan can read (``'/de' + 'pt'``). With ``render =
"always"`` every HTML page of a crawled university the crawler fetched (2xx), with
``"auto"`` the ones :func:`needs_render` picks, are loaded in Debian's headless Chromium
through Playwright (the library scrapy-playwright is built on, on the same asyncio
reactor), and the links of the DOM after the scripts ran are added to the page's links,
marked ``rendered`` (:data:`crawler.links.RENDERED`).

The browser renders the body the crawler already fetched: the page's own URL is answered
from it (Playwright's request routing), so a page is fetched once, stored once with its
real answer (status, headers, raw HTML, WARC record), and politeness, robots.txt,
Retry-After and the size limits apply to it as to every page. What the browser fetches
itself: the scripts of the page (from any host the safety rules allow) and the page's
own host's XHR/fetch calls; pictures, styles, fonts, media, other frames and navigations
are refused. It goes through ``[crawl] proxy`` when set, with the crawl's User-Agent.

Why not scrapy-playwright's download handler: it makes the browser the downloader of
the requests it marks, so ``auto`` (which decides from the fetched HTML) would fetch each
chosen page a second time, and the stored answer would be the browser's DOM instead of
the server's bytes. scrapy-playwright 0.0.48 does run here with Debian's Chromium 156
(``PLAYWRIGHT_LAUNCH_OPTIONS = {"executable_path": "/usr/bin/chromium"}``); this module
uses the same Playwright launch with that executable.

Time: a render costs the browser's load of the page and its scripts, bounded by
``[crawl] render_timeout`` (``bench/results/render.md`` measures it); at most
:data:`RENDER_PAGES` pages are rendered at once, in one browser for the crawl process.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
import shutil
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urldefrag, urlsplit

from scrapy import signals
from scrapy.exceptions import NotConfigured
from scrapy.http import TextResponse
from scrapy.utils.defer import deferred_from_coro

from core.exceptions import ConfigError
from crawler.links import RENDERED, is_html
from crawler.safety import unsafe_reason
from crawler.wiring import wm_of

if TYPE_CHECKING:
    from scrapy import Request
    from scrapy.crawler import Crawler
    from scrapy.http import Response
    from twisted.internet.defer import Deferred

log = logging.getLogger(__name__)

#: ``[crawl] render`` values
MODES = ("never", "auto", "always")
#: pages rendered at once
RENDER_PAGES = 2
#: Chromium's flags (root in a container: no sandbox; no GPU; /dev/shm may be small)
CHROMIUM_ARGS = ("--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage")
#: resource types the browser may fetch for a page (the rest is refused)
_ALLOWED = frozenset({"script", "xhr", "fetch"})

# a script that writes links into the page (an <a> made, an href set, markup with <a)
_DOM_WRITES = re.compile(
    r"""createElement\(\s*['"]a['"]\s*\)|setAttribute\(\s*['"]href['"]"""
    r"""|(?<!location)(?<!window)\.href\s*=(?!=)"""
    r"""|(?:innerHTML\s*\+?=|outerHTML\s*=|insertAdjacentHTML\(|document\.write(?:ln)?\("""
    r"""|\.(?:html|append|prepend|after|before)\()[^;]*<a\s""",
    re.IGNORECASE,
)
_NOSCRIPT_WARNING = re.compile(r"javascript|enable\s+scripts|browser", re.IGNORECASE)
_APP_ROOTS = frozenset({"root", "app", "__next", "__nuxt", "main-app", "react-root"})
_MENU_NAME = re.compile(r"menu|nav", re.IGNORECASE)
#: an HTML page with scripts and fewer links than this, or less text, is a script's shell
FEW_LINKS = 3
LITTLE_TEXT = 300


def needs_render(response: Response) -> str | None:
    """Why an HTML page should be rendered (``render = "auto"``), or None.

    The page has scripts, and one of: an inline script that writes links or markup into
    the page (``createElement("a")``, ``innerHTML``, ``document.write``, jQuery's
    ``.append("<...")``); a ``<noscript>`` warning; an empty application root (``<div
    id="root">``, ``__next``); an empty menu (a ``<nav>``, or an element whose id or class
    says menu/nav, without one link); fewer than :data:`FEW_LINKS` links or
    :data:`LITTLE_TEXT` characters of text.

    Examples
    --------
    >>> from scrapy.http import HtmlResponse
    >>> def page(body):
    ...     return HtmlResponse("http://u.edu/", body=body.encode(), encoding="utf-8")
    >>> needs_render(page("<p>plain</p><a href='/a'>a</a>")) is None
    True
    >>> needs_render(page("<ul id='menu'></ul><script src='/m.js'></script>"))
    'empty menu'
    >>> needs_render(page("<script>x.innerHTML = '<a href=/b>b</a>'</script>"))
    'script writes the page'
    """
    if not isinstance(response, TextResponse) or not is_html(response):
        return None
    root = response.selector.root
    if not hasattr(root, "iter"):
        return None
    scripts = [el for el in root.iter("script") if el.get("src") or (el.text or "").strip()]
    if not scripts:
        return None
    for el in scripts:
        kind = (el.get("type") or "").lower()
        if "json" not in kind and "template" not in kind and _DOM_WRITES.search(el.text or ""):
            return "script writes the page"
    for el in root.iter("noscript"):
        if _NOSCRIPT_WARNING.search(el.text_content() or ""):
            return "noscript warning"
    for el in root.iter("div", "nav", "ul", "ol", "menu"):
        # an empty container (no element, no text) waiting for a script to fill it
        if len(el) or (el.text or "").strip():
            continue
        if (el.get("id") or "").lower() in _APP_ROOTS:
            return "empty application root"
        if el.tag == "nav" or _MENU_NAME.search(f"{el.get('id') or ''} {el.get('class') or ''}"):
            return "empty menu"
    links = len(root.xpath("//a[@href]|//area[@href]"))
    visible = root.xpath("//body//text()[not(ancestor::script or ancestor::style)]")
    text = " ".join(" ".join(visible).split())
    if links < FEW_LINKS or len(text) < LITTLE_TEXT:
        return "little content"
    return None


def find_browser(browser: str) -> str:
    """The Chromium executable ``browser`` names (a path, or a name on PATH).

    Raises
    ------
    ConfigError
        No such executable, or Playwright is not installed: the message says what to do.
    """
    try:
        import playwright  # noqa: F401
    except ImportError:
        raise ConfigError(
            "[crawl] render needs Playwright: pip install 'webometrics[render]' "
            '(or set render = "never")'
        ) from None
    path = browser if "/" in browser else shutil.which(browser)
    if not path or not Path(path).is_file():
        raise ConfigError(
            f"[crawl] render_browser = {browser!r}: no Chromium there; install Debian's "
            "(apt-get install chromium) or give the executable's path (or set render = "
            '"never")'
        )
    return path


class Renderer:
    """One headless Chromium, rendering fetched pages for their links.

    Parameters
    ----------
    browser : str
        The Chromium executable.
    timeout : float
        Seconds a page may take to load and run its scripts.
    user_agent : str
        The crawl's User-Agent.
    proxy : str, optional
        The crawl's proxy.
    allow_private : bool
        ``[crawl] allow_private_hosts`` (the browser's own fetches obey the same rule).
    """

    def __init__(
        self,
        browser: str,
        *,
        timeout: float,
        user_agent: str,
        proxy: str | None = None,
        allow_private: bool = False,
    ) -> None:
        self.browser_path = browser
        self.timeout = timeout
        self.user_agent = user_agent
        self.proxy = proxy
        self.allow_private = allow_private
        self._playwright: Any = None
        self._browser: Any = None
        self._context: Any = None
        self._started: asyncio.Lock | None = None
        self._pages: asyncio.Semaphore | None = None

    async def _start(self) -> Any:
        if self._started is None:
            self._started = asyncio.Lock()
            self._pages = asyncio.Semaphore(RENDER_PAGES)
        async with self._started:
            if self._context is None:
                from playwright.async_api import async_playwright

                self._playwright = await async_playwright().start()
                launch: dict[str, Any] = {
                    "executable_path": self.browser_path,
                    "headless": True,
                    "args": list(CHROMIUM_ARGS),
                }
                if self.proxy:
                    launch["proxy"] = {"server": self.proxy}
                self._browser = await self._playwright.chromium.launch(**launch)
                self._context = await self._browser.new_context(
                    user_agent=self.user_agent, java_script_enabled=True
                )
        return self._context

    async def links(self, url: str, body: bytes, content_type: str | None) -> list[tuple[str, str]]:
        """The ``(absolute URL, anchor text)`` of the ``<a href>``/``<area href>`` of the
        page's DOM after its scripts ran (http(s), fragment dropped, first per target)."""
        context = await self._start()
        assert self._pages is not None
        page_url = urldefrag(url)[0]
        host = urlsplit(url).hostname
        async with self._pages:
            page = await context.new_page()
            try:

                async def route(route: Any) -> None:
                    req = route.request
                    if req.is_navigation_request() and req.frame == page.main_frame:
                        if urldefrag(req.url)[0] == page_url:
                            await route.fulfill(
                                status=200,
                                body=body,
                                headers={"Content-Type": content_type or "text/html"},
                            )
                            return
                        await route.abort()
                        return
                    allowed = req.resource_type in _ALLOWED and (
                        req.resource_type == "script" or urlsplit(req.url).hostname == host
                    )
                    if allowed and unsafe_reason(req.url, allow_private=self.allow_private):
                        allowed = False
                    await (route.continue_() if allowed else route.abort())

                await page.route("**/*", route)
                ms = self.timeout * 1000
                await page.goto(url, wait_until="load", timeout=ms)
                # scripts that build the menu after the load event (timers, fetch calls)
                # (a page that keeps polling: the DOM as it is after a second)
                with contextlib.suppress(Exception):
                    await page.wait_for_load_state("networkidle", timeout=min(ms, 1000))
                found = await page.eval_on_selector_all(
                    "a[href], area[href]",
                    "els => els.map(e => [e.href, (e.textContent || '').trim()])",
                )
            finally:
                await page.close()
        seen: dict[str, str] = {}
        for href, anchor in found:
            target = urldefrag(str(href))[0]
            if target.startswith(("http://", "https://")) and target not in seen:
                seen[target] = " ".join(str(anchor).split())
        return list(seen.items())

    async def close(self) -> None:
        """Stop the browser (when it was started)."""
        if self._browser is not None:
            await self._browser.close()
        if self._playwright is not None:
            await self._playwright.stop()
        self._browser = self._context = self._playwright = None


class RenderMiddleware:
    """A downloader middleware that renders the HTML answers ``[crawl] render`` asks for
    and puts the links of their DOM in ``request.meta["wm_rendered"]``.

    Stats: ``render/pages`` (rendered), ``render/seconds`` (their wall time),
    ``render/skipped`` (``auto``: not needed), ``render/failed``, ``render/links``.
    """

    def __init__(self, crawler: Crawler, mode: str, renderer: Renderer) -> None:
        self.crawler = crawler
        self.mode = mode
        self.renderer = renderer

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> RenderMiddleware:
        settings = crawler.settings
        mode = settings.get("WEBOMETRICS_RENDER") or "never"
        if mode not in MODES:
            raise ConfigError(f"[crawl] render = {mode!r} must be one of {', '.join(MODES)}")
        if mode == "never":
            raise NotConfigured
        renderer = Renderer(
            find_browser(settings.get("WEBOMETRICS_RENDER_BROWSER") or "chromium"),
            timeout=settings.getfloat("WEBOMETRICS_RENDER_TIMEOUT", 15.0),
            user_agent=settings.get("USER_AGENT"),
            proxy=settings.get("WEBOMETRICS_PROXY"),
            allow_private=settings.getbool("WEBOMETRICS_ALLOW_PRIVATE_HOSTS"),
        )
        mw = cls(crawler, mode, renderer)
        crawler.signals.connect(mw.spider_closed, signal=signals.spider_closed)
        return mw

    def spider_closed(self) -> Deferred[None]:
        return deferred_from_coro(self.renderer.close())

    async def process_response(self, request: Request, response: Response) -> Response:
        # a university's own pages: their links make its environment (an external page
        # keeps only its links into the universities, not worth a browser)
        if wm_of(request).get("kind") != "internal":
            return response
        if not 200 <= response.status < 300 or not is_html(response):
            return response
        stats = self.crawler.stats
        assert stats is not None
        if self.mode == "auto":
            reason = needs_render(response)
            if reason is None:
                stats.inc_value("render/skipped")
                return response
            stats.inc_value(f"render/reason/{reason}")
        start = time.monotonic()
        try:
            ctype = response.headers.get(b"Content-Type")
            found = await self.renderer.links(
                response.url, response.body, ctype.decode("latin-1") if ctype else None
            )
        except Exception as exc:  # a page the browser cannot load keeps its HTML links
            stats.inc_value("render/failed")
            log.warning("rendering %s failed: %s", response.url, exc)
            return response
        finally:
            stats.inc_value("render/seconds", time.monotonic() - start)  # type: ignore[arg-type]
        stats.inc_value("render/pages")
        stats.inc_value("render/links", len(found))
        request.meta[RENDERED] = found
        return response
