"""steering_cache.call_idx: each call's place in its session's calls when its verdicts were computed, so
that an audit reads a session's verdicts back in the order of its calls and sets them beside them,
rather than joining them on two text keys (``analyze.frames``); and the wording flags read from each
result's text with regexes (has_continuation, has_directive, progress), kept beside the verdicts.

The rows stored before have no place, so the cache is emptied: the first audit after this revision
computes every verdict again (``analyze.steering_cache``).

Revision ID: 0012
Revises: 0011
"""

from alembic import op

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute("DELETE FROM steering_cache")
    op.execute("DELETE FROM steering_sessions")
    op.execute("UPDATE store_state SET value = 0 WHERE key = 'steering_version'")
    op.execute("ALTER TABLE steering_cache ADD COLUMN call_idx INTEGER")
    for name, sql_type in (("has_continuation", "BOOLEAN"), ("has_directive", "BOOLEAN"), ("progress", "DOUBLE")):
        op.execute(f"ALTER TABLE steering_cache ADD COLUMN {name} {sql_type}")


def downgrade() -> None:
    raise NotImplementedError("tokaudit migrations are forward-only")
