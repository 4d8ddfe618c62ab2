"""The closed vocabularies of the project, each stated once.

Every list of choices is a ``Literal`` type (for the type checker and the typed
settings, :mod:`core.settings`) and the tuple of its values (for the code that checks a
value and the messages that list what is allowed), the tuple read from the type so the
two never differ. The modules that check a choice import it from here.

``UNKNOWN``
    the language and the category of an external domain without evidence: none of its
    pages was fetched, or none gave text in a known language (kept apart from the
    taxonomy's ``other_organisations`` and from the language ``other``, which are
    findings about fetched text).
``ENVIRONMENT_SOURCES``
    where a row of the environment comes from: ``crawl`` (the university's own pages and
    verified citations found by a crawl or a URL list), ``backlinks`` (verified citations
    of a Majestic or Ahrefs export), ``commoncrawl`` (a Common Crawl web graph's citing
    domains and citations verified in Common Crawl captures).
``GRAPH_RUN_KIND``
    the crawl run kind of ``webometrics citing commoncrawl-graph``.
``DIRECTIONS``, ``DIRECTION_CHOICES``
    the stored directions of a link between a university and a domain (``outgoing``:
    the university links to it, ``citing``: it links to the university); the choices of
    the command line add ``both``.
``RUN_STATUSES``
    the states of a crawl or pipeline run.
``UNITS``
    what a document is: one ``page`` or one registered ``domain`` (its pages together).
``EXTRACTION_STATUSES``
    every outcome of extracting a page (:func:`extract.extract_page`).
``HTML_MEDIA_TYPES``, :func:`is_text_media_type`
    the media types of pages (links followed, main text extracted), and the rule of the
    bodies that are text: the crawler stores those bodies and extraction reads them;
    every other body is ``binary`` to both.
``CLUSTER_METHODS``, ``LINKAGES``, ``SIMILARITIES``, ``LEIDEN_SIMILARITIES``,
``QUALITIES``, ``CANDIDATES``, ``SCHEMES``
    the clustering's choices (``[cluster]``, ``[activity]``, ``[minhash]``).
``GROUPINGS``, ``CANONICAL_RULES``
    how near-duplicate pairs become groups and which member of a group is kept.
``FAVORS``
    trafilatura's extraction trade-off (``[extract] favor``).
``GRAPH_LEVELS``
    the nodes of a Common Crawl web graph: registered domains or hosts.
``CATEGORY_DECIDERS``
    what decided a site's category (``evidence["decided_by"]`` of a stored category):
    ``override`` (an analyst), ``known_domain`` (a domain the taxonomy lists, or a
    university under study), ``registry`` (a university or research registry),
    ``pattern`` (a host pattern such as ``*.edu``), ``name_part`` (a word in the
    domain's name), ``keywords`` (the taxonomy's words in titles and text), ``text``
    (the trained text model) or ``none`` (no evidence). Each combiner breaks ties in
    its own order of these names (:data:`analyse.categories.PRECEDENCE`,
    :data:`analyse.evidence.SOURCES`).
``LEVEL_THEMES``
    which stored levels of a clustering the analyse stage names besides its final
    clusters (``[analyse] levels``): ``all``, ``leiden`` (the Leiden levels only, not the
    paper's r-steps) or ``none``.

Examples
--------
>>> SIMILARITIES
('jaccard', 'signature', 'weighted')
>>> is_text_media_type("application/rss+xml"), is_text_media_type("application/json")
(True, False)
"""

from __future__ import annotations

from typing import Literal, get_args

UNKNOWN = "unknown"
ENVIRONMENT_SOURCES: tuple[str, ...] = ("crawl", "backlinks", "commoncrawl")
GRAPH_RUN_KIND = "commoncrawl-graph"

Direction = Literal["outgoing", "citing"]
DIRECTIONS: tuple[Direction, ...] = get_args(Direction)


def check_direction(direction: str | None) -> None:
    """Refuse a direction other than ``outgoing`` or ``citing`` (``None``: both).

    >>> check_direction("sideways")
    Traceback (most recent call last):
    ...
    core.exceptions.ParameterError: direction must be one of outgoing, citing, got 'sideways'
    """
    from core.exceptions import ParameterError

    if direction is not None and direction not in DIRECTIONS:
        raise ParameterError(f"direction must be one of {', '.join(DIRECTIONS)}, got {direction!r}")


