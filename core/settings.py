"""The typed settings object: defaults, ``webometrics.toml`` and the environment.

Precedence, lowest first: :mod:`core.defaults`, the TOML file (``--config``,
else ``$WEBOMETRICS_CONFIG``, else ``./webometrics.toml`` when present), then
environment variables ``WEBOMETRICS_<SECTION>__<KEY>`` (and ``WEBOMETRICS_DB_URL``
for the database URL). Unknown sections and keys are errors, not silently ignored.

Examples
--------
>>> s = Settings()
>>> s.cluster.threshold
0.3
>>> Settings.model_validate({"cluster": {"threshold": 0.5}}).cluster.threshold
0.5
"""

from __future__ import annotations

import os
import re
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from core import defaults as D
from core.archives import ARCHIVES, Archive, Period, parse_date
from core.choices import (
    Candidates,
    Canonical,
    ClusterMethod,
    Favor,
    Grouping,
    LeidenSimilarity,
    LevelThemes,
    Linkage,
    Quality,
    Scheme,
    Similarity,
    Unit,
)
from core.exceptions import ConfigError, ParameterError
from core.folders import user_folder


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, validate_default=True)


def _under_ceiling(value: int, key: str) -> int:
    """``value`` when it is at most the hard ceiling of a body, else a clear error."""
    ceiling = D.CRAWL_MAX_RESPONSE_BYTES_CEILING
    if value > ceiling:
        raise ValueError(
            f"{value:,} bytes is over the hard ceiling of {ceiling:,} bytes "
            f"({ceiling // 2**20} MiB) that bounds the crawler's memory per response; set "
            f"{key} to at most {ceiling}"
        )
    return value


class DatabaseSettings(_Section):
    """Where the data live: any SQLAlchemy URL (SQLite file or PostgreSQL); how often a
    running crawl or pipeline run writes its heartbeat, and how old a heartbeat may be
    before the run is taken as dead and marked ``interrupted``."""

    url: str = D.DB_URL
    heartbeat_seconds: float = Field(D.RUN_HEARTBEAT_SECONDS, gt=0, le=3600)
    run_lease_seconds: float = Field(D.RUN_LEASE_SECONDS, gt=0)

    @model_validator(mode="after")
    def _lease_outlasts_heartbeats(self) -> DatabaseSettings:
        if self.run_lease_seconds < 2 * self.heartbeat_seconds:
            raise ValueError(
                f"run_lease_seconds = {self.run_lease_seconds:g} must be at least twice "
                f"heartbeat_seconds = {self.heartbeat_seconds:g}, or a living run is taken "
                "as dead"
            )
        return self


