"""The dashboard in a real browser: ``webometrics dashboard`` on a free port of 127.0.0.1
against the fixture database, Debian's headless Chromium driven over the DevTools
protocol, the Overview table's text checked and a screenshot saved; and a first visit by
each page's deep link, to a fresh dashboard, gets the nine pages of ``st.navigation`` and
the app's sidebar (a server and a tab of one Chromium per page, all at once)."""

from __future__ import annotations

import base64
import contextlib
import itertools
import json
import os
import shutil
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
import websocket

from tests.stored_world import expected_table2

pytestmark = pytest.mark.requires_browser

CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
    "--no-first-run",
    "--no-default-browser-check",
    "--hide-scrollbars",
    "--window-size=1400,1100",
)


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def chromium_binary() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if not found:
        pytest.fail(
            "Debian's chromium is not installed: run `make test` (it installs it with "
            "apt-get install -y chromium)",
            pytrace=False,
        )
    return found


class DevTools:
    """A minimal Chrome DevTools protocol client over one page target's websocket."""

    def __init__(self, ws_url: str) -> None:
        self.ws = websocket.create_connection(ws_url, timeout=30, suppress_origin=True)
        self.ids = itertools.count(1)

    def call(self, method: str, **params: Any) -> dict[str, Any]:
        msg_id = next(self.ids)
        self.ws.send(json.dumps({"id": msg_id, "method": method, "params": params}))
        while True:
            msg = json.loads(self.ws.recv())
            if msg.get("id") == msg_id:
                if "error" in msg:
                    raise RuntimeError(f"{method}: {msg['error']}")
                return msg.get("result", {})

    def evaluate(self, expression: str) -> Any:
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True)
        return result.get("result", {}).get("value")

    def close(self) -> None:
        self.ws.close()


