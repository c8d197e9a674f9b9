"""steering_cache and steering_sessions: the steering rule's verdicts per tool call, kept between audits.

A derived cache (analyze.steering_cache): each session's rows are valid while the fingerprint of its
tool calls in steering_sessions holds, and all of them while store_state's steering_version matches
the rule's. Empty after this revision; the next audit fills it.

Revision ID: 0009
Revises: 0008
"""

from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # Raw DDL: the hashes are DuckDB's unsigned 64-bit integers, which SQLAlchemy's own types do not name.
    op.execute(
        """CREATE TABLE steering_cache (
            session_id VARCHAR NOT NULL, tool_call_id VARCHAR NOT NULL,
            shape_hash UBIGINT, values_hash UBIGINT, unnarrated_hashes UBIGINT[],
            steered BOOLEAN, alias_steered BOOLEAN, authored BOOLEAN, resent BOOLEAN)"""
    )
    op.execute(
        """CREATE TABLE steering_sessions (
            session_id VARCHAR NOT NULL PRIMARY KEY, fingerprint UBIGINT NOT NULL, tool_calls BIGINT NOT NULL)"""
    )
    op.execute("INSERT INTO store_state VALUES ('steering_version', 0)")


def downgrade() -> None:
    raise NotImplementedError("tokaudit migrations are forward-only")
