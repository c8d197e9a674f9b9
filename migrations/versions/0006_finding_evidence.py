"""findings.tool_key and findings.evidence (JSON); audit_runs.summary (JSON).

Revision ID: 0006
Revises: 0005
"""

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("findings", sa.Column("tool_key", sa.Text))
    op.add_column("findings", sa.Column("evidence", sa.Text))
    op.add_column("audit_runs", sa.Column("summary", sa.Text))


def downgrade() -> None:
    raise NotImplementedError("tokaudit migrations are forward-only")
