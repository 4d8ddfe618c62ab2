"""The proxy server: original URLs, original HTML, direct requests, the fetch log."""

from __future__ import annotations

import http.client
import json
import random
import threading
import time
from pathlib import Path

import pytest

from core.domains import registered_domain
from core.exceptions import ConfigError
from testbed.manifest import Manifest
from testbed.server import TestbedServer
from testbed.siteindex import url_key
from testbed.webkb import read_webkb


@pytest.fixture(scope="module")
def webkb_pages(shared_data: Path):
    return list(read_webkb(shared_data / "webkb-4universities" / "webkb.tar.gz"))


def test_original_urls_serve_the_original_html(webkb_pages, manifest: Manifest, fetch):
    """A seeded sample of WebKB pages (the four universities and misc) through the proxy:
    the 1997 bytes and Content-Type, at the original URL."""
    starts = {url_key(s) for u in manifest.universities for s in u["start_urls"]}
    first: dict[str, object] = {}
    for p in webkb_pages:
        first.setdefault(url_key(p.url), p)
    pages = [p for k, p in sorted(first.items()) if k not in starts]
    rng = random.Random(3)
    sample = rng.sample([p for p in pages if p.location is None], 150)
    for page in sample:
        got = fetch(page.url)
        assert got.status == 200, page.url
        assert got.body == page.body, page.url
        original = dict((k.lower(), v) for k, v in page.headers).get("content-type", "text/html")
        assert got.headers["content-type"] == original
    misc = [p for p in sample if p.folder == "misc"]
    assert len(misc) > 40  # other universities' real pages are there too
    assert len({registered_domain(p.url) for p in misc}) > 20
    moved = [p for p in pages if p.location is not None]
    assert moved
    for page in moved[:10]:
        got = fetch(page.url)
        assert got.status == 301 and got.headers["location"].endswith(page.location.lstrip("."))


def test_directories_redirect_to_their_slash(server: TestbedServer, fetch):
    """As real servers do: ``/dir`` answers 301 to ``/dir/`` when that exists."""
    keys = set(server.index.keys())
    dirs = sorted(k for k in keys if k.endswith("/") and k.count("/") > 3 and k[:-1] not in keys)
    assert len(dirs) > 100
    for key in random.Random(1).sample(dirs, 10):
        got = fetch(key[:-1])
        assert got.status == 301 and got.headers["location"] == key
        assert fetch(key).status == 200


def test_direct_requests_and_control_endpoints(server: TestbedServer):
    conn = http.client.HTTPConnection(server.host, server.port, timeout=30)
    conn.request("GET", "/", headers={"Host": "www.cs.utexas.edu"})
    r = conn.getresponse()
    body = r.read()
    assert r.status == 200 and b"<!-- testbed: injected links -->" in body
    assert server.requests[-1]["via"] == "direct"
    assert server.requests[-1]["url"] == "http://www.cs.utexas.edu/"
    conn.request("HEAD", "/", headers={"Host": "www.cs.utexas.edu"})
    r = conn.getresponse()
    assert r.status == 200 and r.read() == b"" and int(r.headers["Content-Length"]) == len(body)
    own = f"{server.host}:{server.port}"
    conn.request("GET", "/__testbed__/log", headers={"Host": own})
    log = json.loads(conn.getresponse().read())
    assert [e["method"] for e in log[-2:]] == ["GET", "HEAD"]
    assert {"url", "status", "bytes", "via", "time", "seconds", "user_agent"} <= set(log[-1])
    conn.request("GET", "/__testbed__/manifest", headers={"Host": own})
    assert json.loads(conn.getresponse().read())["format"] == 1
    conn.request("POST", "/__testbed__/log/clear", headers={"Host": own})
    assert json.loads(conn.getresponse().read()) == {"cleared": True}
    assert server.requests == []
    conn.request("GET", "/", headers={"Host": own})
    assert b"HTTP proxy" in conn.getresponse().read()
    conn.close()


def test_log_file_and_absolute_https_form(testbed_dir: Path, tmp_path: Path):
    log_file = tmp_path / "fetches.jsonl"
    with TestbedServer(testbed_dir, log_file=log_file) as srv:
        conn = http.client.HTTPConnection(srv.host, srv.port, timeout=30)
        conn.request("GET", "https://trouble.testbed.example/secure.html")
        r = conn.getresponse()
        assert r.status == 200 and b"Secure page" in r.read()
        conn.request("GET", "http://www.cs.wisc.edu/")
        assert conn.getresponse().read()
        conn.close()
        assert srv.fetched_urls() == [
            "https://trouble.testbed.example/secure.html",
            "http://www.cs.wisc.edu/",
        ]
    lines = [json.loads(x) for x in log_file.read_text().splitlines()]
    assert [e["url"] for e in lines] == srv.fetched_urls()


def test_missing_folder_says_what_to_do(tmp_path: Path):
    with pytest.raises(ConfigError, match="testbed build"):
        TestbedServer(tmp_path)


def test_concurrent_keep_alive_clients(server: TestbedServer, manifest: Manifest):
    """Eight keep-alive clients at once; every answer right. The rate is printed; the
    crawl benchmark (bench/) measures it honestly."""
    urls = [
        p["url"]
        for u in manifest.universities
        for p in u["pages"]
        if p["status"] == 200 and "/testbed/" not in p["url"]  # not the slow and huge pages
    ]
    urls = random.Random(5).sample(urls, 800)
    errors: list[str] = []
    done = [0]

    def client(part: list[str]) -> None:
        conn = http.client.HTTPConnection(server.host, server.port, timeout=30)
        for url in part:
            conn.request("GET", url)
            r = conn.getresponse()
            r.read()
            if r.status != 200:
                errors.append(url)
            done[0] += 1
        conn.close()

    started = time.monotonic()
    threads = [threading.Thread(target=client, args=(urls[i::8],)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    seconds = time.monotonic() - started
    print(f"{len(urls)} pages in {seconds:.2f} s: {len(urls) / seconds:.0f} pages/s")
    assert errors == [] and done[0] == len(urls)
    assert len(urls) / seconds > 150  # far below what it does; fails only when broken


def test_serve_command(testbed_dir: Path, tmp_path: Path, make_fetch):
    """``webometrics testbed serve`` in its own process: proxy, fetch log file, Ctrl-C."""
    import signal
    import socket
    import subprocess
    import sys

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    log_file = tmp_path / "log.jsonl"
    cmd = [sys.executable, "-m", "webometrics", "testbed", "serve", "--dir", str(testbed_dir),
           "--port", str(port), "--log-file", str(log_file)]  # fmt: skip
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        banner = proc.stdout.readline()
        assert f"http://127.0.0.1:{port}" in banner, proc.stderr.read()
        fetch = make_fetch(f"http://127.0.0.1:{port}")
        got = fetch("http://www.cs.washington.edu/")
        assert got.status == 200 and b"<!-- testbed: injected links -->" in got.body
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(20)
    assert proc.returncode == 130
    entries = [json.loads(line) for line in log_file.read_text().splitlines()]
    assert [e["url"] for e in entries] == ["http://www.cs.washington.edu/"]