class CrawlSettings(_Section):
    """Politeness, budgets and limits of the Scrapy spiders."""

    depth: int = Field(D.CRAWL_DEPTH, ge=0, le=50)
    max_pages_per_university: int = Field(D.CRAWL_MAX_PAGES_PER_UNIVERSITY, ge=1)
    external_pages_per_domain: int = Field(D.CRAWL_EXTERNAL_PAGES_PER_DOMAIN, ge=0)
    fixed_budgets: bool = D.CRAWL_FIXED_BUDGETS
    trap_guard: bool = D.CRAWL_TRAP_GUARD
    trap_template_pages: int = Field(D.CRAWL_TRAP_TEMPLATE_PAGES, ge=1)
    trap_template_gain: int = Field(D.CRAWL_TRAP_TEMPLATE_GAIN, ge=0)
    trap_repeats: int = Field(D.CRAWL_TRAP_REPEATS, ge=1)
    user_agent: str = D.CRAWL_USER_AGENT
    contact_url: str = D.CRAWL_CONTACT_URL
    concurrent_requests: int = Field(D.CRAWL_CONCURRENT_REQUESTS, ge=1)
    concurrent_per_domain: int = Field(D.CRAWL_CONCURRENT_PER_DOMAIN, ge=1)
    download_delay: float = Field(D.CRAWL_DOWNLOAD_DELAY, ge=0)
    download_timeout: float = Field(D.CRAWL_DOWNLOAD_TIMEOUT, gt=0)
    max_response_bytes: int = Field(D.CRAWL_MAX_RESPONSE_BYTES, ge=1024)
    retry_times: int = Field(D.CRAWL_RETRY_TIMES, ge=0)
    obey_robots: bool = D.CRAWL_OBEY_ROBOTS
    autothrottle: bool = D.CRAWL_AUTOTHROTTLE
    allow_private_hosts: bool = D.CRAWL_ALLOW_PRIVATE_HOSTS
    batch_size: int = Field(D.CRAWL_BATCH_SIZE, ge=1)
    flush_seconds: float = Field(D.CRAWL_FLUSH_SECONDS, gt=0)
    max_redirects: int = Field(D.CRAWL_MAX_REDIRECTS, ge=0, le=50)
    sitemaps: bool = D.CRAWL_SITEMAPS
    extract_inline: bool = D.CRAWL_EXTRACT_INLINE
    extract_workers: int = Field(D.CRAWL_EXTRACT_WORKERS, ge=1, le=64)
    proxy: str | None = None
    warc_dir: str | None = None
    jobdir: str | None = None
    http_cache_dir: str | None = None
    redis_url: str | None = None
    redis_key: str = Field(D.CRAWL_REDIS_KEY, min_length=1, pattern=r"^[^\s%]+$")
    processes: int = Field(D.CRAWL_PROCESSES, ge=1, le=256)
    worker_lease: float = Field(D.CRAWL_WORKER_LEASE, ge=5)
    store_retry_seconds: float = Field(D.CRAWL_STORE_RETRY_SECONDS, ge=0, le=86400)
    outage_failures: int = Field(D.CRAWL_OUTAGE_FAILURES, ge=0)
    retry_after_max: float = Field(D.CRAWL_RETRY_AFTER_MAX, ge=0, le=86400)
    retry_backoff: float = Field(D.CRAWL_RETRY_BACKOFF, ge=0, le=3600)
    script_links: bool = D.CRAWL_SCRIPT_LINKS
    render: Literal["never", "auto", "always"] = D.CRAWL_RENDER
    render_timeout: float = Field(D.CRAWL_RENDER_TIMEOUT, gt=0, le=600)
    render_browser: str = Field(D.CRAWL_RENDER_BROWSER, min_length=1)
    # archived collection (docs/archives.md): None crawls the live web
    archive: Archive | None = None
    archive_from: str | None = None
    archive_to: str | None = None
    archive_rate: float = Field(D.CRAWL_ARCHIVE_RATE, gt=0, le=100)
    archive_retries: int = Field(D.CRAWL_ARCHIVE_RETRIES, ge=0, le=50)
    archive_backoff: float = Field(D.CRAWL_ARCHIVE_BACKOFF, ge=0, le=3600)
    wayback_url: str = D.CRAWL_WAYBACK_URL
    commoncrawl_index_url: str = D.CRAWL_COMMONCRAWL_INDEX_URL
    commoncrawl_data_url: str = D.CRAWL_COMMONCRAWL_DATA_URL

    @field_validator("max_response_bytes")
    @classmethod
    def _under_the_ceiling(cls, v: int) -> int:
        return _under_ceiling(v, "max_response_bytes")

    @model_validator(mode="after")
    def _archive_period(self) -> CrawlSettings:
        """An archive needs a period (both dates, the first not after the last)."""
        if self.archive is None:
            if self.archive_from or self.archive_to:
                raise ValueError(
                    "archive_from/archive_to are set without an archive: set archive to "
                    f"one of {', '.join(ARCHIVES)} (or crawl --archive)"
                )
            return self
        if not self.archive_from or not self.archive_to:
            raise ValueError(
                f"archive = {self.archive!r} needs a period: set archive_from and archive_to "
                "(crawl --from DATE --to DATE)"
            )
        try:
            Period.parse(self.archive, self.archive_from, self.archive_to)
        except ParameterError as exc:
            raise ValueError(str(exc)) from None
        return self

    @field_validator("archive_from", "archive_to", mode="before")
    @classmethod
    def _iso_day(cls, v: Any, info: Any) -> Any:
        """``YYYY``, ``YYYY-MM`` or ``YYYY-MM-DD``, kept as the first (``archive_from``)
        or last (``archive_to``) day it names."""
        if v is None or v == "":
            return None
        end = info.field_name == "archive_to"
        try:
            return parse_date(str(v), end=end, name=info.field_name).isoformat()
        except ParameterError as exc:
            raise ValueError(str(exc)) from None

    def archive_period(self) -> Period | None:
        """The archived collection's period, or None for the live web."""
        if self.archive is None or not self.archive_from or not self.archive_to:
            return None
        return Period.parse(self.archive, self.archive_from, self.archive_to)


