"""The dashboard in a real browser: ``webometrics dashboard`` on a free port of 127.0.0.1
against the fixture database, Debian's headless Chromium driven over the DevTools
protocol, the Overview table's text checked and a screenshot saved."""

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
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import websocket

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


@contextlib.contextmanager
def chromium(profile: Path) -> Iterator[DevTools]:
    """Headless Chromium with a fresh profile; yields a DevTools client on its page."""
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
    client = None
    try:
        port_file = profile / "DevToolsActivePort"
        deadline = time.monotonic() + 60
        while not (port_file.exists() and port_file.read_text().strip()):
            if proc.poll() is not None or time.monotonic() > deadline:
                err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
                pytest.fail(f"chromium did not start its DevTools endpoint: {err[-2000:]}")
            time.sleep(0.1)
        port = int(port_file.read_text().split()[0])
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=10) as resp:
            targets = json.load(resp)
        page = next(t for t in targets if t["type"] == "page")
        client = DevTools(page["webSocketDebuggerUrl"])
        yield client
    finally:
        if client is not None:
            client.close()
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@contextlib.contextmanager
def dashboard_server(db_url: str, port: int, log: Path) -> Iterator[str]:
    """``webometrics dashboard`` on ``port``; yields its address once it printed it."""
    env = dict(os.environ)
    env.pop("WEBOMETRICS_CONFIG", None)
    out = log.open("w")
    proc = subprocess.Popen(
        [
            str(Path(sys.executable).parent / "webometrics"),
            "dashboard",
            "--port",
            str(port),
            "--db-url",
            db_url,
        ],
        stdout=subprocess.PIPE,
        stderr=out,
        text=True,
        env=env,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        if "dashboard running at" not in line:
            proc.wait(timeout=30)
            pytest.fail(f"webometrics dashboard did not start: {line!r}\n{log.read_text()}")
        address = line.split("dashboard running at ", 1)[1].split()[0]
        yield address
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        out.close()


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
        # Table 2 of the fixture's newest finished run (run 2): spbu.ru has 3 external
        # links to 2 domains and 1 citing page from 1 domain
        spbu = next(r for r in rows if any("spbu.ru" in cell for cell in r))
        assert spbu[-4:] == ["3", "2", "1", "1"], rows
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
        assert spbu_line.endswith(",2,3,2,1,1")
