"""The analyse stage: categories of external domains, themes and categories of clusters.

1. **Domains**: every external registered domain of the environment (links and verified
   citations) and of the documents gets a category pooled from all the evidence
   (:func:`analyse.evidence.categorize_site`, through :class:`SiteCategorizer`): the
   registries of organisations (:mod:`analyse.registries`, loaded once per run; off with
   ``[analyse] registries = false``), the taxonomy's listed domains, patterns, name parts
   and keywords, and the text model (``[analyse] text_model``, :func:`choose_text_model`)
   read from up to ``[analyse] pages_per_domain`` of its fetched pages (hosts, titles,
   texts); the studied universities' own domains count as listed universities. Stored in
   :class:`~store.models.DomainCategory` with its confidence (``score``) and evidence
   (``decided_by``; the pooled distribution as ``scores``, so cluster votes can be
   recomputed); an analyst's override is never touched.
2. **Clusters**: for each clustering not analysed yet (its final clusters have no theme;
   or the ones asked for), the final clusters (level -1) and the clusters of its stored
   levels (``[analyse] levels``: every level by default — the activity clustering's
   finer and coarser Leiden levels, the paper's r-steps — the Leiden levels only, or
   none) get their theme (:func:`analyse.themes.counted_themes`: most frequent shingles,
   class-based TF-IDF terms against the level's other clusters, largest domains,
   typical titles) and a category voted by their member domains (overrides vote
   one-hot) and theme keywords (:func:`analyse.categories.categorize_cluster`); a
   cluster's own override stays. Each member document is read and counted once for all
   levels; a level that partitions the documents as the final clusters or an earlier
   level did gets their themes and categories as they are.

``run(engine, settings, scope) -> AnalyseResult`` (:class:`AnalyseScope`: which
clusterings, whether to categorise the domains) returns the statistics the pipeline
records.
"""

from __future__ import annotations

import logging
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from sqlalchemy import Engine, func, select
from sqlalchemy.orm import Session
from tqdm import tqdm

from analyse import networks
from analyse.categories import (
    Assignment,
    Taxonomy,
    categorize_cluster,
    categorize_domain,
    load_taxonomy,
)
from analyse.registries import Registry
from analyse.text_model import TextCategoryModel
from analyse.themes import (
    CountedDocument,
    ThemeCache,
    ThemeDocument,
    ThemeOptions,
    count_document,
    counted_themes,
    readable_terms,
)
from core.choices import DIRECTIONS, LevelThemes
from core.exceptions import ConfigError, ParameterError
from core.folders import user_folder
from core.settings import AnalyseSettings, Settings
from store import aggregates, analytics, queries
from store import networks as network_tables
from store.models import (
    Cluster,
    Clustering,
    ClusterMember,
    Document,
    DomainCategory,
    Page,
    UniversityDomain,
    utcnow,
)
from store.overrides import check_overrides, stored_assignment
from store.session import session_scope
from webometrics.stages import StageResult, refreshes_figures

if TYPE_CHECKING:
    from corpora.site_kinds import SiteSample

log = logging.getLogger(__name__)

_CHUNK = 500


@dataclass
class DomainPages:
    """Up to N fetched external pages of one registered domain."""

    domain: str
    hosts: list[str] = field(default_factory=list)
    titles: list[str] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)


def _chunks(items: Sequence[Any], size: int = _CHUNK) -> Iterator[Sequence[Any]]:
    for i in range(0, len(items), size):
        yield items[i : i + size]


def iter_domain_pages(
    engine: Engine, domains: Sequence[str], *, per_domain: int
) -> Iterator[DomainPages]:
    """The first ``per_domain`` external pages (by URL) of each domain with text or title,
    domain by domain in the given order's chunks (domains without pages are yielded empty)."""
    for chunk in _chunks(sorted(set(domains))):
        ranked = (
            select(
                Page.registered_domain.label("domain"),
                Page.host,
                Page.title,
                Page.text,
                func.row_number()
                .over(partition_by=Page.registered_domain, order_by=Page.url)
                .label("n"),
            )
            .where(
                Page.registered_domain.in_(list(chunk)),
                Page.role != "university",
                (Page.text.is_not(None)) | (Page.title.is_not(None)),
            )
            .subquery()
        )
        stmt = (
            select(ranked.c.domain, ranked.c.host, ranked.c.title, ranked.c.text)
            .where(ranked.c.n <= per_domain)
            .order_by(ranked.c.domain, ranked.c.n)
        )
        got: dict[str, DomainPages] = {d: DomainPages(d) for d in chunk}
        with engine.connect() as conn:
            for dom, host, title, text in conn.execute(stmt):
                dp = got[dom]
                if host and host not in dp.hosts:
                    dp.hosts.append(host)
                if title:
                    dp.titles.append(title)
                if text:
                    dp.texts.append(text)
        yield from (got[d] for d in chunk)


def _environment_domains(engine: Engine) -> list[str]:
    """The external domains of every run (``v_environment``) and of the documents."""
    from store.analytics import V_ENVIRONMENT

    with engine.connect() as conn:
        doms = set(conn.scalars(select(V_ENVIRONMENT.c.domain).distinct()).all())
        doms |= set(conn.scalars(select(Document.domain).distinct()).all())
    return sorted(d for d in doms if d)


