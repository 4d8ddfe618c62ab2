"""``webometrics cluster --linkage leiden`` on a real SQLite database of domain documents
built from real Reuters stories: what it stores, determinism, themes, the command line."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import pytest
from sqlalchemy import func, select

from core.exceptions import ParameterError
from core.settings import Settings
from extract import Shingler
from store import make_engine, schema
from store.models import Cluster, Clustering, ClusterMember, Document, Page
from store.session import session_scope
from tests.cli import run_webometrics as _cli
from webometrics.cli import build_parser
from webometrics.commands.cluster import cluster_settings
from webometrics.stages import analyse
from webometrics.stages import cluster as stage
from webometrics.stages.cluster.paper import paper_model

REPO = Path(__file__).resolve().parents[2]
N_DOMAINS = 300


def leiden(minhash: dict | None = None, **cluster) -> Settings:
    """The settings of the paper's Leiden linkage on the domain documents."""
    chosen = {"method": "paper", "unit": "domain", "linkage": "leiden", **cluster}
    return Settings().replace(cluster=chosen, minhash=minhash or {"num_perm": 128})


def options(*argv: str) -> Settings:
    """The settings ``webometrics cluster ARGV`` runs with."""
    return cluster_settings(Settings(), build_parser().parse_args(["cluster", *argv]))


@pytest.fixture
def stored(tmp_path, reuters_2000):
    """300 domain documents, each the 1-word shingles of one labelled Reuters story (and
    the story as the domain's one external page, for the themes)."""
    url = f"sqlite:///{tmp_path / 'leiden.db'}"
    engine = make_engine(url)
    schema.upgrade(engine)
    shingler = Shingler(k=1, language="en")
    stories = [d for d in reuters_2000 if d.label][:N_DOMAINS]
    with session_scope(engine) as s:
        for k, story in enumerate(stories):
            sh = shingler.hashes(story.text)
            domain = f"{story.label}-{k:03d}.example.com"
            s.add(
                Page(
                    url=f"http://{domain}/story",
                    host=domain,
                    registered_domain=domain,
                    role="external",
                    title=story.title,
                    text=story.text,
                )
            )
            s.add(
                Document(
                    unit="domain",
                    key=domain,
                    domain=domain,
                    language="en",
                    text_length=len(story.text),
                    n_shingles=len(sh),
                    shingles=sh.astype("<u8").tobytes(),
                    shingle_k=1,
                )
            )
    yield url, engine
    engine.dispose()


def partitions(engine, clustering_id: int) -> dict[int, set[frozenset[str]]]:
    """Every stored level's clusters as sets of document keys."""
    with session_scope(engine) as s:
        rows = s.execute(
            select(Cluster.level, Cluster.label, Document.key)
            .join(ClusterMember, ClusterMember.cluster_id == Cluster.id)
            .join(Document, Document.id == ClusterMember.document_id)
            .where(Cluster.clustering_id == clustering_id)
        ).all()
    groups: dict[tuple[int, int], set[str]] = defaultdict(set)
    for level, label, key in rows:
        groups[(level, label)].add(key)
    out: dict[int, set[frozenset[str]]] = defaultdict(set)
    for (level, _), keys in groups.items():
        out[level].add(frozenset(keys))
    return out


def test_leiden_clustering_is_stored_with_its_levels(stored):
    _url, engine = stored
    # Reuters stories are short: the banding and threshold of bench/linkage.md's Reuters row
    settings = leiden(
        {"num_perm": 128, "seed": 2}, leiden_rows=3, leiden_bands=42, leiden_threshold=0.2,
        resolution=[1.0, 0.5, 0.2],
    )  # fmt: skip
    stats = stage.cluster_one(engine, settings)
    assert stats.linkage == "leiden" and stats.n_documents == N_DOMAINS
    assert stats.n_levels == 3 and stats.method == "paper"
    with session_scope(engine) as s:
        c = s.get(Clustering, stats.clustering_id)
        assert (c.algorithm, c.linkage, c.unit) == ("lsh-leiden", "leiden", "domain")
        assert [lv["resolution"] for lv in c.levels] == [1.0, 0.5, 0.2]
        assert [lv["level"] for lv in c.levels] == [0, 1, 2]
        assert c.parameters["quality"] == "rb" and c.parameters["threshold"] == 0.2
        assert (c.parameters["rows"], c.parameters["bands"]) == (3, 42)
        assert c.parameters["graph"]["nodes"] == N_DOMAINS
        assert c.parameters["graph"]["edges"] > 0
        n_members = s.scalar(
            select(func.count())
            .select_from(ClusterMember)
            .join(Cluster, Cluster.id == ClusterMember.cluster_id)
            .where(Cluster.clustering_id == c.id, Cluster.level == -1)
        )
        assert n_members == N_DOMAINS
    levels = partitions(engine, stats.clustering_id)
    assert set(levels) == {-1, 0, 1, 2}
    assert levels[-1] == levels[2]  # the final clusters are the last level's
    assert len(levels[-1]) == stats.n_clusters
    # nested: every cluster of a finer level lies inside one of the next level
    for fine, coarse in ((0, 1), (1, 2)):
        for group in levels[fine]:
            assert sum(group <= big for big in levels[coarse]) == 1
    # a topic clustering: clusters are nearly pure, and the earnings reports form one
    pure = sum(
        max(sum(1 for k in g if k.startswith(t)) for t in {k.split("-")[0] for k in g})
        for g in levels[-1]
    )
    assert pure / N_DOMAINS >= 0.95  # measured 0.977
    assert max(len(g) for g in levels[-1]) >= 30


