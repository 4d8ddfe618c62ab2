"""The analyse stage on the fixture database (real BBC and Lenta.ru texts): domain
categories with evidence, cluster themes and categories, overrides that survive
re-analysis, re-crawling and re-clustering."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import delete, select
from sqlalchemy.orm import Session

from core.exceptions import ConfigError, ParameterError
from core.settings import Settings
from store import analytics as A
from store import make_engine, session_scope
from store.models import Cluster, Clustering, ClusterMember, Document, DomainCategory, Page
from store.overrides import clear_override, list_overrides, set_override
from tests.stored_world import CLUSTERINGS, DOMAINS, NAMED, OVERRIDES, Facts
from webometrics.stages import analyse


def test_stage_categorises_domains_and_names_clusters(filled: Facts) -> None:
    engine = make_engine(filled.url)
    try:
        stats = analyse.run(engine, Settings(), progress=False)
        assert stats.domains == len(DOMAINS)
        # the clusterings whose clusters have no theme yet
        unnamed = [groups for key, groups in CLUSTERINGS.items() if key not in NAMED]
        assert stats.clusterings == len(unnamed) == 2
        assert stats.clusters == sum(map(len, unnamed)) == 4
        assert stats.domains_overridden == 1
        with Session(engine) as s:
            rows = {r.domain: r for r in s.scalars(select(DomainCategory))}
        # every fixture domain gets the category a human gives it (listed domains,
        # patterns and the texts), with its evidence
        for dom, (_lang, cat, _src) in DOMAINS.items():
            assert rows[dom].category == cat, (dom, rows[dom].evidence)
            assert rows[dom].evidence["scores"][cat] > 0
            assert 0 < rows[dom].score <= 1
        assert rows["mit.edu"].evidence["patterns"] == ["*.edu"]
        assert rows["vk.com"].evidence["known"] == ["vk.com"]
        # the analyst's override is untouched
        assert rows["lenta.ru"].override_category == OVERRIDES["lenta.ru"]
        clusters = {c.cluster_id: c for c in A.clusters(engine)}
        science = clusters[filled.cluster_ids["spbu.ru:science"]]
        assert science.category == "scientific_communities"
        assert science.theme and len(science.theme.split(", ")) == 10
        assert set(science.top_domains.split(", ")) == {"arxiv.org", "elibrary.ru", "mit.edu"}
        # the lenta.ru override (media) outvotes vk.com's assigned category only with the
        # theme's keywords; either way the cluster is named and categorised
        social = clusters[filled.cluster_ids["spbu.ru:social"]]
        assert social.category in {"media", "social_networks"}
        with Session(engine) as s:
            cl = s.get(Cluster, filled.cluster_ids["ox.ac.uk:web"])
            assert cl is not None and cl.top_shingles and cl.titles
            assert cl.category_evidence["members"] == {"media": 1, "search_engines": 1}
        # a second run has nothing left to name; redo names everything again
        again = analyse.run(engine, Settings(), analyse.AnalyseScope(domains=False), progress=False)
        assert again.clusterings == 0
        again = analyse.run(
            engine, Settings(), analyse.AnalyseScope(redo=True, domains=False), progress=False
        )
        assert again.clusters == sum(map(len, CLUSTERINGS.values()))
        with pytest.raises(ParameterError, match="no clustering with id 999"):
            analyse.run(engine, Settings(), analyse.AnalyseScope((999,)), progress=False)
    finally:
        engine.dispose()


@pytest.mark.slow
def test_override_survives_recrawl_and_recluster(filled: Facts) -> None:
    engine = make_engine(filled.url)
    try:
        analyse.run(engine, Settings(), progress=False)
        row = set_override(engine, "https://www.vk.com/some/page", "blogs", note="a forum")
        assert (row.domain, row.override_category) == ("vk.com", "social_networks")
        with pytest.raises(ParameterError, match="unknown category 'sport'"):
            set_override(engine, "vk.com", "sport")
        with pytest.raises(ParameterError, match="not a registered domain"):
            set_override(engine, "not a domain", "media")
        set_override(engine, "google.com", "other", note="analyst's call")
        # the override moves the cluster vote at once
        web = next(
            c for c in A.clusters(engine) if c.cluster_id == filled.cluster_ids["ox.ac.uk:web"]
        )
        with Session(engine) as s:
            cl = s.get(Cluster, web.cluster_id)
            assert cl is not None
            assert cl.category_evidence["members"] == {"media": 1, "other_organisations": 1}
        # re-crawl: the domain's pages go and come back; re-cluster: clusterings rebuilt
        with session_scope(engine) as s:
            s.execute(delete(Page).where(Page.registered_domain == "google.com"))
            s.execute(delete(Clustering))
        analyse.run(engine, Settings(), progress=False)
        overrides = {o.domain: o for o in list_overrides(engine)}
        assert overrides["google.com"].override_category == "other_organisations"
        assert overrides["google.com"].override_note == "analyst's call"
        assert overrides["vk.com"].override_category == "social_networks"
        shares = A.category_shares(engine, run_id=filled.run_ids[1], direction="outgoing")
        nsu = {r.category for r in shares if r.university == "Novosibirsk State University"}
        assert "other_organisations" in nsu and "search_engines" not in nsu
        assert clear_override(engine, "google.com") is True
        assert clear_override(engine, "google.com") is False
        assert "google.com" not in {o.domain for o in list_overrides(engine)}
    finally:
        engine.dispose()


def test_page_unit_clustering_and_bad_taxonomy(filled_sqlite: Facts, tmp_path) -> None:
    engine = make_engine(filled_sqlite.url)
    try:
        with session_scope(engine) as s:
            pages = s.scalars(
                select(Page).where(Page.registered_domain.in_(["bbc.co.uk", "lenta.ru"]))
            ).all()
            c = Clustering(unit="page", filter={"direction": "outgoing"})
            s.add(c)
            s.flush()
            for label, dom in enumerate(["bbc.co.uk", "lenta.ru"]):
                members = [p for p in pages if p.registered_domain == dom]
                cl = Cluster(clustering_id=c.id, level=-1, label=label, size=len(members))
                s.add(cl)
                s.flush()
                for p in members:
                    d = Document(unit="page", key=p.url, page_id=p.id, domain=dom)
                    s.add(d)
                    s.flush()
                    s.add(ClusterMember(cluster_id=cl.id, document_id=d.id))
            cid = c.id
        stats = analyse.run(
            engine, Settings(), analyse.AnalyseScope((cid,), domains=False), progress=False
        )
        assert stats.clusters == 2
        rows = [r for r in A.clusters(engine, clustering_id=cid)]
        by_dom = {r.top_domains: r for r in rows}
        assert by_dom["bbc.co.uk"].category == "media"
        assert by_dom["lenta.ru"].theme and any(
            ch in by_dom["lenta.ru"].theme for ch in "абвгдежзиклмнопрстуфхцчшщыэюя"
        )
        bad = tmp_path / "taxonomy.toml"
        bad.write_text('default = "x"\n[[category]]\nkey = "Bad Key"\n', encoding="utf-8")
        settings = Settings().replace(analyse={"taxonomy": str(bad)})
        with pytest.raises(ConfigError, match=r"taxonomy.toml:3: \[\[category\]\] #1: key"):
            analyse.run(engine, settings, progress=False)
    finally:
        engine.dispose()


def test_stage_stores_what_the_dashboard_reads(filled_sqlite: Facts) -> None:
    """The taxonomy's labels and, per run and direction, the co-link overlaps, shared
    domains and GEXF graph: exactly what :mod:`analyse.networks` computes from the
    environment rows, so that readers never run the analysis themselves."""
    import io

    import networkx as nx

    from analyse import networks
    from analyse.categories import load_taxonomy
    from store import networks as stored
    from store import queries

    engine = make_engine(filled_sqlite.url)
    try:
        stats = analyse.run(engine, Settings(), analyse.AnalyseScope(domains=False), progress=False)
        taxonomy = load_taxonomy()
        assert stored.category_labels(engine) == taxonomy.labels("en", with_unknown=True)
        assert stored.category_labels(engine, "ru") == taxonomy.labels("ru", with_unknown=True)
        # one fixed colour per category, unknown grey, in the taxonomy's order
        colors = stored.category_colors(engine)
        assert list(colors) == [*taxonomy.keys(), "unknown"]
        assert colors["unknown"] == "#b0b0b0" and len(set(colors.values())) == len(colors)
        runs = A.run_ids(engine)
        assert runs and stats.network_runs == 2 * len(runs)
        assert stored.network_runs(engine) == [(r, d) for r in runs for d in ("citing", "outgoing")]
        names = [u.name for u in queries.list_universities(engine)]
        n_shared = n_overlapping = 0
        for run_id in runs:
            for direction, weight in (("outgoing", "links"), ("citing", "pages")):
                env = A.environment(engine, run_id=run_id, direction=direction)
                edges = [(r.university, r.domain, getattr(r, weight)) for r in env]
                want = networks.colink_overlap(edges, universities=names)
                got = stored.colink_overlaps(engine, run_id, direction)
                assert [vars(o) for o in got] == [vars(o) for o in want]
                n_overlapping += sum(o.shared > 0 for o in got)
                for k in (2, 3):
                    want_shared = networks.shared_domains(edges, min_universities=k)
                    got_shared = stored.shared_domains(
                        engine, run_id, direction, min_universities=k
                    )
                    assert [vars(r) for r in got_shared] == [vars(r) for r in want_shared]
                    n_shared += len(got_shared)
                graph = nx.read_gexf(io.BytesIO(stored.network_file(engine, run_id, direction)))
                assert graph.number_of_edges() == len(env)
        assert n_shared > 0 and n_overlapping > 0  # the comparison is not of empty lists
        with pytest.raises(ParameterError, match="direction"):
            stored.colink_overlaps(engine, runs[0], "sideways")
        with pytest.raises(ParameterError, match="2 or more"):
            stored.shared_domains(engine, runs[0], "outgoing", min_universities=1)
        assert stored.network_file(engine, 999, "outgoing") is None
    finally:
        engine.dispose()


def _clusters_and_members(engine) -> tuple[list[Cluster], dict[int, list[tuple[int, str]]]]:
    """Every stored cluster row, and each cluster's members ``(document id, domain)`` in
    document order."""
    with Session(engine) as s:
        rows = list(s.scalars(select(Cluster).order_by(Cluster.id)))
        s.expunge_all()
        members: dict[int, list[tuple[int, str]]] = {}
        for cid, doc, dom in s.execute(
            select(ClusterMember.cluster_id, Document.id, Document.domain)
            .join(Document, Document.id == ClusterMember.document_id)
            .order_by(ClusterMember.cluster_id, Document.id)
        ):
            members.setdefault(cid, []).append((doc, dom))
    return rows, members


def _partition(rows: list[Cluster], members: dict[int, list[tuple[int, str]]]) -> frozenset:
    return frozenset(tuple(d for d, _ in members[r.id]) for r in rows)


def test_levels_get_themes_and_categories_like_the_final_clusters(pipeline_db) -> None:
    """On what the pipeline stores (the activity clustering's finer, clusters and coarser
    Leiden levels, the paper's r-steps): every level's clusters get a theme and the
    category their members' domains and theme vote, as the final clusters do, and the
    final clusters are as many as the clusterings have."""
    from analyse.categories import categorize_cluster, load_taxonomy
    from store.overrides import stored_assignment

    engine = pipeline_db.engine
    try:
        rows, members = _clusters_and_members(engine)
        with Session(engine) as s:
            clusterings = {c.id: c for c in s.scalars(select(Clustering))}
            votes = {dc.domain: stored_assignment(dc) for dc in s.scalars(select(DomainCategory))}
    finally:
        engine.dispose()
    final = [r for r in rows if r.level == -1]
    levels = [r for r in rows if r.level >= 0]
    stats = pipeline_db.stats["analyse"]
    assert stats["clusters"] == len(final) == sum(c.n_clusters for c in clusterings.values())
    assert stats["level_clusters"] == len(levels) > len(final)
    # every level row is named: theme terms and shingles, domains, a category
    assert all(r.theme_terms and r.top_shingles and r.top_domains for r in levels)
    assert all(r.category and r.category_voters is not None for r in levels)
    roles = {
        lvl.get("role")
        for c in clusterings.values()
        if c.algorithm == "activity"
        for lvl in c.levels
    }
    assert roles == {"finer", "clusters", "coarser"}
    assert {clusterings[r.clustering_id].algorithm for r in levels} == {"activity", "lsh-link"}
    # the category is the vote of the members' domains and the theme, final or level
    taxonomy = load_taxonomy()
    for r in rows:
        member_votes = [v for _d, dom in members[r.id] if (v := votes.get(dom)) is not None]
        a = categorize_cluster(
            member_votes, taxonomy=taxonomy, theme_terms=[*r.theme_terms, *r.top_shingles]
        )
        assert (a.category, a.score) == (r.category, r.category_score), r.id
    # a level that partitions the documents as the final clusters do (the activity
    # clustering's "clusters" level) shows them as they are; a finer one has its own
    copied = finer_named = 0
    for cid, c in clusterings.items():
        by_level: dict[int, list[Cluster]] = {}
        for r in rows:
            if r.clustering_id == cid:
                by_level.setdefault(r.level, []).append(r)
        assert len(by_level.pop(-1)) == c.n_clusters
        assert {k: len(v) for k, v in by_level.items()} == {
            lvl["level"]: lvl["n_clusters"] for lvl in c.levels
        }
        named = {tuple(d for d, _ in members[r.id]): r for r in final if r.clustering_id == cid}
        for level, at_level in by_level.items():
            if _partition(at_level, members) == frozenset(named):
                for r in at_level:
                    same = named[tuple(d for d, _ in members[r.id])]
                    assert (r.theme_terms, r.category) == (same.theme_terms, same.category)
                    copied += 1
            elif c.levels[level].get("role") == "finer":
                assert {tuple(r.theme_terms) for r in at_level} != {
                    tuple(r.theme_terms) for r in named.values()
                }
                finer_named += 1
    assert copied and finer_named


def test_levels_named_again_on_redo_and_when_unnamed(pipeline_db_copy) -> None:
    """The default run names the clusterings whose final clusters have no theme (their
    levels with them), redo names every one again alike, and ``[analyse] levels`` keeps
    to the Leiden levels or to the final clusters."""
    engine = pipeline_db_copy.engine
    no_domains = analyse.AnalyseScope(domains=False)
    try:
        before, _members = _clusters_and_members(engine)
        named = {r.id: (r.theme_terms, r.top_shingles, r.category) for r in before}
        assert analyse.run(engine, Settings(), no_domains).clusterings == 0
        # one clustering whose clusters lost their themes (final and levels) is named again
        cid = next(r.clustering_id for r in before if r.level >= 0)
        with session_scope(engine) as s:
            for cl in s.scalars(select(Cluster).where(Cluster.clustering_id == cid)):
                cl.theme_terms, cl.top_shingles, cl.category = [], [], None
        again = analyse.run(engine, Settings(), no_domains)
        assert again.clusterings == 1
        assert again.level_clusters == sum(r.level >= 0 for r in before if r.clustering_id == cid)
        after, _members = _clusters_and_members(engine)
        assert {r.id: (r.theme_terms, r.top_shingles, r.category) for r in after} == named
        redo = analyse.AnalyseScope(redo=True, domains=False)
        everything = analyse.run(engine, Settings(), redo)
        assert everything.clusters == sum(r.level == -1 for r in before)
        assert everything.level_clusters == sum(r.level >= 0 for r in before)
        with Session(engine) as s:
            leiden = {c.id for c in s.scalars(select(Clustering)) if c.algorithm == "activity"}
        only = analyse.run(engine, Settings().replace(analyse={"levels": "leiden"}), redo)
        assert only.level_clusters == sum(r.level >= 0 for r in before if r.clustering_id in leiden)
        assert only.level_clusters < everything.level_clusters
        none = analyse.run(engine, Settings().replace(analyse={"levels": "none"}), redo)
        assert (none.clusters, none.level_clusters) == (everything.clusters, 0)
        with pytest.raises(ParameterError, match=r"analyse\.levels = 'some'"):
            Settings().replace(analyse={"levels": "some"})
    finally:
        engine.dispose()


def test_an_override_revotes_every_named_cluster_that_holds_the_domain(
    pipeline_db_copy,
) -> None:
    """On what the pipeline stores: an analyst's override of a domain moves the category
    of every named cluster that holds it at once, the level rows as the final ones (their
    category is again the vote of the members' domains, the override one-hot, and the
    theme), and no other cluster."""
    from analyse.categories import categorize_cluster, load_taxonomy
    from store.overrides import stored_assignment

    engine = pipeline_db_copy.engine
    try:
        before, members = _clusters_and_members(engine)
        # a domain of a level row whose clusters vote for something else than "media"
        domain = next(
            dom
            for r in before
            if r.level >= 0 and r.category not in (None, "media")
            for _d, dom in members[r.id]
        )
        set_override(engine, domain, "media", note="test")
        after, _members = _clusters_and_members(engine)
        with Session(engine) as s:
            votes = {dc.domain: stored_assignment(dc) for dc in s.scalars(select(DomainCategory))}
    finally:
        engine.dispose()
    taxonomy = load_taxonomy()
    holding = {r.id for r in after if any(dom == domain for _d, dom in members[r.id])}
    assert any(r.level >= 0 for r in after if r.id in holding)
    old = {r.id: r.category_evidence for r in before}
    for r in after:
        if r.id not in holding:
            assert r.category_evidence == old[r.id], r.id
            continue
        member_votes = [v for _d, dom in members[r.id] if (v := votes.get(dom)) is not None]
        a = categorize_cluster(
            member_votes, taxonomy=taxonomy, theme_terms=[*r.theme_terms, *r.top_shingles]
        )
        assert (a.category, a.score) == (r.category, r.category_score), (r.id, r.level)


def test_a_taxonomy_without_an_overridden_category_is_refused_before_any_write(
    pipeline_db_copy, tmp_path
) -> None:
    """An edited taxonomy that drops a category an analyst's override still gives: the
    analyse stage, and a pipeline run before its crawl, stop with what is wrong and what
    to do (exit 2 from the command line), and change nothing; once the override is moved,
    the stage runs."""
    from analyse.taxonomy import load_taxonomy
    from webometrics.stages.pipeline import PipelineOptions, run_pipeline

    engine = make_engine(pipeline_db_copy.url)
    try:
        with session_scope(engine) as s:
            domain = s.scalars(
                select(DomainCategory.domain).where(DomainCategory.category == "media")
            ).first()
        assert domain is not None
        set_override(engine, domain, "search_engines", note="before the taxonomy changed")
        shipped = load_taxonomy(None).source
        parts = Path(shipped).read_text(encoding="utf-8").split("[[category]]")
        edited = tmp_path / "taxonomy.toml"
        edited.write_text(
            "[[category]]".join(p for p in parts if 'key = "search_engines"' not in p),
            encoding="utf-8",
        )
        settings = Settings().replace(analyse={"taxonomy": str(edited)})

        def snapshot() -> tuple:
            with session_scope(engine) as s:
                return (
                    sorted(
                        (c.id, c.category, tuple(c.theme_terms)) for c in s.scalars(select(Cluster))
                    ),
                    sorted(
                        (d.domain, d.category, d.override_category)
                        for d in s.scalars(select(DomainCategory))
                    ),
                )

        before = snapshot()
        expected = rf"has not: 'search_engines' \({domain}\)\. .*category set DOMAIN KEY"
        with pytest.raises(ConfigError, match=expected):
            analyse.run(engine, settings, analyse.AnalyseScope(redo=True), progress=False)
        with pytest.raises(ConfigError, match=expected):
            run_pipeline(engine, settings, PipelineOptions(stages=("crawl", "analyse")))
        assert snapshot() == before
        set_override(engine, domain, "media", taxonomy=str(edited))
        stats = analyse.run(engine, settings, analyse.AnalyseScope(redo=True), progress=False)
        assert stats.clusters > 0
    finally:
        engine.dispose()