class ExtractSettings(_Section):
    """Main-text extraction (trafilatura), language filter and site templates."""

    favor: Favor = D.EXTRACT_FAVOR
    include_tables: bool = D.EXTRACT_INCLUDE_TABLES
    include_comments: bool = D.EXTRACT_INCLUDE_COMMENTS
    fallback: bool = D.EXTRACT_FALLBACK
    extensive_date: bool = D.EXTRACT_EXTENSIVE_DATE
    languages: tuple[str, ...] = D.EXTRACT_LANGUAGES
    timeout_seconds: float = Field(D.EXTRACT_TIMEOUT_SECONDS, gt=0)
    max_html_bytes: int = Field(D.EXTRACT_MAX_HTML_BYTES, ge=1024)
    template_removal: bool = D.EXTRACT_TEMPLATE_REMOVAL
    template_min_pages: int = Field(D.EXTRACT_TEMPLATE_MIN_PAGES, ge=2)
    template_min_share: float = Field(D.EXTRACT_TEMPLATE_MIN_SHARE, gt=0, le=1)
    workers: int | None = Field(D.EXTRACT_WORKERS, ge=0)
    batch_size: int = Field(D.EXTRACT_BATCH_SIZE, ge=1)

    @field_validator("max_html_bytes")
    @classmethod
    def _under_the_ceiling(cls, v: int) -> int:
        return _under_ceiling(v, "max_html_bytes")

    @field_validator("languages")
    @classmethod
    def _lang_codes(cls, v: tuple[str, ...]) -> tuple[str, ...]:
        for code in v:
            if not re.fullmatch(r"[a-z]{2,3}", code):
                raise ValueError(f"{code!r} is not an ISO 639 language code such as 'en' or 'ru'")
        return v


class ShingleSettings(_Section):
    """Tokens and word shingles (seed 001)."""

    k: int = Field(D.SHINGLE_K, ge=1, le=20)
    stem: bool = D.SHINGLE_STEM
    stopwords: bool = D.SHINGLE_STOPWORDS


class DomainSettings(_Section):
    """Caps of a domain's document (the union of its pages' shingles) and of the term
    counts stored per document (page or domain)."""

    max_pages: int = Field(D.DOMAIN_MAX_PAGES, ge=1)
    max_shingles: int = Field(D.DOMAIN_MAX_SHINGLES, ge=1)
    max_terms: int = Field(D.DOMAIN_MAX_TERMS, ge=1)


class MinHashSettings(_Section):
    """MinHash signatures; they travel with every stored signature."""

    num_perm: int = Field(D.MINHASH_NUM_PERM, ge=1, le=4096)
    seed: int = Field(D.MINHASH_SEED, ge=0, lt=D.SEED_LIMIT)
    scheme: Scheme = D.MINHASH_SCHEME
    workers: int = Field(D.MINHASH_WORKERS, ge=-256, le=256)

    @field_validator("workers")
    @classmethod
    def _workers(cls, v: int) -> int:
        """Threads signing documents: N >= 1, or -1 for every core (-2 all but one ...)."""
        if v == 0:
            raise ValueError("workers must be >= 1, or -1 for every core (0 is not allowed)")
        return v