def _university_domains(engine: Engine) -> dict[str, str]:
    with engine.connect() as conn:
        return {d: "universities" for d in conn.scalars(select(UniversityDomain.domain))}


@dataclass(frozen=True)
class DomainsResult:
    """What :func:`categorise_domains` stored: the domains categorised, the rows created
    (``new``), those with an analyst's override (whose assigned category was still
    refreshed) and the domains per assigned category (sorted by key)."""

    domains: int
    new: int
    overridden: int
    categories: dict[str, int]


def _categorised(
    engine: Engine,
    categorizer: SiteCategorizer,
    todo: Sequence[str],
    *,
    per_domain: int,
    progress: bool,
) -> dict[str, Assignment]:
    """The category of each domain of ``todo`` from its pages and all the evidence
    (:class:`SiteCategorizer`)."""
    results: dict[str, Assignment] = {}
    bar = tqdm(
        total=len(todo), desc="categorise domains", unit="domain", disable=not progress or None
    )
    batch: list[DomainPages] = []
    for dp in iter_domain_pages(engine, todo, per_domain=per_domain):
        batch.append(dp)
        if len(batch) >= _CHUNK:
            results.update(categorizer.categorize(batch))
            bar.update(len(batch))
            batch = []
    results.update(categorizer.categorize(batch))
    bar.update(len(batch))
    bar.close()
    return results


def _store_domain_categories(
    engine: Engine, taxonomy: Taxonomy, results: dict[str, Assignment]
) -> DomainsResult:
    """Create or update the :class:`DomainCategory` rows (overrides untouched)."""
    now = utcnow()
    new = overridden = 0
    categories: Counter[str] = Counter()
    for chunk in _chunks(sorted(results)):
        with session_scope(engine) as s:
            rows = {
                r.domain: r
                for r in s.scalars(select(DomainCategory).where(DomainCategory.domain.in_(chunk)))
            }
            for dom in chunk:
                a = results[dom]
                evidence = dict(a.evidence)
                evidence["scores"] = a.scores
                evidence["taxonomy"] = {"source": taxonomy.source, "version": taxonomy.version}
                row = rows.get(dom)
                if row is None:
                    row = DomainCategory(domain=dom)
                    s.add(row)
                    new += 1
                row.category, row.score, row.evidence, row.updated_at = (
                    a.category,
                    a.score,
                    evidence,
                    now,
                )
                if row.override_category is not None:
                    overridden += 1
                categories[a.category] += 1
    return DomainsResult(len(results), new, overridden, dict(sorted(categories.items())))


def categorise_domains(
    engine: Engine,
    taxonomy: Taxonomy,
    *,
    domains: Sequence[str] | None = None,
    per_domain: int = 20,
    max_words: int = 5000,
    progress: bool = True,
    cfg: AnalyseSettings | None = None,
) -> DomainsResult:
    """Categorise domains and store :class:`DomainCategory` rows (overrides untouched).

    Each domain's category pools the registries, the taxonomy and the text model
    (:class:`SiteCategorizer`); its ``score`` is the pooled confidence (0..1) and its
    evidence says what decided (``decided_by``).

    Parameters
    ----------
    domains : sequence of str, optional
        The domains (default: those of the environment and of the documents).
    per_domain : int
        Pages read per domain.
    max_words : int
        Words of text read per domain.
    cfg : AnalyseSettings, optional
        ``[analyse] text_model``, ``registries`` and ``registry_dir`` (default: the
        default settings).

    Returns
    -------
    DomainsResult
        ``domains`` (categorised), ``new`` (rows created), ``overridden`` (rows with an
        analyst's override, whose assigned category was still refreshed), and the count
        per assigned category (``categories``).
    """
    todo = sorted(set(domains)) if domains is not None else _environment_domains(engine)
    cfg = (cfg or Settings().analyse).model_copy(update={"max_words": max_words})
    categorizer = SiteCategorizer.make(engine, cfg, taxonomy)
    results = _categorised(engine, categorizer, todo, per_domain=per_domain, progress=progress)
    return _store_domain_categories(engine, taxonomy, results)


# --- the text model of categories ------------------------------------------------------

#: The file name of the text model in the user's data folder.
TEXT_MODEL_NAME = "category-model.npz"

#: The database's own labels train a model when no file is there and it has this many
#: sites with text in each of two categories at least.
MIN_DATABASE_SITES = 10

#: ``category train`` leaves out a category with fewer sites than this.
MIN_TRAIN_SITES = 5


def default_text_model_path(environ: Mapping[str, str] | None = None) -> Path:
    """``category-model.npz`` in the user's data folder: ``$XDG_DATA_HOME/webometrics``,
    ``~/.local/share/webometrics`` without it.

    >>> str(default_text_model_path({"XDG_DATA_HOME": "/data"}))
    '/data/webometrics/category-model.npz'
    """
    return user_folder("data", environ) / TEXT_MODEL_NAME


