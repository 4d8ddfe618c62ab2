"""Activity clustering: weighted MinHash against datasketch, the LSH k-NN graph against
the exact one, ActivityClusterer on real labelled sites (pinned floors), bad input, and
the cluster stage's per-university default on a real SQLite database."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from sqlalchemy import select

from cluster.activity import ActivityClusterer, auto_neighbours, weighted_terms
from cluster.evaluate import score_clustering
from cluster.knn import exact_knn
from cluster.weighted_minhash import WeightedMinHasher, unpack_pairs
from cluster.weighting import CountsBuilder, TfidfWeighting
from core.exceptions import ParameterError, StageError
from core.settings import Settings
from corpora.activity import load_activity_corpus
from store import make_engine, schema
from store.models import (
    Cluster,
    Clustering,
    ClusterMember,
    CrawlRun,
    Document,
    Environment,
    Page,
    University,
)
from store.session import session_scope
from tests.quality_gates import floors
from webometrics.cli import build_parser
from webometrics.commands.cluster import cluster_settings
from webometrics.stages import cluster as stage

REPO = Path(__file__).resolve().parents[2]
DOMAINS = Settings().replace(cluster={"unit": "domain"})


def options(*argv: str, settings: Settings | None = None) -> Settings:
    """The settings ``webometrics cluster ARGV`` runs with."""
    return cluster_settings(settings or Settings(), build_parser().parse_args(["cluster", *argv]))


@pytest.fixture(scope="module")
def websites():
    """The 556 real websites labelled by kind of activity, as texts and term counts."""
    corpus = load_activity_corpus("websites")
    counts = ActivityClusterer.term_counts(corpus.texts, corpus.languages)
    return corpus, counts


@pytest.fixture(scope="module")
def lenta():
    corpus = load_activity_corpus("lenta")
    return corpus, ActivityClusterer.term_counts(corpus.texts, corpus.languages)


# -- weighted MinHash ----------------------------------------------------------------------
def test_weighted_minhash_equals_datasketch_value_for_value(websites):
    _corpus, counts = websites
    X = TfidfWeighting().fit_transform(counts[:60])
    hasher = WeightedMinHasher(dim=X.shape[1], num_perm=32, seed=7)
    ks, ts = hasher.sign_pairs(X)
    threaded = hasher.sign_pairs(X, n_jobs=2)
    assert np.array_equal(ks, threaded[0]) and np.array_equal(ts, threaded[1])
    packed_k, packed_t = unpack_pairs(hasher.sign(X))
    checked = 0
    for row in range(X.shape[0]):
        v = X[row].toarray().ravel()
        if not v.any():
            assert (ks[row] == -1).all()
            continue
        ref = hasher.datasketch(v).hashvalues
        assert np.array_equal(ref[:, 0], ks[row]) and np.array_equal(ref[:, 1], ts[row])
        assert np.array_equal(packed_k[row], ks[row]) and np.array_equal(packed_t[row], ts[row])
        checked += 1
    assert checked >= 55


def test_weighted_minhash_estimates_generalised_jaccard(websites):
    _corpus, counts = websites
    X = TfidfWeighting().fit_transform(counts[:40])
    sig = WeightedMinHasher(dim=X.shape[1], num_perm=512, seed=1).sign(X)
    errors = []
    for a in range(0, 40, 2):
        x, y = X[a].toarray().ravel(), X[a + 1].toarray().ravel()
        if not x.any() or not y.any():
            continue
        exact = np.minimum(x, y).sum() / np.maximum(x, y).sum()
        errors.append(abs(float((sig[a] == sig[a + 1]).mean()) - exact))
    # standard error sqrt(J(1-J)/512) <= 0.022; four of them
    assert max(errors) < 0.09


def test_weighted_minhash_refuses_bad_input():
    import scipy.sparse as sp

    with pytest.raises(ValueError, match="dim must be"):
        WeightedMinHasher(dim=0)
    hasher = WeightedMinHasher(dim=3, num_perm=4)
    with pytest.raises(ValueError, match="4 columns; this hasher signs dim=3"):
        hasher.sign(sp.csr_matrix(np.ones((2, 4))))
    with pytest.raises(ValueError, match="non-negative"):
        hasher.sign(sp.csr_matrix(np.array([[1.0, -1.0, 0.0]])))


# -- the k-NN graph ---------------------------------------------------------------------------
@pytest.mark.slow
def test_nndescent_can_be_asked_for(lenta):
    """``candidates="nndescent"`` forces what ``auto`` runs only above the exact limit."""
    _corpus, counts = lenta
    model = ActivityClusterer(candidates="nndescent").fit(counts)
    assert model.graph_stats_["candidates"] == "nndescent"
    k = model.graph_stats_["n_neighbors"]
    exact_nb, _ = exact_knn(model.matrix_, k)
    found = model.graph_.neighbours
    hits = sum(
        len(set(a[a >= 0].tolist()) & set(b[b >= 0].tolist()))
        for a, b in zip(found, exact_nb, strict=True)
    )
    assert hits / int((exact_nb >= 0).sum()) >= 0.95  # measured 0.99+ on Lenta.ru
    assert ActivityClusterer().fit(counts).graph_stats_["candidates"] == "exact"


def test_lsh_neighbours_recall_most_exact_neighbours(lenta):
    _corpus, counts = lenta
    model = ActivityClusterer(candidates="wminhash").fit(counts)
    assert model.graph_stats_["candidates"] == "wminhash"
    exact_nb, _ = exact_knn(model.matrix_, model.graph_stats_["n_neighbors"])
    found = model.graph_.neighbours
    hits = sum(
        len(set(a[a >= 0].tolist()) & set(b[b >= 0].tolist()))
        for a, b in zip(found, exact_nb, strict=True)
    )
    recall = hits / int((exact_nb >= 0).sum())
    assert recall >= 0.85, recall  # measured 0.9+ on Lenta.ru
    n = model.matrix_.shape[0]
    pairs = model.graph_stats_["candidate_pairs"] + model.graph_stats_["refine_pairs"]
    assert pairs < n * (n - 1) / 2 / 2  # far fewer comparisons than all pairs


def test_auto_compares_every_pair_only_while_that_is_cheap(lenta, monkeypatch):
    """Exact below EXACT_WORK, NN-descent above (bench/results/knn.md chose the limit)."""
    import cluster.knn as knn

    _corpus, counts = lenta
    small = ActivityClusterer().fit(counts)
    assert small.graph_stats_["candidates"] == "exact"
    assert knn.exact_work(small.matrix_) <= knn.EXACT_WORK
    monkeypatch.setattr(knn, "EXACT_WORK", 1000)
    assert ActivityClusterer().fit(counts).graph_stats_["candidates"] == "nndescent"


# -- quality gates on real labelled data ------------------------------------------------------
@pytest.mark.parametrize("name", ["websites", "lenta"])
def test_activity_clustering_quality_floor(name, websites, lenta):
    """The gates ``activity_websites`` and ``activity_lenta`` of tests/quality_gates.toml."""
    floor = floors(f"activity_{name}")["f_class"]
    corpus, counts = {"websites": websites, "lenta": lenta}[name]
    labels = ActivityClusterer().fit(counts).labels_
    scores = score_clustering(corpus.labels, labels)
    assert scores["f_class"] >= floor, scores


def test_raw_texts_and_counts_give_the_same_clusters(websites):
    corpus, counts = websites
    a = ActivityClusterer().fit(corpus.texts[:120], corpus.languages[:120]).labels_
    b = ActivityClusterer().fit(counts[:120]).labels_
    c = ActivityClusterer().fit(counts[:120]).labels_
    assert np.array_equal(a, b) and np.array_equal(b, c)


def test_a_count_matrix_built_in_batches_gives_what_the_mappings_give(websites):
    _corpus, counts = websites
    builder = CountsBuilder()
    for start in range(0, len(counts), 50):
        builder.add(counts[start : start + 50])
    matrix = builder.build()
    a, b = ActivityClusterer().fit(counts), ActivityClusterer().fit(matrix)
    assert [(lv.resolution, lv.role, lv.n_clusters) for lv in a.levels_] == [
        (lv.resolution, lv.role, lv.n_clusters) for lv in b.levels_
    ]
    for la, lb in zip(a.levels_, b.levels_, strict=True):
        assert np.array_equal(la.labels, lb.labels)
    assert a.vocabulary_ == b.vocabulary_ and (a.matrix_ != b.matrix_).nnz == 0
    assert np.array_equal(a.graph_.neighbours, b.graph_.neighbours)
    drop = ("seconds",)
    assert {k: v for k, v in a.graph_stats_.items() if k not in drop} == {
        k: v for k, v in b.graph_stats_.items() if k not in drop
    }
    assert weighted_terms(a.matrix_, a.vocabulary_, a.labels_, top=20) == weighted_terms(
        b.matrix_, b.vocabulary_, b.labels_, top=20
    )


def test_documents_without_a_weighted_term_join_their_exact_duplicates():
    oil = [
        {"oil": 2, "price": 1},
        {"oil": 1, "price": 1},
        {"price": 2, "oil": 1},
        {"oil": 3, "price": 1},
    ]
    rare = [{"x": 1, "y": 1}, {"y": 3, "x": 2}, {"z": 1}, {"z": 4}, {"w": 1}, {"x": 1}, {}]
    counts = oil + rare  # min_df=4: x, y, z and w weigh nothing
    for docs in (counts, CountsBuilder().add(counts[:5]).add(counts[5:]).build()):
        model = ActivityClusterer(min_df=4, max_df=1.0, n_neighbors=2).fit(docs)
        assert model.graph_stats_["n_empty"] == len(rare)
        for labels in (model.labels_, *(level.labels for level in model.levels_)):
            assert labels[4] == labels[5] and labels[6] == labels[7]  # same term sets
            alone = [labels[d] for d in (0, 4, 6, 8, 9, 10)]
            assert len(set(alone)) == len(alone)  # {w}, {x} and {} stay alone


def test_levels_are_nested_finest_first(websites):
    _corpus, counts = websites
    model = ActivityClusterer(resolution=[2.0, 1.0, 0.5], coarser=()).fit(counts)
    assert [lvl.resolution for lvl in model.levels_] == [2.0, 1.0, 0.5]
    for fine, coarse in zip(model.levels_, model.levels_[1:], strict=False):
        for c in np.unique(fine.labels):
            assert len(np.unique(coarse.labels[fine.labels == c])) == 1
    assert np.array_equal(model.labels_, model.levels_[-1].labels)


def test_weighted_terms_name_the_kind_of_activity(websites):
    corpus, counts = websites
    model = ActivityClusterer().fit(counts)
    terms = weighted_terms(model.matrix_, model.vocabulary_, model.labels_, top=10)
    labels = np.asarray(corpus.labels)
    named = 0
    for c, best in terms.items():
        members = labels[model.labels_ == c]
        if len(members) < 20:
            continue
        major = max(set(members), key=list(members).count).lower()
        words = {t for t, _ in best}
        hints = {"travel": "travel", "sports": "sport", "news": "news", "photography": "photo"}
        hint = next((h for k, h in hints.items() if k in major), None)
        named += hint is not None and any(hint in w for w in words)
    assert named >= 3


def test_a_small_cluster_is_named_by_the_terms_its_members_share():
    import scipy.sparse as sp

    # cluster 0: two sites sharing "museum"; the first also says "airline" a lot, which
    # alone would outweigh the shared term in a mean of two
    vocabulary = ["museum", "airline", "goal", "match", "gallery"]
    X = sp.csr_matrix(
        np.array(
            [[0.4, 0.9, 0.0, 0.0, 0.0], [0.6, 0.0, 0.0, 0.0, 0.3],
             [0.0, 0.0, 0.7, 0.7, 0.0], [0.0, 0.0, 0.7, 0.7, 0.0], [0.0, 0.0, 0.0, 0.0, 1.0]],
            dtype=np.float32,
        )
    )  # fmt: skip
    terms = weighted_terms(X, vocabulary, np.array([0, 0, 1, 1, 2]), top=3)
    assert [t for t, _ in terms[0]] == ["museum"]  # airline and gallery: one member each
    assert [t for t, _ in terms[1]] == ["goal", "match"]
    assert [t for t, _ in terms[2]] == ["gallery"]  # a lone site keeps its own terms
    # nothing shared: the cluster is still named, by its members' own terms
    alone = weighted_terms(X, vocabulary, np.array([0, 1, 1, 0, 2]), top=2)
    assert alone[0] and alone[1]


# -- bad input ---------------------------------------------------------------------------------
def test_trivial_inputs_give_trivial_results():
    assert ActivityClusterer().fit([]).labels_.tolist() == []
    assert ActivityClusterer().fit(["only one document here"]).labels_.tolist() == [0]
    same = ActivityClusterer().fit(["the same words again"] * 5)
    assert same.labels_.tolist() == [0] * 5  # no weighted term: grouped as exact duplicates
    one_term = ActivityClusterer(min_df=1, max_df=1.0).fit(["oil", "oil", "football"])
    assert one_term.labels_.tolist() == [0, 0, 1]
    big_k = ActivityClusterer(n_neighbors=50, min_df=1, max_df=1.0).fit(
        ["oil price", "oil barrel", "goal"]
    )
    assert big_k.graph_stats_["n_neighbors"] == 2 and big_k.labels_[0] == big_k.labels_[1]
    empty = ActivityClusterer().fit(["", "   ", "oil price", "oil price rises"])
    assert len(empty.labels_) == 4 and empty.graph_stats_["n_empty"] >= 2


def test_bad_parameters_and_documents_are_refused():
    with pytest.raises(ValueError, match="unknown language 'xx'"):
        ActivityClusterer().fit(["some text"], languages=["xx"])
    with pytest.raises(ValueError, match="one ISO 639-1 code"):
        ActivityClusterer().fit(["a text", "b text"], languages=["en"])
    with pytest.raises(ValueError, match="not a mix"):
        ActivityClusterer().fit(["a text", {"b": 1}])
    with pytest.raises(ValueError, match="n_neighbors must be"):
        ActivityClusterer(n_neighbors=0).fit(["a"])
    with pytest.raises(ValueError, match="max_df must be"):
        ActivityClusterer(max_df=1.5).fit(["a"])
    with pytest.raises(ValueError, match="candidates must be"):
        ActivityClusterer(candidates="faiss").fit(["a"])
    with pytest.raises(ValueError, match="resolution"):
        ActivityClusterer(resolution=-1.0).fit(["a"])
    with pytest.raises(ValueError, match="rows=8 exceeds num_perm=4"):
        ActivityClusterer(rows=8, num_perm=4).fit(["a"])


# -- the stage -------------------------------------------------------------------------------
@pytest.fixture
def activity_db(db_url, websites):
    """200 real websites as domain documents with stored term counts (and one page each),
    in the outgoing environments of two universities and the citing one of the first; on
    SQLite and on PostgreSQL."""
    corpus, counts = websites
    url = db_url
    engine = make_engine(url)
    schema.upgrade(engine)
    labels: dict[str, str] = {}
    with session_scope(engine) as s:
        run = CrawlRun(kind="both", status="finished")
        a = University(name="Alpha University", country="Russia", rank=1)
        b = University(name="Beta University", country="UK", rank=2)
        s.add_all([run, a, b])
        s.flush()
        for k in range(200):
            domain = f"site{k:03d}.example.com"
            labels[domain] = corpus.labels[k]
            s.add(Document(unit="domain", key=domain, domain=domain, language="en",
                           terms=counts[k], n_terms=len(counts[k])))  # fmt: skip
            s.add(Page(url=f"http://{domain}/", host=domain, registered_domain=domain,
                       role="external", text=corpus.texts[k], language="en"))  # fmt: skip
            uni = a if k % 2 == 0 else b
            s.add(Environment(run_id=run.id, university_id=uni.id, domain=domain,
                              direction="outgoing", link_count=1))  # fmt: skip
            if k < 60:
                s.add(Environment(run_id=run.id, university_id=a.id, domain=domain,
                                  direction="citing", link_count=1))  # fmt: skip
    yield url, engine, labels
    engine.dispose()


def test_stage_clusters_each_university_and_direction(activity_db):
    _url, engine, _labels = activity_db
    out = stage.run(engine, DOMAINS)
    scopes = [(c.university, c.direction) for c in out.clusterings]
    assert scopes == [
        ("Alpha University", "outgoing"),
        ("Alpha University", "citing"),
        ("Beta University", "outgoing"),
    ]
    assert out.skipped == ("Beta University (citing)",)
    assert [c.n_documents for c in out.clusterings] == [100, 60, 100]
    assert {(c.method, c.linkage, c.signatures_written) for c in out.clusterings} == {
        ("activity", "leiden", 0)
    }
    with session_scope(engine) as s:
        rows = s.scalars(select(Clustering).order_by(Clustering.id)).all()
        assert [r.algorithm for r in rows] == ["activity"] * 3
        assert rows[0].filter["university"] == "Alpha University"
        assert rows[0].parameters["n_neighbors"] == "auto"
        assert rows[0].parameters["graph"]["n_neighbors"] == auto_neighbours(100)
        final = s.scalars(
            select(Cluster).where(Cluster.clustering_id == rows[0].id, Cluster.level == -1)
        ).all()
        assert sum(c.size for c in final) == 100
        assert any(c.category_evidence.get("weighted_terms") for c in final)
    settings = options("--unit", "domain", "--num-perm", "32")
    everything = stage.run(engine, settings, stage.ClusterScope(university="all"))
    assert [c.n_documents for c in everything.clusterings] == [200]
    with session_scope(engine) as s:
        row = s.get(Clustering, everything.clusterings[0].clustering_id)
        assert row.parameters["num_perm"] == 32  # --num-perm sets the weighted MinHash


def test_stage_streams_the_counts_and_stores_what_the_clusterer_finds(activity_db, websites):
    """The stage reads the stored counts in batches into a count matrix; its clustering
    is that of ActivityClusterer on the documents' mappings held in memory."""
    _corpus, counts = websites
    _url, engine, _labels = activity_db
    stats = stage.cluster_one(engine, DOMAINS, None, "both")
    model = ActivityClusterer.from_settings(DOMAINS).fit(counts[:200])
    evidence = weighted_terms(model.matrix_, model.vocabulary_, model.labels_,
                              top=max(20, Settings().analyse.theme_terms))  # fmt: skip
    with session_scope(engine) as s:
        row = s.get(Clustering, stats.clustering_id)
        assert [
            {k: v for k, v in lv.items() if k not in ("level", "seconds")} for lv in row.levels
        ] == [{k: v for k, v in lv.to_dict().items() if k != "seconds"} for lv in model.levels_]
        graph = {k: v for k, v in row.parameters["graph"].items() if k != "seconds"}
        assert graph == {k: v for k, v in model.graph_stats_.items() if k != "seconds"}
        assert {"load", "evidence", "weights"} <= set(row.parameters["graph"]["seconds"])
        ids = s.scalars(select(Document.id).order_by(Document.id)).all()
        members = s.execute(
            select(Cluster.level, Cluster.label, ClusterMember.document_id)
            .join(ClusterMember, ClusterMember.cluster_id == Cluster.id)
            .where(Cluster.clustering_id == row.id)
        ).all()
        stored: dict[int, np.ndarray] = {}
        for level, label, doc in members:
            stored.setdefault(level, np.full(len(ids), -1))[ids.index(doc)] = label
        expected = {-1: model.labels_, **{k: lv.labels for k, lv in enumerate(model.levels_)}}
        assert stored.keys() == expected.keys()
        for level, labels in expected.items():
            assert np.array_equal(stored[level], labels), level
        final = s.scalars(
            select(Cluster).where(Cluster.clustering_id == row.id, Cluster.level == -1)
        )
        got = {c.label: [tuple(t) for t in c.category_evidence["weighted_terms"]] for c in final}
        assert got == {c: [(t, w) for t, w in terms] for c, terms in evidence.items()}