class ClusterSettings(_Section):
    """The paper's modified LSH single-link (and the Leiden alternative)."""

    threshold: float = Field(D.CLUSTER_THRESHOLD, gt=0, lt=1)
    r0: int = Field(D.CLUSTER_R0, ge=1)
    r_min: int = Field(D.CLUSTER_R_MIN, ge=1)
    step: int = Field(D.CLUSTER_STEP, ge=1)
    similarity: Similarity = D.CLUSTER_SIMILARITY
    unit: Unit = D.CLUSTER_UNIT
    method: ClusterMethod = D.CLUSTER_METHOD
    linkage: Linkage = D.CLUSTER_LINKAGE
    resolution: tuple[float, ...] = Field(D.CLUSTER_RESOLUTION, min_length=1)
    quality: Quality = D.CLUSTER_QUALITY
    leiden_threshold: float = Field(D.CLUSTER_LEIDEN_THRESHOLD, gt=0, lt=1)
    leiden_rows: int = Field(D.CLUSTER_LEIDEN_ROWS, ge=1)
    leiden_bands: int = Field(D.CLUSTER_LEIDEN_BANDS, ge=1)
    leiden_similarity: LeidenSimilarity = D.CLUSTER_LEIDEN_SIMILARITY
    max_neighbours: int | None = Field(D.CLUSTER_MAX_NEIGHBOURS, ge=1)
    leiden_max_candidates: Annotated[int, Field(ge=1)] | Literal["auto"] | None = (
        D.CLUSTER_LEIDEN_MAX_CANDIDATES
    )
    leiden_max_bucket: int | None = Field(D.CLUSTER_LEIDEN_MAX_BUCKET, ge=2)
    band_memory_mb: int = Field(D.CLUSTER_BAND_MEMORY_MB, ge=1)
    signature_store: str | None = D.CLUSTER_SIGNATURE_STORE

    @field_validator("resolution", mode="before")
    @classmethod
    def _levels(cls, v: Any) -> Any:
        """One resolution or a list of them (levels); each > 0."""
        values = [v] if isinstance(v, int | float) else v
        if isinstance(values, list | tuple) and any(
            isinstance(x, bool) or not isinstance(x, int | float) or x <= 0 for x in values
        ):
            raise ValueError("every resolution must be a number > 0")
        return values


class ActivitySettings(_Section):
    """Activity clustering (:class:`cluster.ActivityClusterer`), the default method."""

    n_neighbors: Annotated[int, Field(ge=1)] | Literal["auto"] = D.ACTIVITY_N_NEIGHBORS
    resolution: tuple[float, ...] = Field(D.ACTIVITY_RESOLUTION, min_length=1)
    coarser: tuple[float, ...] = D.ACTIVITY_COARSER
    quality: Quality = D.ACTIVITY_QUALITY
    n_iterations: int = D.ACTIVITY_ITERATIONS
    min_df: int = Field(D.ACTIVITY_MIN_DF, ge=1)
    max_df: float = Field(D.ACTIVITY_MAX_DF, gt=0, le=1)
    candidates: Candidates = D.ACTIVITY_CANDIDATES
    num_perm: int = Field(D.ACTIVITY_NUM_PERM, ge=1)
    rows: int = Field(D.ACTIVITY_ROWS, ge=1)
    max_bucket: int = Field(D.ACTIVITY_MAX_BUCKET, ge=2)
    refine: int = Field(D.ACTIVITY_REFINE, ge=0)
    reassign: int = Field(D.ACTIVITY_REASSIGN, ge=0)
    seed: int = Field(D.ACTIVITY_SEED, ge=0, lt=D.SEED_LIMIT)

    _levels = field_validator("resolution", mode="before")(ClusterSettings._levels.__func__)  # type: ignore[attr-defined]

    @field_validator("coarser", mode="before")
    @classmethod
    def _factors(cls, v: Any) -> Any:
        """One factor or a list of them; each a factor of the clusters' resolution, in (0, 1)."""
        values = [v] if isinstance(v, int | float) else v
        if isinstance(values, list | tuple) and any(
            isinstance(x, bool) or not isinstance(x, int | float) or not 0 < x < 1 for x in values
        ):
            raise ValueError(
                "every coarser level is a factor of the clusters' resolution between 0 and "
                "1, exclusive (0.5: half of it), or [] for no coarser level"
            )
        return values

    @field_validator("n_iterations")
    @classmethod
    def _iterations(cls, v: int) -> int:
        """Leiden iterations per level: a non-zero integer (negative: until stable)."""
        if v == 0:
            raise ValueError("give a non-zero number of Leiden iterations (negative: until stable)")
        return v