def text_model_path(cfg: AnalyseSettings) -> Path | None:
    """The text model file of the settings (None: ``text_model = "none"``)."""
    if cfg.text_model is not None and cfg.text_model.strip().lower() == "none":
        return None
    return Path(cfg.text_model) if cfg.text_model else default_text_model_path()


def database_site_samples(
    engine: Engine,
    taxonomy: Taxonomy,
    registry: Registry | None,
    *,
    per_domain: int,
    domains: Sequence[str] | None = None,
) -> list[SiteSample]:
    """Labelled texts of the database: every domain with fetched text whose category an
    analyst set (``override_category``) or a registry, a listed domain or a host pattern
    gives by name (not a name part, not keywords), one sample of up to ``per_domain``
    pages each."""
    from corpora.site_kinds import SiteSample

    with engine.connect() as conn:
        overrides: dict[str, str] = {
            d: str(c)
            for d, c in conn.execute(
                select(DomainCategory.domain, DomainCategory.override_category).where(
                    DomainCategory.override_category.is_not(None)
                )
            )
        }
    todo = sorted(set(domains) if domains is not None else _environment_domains(engine))
    known = {d: k for d, k in _university_domains(engine).items() if "universities" in taxonomy}
    labels: dict[str, str] = {}
    for dom in todo:
        if dom in overrides:
            labels[dom] = taxonomy.resolve(overrides[dom])
            continue
        match = registry.lookup(dom) if registry is not None else None
        if match is not None and match.category in taxonomy:
            labels[dom] = match.category
            continue
        named = categorize_domain(dom, taxonomy=taxonomy, known=known)
        if named.evidence.get("known") or named.evidence.get("patterns"):
            labels[dom] = named.category
    out: list[SiteSample] = []
    for dp in iter_domain_pages(engine, sorted(labels), per_domain=per_domain):
        texts = [t for t in (*dp.titles, *dp.texts) if t.strip()]
        if dp.texts:
            out.append(SiteSample(dp.domain, labels[dp.domain], "database", tuple(texts)))
    return out


@dataclass(frozen=True)
class TextModelChoice:
    """The text model a run uses (None: none) and what it is, for the evidence."""

    model: TextCategoryModel | None
    note: str


def choose_text_model(
    engine: Engine, cfg: AnalyseSettings, taxonomy: Taxonomy, registry: Registry | None
) -> TextModelChoice:
    """The text model of ``[analyse] text_model`` when its file is there; else one trained
    from the database's own labels (:func:`database_site_samples`) when it has
    :data:`MIN_DATABASE_SITES` sites with text in each of two categories, not saved; else
    none.

    Raises
    ------
    ConfigError
        The file is there but is no model of this program's format.
    """
    from analyse.text_model import TextCategoryModel, load_model, site_terms

    path = text_model_path(cfg)
    if path is None:
        return TextModelChoice(None, "off ([analyse] text_model = none)")
    if path.is_file():
        try:
            model = load_model(path)
        except ValueError as exc:
            raise ConfigError(str(exc)) from exc
        p = model.provenance_
        return TextModelChoice(model, f"{path} (trained {p.get('trained_at')})")
    samples = database_site_samples(engine, taxonomy, registry, per_domain=cfg.pages_per_domain)
    per_cat = Counter(s.category for s in samples)
    enough = [c for c, n in per_cat.items() if n >= MIN_DATABASE_SITES]
    if len(enough) < 2:
        return TextModelChoice(
            None,
            f"absent: no model at {path} and too few labelled sites with text in the "
            f"database ({dict(per_cat)}; {MIN_DATABASE_SITES} in each of two categories "
            "needed): run `webometrics category train`",
        )
    kept = [s for s in samples if s.category in enough]
    model = TextCategoryModel().fit(
        site_terms([s.texts for s in kept]),
        [s.category for s in kept],
        [s.site for s in kept],
        sources={"database": {c: per_cat[c] for c in enough}},
    )
    return TextModelChoice(
        model, f"trained from this database's {len(kept)} labelled sites (not saved)"
    )


@dataclass(frozen=True)
class SiteCategorizer:
    """Everything a site's category reads besides its pages: the taxonomy, the
    registries, the text model, the studied universities' domains; made once per run."""

    taxonomy: Taxonomy
    registry: Registry | None
    text_model: TextModelChoice
    known: Mapping[str, str]
    max_words: int = 5000

    @classmethod
    def make(cls, engine: Engine, cfg: AnalyseSettings, taxonomy: Taxonomy) -> SiteCategorizer:
        """The categoriser of a run: the registries loaded, the text model chosen
        (:func:`choose_text_model`)."""
        registry = load_registry(cfg)
        known = {d: k for d, k in _university_domains(engine).items() if "universities" in taxonomy}
        return cls(
            taxonomy,
            registry,
            choose_text_model(engine, cfg, taxonomy, registry),
            known,
            cfg.max_words,
        )

    def categorize(self, sites: Sequence[DomainPages]) -> dict[str, Assignment]:
        """The category of each site (:func:`analyse.evidence.categorize_site`), its text
        read by the text model when there is one."""
        from analyse.evidence import categorize_site, text_evidence
        from analyse.text_model import site_terms

        model = self.text_model.model
        terms = site_terms([[*dp.titles, *dp.texts] for dp in sites]) if model else []
        out: dict[str, Assignment] = {}
        for i, dp in enumerate(sites):
            text = (
                text_evidence(model, terms[i], pages=len(dp.texts))
                if model is not None and (dp.texts or dp.titles)
                else None
            )
            a = categorize_site(
                dp.domain,
                taxonomy=self.taxonomy,
                hosts=dp.hosts,
                titles=dp.titles,
                texts=dp.texts,
                known=self.known,
                registry=self.registry,
                text=text,
                max_words=self.max_words,
            )
            a.evidence["text_model"] = self.text_model.note
            out[dp.domain] = a
        return out


