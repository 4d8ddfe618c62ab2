"""Fixtures of the test-web tests: one shared build, one server, a proxy client."""

from __future__ import annotations

import ssl
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass

import pytest

from testbed.manifest import Manifest
from testbed.server import TestbedServer

# testbed_dir and testbed_server (the session's test web): tests/conftest.py


@pytest.fixture(scope="session")
def manifest(testbed_manifest: Manifest) -> Manifest:
    return testbed_manifest


@pytest.fixture(scope="session")
def server(testbed_server: TestbedServer) -> TestbedServer:
    return testbed_server


@dataclass
class Answer:
    status: int
    headers: dict[str, str]
    body: bytes
    url: str


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


def _make_fetch(proxy_url: str) -> Callable[..., Answer]:
    """A client that sends every http and https URL through the test web's proxy."""
    context = ssl._create_unverified_context()  # the test web's certificate is self-signed
    handlers = [
        urllib.request.ProxyHandler({"http": proxy_url, "https": proxy_url}),
        urllib.request.HTTPSHandler(context=context),
    ]
    follow = urllib.request.build_opener(*handlers)
    raw = urllib.request.build_opener(*handlers, _NoRedirect())

    def fetch(url: str, *, redirects: bool = False, method: str = "GET") -> Answer:
        opener = follow if redirects else raw
        request = urllib.request.Request(url, method=method)
        try:
            with opener.open(request, timeout=60) as r:
                return Answer(r.status, {k.lower(): v for k, v in r.headers.items()},
                              r.read(), r.url)  # fmt: skip
        except urllib.error.HTTPError as e:
            return Answer(e.code, {k.lower(): v for k, v in e.headers.items()}, e.read(), url)

    return fetch


@pytest.fixture(scope="session")
def fetch(server: TestbedServer) -> Callable[..., Answer]:
    return _make_fetch(server.proxy_url)


@pytest.fixture(scope="session")
def make_fetch() -> Callable[[str], Callable[..., Answer]]:
    """Make a proxy client for another server: ``make_fetch(proxy_url)``."""
    return _make_fetch
