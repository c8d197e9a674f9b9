"""Analysis tables: tool_defs (MCP tool surfaces), audit_runs, findings.

Revision ID: 0002
Revises: 0001
"""

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "tool_defs",
        sa.Column("source_id", sa.BigInteger, nullable=False),
        sa.Column("session_id", sa.Text, nullable=False),
        sa.Column("mcp_server", sa.Text, nullable=False),
        sa.Column("tool_name", sa.Text, nullable=False),
        sa.Column("schema_sha256", sa.Text, nullable=False),
        sa.Column("description_bytes", sa.BigInteger),
        sa.Column("first_seen_utc", sa.DateTime),
        sa.Column("last_seen_utc", sa.DateTime),
        sa.PrimaryKeyConstraint("source_id", "session_id", "mcp_server", "tool_name", "schema_sha256"),
    )
    op.execute(sa.schema.CreateSequence(sa.Sequence("audit_run_id_seq")))
    op.create_table(
        "audit_runs",
        sa.Column("audit_run_id", sa.BigInteger, primary_key=True, autoincrement=False),
        sa.Column("started_at_utc", sa.DateTime, nullable=False),
        sa.Column("window_start_utc", sa.DateTime),
        sa.Column("window_end_utc", sa.DateTime),
        sa.Column("tokaudit_version", sa.Text, nullable=False),
        sa.Column("thresholds", sa.Text, nullable=False),
    )
    op.create_table(
        "findings",
        sa.Column("audit_run_id", sa.BigInteger, nullable=False),
        sa.Column("finding_no", sa.Integer, nullable=False),
        sa.Column("detector", sa.Text, nullable=False),
        sa.Column("severity", sa.Text, nullable=False),
        sa.Column("session_id", sa.Text),
        sa.Column("first_turn", sa.Integer),
        sa.Column("last_turn", sa.Integer),
        sa.Column("metric", sa.Text),
        sa.Column("value", sa.Text),
        sa.Column("threshold", sa.Text),
        sa.Column("excess_tokens", sa.BigInteger),
        sa.Column("excess_usd", sa.Text),
        sa.Column("explanation", sa.Text),
        sa.PrimaryKeyConstraint("audit_run_id", "finding_no"),
    )


def downgrade() -> None:
    raise NotImplementedError("tokaudit migrations are forward-only")