def test_analyse_names_activity_themes_by_their_weighted_terms(activity_db):
    from webometrics.stages import analyse

    _url, engine, _labels = activity_db
    stats = stage.cluster_one(engine, DOMAINS, "Alpha University", "outgoing")
    analyse.run(engine, Settings(), analyse.AnalyseScope((stats.clustering_id,)), progress=False)
    with session_scope(engine) as s:
        final = s.scalars(
            select(Cluster).where(Cluster.clustering_id == stats.clustering_id, Cluster.level == -1)
        ).all()
        big = [c for c in final if c.size >= 5]
        assert big
        for c in big:
            stems = [t for t, _ in c.category_evidence["weighted_terms"]]
            assert c.theme_terms and len(c.theme_terms) <= Settings().analyse.theme_terms
            # the written forms of the clustering's own tf-idf terms, best first
            assert len(c.theme_terms) == min(len(stems), Settings().analyse.theme_terms)
            written = [t for t, st in zip(c.theme_terms, stems, strict=False) if t != st]
            assert written, c.theme_terms  # at least one stem shown as a word of the texts


def test_stage_refuses_documents_without_term_counts(activity_db):
    _url, engine, _labels = activity_db
    with session_scope(engine) as s:
        # a domain of the run's environment whose document predates term counts
        run_id, uni_id = s.execute(select(Environment.run_id, Environment.university_id)).first()
        s.add(Document(unit="domain", key="old.example.org", domain="old.example.org"))
        s.add(Environment(run_id=run_id, university_id=uni_id, domain="old.example.org",
                          direction="outgoing", link_count=1))  # fmt: skip
    with pytest.raises(StageError, match="--rebuild-documents"):
        stage.cluster_one(engine, DOMAINS)
    with pytest.raises(ParameterError, match="apply to --method paper"):
        options("--unit", "domain", "--method", "activity", "--threshold", "0.3")