@dataclass(frozen=True)
class ClassifyResult:
    """What :func:`classify_domains` found: an assignment per domain, the text model."""

    assignments: dict[str, Assignment]
    text_model: str


def classify_domains(
    engine: Engine, settings: Settings, domains: Sequence[str], *, read_pages: bool = True
) -> ClassifyResult:
    """The category of each domain (a host is read as its registered domain's pages) from
    the pages the database stores, else from its name and the registries; nothing is
    stored."""
    from core.domains import registered_domain

    cfg = settings.analyse
    taxonomy = load_taxonomy(cfg.taxonomy)
    cat = SiteCategorizer.make(engine, cfg, taxonomy)
    site_of = {d: registered_domain(d) or d for d in domains}
    pages = {
        dp.domain: dp
        for dp in (
            iter_domain_pages(
                engine, sorted(set(site_of.values())), per_domain=cfg.pages_per_domain
            )
            if read_pages
            else ()
        )
    }
    sites = [
        DomainPages(
            d,
            *(
                (p.hosts, p.titles, p.texts)
                if (p := pages.get(site_of[d])) is not None
                else ([], [], [])
            ),
        )
        for d in domains
    ]
    return ClassifyResult(cat.categorize(sites), cat.text_model.note)


def train_text_model(
    engine: Engine | None, settings: Settings, *, corpora: Sequence[str], out: Path
) -> dict[str, Any]:
    """Train the text model on ``corpora`` (:mod:`corpora.site_kinds`) and, with an
    ``engine``, the database's labelled sites (:func:`database_site_samples`); save it to
    ``out``; returns its provenance and the path. A category of fewer than
    :data:`MIN_TRAIN_SITES` sites is left out (``left_out`` in the provenance).

    Raises
    ------
    ParameterError
        Fewer than two categories of labelled texts.
    DataNotFoundError
        A corpus is asked for and the shared data folder is missing.
    """
    from analyse.text_model import TextCategoryModel, site_terms
    from corpora.site_kinds import load_site_kinds

    cfg = settings.analyse
    taxonomy = load_taxonomy(cfg.taxonomy)
    samples = load_site_kinds(corpora) if corpora else []
    if engine is not None:
        samples += database_site_samples(
            engine, taxonomy, load_registry(cfg), per_domain=cfg.pages_per_domain
        )
    sites: dict[str, set[str]] = defaultdict(set)
    for smp in samples:
        sites[smp.category].add(smp.site)
    dropped = {c: len(v) for c, v in sorted(sites.items()) if len(v) < MIN_TRAIN_SITES}
    kept = [smp for smp in samples if smp.category not in dropped]
    sources = dict(Counter(smp.corpus for smp in kept))
    try:
        model = TextCategoryModel().fit(
            site_terms([smp.texts for smp in kept]),
            [smp.category for smp in kept],
            [smp.site for smp in kept],
            sources=sources,
        )
    except ValueError as exc:
        raise ParameterError(
            f"cannot train the text model: {exc}"
            + (
                f" (categories with fewer than {MIN_TRAIN_SITES} sites left out: {dropped})"
                if dropped
                else ""
            )
        ) from exc
    model.provenance_["left_out"] = dropped
    path = model.save(out)
    return {"model": str(path), **model.provenance_}


def load_registry(cfg: AnalyseSettings) -> Registry | None:
    """The run's registries (``[analyse] registries``): the snapshot of the registry
    folder (``[analyse] registry_dir``) when ``webometrics registries update`` wrote one,
    else the packaged one; None when switched off."""
    if not cfg.registries:
        return None
    registry = Registry.load(cfg.registry_folder())
    log.info("registries: %d organisations from %s", len(registry), registry.path)
    return registry


def _categorise_all(
    engine: Engine, taxonomy: Taxonomy, cfg: AnalyseSettings, progress: bool
) -> DomainsResult:
    """:func:`categorise_domains` of every domain with the run's settings (registries,
    text model)."""
    return categorise_domains(
        engine,
        taxonomy,
        per_domain=cfg.pages_per_domain,
        max_words=cfg.max_words,
        progress=progress,
        cfg=cfg,
    )


