"""Read-only queries over the store used by several commands."""

from __future__ import annotations

from typing import Any

from tokaudit.store.engine import Store


def list_problems(store: Store, *, limit: int | None = None, kind: str | None = None) -> list[dict[str, Any]]:
    """Ingest problems with their file path, newest files first, then by line."""
    sql = """
        SELECT s.path, p.line_no, p.byte_offset, p.kind, p.message, p.excerpt
        FROM ingest_problems AS p JOIN sources AS s USING (source_id)
        WHERE ? IS NULL OR p.kind = ?
        ORDER BY s.path, p.line_no
    """
    params: list[Any] = [kind, kind]
    if limit is not None:
        sql += " LIMIT ?"
        params.append(limit)
    cursor = store.duck.execute(sql, params)
    cols = [d[0] for d in cursor.description]
    return [dict(zip(cols, r)) for r in cursor.fetchall()]


def table_counts(store: Store) -> dict[str, int]:
    """Row counts of the main tables (for summaries and tests)."""
    names = ("sources", "sessions", "llm_calls", "tool_calls", "session_events", "ingest_problems")
    return {n: store.duck.execute(f"SELECT count(*) FROM {n}").fetchall()[0][0] for n in names}
