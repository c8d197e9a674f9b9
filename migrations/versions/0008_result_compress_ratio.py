"""tool_calls.result_compress_ratio: how repetitive a large tool result is (zlib ratio of its first 32 KiB).

Rows ingested before this revision keep NULL until their files are ingested again.

Revision ID: 0008
Revises: 0007
"""

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("tool_calls", sa.Column("result_compress_ratio", sa.Double))


def downgrade() -> None:
    raise NotImplementedError("tokaudit migrations are forward-only")