def _clusterings_to_do(engine: Engine, ids: Sequence[int] | None, redo: bool) -> list[int]:
    with Session(engine) as s:
        if ids is not None:
            found = set(s.scalars(select(Clustering.id).where(Clustering.id.in_(list(ids)))))
            missing = sorted(set(ids) - found)
            if missing:
                raise ParameterError(
                    f"no clustering with id {', '.join(map(str, missing))}; "
                    "list them with `webometrics report` or the dashboard's Runs page"
                )
            return sorted(found)
        stmt = select(Cluster.clustering_id, Cluster.theme_terms).where(Cluster.level == -1)
        todo: set[int] = set()
        for cid, terms in s.execute(stmt):
            if redo or not terms:
                todo.add(cid)
        return sorted(todo)


@dataclass(frozen=True)
class ClusteringAnalysis:
    """What :func:`analyse_clustering` did: the final clusters named and categorised, how
    many got each category, and the clusters of the stored levels named."""

    clusters: int
    categories: dict[str, int]
    level_clusters: int = 0


@dataclass
class _Members:
    """The member documents of a clustering's clusters: each document once, as themes read
    it, the documents of each cluster, and the votes of the domains' stored categories."""

    documents: dict[int, ThemeDocument]
    clusters: dict[int, tuple[int, ...]]
    votes: dict[str, Assignment | str | None]


def _page_titles_texts(
    s: Session, page_ids: Sequence[int]
) -> dict[int, tuple[str | None, str | None]]:
    pages: dict[int, tuple[str | None, str | None]] = {}
    for chunk in _chunks(page_ids):
        for pid, title, text in s.execute(
            select(Page.id, Page.title, Page.text).where(Page.id.in_(list(chunk)))
        ):
            pages[pid] = (title, text)
    return pages


def _domain_votes(s: Session, domains: Sequence[str]) -> dict[str, Assignment | str | None]:
    cats: dict[str, DomainCategory] = {}
    for chunk in _chunks(domains):
        for dc in s.scalars(select(DomainCategory).where(DomainCategory.domain.in_(chunk))):
            cats[dc.domain] = dc
    return {d: stored_assignment(dc) for d, dc in cats.items()}


def _levels_named(engine: Engine, clustering_id: int, which: LevelThemes) -> tuple[int, ...] | None:
    """The stored levels of a clustering whose clusters are named besides the final ones
    (``[analyse] levels``): ``None`` every level, ``()`` none, else the Leiden levels (a
    stored level with a resolution: the activity clustering's, the ``leiden`` linkage's)."""
    if which == "all":
        return None
    if which == "none":
        return ()
    with Session(engine) as s:
        stored = s.scalar(select(Clustering.levels).where(Clustering.id == clustering_id))
    return tuple(
        int(lvl.get("level", k))
        for k, lvl in enumerate(stored or [])
        if isinstance(lvl, dict) and lvl.get("resolution") is not None
    )


def _of_levels(stmt: Any, levels: tuple[int, ...] | None) -> Any:
    """``stmt`` kept to the final clusters and the given levels (``None``: every level)."""
    return stmt if levels is None else stmt.where(Cluster.level.in_([-1, *levels]))


def _members(
    engine: Engine, clustering_id: int, per_domain: int, levels: tuple[int, ...] | None
) -> _Members:
    """Read the members of the final clusters and of the given levels' (``None``: every
    stored level's): a page document's title and text, a domain document's pages (up to
    ``per_domain``); each document once, however many levels hold it."""
    stmt = (
        select(Cluster.id, Document.id, Document.unit, Document.domain, Document.page_id)
        .add_columns(Document.n_pages)
        .join(ClusterMember, ClusterMember.cluster_id == Cluster.id)
        .join(Document, Document.id == ClusterMember.document_id)
        .where(Cluster.clustering_id == clustering_id)
        .order_by(Cluster.id, Document.id)
    )
    with Session(engine) as s:
        rows = s.execute(_of_levels(stmt, levels)).all()
        docs = {r[1]: r[2:] for r in rows}  # document id -> unit, domain, page id, pages
        pages = _page_titles_texts(
            s, sorted({p for unit, _d, p, _n in docs.values() if unit == "page" and p})
        )
        votes = _domain_votes(s, sorted({d for _u, d, _p, _n in docs.values()}))
    unit_domains = sorted({d for unit, d, _p, _n in docs.values() if unit == "domain"})
    domain_docs = {
        dp.domain: dp for dp in iter_domain_pages(engine, unit_domains, per_domain=per_domain)
    }
    documents: dict[int, ThemeDocument] = {}
    for doc_id, (unit, domain, page_id, n_pages) in docs.items():
        if unit == "page":
            title, text = pages.get(page_id, (None, None)) if page_id else (None, None)
            documents[doc_id] = ThemeDocument(text or "", (title,) if title else (), domain, 1)
        else:
            dp = domain_docs.get(domain) or DomainPages(domain)
            documents[doc_id] = ThemeDocument(
                "\n\n".join(dp.texts), tuple(dp.titles), domain, int(n_pages or len(dp.texts) or 1)
            )
    clusters: dict[int, list[int]] = defaultdict(list)
    for cl_id, doc_id, *_ in rows:
        clusters[cl_id].append(doc_id)
    return _Members(documents, {c: tuple(d) for c, d in clusters.items()}, votes)