class DedupSettings(_Section):
    """Fuzzy-duplicate removal before clustering (``webometrics dedup --list-methods``)."""

    method: str = D.DEDUP_METHOD
    canonical: Canonical = D.DEDUP_CANONICAL
    grouping: Grouping = D.DEDUP_GROUPING
    unit: Unit | None = D.DEDUP_UNIT
    max_clique_size: int = Field(D.DEDUP_MAX_CLIQUE_SIZE, ge=2)
    fpmax_max_docs: int = Field(D.DEDUP_FPMAX_MAX_DOCS, ge=2)


class AnalyseSettings(_Section):
    """Cluster themes, activity categories (the taxonomy file) and the report."""

    taxonomy: str | None = D.ANALYSE_TAXONOMY
    registries: bool = D.ANALYSE_REGISTRIES
    registry_dir: str | None = D.ANALYSE_REGISTRY_DIR
    theme_terms: int = Field(D.ANALYSE_THEME_TERMS, ge=1, le=100)
    theme_shingles: int = Field(D.ANALYSE_THEME_SHINGLES, ge=0, le=100)
    shingle_sizes: tuple[int, ...] = D.ANALYSE_SHINGLE_SIZES
    top_domains: int = Field(D.ANALYSE_TOP_DOMAINS, ge=0, le=100)
    titles: int = Field(D.ANALYSE_TITLES, ge=0, le=100)
    pages_per_domain: int = Field(D.ANALYSE_PAGES_PER_DOMAIN, ge=1)
    max_words: int = Field(D.ANALYSE_MAX_WORDS, ge=10)
    # the stored levels whose clusters are named besides the final ones (all/leiden/none)
    levels: LevelThemes = D.ANALYSE_LEVELS
    # the text model file (None: the user's data folder; "none": no text model)
    text_model: str | None = D.ANALYSE_TEXT_MODEL
    # an unreviewed domain (no override) scored below this is low-confidence: the part of
    # every category share resting on such domains is shown beside it
    low_confidence: float = Field(D.ANALYSE_LOW_CONFIDENCE, ge=0, le=1)

    @field_validator("shingle_sizes")
    @classmethod
    def _sizes(cls, v: tuple[int, ...]) -> tuple[int, ...]:
        if not v or any(k < 1 or k > 10 for k in v):
            raise ValueError("shingle_sizes must list word counts from 1 to 10, e.g. [2, 3]")
        return v

    def registry_folder(self) -> Path:
        """The registries' folder: ``registry_dir``, else ``$XDG_DATA_HOME/webometrics/
        registries`` (``~/.local/share/webometrics/registries`` without it)."""
        if self.registry_dir:
            return Path(self.registry_dir).expanduser()
        return user_folder("data") / "registries"


class DashboardSettings(_Section):
    """Where ``webometrics dashboard`` listens."""

    host: str = D.DASHBOARD_HOST
    port: int = Field(D.DASHBOARD_PORT, ge=1, le=65535)
    network_max_nodes: int = Field(D.DASHBOARD_NETWORK_MAX_NODES, ge=10, le=5000)
    expand_clusters: int = Field(D.DASHBOARD_EXPAND_CLUSTERS, ge=1, le=500)


