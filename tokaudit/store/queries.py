"""Read-only queries over the store used by several commands."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tokaudit.store.engine import Store

if TYPE_CHECKING:
    import polars as pl


def fetch_dicts(store: Store, sql: str, params: list[Any] | None = None) -> list[dict[str, Any]]:
    """Run a query on the store's connection and return its rows as dicts keyed by column name."""
    cursor = store.duck.execute(sql, params or [])
    columns = [d[0] for d in cursor.description]
    return [dict(zip(columns, row)) for row in cursor.fetchall()]


def fetch_frame(store: Store, sql: str, params: list[Any] | None = None) -> pl.DataFrame:
    """Run a query on the store's connection and return its rows as a polars frame (through Arrow)."""
    import polars as pl  # here, not at the top: commands that only fetch rows (usage) start without it

    return pl.from_arrow(store.relational.sql(sql, params=params or None).to_arrow_table())  # type: ignore[return-value]


# The materialised copy of ``llm_calls_dedup`` (kept by ``dedup_relation``).
DEDUP_COPY = "llm_calls_dedup_cache"


def dedup_relation(store: Store) -> str:
    """Name of a relation holding ``llm_calls_dedup``'s rows, refreshing the materialised copy if stale.

    The view is always right but costs a window and an anti-join over every
    request; reports read it several times. The copy is rebuilt (in one
    transaction) only when an ingest has changed ``llm_calls`` since the last
    rebuild. A read-only store reads the view.
    """
    duck = store.duck
    state = dict(duck.execute("SELECT key, value FROM store_state").fetchall())
    if state["dedup_version"] == state["data_version"]:
        return DEDUP_COPY
    if store.read_only:
        return "llm_calls_dedup"  # cannot refresh the copy; the view gives the same rows
    with store.transaction():
        duck.execute("DELETE FROM llm_calls_dedup_cache")
        # In storage order (a file's requests together, as in llm_calls): a batched audit then reads a
        # batch's requests from a stretch of the copy (analyze.frames.session_batches).
        duck.execute("INSERT INTO llm_calls_dedup_cache SELECT * FROM llm_calls_dedup ORDER BY source_id, line_no, call_key")
        duck.execute("UPDATE store_state SET value = ? WHERE key = 'dedup_version'", [state["data_version"]])
    return DEDUP_COPY


def tool_calls_sql(where: str = "TRUE") -> str:
    """SQL for tool calls counted once: a second record of a call (an MCP transcript's copy of a
    call an agent log also holds, see ``ingest.link``) is folded into the first, filling its gaps;
    the same call id of one session stored by two files is kept once. ``where`` (a condition on
    the columns of ``tool_calls``, as ``t``) keeps some calls only, before any of that work; it must
    keep a session's calls all or none, as the records of one call are of one session. It appears
    twice in the SQL: its parameters are given twice."""
    return f"""
        SELECT t.* REPLACE (
                   coalesce(t.mcp_server, l.mcp_server) AS mcp_server,
                   coalesce(t.mcp_tool, l.mcp_tool) AS mcp_tool,
                   coalesce(t.result_bytes, l.result_bytes) AS result_bytes,
                   coalesce(t.result_content_types, l.result_content_types) AS result_content_types,
                   CASE WHEN t.result_tokens IS NULL THEN l.result_tokens ELSE t.result_tokens END AS result_tokens,
                   CASE WHEN t.result_tokens IS NULL THEN l.result_tokens_method ELSE t.result_tokens_method END AS result_tokens_method,
                   -- A failure either record saw (the agent's log may not know what the server's answer said).
                   coalesce(t.is_error OR l.is_error, t.is_error, l.is_error) AS is_error,
                   coalesce(t.duration_ms, l.duration_ms) AS duration_ms,
                   coalesce(t.result_compress_ratio, l.result_compress_ratio) AS result_compress_ratio
               )
        FROM tool_calls AS t
        LEFT JOIN (
            SELECT linked_source_id, linked_tool_call_id,
                   any_value(mcp_server) AS mcp_server, any_value(mcp_tool) AS mcp_tool, any_value(result_bytes) AS result_bytes,
                   any_value(result_content_types) AS result_content_types, any_value(result_tokens) AS result_tokens,
                   any_value(result_tokens_method) AS result_tokens_method, any_value(is_error) AS is_error,
                   any_value(duration_ms) AS duration_ms, any_value(result_compress_ratio) AS result_compress_ratio
            FROM tool_calls WHERE linked_tool_call_id IS NOT NULL GROUP BY ALL
        ) AS l ON l.linked_source_id = t.source_id AND l.linked_tool_call_id = t.tool_call_id
        -- One call stored by two files (Claude Desktop writes each server's traffic to mcp.log and to
        -- mcp-server-NAME.log; a log copied elsewhere) is one call: keep its fullest record, then the
        -- first file's. (A source holds a call id once, so exactly one record remains. The ids stored
        -- twice are found from the ids alone: a correlated anti-join on them carried every call's whole
        -- row through a join, a third of a large read.)
        LEFT JOIN (
            SELECT t.session_id, t.tool_call_id, arg_min(t.source_id, [(t.result_bytes IS NULL)::INTEGER, t.source_id]) AS kept_source_id
            FROM tool_calls AS t
            WHERE t.linked_tool_call_id IS NULL AND ({where})
            GROUP BY t.session_id, t.tool_call_id HAVING count(*) > 1
        ) AS twice ON twice.session_id = t.session_id AND twice.tool_call_id = t.tool_call_id
        WHERE t.linked_tool_call_id IS NULL AND ({where}) AND (twice.kept_source_id IS NULL OR twice.kept_source_id = t.source_id)
    """


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
    return fetch_dicts(store, sql, params)


def table_counts(store: Store) -> dict[str, int]:
    """Row counts of the main tables (for summaries and tests)."""
    names = ("sources", "sessions", "llm_calls", "tool_calls", "tool_defs", "session_events", "ingest_problems")
    return {n: store.duck.execute(f"SELECT count(*) FROM {n}").fetchall()[0][0] for n in names}


def list_sources(store: Store, *, with_problems_only: bool = False) -> list[dict[str, Any]]:
    """Every file read, with its line accounting (read = used + skipped + problems) and skip rules."""
    import json

    rows = fetch_dicts(
        store,
        f"""
        SELECT path, format, size_bytes, byte_offset, lines_read, lines_ok AS lines_used, lines_skipped, lines_problem,
               skipped_by_rule, ingested_at_utc,
               (SELECT count(*) FROM ingest_problems AS p WHERE p.source_id = s.source_id AND p.line_no = 0) AS file_problems
        FROM sources AS s
        {"WHERE lines_problem > 0 OR format = 'unknown'" if with_problems_only else ""}
        ORDER BY path
        """,
    )
    for row in rows:
        row["skipped_by_rule"] = json.loads(row["skipped_by_rule"])
        row["ingested_at_utc"] = row["ingested_at_utc"].isoformat()
    return rows
