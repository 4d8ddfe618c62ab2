"""The URL safety rules, the resolver check, and a real refusal by the running crawler."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from crawler.errors import UnsafeAddressError
from crawler.middlewares import SafeResolver
from crawler.safety import unsafe_reason

from .conftest import Answer, fast_settings, migrated_engine, write_universities

UNSAFE = [
    ("ftp://ftp.example.org/file", "scheme"),
    ("file:///etc/passwd", "scheme"),
    ("javascript:alert(1)", "scheme"),
    ("http://169.254.169.254/latest/meta-data/", "link-local"),
    ("http://10.0.0.1/admin", "private"),
    ("http://192.168.1.1/", "private"),
    ("http://172.16.5.4:8080/", "private"),
    ("http://100.64.1.1/", "shared"),
    ("http://127.0.0.1:8080/admin/", "loopback"),
    ("http://[::1]/", "loopback"),
    ("http://[fe80::1]/", "link-local"),
    ("http://[::ffff:10.0.0.1]/", "private"),
    ("http://2130706433/", "loopback"),  # 127.0.0.1 as one number
    ("http://0x7f.1/", "loopback"),
    ("http://127.1/", "loopback"),
    ("http://017700000001/", "loopback"),  # octal
    ("http://0.0.0.0/", "unspecified"),
    ("http://localhost/server-status", "internal name"),
    ("http://printer.localhost/", "internal name"),
    ("http://metadata.google.internal/computeMetadata/v1/", "internal name"),
    ("http://nas.local/", "internal name"),
    ("http://router.home.arpa/", "internal name"),
    ("http://www/research/", "internal name"),  # single label: resolved by search domains
]


@pytest.mark.parametrize(("url", "why"), UNSAFE)
def test_unsafe_urls_are_refused_with_a_reason(url: str, why: str) -> None:
    reason = unsafe_reason(url)
    assert reason is not None and why in reason


@pytest.mark.parametrize(
    "url",
    [
        "http://www.spbu.ru/",
        "https://www.cs.ox.ac.uk/people/",
        "http://xn--80aswg.xn--p1ai/",  # IDN in punycode
        "https://example.com:8443/a?b=c",
        "http://1.2.3.4.example.org/",  # digits in a name are not an IP literal
        "http://132.236.125.30/",  # a public address
    ],
)
def test_public_urls_pass(url: str) -> None:
    assert unsafe_reason(url) is None


def test_the_test_web_switch_lifts_address_rules_but_not_the_scheme_rule() -> None:
    assert unsafe_reason("http://127.0.0.1:8899/", allow_private=True) is None
    assert unsafe_reason("http://localhost/", allow_private=True) is None
    assert unsafe_reason("ftp://127.0.0.1/", allow_private=True) is not None


def test_resolver_refuses_names_that_resolve_to_internal_addresses() -> None:
    # a real lookup: /etc/hosts maps localhost to the loopback address
    address = socket.gethostbyname("localhost")
    with pytest.raises(UnsafeAddressError, match="loopback"):
        SafeResolver._check(address, "intranet.example.org")
    assert SafeResolver._check("93.184.216.34", "example.org") == "93.184.216.34"


def test_a_crawl_never_connects_to_private_addresses(tmp_path: Path, local_web) -> None:
    """Without a proxy and without the test-web switch, a home page on 127.0.0.1 and a
    redirect there are refused and recorded; with the switch the same page is fetched."""
    from sqlalchemy import select

    from store.models import Page
    from store.session import session_scope
    from webometrics.stages import crawl

    with local_web({}) as web:
        home = f"http://127.0.0.1:{web.port}/"
        web.pages[home] = Answer(body=b"<html><body><a href='/next'>next</a></body></html>")
        web.pages[home + "next"] = Answer(301, headers={"Location": "http://10.0.0.1/admin"})
        unis = write_universities(
            tmp_path / "u.toml", {"name": "Local U", "domains": ["local-u.edu"], "home": [home]}
        )
        engine = migrated_engine(f"sqlite:///{tmp_path / 'a.db'}")
        scope = crawl.CrawlScope(universities_file=str(unis), direction="outgoing")
        crawl.run(engine, fast_settings(), scope)
        assert web.fetched() == []
        with session_scope(engine) as s:
            page = s.scalars(select(Page).where(Page.url == home)).one()
            assert page.http_status is None
            assert page.fetch_error.startswith("unsafe: host 127.0.0.1 is an IP address")

        engine2 = migrated_engine(f"sqlite:///{tmp_path / 'b.db'}")
        crawl.run(engine2, fast_settings(allow_private_hosts=True), scope)
        assert home in web.fetched()
        with session_scope(engine2) as s:
            assert s.scalars(select(Page.http_status).where(Page.url == home)).one() == 200