def test_same_parameters_and_seed_same_clusters(stored):
    _url, engine = stored
    settings = leiden({"num_perm": 128, "seed": 5}, leiden_threshold=0.1)
    a = stage.cluster_one(engine, settings)
    b = stage.cluster_one(engine, settings)
    assert partitions(engine, a.clustering_id) == partitions(engine, b.clustering_id)


def test_settings_choose_the_linkage_and_modularity_takes_no_levels(stored):
    _url, engine = stored
    settings = Settings.model_validate(
        {"cluster": {"linkage": "leiden", "quality": "modularity", "leiden_threshold": 0.1,
                     "unit": "domain"}, "minhash": {"num_perm": 128}}
    )  # fmt: skip
    stats = stage.cluster_one(engine, settings)  # [cluster] linkage alone asks for paper
    assert stats.linkage == "leiden" and stats.n_levels == 1
    with session_scope(engine) as s:
        c = s.get(Clustering, stats.clustering_id)
        assert c.parameters["quality"] == "modularity" and c.levels[0]["resolution"] == 1.0


def test_themes_and_categories_work_on_leiden_clusters(stored):
    _url, engine = stored
    stats = stage.cluster_one(engine, leiden(leiden_threshold=0.1))
    analyse.run(engine, Settings(), analyse.AnalyseScope((stats.clustering_id,)), progress=False)
    with session_scope(engine) as s:
        named = s.scalars(
            select(Cluster).where(Cluster.clustering_id == stats.clustering_id, Cluster.level == -1)
        ).all()
        assert named and all(c.theme_terms and c.category for c in named)
        assert sum(c.size for c in named) == N_DOMAINS


def test_options_of_the_leiden_linkage():
    argv = ["--linkage", "leiden", "--threshold", "0.1", "--similarity", "signature",
            "--resolution", "1.0", "0.5", "--quality", "cpm", "--num-perm", "128"]  # fmt: skip
    settings = options(*argv)
    assert stage.resolve_method(settings) == "paper"  # --linkage implies it
    cfg = settings.cluster
    assert (cfg.leiden_threshold, cfg.leiden_similarity) == (0.1, "signature")
    assert (cfg.resolution, cfg.quality) == ((1.0, 0.5), "cpm")
    assert cfg.threshold == Settings().cluster.threshold  # the single link's: untouched
    assert settings.minhash.num_perm == 128
    # modularity takes no resolution from [cluster] resolution: one level at 1
    modularity = paper_model(options("--linkage", "leiden", "--quality", "modularity"))
    assert modularity.resolutions() == [1.0]


def test_errors_say_what_to_do():
    with pytest.raises(ParameterError, match="leiden bands with"):
        options("--linkage", "leiden", "--r0", "8")
    with pytest.raises(ParameterError, match="apply to --linkage leiden"):
        options("--linkage", "single", "--resolution", "0.5")
    with pytest.raises(ParameterError, match=r"cluster\.linkage"):
        Settings().replace(cluster={"linkage": "average"})
    with pytest.raises(ParameterError, match="modularity has no resolution"):
        options("--linkage", "leiden", "--quality", "modularity", "--resolution", "0.5")
    with pytest.raises(ParameterError, match="takes neither --signature-store nor --linkage"):
        options("--linkage", "leiden", "--similarity", "weighted")


def test_command_line(stored):
    url, engine = stored
    out = _cli("-q", "cluster", "--unit", "domain", "--linkage", "leiden", "--resolution",
               "1.0", "0.5", "--quality", "rb", "--threshold", "0.1", "--num-perm", "128",
               "--university", "all", db=url)  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert "(leiden linkage)" in out.stdout and f"{N_DOMAINS} domain documents" in out.stdout
    with session_scope(engine) as s:
        c = s.scalars(select(Clustering).order_by(Clustering.id.desc())).first()
        assert c.linkage == "leiden" and c.parameters["resolution"] == [1.0, 0.5]
    single = _cli("-q", "cluster", "--unit", "domain", "--num-perm", "128", "--method", "paper",
                  "--university", "all", db=url)  # fmt: skip
    assert single.returncode == 0 and "(single linkage)" in single.stdout
    bad = _cli("cluster", "--linkage", "leiden", "--resolution", "-1", db=url)
    assert bad.returncode == 2 and "resolution" in bad.stderr
