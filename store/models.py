"""SQLAlchemy 2.0 models of everything the pipeline stores.

Data flow: universities -> crawl runs -> pages and links -> environment (university x
external registered domain x direction) -> documents (a page or a whole domain) ->
MinHash signatures -> near-duplicate groups -> clusterings -> clusters.

Every constraint is named through :data:`NAMING_CONVENTION`, so Alembic's batch mode on
SQLite and plain ``ALTER`` on PostgreSQL see the same names.
"""

from __future__ import annotations

import datetime as dt
from typing import Any, ClassVar

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    CheckConstraint,
    Date,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship
from sqlalchemy.types import TypeDecorator

NAMING_CONVENTION = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


def utcnow() -> dt.datetime:
    """The current time, timezone-aware UTC."""
    return dt.datetime.now(dt.UTC)


class Base(DeclarativeBase):
    """Declarative base with the project's naming convention."""

    metadata = MetaData(naming_convention=NAMING_CONVENTION)
    type_annotation_map: ClassVar[dict[Any, Any]] = {dict[str, Any]: JSON, list[Any]: JSON}


class UTCDateTime(TypeDecorator[dt.datetime]):
    """A timezone-aware UTC timestamp on every backend (SQLite stores no zone)."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: dt.datetime | None, dialect: Any) -> dt.datetime | None:
        if value is not None and value.tzinfo is not None:
            value = value.astimezone(dt.UTC)
        return value

    def process_result_value(self, value: dt.datetime | None, dialect: Any) -> dt.datetime | None:
        if value is not None:
            value = (
                value.replace(tzinfo=dt.UTC) if value.tzinfo is None else value.astimezone(dt.UTC)
            )
        return value


Timestamp = UTCDateTime()


class University(Base):
    """A university: name, country, Webometrics rank and its registered domains."""

    __tablename__ = "university"

    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(300), unique=True)
    country: Mapped[str] = mapped_column(String(100))
    rank: Mapped[int | None] = mapped_column(Integer)
    impact_rank: Mapped[int | None] = mapped_column(Integer)  # Webometrics Impact rank
    home_urls: Mapped[list[Any]] = mapped_column(JSON, default=list)
    created_at: Mapped[dt.datetime] = mapped_column(Timestamp, default=utcnow)

    domains: Mapped[list[UniversityDomain]] = relationship(
        back_populates="university",
        cascade="all, delete-orphan",
        order_by="UniversityDomain.domain",
    )

    def __repr__(self) -> str:
        return f"University({self.name!r}, {self.country!r})"


class UniversityDomain(Base):
    """One registered domain of a university (``spbu.ru``); subdomains belong to it."""

    __tablename__ = "university_domain"

    id: Mapped[int] = mapped_column(primary_key=True)
    university_id: Mapped[int] = mapped_column(
        ForeignKey("university.id", ondelete="CASCADE"), index=True
    )
    domain: Mapped[str] = mapped_column(String(253), unique=True)

    university: Mapped[University] = relationship(back_populates="domains")


class RankEdition(Base):
    """An edition of a ranking (0019): ``webometrics universities import-ranks FILE
    --edition NAME`` stores one, and the ranks of the universities file are the edition
    :data:`FILE_EDITION`. ``published`` (optional) orders the editions; without it the
    import time does (the universities file's edition is the oldest: the default only
    while no other is stored). The newest edition's ranks are copied to ``university.rank`` and
    ``impact_rank`` (:func:`store.rank_editions.sync_current`), which the views read.
    """

    __tablename__ = "rank_edition"

    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(100), unique=True)
    source: Mapped[str | None] = mapped_column(String(500))  # the file it was read from
    published: Mapped[dt.date | None] = mapped_column(Date)
    imported_at: Mapped[dt.datetime] = mapped_column(Timestamp, default=utcnow)
    #: rows of the table that matched no stored university, or ambiguously
    unmatched_rows: Mapped[int] = mapped_column(Integer, default=0)

    ranks: Mapped[list[UniversityRank]] = relationship(
        back_populates="edition", cascade="all, delete-orphan", passive_deletes=True
    )


#: the edition holding the ranks written in the universities file
FILE_EDITION = "universities file"


class UniversityRank(Base):
    """A university's ranks in one edition (0019), with the row of the table it came from
    and how it was matched (``domain``, ``registry``, ``name``, ``registry name``,
    ``file``)."""

    __tablename__ = "university_rank"
    __table_args__ = (UniqueConstraint("edition_id", "university_id"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    edition_id: Mapped[int] = mapped_column(ForeignKey("rank_edition.id", ondelete="CASCADE"))
    university_id: Mapped[int] = mapped_column(
        ForeignKey("university.id", ondelete="CASCADE"), index=True
    )
    rank: Mapped[int | None] = mapped_column(Integer)
    impact_rank: Mapped[int | None] = mapped_column(Integer)
    name_given: Mapped[str | None] = mapped_column(String(300))  # the table's name
    domain_given: Mapped[str | None] = mapped_column(String(500))  # its domain or URL
    line: Mapped[int | None] = mapped_column(Integer)
    matched_by: Mapped[str] = mapped_column(String(40))

    edition: Mapped[RankEdition] = relationship(back_populates="ranks")


class CrawlRun(Base):
    """One crawl (or import) run with its settings, status and statistics."""

    __tablename__ = "crawl_run"
    __table_args__ = (
        CheckConstraint(
            "status IN ('running', 'finished', 'failed', 'interrupted')", name="status"
        ),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    kind: Mapped[str] = mapped_column(String(40))  # outgoing | citing | both | import-warc ...
    started_at: Mapped[dt.datetime] = mapped_column(Timestamp, default=utcnow)
    finished_at: Mapped[dt.datetime | None] = mapped_column(Timestamp)
    status: Mapped[str] = mapped_column(String(20), default="running")
    settings: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    stats: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    error: Mapped[str | None] = mapped_column(Text)
    pipeline_run_id: Mapped[int | None] = mapped_column(
        ForeignKey("pipeline_run.id", ondelete="SET NULL"), index=True
    )
    # written every [database] heartbeat_seconds while the run's process lives (0011)
    heartbeat_at: Mapped[dt.datetime | None] = mapped_column(Timestamp)
    # the collection (0018): NULL for the live web, else the web archive read
    # (core.archives.ARCHIVES) and the period whose captures were read (days, inclusive)
    archive: Mapped[str | None] = mapped_column(String(20))
    archive_from: Mapped[dt.date | None] = mapped_column(Date)
    archive_to: Mapped[dt.date | None] = mapped_column(Date)


class Page(Base):
    """A fetched URL: HTTP facts, the raw body (zlib) or a WARC reference, and the
    extraction result (main text, title, language, status and reason)."""

    __tablename__ = "page"
    __table_args__ = (
        # the analyst views (migration 0003): page languages per domain, site pages by run
        Index("ix_page_domain_language_role", "registered_domain", "language", "role"),
        Index(
            "ix_page_university_role_runs", "university_id", "role", "first_run_id", "last_run_id"
        ),
        # the aggregates' freshness check (migration 0010): the newest extraction
        Index("ix_page_extracted_at", "extracted_at"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    url: Mapped[str] = mapped_column(Text, unique=True)
    host: Mapped[str] = mapped_column(String(253), index=True)
    registered_domain: Mapped[str] = mapped_column(String(253), index=True)
    university_id: Mapped[int | None] = mapped_column(
        ForeignKey("university.id", ondelete="SET NULL"), index=True
    )
    role: Mapped[str] = mapped_column(String(20), default="external")  # university|external|citing
    depth: Mapped[int | None] = mapped_column(Integer)
    http_status: Mapped[int | None] = mapped_column(Integer)
    content_type: Mapped[str | None] = mapped_column(String(200))
    charset: Mapped[str | None] = mapped_column(String(50))
    fetched_at: Mapped[dt.datetime | None] = mapped_column(Timestamp)
    content_hash: Mapped[str | None] = mapped_column(String(64), index=True)
    content_length: Mapped[int | None] = mapped_column(BigInteger)
    body: Mapped[bytes | None] = mapped_column(LargeBinary)  # zlib-compressed raw body
    warc_file: Mapped[str | None] = mapped_column(Text)
    warc_offset: Mapped[int | None] = mapped_column(BigInteger)
    etag: Mapped[str | None] = mapped_column(String(300))
    last_modified: Mapped[str | None] = mapped_column(String(100))
    fetch_error: Mapped[str | None] = mapped_column(Text)
    first_run_id: Mapped[int | None] = mapped_column(
        ForeignKey("crawl_run.id", ondelete="SET NULL"), index=True
    )
    last_run_id: Mapped[int | None] = mapped_column(
        ForeignKey("crawl_run.id", ondelete="SET NULL"), index=True
    )
    # extraction
    text: Mapped[str | None] = mapped_column(Text)
    title: Mapped[str | None] = mapped_column(Text)
    date: Mapped[str | None] = mapped_column(String(40))
    sitename: Mapped[str | None] = mapped_column(Text)
    language: Mapped[str | None] = mapped_column(String(10), index=True)
    language_score: Mapped[float | None] = mapped_column(Float)
    extraction_status: Mapped[str] = mapped_column(String(20), default="pending", index=True)
    extraction_reason: Mapped[str | None] = mapped_column(Text)
    extracted_at: Mapped[dt.datetime | None] = mapped_column(Timestamp)
    shingles: Mapped[bytes | None] = mapped_column(LargeBinary)  # uint64 little-endian
    # an archived page (0018; docs/archives.md): the archive it was read from, the URL
    # the archive captured (``url`` is then the capture's memento URL, so every version
    # of a URL is its own row), when it was captured, and ``captured`` or ``no_capture``
    # (no capture in the run's period); all NULL for a page of the live web
    archive: Mapped[str | None] = mapped_column(String(20))
    original_url: Mapped[str | None] = mapped_column(Text, index=True)
    captured_at: Mapped[dt.datetime | None] = mapped_column(Timestamp)
    capture_status: Mapped[str | None] = mapped_column(String(20))


class Link(Base):
    """A hyperlink found on a stored page (source) to a target URL."""

    __tablename__ = "link"
    __table_args__ = (
        UniqueConstraint("run_id", "source_page_id", "target_url"),
        Index("ix_link_target_domain_run", "target_domain", "run_id"),
        # the analyst views (migration 0003): links of a run grouped by source and domain
        Index("ix_link_run_source_domain", "run_id", "source_page_id", "target_domain", "external"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    run_id: Mapped[int | None] = mapped_column(
        ForeignKey("crawl_run.id", ondelete="CASCADE"), index=True
    )
    source_page_id: Mapped[int] = mapped_column(
        ForeignKey("page.id", ondelete="CASCADE"), index=True
    )
    target_url: Mapped[str] = mapped_column(Text)
    target_host: Mapped[str] = mapped_column(String(253))
    target_domain: Mapped[str] = mapped_column(String(253))
    anchor: Mapped[str | None] = mapped_column(Text)
    nofollow: Mapped[bool] = mapped_column(Boolean, default=False)
    external: Mapped[bool] = mapped_column(Boolean, default=True)
    # where the crawler found it (migration 0020): html (an <a>/<area> of the fetched
    # HTML), script / json (speculative: a URL literal of a script or a JSON block),
    # rendered (only in the DOM after the page's scripts ran)
    found_in: Mapped[str] = mapped_column(String(10), default="html", server_default="html")


class Citation(Base):
    """A page that is said to link to a university (backlink export, URL list or crawl),
    with the result of checking it: verified, missing or error."""

    __tablename__ = "citation"
    __table_args__ = (
        UniqueConstraint("run_id", "university_id", "citing_url"),
        # the analyst views (migration 0003): verified citations of a run per university
        Index(
            "ix_citation_status_run_university",
            "status",
            "run_id",
            "university_id",
            "citing_domain",
        ),
        # the aggregates' freshness check (migration 0010): the newest verification
        Index("ix_citation_checked_at", "checked_at"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    run_id: Mapped[int | None] = mapped_column(
        ForeignKey("crawl_run.id", ondelete="CASCADE"), index=True
    )
    university_id: Mapped[int] = mapped_column(
        ForeignKey("university.id", ondelete="CASCADE"), index=True
    )
    citing_url: Mapped[str] = mapped_column(Text)
    citing_domain: Mapped[str] = mapped_column(String(253), index=True)
    page_id: Mapped[int | None] = mapped_column(ForeignKey("page.id", ondelete="SET NULL"))
    source: Mapped[str] = mapped_column(String(40))  # majestic | ahrefs | urls | crawl
    status: Mapped[str] = mapped_column(String(20), default="pending")  # verified|missing|error
    anchor: Mapped[str | None] = mapped_column(Text)
    target_url: Mapped[str | None] = mapped_column(Text)
    checked_at: Mapped[dt.datetime | None] = mapped_column(Timestamp)


class Environment(Base):
    """University x external registered domain x direction x run, with counts."""

    __tablename__ = "environment"
    __table_args__ = (
        UniqueConstraint("run_id", "university_id", "domain", "direction"),
        CheckConstraint("direction IN ('outgoing', 'citing')", name="direction"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    run_id: Mapped[int] = mapped_column(ForeignKey("crawl_run.id", ondelete="CASCADE"), index=True)
    university_id: Mapped[int] = mapped_column(
        ForeignKey("university.id", ondelete="CASCADE"), index=True
    )
    domain: Mapped[str] = mapped_column(String(253), index=True)
    direction: Mapped[str] = mapped_column(String(10))
    link_count: Mapped[int] = mapped_column(Integer, default=0)
    page_count: Mapped[int] = mapped_column(Integer, default=0)


class Document(Base):
    """The unit that is clustered: one page, or one whole registered domain.

    Two representations of its text, both built by the extract stage: ``shingles``, the
    sorted distinct ``uint64`` shingle hashes (MinHash, near duplicates, LSH single-link),
    and ``terms``, the counts of its stemmed 1-word terms (:mod:`extract.terms`; at most
    ``[domain] max_terms``, the most frequent) that tf-idf weighting starts from.
    ``terms`` is NULL for documents built before revision 0005; the next ``webometrics
    extract`` rebuilds them.
    """

    __tablename__ = "document"
    __table_args__ = (
        UniqueConstraint("unit", "key"),
        CheckConstraint("unit IN ('page', 'domain')", name="unit"),
        # the aggregates' freshness check (migration 0010): the newest (re)built document
        Index("ix_document_created_at", "created_at"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    unit: Mapped[str] = mapped_column(String(10))
    key: Mapped[str] = mapped_column(Text)  # the page URL or the registered domain
    page_id: Mapped[int | None] = mapped_column(ForeignKey("page.id", ondelete="CASCADE"))
    domain: Mapped[str] = mapped_column(String(253), index=True)
    language: Mapped[str | None] = mapped_column(String(10))
    n_pages: Mapped[int] = mapped_column(Integer, default=1)
    text_length: Mapped[int] = mapped_column(Integer, default=0)
    n_shingles: Mapped[int] = mapped_column(Integer, default=0)
    shingles: Mapped[bytes | None] = mapped_column(LargeBinary)  # uint64 little-endian
    shingle_k: Mapped[int | None] = mapped_column(Integer)
    # term -> count (JSON object); JSON on PostgreSQL, TEXT on SQLite
    terms: Mapped[dict[str, int] | None] = mapped_column(JSON)
    n_terms: Mapped[int] = mapped_column(Integer, default=0)  # distinct terms stored
    fetched_at: Mapped[dt.datetime | None] = mapped_column(Timestamp)
    created_at: Mapped[dt.datetime] = mapped_column(Timestamp, default=utcnow)


class Signature(Base):
    """A MinHash signature; num_perm, seed, scheme and hash function travel with it."""

    __tablename__ = "signature"
    __table_args__ = (UniqueConstraint("document_id", "num_perm", "seed", "scheme", "hash_func"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    document_id: Mapped[int] = mapped_column(ForeignKey("document.id", ondelete="CASCADE"))
    num_perm: Mapped[int] = mapped_column(Integer)
    seed: Mapped[int] = mapped_column(Integer)
    scheme: Mapped[str] = mapped_column(String(40))
    hash_func: Mapped[str] = mapped_column(String(40))
    hashvalues: Mapped[bytes] = mapped_column(LargeBinary)  # uint64 little-endian
    created_at: Mapped[dt.datetime] = mapped_column(Timestamp, default=utcnow)


class DedupRun(Base):
    """One run of a near-duplicate method over a set of documents."""

    __tablename__ = "dedup_run"

    id: Mapped[int] = mapped_column(primary_key=True)
    method: Mapped[str] = mapped_column(String(40), index=True)
    grouping: Mapped[str] = mapped_column(String(20), default="components")
    unit: Mapped[str] = mapped_column(String(10), default="page")
    parameters: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    n_documents: Mapped[int] = mapped_column(Integer, default=0)
    n_groups: Mapped[int] = mapped_column(Integer, default=0)
    n_duplicates: Mapped[int] = mapped_column(Integer, default=0)
    seconds: Mapped[float | None] = mapped_column(Float)
    created_at: Mapped[dt.datetime] = mapped_column(Timestamp, default=utcnow)

    groups: Mapped[list[DuplicateGroup]] = relationship(
        back_populates="dedup_run", cascade="all, delete-orphan"
    )


class DuplicateGroup(Base):
    """A group of near-duplicate documents found by one method, with its canonical one."""

    __tablename__ = "duplicate_group"

    id: Mapped[int] = mapped_column(primary_key=True)
    dedup_run_id: Mapped[int] = mapped_column(
        ForeignKey("dedup_run.id", ondelete="CASCADE"), index=True
    )
    method: Mapped[str] = mapped_column(String(40))
    canonical_document_id: Mapped[int] = mapped_column(
        ForeignKey("document.id", ondelete="CASCADE")
    )
    size: Mapped[int] = mapped_column(Integer)

    dedup_run: Mapped[DedupRun] = relationship(back_populates="groups")
    members: Mapped[list[DuplicateMember]] = relationship(
        back_populates="group", cascade="all, delete-orphan"
    )


class DuplicateMember(Base):
    """A document in a near-duplicate group."""

    __tablename__ = "duplicate_member"
    __table_args__ = (UniqueConstraint("group_id", "document_id"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    group_id: Mapped[int] = mapped_column(
        ForeignKey("duplicate_group.id", ondelete="CASCADE"), index=True
    )
    document_id: Mapped[int] = mapped_column(
        ForeignKey("document.id", ondelete="CASCADE"), index=True
    )

    group: Mapped[DuplicateGroup] = relationship(back_populates="members")


class Clustering(Base):
    """One clustering: algorithm, linkage, parameters, unit and the filter it ran on."""

    __tablename__ = "clustering"

    id: Mapped[int] = mapped_column(primary_key=True)
    algorithm: Mapped[str] = mapped_column(String(40), default="lsh-link")
    linkage: Mapped[str] = mapped_column(String(20), default="single")
    unit: Mapped[str] = mapped_column(String(10))
    parameters: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    filter: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    n_documents: Mapped[int] = mapped_column(Integer, default=0)
    n_excluded_duplicates: Mapped[int] = mapped_column(Integer, default=0)
    n_clusters: Mapped[int] = mapped_column(Integer, default=0)
    seconds: Mapped[float | None] = mapped_column(Float)
    levels: Mapped[list[Any]] = mapped_column(JSON, default=list)
    created_at: Mapped[dt.datetime] = mapped_column(Timestamp, default=utcnow)

    clusters: Mapped[list[Cluster]] = relationship(
        back_populates="clustering", cascade="all, delete-orphan"
    )


class Cluster(Base):
    """A cluster at one level of a clustering: size, theme, category and override."""

    __tablename__ = "cluster"
    __table_args__ = (UniqueConstraint("clustering_id", "level", "label"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    clustering_id: Mapped[int] = mapped_column(
        ForeignKey("clustering.id", ondelete="CASCADE"), index=True
    )
    level: Mapped[int] = mapped_column(Integer, default=0)  # -1 = final labels
    label: Mapped[int] = mapped_column(Integer)
    size: Mapped[int] = mapped_column(Integer)
    theme_terms: Mapped[list[Any]] = mapped_column(JSON, default=list)
    top_shingles: Mapped[list[Any]] = mapped_column(JSON, default=list)
    top_domains: Mapped[list[Any]] = mapped_column(JSON, default=list)
    titles: Mapped[list[Any]] = mapped_column(JSON, default=list)
    category: Mapped[str | None] = mapped_column(String(40), index=True)
    category_score: Mapped[float | None] = mapped_column(Float)
    # members with evidence that voted, and the share of them whose own category won
    category_support: Mapped[float | None] = mapped_column(Float)
    category_voters: Mapped[int | None] = mapped_column(Integer)
    category_evidence: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    override_category: Mapped[str | None] = mapped_column(String(40))

    clustering: Mapped[Clustering] = relationship(back_populates="clusters")
    members: Mapped[list[ClusterMember]] = relationship(
        back_populates="cluster", cascade="all, delete-orphan"
    )


class ClusterMember(Base):
    """A document in a cluster."""

    __tablename__ = "cluster_member"
    __table_args__ = (UniqueConstraint("cluster_id", "document_id"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    cluster_id: Mapped[int] = mapped_column(
        ForeignKey("cluster.id", ondelete="CASCADE"), index=True
    )
    document_id: Mapped[int] = mapped_column(
        ForeignKey("document.id", ondelete="CASCADE"), index=True
    )

    cluster: Mapped[Cluster] = relationship(back_populates="members")


class DomainCategory(Base):
    """The category of an external registered domain, its score and evidence, and the
    analyst's override; keyed on the domain so it survives re-crawling and re-clustering."""

    __tablename__ = "domain_category"
    __table_args__ = (
        # the aggregates' freshness check (migration 0010): the newest category, override
        Index("ix_domain_category_updated_at", "updated_at"),
        Index("ix_domain_category_override_at", "override_at"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    domain: Mapped[str] = mapped_column(String(253), unique=True)
    category: Mapped[str | None] = mapped_column(String(40))
    score: Mapped[float | None] = mapped_column(Float)
    evidence: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    override_category: Mapped[str | None] = mapped_column(String(40))
    override_note: Mapped[str | None] = mapped_column(Text)
    override_at: Mapped[dt.datetime | None] = mapped_column(Timestamp)
    updated_at: Mapped[dt.datetime] = mapped_column(Timestamp, default=utcnow)


class DomainCategoryHistory(Base):
    """One analyst's override action on a domain (set or clear): who, when, the category
    and the note; append-only, written in the transaction that changes
    :class:`DomainCategory` (:mod:`store.overrides`), so no note is lost when two analysts
    override one domain (0012)."""

    __tablename__ = "domain_category_history"
    __table_args__ = (
        Index("ix_domain_category_history_domain_id", "domain", "id"),
        CheckConstraint("action IN ('set', 'clear')", name="action"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    domain: Mapped[str] = mapped_column(String(253))
    action: Mapped[str] = mapped_column(String(10))  # set | clear
    category: Mapped[str | None] = mapped_column(String(40))  # the override set (a key)
    note: Mapped[str | None] = mapped_column(Text)
    analyst: Mapped[str | None] = mapped_column(String(100))  # who, as they named themselves
    at: Mapped[dt.datetime] = mapped_column(Timestamp, default=utcnow)


class SiteRule(Base):
    """An analyst's web-entity rule (0016; :mod:`core.entities`, :mod:`store.entities`).

    ``kind`` ``split``: ``key`` (a host or a URL prefix, ``vk.com/spbu``) is a site of its
    own. ``kind`` ``merge``: the sites ``key`` and ``members`` are one site named ``key``.
    """

    __tablename__ = "site_rule"
    __table_args__ = (
        UniqueConstraint("kind", "key"),
        CheckConstraint("kind IN ('split', 'merge')", name="kind"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    kind: Mapped[str] = mapped_column(String(10))
    key: Mapped[str] = mapped_column(String(253))
    members: Mapped[list[Any]] = mapped_column(JSON, default=list)  # a merge's other keys
    note: Mapped[str | None] = mapped_column(Text)
    analyst: Mapped[str | None] = mapped_column(String(100))
    created_at: Mapped[dt.datetime] = mapped_column(Timestamp, default=utcnow)


class SiteRuleHistory(Base):
    """One action on the web-entity rules (0016): a rule added or removed (its kind, key,
    members, note, who, when), or the stored rows re-keyed by ``sites apply`` (``counts``:
    what changed, and the rules' fingerprint); append-only."""

    __tablename__ = "site_rule_history"
    __table_args__ = (
        CheckConstraint("action IN ('add', 'remove', 'apply')", name="action"),
        Index("ix_site_rule_history_key_id", "key", "id"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    action: Mapped[str] = mapped_column(String(10))
    kind: Mapped[str | None] = mapped_column(String(10))
    key: Mapped[str | None] = mapped_column(String(253))
    members: Mapped[list[Any]] = mapped_column(JSON, default=list)
    note: Mapped[str | None] = mapped_column(Text)
    analyst: Mapped[str | None] = mapped_column(String(100))
    counts: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    at: Mapped[dt.datetime] = mapped_column(Timestamp, default=utcnow)


class CategoryCoding(Base):
    """One coder's category of a domain, read from a filled coding sheet (0017).

    A coder codes a domain once: importing their sheet again replaces their codings of the
    domains it holds (:func:`store.review.import_sheet`). ``suggested`` and ``confidence``
    are what the sheet showed the coder; ``sheet`` and ``line`` where the coding was read.
    Two coders' codings of the same domains give Cohen's kappa; an agreement accepted or a
    disagreement adjudicated becomes the domain's override (:mod:`store.overrides`), with
    the coders named in its history's note.
    """

    __tablename__ = "category_coding"
    __table_args__ = (
        UniqueConstraint("coder", "domain"),
        Index("ix_category_coding_domain", "domain"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    domain: Mapped[str] = mapped_column(String(253))
    coder: Mapped[str] = mapped_column(String(100))  # as they named themselves
    category: Mapped[str] = mapped_column(String(40))  # a taxonomy key
    note: Mapped[str | None] = mapped_column(Text)
    suggested: Mapped[str | None] = mapped_column(String(40))
    confidence: Mapped[float | None] = mapped_column(Float)
    sheet: Mapped[str | None] = mapped_column(String(300))  # the file's name
    line: Mapped[int | None] = mapped_column(Integer)
    coded_at: Mapped[dt.datetime] = mapped_column(Timestamp, default=utcnow)


class PipelineRun(Base):
    """A whole-pipeline run (crawl -> extract -> dedup -> cluster -> themes) with the
    status and timing of each stage."""

    __tablename__ = "pipeline_run"

    id: Mapped[int] = mapped_column(primary_key=True)
    started_at: Mapped[dt.datetime] = mapped_column(Timestamp, default=utcnow)
    finished_at: Mapped[dt.datetime | None] = mapped_column(Timestamp)
    status: Mapped[str] = mapped_column(String(20), default="running")
    trigger: Mapped[str] = mapped_column(String(20), default="manual")  # manual | schedule
    universities_file: Mapped[str | None] = mapped_column(Text)
    stages: Mapped[list[Any]] = mapped_column(JSON, default=list)
    error: Mapped[str | None] = mapped_column(Text)
    heartbeat_at: Mapped[dt.datetime | None] = mapped_column(Timestamp)  # (0011)


class CategoryLabel(Base):
    """The label of a taxonomy category in one language, written by the analyse stage
    from the taxonomy it used, so that readers (the dashboard) need not load the file."""

    __tablename__ = "category_label"
    __table_args__ = (UniqueConstraint("category", "language"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    category: Mapped[str] = mapped_column(String(40))
    language: Mapped[str] = mapped_column(String(10))
    label: Mapped[str] = mapped_column(Text)
    position: Mapped[int] = mapped_column(Integer)  # the order of the taxonomy file
    color: Mapped[str | None] = mapped_column(String(7))  # "#rrggbb", one per category


class ColinkOverlap(Base):
    """Co-link overlap of two universities in one run and direction (co-outlinks:
    domains both link to; co-inlinks: domains that link to both), written by the analyse
    stage (:func:`analyse.networks.colink_overlap`); ``university_a`` sorts first."""

    __tablename__ = "colink_overlap"
    __table_args__ = (
        UniqueConstraint("run_id", "direction", "university_a_id", "university_b_id"),
        CheckConstraint("direction IN ('outgoing', 'citing')", name="direction"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    run_id: Mapped[int] = mapped_column(ForeignKey("crawl_run.id", ondelete="CASCADE"), index=True)
    direction: Mapped[str] = mapped_column(String(10))
    university_a_id: Mapped[int] = mapped_column(ForeignKey("university.id", ondelete="CASCADE"))
    university_b_id: Mapped[int] = mapped_column(ForeignKey("university.id", ondelete="CASCADE"))
    shared: Mapped[int] = mapped_column(Integer)
    jaccard: Mapped[float] = mapped_column(Float)
    only_a: Mapped[int] = mapped_column(Integer)
    only_b: Mapped[int] = mapped_column(Integer)


class SharedDomain(Base):
    """An external domain linked with at least two universities in one run and direction,
    written by the analyse stage (:func:`analyse.networks.shared_domains`)."""

    __tablename__ = "shared_domain"
    __table_args__ = (
        UniqueConstraint("run_id", "direction", "domain"),
        CheckConstraint("direction IN ('outgoing', 'citing')", name="direction"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    run_id: Mapped[int] = mapped_column(ForeignKey("crawl_run.id", ondelete="CASCADE"), index=True)
    direction: Mapped[str] = mapped_column(String(10))
    domain: Mapped[str] = mapped_column(String(253))
    n_universities: Mapped[int] = mapped_column(Integer)
    universities: Mapped[list[Any]] = mapped_column(JSON, default=list)  # names, sorted
    weight: Mapped[float] = mapped_column(Float)


class NetworkFile(Base):
    """A run's whole university-domain graph of one direction in a file format (GEXF),
    zlib-compressed, written by the analyse stage for download."""

    __tablename__ = "network_file"
    __table_args__ = (
        UniqueConstraint("run_id", "direction", "format"),
        CheckConstraint("direction IN ('outgoing', 'citing')", name="direction"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    run_id: Mapped[int] = mapped_column(ForeignKey("crawl_run.id", ondelete="CASCADE"), index=True)
    direction: Mapped[str] = mapped_column(String(10))
    format: Mapped[str] = mapped_column(String(10))
    content: Mapped[bytes] = mapped_column(LargeBinary)
    built_at: Mapped[dt.datetime] = mapped_column(Timestamp, default=utcnow)


class CitingNode(Base):
    """A domain or host that links to a university in a web graph (revision 0007).

    One row per crawl run x university x graph level x citing node, written by
    ``webometrics citing commoncrawl-graph``: ``source`` is ``commoncrawl-graph:<release>``;
    ``node`` the citing domain or host (normal notation, IDNA) and ``domain`` its
    registered domain (the run's ``environment`` rows group them); ``links`` the
    university's nodes it links to; ``num_hosts`` the hosts of a citing domain in the
    graph (domain level); harmonic centrality and PageRank with their positions from the
    release's ranks file (NULL without one).
    """

    __tablename__ = "citing_node"
    __table_args__ = (
        UniqueConstraint("run_id", "university_id", "level", "node"),
        CheckConstraint("level IN ('domain', 'host')", name="level"),
        Index("ix_citing_node_university_source", "university_id", "source", "domain"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    run_id: Mapped[int] = mapped_column(ForeignKey("crawl_run.id", ondelete="CASCADE"), index=True)
    university_id: Mapped[int] = mapped_column(
        ForeignKey("university.id", ondelete="CASCADE"), index=True
    )
    source: Mapped[str] = mapped_column(String(80))
    level: Mapped[str] = mapped_column(String(10))
    node: Mapped[str] = mapped_column(String(253))
    domain: Mapped[str] = mapped_column(String(253), index=True)
    links: Mapped[int] = mapped_column(Integer, default=1)
    num_hosts: Mapped[int | None] = mapped_column(BigInteger)
    harmonic_rank: Mapped[int | None] = mapped_column(BigInteger)
    harmonic_centrality: Mapped[float | None] = mapped_column(Float)
    pagerank_rank: Mapped[int | None] = mapped_column(BigInteger)
    pagerank: Mapped[float | None] = mapped_column(Float)


# --- the aggregates the dashboard reads (revision 0010, written by the analyse stage) ----


class AggregateState(Base):
    """One crawl run whose aggregates the analyse stage built (:mod:`store.aggregates`).

    ``fingerprint`` sums up what the aggregates were computed from (newest ids and
    timestamps of links, citations, environment rows, pages, documents, categories and
    overrides, the universities and their domains); readers use the aggregates only while
    the database still has that fingerprint, else the views. ``outgoing_domains`` and
    ``citing_domains`` are the run's distinct domains over every university.
    """

    __tablename__ = "agg_state"

    id: Mapped[int] = mapped_column(primary_key=True)
    run_id: Mapped[int] = mapped_column(ForeignKey("crawl_run.id", ondelete="CASCADE"), unique=True)
    fingerprint: Mapped[str] = mapped_column(Text)
    built_at: Mapped[dt.datetime] = mapped_column(Timestamp, default=utcnow)
    outgoing_domains: Mapped[int] = mapped_column(BigInteger, default=0)
    citing_domains: Mapped[int] = mapped_column(BigInteger, default=0)


class AggregateEnvironment(Base):
    """The rows of ``v_environment`` of a run as the analyse stage saw them: run x
    university x direction x source x domain with links, pages, language and category."""

    __tablename__ = "agg_environment"
    __table_args__ = (
        Index("ix_agg_environment_run_direction_domain", "run_id", "direction", "domain"),
        Index("ix_agg_environment_run_university", "run_id", "university_id", "direction"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    run_id: Mapped[int] = mapped_column(ForeignKey("crawl_run.id", ondelete="CASCADE"))
    university_id: Mapped[int] = mapped_column(ForeignKey("university.id", ondelete="CASCADE"))
    direction: Mapped[str] = mapped_column(String(10))
    source: Mapped[str] = mapped_column(String(20))
    domain: Mapped[str] = mapped_column(String(253))
    links: Mapped[int] = mapped_column(BigInteger)
    pages: Mapped[int] = mapped_column(BigInteger)
    language: Mapped[str] = mapped_column(String(10))
    category: Mapped[str | None] = mapped_column(String(40))


class AggregateDomainCount(Base):
    """Distinct domains, summed links and pages per run x university x direction x
    source x category x language; ``source`` ``all`` counts a domain of two sources once
    (Tables 2-3, the category shares)."""

    __tablename__ = "agg_domain_count"
    __table_args__ = (Index("ix_agg_domain_count_run_source", "run_id", "source", "university_id"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    run_id: Mapped[int] = mapped_column(ForeignKey("crawl_run.id", ondelete="CASCADE"))
    university_id: Mapped[int] = mapped_column(ForeignKey("university.id", ondelete="CASCADE"))
    direction: Mapped[str] = mapped_column(String(10))
    source: Mapped[str] = mapped_column(String(20))
    category: Mapped[str] = mapped_column(String(40))
    language: Mapped[str] = mapped_column(String(10))
    domains: Mapped[int] = mapped_column(BigInteger)
    links: Mapped[int] = mapped_column(BigInteger)
    pages: Mapped[int] = mapped_column(BigInteger)


class AggregateTable2(Base):
    """The paper's Table 2 of a run and university (``v_university_table2``'s counts)."""

    __tablename__ = "agg_table2"
    __table_args__ = (UniqueConstraint("run_id", "university_id"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    run_id: Mapped[int] = mapped_column(ForeignKey("crawl_run.id", ondelete="CASCADE"))
    university_id: Mapped[int] = mapped_column(ForeignKey("university.id", ondelete="CASCADE"))
    site_pages: Mapped[int] = mapped_column(BigInteger)
    external_links: Mapped[int] = mapped_column(BigInteger)
    external_domains: Mapped[int] = mapped_column(BigInteger)
    citing_pages: Mapped[int] = mapped_column(BigInteger)
    citing_domains: Mapped[int] = mapped_column(BigInteger)


class AggregateCountryCount(Base):
    """Distinct domains of a country's universities per run x direction x category."""

    __tablename__ = "agg_country_count"
    __table_args__ = (Index("ix_agg_country_count_run_direction", "run_id", "direction"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    run_id: Mapped[int] = mapped_column(ForeignKey("crawl_run.id", ondelete="CASCADE"))
    country: Mapped[str] = mapped_column(String(100))
    direction: Mapped[str] = mapped_column(String(10))
    category: Mapped[str] = mapped_column(String(40))
    domains: Mapped[int] = mapped_column(BigInteger)


class AggregateNetworkDomain(Base):
    """One external domain of a run and direction over every university: how many
    universities it is linked with, summed links and pages, language and category (the
    Network page draws the domains shared by most universities)."""

    __tablename__ = "agg_network_domain"
    __table_args__ = (
        Index(
            "ix_agg_network_domain_run_direction_universities",
            "run_id",
            "direction",
            "universities",
        ),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    run_id: Mapped[int] = mapped_column(ForeignKey("crawl_run.id", ondelete="CASCADE"))
    direction: Mapped[str] = mapped_column(String(10))
    domain: Mapped[str] = mapped_column(String(253))
    universities: Mapped[int] = mapped_column(Integer)
    links: Mapped[int] = mapped_column(BigInteger)
    pages: Mapped[int] = mapped_column(BigInteger)
    language: Mapped[str] = mapped_column(String(10))
    category: Mapped[str | None] = mapped_column(String(40))


class AggregateCitingOverlap(Base):
    """``v_citing_overlap`` as the analyse stage saw it: citing domains and hosts per
    university and source kind, with the overlap (every stored run; the impact figures)."""

    __tablename__ = "agg_citing_overlap"

    id: Mapped[int] = mapped_column(primary_key=True)
    university_id: Mapped[int] = mapped_column(ForeignKey("university.id", ondelete="CASCADE"))
    university: Mapped[str] = mapped_column(String(300))
    country: Mapped[str] = mapped_column(String(100))
    kind: Mapped[str] = mapped_column(String(20))
    domains: Mapped[int] = mapped_column(BigInteger)
    hosts: Mapped[int | None] = mapped_column(BigInteger)
    only_here: Mapped[int | None] = mapped_column(BigInteger)
    missed: Mapped[int | None] = mapped_column(BigInteger)
    domains_all: Mapped[int] = mapped_column(BigInteger)


class AggregateCitingRank(Base):
    """``v_citing_rank`` as the analyse stage saw it: rank-weighted in-link counts per
    university, web graph source and level."""

    __tablename__ = "agg_citing_rank"

    id: Mapped[int] = mapped_column(primary_key=True)
    university_id: Mapped[int] = mapped_column(ForeignKey("university.id", ondelete="CASCADE"))
    university: Mapped[str] = mapped_column(String(300))
    country: Mapped[str] = mapped_column(String(100))
    source: Mapped[str] = mapped_column(String(80))
    level: Mapped[str] = mapped_column(String(10))
    nodes: Mapped[int] = mapped_column(BigInteger)
    domains: Mapped[int] = mapped_column(BigInteger)
    links: Mapped[int | None] = mapped_column(BigInteger)
    harmonic_sum: Mapped[float | None] = mapped_column(Float)
    pagerank_sum: Mapped[float | None] = mapped_column(Float)
    ranked_nodes: Mapped[int] = mapped_column(BigInteger)
