"""Read-side caches: price_cache (probed rates per price-table version), llm_calls_dedup_cache and store_state.

Revision ID: 0003
Revises: 0002
"""

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None

RATE = sa.Numeric(38, 18)


def upgrade() -> None:
    op.create_table(
        "price_cache",
        sa.Column("price_source", sa.Text, nullable=False),
        sa.Column("model", sa.Text, nullable=False),
        sa.Column("provider", sa.Text, nullable=False),
        sa.Column("price_day", sa.Date, nullable=False),
        sa.Column("above_input_tokens", sa.BigInteger, nullable=False),
        sa.Column("price_model_id", sa.Text),
        sa.Column("pricing_tier", sa.Text),
        sa.Column("input_usd_per_token", RATE),
        sa.Column("cache_read_usd_per_token", RATE),
        sa.Column("cache_write_5m_usd_per_token", RATE),
        sa.Column("cache_write_1h_usd_per_token", RATE),
        sa.Column("output_usd_per_token", RATE),
        sa.Column("web_search_usd_per_request", RATE),
        sa.PrimaryKeyConstraint("price_source", "model", "provider", "price_day", "above_input_tokens"),
    )
    op.create_table(
        "store_state",
        sa.Column("key", sa.Text, primary_key=True),
        sa.Column("value", sa.BigInteger, nullable=False),
    )
    op.execute("INSERT INTO store_state VALUES ('data_version', 1), ('dedup_version', 0)")
    # Same columns as llm_calls, no keys: a derived copy, rebuilt whole when stale.
    op.execute("CREATE TABLE llm_calls_dedup_cache AS SELECT * FROM llm_calls LIMIT 0")


def downgrade() -> None:
    raise NotImplementedError("tokaudit migrations are forward-only")
