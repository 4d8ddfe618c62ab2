"""Every dashboard page in Streamlit's AppTest on the fixture database: no exception,
the fixture's numbers shown, and the filters change them."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

import dashboard
from tests import apptest
from tests.stored_world import (
    CLUSTERINGS,
    DOMAINS,
    ENV,
    T0,
    add_clustering,
    by_rank,
    effective_category,
    theme_terms,
)

APP = Path(dashboard.__file__).resolve().parent / "app.py"


@pytest.fixture
def page(dashboard_db, monkeypatch):
    """Open a page of the app on the fixture database; returns the AppTest (the database
    is the app's from now on: a test may also open the app itself)."""
    monkeypatch.setenv("WEBOMETRICS_DB_URL", dashboard_db.url)
    monkeypatch.delenv("WEBOMETRICS_CONFIG", raising=False)

    def open_page(path: str) -> AppTest:
        return apptest.open_page(dashboard_db.url, monkeypatch, path)

    return open_page


def frames(at: AppTest) -> list[pd.DataFrame]:
    return [df.value for df in at.dataframe]


def percent(cell: str) -> float:
    """A rendered share (``"45.7 %"``, or ``"45.7 % (2.0)"`` with its low-confidence
    points) as a fraction."""
    return float(cell.split(" %")[0]) / 100


def rerun(at: AppTest) -> AppTest:
    at.run()
    assert not at.exception, at.exception
    return at


def test_app_opens_on_overview_and_names_the_database(page, dashboard_db) -> None:
    at = apptest.app()
    rerun(at)
    assert at.title[0].value == "Overview"
    assert "dashboard.db" in " ".join(c.value for c in at.sidebar.caption)
    at.sidebar.button(key="reload").click()
    rerun(at)
    assert at.title[0].value == "Overview"


def test_app_reports_a_database_it_cannot_open(monkeypatch, tmp_path) -> None:
    missing = tmp_path / "missing.db"
    monkeypatch.setenv("WEBOMETRICS_DB_URL", f"sqlite:///{missing}")
    at = apptest.app()
    rerun(at)
    assert "webometrics db upgrade" in at.error[0].value
    assert not missing.exists()
    # a database whose schema is not at head
    from store import make_engine

    empty = tmp_path / "empty.db"
    make_engine(f"sqlite:///{empty}").connect().close()
    monkeypatch.setenv("WEBOMETRICS_DB_URL", f"sqlite:///{empty}")
    at = apptest.app()
    rerun(at)
    assert "schema is out of date" in at.error[0].value


def test_runs(page, dashboard_db) -> None:
    at = page("views/runs.py")
    crawls, pipes = frames(at)[:2]
    assert sorted(crawls["id"]) == sorted(
        [*dashboard_db.run_ids.values(), dashboard_db.failed_run_id]
    )
    assert crawls.set_index("id").loc[dashboard_db.run_ids[2], "stats.links"] == 40
    assert any("proxy refused" in e.value for e in at.error)
    assert list(pipes["status"]) == ["failed", "finished"]
    assert "crawl:finished → extract:finished" in pipes["stages"].iloc[1]
    # the clusterings table names the university
    clus = frames(at)[-1]
    assert sorted(clus["university"]) == sorted(
        ["Saint Petersburg State University"] * 2 + ["University of Oxford"]
    )
    assert len(at.get("download_button")) == len(at.dataframe)
    # the status filter
    at.multiselect(key="runs-status").set_value(["failed"])
    rerun(at)
    crawls, pipes = frames(at)[:2]
    assert list(crawls["id"]) == [dashboard_db.failed_run_id]
    assert list(pipes["status"]) == ["failed"]
    assert at.metric[0].value == "1"


def test_duplicates(page, dashboard_db) -> None:
    at = page("views/duplicates.py")
    # the run's parameters first (in an expander), each with its meaning
    params = frames(at)[0].set_index("parameter")
    assert params["meaning"].str.len().gt(0).all(), params
    groups = frames(at)[1]
    assert list(groups["size"]) == [3, 2]
    assert list(groups["canonical"]) == ["https://vk.com/spbu.ru/0", "https://mit.edu/spbu.ru/0"]
    assert [m.value for m in at.metric] == ["minhash-lsh", "5", "2", "3"]
    assert len(at.expander) == 3
    members = frames(at)[2]
    # a read-only table shows flags as words, not as checkboxes
    assert list(members["canonical"]) == ["yes", "no", "no"]
    at.selectbox(key="dedup-language").set_value("en")
    rerun(at)
    groups = frames(at)[1]
    assert list(groups["canonical"]) == ["https://mit.edu/spbu.ru/0"]
    assert len(at.expander) == 2


def test_university_clusters(page, dashboard_db) -> None:
    at = page("views/university.py")
    spbu = dashboard_db.university_ids["spbu.ru"]
    # the first university by rank comes first: MIT (3), which has no clustering
    first = by_rank()[0]
    assert at.selectbox(key="uni").value == dashboard_db.university_ids[first]
    assert first == "mit.edu" and not any(u == first for u, _d in CLUSTERINGS)
    assert any("webometrics cluster" in i.value for i in at.info)
    # Oxford (16)
    at.selectbox(key="uni").set_value(dashboard_db.university_ids["ox.ac.uk"])
    rerun(at)
    clusters = frames(at)[0]
    assert list(clusters["size"]) == [
        len(m) for m in CLUSTERINGS[("ox.ac.uk", "outgoing")].values()
    ]
    assert list(clusters["size"]) == [2, 2]
    at.selectbox(key="uni").set_value(spbu)
    rerun(at)
    clusters = frames(at)[0]
    assert list(clusters.columns) == ["label", "size", "category", "theme", "member domains"]
    assert list(clusters["size"]) == [3, 2]
    key = ("spbu.ru", "outgoing")  # not named yet: no theme
    assert list(clusters["theme"]) == [", ".join(theme_terms(key, n)) for n in CLUSTERINGS[key]]
    assert list(clusters["member domains"]) == [
        "arxiv.org, elibrary.ru, mit.edu",
        "lenta.ru, vk.com",
    ]
    # the taxonomy's readable labels, not its keys
    assert list(clusters["category"]) == ["Scientific communities", "Media"]
    assert [m.value for m in at.metric][:2] == ["5", "2"]
    # each cluster expands to its domains and their pages, as links
    assert [e.label.split(" · ")[0] for e in at.expander][:2] == ["cluster 0", "cluster 1"]
    assert at.expander[2].label == "Domains with an override (1)"
    docs, pages = frames(at)[1:3]
    assert list(docs["domain"]) == ["arxiv.org", "elibrary.ru", "mit.edu"]
    assert set(pages["domain"]) == {"arxiv.org", "elibrary.ru", "mit.edu"}
    assert pages["url"].str.startswith("https://").all()
    assert (pages.groupby("domain").size() <= 5).all()
    assert set(pages["role"]) == {"external"}


def test_university_filters(page, dashboard_db) -> None:
    at = page("views/university.py")
    at.selectbox(key="uni").set_value(dashboard_db.university_ids["spbu.ru"])
    rerun(at)
    at.multiselect(key="uni-category").set_value(["media"])
    rerun(at)
    assert list(frames(at)[0]["size"]) == [2]
    at.radio(key="uni-direction").set_value("citing")
    rerun(at)
    clusters = frames(at)[0]
    assert list(clusters["size"]) == [3]
    key = ("spbu.ru", "citing")  # named: its theme shows
    assert list(clusters["theme"]) == [", ".join(theme_terms(key, n)) for n in CLUSTERINGS[key]]
    assert list(clusters["theme"]) == ["ru-web-term, research"]
    pages = frames(at)[2]
    # each member domain lists its pages citing the university first (whatever role they
    # were fetched in), then the other pages of its document
    assert set(pages["role"]) <= {"citing", "external"}
    assert set(pages.loc[pages["cites"] == "yes", "domain"]) == set(pages["domain"])
    assert (pages.groupby("domain")["cites"].first() == "yes").all()
    # a university without a clustering says how to get one
    at.selectbox(key="uni").set_value(dashboard_db.university_ids["nsu.ru"])
    rerun(at)
    assert any("webometrics cluster" in i.value for i in at.info)


def _clustering_ids(at: AppTest, key: str) -> list[int]:
    """The clustering ids a select box offers, in its order (from the labels)."""
    return [
        int(label.split(" · ")[0].removeprefix("clustering "))
        for label in at.selectbox(key=key).options
    ]


def test_university_lists_only_its_own_clusterings(fresh_dashboard_db, monkeypatch) -> None:
    facts = fresh_dashboard_db
    spbu, nsu = facts.university_ids["spbu.ru"], facts.university_ids["nsu.ru"]
    # newer than the fixture's: a global clustering (`webometrics cluster --university
    # all`, both directions) and spbu.ru's outgoing environment clustered again
    everything = add_clustering(
        facts.url,
        {"university_id": None, "university": None, "direction": "both"},
        {
            "all-science": ["arxiv.org", "mit.edu", "elibrary.ru"],
            "all-web": ["vk.com", "bbc.co.uk"],
        },
        T0 + dt.timedelta(hours=2),
    )
    again = add_clustering(
        facts.url,
        {
            "university_id": spbu,
            "university": "Saint Petersburg State University",
            "direction": "outgoing",
        },
        {"again": ["arxiv.org", "mit.edu"]},
        T0 + dt.timedelta(hours=3),
    )
    monkeypatch.setenv("WEBOMETRICS_DB_URL", facts.url)
    monkeypatch.delenv("WEBOMETRICS_CONFIG", raising=False)
    at = apptest.app()
    rerun(at)
    rerun(at.switch_page("views/university.py"))
    # Oxford: its one clustering, not spbu.ru's nor the global one
    at.selectbox(key="uni").set_value(facts.university_ids["ox.ac.uk"])
    rerun(at)
    assert _clustering_ids(at, "clustering") == [facts.clustering_ids[("ox.ac.uk", "outgoing")]]
    assert not at.info
    assert not any(e.label.startswith("Global") for e in at.expander)
    # spbu.ru: its own, newest first, per direction
    at.selectbox(key="uni").set_value(spbu)
    rerun(at)
    assert _clustering_ids(at, "clustering") == [
        again,
        facts.clustering_ids[("spbu.ru", "outgoing")],
    ]
    assert list(frames(at)[0]["theme"]) == ["again-term, research"]
    at.radio(key="uni-direction").set_value("citing")
    rerun(at)
    assert _clustering_ids(at, "clustering") == [facts.clustering_ids[("spbu.ru", "citing")]]
    assert not any(e.label.startswith("Global") for e in at.expander)
    # nsu.ru has none of its own: said so, and the global ones offered, labelled global
    at.selectbox(key="uni").set_value(nsu)
    rerun(at)
    assert "only global ones" in at.info[0].value
    assert [e.label for e in at.expander][:1] == ["Global clusterings, all universities (1)"]
    assert _clustering_ids(at, "global-clustering") == [everything]
    assert not at.dataframe  # nothing shown until one is chosen
    at.selectbox(key="global-clustering").set_value(everything)
    rerun(at)
    assert list(frames(at)[0]["theme"]) == ["all-science-term, research", "all-web-term, research"]
    assert any("every university" in c.value for c in at.caption)


def test_university_levels(page, dashboard_db) -> None:
    at = page("views/university.py")
    at.selectbox(key="uni").set_value(dashboard_db.university_ids["spbu.ru"])
    rerun(at)
    levels = next(df for df in frames(at) if "s_curve" in df.columns)
    assert list(levels["r"]) == [8, 6, 4, 2]
    assert list(levels["n_clusters"]) == [5, 4, 2, 2]
    assert list(levels["level"]) == [0, 1, 2, 3]
    # one level picker per clustering (its own options and labels)
    cid = dashboard_db.clustering_ids[("spbu.ru", "outgoing")]
    at.selectbox(key=f"level-{cid}").set_value(0)
    rerun(at)
    rows = frames(at)[-1]
    assert len(rows) == 5 and set(rows["size"]) == {1}


def _table(at: AppTest, index: int) -> pd.DataFrame:
    return at.table[index].value


def test_overview_tables(page, dashboard_db) -> None:
    at = page("views/overview.py")
    run1, run2 = dashboard_db.run_ids[1], dashboard_db.run_ids[2]
    # the newest run with data comes first
    assert at.selectbox(key="overview-run").value == run2
    cols = ["external links on site", "external domains on site", "citing pages", "citing domains"]
    t2 = _table(at, 0)
    assert list(t2["domains"]) == by_rank()
    got = {r["domains"]: tuple(int(r[c]) for c in cols) for _, r in t2.iterrows()}
    assert got == dashboard_db.table2(2)
    at.selectbox(key="overview-run").set_value(run1)
    rerun(at)
    t2 = _table(at, 0)
    got = {r["domains"]: tuple(int(r[c]) for c in cols) for _, r in t2.iterrows()}
    assert got == dashboard_db.table2(1)
    t3 = _table(at, 1)
    order = ["outgoing · ru", "outgoing · en", "citing · ru", "citing · en"]
    assert list(t3.columns) == order
    by_uni = dict(zip(t2.index, t2["domains"], strict=True))
    got3 = {by_uni[u]: tuple(int(v) for v in row[order]) for u, row in t3.iterrows()}
    assert got3 == dashboard_db.table3(1)
    # the language filter: English only
    at.multiselect(key="overview-languages").set_value(["en"])
    rerun(at)
    t3 = _table(at, 1)
    assert list(t3.columns) == [
        "outgoing · en",
        "outgoing · other",
        "citing · en",
        "citing · other",
    ]
    assert int(t3.loc["Saint Petersburg State University", "outgoing · other"]) == 3
    # the stored world holds a Common Crawl web graph: its impact figures are shown at once
    assert at.toggle(key="overview-impact").value is True
    assert any("kind" in f.columns for f in frames(at))
    at.toggle(key="overview-impact").set_value(False)
    rerun(at)
    # the headline share by domain and by cluster: spbu.ru's outgoing domains, 2 of 5
    # scientific communities and 1 university; by cluster its science cluster's 3 of 5
    (shares,) = frames(at)
    spbu = shares[shares["direction"] == "outgoing"].set_index("university")
    spbu = spbu.loc["Saint Petersburg State University"]
    assert (percent(spbu["by domain"]), percent(spbu["by cluster"])) == (0.6, 0.6)
    assert spbu["difference (points)"] == "+0.0"
    nsu = shares.set_index(["direction", "university"]).loc[
        ("outgoing", "Novosibirsk State University")
    ]
    assert nsu["by cluster"] == nsu["difference (points)"] == ""  # no clustering: blank
    assert "None" not in shares.to_string()
    # Web Impact Factors, and no earlier run to compare run 1 with, on demand
    at.toggle(key="overview-more").set_value(True)
    rerun(at)
    wif = frames(at)[1]
    spbu = wif.set_index("university").loc["Saint Petersburg State University"]
    assert spbu["wif_pages"] == pytest.approx(6 / 4)  # 6 citing pages / 4 site pages
    assert any("No earlier run" in i.value for i in at.info)
    assert len(at.get("download_button")) == 4


def test_overview_changes(page, dashboard_db) -> None:
    at = page("views/overview.py")
    at.toggle(key="overview-impact").set_value(False)  # on at first: a web graph is stored
    at.toggle(key="overview-more").set_value(True)
    rerun(at)
    # after the shares by definition and the Web Impact Factors
    summary = frames(at)[2].set_index(["university", "direction"])
    spbu_out = summary.loc[("Saint Petersburg State University", "outgoing")]
    # run 1 -> run 2: the domains kept, appeared (gazprom.ru) and disappeared
    old, new = (set(ENV[n]["spbu.ru"]["outgoing"]) for n in (1, 2))
    assert (spbu_out["kept"], spbu_out["appeared"], spbu_out["disappeared"]) == (
        len(old & new),
        len(new - old),
        len(old - new),
    )
    changes = frames(at)[3]
    appeared = changes[changes["change"] == "appeared"]
    # the domains new in run 2 where both runs have data (gazprom.ru: outgoing; cnn.com: citing)
    new_domains = [
        d
        for udom, dirs in ENV[2].items()
        for direction, doms in dirs.items()
        if ENV[1].get(udom, {}).get(direction)
        for d in set(doms) - set(ENV[1][udom][direction])
    ]
    assert sorted(appeared["domain"]) == sorted(new_domains) == ["cnn.com", "gazprom.ru"]


def test_countries(page, dashboard_db) -> None:
    at = page("views/countries.py")
    at.selectbox(key="countries-run").set_value(dashboard_db.run_ids[1])
    rerun(at)
    per_uni, per_country = frames(at)[:2]
    spbu = per_uni.set_index("university").loc["Saint Petersburg State University"]
    # lenta.ru counts as media: the analyst's override; columns by the taxonomy's labels,
    # shares as percentages like the charts' axes
    assert spbu["Scientific communities"] == "40.0 %"
    assert spbu["Media"] == "20.0 %"
    assert spbu["News portals"] == "0.0 %"
    russia = per_country.set_index("country").loc["Russia"]
    assert percent(russia["Universities"]) == pytest.approx(2 / 7, abs=5e-4)
    uk = per_country.set_index("country").loc["United Kingdom"]
    assert uk["Media"] == "25.0 %"
    assert all("None" not in f.to_string() for f in frames(at))
    # the two definitions side by side: spbu.ru's science cluster holds 3 of its 5
    # domains (scientific communities: +20 points), its social one media (by a tie)
    compared = frames(at)[-1]
    sci = compared[
        (compared["university"] == "Saint Petersburg State University")
        & (compared["category"] == "Scientific communities")
    ].iloc[0]
    assert (sci["by domain"], sci["by cluster"], sci["difference (points)"]) == (
        "40.0 %",
        "60.0 %",
        "+20.0",
    )
    # the paper's way: the figures' shares from the clusters
    at.radio(key="countries-definition").set_value("cluster")
    rerun(at)
    spbu = frames(at)[0].set_index("university").loc["Saint Petersburg State University"]
    assert (spbu["Scientific communities"], spbu["Media"]) == ("60.0 %", "40.0 %")
    assert "Novosibirsk State University" not in set(frames(at)[0]["university"])
    at.radio(key="countries-definition").set_value("domain")
    rerun(at)
    # the direction filter: citing
    at.radio(key="countries-direction").set_value("citing")
    rerun(at)
    per_uni = frames(at)[0].set_index("university")
    ox = ENV[1]["ox.ac.uk"]["citing"]
    share = sum(effective_category(d) == "universities" for d in ox) / len(ox)
    assert percent(per_uni.loc["University of Oxford", "Universities"]) == pytest.approx(
        share, abs=5e-4
    )
    # the category and country filters
    at.multiselect(key="countries-country").set_value(["Russia"])
    at.multiselect(key="countries-category").set_value(["universities"])
    rerun(at)
    per_uni, per_country = frames(at)[:2]
    assert list(per_country["country"]) == ["Russia"]
    assert list(per_uni.columns) == ["country", "university", "Universities"]


def _network(direction: str) -> tuple[int, int, int]:
    """Universities, external domains and edges of run 1 in ``direction``."""
    env = {u: dirs[direction] for u, dirs in ENV[1].items() if dirs.get(direction)}
    return len(env), len(set().union(*env.values())), sum(map(len, env.values()))


def test_network(page, dashboard_db) -> None:
    at = page("views/network.py")
    at.selectbox(key="network-run").set_value(dashboard_db.run_ids[1])
    rerun(at)
    unis, doms, edges = _network("outgoing")
    # by default only the domains two or more universities share are drawn
    assert [m.value for m in at.metric] == [str(unis), str(doms), str(edges), "4"]
    ov = frames(at)[0].set_index(["a", "b"])
    pair = ov.loc[("Saint Petersburg State University", "University of Oxford")]
    assert (pair["shared"], pair["jaccard"]) == (2, pytest.approx(0.2857))
    shared = frames(at)[1]
    assert sorted(shared["domain"]) == ["arxiv.org", "google.com", "mit.edu", "vk.com"]
    at.slider(key="network-min-unis").set_value(1)
    rerun(at)
    assert at.metric[3].value == str(doms)
    at.radio(key="network-direction").set_value("citing")
    rerun(at)
    assert [m.value for m in at.metric][:3] == [str(n) for n in _network("citing")]
    at.radio(key="network-direction").set_value("outgoing")
    # the category filter narrows every section: counts, overlaps and shared domains
    at.multiselect(key="network-category").set_value(["universities"])
    rerun(at)
    unis_only = {d for d, (_l, c, _s) in DOMAINS.items() if c == "universities"}
    ov, shared = frames(at)[:2]
    assert set(shared["domain"]) <= unis_only and "vk.com" not in set(shared["domain"])
    assert int(at.metric[1].value) < doms
    assert ov["shared"].max() <= pair["shared"]
    # a filter that leaves nothing says so
    at.multiselect(key="network-category").set_value([])
    rerun(at)
    assert any("for these filters" in i.value for i in at.info)


def test_network_gexf_opens_in_networkx(dashboard_db) -> None:
    import io

    import networkx as nx

    from dashboard.readers import network as reads

    blob = reads.network_file(dashboard_db.url, dashboard_db.run_ids[1], "outgoing", "gexf")
    g = nx.read_gexf(io.BytesIO(blob))
    unis, doms, edges = _network("outgoing")
    # a university's own domain is its node, never a domain node beside it: spbu.ru's
    # links to mit.edu join the two universities
    owned = {d for dirs in ENV[1].values() for d in dirs.get("outgoing", {}) if d in ENV[1]}
    assert owned == {"mit.edu", "ox.ac.uk"}
    assert g.number_of_nodes() == unis + doms - len(owned) and g.number_of_edges() == edges
    assert not any(f"d:{d}" in g for d in owned)
    mit = "u:Massachusetts Institute of Technology"
    assert g["u:Saint Petersburg State University"][mit]["weight"] == 3
    assert g.nodes["d:lenta.ru"]["category"] == "media"
    assert g["u:Saint Petersburg State University"]["d:vk.com"]["weight"] == 4


def test_category_override_writes_through_store(fresh_dashboard_db, monkeypatch) -> None:
    from sqlalchemy import select

    from store import make_engine
    from store.models import DomainCategory

    facts = fresh_dashboard_db
    monkeypatch.setenv("WEBOMETRICS_DB_URL", facts.url)
    monkeypatch.delenv("WEBOMETRICS_CONFIG", raising=False)
    at = apptest.app()
    rerun(at)
    rerun(at.switch_page("views/university.py"))
    at.selectbox(key="uni").set_value(facts.university_ids["spbu.ru"])
    rerun(at)
    assert at.selectbox(key="override-domain").options == [
        "arxiv.org",
        "elibrary.ru",
        "lenta.ru",
        "mit.edu",
        "vk.com",
    ]
    at.selectbox(key="override-domain").set_value("vk.com")
    at.selectbox(key="override-category").set_value("news_portals")
    at.text_input(key="override-note").input("their news feed")
    at.button(key="override-set").click()
    rerun(at)
    assert (
        "vk.com is now News portals (assigned: Social networks, blogs and forums)"
        in at.success[0].value
    )
    # the cluster's domain table shows it, and the list of overrides has it
    docs = frames(at)[3]  # clusters, science docs, science pages, social docs
    vk = docs.set_index("domain").loc["vk.com"]
    assert (vk["category"], bool(vk["overridden"])) == ("News portals", True)
    listed = next(df for df in frames(at) if "override_note" in df.columns)
    assert sorted(listed["domain"]) == ["lenta.ru", "vk.com"]
    engine = make_engine(facts.url)
    with engine.connect() as conn:
        row = conn.execute(
            select(DomainCategory.override_category, DomainCategory.override_note).where(
                DomainCategory.domain == "vk.com"
            )
        ).one()
    assert tuple(row) == ("news_portals", "their news feed")
    # validation: an unknown domain is refused with the reason, nothing is written
    at.text_input(key="override-typed").input("not a domain")
    at.button(key="override-set").click()
    rerun(at)
    assert "is not a registered domain" in at.error[0].value
    # clearing
    at.text_input(key="override-typed").input("")
    at.selectbox(key="override-domain").set_value("vk.com")
    at.button(key="override-clear").click()
    rerun(at)
    assert at.success[0].value == "override of vk.com cleared"
    with engine.connect() as conn:
        cleared = conn.execute(
            select(DomainCategory.override_category).where(DomainCategory.domain == "vk.com")
        ).scalar_one()
    assert cleared is None
    engine.dispose()


def test_reads_go_through_a_read_only_engine(dashboard_db) -> None:
    from sqlalchemy import text

    from dashboard.cache import read_engine

    engine = read_engine(dashboard_db.url)
    with pytest.raises(Exception, match=r"(?i)read"), engine.begin() as conn:
        conn.execute(text("DELETE FROM university"))
