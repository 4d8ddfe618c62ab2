"""The analyst views: created by migration 0002, the example queries of
``store/examples.sql`` (shown in the README) run on SQLite and PostgreSQL and agree with
:mod:`store.analytics`; later SQLite batch migrations still work with the views."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from sqlalchemy import inspect, text

from core.settings import Settings
from store import analytics as A
from store import make_engine, schema
from tests.stored_world import CITING_NODES, ENV, Facts
from webometrics.stages import analyse

REPO = Path(__file__).resolve().parents[2]
VIEWS = {
    "v_domain_language",
    "v_domain_category",
    "v_environment",
    "v_university_table2",
    "v_category_share",
    "v_country_category_share",
    "v_cluster",
    "v_cluster_member",
    "v_domain_history",
}


def test_every_example_runs_and_returns_rows(filled: Facts) -> None:
    engine = make_engine(filled.url)
    try:
        assert set(inspect(engine).get_view_names()) >= VIEWS
        analyse.run(engine, Settings(), progress=False)  # clusters get themes and categories
        examples = A.sql_examples()
        assert len(examples) >= 5
        results = {}
        with engine.connect() as conn:
            for ex in examples:
                rows = conn.execute(text(ex.sql)).mappings().all()
                assert rows, f"example {ex.name!r} returned no row"
                results[ex.name] = rows
        # the SQL agrees with the Python read functions
        t2 = {r.university: r for r in A.table2(engine)}
        for row in results["table2"]:
            r = t2[row["university"]]
            assert (
                row["external_links"],
                row["external_domains"],
                row["citing_pages"],
                row["citing_domains"],
            ) == (r.external_links, r.external_domains, r.citing_pages, r.citing_domains)
        pairs = {
            frozenset((o["university_a"], o["university_b"])): o["shared_domains"]
            for o in results["co-outlink-pairs"]
        }
        spbu, ox = "Saint Petersburg State University", "University of Oxford"
        want = set(ENV[2]["spbu.ru"]["outgoing"]) & set(ENV[2]["ox.ac.uk"]["outgoing"])
        assert pairs == {frozenset((spbu, ox)): len(want)}
        assert [r["domain"] for r in results["shared-domains"]] == sorted(want)
        # the Common Crawl graph's citing domains of spbu.ru: rank sums and the domains
        # no other source finds
        (ranked,) = results["rank-weighted-inlinks"]
        assert ranked["university"] == spbu and ranked["nodes"] == len(CITING_NODES)
        assert ranked["harmonic_sum"] == pytest.approx(sum(h for _n, _l, h, _p in CITING_NODES))
        only_cc = {r["domain"] for r in results["only-in-common-crawl"]}
        assert only_cc <= {n for n, *_ in CITING_NODES} and "wikipedia.org" in only_cc
        assert {r["domain"] for r in results["overrides"]} == {"lenta.ru"}
        assert {r["domain"] for r in results["new-domains"]} == {"gazprom.ru", "cnn.com"}
        assert float(
            sum(r["percent"] for r in results["country-shares"] if r["country"] == "Russia")
        ) == (__import__("pytest").approx(100.0, abs=0.2))
    finally:
        engine.dispose()


def _shown_examples(text: str) -> dict[str, str]:
    """``{name: SQL}`` of the blocks starting ``-- name: <name>`` in a Markdown text."""
    shown = {}
    for block in text.split("-- name:")[1:]:
        name = block.split("\n", 1)[0].strip()
        body = [
            ln for ln in block.split("\n")[1:] if ln.strip() and not ln.strip().startswith("--")
        ]
        sql = "\n".join(body).split(";", 1)[0]
        shown[name] = sql.strip()
    return shown


@pytest.mark.parametrize("document", ["README.md", "docs/analysis.md"])
def test_documents_show_the_examples_verbatim(document: str) -> None:
    """Every example the README and the SQL guide show (a block starting ``-- name:
    <name>``) is the one of store/examples.sql; the guide shows at least five, the README
    at least one."""
    shown = _shown_examples((REPO / document).read_text(encoding="utf-8"))
    least = 5 if document.startswith("docs/") else 1
    assert len(shown) >= least, f"{document} shows {len(shown)} SQL examples; show {least}+"
    examples = {ex.name: ex.sql for ex in A.sql_examples()}
    for name, sql in shown.items():
        assert name in examples, f"{document} example {name!r} is not in store/examples.sql"
        assert sql == examples[name].strip(), (
            f"{document} example {name!r} differs from store/examples.sql"
        )


def test_batch_migration_after_the_views_and_downgrade(tmp_path: Path) -> None:
    """A later revision that recreates a table (SQLite batch mode) must not trip over the
    views (alembic issue #1207); downgrading removes the views."""
    scripts = tmp_path / "migrations"
    shutil.copytree(REPO / "migrations", scripts, ignore=shutil.ignore_patterns("__pycache__"))
    url = f"sqlite:///{tmp_path / 'batch.db'}"
    engine = make_engine(url)
    head = schema.head_revision(engine)  # chain after whatever the newest revision is
    (scripts / "versions" / "9999_recreate_page.py").write_text(
        f'''"""recreate page in batch mode

Revision ID: 9999
Revises: {head}
"""
import sqlalchemy as sa
from alembic import op

revision = "9999"
down_revision = "{head}"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("page", recreate="always") as batch:
        batch.add_column(sa.Column("probe", sa.Integer(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("page", recreate="always") as batch:
        batch.drop_column("probe")
''',
        encoding="utf-8",
    )
    from alembic import command

    try:
        cfg = schema.alembic_config(engine)
        cfg.set_main_option("script_location", str(scripts))
        command.upgrade(cfg, "head")
        with engine.connect() as conn:
            assert conn.execute(text("SELECT COUNT(*) FROM v_environment")).scalar() == 0
            cols = {c["name"] for c in inspect(conn).get_columns("page")}
        assert "probe" in cols
        command.downgrade(cfg, "0001")
        assert not set(inspect(engine).get_view_names())
        command.downgrade(cfg, "base")
        assert set(inspect(engine).get_table_names()) <= {"alembic_version"}
    finally:
        engine.dispose()


def test_0008_down_and_up_keeps_every_row(filled: Facts) -> None:
    """0008 adds columns to ``cluster`` and ``category_label``; going down drops them in
    place (a table copy of ``cluster`` would cascade to every ``cluster_member`` row) and
    up again restores the views and the analysis."""
    engine = make_engine(filled.url)
    tables = ("cluster", "cluster_member", "category_label", "citation", "environment")

    def counts() -> dict[str, int]:
        with engine.connect() as conn:
            return {t: conn.execute(text(f"SELECT COUNT(*) FROM {t}")).scalar_one() for t in tables}

    try:
        analyse.run(engine, Settings(), progress=False)
        before = counts()
        assert before["cluster_member"] > 0 and before["category_label"] > 0
        schema.downgrade(engine, "0007")
        assert counts() == before
        assert "v_latest_cluster" not in inspect(engine).get_view_names()
        schema.upgrade(engine)
        assert counts() == before
        assert set(inspect(engine).get_view_names()) >= VIEWS | {"v_latest_cluster"}
    finally:
        engine.dispose()