class CommonCrawlSettings(_Section):
    """Where ``webometrics citing commoncrawl-graph --release`` downloads a web graph
    release from and caches it, and how politely (Common Crawl's published advice: one
    file at a time, retries after ``503 Slow Down`` no more than once a second)."""

    cache_dir: str | None = None
    data_url: str = Field(D.COMMONCRAWL_DATA_URL, pattern=r"^https?://")
    request_interval: float = Field(D.COMMONCRAWL_REQUEST_INTERVAL, ge=0, le=3600)
    retries: int = Field(D.COMMONCRAWL_RETRIES, ge=0, le=1000)
    retry_max_wait: float = Field(D.COMMONCRAWL_RETRY_MAX_WAIT, ge=0, le=3600)
    timeout: float = Field(D.COMMONCRAWL_TIMEOUT, gt=0, le=3600)
    assumed_mb_per_second: float = Field(D.COMMONCRAWL_ASSUMED_MB_PER_SECOND, gt=0)
    reserve_mb: float = Field(D.COMMONCRAWL_RESERVE_MB, ge=0)
    graphinfo_url: str = D.COMMONCRAWL_GRAPHINFO_URL


class TestbedSettings(_Section):
    """The local test web (``webometrics testbed serve``)."""

    host: str = D.TESTBED_HOST
    port: int = Field(D.TESTBED_PORT, ge=0, le=65535)
    seed: int = D.TESTBED_SEED
    directory: str = "testbed-web"
    log_file: str | None = None
    max_sites: int = Field(D.TESTBED_MAX_SITES, ge=0)
    min_pages: int = Field(D.TESTBED_MIN_PAGES, ge=1)
    max_pages: int = Field(D.TESTBED_MAX_PAGES, ge=1)
    link_rot: float = Field(D.TESTBED_LINK_ROT, ge=0, le=1)
    https_share: float = Field(D.TESTBED_HTTPS_SHARE, ge=0, le=1)
    russian_share: float = Field(D.TESTBED_RUSSIAN_SHARE, ge=0, le=1)
    backlink_share: float = Field(D.TESTBED_BACKLINK_SHARE, ge=0, le=1)
    citing_sites: int = Field(D.TESTBED_CITING_SITES, ge=1)
    slow_seconds: float = Field(D.TESTBED_SLOW_SECONDS, ge=0)
    oversized_bytes: int = Field(D.TESTBED_OVERSIZED_BYTES, ge=1024)


class Settings(_Section):
    """All settings of a run, one typed object, immutable once loaded."""

    database: DatabaseSettings = DatabaseSettings()
    crawl: CrawlSettings = CrawlSettings()
    extract: ExtractSettings = ExtractSettings()
    shingle: ShingleSettings = ShingleSettings()
    domain: DomainSettings = DomainSettings()
    minhash: MinHashSettings = MinHashSettings()
    cluster: ClusterSettings = ClusterSettings()
    activity: ActivitySettings = ActivitySettings()
    dedup: DedupSettings = DedupSettings()
    analyse: AnalyseSettings = AnalyseSettings()
    dashboard: DashboardSettings = DashboardSettings()
    commoncrawl: CommonCrawlSettings = CommonCrawlSettings()
    testbed: TestbedSettings = TestbedSettings()

    def replace(self, **sections: Mapping[str, Any]) -> Settings:
        """Return a copy with some keys of some sections replaced (validated).

        The keys a configuration set stay the only ones marked as set (``model_fields_set``),
        with the replaced keys added: a replaced copy tells a chosen value from a default
        just as the original does.

        Raises
        ------
        ParameterError
            A replaced value is not allowed (the message names the key, as an option).
        """
        data = self.model_dump(exclude_unset=True)
        for name, values in sections.items():
            data.setdefault(name, {}).update(values)
        try:
            return Settings.model_validate(data)
        except ValidationError as exc:
            problems = [
                f"{'.'.join(map(str, e['loc']))} = {e['input']!r}: {e['msg']}" for e in exc.errors()
            ]
            raise ParameterError(
                "; ".join(problems) + " (a value given on the command line for this "
                "configuration key; see docs/configuration.md)"
            ) from None

    def with_options(self, **sections: Mapping[str, Any]) -> Settings:
        """:meth:`replace` with the values a command line was given: a ``None`` value is an
        option not given and leaves its key alone; ``self`` when none was given.

        >>> Settings().with_options(crawl={"depth": None}).crawl.model_fields_set
        set()
        >>> Settings().with_options(crawl={"depth": 1, "proxy": None}).crawl.model_fields_set
        {'depth'}
        """
        given = {
            name: {key: value for key, value in values.items() if value is not None}
            for name, values in sections.items()
        }
        given = {name: values for name, values in given.items() if values}
        return self.replace(**given) if given else self