def _theme_terms(
    theme: Any, weighted: list[Any], texts: list[str], options: ThemeOptions
) -> tuple[list[str], list[float]]:
    """A cluster's terms and their weights: the activity clustering's tf-idf stems
    (``weighted``), as whole written words, when it has them and some are no function
    words; else the c-TF-IDF theme's."""
    terms, weights = list(theme.terms), list(theme.term_weights)
    if weighted:
        written = readable_terms(
            [t for t, _ in weighted], texts, max_words=options.max_words
        )  # no stop word, no stem without a word of the texts, the cluster's script
        top = [(written[t], float(w)) for t, w in weighted if t in written]
        if top:
            terms = [t for t, _ in top[: options.n_terms]]
            weights = [w for _, w in top[: options.n_terms]]
    return terms, weights


@dataclass(frozen=True)
class _Naming:
    """What naming a cluster reads besides its theme: the theme sizes, the taxonomy, and
    the member documents and domain votes of the clustering."""

    options: ThemeOptions
    taxonomy: Taxonomy
    members: _Members


#: The fields :func:`_name` sets: a cluster's theme and voted category.
_NAMED_FIELDS = (
    "theme_terms",
    "top_shingles",
    "top_domains",
    "titles",
    "category",
    "category_score",
    "category_support",
    "category_voters",
    "category_evidence",
)


def _name(cl: Cluster, theme: Any, naming: _Naming) -> str:
    """Give a cluster (final or of a level) its theme and voted category; return the
    category. The analyst's override of the cluster stays."""
    kept = cl.category_evidence or {}
    docs = [naming.members.documents[d] for d in naming.members.clusters[cl.id]]
    terms, weights = _theme_terms(
        theme, kept.get("weighted_terms") or [], [d.text for d in docs], naming.options
    )
    votes = naming.members.votes
    member_votes = [v for d in docs if (v := votes.get(d.domain or "")) is not None]
    a = categorize_cluster(
        member_votes, taxonomy=naming.taxonomy, theme_terms=[*terms, *theme.shingles]
    )
    cl.theme_terms = terms
    cl.top_shingles = list(theme.shingles)
    cl.top_domains = list(theme.domains)
    cl.titles = list(theme.titles)
    cl.category = a.category
    cl.category_score = a.score
    cl.category_support = a.evidence["support"]
    cl.category_voters = a.evidence["voters"]
    cl.category_evidence = {
        **a.evidence,
        # the activity clustering's own tf-idf terms of the cluster, when it has them
        **({"weighted_terms": kept["weighted_terms"]} if "weighted_terms" in kept else {}),
        "scores": a.scores,
        "term_weights": dict(zip(terms, weights, strict=True)),
        "shingle_counts": dict(zip(theme.shingles, theme.shingle_counts, strict=True)),
    }
    return a.category


@dataclass
class _Partitions:
    """What naming a clustering's levels in turn carries from one to the next: its
    documents counted once, the theme cache of the last partition themed, and the
    clusters named so far by partition (each by its documents)."""

    counted: dict[int, CountedDocument]
    cache: ThemeCache
    named: dict[frozenset[tuple[int, ...]], dict[tuple[int, ...], Cluster]] = field(
        default_factory=dict
    )


def _name_level(rows: Sequence[Cluster], naming: _Naming, seen: _Partitions) -> list[str]:
    """Name the clusters of one level (those with stored members); return their
    categories.

    A level that partitions the documents as an earlier one did (the final clusters, or
    the level before: a step of the paper's dendrogram that linked nothing, the activity
    clustering's ``clusters`` level) has the same clusters: each gets the theme and
    category of its namesake, the final cluster's own terms included. Another level is
    themed from the counted documents, its clusters' terms against each other's (a
    cluster the level before already had is not summed again: :class:`ThemeCache`).
    """
    clusters = {cl.id: naming.members.clusters[cl.id] for cl in rows}
    partition = frozenset(clusters.values())
    same = seen.named.get(partition)
    if same is not None:
        for cl in rows:
            for name in _NAMED_FIELDS:
                setattr(cl, name, getattr(same[clusters[cl.id]], name))
        return [str(cl.category) for cl in rows]
    themes = counted_themes(
        {cid: [seen.counted[d] for d in docs] for cid, docs in clusters.items()},
        naming.options,
        cache=seen.cache,
    )
    seen.named[partition] = {clusters[cl.id]: cl for cl in rows}
    return [_name(cl, themes[cl.id], naming) for cl in rows]


