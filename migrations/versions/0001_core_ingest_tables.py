"""Core ingest tables: sources, sessions, llm_calls, tool_calls, session_events, ingest_problems.

Revision ID: 0001
Revises:
"""

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None

# The view that every usage and cost query reads. Claude Code writes one line
# per content block and Codex forks replay history, so the same model request
# can be stored several times, even in several files. Rules, in order:
#  1. a sidechain copy of a main-chain message under another request id is a
#     replay (/btw), not a new request: drop it;
#  2. per call_key keep the row with the most tokens (the final usage, not a
#     streaming placeholder); ties prefer a row that reports `speed`, then the
#     earliest source and line, so the choice is deterministic.
DEDUP_VIEW = """
CREATE VIEW llm_calls_dedup AS
WITH kept AS (
    SELECT c.* FROM llm_calls AS c
    WHERE NOT (
        c.is_sidechain AND c.message_id IS NOT NULL AND EXISTS (
            SELECT 1 FROM llm_calls AS m
            WHERE NOT m.is_sidechain AND m.message_id = c.message_id AND m.call_key <> c.call_key
        )
    )
)
SELECT * FROM kept
QUALIFY row_number() OVER (
    PARTITION BY call_key
    ORDER BY input_tokens + cache_read_tokens + cache_write_5m_tokens + cache_write_1h_tokens + output_tokens DESC,
             (speed IS NOT NULL) DESC, source_id, line_no
) = 1
"""


def upgrade() -> None:
    op.execute(sa.schema.CreateSequence(sa.Sequence("source_id_seq")))
    op.create_table(
        "sources",
        sa.Column("source_id", sa.BigInteger, primary_key=True, autoincrement=False),
        sa.Column("path", sa.Text, nullable=False, unique=True),
        sa.Column("format", sa.Text, nullable=False),
        sa.Column("size_bytes", sa.BigInteger, nullable=False),
        sa.Column("mtime_ns", sa.BigInteger, nullable=False),
        sa.Column("head_bytes", sa.BigInteger, nullable=False),
        sa.Column("head_sha256", sa.Text, nullable=False),
        sa.Column("byte_offset", sa.BigInteger, nullable=False),
        sa.Column("lines_read", sa.BigInteger, nullable=False),
        sa.Column("lines_ok", sa.BigInteger, nullable=False),
        sa.Column("lines_skipped", sa.BigInteger, nullable=False),
        sa.Column("lines_problem", sa.BigInteger, nullable=False),
        sa.Column("skipped_by_rule", sa.Text, nullable=False),
        sa.Column("parser_state", sa.Text, nullable=False),
        sa.Column("ingested_at_utc", sa.DateTime, nullable=False),
    )
    op.create_table(
        "sessions",
        sa.Column("source_id", sa.BigInteger, nullable=False),
        sa.Column("session_id", sa.Text, nullable=False),
        sa.Column("agent", sa.Text, nullable=False),
        sa.Column("project", sa.Text),
        sa.Column("cwd", sa.Text),
        sa.Column("git_branch", sa.Text),
        sa.Column("parent_session_id", sa.Text),
        sa.Column("agent_id", sa.Text),
        sa.Column("task_label", sa.Text),
        sa.Column("outcome", sa.Text),
        sa.Column("agent_version", sa.Text),
        sa.Column("started_at_utc", sa.DateTime),
        sa.Column("ended_at_utc", sa.DateTime),
        sa.PrimaryKeyConstraint("source_id", "session_id"),
    )
    op.create_table(
        "llm_calls",
        sa.Column("source_id", sa.BigInteger, nullable=False),
        sa.Column("call_key", sa.Text, nullable=False),
        sa.Column("session_id", sa.Text, nullable=False),
        sa.Column("line_no", sa.BigInteger, nullable=False),
        sa.Column("ts_utc", sa.DateTime),
        sa.Column("provider", sa.Text),
        sa.Column("model", sa.Text),
        sa.Column("message_id", sa.Text),
        sa.Column("request_id", sa.Text),
        sa.Column("input_tokens", sa.BigInteger, nullable=False),
        sa.Column("cache_read_tokens", sa.BigInteger, nullable=False),
        sa.Column("cache_write_5m_tokens", sa.BigInteger, nullable=False),
        sa.Column("cache_write_1h_tokens", sa.BigInteger, nullable=False),
        sa.Column("output_tokens", sa.BigInteger, nullable=False),
        sa.Column("reasoning_tokens", sa.BigInteger),
        sa.Column("web_search_requests", sa.BigInteger, nullable=False),
        sa.Column("context_window_tokens", sa.BigInteger),
        sa.Column("usage_source", sa.Text, nullable=False),
        sa.Column("output_is_lower_bound", sa.Boolean, nullable=False),
        sa.Column("cache_ttl_known", sa.Boolean, nullable=False),
        sa.Column("is_sidechain", sa.Boolean, nullable=False),
        sa.Column("is_aggregate", sa.Boolean, nullable=False),
        sa.Column("stop_reason", sa.Text),
        sa.Column("service_tier", sa.Text),
        sa.Column("speed", sa.Text),
        sa.PrimaryKeyConstraint("source_id", "call_key"),
    )
    op.create_table(
        "tool_calls",
        sa.Column("source_id", sa.BigInteger, nullable=False),
        sa.Column("tool_call_id", sa.Text, nullable=False),
        sa.Column("session_id", sa.Text, nullable=False),
        sa.Column("call_key", sa.Text),
        sa.Column("line_no", sa.BigInteger),
        sa.Column("ts_utc", sa.DateTime),
        sa.Column("tool_name", sa.Text),
        sa.Column("tool_kind", sa.Text),
        sa.Column("mcp_server", sa.Text),
        sa.Column("mcp_tool", sa.Text),
        sa.Column("args_bytes", sa.BigInteger),
        sa.Column("args_sha256", sa.Text),
        sa.Column("args_skeleton", sa.Text),
        sa.Column("result_line_no", sa.BigInteger),
        sa.Column("result_ts_utc", sa.DateTime),
        sa.Column("result_bytes", sa.BigInteger),
        sa.Column("result_sha256", sa.Text),
        sa.Column("result_content_types", sa.Text),
        sa.Column("result_truncated", sa.Boolean),
        sa.Column("is_error", sa.Boolean),
        sa.Column("duration_ms", sa.BigInteger),
        sa.Column("duration_method", sa.Text),
        sa.PrimaryKeyConstraint("source_id", "tool_call_id"),
    )
    op.create_table(
        "session_events",
        sa.Column("source_id", sa.BigInteger, nullable=False),
        sa.Column("line_no", sa.BigInteger, nullable=False),
        sa.Column("session_id", sa.Text, nullable=False),
        sa.Column("ts_utc", sa.DateTime),
        sa.Column("kind", sa.Text, nullable=False),
        sa.Column("detail", sa.Text),
        sa.PrimaryKeyConstraint("source_id", "line_no", "kind"),
    )
    op.create_table(
        "ingest_problems",
        sa.Column("source_id", sa.BigInteger, nullable=False),
        sa.Column("line_no", sa.BigInteger, nullable=False),
        sa.Column("byte_offset", sa.BigInteger, nullable=False),
        sa.Column("kind", sa.Text, nullable=False),
        sa.Column("message", sa.Text, nullable=False),
        sa.Column("excerpt", sa.Text),
        sa.PrimaryKeyConstraint("source_id", "line_no", "kind"),
    )
    op.execute(DEDUP_VIEW)


def downgrade() -> None:
    raise NotImplementedError("tokaudit migrations are forward-only")
