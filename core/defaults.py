"""Every default value of the project, in one module.

Components never read environment variables or files; they take plain arguments.
:mod:`core.settings` builds the typed settings object from these defaults,
a ``webometrics.toml`` file and ``WEBOMETRICS_*`` environment variables.
"""

from __future__ import annotations

from typing import Literal

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

# --- database -------------------------------------------------------------
DB_URL = "sqlite:///webometrics.db"

# --- crawl ----------------------------------------------------------------
CRAWL_DEPTH = 3
CRAWL_MAX_PAGES_PER_UNIVERSITY = 2000
CRAWL_EXTERNAL_PAGES_PER_DOMAIN = 3
# budgets shared out when their level starts (the same pages every run; extra pages after
# every target) rather than to the requests found first (crawler.frontier)
CRAWL_FIXED_BUDGETS = True
# crawler traps (crawler.traps): a URL template admits this many pages, plus GAIN more for
# each of its pages that brought a new kind of page or a new external domain; a path
# segment repeated more than REPEATS times in a row is a trap (Heritrix's default)
CRAWL_TRAP_GUARD = True
CRAWL_TRAP_TEMPLATE_PAGES = 3
CRAWL_TRAP_TEMPLATE_GAIN = 3
CRAWL_TRAP_REPEATS = 2
CRAWL_USER_AGENT = "webometrics-crawler/0.1 (+{contact})"
CRAWL_CONTACT_URL = "https://example.org/webometrics-crawler"
CRAWL_CONCURRENT_REQUESTS = 16
CRAWL_CONCURRENT_PER_DOMAIN = 4
CRAWL_DOWNLOAD_DELAY = 0.25
CRAWL_DOWNLOAD_TIMEOUT = 20.0
CRAWL_MAX_RESPONSE_BYTES = 10 * 1024 * 1024
# hard ceiling of a response body, on the wire and decompressed, whatever the settings
# ([crawl] max_response_bytes and [extract] max_html_bytes above it are refused): a
# crawler holds O(ceiling) bytes per response, a gzip bomb stops there
CRAWL_MAX_RESPONSE_BYTES_CEILING = 64 * 1024 * 1024
CRAWL_RETRY_TIMES = 2
CRAWL_OBEY_ROBOTS = True
CRAWL_AUTOTHROTTLE = True
CRAWL_ALLOW_PRIVATE_HOSTS = False
CRAWL_BATCH_SIZE = 200
CRAWL_FLUSH_SECONDS = 2.0  # store buffered pages at least this often
CRAWL_MAX_REDIRECTS = 10
CRAWL_SITEMAPS = True  # follow the Sitemap: lines of university robots.txt files
CRAWL_EXTRACT_INLINE = False  # extract main text while crawling (else `webometrics extract`)
CRAWL_EXTRACT_WORKERS = 1  # processes of the inline extraction
CRAWL_REDIS_KEY = "webometrics"  # prefix of a crawl farm's Redis keys
CRAWL_PROCESSES = 1  # crawler processes started here (more than one needs redis_url)
CRAWL_WORKER_LEASE = 60.0  # seconds without a heartbeat before a process's requests are taken back
# how long a failed write of crawled pages is retried (exponential back-off) before the
# crawl stops, its state kept to resume: long enough for a database restart or fail-over
CRAWL_STORE_RETRY_SECONDS = 60.0
# a crawl stops (interrupted, to resume) after this many fetches in a row failed for a
# connection reason (refused, lost, timeout, DNS) across at least CRAWL_OUTAGE_HOSTS
# hosts with no answer in between: its proxy or network went away (0: never stop)
CRAWL_OUTAGE_FAILURES = 50
CRAWL_OUTAGE_HOSTS = 3
# 429 / 503 answers (crawler.retry_after): a Retry-After longer than this is cut to it;
# without the header the wait is CRAWL_RETRY_BACKOFF * 2 ** (attempt - 1), as long at most
CRAWL_RETRY_AFTER_MAX = 300.0
CRAWL_RETRY_BACKOFF = 5.0
# URL literals of scripts and JSON blocks followed as speculative links (crawler.script_links)
CRAWL_SCRIPT_LINKS = True
# pages run in a headless browser for the links their scripts build (crawler.render):
# never | auto (the pages whose HTML looks script-built) | always (every HTML page)
CRAWL_RENDER: Literal["never", "auto", "always"] = "never"
CRAWL_RENDER_TIMEOUT = 15.0  # seconds a page may take to load and run its scripts
CRAWL_RENDER_BROWSER = "chromium"  # the Chromium executable (a path, or a name on PATH)
# archived collection (crawl --archive, docs/archives.md): where the archives answer, at
# most this many requests per second to each archive host (the Internet Archive asks for at
# most 60 CDX requests a minute; Common Crawl asks clients to slow down on 503), and how
# often a 429/503/5xx answer or a lost connection is retried (exponential back-off from
# CRAWL_ARCHIVE_BACKOFF seconds, or the answer's Retry-After)
CRAWL_WAYBACK_URL = "https://web.archive.org"
CRAWL_COMMONCRAWL_INDEX_URL = "https://index.commoncrawl.org"
CRAWL_COMMONCRAWL_DATA_URL = "https://data.commoncrawl.org"
CRAWL_ARCHIVE_RATE = 1.0
CRAWL_ARCHIVE_RETRIES = 5
CRAWL_ARCHIVE_BACKOFF = 2.0
# a running crawl or pipeline run writes its heartbeat this often; a run whose heartbeat
# is older than the lease is taken as dead (kill -9, power loss) and marked interrupted
RUN_HEARTBEAT_SECONDS = 15.0
# seconds to wait for a database server to answer a new connection (one that accepts
# and never answers would hold a command for minutes: 131 s measured)
DATABASE_CONNECT_TIMEOUT = 10
RUN_LEASE_SECONDS = 180.0  # more than the store retry window: an outage is no death

