"""Migration 0016 on what the pipeline stores: a database keyed the old way (eTLD+1
without the PSL's private section) upgraded to sites as web entities gets exactly the
keys and environment rows a crawl under the new default stores."""

from __future__ import annotations

from typing import Any

from sqlalchemy import delete, select, update

from core.domains import registered_domain
from core.entities import SiteRules
from store import make_engine, schema
from store.entities import environment_rows, rule_history
from store.models import Citation, CitingNode, Document, Environment, Link, Page
from store.session import session_scope
from tests.pipeline_world import PipelineWorld


def _keys(engine: Any) -> dict[str, Any]:
    with session_scope(engine) as s:
        return {
            "page": dict(s.execute(select(Page.url, Page.registered_domain)).all()),
            "link": dict(s.execute(select(Link.id, Link.target_domain)).all()),
            "citation": dict(s.execute(select(Citation.id, Citation.citing_domain)).all()),
            "environment": {
                (e.run_id, e.university_id, e.direction, e.domain): (e.link_count, e.page_count)
                for e in s.scalars(select(Environment))
            },
        }


def test_the_crawl_stores_sites_and_0016_rekeys_old_rows(pipeline_db_copy: PipelineWorld) -> None:
    engine = make_engine(pipeline_db_copy.url)
    try:
        new = _keys(engine)
        rules = SiteRules.default()
        # the crawl of the test web stored the site of every URL under the new default
        assert all(key == rules.key(url) for url, key in new["page"].items())
        platform = {url: k for url, k in new["page"].items() if k != registered_domain(url)}
        assert platform, "the test web's crawl reached no platform-hosted site"
        # the same database as the old default keyed it, at revision 0015
        schema.downgrade(engine, "0015")
        with session_scope(engine) as s:
            for model, id_col, src, col in (
                (Page, Page.id, Page.url, "registered_domain"),
                (Link, Link.id, Link.target_url, "target_domain"),
                (Citation, Citation.id, Citation.citing_url, "citing_domain"),
            ):
                rows = [
                    {"id": i, col: registered_domain(u)}
                    for i, u in s.execute(select(id_col, src)).all()
                ]
                s.execute(update(model), rows)
            assert not s.scalar(select(CitingNode.id).limit(1))
            runs = list(s.scalars(select(Environment.run_id).distinct()))
            s.execute(delete(Environment))
            for run in runs:  # the environment the crawl's end computed from old keys
                rows = environment_rows(s, run)
                s.execute(Environment.__table__.insert(), rows)  # type: ignore[attr-defined]
            old_documents = set(s.scalars(select(Document.key).where(Document.unit == "domain")))
        old = _keys(engine)
        assert old["page"] != new["page"] and old["environment"] != new["environment"]
        schema.upgrade(engine)
        assert _keys(engine) == new
        [applied] = [e for e in rule_history(engine) if e.action == "apply"]
        assert applied.counts["rows"]["page"] == sum(
            old["page"][u] != k for u, k in new["page"].items()
        )
        with session_scope(engine) as s:
            documents = set(s.scalars(select(Document.key).where(Document.unit == "domain")))
        moved_from = {old["page"][u] for u in platform}
        assert documents == old_documents - moved_from - set(platform.values())
    finally:
        engine.dispose()
