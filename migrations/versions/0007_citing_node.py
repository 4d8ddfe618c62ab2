"""citing_node: the citing domains and hosts of a web graph, and the impact views

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-25

``webometrics citing commoncrawl-graph`` stores, per crawl run (kind
``commoncrawl-graph``) x university x graph level, every domain or host of a Common Crawl
web graph release that links to the university: table ``citing_node`` (source
``commoncrawl-graph:<release>``, level, node, its registered domain, the university's
nodes it links to, the number of hosts of a citing domain, harmonic centrality and
PageRank with their positions). The run's ``environment`` rows (direction ``citing``)
group the nodes by registered domain, as a crawl's do.

Views (the read functions of :mod:`store.impact` query them):

``v_citing_source``
    one row per university x source kind x citing registered domain: ``kind`` is
    ``crawl`` (verified citations found by a crawl or from a URL list: ``citation.source``
    ``crawl`` / ``urls``), ``backlinks`` (verified citations of a Majestic or Ahrefs
    export) or ``commoncrawl`` (``citing_node``); ``sources`` (distinct source labels),
    ``hosts`` (distinct citing hosts known: the fetched pages' hosts, the host-level
    graph's nodes; 0 when only the domain graph was read). Every stored run counts.
``v_citing_overlap``
    one row per university x source kind: ``domains``, ``hosts``, ``only_here`` (domains no
    other kind found), ``missed`` (domains only the other kinds found) and ``domains_all``
    (the union over the kinds).
``v_citing_rank``
    one row per university x graph source x level: ``nodes``, ``domains``, ``links``,
    ``harmonic_sum`` and ``pagerank_sum`` (the rank-weighted in-link counts: the sum over
    the distinct citing nodes of their harmonic centrality and PageRank), ``ranked_nodes``
    (nodes found in the ranks file).

Downgrade drops the views and the table (the graph runs' ``crawl_run`` and
``environment`` rows stay).
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0007"
down_revision: str | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

VIEWS: tuple[tuple[str, str], ...] = (
    (
        "v_citing_source",
        """
        WITH cited AS (
            SELECT c.university_id AS university_id,
                   CASE WHEN c.source IN ('majestic', 'ahrefs') THEN 'backlinks'
                        ELSE 'crawl' END AS kind,
                   c.source AS source, c.citing_domain AS domain, p.host AS host
            FROM citation c
            LEFT JOIN page p ON p.id = c.page_id
            WHERE c.status = 'verified'
            UNION ALL
            SELECT n.university_id AS university_id, 'commoncrawl' AS kind,
                   n.source AS source, n.domain AS domain,
                   CASE WHEN n.level = 'host' THEN n.node END AS host
            FROM citing_node n
        )
        SELECT cited.university_id AS university_id, u.name AS university,
               u.country AS country, cited.kind AS kind, cited.domain AS domain,
               COUNT(DISTINCT cited.source) AS sources,
               COUNT(DISTINCT cited.host) AS hosts
        FROM cited
        JOIN university u ON u.id = cited.university_id
        GROUP BY cited.university_id, u.name, u.country, cited.kind, cited.domain
        """,
    ),
    (
        "v_citing_overlap",
        """
        WITH k AS (
            SELECT university_id, domain, COUNT(*) AS kinds
            FROM v_citing_source
            GROUP BY university_id, domain
        ),
        t AS (
            SELECT university_id, COUNT(*) AS domains_all FROM k GROUP BY university_id
        )
        SELECT s.university_id AS university_id, s.university AS university,
               s.country AS country, s.kind AS kind,
               COUNT(*) AS domains,
               CAST(SUM(s.hosts) AS BIGINT) AS hosts,
               CAST(SUM(CASE WHEN k.kinds = 1 THEN 1 ELSE 0 END) AS BIGINT) AS only_here,
               MAX(t.domains_all) - COUNT(*) AS missed,
               MAX(t.domains_all) AS domains_all
        FROM v_citing_source s
        JOIN k ON k.university_id = s.university_id AND k.domain = s.domain
        JOIN t ON t.university_id = s.university_id
        GROUP BY s.university_id, s.university, s.country, s.kind
        """,
    ),
    (
        "v_citing_rank",
        """
        WITH n AS (
            SELECT university_id, source, level, node, MAX(domain) AS domain,
                   MAX(links) AS links, MAX(harmonic_centrality) AS harmonic_centrality,
                   MAX(pagerank) AS pagerank
            FROM citing_node
            GROUP BY university_id, source, level, node
        )
        SELECT n.university_id AS university_id, u.name AS university,
               u.country AS country, n.source AS source, n.level AS level,
               COUNT(*) AS nodes, COUNT(DISTINCT n.domain) AS domains,
               CAST(SUM(n.links) AS BIGINT) AS links,
               SUM(n.harmonic_centrality) AS harmonic_sum,
               SUM(n.pagerank) AS pagerank_sum,
               COUNT(n.harmonic_centrality) AS ranked_nodes
        FROM n
        JOIN university u ON u.id = n.university_id
        GROUP BY n.university_id, u.name, u.country, n.source, n.level
        """,
    ),
)
VIEW_NAMES: tuple[str, ...] = tuple(name for name, _ in VIEWS)


def upgrade() -> None:
    op.create_table(
        "citing_node",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("run_id", sa.Integer(), nullable=False),
        sa.Column("university_id", sa.Integer(), nullable=False),
        sa.Column("source", sa.String(length=80), nullable=False),
        sa.Column("level", sa.String(length=10), nullable=False),
        sa.Column("node", sa.String(length=253), nullable=False),
        sa.Column("domain", sa.String(length=253), nullable=False),
        sa.Column("links", sa.Integer(), nullable=False),
        sa.Column("num_hosts", sa.BigInteger(), nullable=True),
        sa.Column("harmonic_rank", sa.BigInteger(), nullable=True),
        sa.Column("harmonic_centrality", sa.Float(), nullable=True),
        sa.Column("pagerank_rank", sa.BigInteger(), nullable=True),
        sa.Column("pagerank", sa.Float(), nullable=True),
        sa.CheckConstraint("level IN ('domain', 'host')", name=op.f("ck_citing_node_level")),
        sa.ForeignKeyConstraint(
            ["run_id"],
            ["crawl_run.id"],
            name=op.f("fk_citing_node_run_id_crawl_run"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["university_id"],
            ["university.id"],
            name=op.f("fk_citing_node_university_id_university"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_citing_node")),
        sa.UniqueConstraint(
            "run_id",
            "university_id",
            "level",
            "node",
            name=op.f("uq_citing_node_run_id_university_id_level_node"),
        ),
    )
    with op.batch_alter_table("citing_node", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_citing_node_domain"), ["domain"], unique=False)
        batch_op.create_index(batch_op.f("ix_citing_node_run_id"), ["run_id"], unique=False)
        batch_op.create_index(
            batch_op.f("ix_citing_node_university_id"), ["university_id"], unique=False
        )
        batch_op.create_index(
            "ix_citing_node_university_source",
            ["university_id", "source", "domain"],
            unique=False,
        )
    for name, body in VIEWS:
        op.execute(f"CREATE VIEW {name} AS {body.strip()}")


def downgrade() -> None:
    for name in reversed(VIEW_NAMES):
        op.execute(f"DROP VIEW IF EXISTS {name}")
    with op.batch_alter_table("citing_node", schema=None) as batch_op:
        batch_op.drop_index("ix_citing_node_university_source")
        batch_op.drop_index(batch_op.f("ix_citing_node_university_id"))
        batch_op.drop_index(batch_op.f("ix_citing_node_run_id"))
        batch_op.drop_index(batch_op.f("ix_citing_node_domain"))
    op.drop_table("citing_node")