# --- extraction -----------------------------------------------------------
EXTRACT_FAVOR: Favor = "balanced"
EXTRACT_INCLUDE_TABLES = True
EXTRACT_INCLUDE_COMMENTS = False
EXTRACT_FALLBACK = True  # trafilatura compares with readability/jusText (False: its fast mode)
EXTRACT_EXTENSIVE_DATE = False  # htmldate's extensive search: +1.5 % dates, ~25 % slower
EXTRACT_LANGUAGES: tuple[str, ...] = ("en", "ru")
EXTRACT_TIMEOUT_SECONDS = 30.0
EXTRACT_MAX_HTML_BYTES = 5 * 1024 * 1024
EXTRACT_TEMPLATE_REMOVAL = True
EXTRACT_TEMPLATE_MIN_PAGES = 3
EXTRACT_TEMPLATE_MIN_SHARE = 0.5
EXTRACT_WORKERS: int | None = None  # worker processes (None: one per core; 0: in this process)
EXTRACT_BATCH_SIZE = 100  # pages per committed batch

# --- tokens and shingles --------------------------------------------------
# Chosen by the sweep of bench/table1.py (bench/results/table1.md, "Sweep"): on Reuters
# 1-word stemmed shingles without stop words give the best class F of exact single link.
SHINGLE_K = 1
SHINGLE_STEM = True
SHINGLE_STOPWORDS = True

# --- domain documents -----------------------------------------------------
DOMAIN_MAX_PAGES = 20
DOMAIN_MAX_SHINGLES = 20000
DOMAIN_MAX_TERMS = 1000  # distinct term counts stored per document (most frequent first)

