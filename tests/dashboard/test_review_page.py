"""The Review page in Streamlit's AppTest on the stored world: the queue as
:mod:`store.review` orders it, a category set from the queue, coding sheets uploaded
(a bad one refused with its line numbers, nothing stored), the coders' kappa and an
adjudication, each written through :mod:`store` and kept in the override history."""

from __future__ import annotations

import csv
import io

import pandas as pd
import pytest
from sqlalchemy import func, select
from streamlit.testing.v1 import AppTest

from store import make_engine
from store.models import CategoryCoding, DomainCategory, DomainCategoryHistory
from store.review import SHEET_COLUMNS, agreement, review_queue, write_sheet
from tests import apptest
from tests.stored_world import Facts

PAGE = "views/review.py"


def rerun(at: AppTest) -> AppTest:
    at.run()
    assert not at.exception, at.exception
    return at


@pytest.fixture
def review(fresh_dashboard_db: Facts, monkeypatch) -> AppTest:
    return apptest.open_page(fresh_dashboard_db.url, monkeypatch, PAGE)


def _queue_frame(at: AppTest) -> pd.DataFrame:
    return next(df.value for df in at.dataframe if "priority" in df.value.columns)


def _sheet(url: str, codes: dict[str, str]) -> bytes:
    """A coding sheet of the queue, filled with ``codes``."""
    engine = make_engine(url)
    rows = review_queue(engine, limit=None)
    engine.dispose()
    out = io.StringIO()
    write_sheet(rows, out)
    filled = [
        {**r, "category": codes.get(r["domain"], "")}
        for r in csv.DictReader(io.StringIO(out.getvalue()))
    ]
    text = io.StringIO()
    writer = csv.DictWriter(text, SHEET_COLUMNS, lineterminator="\n")
    writer.writeheader()
    writer.writerows(filled)
    return text.getvalue().encode("utf-8")


def _upload(at: AppTest, name: str, content: bytes, coder: str) -> AppTest:
    at.file_uploader(key="review-upload").upload(name, content, "text/csv")
    at.text_input(key="review-coder").input(coder)
    at.button(key="review-import-button").click()
    return rerun(at)


def _count(url: str, model: type) -> int:
    engine = make_engine(url)
    with engine.connect() as conn:
        n = conn.execute(select(func.count()).select_from(model)).scalar_one()
    engine.dispose()
    return int(n)


@pytest.mark.slow
def test_review_page_queue_set_sheets_agreement_adjudication(
    review: AppTest, fresh_dashboard_db: Facts
) -> None:
    at, url = review, fresh_dashboard_db.url
    assert at.title[0].value == "Review"
    engine = make_engine(url)
    expected = review_queue(engine, limit=50)
    shown = _queue_frame(at)
    assert list(shown["domain"]) == [r.domain for r in expected]
    assert list(shown["priority"]) == pytest.approx([r.priority for r in expected])

    # a queue domain's category set from its row: out of the queue, in the history
    top = expected[0].domain
    at.selectbox(key="review-domain").set_value(top)
    at.selectbox(key="review-category").set_value("media")
    at.text_input(key="review-note").input("seen its pages")
    at.text_input(key="review-by").input("Ann")
    at.button(key="review-set-button").click()
    rerun(at)
    assert at.success[0].value.startswith(f"{top} is now Media")
    assert top not in set(_queue_frame(at)["domain"])
    h = DomainCategoryHistory
    with engine.connect() as conn:
        assert conn.execute(
            select(h.action, h.category, h.note, h.analyst).where(h.domain == top)
        ).one() == ("set", "media", "seen its pages", "Ann")

    # a bad sheet: refused with its line numbers, nothing stored
    bad = b"domain,category\nvk.com,media\ngoogle.com,sport\nnosuch-domain.org,media\n"
    _upload(at, "bad.csv", bad, "Bo")
    error = at.error[0].value
    assert "line 3: unknown category 'sport'" in error
    assert "line 4: unknown domain nosuch-domain.org" in error
    assert _count(url, CategoryCoding) == 0

    # two coders' sheets: their kappa and disagreements
    a_codes = {"vk.com": "social", "arxiv.org": "science", "msu.ru": "universities"}
    b_codes = {**a_codes, "vk.com": "media", "gazprom.ru": "other"}
    _upload(at, "ann.csv", _sheet(url, a_codes), "Ann")
    assert "stored 3 codings by Ann" in at.success[0].value
    _upload(at, "bo.csv", _sheet(url, b_codes), "Bo")
    assert "stored 4 codings by Bo" in at.success[0].value
    result = agreement(engine, "Ann", "Bo")
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["domains both coded"] == "3"
    assert metrics["Cohen's kappa"] == f"{result.kappa:.3f}"
    disagreements = next(df.value for df in at.dataframe if "note A" in df.value.columns)
    assert list(disagreements["domain"]) == ["vk.com"]

    # adjudicated: the override, with the coders named in the history
    at.selectbox(key="review-adj-domain").set_value("vk.com")
    at.selectbox(key="review-adj-category").set_value("social_networks")
    at.text_input(key="review-adj-by").input("Eve")
    at.button(key="review-adj-button").click()
    rerun(at)
    assert at.success[0].value.startswith("vk.com is now Social networks")
    with engine.connect() as conn:
        assert (
            conn.execute(
                select(DomainCategory.override_category).where(DomainCategory.domain == "vk.com")
            ).scalar_one()
            == "social_networks"
        )
        note = conn.execute(
            select(h.note).where(h.domain == "vk.com").order_by(h.id.desc())
        ).scalar_one()
    assert note == "adjudication by Eve of coders' Ann: social_networks, Bo: media"
    # the agreements accepted: arxiv.org and msu.ru become overrides
    at.text_input(key="review-accept-by").input("Dee")
    at.button(key="review-accept-button").click()
    rerun(at)
    assert at.success[0].value == "2 agreements stored as overrides"
    assert not any(b.key == "review-accept-button" for b in at.button)  # nothing left to accept
    engine.dispose()
