"""Webometric read queries: the paper's Tables 2-3 and Figures 2-3, Web Impact Factors,
change between runs, clusters, link-network edges.

Convention (for the report, the dashboard and notebooks): every function takes an
``Engine`` and keyword filters, runs parameterised queries and returns a **list of frozen
dataclasses**; :func:`to_frame` turns any such list into a ``pandas.DataFrame`` with one
column per field. The per-run figures are read from one place only, the aggregates
(:mod:`store.aggregates`: the rows of the analyst views of migration 0002 as of the last
refresh, which every stage makes at its end; read in milliseconds at the paper's scale,
fresh or stale). ``run_id=None`` means the latest crawl run with computed figures
(:func:`latest_run_id`).

One module per family of questions, all re-exported here (``from store import analytics``
then ``analytics.table2(...)``):

========================================  ==============================================
:mod:`store.analytics.views`              the analyst views as table clauses
:mod:`store.analytics.runs`               which run a query reads; per-run view rows
:mod:`store.analytics.tables`             Tables 2-3 and the Web Impact Factors
:mod:`store.analytics.environment`        environment rows, category and country shares,
                                          the Network page's domains
:mod:`store.analytics.changes`            change between two runs
:mod:`store.analytics.clusters`           final clusters and their members
:mod:`store.analytics.categories`         domain categories and overrides
:mod:`store.analytics.examples`           the example SQL of ``store/examples.sql``
:mod:`store.analytics.frames`             rows to ``pandas`` frames
:mod:`store.analytics.ranks`              the groups against the rank (the paper's finding)
:mod:`store.analytics.shares`             category shares by domain or by cluster (the
                                          paper's way), side by side, and the part of each
                                          resting on unreviewed low-confidence domains
========================================  ==============================================

Definitions
-----------
*External link*: a :class:`~store.models.Link` flagged external, found in the run on a page
of the university (``Page.university_id``) and pointing to a registered domain that is not
one of the university's domains. *External domain*: the distinct target domains of those
links. *Citing page*: a distinct URL of a **verified** :class:`~store.models.Citation` of
the university in the run; *citing domain*: the distinct registered domains of those pages
(the paper's Table 2 counted Majestic's citing pages and domains). *Site pages*: the
university's own pages seen in the run (``first_run_id <= run <= last_run_id``).

*Domain language* (Table 3): the language of the domain's document, else the most frequent
language of its fetched external pages. *Domain category*: the analyst's override when set
(:class:`~store.models.DomainCategory.override_category` wins), else the assigned category;
domains never categorised count as ``"uncategorised"``. *Category share*: the domains of a
category over all domains of the university (Figures 2-3 per university); *per country*:
over the distinct domains of all universities of the country (a domain linked by two
Russian universities counts once for Russia).

Web Impact Factors (:func:`web_impact_factors`), all per run:

``wif_pages = citing_pages / site_pages``
    Ingwersen's (1998) external WIF: pages linking to the site per page of the site.
``wif_domains = citing_domains / site_pages``
    the same with linking *domains* (Thelwall 2002's domain-counting model, robust to one
    site linking from thousands of pages).
``outlink_density = external_links / site_pages``
    outgoing external links per page of the site (the "outlink WIF").
``in_out_ratio = citing_domains / external_domains``
    domains citing the university per domain it links to (visibility vs outreach).
``visibility_share = citing_domains / distinct citing domains of all universities``
    the university's share of the studied universities' whole citing environment.

A ratio with a zero denominator is ``None``.

References
----------
P. Ingwersen, "The calculation of Web impact factors", *J. Documentation* 54 (1998) 236-243.
M. Thelwall, "Conceptualizing documentation on the Web: an evaluation of different
heuristic-based models for counting links between university Web sites", *JASIST* 53 (2002).
A. Noruzi, "The Web Impact Factor: a critical review", *The Electronic Library* 24 (2006).
V. N. Korelin, I. S. Blekanov, S. L. Sergeev (2015), seed 000_d819228b9213e10a.txt, Tables 2-3,
Figures 2-3.
"""