def analyse_clustering(
    engine: Engine,
    clustering_id: int,
    taxonomy: Taxonomy,
    options: ThemeOptions,
    *,
    per_domain: int = 20,
    levels: LevelThemes = "all",
) -> ClusteringAnalysis:
    """Name and categorise the clusters of one clustering: the final ones and those of
    its stored levels (``levels``: every level, the Leiden levels only, or none;
    :func:`_name_level`); returns counts.

    Each member document is read and counted once (:func:`analyse.themes.count_document`)
    however many levels hold it; a cluster without stored members is left alone.
    """
    named_levels = _levels_named(engine, clustering_id, levels)
    members = _members(engine, clustering_id, per_domain, named_levels)
    naming = _Naming(options, taxonomy, members)
    seen = _Partitions(
        {d: count_document(doc, options) for d, doc in members.documents.items()},
        ThemeCache(options),
    )
    categories: Counter[str] = Counter()
    n_levels = 0
    with session_scope(engine) as s:
        stmt = select(Cluster).where(Cluster.clustering_id == clustering_id)
        by_level: dict[int, list[Cluster]] = defaultdict(list)
        for cl in s.scalars(_of_levels(stmt, named_levels).order_by(Cluster.level, Cluster.label)):
            if cl.id in members.clusters:
                by_level[cl.level].append(cl)
        for level in sorted(by_level):  # the final clusters (-1) first, then in order
            done = _name_level(by_level[level], naming, seen)
            if level == -1:
                categories.update(done)
            else:
                n_levels += len(done)
    return ClusteringAnalysis(sum(categories.values()), dict(categories), n_levels)


def store_category_labels(engine: Engine, taxonomy: Taxonomy) -> int:
    """Store the taxonomy's category labels (English and Russian, in the file's order) for
    readers (:func:`store.networks.category_labels`); returns the rows written."""
    return network_tables.replace_category_labels(
        engine,
        {lang: taxonomy.labels(lang, with_unknown=True) for lang in ("en", "ru")},
        taxonomy.colors(),
    )


def store_aggregates(engine: Engine) -> dict[str, Any]:
    """Rebuild the aggregates the dashboard and the report read (:mod:`store.aggregates`:
    Tables 2-3, category and country shares, the Network page's domains, per crawl run)
    from the views, after the categories are stored (the only figures the readers read).

    Returns
    -------
    dict
        ``aggregate_runs``, ``aggregate_rows``, ``aggregate_seconds``.
    """
    return aggregates.refresh(engine)


@dataclass(frozen=True)
class NetworksResult:
    """What :func:`store_networks` stored: the (crawl run, direction) pairs and its
    seconds."""

    network_runs: int
    network_seconds: float


def _store_network(
    engine: Engine, run_id: int, direction: str, own: dict[str, tuple[str, ...]]
) -> None:
    """The co-link overlaps, shared domains and GEXF graph of one run and direction
    (``own``: each university's own domains, which the graph draws as the university)."""
    names = list(own)
    env = analytics.environment(engine, run_id=run_id, direction=direction)
    weight = "links" if direction == "outgoing" else "pages"
    edges = [(r.university, r.domain, getattr(r, weight)) for r in env]
    overlaps = networks.colink_overlap(edges, universities=names)
    shared = networks.shared_domains(edges, min_universities=2)
    graph = networks.environment_graph(
        edges,
        direction=direction,
        university_attrs={r.university: {"country": r.country} for r in env},
        domain_attrs={
            r.domain: {"category": r.category or "", "language": r.language or ""} for r in env
        },
        university_domains=own,
    )
    with tempfile.TemporaryDirectory(prefix="webometrics-gexf-") as tmp:
        (path,) = networks.write_graph(graph, Path(tmp) / "graph", formats=("gexf",))
        gexf = path.read_bytes()
    network_tables.replace_network(
        engine, run_id, direction, overlaps=overlaps, shared=shared, files={"gexf": gexf}
    )


def store_networks(engine: Engine, *, progress: bool = True) -> NetworksResult:
    """Compute and store, for every crawl run with environment data and both directions,
    the co-link overlaps of the universities, the domains they share and the whole
    university-domain graph as GEXF (:mod:`analyse.networks` over the rows of
    ``v_environment``), for the dashboard to read (:mod:`store.networks`).

    Returns
    -------
    NetworksResult
        ``network_runs`` (run and direction pairs stored), ``network_seconds``.
    """
    started = time.perf_counter()
    own = {u.name: u.domains for u in queries.list_universities(engine)}
    done = 0
    for run_id in tqdm(
        analytics.run_ids(engine), desc="networks", unit="run", disable=not progress or None
    ):
        for direction in DIRECTIONS:
            _store_network(engine, run_id, direction, own)
            done += 1
    return NetworksResult(done, round(time.perf_counter() - started, 3))


@dataclass(frozen=True)
class AnalyseScope:
    """What one analyse run works on.

    Attributes
    ----------
    clustering_ids : tuple of int, optional
        Analyse these clusterings; by default those whose final clusters have no theme
        yet (all of them with ``redo``).
    redo : bool
        Analyse every clustering again (a clustering analysed before its levels were
        named gets their themes so, or by its id).
    domains : bool
        Categorise the domains first (on by default; the clusters vote with the stored
        categories).
    """

    clustering_ids: tuple[int, ...] | None = None
    redo: bool = False
    domains: bool = True


#: The fields of :class:`AnalyseResult` left out of its statistics when the domains were
#: not categorised (``AnalyseScope.domains`` off).
_DOMAIN_FIELDS = frozenset({"domains", "domains_new", "domains_overridden", "domain_categories"})


