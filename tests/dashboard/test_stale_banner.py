"""The stale-figures banner in Streamlit's AppTest, on a database of its own: none while
the figures are fresh; after a crawl stores a link the page keeps showing the figures of
the last refresh under a banner that says what changed; *Refresh figures* computes them
again and the new link is counted."""

from __future__ import annotations

import gc
import shutil
from pathlib import Path

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from dashboard import cache
from dashboard.widgets import STALE_ICON
from store import make_engine
from tests import apptest
from tests.stored_world import Facts, store_link


def _overview(url: str, monkeypatch: pytest.MonkeyPatch) -> AppTest:
    return apptest.open_page(url, monkeypatch, "views/overview.py")


def _banners(at: AppTest) -> list[str]:
    return [w.value for w in at.warning if w.icon == STALE_ICON]


def _external_domains(at: AppTest, university: str) -> int:
    """The Overview's Table 2 cell (its first table, by university)."""
    return int(at.table[0].value.loc[university, "external domains on site"])


@pytest.mark.slow
def test_stale_banner_then_refresh(
    fresh_dashboard_db: Facts, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = fresh_dashboard_db.url
    at = _overview(url, monkeypatch)
    assert _banners(at) == []
    at.selectbox(key="overview-run").set_value(fresh_dashboard_db.run_ids[1]).run()
    name = "Saint Petersburg State University"
    before = _external_domains(at, name)

    engine = make_engine(url)  # a crawl goes on: a page of spbu.ru links a new domain
    try:
        spbu = fresh_dashboard_db.university_ids["spbu.ru"]
        store_link(engine, fresh_dashboard_db.run_ids[1], "new-domain.org", spbu)
    finally:
        engine.dispose()

    st.cache_data.clear()  # what CHECK_SECONDS later does: the data version read anew
    at = _overview(url, monkeypatch)
    at.selectbox(key="overview-run").set_value(fresh_dashboard_db.run_ids[1]).run()
    (banner,) = _banners(at)
    assert banner.startswith("1 link stored after the figures were computed at ")
    assert "`webometrics refresh`" in banner
    assert _external_domains(at, name) == before  # the last refresh's figures

    at.button(key="refresh-figures").click().run()
    assert not at.exception, at.exception
    assert _banners(at) == []
    assert _external_domains(at, name) == before + 1


@pytest.mark.slow
def test_refresh_on_a_read_only_database_says_so(
    fresh_dashboard_db: Facts, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Stale figures in a database the dashboard cannot write: the button says why it
    cannot compute them, the page stays, nothing is lost."""
    from tests.webometrics.test_read_only import read_only_folder

    engine = make_engine(fresh_dashboard_db.url)
    try:
        store_link(engine, fresh_dashboard_db.run_ids[1], "new-domain.org")
    finally:
        engine.dispose()
    folder = tmp_path / "ro"
    folder.mkdir()
    shutil.copy(fresh_dashboard_db.url.removeprefix("sqlite:///"), folder / "dashboard.db")
    with read_only_folder(folder) as ro:
        st.cache_data.clear()
        st.cache_resource.clear()
        url = f"sqlite:///{ro / 'dashboard.db'}"
        at = _overview(url, monkeypatch)
        assert len(_banners(at)) == 1
        at.button(key="refresh-figures").click().run()
        assert not at.exception, at.exception
        assert any("read-only" in e.value for e in at.error), [e.value for e in at.error]
        assert len(_banners(at)) == 1  # still stale, still shown
        cache.read_engine(url).dispose()  # its file let go before the folder goes
        st.cache_resource.clear()
        gc.collect()
