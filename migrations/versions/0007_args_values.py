"""tool_calls.args_values: the string and number values of a call's arguments (bounded, redacted).

Revision ID: 0007
Revises: 0006
"""

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("tool_calls", sa.Column("args_values", sa.ARRAY(sa.Text)))


def downgrade() -> None:
    raise NotImplementedError("tokaudit migrations are forward-only")