@pytest.mark.slow
def test_command_line_default_is_activity_per_university(activity_db):
    url, _engine, _labels = activity_db
    env = {k: v for k, v in os.environ.items() if not k.startswith("WEBOMETRICS_")}
    env["WEBOMETRICS_DB_URL"] = url
    out = subprocess.run(
        [sys.executable, "-m", "webometrics", "-q", "cluster"],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert "(activity) of Alpha University (outgoing): 100 domain documents" in out.stdout
    assert "(activity) of Beta University (outgoing): 100 domain documents" in out.stdout
    assert "nothing to cluster for Beta University (citing)" in out.stdout


# -- the paper's single link on the weighted representation ---------------------------------
def test_lsh_link_runs_on_weighted_documents(websites):
    from cluster import LSHLink

    _corpus, counts = websites
    docs = [*counts[:30], counts[0], counts[1]]  # two exact copies must link
    model = LSHLink(similarity="weighted", num_perm=128, r0=8, r_min=2, step=2).fit(docs)
    assert model.labels_[30] == model.labels_[0] and model.labels_[31] == model.labels_[1]
    assert model.signatures_.scheme == "icws-datasketch"
    assert model.signatures_.hashvalues.shape == (32, 128)
    with pytest.raises(ValueError, match="term-count mappings"):
        LSHLink(similarity="weighted").fit([np.array([1, 2], dtype=np.uint64)])


def test_stage_paper_method_on_weighted_documents(activity_db):
    _url, engine, _labels = activity_db
    settings = options("--unit", "domain", "--similarity", "weighted", "--num-perm", "128",
                       "--r0", "8", "--r-min", "2", "--step", "2")  # fmt: skip
    out = stage.cluster_one(engine, settings)
    assert out.n_documents == 200 and out.linkage == "single"
    with session_scope(engine) as s:
        row = s.get(Clustering, out.clustering_id)
        assert row.algorithm == "lsh-link" and row.parameters["similarity"] == "weighted"


def test_which_method_a_run_uses():
    from core.settings import load_settings

    def method(*argv: str, settings: Settings | None = None) -> str:
        return stage.resolve_method(options(*argv, settings=settings))

    assert method() == "activity"
    assert method("--threshold", "0.3") == "paper"  # an option of the paper's asks for it
    assert method("--signature-store", "store") == "paper"
    leiden = Settings.model_validate({"cluster": {"linkage": "leiden"}})
    assert method(settings=leiden) == "paper"  # a paper setting asks for it
    assert method(settings=leiden.replace(minhash={"seed": 3})) == "paper"  # kept by replace
    assert method("--method", "activity", settings=leiden) == "activity"
    both = Settings.model_validate({"cluster": {"linkage": "leiden", "method": "activity"}})
    assert method(settings=both) == "activity"
    assert method("--method", "paper") == "paper"
    example = load_settings(REPO / "examples" / "webometrics.toml", environ={})
    assert method(settings=example) == "activity"
    with pytest.raises(ParameterError, match=r"cluster\.method"):
        Settings().replace(cluster={"method": "kmeans"})
    # --num-perm, --seed, --resolution, --quality: [activity] for the activity clustering
    activity = options("--num-perm", "32", "--seed", "4", "--resolution", "1.0", "--quality", "cpm")
    assert (activity.activity.num_perm, activity.activity.seed) == (32, 4)
    assert (activity.activity.resolution, activity.activity.quality) == ((1.0,), "cpm")
    assert activity.minhash == Settings().minhash and activity.cluster == Settings().cluster
    paper = options("--method", "paper", "--num-perm", "32", "--seed", "4")
    assert (paper.minhash.num_perm, paper.minhash.seed) == (32, 4)
    assert paper.activity == Settings().activity
