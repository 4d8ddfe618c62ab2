"""The test web's HTTP server: a forward proxy that answers every URL from the site index.

Scrapy (or urllib with a ``ProxyHandler``) uses it as its HTTP proxy: ``http://`` URLs
arrive in absolute form, ``https://`` URLs through ``CONNECT`` tunnels that the server
terminates with a self-signed TLS certificate made at start-up. Direct requests serve the
URL ``http://<Host header><path>``. Every request is logged (in memory, and to a file when
asked) so tests can assert what a crawler fetched and what it did not.

A thread per connection (:class:`http.server.ThreadingHTTPServer`) with HTTP/1.1
keep-alive; a lookup is one dict access and a slice of the memory-mapped bodies file.

Examples
--------
Inside a test (``DIR`` built with ``webometrics testbed build``)::

    with TestbedServer(DIR) as server:
        opener = urllib.request.build_opener(
            urllib.request.ProxyHandler({"http": server.proxy_url}))
        opener.open("http://www.cs.cornell.edu/").read()
        assert "http://www.cs.cornell.edu/" in server.fetched_urls()
"""

from __future__ import annotations

import contextlib
import datetime
import ipaddress
import json
import logging
import random
import socket
import ssl
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from io import BufferedIOBase
from pathlib import Path
from typing import Any, cast

from testbed.archive import ArchiveService
from testbed.hostile import HostileSite, HostileState
from testbed.siteindex import SiteIndex, StoredResponse

log = logging.getLogger(__name__)

CONTROL_PREFIX = "/__testbed__/"