def stop(procs: Sequence[subprocess.Popen], timeout: float) -> None:
    """Terminate every process, then wait for each (killed after ``timeout`` seconds)."""
    for proc in procs:
        proc.terminate()
    for proc in procs:
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@contextlib.contextmanager
def chromium_tabs(profile: Path, n: int) -> Iterator[list[DevTools]]:
    """Headless Chromium with a fresh profile; yields a DevTools client on each of its
    ``n`` tabs (the first one it opens and ``n - 1`` new ones)."""
    proc = subprocess.Popen(
        [
            chromium_binary(),
            *CHROMIUM_FLAGS,
            f"--user-data-dir={profile}",
            "--remote-debugging-address=127.0.0.1",
            "--remote-debugging-port=0",
            "about:blank",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    clients: list[DevTools] = []
    try:
        port_file = profile / "DevToolsActivePort"
        deadline = time.monotonic() + 60
        while not (port_file.exists() and port_file.read_text().strip()):
            if proc.poll() is not None or time.monotonic() > deadline:
                err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
                pytest.fail(f"chromium did not start its DevTools endpoint: {err[-2000:]}")
            time.sleep(0.1)
        endpoint = f"http://127.0.0.1:{int(port_file.read_text().split()[0])}/json"
        with urllib.request.urlopen(f"{endpoint}/list", timeout=10) as resp:
            pages = [t for t in json.load(resp) if t["type"] == "page"][:1]
        for _ in range(n - 1):
            new = urllib.request.Request(f"{endpoint}/new?about:blank", method="PUT")
            with urllib.request.urlopen(new, timeout=10) as resp:
                pages.append(json.load(resp))
        for page in pages:
            clients.append(DevTools(page["webSocketDebuggerUrl"]))
        yield clients
    finally:
        for client in clients:
            client.close()
        stop([proc], timeout=10)


@contextlib.contextmanager
def chromium(profile: Path) -> Iterator[DevTools]:
    """Headless Chromium with a fresh profile; yields a DevTools client on its page."""
    with chromium_tabs(profile, 1) as (client,):
        yield client


@contextlib.contextmanager
def dashboard_servers(
    db_url: str, ports: Sequence[int], logs: Sequence[Path]
) -> Iterator[list[str]]:
    """``webometrics dashboard`` on each of ``ports`` (stderr to the matching log), all
    started at once; yields their addresses once every one has printed its own."""
    env = dict(os.environ)
    env.pop("WEBOMETRICS_CONFIG", None)
    command = [str(Path(sys.executable).parent / "webometrics"), "dashboard", "--db-url", db_url]
    procs: list[subprocess.Popen] = []
    with contextlib.ExitStack() as outs:
        try:
            for port, log in zip(ports, logs, strict=True):
                out = outs.enter_context(log.open("w"))
                procs.append(
                    subprocess.Popen(
                        [*command, "--port", str(port)],
                        stdout=subprocess.PIPE,
                        stderr=out,
                        text=True,
                        env=env,
                    )
                )
            addresses = []
            for proc, log in zip(procs, logs, strict=False):
                assert proc.stdout is not None
                line = proc.stdout.readline()
                if "dashboard running at" not in line:
                    proc.wait(timeout=30)
                    pytest.fail(f"webometrics dashboard did not start: {line!r}\n{log.read_text()}")
                addresses.append(line.split("dashboard running at ", 1)[1].split()[0])
            yield addresses
        finally:
            stop(procs, timeout=20)


@contextlib.contextmanager
def dashboard_server(db_url: str, port: int, log: Path) -> Iterator[str]:
    """``webometrics dashboard`` on ``port``; yields its address once it printed it."""
    with dashboard_servers(db_url, [port], [log]) as (address,):
        yield address


# the rows of the first st.table once it shows spbu.ru, as lists of cell texts
TABLE_ROWS = """(() => {
    const t = document.querySelector('[data-testid="stTable"] table');
    if (!t || !t.innerText.includes('spbu.ru')) return null;
    return Array.from(t.querySelectorAll('tr')).map(
        tr => Array.from(tr.querySelectorAll('th, td')).map(c => c.innerText.trim()));
})()"""


def wait_for(client: DevTools, expression: str, timeout: float = 60) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = client.evaluate(expression)
        if value:
            return value
        time.sleep(0.25)
    body = client.evaluate("document.body ? document.body.innerText : ''")
    pytest.fail(f"timed out waiting for {expression}; the page shows:\n{body[:3000]}")


def settle(client: DevTools, expression: str, done: Callable[[Any], bool], timeout: float) -> Any:
    """The value of ``expression`` once it is truthy and ``done`` accepts it, or its last
    truthy value after ``timeout`` seconds (for the caller's assertions to report)."""
    deadline = time.monotonic() + timeout
    last = None
    while True:
        value = client.evaluate(expression)
        last = value or last
        if (value and done(value)) or time.monotonic() > deadline:
            return last
        time.sleep(0.25)


@pytest.mark.timeout(240)
def test_overview_in_chromium(dashboard_db, tmp_path: Path) -> None:
    port = free_port()
    with (
        dashboard_server(dashboard_db.url, port, tmp_path / "dashboard.log") as address,
        chromium(tmp_path / "profile") as client,
    ):
        assert address == f"http://127.0.0.1:{port}/"
        client.call("Page.enable")
        client.call("Page.navigate", url=address)
        rows = wait_for(client, TABLE_ROWS)
        # Table 2 of the fixture's newest finished run (run 2): spbu.ru's external links
        # and domains, citing pages and domains
        want = expected_table2(2)["spbu.ru"]
        spbu = next(r for r in rows if any("spbu.ru" in cell for cell in r))
        assert spbu[-4:] == [str(n) for n in want[1:]], rows
        heading = client.evaluate(
            "document.querySelector('h1') && document.querySelector('h1').innerText"
        )
        assert heading and "Overview" in heading
        # let the fonts and the sidebar settle, then take the picture
        wait_for(client, "document.fonts.status === 'loaded'")
        time.sleep(1.0)
        shot = client.call("Page.captureScreenshot", format="png", captureBeyondViewport=False)
        png = base64.b64decode(shot["data"])
        path = tmp_path / "overview.png"
        path.write_bytes(png)
        assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 20_000
        # the CSV download of Table 2, through the browser
        downloads = tmp_path / "downloads"
        downloads.mkdir()
        client.call("Browser.setDownloadBehavior", behavior="allow", downloadPath=str(downloads))
        clicked = client.evaluate(
            """(() => {
                const b = Array.from(document.querySelectorAll('button'))
                    .find(b => b.innerText.includes('Download table 2'));
                if (b) b.click();
                return !!b;
            })()"""
        )
        assert clicked
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            done = [p for p in downloads.iterdir() if p.suffix == ".csv"]
            if done:
                break
            time.sleep(0.2)
        assert [p.name for p in done] == ["table-2-run-2.csv"]
        lines = done[0].read_text(encoding="utf-8").splitlines()
        assert lines[0].startswith("university,domains,country,Webometrics rank")
        spbu_line = next(line for line in lines if ",spbu.ru," in line)
        assert spbu_line.endswith("," + ",".join(map(str, want)))


# the deep link of every page (Streamlit's url_path, from the file name; the default page
# is the root) -> the page's heading
DEEP_LINKS = {
    "": "Overview",
    "university": "University",
    "countries": "Countries",
    "ranks": "Rank vs groups",
    "network": "Network",
    "review": "Review",
    "duplicates": "Near duplicates",
    "runs": "Runs",
    "sites": "Sites",
}
# the titles st.navigation gives the pages in dashboard/app.py, in its order
NAVIGATION = [
    "Overview",
    "University",
    "Countries",
    "Rank vs groups",
    "Network",
    "Review",
    "Duplicates",
    "Runs",
    "Sites",
]

# once the page's script run is over (heading shown, status widget gone): the heading,
# the path, the sidebar's navigation links, captions and buttons
RENDERED_SIDEBAR = """(() => {
    const h1 = document.querySelector('h1');
    const side = document.querySelector('[data-testid="stSidebar"]');
    if (!h1 || !side || document.querySelector('[data-testid="stStatusWidget"]')) return null;
    const texts = selector => Array.from(side.querySelectorAll(selector))
        .map(e => e.innerText.trim());
    return {
        heading: h1.innerText.trim(),
        path: location.pathname,
        pages: texts('[data-testid="stSidebarNav"] a [data-testid="stMarkdownContainer"]'),
        captions: texts('[data-testid="stCaptionContainer"]'),
        buttons: texts('button'),
    };
})()"""


def free_ports(n: int) -> list[int]:
    ports: set[int] = set()
    while len(ports) < n:
        ports.add(free_port())
    return sorted(ports)


@pytest.fixture(scope="module")
def first_visits(dashboard_db, tmp_path_factory) -> Iterator[dict[str, DevTools]]:
    """A fresh dashboard per page, each asked for that page's deep link as its very first
    page request, in a tab of its own of one Chromium; all started and opened at once.
    Yields the tab of each deep link."""
    tmp = tmp_path_factory.mktemp("first-visits")
    logs = [tmp / f"dashboard-{path or 'root'}.log" for path in DEEP_LINKS]
    with (
        dashboard_servers(dashboard_db.url, free_ports(len(DEEP_LINKS)), logs) as addresses,
        chromium_tabs(tmp / "profile", len(DEEP_LINKS)) as tabs,
    ):
        for path, address, tab in zip(DEEP_LINKS, addresses, tabs, strict=True):
            tab.call("Page.navigate", url=address + path)
        yield dict(zip(DEEP_LINKS, tabs, strict=True))


@pytest.mark.timeout(240)
@pytest.mark.parametrize("path", list(DEEP_LINKS), ids=[f"/{p}" for p in DEEP_LINKS])
def test_first_visit_by_deep_link_shows_the_named_pages(
    first_visits: dict[str, DevTools], dashboard_db, path: str
) -> None:
    # a first visitor who opens a deep link gets the page, the nine pages of
    # st.navigation (not Streamlit's list of the files of a pages/ folder), and the
    # sidebar of dashboard/app.py: the database and the Reload data button
    tab = first_visits[path]
    wait_for(tab, RENDERED_SIDEBAR, timeout=120)
    # the sidebar's button and its database caption (which names when the data were
    # read) show a moment after the run ends: wait for both, unless the navigation is
    # already wrong
    shown = settle(
        tab,
        RENDERED_SIDEBAR,
        lambda s: (
            s["pages"] != NAVIGATION
            or (
                "Reload data" in s["buttons"]
                and any(c.startswith("database:") for c in s["captions"])
            )
        ),
        timeout=15,
    )
    assert (shown["path"], shown["heading"]) == (f"/{path}", DEEP_LINKS[path]), shown
    assert shown["pages"] == NAVIGATION, shown
    database = Path(dashboard_db.url.removeprefix("sqlite:///")).name
    assert any(c.startswith("database:") and database in c for c in shown["captions"]), shown
    assert "Reload data" in shown["buttons"], shown


# once a page's script run is over: its heading, and the text of any exception box
RENDERED_PAGE = """(() => {
    const h1 = document.querySelector('h1');
    if (!h1 || document.querySelector('[data-testid="stStatusWidget"]')) return null;
    return {
        heading: h1.innerText.trim(),
        exceptions: Array.from(document.querySelectorAll('[data-testid="stException"]'))
            .map(e => e.innerText.slice(0, 500)),
        text: document.body.innerText,
    };
})()"""


@pytest.mark.timeout(300)
def test_every_page_of_the_pipeline_database_in_chromium(pipeline_db, tmp_path: Path) -> None:
    """Each page of the database the real pipeline made, in a real browser: its heading,
    no exception box, the demo banner, and a full-page screenshot of each
    (``$WEBOMETRICS_SCREENSHOTS`` keeps them, else the test's temporary folder)."""
    shots = Path(os.environ.get("WEBOMETRICS_SCREENSHOTS") or tmp_path / "shots")
    shots.mkdir(parents=True, exist_ok=True)
    with (
        dashboard_server(pipeline_db.url, free_port(), tmp_path / "dashboard.log") as address,
        chromium(tmp_path / "profile") as client,
    ):
        client.call("Page.enable")
        for path, heading in DEEP_LINKS.items():
            client.call("Page.navigate", url=address + path)
            shown = settle(
                client,
                RENDERED_PAGE,
                lambda s, h=heading: s["heading"] == h and "Demo data" in s["text"],
                timeout=90,
            )
            assert shown and shown["heading"] == heading, (path, shown)
            assert not shown["exceptions"], (path, shown["exceptions"])
            assert "Demo data" in shown["text"], path
            time.sleep(1.0)  # charts and the network's frame draw after the run
            # Streamlit scrolls its main block, not the page: make the window as tall
            height = client.evaluate(
                "Math.max(...Array.from(document.querySelectorAll('*')).map(e => e.scrollHeight))"
            )
            client.call(
                "Emulation.setDeviceMetricsOverride",
                width=1400,
                height=max(1100, min(int(height or 0), 8000)),
                deviceScaleFactor=1,
                mobile=False,
            )
            time.sleep(1.5)
            shot = client.call("Page.captureScreenshot", format="png")
            client.call("Emulation.clearDeviceMetricsOverride")
            png = base64.b64decode(shot["data"])
            (shots / f"{path or 'overview'}.png").write_bytes(png)
            assert png[:8] == b"\x89PNG\r\n\x1a\n"
