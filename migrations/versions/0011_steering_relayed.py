"""steering_cache.relayed: the steering rule's verdict that an MCP call sent a token the previous MCP call's
result named (``analyze.steering.RELAYED_SQL``), for walks a server steers from tool to tool.

The rule's SQL changed with it, so the first audit after this revision computes every verdict again
(``analyze.steering_cache``); the cache is emptied here too, so no row is left without the column's value.

Revision ID: 0011
Revises: 0010
"""

from alembic import op

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute("DELETE FROM steering_cache")
    op.execute("DELETE FROM steering_sessions")
    op.execute("UPDATE store_state SET value = 0 WHERE key = 'steering_version'")
    op.execute("ALTER TABLE steering_cache ADD COLUMN relayed BOOLEAN")


def downgrade() -> None:
    raise NotImplementedError("tokaudit migrations are forward-only")
