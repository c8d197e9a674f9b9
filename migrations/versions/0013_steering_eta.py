"""steering_cache.eta: a result's countdown (how long until its job is done, ``analyze.steering.ETA_SQL``), read
from its text with a regex like the other wording flags and kept beside them.

The rows stored before have no countdown, so the cache is emptied: the first audit after this revision computes
every verdict again (``analyze.steering_cache``).

Revision ID: 0013
Revises: 0012
"""

from alembic import op

revision = "0013"
down_revision = "0012"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute("DELETE FROM steering_cache")
    op.execute("DELETE FROM steering_sessions")
    op.execute("UPDATE store_state SET value = 0 WHERE key = 'steering_version'")
    op.execute("ALTER TABLE steering_cache ADD COLUMN eta DOUBLE")


def downgrade() -> None:
    raise NotImplementedError("tokaudit migrations are forward-only")
