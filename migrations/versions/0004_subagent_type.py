"""sessions.subagent_type: what kind of subagent a session is (Claude Code agentType, Codex fork/spawn).

Revision ID: 0004
Revises: 0003
"""

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("sessions", sa.Column("subagent_type", sa.Text))


def downgrade() -> None:
    raise NotImplementedError("tokaudit migrations are forward-only")