DirectionChoice = Literal["outgoing", "citing", "both"]
DIRECTION_CHOICES: tuple[DirectionChoice, ...] = get_args(DirectionChoice)

RunStatus = Literal["running", "finished", "failed", "interrupted"]
RUN_STATUSES: tuple[RunStatus, ...] = get_args(RunStatus)

Unit = Literal["page", "domain"]
UNITS: tuple[Unit, ...] = get_args(Unit)

ExtractionStatus = Literal[
    "ok", "empty", "binary", "too-large", "timeout", "language-filtered", "error"
]
EXTRACTION_STATUSES: tuple[ExtractionStatus, ...] = get_args(ExtractionStatus)

Favor = Literal["balanced", "precision", "recall"]
FAVORS: tuple[Favor, ...] = get_args(Favor)

HTML_MEDIA_TYPES: tuple[str, ...] = ("text/html", "application/xhtml+xml")
"""Media types of pages: their links are followed and their main text extracted."""

TEXT_MEDIA_TYPES: tuple[str, ...] = ("text/", "application/xhtml+xml", "application/xml")
"""Prefixes of the media types whose bodies are text (with every ``+xml`` type)."""


def is_text_media_type(content_type: str | None) -> bool:
    """Whether a body of this media type is text: stored by the crawler, read by extraction.

    ``text/*``, XHTML, XML and every ``+xml`` type (RSS, Atom, SVG ...) are text; JSON,
    PDF, images and the rest are ``binary`` to both. A missing type is text (the body
    itself is then sniffed). Parameters after ``;`` and the case are ignored.

    Examples
    --------
    >>> is_text_media_type("Text/HTML; charset=utf-8"), is_text_media_type(None)
    (True, True)
    >>> is_text_media_type("image/png")
    False
    """
    if content_type is None:
        return True
    media = content_type.split(";", 1)[0].strip().lower()
    return not media or media.startswith(TEXT_MEDIA_TYPES) or media.endswith("+xml")


ClusterMethod = Literal["activity", "paper"]
CLUSTER_METHODS: tuple[ClusterMethod, ...] = get_args(ClusterMethod)

Linkage = Literal["single", "leiden"]
LINKAGES: tuple[Linkage, ...] = get_args(Linkage)

Similarity = Literal["jaccard", "signature", "weighted"]
SIMILARITIES: tuple[Similarity, ...] = get_args(Similarity)
"""How the paper's single link (``cluster.LSHLink``) measures a candidate pair."""

LeidenSimilarity = Literal["signature", "jaccard"]
LEIDEN_SIMILARITIES: tuple[LeidenSimilarity, ...] = get_args(LeidenSimilarity)
"""How Leiden on the LSH graph (``cluster.LSHLeiden``) weighs an edge."""

Quality = Literal["rb", "modularity", "cpm"]
QUALITIES: tuple[Quality, ...] = get_args(Quality)
"""The quality functions Leiden can optimise."""

Candidates = Literal["auto", "exact", "nndescent", "wminhash", "simhash"]
CANDIDATES: tuple[Candidates, ...] = get_args(Candidates)
"""How the activity clustering finds candidate neighbours."""

Scheme = Literal["affine32", "affine64", "legacy"]
SCHEMES: tuple[Scheme, ...] = get_args(Scheme)
"""datasketch's MinHash permutation schemes."""

Grouping = Literal["components", "cliques", "fpmax"]
GROUPINGS: tuple[Grouping, ...] = get_args(Grouping)

Canonical = Literal["longest", "earliest"]
CANONICAL_RULES: tuple[Canonical, ...] = get_args(Canonical)

GraphLevel = Literal["domain", "host"]
GRAPH_LEVELS: tuple[GraphLevel, ...] = get_args(GraphLevel)

LevelThemes = Literal["all", "leiden", "none"]
LEVEL_THEMES: tuple[LevelThemes, ...] = get_args(LevelThemes)
"""Which stored levels' clusters the analyse stage names besides the final ones."""

CategoryDecider = Literal[
    "override", "known_domain", "registry", "pattern", "name_part", "keywords", "text", "none"
]
CATEGORY_DECIDERS: tuple[CategoryDecider, ...] = get_args(CategoryDecider)
