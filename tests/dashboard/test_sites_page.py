"""The Sites page in Streamlit's AppTest: which site a URL is, a rule previewed, added,
applied and removed through store.entities, a bad rule refused with its reason."""

from __future__ import annotations

import pandas as pd
import pytest
from sqlalchemy import func, select
from streamlit.testing.v1 import AppTest

from store import make_engine
from store.entities import list_rules, rule_history
from store.models import Page
from store.session import session_scope
from tests import apptest
from tests.stored_world import ENV


def _run(at: AppTest) -> AppTest:
    at.run()
    assert not at.exception, at.exception
    return at


def _frames(at: AppTest) -> list[pd.DataFrame]:
    return [df.value for df in at.dataframe]


@pytest.mark.slow
def test_sites_page_adds_previews_applies_and_removes(fresh_dashboard_db, monkeypatch) -> None:
    facts = fresh_dashboard_db
    at = apptest.open_page(facts.url, monkeypatch, "views/sites.py")
    assert at.title[0].value == "Sites"
    assert any("nothing to apply" in s.value for s in at.success)
    at.text_input(key="sites-probe").input("https://sites.google.com/site/LabX/home")
    _run(at)
    assert any("sites.google.com/site/labx" in m.value for m in at.markdown)

    # a bad prefix: refused with its reason, nothing stored
    at.text_input(key="sites-text").input("not a host")
    at.button(key="sites-add-rule").click()
    _run(at)
    assert any("A split takes one host" in e.value for e in at.error)
    at.text_input(key="sites-text").input("intranet")
    at.button(key="sites-add-rule").click()
    _run(at)
    assert any("not a host name with a public suffix" in e.value for e in at.error)
    engine = make_engine(facts.url)
    try:
        assert list_rules(engine) == []
        # preview: the moves of SPbU's VK pages, nothing stored
        at.text_input(key="sites-text").input("vk.com/spbu.ru")
        at.button(key="sites-preview").click()
        _run(at)
        moves = next(df for df in _frames(at) if "example" in df.columns)
        assert set(moves["new"]) == {"vk.com/spbu.ru"} and set(moves["old"]) == {"vk.com"}
        assert list_rules(engine) == []
        # add it, with a note and a name
        at.text_input(key="sites-note").input("SPbU's pages")
        at.text_input(key="sites-by").input("Ann")
        at.button(key="sites-add-rule").click()
        _run(at)
        assert any("split rule vk.com/spbu.ru added" in s.value for s in at.success)
        [rule] = list_rules(engine)
        assert (rule.kind, rule.key, rule.note, rule.analyst) == (
            "split", "vk.com/spbu.ru", "SPbU's pages", "Ann"
        )  # fmt: skip
        # apply: the stored pages move
        at.text_input(key="sites-apply-by").input("Bob")
        at.button(key="sites-apply").click()
        _run(at)
        assert any("rows re-keyed" in s.value for s in at.success)
        with session_scope(engine) as s:
            moved = s.scalar(select(func.count()).where(Page.registered_domain == "vk.com/spbu.ru"))
        assert moved == ENV[1]["spbu.ru"]["outgoing"]["vk.com"]  # run 2 reuses run 1's pages
        assert any("nothing to apply" in s.value for s in at.success)
        # remove it: kept in the history
        at.selectbox(key="sites-remove-key").set_value("split vk.com/spbu.ru")
        at.button(key="sites-remove-button").click()
        _run(at)
        assert list_rules(engine) == []
        assert [e.action for e in rule_history(engine)] == ["remove", "apply", "add"]
    finally:
        engine.dispose()