# --- MinHash / LSH --------------------------------------------------------
# MINHASH_* and CLUSTER_THRESHOLD/R0/STEP/R_MIN: the sweep's choice in
# bench/results/table1.md (best class F with ARI >= 0.95 against exact single link for five
# seeds and the whole pipeline over 21,578 stories within 5 s): levels r = 12, 8, 4 of
# 1024 permutations (b = 85, 128, 256 bands).
MINHASH_NUM_PERM = 1024
MINHASH_SEED = 1
MINHASH_SCHEME: Scheme = "affine32"  # datasketch 2.x permutation scheme
# threads signing documents (-1: every core; the signatures do not depend on it)
MINHASH_WORKERS = -1
# every seed (MinHash permutations, LSH bucket choices, Leiden, weighted MinHash) is an
# integer in 0 .. SEED_LIMIT - 1, the range of every random number generator seeded here
# (leidenalg and igraph take a C int)
SEED_LIMIT = 2**31

# --- clustering (the paper's modified LSH single-link) --------------------
CLUSTER_THRESHOLD = 0.3
CLUSTER_R0 = 12
CLUSTER_R_MIN = 4
CLUSTER_STEP = 4
CLUSTER_SIMILARITY: Similarity = "jaccard"
CLUSTER_UNIT: Unit = "domain"
CLUSTER_LINKAGE: Linkage = "single"
# working memory of one banding (LSH level); above it the bucket entries go to hash
# partitions on disk, with the same pairs (cluster.lsh.candidate_pairs)
CLUSTER_BAND_MEMORY_MB = 1024
# folder of a memory-mapped signature store (None: signatures in memory); when set the
# cluster stage streams the documents into it instead of loading all shingles
CLUSTER_SIGNATURE_STORE: str | None = None
# fail rather than generate more candidate pairs in one banding (a memory guard of the LSH
# estimators; the clusters do not depend on it)
CLUSTER_MAX_PAIRS = 50_000_000
# entries of one dense block of intersections of the exact pair search
# (cluster.single_link.threshold_edges: ~12 bytes each)
CLUSTER_BLOCK_ENTRIES = 1 << 24
# tf-idf of the paper's single link on weighted documents (LSHLink similarity="weighted",
# cluster.TfidfWeighting): terms of fewer documents, or of more than this share, left out
TFIDF_MIN_DF = 2
TFIDF_MAX_DF = 0.5

# --- Leiden on the LSH candidate graph (--linkage leiden) -----------------
# Chosen by the sweep of bench/linkage.py on WebKB, real university web pages
# (bench/results/linkage.md): t = 0.02, r = 2 rows in 64 bands (the first 128 rows of the
# signature), signature similarity, RB quality, levels of resolution 4 -> 0.5.
# nested levels, finest first; the last gives the clusters
CLUSTER_RESOLUTION: tuple[float, ...] = (4.0, 2.0, 1.0, 0.5)
CLUSTER_QUALITY: Quality = "rb"
CLUSTER_LEIDEN_THRESHOLD = 0.02
CLUSTER_LEIDEN_ROWS = 2
CLUSTER_LEIDEN_BANDS = 64
CLUSTER_LEIDEN_SIMILARITY: LeidenSimilarity = "signature"
# the resolution of a Leiden quality when none is given (rb and cpm chosen by
# bench/linkage.py; modularity takes no other)
LEIDEN_QUALITY_RESOLUTION: dict[Quality, float] = {"rb": 0.2, "modularity": 1.0, "cpm": 0.05}
LEIDEN_ITERATIONS = 2  # Leiden iterations per level (negative: until no node moves)
# strongest edges kept per document (None: all); 10 chosen over seeds on seven corpora,
# mean class F 0.555 against 0.517 with 20 (bench/results/leiden_defaults.md)
CLUSTER_MAX_NEIGHBOURS: int | None = 10
# candidate pairs scored per document, the most similar by a 1-bit sketch estimate: a
# number, None (all) or auto = LEIDEN_CANDIDATES_PER_NEIGHBOUR x max_neighbours
# (chosen over seeds on six corpora: bench/results/leiden_defaults.md)
CLUSTER_LEIDEN_MAX_CANDIDATES: int | Literal["auto"] | None = "auto"
LEIDEN_CANDIDATES_PER_NEIGHBOUR = 8
# an LSH bucket of more documents is cut into runs of this many (None: never); 128 chosen
# over seeds on six corpora with 64 and 256 (bench/results/leiden_defaults.md)
CLUSTER_LEIDEN_MAX_BUCKET: int | None = 128

