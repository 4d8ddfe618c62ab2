"""Revision 0014 on links stored before it: a link to a host off the public web
(``intranet``, a private address) is no longer external, its host's outgoing environment
row goes, the public ones stay, and the dashboard's aggregates are marked stale; on
SQLite and PostgreSQL."""

from __future__ import annotations

import datetime as dt
from typing import Any

from sqlalchemy import MetaData, func, insert, select

from store import make_engine, schema
from store.models import AggregateState, Environment, Link
from store.session import session_scope


def test_upgrade_takes_links_off_the_public_web_out_of_the_environment(db_url: str) -> None:
    engine = make_engine(db_url)
    try:
        schema.upgrade(engine, "0013")
        # rows written as the 0013 schema holds them (reflected tables: the models of
        # today have columns that later migrations add)
        meta = MetaData()
        meta.reflect(engine)
        t = meta.tables

        def add(table: str, **values: Any) -> int:
            for c in t[table].columns:  # a required column the test has no use for: 0
                if c.name not in values and not (c.nullable or c.primary_key or c.server_default):
                    values[c.name] = 0
            with engine.begin() as conn:
                return int(conn.execute(insert(t[table]).values(**values)).inserted_primary_key[0])

        now = dt.datetime(2026, 1, 1)
        uni = add("university", name="Cornell University", country="USA", home_urls=[],
                  created_at=now)  # fmt: skip
        run = add("crawl_run", kind="outgoing", status="finished", started_at=now, settings={},
                  stats={})  # fmt: skip
        page = add("page", url="http://www.cs.cornell.edu/", host="www.cs.cornell.edu",
                   registered_domain="cornell.edu", role="university", university_id=uni,
                   extraction_status="pending")  # fmt: skip
        for url, host in (
            ("http://intranet/", "intranet"),
            ("http://10.0.0.1/admin", "10.0.0.1"),
            ("http://www.acm.org/", "www.acm.org"),
            ("http://132.236.125.30/", "132.236.125.30"),
        ):
            domain = "acm.org" if host == "www.acm.org" else host
            add("link", run_id=run, source_page_id=page, target_url=url, target_host=host,
                target_domain=domain, nofollow=False, external=True)  # fmt: skip
            add("environment", run_id=run, university_id=uni, domain=domain,
                direction="outgoing", link_count=1, page_count=0)  # fmt: skip
        add("agg_state", run_id=run, fingerprint="x", built_at=now)
        schema.upgrade(engine)
        with session_scope(engine) as s:
            flags = dict(s.execute(select(Link.target_host, Link.external)).all())
            env = set(s.scalars(select(Environment.domain)))
            states = s.scalar(select(func.count()).select_from(AggregateState))
        assert flags == {
            "intranet": False,
            "10.0.0.1": False,
            "www.acm.org": True,
            "132.236.125.30": True,  # a public address: a site of the web
        }
        assert env == {"acm.org", "132.236.125.30"}
        assert states == 0  # stale: the next analyse rebuilds the aggregates
        schema.downgrade(engine, "0013")
        with session_scope(engine) as s:
            assert all(s.scalars(select(Link.external)))
    finally:
        engine.dispose()
