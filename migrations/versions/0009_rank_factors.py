"""rank factors: a university's groups against its rank (the paper's finding); impact rank

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-25

Issue 23, part 4. The seed paper (Korelin, Blekanov, Sergeev 2015,
``000_d819228b9213e10a.txt``) asks how the number and sizes of a university's groups
bear on its webometric rating. These views put, per crawl run x direction x university,
the factors next to the ranks; :mod:`store.analytics.ranks` reads them and
:mod:`analyse.ranks` correlates them.

Column:

``university.impact_rank``
    the university's Webometrics *Impact* rank (optional, ``impact_rank`` in the
    universities file); NULL when the file gives none.

Views:

``v_rank_factors``
    one row per run x direction x university that has environment domains in the run:
    ``run_id``, ``direction``, ``university_id``, ``university``, ``country``, ``rank``,
    ``impact_rank``; the clusters of the university's **latest clustering of that run and
    direction** (``v_cluster`` rows with that run, university and direction; newest
    ``created_at``, then highest id): ``clustering_id``, ``unit``, ``n_clusters`` (final
    clusters of two or more members: the paper's groups), ``clustered_size`` (their
    members), ``singletons`` (members no other joined); all NULL when the university has
    no clustering of the run and direction. From ``v_category_share``: ``domains`` (all
    its external domains), ``unknown`` (category ``unknown``: never fetched or no text),
    ``uncategorised`` (no category stored: ``webometrics analyse`` not run),
    ``evidence_domains`` (the others), and the share of each of the paper's seven
    categories **over the domains with evidence**: ``share_universities``,
    ``share_scientific_communities``, ``share_search_engines``, ``share_social_networks``,
    ``share_media``, ``share_news_portals``, ``share_other_organisations``, and
    ``share_academic`` (universities plus scientific communities: the paper's headline
    variable); NULL when no domain has evidence. Rank 1 is the best: the paper's
    conclusion predicts that a larger ``share_academic`` goes with a smaller ``rank``.
``v_rank_factor_share``
    the shares in long form, for any category of the taxonomy: one row per run x
    direction x university x category with evidence: ``run_id``, ``direction``,
    ``university_id``, ``university``, ``country``, ``rank``, ``impact_rank``,
    ``category``, ``domains``, ``share`` (over the university's domains with evidence;
    a category the university has no domain of has no row).

A later revision that drops or replaces ``v_cluster`` or ``v_category_share`` must drop
these views first and create them again after (PostgreSQL refuses otherwise):
:func:`drop_views`, :func:`create_views`.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0009"
down_revision: str | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_FLOAT = "DOUBLE PRECISION"
# the categories without evidence: never fetched / no text, and never categorised
_NO_EVIDENCE = "('unknown', 'uncategorised')"
# the paper's seven groups (analyse/taxonomy.toml), one share column each
CATEGORIES: tuple[str, ...] = (
    "universities",
    "scientific_communities",
    "search_engines",
    "social_networks",
    "media",
    "news_portals",
    "other_organisations",
)


def _count(condition: str) -> str:
    return f"CAST(SUM(CASE WHEN {condition} THEN domains ELSE 0 END) AS BIGINT)"


def _share(numerator: str) -> str:
    return f"CAST({numerator} AS {_FLOAT}) / CAST(NULLIF(f.evidence_domains, 0) AS {_FLOAT})"


def _views() -> list[tuple[str, str]]:
    """``(name, SELECT ...)`` in creation order (the same SQL on SQLite and PostgreSQL)."""
    per_category = ",\n                   ".join(
        _count("category = '" + c + "'") + f" AS n_{c}" for c in CATEGORIES
    )
    shares = ",\n                   ".join(
        _share(f"f.n_{c}") + f" AS share_{c}" for c in CATEGORIES
    )
    return [
        (
            "v_rank_factors",
            f"""
            WITH clusterings AS (
                SELECT DISTINCT clustering_id, run_id, university_id, direction, unit,
                       created_at
                FROM v_cluster
                WHERE run_id IS NOT NULL AND university_id IS NOT NULL
                  AND direction IS NOT NULL
            ),
            latest AS (
                SELECT clustering_id, run_id, university_id, direction, unit,
                       ROW_NUMBER() OVER (
                           PARTITION BY run_id, university_id, direction
                           ORDER BY created_at DESC, clustering_id DESC) AS rk
                FROM clusterings
            ),
            clusters AS (
                SELECT l.run_id AS run_id, l.university_id AS university_id,
                       l.direction AS direction, l.clustering_id AS clustering_id,
                       l.unit AS unit,
                       CAST(SUM(CASE WHEN c.size >= 2 THEN 1 ELSE 0 END) AS BIGINT)
                           AS n_clusters,
                       CAST(SUM(CASE WHEN c.size >= 2 THEN c.size ELSE 0 END) AS BIGINT)
                           AS clustered_size,
                       CAST(SUM(CASE WHEN c.size < 2 THEN 1 ELSE 0 END) AS BIGINT)
                           AS singletons
                FROM latest l
                JOIN v_cluster c ON c.clustering_id = l.clustering_id
                WHERE l.rk = 1
                GROUP BY l.run_id, l.university_id, l.direction, l.clustering_id, l.unit
            ),
            f AS (
                SELECT run_id, university_id, direction,
                       CAST(SUM(domains) AS BIGINT) AS domains,
                       {_count(f"category NOT IN {_NO_EVIDENCE}")} AS evidence_domains,
                       {_count("category = 'unknown'")} AS unknown,
                       {_count("category = 'uncategorised'")} AS uncategorised,
                   {per_category}
                FROM v_category_share
                GROUP BY run_id, university_id, direction
            )
            SELECT f.run_id AS run_id, f.direction AS direction,
                   f.university_id AS university_id, u.name AS university,
                   u.country AS country, u.rank AS rank, u.impact_rank AS impact_rank,
                   c.clustering_id AS clustering_id, c.unit AS unit,
                   c.n_clusters AS n_clusters, c.clustered_size AS clustered_size,
                   c.singletons AS singletons,
                   f.domains AS domains, f.evidence_domains AS evidence_domains,
                   f.unknown AS unknown, f.uncategorised AS uncategorised,
                   {shares},
                   {_share("f.n_universities + f.n_scientific_communities")} AS share_academic
            FROM f
            JOIN university u ON u.id = f.university_id
            LEFT JOIN clusters c
                   ON c.run_id = f.run_id AND c.university_id = f.university_id
                  AND c.direction = f.direction
            """,
        ),
        (
            "v_rank_factor_share",
            f"""
            SELECT s.run_id AS run_id, s.direction AS direction,
                   s.university_id AS university_id, u.name AS university,
                   u.country AS country, u.rank AS rank, u.impact_rank AS impact_rank,
                   s.category AS category, s.domains AS domains,
                   CAST(s.domains AS {_FLOAT})
                   / CAST(SUM(s.domains) OVER (
                         PARTITION BY s.run_id, s.university_id, s.direction) AS {_FLOAT})
                       AS share
            FROM v_category_share s
            JOIN university u ON u.id = s.university_id
            WHERE s.category NOT IN {_NO_EVIDENCE}
            """,
        ),
    ]


VIEW_NAMES: tuple[str, ...] = tuple(name for name, _ in _views())


def create_views() -> None:
    """Create the views of this revision (in dependency order)."""
    for name, body in _views():
        op.execute(f"CREATE VIEW {name} AS {body.strip()}")


def drop_views() -> None:
    """Drop the views of this revision (in reverse dependency order)."""
    for name in reversed(VIEW_NAMES):
        op.execute(f"DROP VIEW IF EXISTS {name}")


def upgrade() -> None:
    # SQLite adds a column in place (no table copy), so the views on university stay
    op.add_column("university", sa.Column("impact_rank", sa.Integer(), nullable=True))
    create_views()


def downgrade() -> None:
    drop_views()
    # in place on both dialects (SQLite >= 3.35): a batch copy of university would drop the
    # old table, and with foreign keys on that cascades to every row that refers to it
    op.execute("ALTER TABLE university DROP COLUMN impact_rank")
