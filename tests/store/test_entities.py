"""Analysts' web-entity rules in the store (store.entities): history, validation, and
`apply` re-keying a stored world on SQLite and PostgreSQL."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

import pytest
from sqlalchemy import func, select

from core.entities import SiteRules
from core.exceptions import ParameterError
from store import make_engine
from store.entities import (
    add_merge,
    add_split,
    apply_rules,
    list_rules,
    preview_rules,
    remove_rule,
    rule_history,
    site_rules,
)
from store.models import Citation, Document, Environment, Link, Page, SiteRule
from store.session import session_scope
from tests.stored_world import ENV, Facts


def _environment(engine: Any) -> dict[tuple[int, int, str, str], tuple[int, int]]:
    with session_scope(engine) as s:
        return {
            (e.run_id, e.university_id, e.direction, e.domain): (e.link_count, e.page_count)
            for e in s.scalars(select(Environment))
        }


def test_rules_and_their_history(migrated_url: str) -> None:
    engine = make_engine(migrated_url)
    try:
        add_split(engine, "https://www.vk.com/spbu/", note="SPbU's page", analyst="Ann")
        add_merge(engine, ["msu.ru", "msu.su"], analyst="Bob")
        assert [(r.kind, r.key, r.members) for r in list_rules(engine)] == [
            ("split", "vk.com/spbu", ()),
            ("merge", "msu.ru", ("msu.su",)),
        ]
        with pytest.raises(ParameterError, match="split rule already"):
            add_split(engine, "vk.com/spbu")
        with pytest.raises(ParameterError, match=r"already in the merge named 'msu\.ru'"):
            add_merge(engine, ["msu.su", "lomonosov.ru"])
        with pytest.raises(ParameterError, match="no split or merge rule"):
            remove_rule(engine, "nothing.ru")
        with pytest.raises(ParameterError, match="at most 100"):
            add_split(engine, "vk.com/nsu", analyst="x" * 101)
        removed = remove_rule(engine, "msu.ru", note="two universities", analyst="Cy")
        assert removed.members == ("msu.su",)
        add_merge(engine, ["msu.ru", "msu.su"], analyst="Dee")  # may come back
        rules = site_rules(engine)
        assert rules.key("https://vk.com/spbu/x") == "vk.com/spbu"
        assert rules.key("http://www.msu.su/") == "msu.ru"
        # what a crawl's job file carries to its processes gives the same rules back
        spec = json.loads(json.dumps(rules.analyst_spec()))
        assert SiteRules.default().with_analyst(**spec) == rules
        events = rule_history(engine)
        assert [(e.action, e.kind, e.key, e.analyst, e.note) for e in events] == [
            ("add", "merge", "msu.ru", "Dee", None),
            ("remove", "merge", "msu.ru", "Cy", "two universities"),
            ("add", "merge", "msu.ru", "Bob", None),
            ("add", "split", "vk.com/spbu", "Ann", "SPbU's page"),
        ]
        assert [e.action for e in rule_history(engine, "https://vk.com/spbu")] == ["add"]
        assert events[0].at >= events[-1].at
        with session_scope(engine) as s:  # refused writes stored nothing
            assert s.scalar(select(func.count()).select_from(SiteRule)) == 2
    finally:
        engine.dispose()


def test_apply_rekeys_a_stored_world(filled: Facts) -> None:
    """A split and a merge on the stored world, on SQLite and PostgreSQL: the rows move,
    the environment rows follow with the same totals, the documents of the sites that
    changed are gone for rebuilding, and a second apply changes nothing."""
    engine = make_engine(filled.url)
    try:
        before = _environment(engine)
        with session_scope(engine) as s:
            split_pages = s.scalar(
                select(func.count()).where(Page.url.like("https://vk.com/spbu.ru/%"))
            )
            merged_pages = s.scalar(
                select(func.count()).where(Page.registered_domain == "elibrary.ru")
            )
            split_links = s.scalar(
                select(func.count()).where(Link.target_url.like("https://vk.com/spbu.ru/%"))
            )
            merged_links = s.scalar(select(func.count()).where(Link.target_domain == "elibrary.ru"))
            merged_citations = s.scalar(
                select(func.count()).where(Citation.citing_domain == "elibrary.ru")
            )
            documents = set(s.scalars(select(Document.key).where(Document.unit == "domain")))
        assert split_pages and merged_pages and merged_citations
        add_split(engine, "vk.com/spbu.ru", note="SPbU's own pages")
        add_merge(engine, ["arxiv.org", "elibrary.ru"], note="one library, for the test")
        preview = apply_rules(engine, dry_run=True)
        assert _environment(engine) == before  # a dry run writes nothing
        plan = apply_rules(engine, analyst="Ann")
        assert (
            plan.rows
            == preview.rows
            == {
                "page": split_pages + merged_pages,
                "link": split_links + merged_links,
                "citation": merged_citations,
                "citing_node": 0,
            }
        )
        assert plan.keys_after == plan.keys_before  # one site more, one less
        assert plan.affected == {"vk.com", "vk.com/spbu.ru", "arxiv.org", "elibrary.ru"}
        after = _environment(engine)
        spbu, nsu = filled.university_ids["spbu.ru"], filled.university_ids["nsu.ru"]
        r1, r2 = filled.run_ids[1], filled.run_ids[2]
        out = "outgoing"
        vk_spbu = ENV[1]["spbu.ru"][out]["vk.com"]
        assert after[(r1, spbu, out, "vk.com/spbu.ru")][0] == vk_spbu
        assert (r1, spbu, out, "vk.com") not in after
        assert after[(r2, spbu, out, "vk.com/spbu.ru")][0] == ENV[2]["spbu.ru"][out]["vk.com"]
        assert after[(r1, nsu, out, "vk.com")][0] == before[(r1, nsu, out, "vk.com")][0]
        with session_scope(engine) as s:  # pages: the site's pages fetched in the run
            vk_pages = s.scalar(
                select(func.count()).where(
                    Page.registered_domain == "vk.com", Page.last_run_id == r1
                )
            )
        assert after[(r1, nsu, out, "vk.com")][1] == vk_pages
        both = ENV[1]["spbu.ru"][out]["arxiv.org"] + ENV[1]["spbu.ru"][out]["elibrary.ru"]
        assert after[(r1, spbu, out, "arxiv.org")][0] == both
        assert not any(k[3] == "elibrary.ru" for k in after)
        assert (
            after[(r1, nsu, "citing", "arxiv.org")][1] == ENV[1]["nsu.ru"]["citing"]["elibrary.ru"]
        )
        # the other sites' rows are untouched; links and citing pages keep their totals
        untouched = {k: v for k, v in before.items() if k[3] not in plan.affected}
        assert {k: after[k] for k in untouched} == untouched

        def totals(env: dict[Any, tuple[int, int]]) -> Counter[tuple[int, int, str]]:
            c: Counter[tuple[int, int, str]] = Counter()
            for (run, uni, direction, _), (links, pages) in env.items():
                c[(run, uni, direction)] += links if direction == out else pages
            return c

        assert totals(after) == totals(before)
        with session_scope(engine) as s:
            left = set(s.scalars(select(Document.key).where(Document.unit == "domain")))
            assert (
                s.scalar(select(func.count()).where(Page.registered_domain == "vk.com/spbu.ru"))
                == split_pages
            )
        assert left == documents - plan.affected
        assert plan.documents_deleted == len(documents & plan.affected)
        assert plan.rerun == ("extract", "dedup", "cluster", "analyse")
        again = apply_rules(engine)
        assert again.changed_rows == 0 and again.rerun == ()
        assert _environment(engine) == after
        applied = [e for e in rule_history(engine) if e.action == "apply"]
        assert len(applied) == 1 and applied[0].analyst == "Ann"
        assert applied[0].counts["rows"] == plan.rows
        # a preview of one more rule moves what apply would, and stores nothing
        more = preview_rules(engine, splits=["vk.com/nsu.ru"])
        assert more.rows["link"] == ENV[1]["nsu.ru"][out]["vk.com"]
        assert len(list_rules(engine)) == 2
    finally:
        engine.dispose()
