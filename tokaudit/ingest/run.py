"""One ingest run against a database given by path or URL: open, ingest, close, record the stat snapshot."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence

from tokaudit.config import DEFAULT_MAX_LINE_BYTES
from tokaudit.ingest import get_format, statcache
from tokaudit.ingest.discover import resolve_files
from tokaudit.ingest.summary import IngestSummary


def ingest_db(
    db: str,
    paths: Sequence[str | os.PathLike[str]] | None = None,
    *,
    forced_format: str | None = None,
    workers: int | None = None,
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
    final: bool = False,
    wait_s: float = 0.0,
    upgrade: bool = True,
    on_progress: Callable[[int, int], None] | None = None,
) -> IngestSummary:
    """Ingest ``paths`` into the database ``db`` (a file path, ``:memory:`` or a duckdb:// URL).

    When the database is a file and its stat snapshot shows that none of the
    files changed, returns without opening it (see ``statcache``).
    """
    if forced_format is not None:
        get_format(forced_format)
    found = resolve_files(paths)
    db_file = _db_file(db)
    if db_file is not None and forced_format is None and not final:
        summary = statcache.unchanged_summary(db_file, found)
        if summary is not None:
            return summary
    from tokaudit.ingest.runner import ingest_files
    from tokaudit.store.engine import open_store

    with open_store(db, wait_s=wait_s, upgrade=upgrade) as store:
        summary = ingest_files(
            store, found, forced_format=forced_format, workers=workers, max_line_bytes=max_line_bytes, final=final,
            on_progress=on_progress,
        )
        sources = store.duck.execute("SELECT path, size_bytes, mtime_ns, format FROM sources").fetchall()
    if db_file is not None:
        statcache.save(db_file, sources)
    return summary


def _db_file(db: str) -> str | None:
    """The database's file path, or None for in-memory databases."""
    from tokaudit.store.urls import db_path

    path = db_path(db)
    return None if path == ":memory:" else path
