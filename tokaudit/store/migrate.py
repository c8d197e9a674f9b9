"""Schema versions: where the Alembic scripts are, which revision is head, and upgrading.

Revisions are numbered (``0001``, ``0002``, ...) and forward-only; the revision
id is the file name's number, so the head can be known from a directory
listing without importing Alembic (which costs ~0.2 s on every command).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sqlalchemy.engine import Connection

_REVISION_FILE = re.compile(r"^(\d{4})_[a-z0-9_]+\.py$")


def migrations_dir() -> Path:
    """The Alembic script directory: shipped in the wheel, or the repository's ``migrations/``."""
    package_dir = Path(__file__).resolve().parent.parent
    for candidate in (package_dir / "_migrations", package_dir.parent / "migrations"):
        if (candidate / "env.py").is_file():
            return candidate
    raise FileNotFoundError(f"tokaudit's migrations folder is missing next to {package_dir}")


def known_revisions() -> list[str]:
    """All revision ids in order, oldest first."""
    names = (p.name for p in (migrations_dir() / "versions").iterdir())
    return sorted(m.group(1) for m in map(_REVISION_FILE.match, names) if m)


def head_revision() -> str:
    """The newest revision id this tokaudit knows."""
    return known_revisions()[-1]


def alembic_config(connection: Connection | None = None):
    """An Alembic ``Config`` bound to an open connection (or none, for offline SQL)."""
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(migrations_dir()))
    config.set_main_option("sqlalchemy.url", "duckdb:///:memory:")
    if connection is not None:
        config.attributes["connection"] = connection
    return config


def upgrade(connection: Connection, revision: str = "head") -> None:
    """Upgrade the database behind ``connection`` to ``revision`` and commit."""
    from alembic import command

    command.upgrade(alembic_config(connection), revision)
    connection.commit()


def revision_docs() -> list[tuple[str, str]]:
    """(revision, first docstring line) for every revision, oldest first."""
    out = []
    for path in sorted((migrations_dir() / "versions").glob("[0-9][0-9][0-9][0-9]_*.py")):
        text = path.read_text(encoding="utf-8")
        first = text.split('"""', 2)[1].strip().splitlines()[0] if text.startswith('"""') else path.stem
        out.append((path.name[:4], first))
    return out
