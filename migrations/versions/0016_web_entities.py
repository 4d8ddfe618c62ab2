"""web entities: analysts' split and merge rules, and stored rows re-keyed by site

Revision ID: 0016
Revises: 0015
Create Date: 2026-11-28

A site was the registered domain without the Public Suffix List's private section, so
every LiveJournal, Blogspot, narod.ru, uCoz, github.io blog was one site with one
category, and ``sites.google.com/x`` was google.com. The site is now a web entity
(:mod:`core.entities`): the registrable domain with the private section, the shipped
hosting-platform rules (``core/site_rules.toml``), and the analysts' rules stored in the
two new tables:

``site_rule``
    ``kind`` ``split`` (``key``, a host or URL prefix, is a site of its own) or
    ``merge`` (``key`` and ``members`` are one site named ``key``), with note, analyst and
    time.
``site_rule_history``
    every add, remove and re-keying (``apply``, with its counts), append-only.

The upgrade then re-keys what is stored under the new default
(:func:`store.entities.rekey`, no re-crawl): ``page.registered_domain``,
``link.target_domain``, ``citation.citing_domain`` and ``citing_node.domain`` get the
site of their URL; the environment rows of the keys that lose or gain rows are
recomputed from the stored links and citations; the documents of unit ``domain`` of those
keys are deleted (their signatures, duplicate and cluster memberships with them), so the
next ``webometrics extract`` builds them again and ``dedup``, ``cluster`` and ``analyse``
must run again (``webometrics run`` does all). The re-keying is an ``apply`` row of the
history. On a database without such rows it changes nothing.

Downgrade drops the tables; the rows keep their new keys (``webometrics sites apply`` of
an older version would not restore them: re-crawl, or restore a backup).
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0016"
down_revision: str | None = "0015"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "site_rule",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("kind", sa.String(length=10), nullable=False),
        sa.Column("key", sa.String(length=253), nullable=False),
        sa.Column("members", sa.JSON(), nullable=False),
        sa.Column("note", sa.Text(), nullable=True),
        sa.Column("analyst", sa.String(length=100), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.CheckConstraint("kind IN ('split', 'merge')", name=op.f("ck_site_rule_kind")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_site_rule")),
        sa.UniqueConstraint("kind", "key", name=op.f("uq_site_rule_kind_key")),
    )
    op.create_table(
        "site_rule_history",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("action", sa.String(length=10), nullable=False),
        sa.Column("kind", sa.String(length=10), nullable=True),
        sa.Column("key", sa.String(length=253), nullable=True),
        sa.Column("members", sa.JSON(), nullable=False),
        sa.Column("note", sa.Text(), nullable=True),
        sa.Column("analyst", sa.String(length=100), nullable=True),
        sa.Column("counts", sa.JSON(), nullable=False),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        sa.CheckConstraint(
            "action IN ('add', 'remove', 'apply')", name=op.f("ck_site_rule_history_action")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_site_rule_history")),
    )
    op.create_index("ix_site_rule_history_key_id", "site_rule_history", ["key", "id"])
    _rekey()


def _rekey() -> None:
    """Re-key the stored rows under the new default (no analysts' rules exist yet)."""
    from core.entities import SiteRules
    from store.entities import rekey
    from store.models import SiteRuleHistory, utcnow
    from store.session import session_scope

    with session_scope(op.get_bind()) as s:
        plan = rekey(s, SiteRules.default())
        if plan.changed_rows:
            s.add(
                SiteRuleHistory(
                    action="apply",
                    members=[],
                    note="migration 0016: the new default site",
                    counts=plan.summary(),
                    at=utcnow(),
                )
            )


def downgrade() -> None:
    op.drop_index("ix_site_rule_history_key_id", table_name="site_rule_history")
    op.drop_table("site_rule_history")
    op.drop_table("site_rule")
