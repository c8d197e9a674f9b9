"""Token estimates, MCP call details, linked tool calls, aggregate calls and token fits.

* tool_calls: a bounded, redacted excerpt of each result (what findings quote
  and notice detectors read) and a MinHash of its words (what novelty compares);
  args/result token counts with the method that produced them
  (``reported``, ``tokenizer:<name>``, ``heuristic:<rule>``), MCP progress
  notifications and cancellation, protocol errors apart from tool errors, the
  call id the agent or protocol used (for linking), and the row this one is a
  second record of (an MCP transcript's copy of an agent's call);
* llm_calls: how many calls an aggregate row stands for, and a cost the log
  itself reported (never used as the price, shown beside it);
* tool_defs: the whole definition's size (it is sent to the model each turn);
* token_fits: tokens-per-byte fitted from logs that hold both text and exact usage.

Revision ID: 0005
Revises: 0004
"""

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None

LLM_CALL_COLUMNS = [
    ("aggregate_calls", sa.BigInteger),
    ("reported_cost_usd", sa.Numeric(38, 18)),
]

TOOL_CALL_COLUMNS = [
    ("args_tokens", sa.BigInteger),
    ("args_tokens_method", sa.Text),
    ("result_tokens", sa.BigInteger),
    ("result_tokens_method", sa.Text),
    ("progress_count", sa.BigInteger),
    ("cancelled", sa.Boolean),
    ("error_kind", sa.Text),
    ("error_code", sa.BigInteger),
    ("protocol_call_id", sa.Text),
    ("linked_source_id", sa.BigInteger),
    ("linked_tool_call_id", sa.Text),
    ("result_excerpt", sa.Text),
    ("result_sig", sa.ARRAY(sa.BigInteger)),
]


def upgrade() -> None:
    # The llm_calls_dedup view selects * and DuckDB re-binds it, so it gains the columns too; the
    # cache is filled from the view by position, so both tables get them in the same order.
    for name, type_ in LLM_CALL_COLUMNS:
        op.add_column("llm_calls", sa.Column(name, type_))
        op.add_column("llm_calls_dedup_cache", sa.Column(name, type_))
    for name, type_ in TOOL_CALL_COLUMNS:
        op.add_column("tool_calls", sa.Column(name, type_))
    op.add_column("tool_defs", sa.Column("definition_bytes", sa.BigInteger))
    op.create_table(
        "token_fits",
        sa.Column("model_family", sa.Text, nullable=False),
        sa.Column("content_type", sa.Text, nullable=False),
        sa.Column("tokens_per_byte", sa.Double, nullable=False),
        sa.Column("args_tokens_per_byte", sa.Double, nullable=False),
        sa.Column("overhead_tokens", sa.Double, nullable=False),
        sa.Column("samples", sa.BigInteger, nullable=False),
        sa.Column("held_out", sa.BigInteger, nullable=False),
        sa.Column("median_rel_error", sa.Double),
        sa.Column("p90_rel_error", sa.Double),
        sa.Column("heuristic_median_rel_error", sa.Double),
        sa.Column("heuristic_p90_rel_error", sa.Double),
        sa.Column("fitted_at_utc", sa.DateTime, nullable=False),
        sa.PrimaryKeyConstraint("model_family", "content_type"),
    )
    op.execute("UPDATE store_state SET value = value + 1 WHERE key = 'data_version'")


def downgrade() -> None:
    raise NotImplementedError("tokaudit migrations are forward-only")