def make_tls_context() -> ssl.SSLContext:
    """A server-side TLS context with a fresh self-signed certificate (EC P-256, valid for
    any name a client asks; clients of the test web do not verify it)."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "webometrics test web")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=365))
        .add_extension(
            x509.SubjectAlternativeName(
                [
                    x509.DNSName("*.testbed.example"),
                    x509.IPAddress(ipaddress.ip_address("127.0.0.1")),
                ]
            ),
            critical=False,
        )
        .sign(key, hashes.SHA256())
    )
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    with tempfile.TemporaryDirectory(prefix="testbed-tls-") as tmp:
        cert_path, key_path = Path(tmp) / "cert.pem", Path(tmp) / "key.pem"
        cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
        key_path.write_bytes(
            key.private_bytes(
                serialization.Encoding.PEM,
                serialization.PrivateFormat.PKCS8,
                serialization.NoEncryption(),
            )
        )
        ctx.load_cert_chain(cert_path, key_path)
    return ctx


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 256

    def __init__(
        self, address: tuple[str, int], index: SiteIndex, folder: Path, log_file: Path | None
    ) -> None:
        super().__init__(address, _Handler)
        self.index = index
        self.folder = folder
        self.fetch_log: list[dict[str, Any]] = []
        self.log_lock = threading.Lock()
        self.log_file = open(log_file, "a", encoding="utf-8") if log_file else None  # noqa: SIM115
        self.tls: ssl.SSLContext | None = None
        self.in_flight = 0
        self.tls_lock = threading.Lock()
        self.latency = 0.0
        self.latency_max = 0.0
        # the web archives of the test web's own pages (testbed.archive)
        self.archive = ArchiveService(index.get, index.stores, index.keys)
        # the hostile site (testbed.hostile): answered at request time, with its state
        self.hostile = HostileSite()
        self.hostile_state = HostileState()

    def answer_latency(self) -> float:
        """Seconds to wait before an answer: ``latency``, or when ``latency_max`` is above
        it a log-uniform draw between the two (uniform from 0 when ``latency`` is 0)."""
        low, high = self.latency, self.latency_max
        if high <= low:
            return low
        if low <= 0:
            return random.uniform(0.0, high)
        return float(low * (high / low) ** random.random())

    def tls_context(self) -> ssl.SSLContext:
        with self.tls_lock:
            if self.tls is None:
                self.tls = make_tls_context()
            return self.tls

    def record(self, entry: dict[str, Any]) -> None:
        with self.log_lock:
            self.fetch_log.append(entry)
            self.in_flight += 1

    def write_log_file(self, entry: dict[str, Any]) -> None:
        with self.log_lock:
            self.in_flight -= 1
            if self.log_file is not None:
                self.log_file.write(json.dumps(entry) + "\n")
                self.log_file.flush()

    def wait_idle(self, timeout: float) -> None:
        """Wait until no answer is being sent (at most ``timeout`` seconds)."""
        deadline = time.monotonic() + timeout
        while self.in_flight > 0 and time.monotonic() < deadline:
            time.sleep(0.01)

    def server_close(self) -> None:
        super().server_close()
        if self.log_file is not None:
            self.log_file.close()
            self.log_file = None


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "webometrics-testbed/1"
    sys_version = ""
    timeout = 120
    disable_nagle_algorithm = True  # no 40 ms Nagle/delayed-ACK stalls on keep-alive
    server: _Server
    _headers_buffer: list[bytes]  # BaseHTTPRequestHandler's, not in its type stubs

    # set by CONNECT: the scheme and authority of the tunnel
    tunnel: tuple[str, str] | None = None

    def version_string(self) -> str:
        return self.server_version

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        log.debug("%s " + format, self.client_address[0], *args)

    # -- request routing ----------------------------------------------------------------
    def do_GET(self) -> None:
        self._serve(head=False)

    def do_HEAD(self) -> None:
        self._serve(head=True)

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        if length:
            self.rfile.read(length)
        if self.tunnel is None and self.path == CONTROL_PREFIX + "log/clear":
            with self.server.log_lock:
                self.server.fetch_log.clear()
            self._send_simple(200, "application/json", b'{"cleared": true}\n')
            return
        if self.tunnel is None and self.path == CONTROL_PREFIX + "hostile/reset":
            self.server.hostile_state.reset()
            self._send_simple(200, "application/json", b'{"reset": true}\n')
            return
        self._serve(head=False, method="POST")

    def do_CONNECT(self) -> None:
        authority = self.path
        host, _, port = authority.rpartition(":")
        if not host or not port.isdigit():
            self._send_simple(400, "text/plain", b"CONNECT needs host:port\n")
            return
        self.send_response(200, "Connection established")
        self.end_headers()
        self.wfile.flush()
        try:
            first = self.connection.recv(1, socket.MSG_PEEK)
        except OSError:
            self.close_connection = True
            return
        if first == b"\x16":  # a TLS ClientHello: terminate TLS here
            try:
                tls = self.server.tls_context().wrap_socket(self.connection, server_side=True)
            except (ssl.SSLError, OSError) as exc:
                log.debug("TLS handshake for %s failed: %s", authority, exc)
                self.close_connection = True
                return
            self.connection = self.request = tls
            self.rfile = cast(BufferedIOBase, tls.makefile("rb", self.rbufsize))
            self.wfile = cast(BufferedIOBase, tls.makefile("wb", 0))
            scheme = "https"
            default = "443"
        else:
            scheme = "http"
            default = "80"
        self.tunnel = (scheme, host.lower() if port == default else f"{host.lower()}:{port}")
        self.close_connection = False

    # -- answering ------------------------------------------------------------------------
    def _target_url(self) -> tuple[str | None, str]:
        """(absolute URL, how it came: proxy | tunnel | direct); URL None for control."""
        words = self.requestline.split()
        # the raw target: http.server folds a leading "//" of self.path into "/"
        path = words[1] if len(words) == 3 else self.path
        if path.startswith(("http://", "https://")):
            return path, "proxy"
        if self.tunnel is not None:
            scheme, authority = self.tunnel
            return f"{scheme}://{authority}{path}", "tunnel"
        host = (self.headers.get("Host") or "").strip().lower()
        if path.startswith(CONTROL_PREFIX) and self._is_own_host(host):
            return None, "direct"
        if not host or self._is_own_host(host):
            return None, "direct"
        return f"http://{host}{path}", "direct"

    def _is_own_host(self, host: str) -> bool:
        own_port = str(self.server.server_address[1])
        name, _, port = host.rpartition(":")
        if not name:
            name, port = host, "80"
        return port == own_port and name in {"127.0.0.1", "localhost", "[::1]", ""}

    def _serve(self, *, head: bool, method: str | None = None) -> None:
        url, via = self._target_url()
        if url is None:
            self._control(head=head)
            return
        started = time.monotonic()
        if ArchiveService.serves(url):  # web.archive.org, index/data.commoncrawl.org
            answer = self.server.archive.answer(url, self.headers)
        else:
            hostile = self.server.hostile.answer(url, self.server.hostile_state)
            answer = hostile if hostile is not None else self.server.index.answer(url)
        entry: dict[str, Any] = {
            "time": time.time(),
            "method": method or ("HEAD" if head else "GET"),
            "url": url,
            "via": via,
            "status": answer.status,
            "bytes": 0 if head else answer.length,
            "user_agent": self.headers.get("User-Agent", ""),
            "seconds": None,
            "aborted": None,
        }
        # in the log before the answer leaves, so a client that got it finds it logged
        self.server.record(entry)
        try:
            wait = answer.delay + self.server.answer_latency()
            if wait:
                time.sleep(wait)
            entry["bytes"] = self._send(answer, head=head)
        except (BrokenPipeError, ConnectionResetError, ssl.SSLError, TimeoutError) as exc:
            entry["aborted"] = type(exc).__name__
            self.close_connection = True
        entry["seconds"] = round(time.monotonic() - started, 4)
        self.server.write_log_file(entry)

    def _send(self, answer: StoredResponse, *, head: bool) -> int:
        self.send_response(answer.status)
        for name, value in answer.headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(answer.length))
        self._headers_buffer.append(b"\r\n")
        if head:
            self.flush_headers()
            return 0
        if answer.generated is None and len(answer.body) <= 1 << 20:
            # headers and body in one write: one packet for most pages
            self._headers_buffer.append(answer.body)
            self.flush_headers()
            return len(answer.body)
        self.flush_headers()
        sent = 0
        for chunk in answer.chunks():
            self.wfile.write(chunk)
            sent += len(chunk)
        return sent

    def _send_simple(self, status: int, ctype: str, body: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _control(self, *, head: bool) -> None:
        path = self.path.split("?", 1)[0]
        if path in (CONTROL_PREFIX + "log", CONTROL_PREFIX + "log/"):
            with self.server.log_lock:
                body = json.dumps(self.server.fetch_log).encode()
            self._send_simple(200, "application/json", b"" if head else body)
        elif path == CONTROL_PREFIX + "manifest":
            manifest = self.server.folder / "manifest.json"
            body = manifest.read_bytes() if manifest.is_file() else b"{}"
            self._send_simple(200, "application/json", b"" if head else body)
        else:
            body = (
                b"webometrics test web: use this server as an HTTP proxy, or send a Host "
                b"header. Control: /__testbed__/log, /__testbed__/manifest, "
                b"POST /__testbed__/log/clear\n"
            )
            self._send_simple(200 if path == "/" else 404, "text/plain", b"" if head else body)


class TestbedServer:
    """The test web served on 127.0.0.1 in a background thread (a context manager).

    Parameters
    ----------
    folder : path-like
        A folder written by ``webometrics testbed build`` (holds ``site/`` and
        ``manifest.json``).
    port : int, default 0
        0 picks a free port.
    host : str, default "127.0.0.1"
    log_file : path-like, optional
        Also append every fetch as one JSON line to this file.
    latency : float, default 0
        Seconds added before every answer, as the round trip to a distant site would
        (benchmarks of crawls whose speed is bound by the network, not the CPU).
    latency_max : float, optional
        When above ``latency``, every answer waits a log-uniform draw between the two
        (median their geometric mean: 0.1 and 0.5 give a median of 0.22 s and a mean of
        0.25 s), as answer times of real sites spread.

    Attributes
    ----------
    proxy_url : str
        ``http://127.0.0.1:<port>``, for Scrapy's ``meta["proxy"]`` / ``HTTP_PROXY``.
    requests : list of dict
        A copy of the fetch log: ``method``, ``url``, ``via`` (proxy | tunnel | direct),
        ``status``, ``bytes``, ``seconds``, ``time``, ``user_agent`` (``aborted`` when the
        client hung up mid-body).

    Raises
    ------
    ConfigError
        ``folder`` holds no built test web.
    """

    __test__ = False  # not a pytest test class

    def __init__(
        self,
        folder: str | Path,
        port: int = 0,
        host: str = "127.0.0.1",
        log_file: str | Path | None = None,
        latency: float = 0.0,
        latency_max: float | None = None,
    ) -> None:
        if latency < 0 or (latency_max is not None and latency_max < latency):
            from core.exceptions import ParameterError

            raise ParameterError(
                f"--latency must be >= 0 seconds and --latency-max at least --latency, got "
                f"{latency} and {latency_max}"
            )
        self.folder = Path(folder)
        self.index = SiteIndex(self.folder)
        self._server = _Server(
            (host, port), self.index, self.folder, Path(log_file) if log_file else None
        )
        self._server.latency = float(latency)
        self._server.latency_max = float(latency_max or 0.0)
        address = self._server.server_address
        self.host, self.port = str(address[0]), int(address[1])
        self._thread: threading.Thread | None = None

    @property
    def proxy_url(self) -> str:
        return f"http://{self.host}:{self.port}"

    @property
    def requests(self) -> list[dict[str, Any]]:
        with self._server.log_lock:
            return [dict(e) for e in self._server.fetch_log]

    def fetched_urls(self) -> list[str]:
        """The URLs asked for, in order (with repeats)."""
        return [e["url"] for e in self.requests]

    def answer_latency(self) -> float:
        """A draw of the seconds the server waits before an answer (``latency``, or
        between ``latency`` and ``latency_max``)."""
        return self._server.answer_latency()

    def clear_log(self) -> None:
        with self._server.log_lock:
            self._server.fetch_log.clear()

    def reset_hostile(self) -> None:
        """Make the hostile site's 429 and 503 pages answer so again (before a crawl)."""
        self._server.hostile_state.reset()

    def manifest(self) -> dict[str, Any]:
        """The manifest of the served test web (parsed JSON)."""
        return json.loads((self.folder / "manifest.json").read_text(encoding="utf-8"))

    def start(self) -> TestbedServer:
        self._thread = threading.Thread(
            target=self._server.serve_forever,
            kwargs={"poll_interval": 0.05},
            name=f"testbed-{self.port}",
            daemon=True,
        )
        self._thread.start()
        return self

    def serve_forever(self) -> None:
        """Serve in the calling thread until interrupted."""
        self._server.serve_forever(poll_interval=0.5)

    def stop(self) -> None:
        if self._thread is not None:
            self._server.shutdown()
            self._thread.join(10)
            self._thread = None
        self._server.wait_idle(5.0)
        self._server.server_close()
        with contextlib.suppress(BufferError):
            self.index.close()

    def __enter__(self) -> TestbedServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
