"""Database locations: ``--db`` values (a path, ``:memory:`` or a duckdb:// URL) as URLs and file paths.

Kept free of DuckDB and SQLAlchemy imports: a no-op ingest resolves the
database path without loading either.
"""

from __future__ import annotations

from pathlib import Path

from tokaudit.errors import TokauditError


def db_url(db: str) -> str:
    """Turn a ``--db`` value (path or URL) into a SQLAlchemy URL."""
    if "://" in db:
        if not db.startswith("duckdb://"):
            raise TokauditError(f"unsupported database URL {db!r}", hint="use a file path or a duckdb:///PATH URL")
        return db
    if db == ":memory:":
        return "duckdb:///:memory:"
    return f"duckdb:///{Path(db).expanduser().resolve()}"


def db_path(db: str) -> str:
    """The filesystem path behind a ``--db`` value (``:memory:`` for an in-memory database)."""
    return db_url(db).removeprefix("duckdb:///")


def missing_db_file(db: str) -> str | None:
    """The file a ``--db`` value names when that file is not there, else None (it exists, or is in memory):
    commands that only read what was ingested refuse it rather than create an empty database."""
    path = db_path(db)
    return None if path == ":memory:" or Path(path).exists() else path
