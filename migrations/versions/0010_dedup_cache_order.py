"""llm_calls_dedup_cache is rebuilt in storage order (by source and line).

A batched audit reads one batch's requests from a stretch of the copy (its row ids) instead
of scanning all of it; the copy must then hold a file's requests together, as ``llm_calls``
does. Copies built before this revision are in no order: marking the copy stale makes the
next read rebuild it.

Revision ID: 0010
Revises: 0009
"""

from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute("UPDATE store_state SET value = -1 WHERE key = 'dedup_version'")


def downgrade() -> None:
    raise NotImplementedError("tokaudit migrations are forward-only")