def _key_line(text: str, loc: tuple[Any, ...]) -> int | None:
    """Best-effort line number of ``[section]`` / ``key`` in a TOML text."""
    section = str(loc[0]) if loc else None
    key = str(loc[1]) if len(loc) > 1 else None
    in_section = False
    section_line = None
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if stripped.startswith("["):
            in_section = stripped.strip("[] ") == section
            if in_section:
                section_line = number
            continue
        if in_section and key and re.match(rf"{re.escape(key)}\s*=", stripped):
            return number
    return section_line


def format_validation_error(exc: ValidationError, source: str, text: str | None = None) -> str:
    """One readable message per problem: ``file:line: section.key: what is wrong``."""
    lines = []
    for err in exc.errors():
        loc = tuple(err["loc"])
        field = ".".join(str(p) for p in loc) or "(top level)"
        where = source
        if text is not None:
            line = _key_line(text, loc)
            if line is not None:
                where = f"{source}:{line}"
        msg = err["msg"]
        if err["type"] == "extra_forbidden":
            msg = "unknown key (check the spelling; see docs/configuration.md)"
        lines.append(f"{where}: {field}: {msg}")
    return "\n".join(lines)


def _env_overrides(environ: Mapping[str, str]) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    if environ.get(D.DB_URL_ENV):
        out.setdefault("database", {})["url"] = environ[D.DB_URL_ENV]
    for name, value in environ.items():
        m = re.fullmatch(r"WEBOMETRICS_([A-Z]+)__([A-Z0-9_]+)", name)
        if m:
            section, key = m.group(1).lower(), m.group(2).lower()
            parsed: Any = value
            if section == "extract" and key == "languages":
                parsed = tuple(x.strip() for x in value.split(",") if x.strip())
            out.setdefault(section, {})[key] = parsed
    return out


def load_settings(
    path: str | os.PathLike[str] | None = None,
    environ: Mapping[str, str] | None = None,
) -> Settings:
    """Load the settings from defaults, a TOML file and the environment.

    Parameters
    ----------
    path : path-like, optional
        The TOML file. When ``None``: ``$WEBOMETRICS_CONFIG``, else ``./webometrics.toml``
        if it exists, else defaults only.
    environ : mapping, optional
        The environment (``os.environ`` when ``None``).

    Returns
    -------
    Settings

    Raises
    ------
    ConfigError
        The file is missing, is not valid TOML, or holds an unknown key or a bad value;
        the message names the file and the line.
    """
    env = os.environ if environ is None else environ
    data: dict[str, Any] = {}
    text: str | None = None
    source = "environment"
    if path is None and env.get(D.CONFIG_ENV):
        path = env[D.CONFIG_ENV]
    if path is None and Path(D.CONFIG_FILE).is_file():
        path = D.CONFIG_FILE
    if path is not None:
        p = Path(path)
        source = str(p)
        if not p.is_file():
            raise ConfigError(
                f"{p}: configuration file not found (give --config PATH or unset {D.CONFIG_ENV})"
            )
        try:
            text = p.read_text(encoding="utf-8")
            data = tomllib.loads(text)
        except UnicodeDecodeError as exc:
            raise ConfigError(
                f"{p}: not UTF-8 text ({exc.reason}); save the file as UTF-8"
            ) from exc
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError(f"{p}: invalid TOML: {exc}") from exc
    for section, values in _env_overrides(env).items():
        if not isinstance(data.get(section, {}), dict):
            raise ConfigError(f"{source}: [{section}] must be a table")
        data.setdefault(section, {}).update(values)
    try:
        return Settings.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(format_validation_error(exc, source, text)) from exc
