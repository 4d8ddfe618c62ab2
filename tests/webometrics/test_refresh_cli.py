"""``webometrics refresh`` on the stored world (SQLite): --check says fresh (exit 0), then
stale after a crawl stores a link (exit 1, what changed); refresh computes the figures,
a second one has nothing to do; --force computes again; bad combinations exit 2; and
``report`` computes stale figures before it writes."""

from __future__ import annotations

from pathlib import Path

import pytest

from store import analytics, make_engine
from tests.stored_world import Facts, store_link


def _add_link(facts: Facts, domain: str = "new-domain.org") -> None:
    engine = make_engine(facts.url)
    try:
        store_link(engine, facts.run_ids[1], domain)
    finally:
        engine.dispose()


@pytest.mark.slow
def test_refresh_check_then_compute(fresh_dashboard_db: Facts, webometrics, tmp_path: Path) -> None:
    db = fresh_dashboard_db.url
    fresh = webometrics("refresh", "--check", db=db)
    assert fresh.returncode == 0, fresh.stderr
    assert "figures fresh" in fresh.stdout

    _add_link(fresh_dashboard_db)
    stale = webometrics("refresh", "--check", db=db)
    assert stale.returncode == 1, stale.stderr
    assert "figures stale: 1 link stored after the figures were computed" in stale.stdout

    done = webometrics("refresh", db=db)
    assert done.returncode == 0, done.stderr
    runs = len(fresh_dashboard_db.run_ids)
    assert done.stdout.startswith(f"figures computed: {runs} crawl runs, ")
    assert webometrics("refresh", "--check", db=db).returncode == 0
    again = webometrics("refresh", db=db)
    assert again.returncode == 0 and "nothing changed" in again.stdout
    forced = webometrics("refresh", "--force", db=db)
    assert forced.returncode == 0 and forced.stdout.startswith("figures computed:")

    both = webometrics("refresh", "--check", "--force", db=db)
    assert both.returncode == 2 and "exclude each other" in both.stderr

    _add_link(fresh_dashboard_db, "another-new-domain.org")  # report: computed first
    report = webometrics("report", "--out", str(tmp_path / "report"), db=db)
    assert report.returncode == 0, report.stderr
    assert "figures were stale: computed again before the report" in report.stdout
    engine = make_engine(db)
    try:
        envs = analytics.environment(engine, run_id=fresh_dashboard_db.run_ids[1])
    finally:
        engine.dispose()
    assert "another-new-domain.org" in {e.domain for e in envs}


def test_refresh_of_a_database_that_is_not_there(tmp_path: Path, webometrics) -> None:
    out = webometrics("refresh", db=f"sqlite:///{tmp_path / 'none.db'}")
    assert out.returncode == 3, out.stderr
    assert "webometrics db upgrade" in out.stderr