# --- activity clustering (the default method of `webometrics cluster`) -----
# cluster.ActivityClusterer: tf-idf of stored term counts, weighted MinHash + LSH
# candidates, a k-nearest-neighbour graph, nested Leiden levels. Chosen by
# leave-one-corpus-out over nine labelled corpora (bench/results/activity.md); the same
# values for every corpus.
CLUSTER_METHOD: ClusterMethod = "activity"  # or paper: the shingle-set methods of --linkage
ACTIVITY_N_NEIGHBORS: int | Literal["auto"] = "auto"  # or a number; auto = round(2.5 ln n)
# nested levels, finest first; the last (modularity) gives the clusters
ACTIVITY_RESOLUTION: tuple[float, ...] = (2.0, 1.0)
# coarser levels merging the clusters, as factors of their resolution (shown to the
# analyst, never the clusters: bench/results/grain.md found no label-free rule that
# chooses a better grain than the clusters' resolution 1)
ACTIVITY_COARSER: tuple[float, ...] = (0.5,)
ACTIVITY_QUALITY: Quality = "rb"
# Leiden iterations per level; negative: until no node moves. 5 reached the same class F
# as iterating to the end on the nine labelled corpora (mean 0.6647 against 0.6652 over 3
# seeds, equal on 7) in half the time at 20,000 stories (README, activity clustering)
ACTIVITY_ITERATIONS = 5
ACTIVITY_MIN_DF = 2  # a term of fewer documents carries no weight
ACTIVITY_MAX_DF = 1.0  # nor a term of more than this share of the documents (1.0: no cut)
# auto: the exact neighbours while sum(df^2) + n^2 <= 2e11 (about 200,000 documents), else
# NN-descent (cluster.activity.EXACT_WORK, bench/results/knn.md)
ACTIVITY_CANDIDATES: Candidates = "auto"
ACTIVITY_NUM_PERM = 64
ACTIVITY_ROWS = 1
ACTIVITY_MAX_BUCKET = 10
ACTIVITY_REFINE = 1
# passes of centroid reassignment after Leiden (cluster.reassign; 0: Leiden's clusters as
# found), chosen leave-one-corpus-out from 0-3 (bench/results/alternatives.md)
ACTIVITY_REASSIGN = 1
ACTIVITY_SEED = 1

# --- near duplicates ------------------------------------------------------
DEDUP_METHOD = "minhash-lsh"
DEDUP_CANONICAL: Canonical = "longest"
DEDUP_GROUPING: Grouping = "components"
DEDUP_UNIT: Unit | None = None  # None: the [cluster] unit
DEDUP_MAX_CLIQUE_SIZE = 100
DEDUP_FPMAX_MAX_DOCS = 40

