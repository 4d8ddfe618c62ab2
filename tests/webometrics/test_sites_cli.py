"""``webometrics sites``: which site a URL is, rules with history, apply; bad input exits 2
with a message and stores nothing."""

from __future__ import annotations

import json

import pytest
from sqlalchemy import func, select

from store import make_engine
from store.models import Page, SiteRule, SiteRuleHistory
from store.session import session_scope
from tests.stored_world import Facts


def test_sites_of_names_the_site_and_its_rule(migrated_url: str, webometrics) -> None:
    r = webometrics(
        "sites", "of", "http://user.livejournal.com/1.html",
        "https://sites.google.com/site/Lab/", "--format", "json", db=migrated_url,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    got = {
        row["url"]: (row["site"], row["rule"], row["registered_domain"])
        for row in json.loads(r.stdout)
    }
    assert got == {
        "http://user.livejournal.com/1.html": (
            "user.livejournal.com", "platform subdomain livejournal.com", "livejournal.com"
        ),
        "https://sites.google.com/site/Lab/": (
            "sites.google.com/site/lab", "platform path sites.google.com", "google.com"
        ),
    }  # fmt: skip


@pytest.mark.slow
def test_bad_rules_exit_2_and_store_nothing(migrated_url: str, webometrics) -> None:
    cases = [
        (("rule", "add", "--split", "not a host"), "without query"),
        (("rule", "add", "--split", "http://intranet/x"), "not a host name"),
        (("rule", "add", "--merge", "msu.ru"), "at least two"),
        (("rule", "remove", "nothing.ru"), "no split or merge rule named 'nothing.ru'"),
        (("of", "http:///x"), "has no host"),
    ]
    for args, message in cases:
        r = webometrics("sites", *args, db=migrated_url)
        assert r.returncode == 2, (args, r.stdout, r.stderr)
        assert message in r.stderr, (args, r.stderr)
    r = webometrics("sites", "rule", "add", db=migrated_url)
    assert r.returncode == 2 and "--split" in r.stderr
    engine = make_engine(migrated_url)
    try:
        with session_scope(engine) as s:
            assert s.scalar(select(func.count()).select_from(SiteRule)) == 0
            assert s.scalar(select(func.count()).select_from(SiteRuleHistory)) == 0
    finally:
        engine.dispose()


@pytest.mark.slow
def test_rule_then_apply_on_the_stored_world(filled: Facts, webometrics) -> None:
    """On SQLite and PostgreSQL: add a split, preview, dry run, apply, apply again."""
    url = filled.url
    r = webometrics("sites", "rule", "add", "--split", "vk.com/spbu.ru", "--preview", db=url)
    assert r.returncode == 0, r.stderr
    assert "would change key" in r.stdout and "vk.com -> vk.com/spbu.ru" in r.stdout
    r = webometrics(
        "sites", "rule", "add", "--split", "vk.com/spbu.ru", "--note", "SPbU", "--analyst", "Ann",
        db=url,
    )  # fmt: skip
    assert r.returncode == 0 and "split rule added: vk.com/spbu.ru" in r.stdout, r.stderr
    r = webometrics("sites", "rule", "add", "--split", "https://www.vk.com/spbu.ru/", db=url)
    assert r.returncode == 2 and "split rule already" in r.stderr
    r = webometrics("sites", "rules", "--format", "json", db=url)
    assert [(x["kind"], x["key"], x["analyst"]) for x in json.loads(r.stdout)] == [
        ("split", "vk.com/spbu.ru", "Ann")
    ]
    engine = make_engine(url)
    try:
        with session_scope(engine) as s:
            moving = s.scalar(select(func.count()).where(Page.url.like("https://vk.com/spbu.ru/%")))
        dry = webometrics("sites", "apply", "--dry-run", "--format", "json", db=url)
        assert dry.returncode == 0, dry.stderr
        plan = json.loads(dry.stdout)
        assert plan["dry_run"] and plan["rows"]["page"] == moving > 0
        with session_scope(engine) as s:  # a dry run re-keys nothing
            assert not s.scalar(
                select(func.count()).where(Page.registered_domain == "vk.com/spbu.ru")
            )
        done = webometrics("sites", "apply", "--analyst", "Bob", db=url)
        assert done.returncode == 0, done.stderr
        assert f"rows that re-keyed: {plan['rows']['page'] + plan['rows']['link']}" in done.stdout
        assert "now run: webometrics extract" in done.stdout
        with session_scope(engine) as s:
            assert (
                s.scalar(select(func.count()).where(Page.registered_domain == "vk.com/spbu.ru"))
                == moving
            )
        again = webometrics("sites", "apply", db=url)
        assert again.returncode == 0 and "nothing to do" in again.stdout
        hist = webometrics("sites", "history", db=url)
        lines = hist.stdout.splitlines()
        assert "apply" in lines[0] and "by Bob" in lines[0]
        assert "add    split vk.com/spbu.ru by Ann  (SPbU)" in lines[1]
    finally:
        engine.dispose()
