"""Revision 0014 on links stored before it: a link to a host off the public web
(``intranet``, a private address) is no longer external, its host's outgoing environment
row goes, the public ones stay, and the dashboard's aggregates are marked stale; on
SQLite and PostgreSQL."""

from __future__ import annotations

from sqlalchemy import func, select

from store import make_engine, schema
from store.models import AggregateState, CrawlRun, Environment, Link, Page, University
from store.session import session_scope


def test_upgrade_takes_links_off_the_public_web_out_of_the_environment(db_url: str) -> None:
    engine = make_engine(db_url)
    try:
        schema.upgrade(engine, "0013")
        with session_scope(engine) as s:
            uni = University(name="Cornell University", country="USA")
            run = CrawlRun(kind="outgoing", status="finished")
            s.add_all([uni, run])
            s.flush()
            page = Page(
                url="http://www.cs.cornell.edu/",
                host="www.cs.cornell.edu",
                registered_domain="cornell.edu",
                role="university",
                university_id=uni.id,
            )
            s.add(page)
            s.flush()
            for url, host in (
                ("http://intranet/", "intranet"),
                ("http://10.0.0.1/admin", "10.0.0.1"),
                ("http://www.acm.org/", "www.acm.org"),
                ("http://132.236.125.30/", "132.236.125.30"),
            ):
                s.add(
                    Link(
                        run_id=run.id,
                        source_page_id=page.id,
                        target_url=url,
                        target_host=host,
                        target_domain="acm.org" if host == "www.acm.org" else host,
                    )
                )
                domain = "acm.org" if host == "www.acm.org" else host
                s.add(
                    Environment(
                        run_id=run.id,
                        university_id=uni.id,
                        domain=domain,
                        direction="outgoing",
                        link_count=1,
                    )
                )
            s.add(AggregateState(run_id=run.id, fingerprint="x"))
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