# --- analysis: themes, categories, report ---------------------------------
ANALYSE_TAXONOMY: str | None = None  # None: the shipped analyse/taxonomy.toml
# the registries of organisations as category evidence (analyse.registries); their folder
# (`webometrics registries update` writes there; None: $XDG_DATA_HOME/webometrics/
# registries, else ~/.local/share/webometrics/registries; the packaged snapshot when empty)
ANALYSE_REGISTRIES = True
ANALYSE_REGISTRY_DIR: str | None = None
ANALYSE_THEME_TERMS = 10
ANALYSE_THEME_SHINGLES = 10
ANALYSE_SHINGLE_SIZES: tuple[int, ...] = (2, 3)
ANALYSE_TOP_DOMAINS = 5
ANALYSE_TITLES = 5
ANALYSE_PAGES_PER_DOMAIN = 20
ANALYSE_MAX_WORDS = 5000
# the stored levels whose clusters get a theme and category besides the final ones: every
# level (the activity clustering's finer/coarser Leiden levels, the paper's r-steps);
# "leiden" leaves a deep LSH dendrogram out, "none" names the final clusters only
ANALYSE_LEVELS: LevelThemes = "all"
# the text model of categories (`webometrics category train`): None = category-model.npz in
# the user's data folder ($XDG_DATA_HOME/webometrics, ~/.local/share/webometrics); "none" =
# no text model
ANALYSE_TEXT_MODEL: str | None = None
# a domain without an analyst's override whose category score is below this is an
# unreviewed low-confidence domain: every category share says how much of it rests on
# such domains (the categoriser's score is a probability-like confidence in [0, 1]; at
# 0.5 a domain's category is no likelier than all the others together)
ANALYSE_LOW_CONFIDENCE = 0.5

# --- dashboard ------------------------------------------------------------
DASHBOARD_HOST = "127.0.0.1"
DASHBOARD_PORT = 8501
DASHBOARD_NETWORK_MAX_NODES = 300  # the interactive network's domains (most linked first)
DASHBOARD_EXPAND_CLUSTERS = 30  # clusters that expand to their domains and pages

# --- commoncrawl (the web graph's download) -------------------------------
COMMONCRAWL_DATA_URL = "https://data.commoncrawl.org/"
# Common Crawl's status page (status.commoncrawl.org) asks whole-file downloaders that meet
# "503 Slow Down" to retry politely, "no more than once per second"; one file at a time
COMMONCRAWL_REQUEST_INTERVAL = 1.0  # seconds between two requests, at least
COMMONCRAWL_RETRIES = 20  # retries of a request after 503/429/5xx, a timeout or a cut
COMMONCRAWL_RETRY_MAX_WAIT = 60.0  # the back-off doubles from request_interval up to this
COMMONCRAWL_TIMEOUT = 60.0  # seconds without a byte before a connection is given up
COMMONCRAWL_ASSUMED_MB_PER_SECOND = 10.0  # the dry run's bandwidth until one is measured
COMMONCRAWL_RESERVE_MB = 1024.0  # left free on the cache's disk after a download
# the list of web graph releases, newest first; read only to name them when one is not found
COMMONCRAWL_GRAPHINFO_URL = "https://index.commoncrawl.org/graphinfo.json"

# --- testbed --------------------------------------------------------------
TESTBED_HOST = "127.0.0.1"
TESTBED_PORT = 8899
TESTBED_SEED = 20150101
TESTBED_MAX_SITES = 300  # generated external sites, most-linked domains first
TESTBED_MIN_PAGES = 1  # extra pages per generated site, besides its linked pages
TESTBED_MAX_PAGES = 4
TESTBED_LINK_ROT = 0.05  # share of linked pages of generated sites that answer 404
TESTBED_HTTPS_SHARE = 0.25  # share of generated sites that redirect http -> https
TESTBED_RUSSIAN_SHARE = 0.15  # share of generated sites with Russian texts
TESTBED_BACKLINK_SHARE = 0.1  # share of generated sites that link back to a university
TESTBED_CITING_SITES = 10  # citing-only sites per university
TESTBED_SLOW_SECONDS = 3.0  # delay of the slow trouble pages
TESTBED_OVERSIZED_BYTES = 12 * 1024 * 1024

# --- shared data ----------------------------------------------------------
DATA_ENV = "WEBOMETRICS_DATA"
CONFIG_ENV = "WEBOMETRICS_CONFIG"
DB_URL_ENV = "WEBOMETRICS_DB_URL"
CONFIG_FILE = "webometrics.toml"