from __future__ import annotations

from store.analytics.categories import DomainCategoryRow, domain_categories
from store.analytics.changes import (
    ChangeRow,
    ChangeSummaryRow,
    change_summary,
    environment_changes,
)
from store.analytics.clusters import (
    ClusterMemberRow,
    ClusterViewRow,
    cluster_members,
    clusters,
)
from store.analytics.collections import (
    CollectionRow,
    CollectionTable2Row,
    collections,
    compare_collections,
    run_collections,
)
from store.analytics.environment import (
    CategoryShareRow,
    CountryCategoryShareRow,
    EnvironmentRow,
    EnvironmentSummaryRow,
    NetworkDomainRow,
    OverlapRow,
    category_shares,
    colink_overlaps,
    country_category_shares,
    environment,
    environment_summary,
    network_domain_count,
    network_domains,
)
from store.analytics.examples import SQLExample, sql_examples
from store.analytics.frames import row_fields, to_frame
from store.analytics.ranks import (
    ClusteringSetting,
    RankCorrelationRow,
    RankFactorRow,
    RankFactorShareRow,
    SensitivityRow,
    clustering_settings,
    correlations_of,
    rank_correlations,
    rank_factor_shares,
    rank_factors,
    rank_sensitivity,
)
from store.analytics.runs import latest_run_id, resolve_run, run_ids, unrefreshed_run_ids
from store.analytics.shares import (
    DEFINITIONS,
    MIXED,
    CountryShareRow,
    ShareComparisonRow,
    ShareRow,
    country_shares,
    share_comparison,
    university_shares,
)
from store.analytics.tables import Table2Row, Table3Row, WIFRow, table2, table3, web_impact_factors
from store.analytics.views import (
    UNCATEGORISED,
    V_CLUSTER,
    V_CLUSTER_MEMBER,
    V_COUNTRY_SHARE,
    V_DOMAIN_CATEGORY,
    V_ENVIRONMENT,
    V_SHARE,
    V_TABLE2,
)

__all__ = [
    "DEFINITIONS",
    "MIXED",
    "UNCATEGORISED",
    "V_CLUSTER",
    "V_CLUSTER_MEMBER",
    "V_COUNTRY_SHARE",
    "V_DOMAIN_CATEGORY",
    "V_ENVIRONMENT",
    "V_SHARE",
    "V_TABLE2",
    "CategoryShareRow",
    "ChangeRow",
    "ChangeSummaryRow",
    "ClusterMemberRow",
    "ClusterViewRow",
    "ClusteringSetting",
    "CollectionRow",
    "CollectionTable2Row",
    "CountryCategoryShareRow",
    "CountryShareRow",
    "DomainCategoryRow",
    "EnvironmentRow",
    "EnvironmentSummaryRow",
    "NetworkDomainRow",
    "OverlapRow",
    "RankCorrelationRow",
    "RankFactorRow",
    "RankFactorShareRow",
    "SQLExample",
    "SensitivityRow",
    "ShareComparisonRow",
    "ShareRow",
    "Table2Row",
    "Table3Row",
    "WIFRow",
    "category_shares",
    "change_summary",
    "cluster_members",
    "clustering_settings",
    "clusters",
    "colink_overlaps",
    "collections",
    "compare_collections",
    "correlations_of",
    "country_category_shares",
    "country_shares",
    "domain_categories",
    "environment",
    "environment_changes",
    "environment_summary",
    "latest_run_id",
    "network_domain_count",
    "network_domains",
    "rank_correlations",
    "rank_factor_shares",
    "rank_factors",
    "rank_sensitivity",
    "resolve_run",
    "row_fields",
    "run_collections",
    "run_ids",
    "share_comparison",
    "sql_examples",
    "table2",
    "table3",
    "to_frame",
    "university_shares",
    "unrefreshed_run_ids",
    "web_impact_factors",
]