@dataclass(frozen=True, kw_only=True)
class AnalyseResult(StageResult):
    """The statistics of an analyse run: the taxonomy file, the domains categorised (None
    when they were not), the clusterings and final clusters named with their categories,
    the clusters of their stored levels named (``level_clusters``), the aggregates
    (:func:`store_aggregates`) and networks (:func:`store_networks`) stored, and the
    seconds."""

    taxonomy: str
    domains: int | None = None
    domains_new: int | None = None
    domains_overridden: int | None = None
    domain_categories: dict[str, int] | None = None
    clusterings: int
    clusters: int
    level_clusters: int
    cluster_categories: dict[str, int]
    aggregate_runs: int
    aggregate_rows: int
    aggregate_seconds: float
    network_runs: int
    network_seconds: float
    seconds: float

    #: the domains' figures only when they were categorised
    OMIT_WHEN_NONE: ClassVar[frozenset[str]] = _DOMAIN_FIELDS


def _theme_options(cfg: AnalyseSettings) -> ThemeOptions:
    return ThemeOptions(
        n_terms=cfg.theme_terms,
        n_shingles=cfg.theme_shingles,
        shingle_sizes=cfg.shingle_sizes,
        n_domains=cfg.top_domains,
        n_titles=cfg.titles,
        max_words=cfg.max_words,
    )


def _domain_fields(result: DomainsResult | None) -> dict[str, Any]:
    """The domain fields of :class:`AnalyseResult` (none when not categorised)."""
    if result is None:
        return {}
    return {
        "domains": result.domains,
        "domains_new": result.new,
        "domains_overridden": result.overridden,
        "domain_categories": result.categories,
    }


def _analyse_clusterings(
    engine: Engine, todo: Sequence[int], taxonomy: Taxonomy, cfg: AnalyseSettings, progress: bool
) -> ClusteringAnalysis:
    """Name the clusterings ``todo``: the final clusters named, the count per category,
    and the clusters of the stored levels named."""
    options = _theme_options(cfg)
    categories: Counter[str] = Counter()
    n_clusters = n_levels = 0
    for cid in tqdm(todo, desc="name clusters", unit="clustering", disable=not progress or None):
        done = analyse_clustering(
            engine, cid, taxonomy, options, per_domain=cfg.pages_per_domain, levels=cfg.levels
        )
        n_clusters += done.clusters
        n_levels += done.level_clusters
        categories.update(done.categories)
    return ClusteringAnalysis(n_clusters, dict(sorted(categories.items())), n_levels)


@refreshes_figures
def run(
    engine: Engine,
    settings: Settings,
    scope: AnalyseScope | None = None,
    *,
    progress: bool = False,
) -> AnalyseResult:
    """Categorise the external domains, then name and categorise the clusters.

    Parameters
    ----------
    engine : Engine
    settings : Settings
        ``[analyse]``: the taxonomy file, theme sizes, pages per domain, the levels named.
    scope : AnalyseScope, optional
        The clusterings to analyse and whether to categorise the domains first; default
        :class:`AnalyseScope()`.
    progress : bool
        Show progress bars.

    Returns
    -------
    AnalyseResult
        ``domains``, ``domains_new``, ``domains_overridden``, ``clusterings``,
        ``clusters`` (final clusters), ``level_clusters`` (clusters of the stored levels),
        ``domain_categories`` and ``cluster_categories`` (final clusters per category),
        ``taxonomy``, the aggregates' ``aggregate_runs``, ``aggregate_rows``
        and ``aggregate_seconds`` (:func:`store_aggregates`), ``network_runs`` and
        ``network_seconds`` (:func:`store_networks`), ``seconds``.

    Raises
    ------
    ConfigError
        The taxonomy is missing, invalid or lacks an override's category (nothing written).
    ParameterError
        A clustering id does not exist.
    """
    started = time.perf_counter()
    scope = scope if scope is not None else AnalyseScope()
    cfg = settings.analyse
    taxonomy = load_taxonomy(cfg.taxonomy)
    check_overrides(engine, taxonomy)  # before any write: a stale override stops here
    store_category_labels(engine, taxonomy)
    domains = None
    if scope.domains:
        domains = _categorise_all(engine, taxonomy, cfg, progress)
    todo = _clusterings_to_do(engine, scope.clustering_ids, scope.redo)
    named = _analyse_clusterings(engine, todo, taxonomy, cfg, progress)
    aggregated = store_aggregates(engine)
    nets = store_networks(engine, progress=progress)
    seconds = round(time.perf_counter() - started, 3)
    log.info(
        "analyse: %s domains categorised, %d clusters of %d clusterings named (and %d of "
        "their levels) in %.1f s",
        domains.domains if domains is not None else 0,
        named.clusters,
        len(todo),
        named.level_clusters,
        seconds,
    )
    return AnalyseResult(
        taxonomy=taxonomy.source,
        **_domain_fields(domains),
        clusterings=len(todo),
        clusters=named.clusters,
        level_clusters=named.level_clusters,
        cluster_categories=named.categories,
        aggregate_runs=aggregated["aggregate_runs"],
        aggregate_rows=aggregated["aggregate_rows"],
        aggregate_seconds=aggregated["aggregate_seconds"],
        network_runs=nets.network_runs,
        network_seconds=nets.network_seconds,
        seconds=seconds,
    )
