"""The store as polars frames: what every detector reads.

DuckDB does the joins and pricing (it is fast at both and already holds the
data); the result crosses to polars through Arrow, and detectors work on the
frames without touching the database.

* ``calls`` — one row per deduplicated model request: ``turn`` (0-based order
  within its session), ``segment`` (compactions before it), token columns,
  ``input_total_tokens``, ``cost_usd`` (NULL when unpriced), ``cost_equiv_tokens``
  (a price-free cost in input-token equivalents, comparable across sessions of
  one model), ``input_usd_per_token_eff`` (the average price of an input token
  of this request, given its cache mix: what re-sending one more token cost),
  ``context_window_tokens`` (reported, or the model family's default).
* ``tools`` — one row per tool call (an MCP transcript's copy of an agent's call
  counted once): ``turn`` of the request that asked for it, ``tool_key``
  (``server/tool`` for MCP tools, else the tool name), argument and result
  tokens with their methods, the argument skeleton, the result excerpt.
* ``sessions`` — per session: agent, task label, outcome, model, request and
  tool-call counts, tokens, cost, ``cohort`` keys.
* ``tool_defs`` and ``events`` as stored.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import polars as pl

from tokaudit.analyze.tokens import result_tokens_sql
from tokaudit.analyze.usage import _pricing_ctes
from tokaudit.config import Config
from tokaudit.store.engine import Store
from tokaudit.store.queries import tool_calls_sql

# Output tokens cost about five times an input token across current models; the price-free cost
# weights token kinds like a typical price list so sessions of one model compare by spend.
OUTPUT_WEIGHT = 5.0
CACHE_READ_WEIGHT = 0.1
CACHE_WRITE_5M_WEIGHT = 1.25
CACHE_WRITE_1H_WEIGHT = 2.0

# Context windows when the log does not state one (tokens).
DEFAULT_CONTEXT_WINDOW_SQL = """CASE
    WHEN lower(model) LIKE '%claude%' THEN 200000
    WHEN lower(model) LIKE 'gpt-5%' OR lower(model) LIKE '%codex%' THEN 272000
    WHEN lower(model) LIKE 'gpt-4.1%' THEN 1047576
    WHEN lower(model) LIKE 'gpt-4o%' THEN 128000
    WHEN lower(model) LIKE '%gemini%' THEN 1048576
    ELSE NULL END"""


@dataclass
class Frames:
    """Everything the detectors read, for one analysis window."""

    calls: pl.DataFrame
    tools: pl.DataFrame
    sessions: pl.DataFrame
    tool_defs: pl.DataFrame
    events: pl.DataFrame


def load_frames(store: Store, *, config: Config | None = None, since: datetime | None = None, until: datetime | None = None) -> Frames:
    """Read the store into frames; ``since``/``until`` (UTC) keep sessions that started in the window."""
    config = config or Config()
    ctes, params, _ = _pricing_ctes(store, config, "UTC", None, None)
    window, window_params = _session_window(since, until)
    calls = _arrow(
        store,
        f"""
        WITH {ctes},
        priced AS (
            SELECT c.*,
                   p.input_usd_per_token AS in_rate, p.cache_read_usd_per_token AS cr_rate,
                   p.cache_write_5m_usd_per_token AS cw5_rate, p.cache_write_1h_usd_per_token AS cw1h_rate,
                   p.output_usd_per_token AS out_rate, p.web_search_usd_per_request AS ws_rate
            FROM tiered AS c
            LEFT JOIN prices AS p
              ON p.model = c.model AND p.provider = coalesce(c.provider, '') AND p.price_day = c.price_day
             AND p.above_input_tokens = c.tier
        ),
        compactions AS (
            SELECT session_id, ts_utc, row_number() OVER (PARTITION BY session_id ORDER BY ts_utc) AS n
            FROM session_events WHERE kind = 'compaction' AND ts_utc IS NOT NULL
        ),
        segmented AS (
            SELECT c.*, coalesce(k.n, 0) AS segment
            FROM priced AS c ASOF LEFT JOIN compactions AS k ON k.session_id = c.session_id AND c.ts_utc >= k.ts_utc
        )
        SELECT c.session_id, c.call_key, c.ts_utc, c.model, c.line_no,
               row_number() OVER (PARTITION BY c.session_id ORDER BY c.ts_utc, c.line_no) - 1 AS turn,
               c.segment,
               c.input_tokens, c.cache_read_tokens, c.cache_write_5m_tokens, c.cache_write_1h_tokens,
               c.output_tokens, c.reasoning_tokens, c.input_total_tokens, c.is_aggregate, c.stop_reason,
               coalesce(c.context_window_tokens, {DEFAULT_CONTEXT_WINDOW_SQL}) AS context_window_tokens,
               CAST(c.input_tokens * in_rate + c.cache_read_tokens * cr_rate + c.cache_write_5m_tokens * cw5_rate
                    + c.cache_write_1h_tokens * cw1h_rate + c.output_tokens * out_rate + c.web_search_requests * ws_rate AS DOUBLE)
                   AS cost_usd,
               c.input_tokens + {CACHE_READ_WEIGHT} * c.cache_read_tokens + {CACHE_WRITE_5M_WEIGHT} * c.cache_write_5m_tokens
                   + {CACHE_WRITE_1H_WEIGHT} * c.cache_write_1h_tokens + {OUTPUT_WEIGHT} * c.output_tokens AS cost_equiv_tokens,
               CAST(CASE WHEN c.input_total_tokens > 0 THEN
                   (c.input_tokens * in_rate + c.cache_read_tokens * cr_rate + c.cache_write_5m_tokens * cw5_rate
                    + c.cache_write_1h_tokens * cw1h_rate) / c.input_total_tokens END AS DOUBLE) AS input_usd_per_token_eff,
               CAST(out_rate AS DOUBLE) AS output_usd_per_token
        FROM segmented AS c
        WHERE c.session_id IN (SELECT session_id FROM sessions WHERE {window})
        ORDER BY c.session_id, turn
        """,
        [*params, *window_params],
    )
    joins, tokens, method = result_tokens_sql("t")
    turns = pl.DataFrame(calls.select("session_id", "call_key", "turn", "ts_utc")).to_arrow()
    store.duck.register("_tokaudit_turns", turns)
    tools = _arrow(
        store,
        f"""
        WITH t0 AS ({tool_calls_sql()}),
        turns AS (SELECT * FROM _tokaudit_turns),
        -- A call without the requesting request's key (MCP transcripts, traces) belongs to the
        -- session's latest request at or before it.
        by_time AS (
            SELECT t.session_id, t.tool_call_id, n.turn
            FROM t0 AS t ASOF JOIN turns AS n ON n.session_id = t.session_id AND coalesce(t.ts_utc, t.result_ts_utc) >= n.ts_utc
            WHERE t.call_key IS NULL
        )
        SELECT t.session_id, t.tool_call_id, t.call_key, t.ts_utc, t.result_ts_utc,
               coalesce(tn.turn, bt.turn, -1) AS turn,
               t.tool_name, t.mcp_server, t.mcp_tool,
               CASE WHEN t.mcp_server IS NOT NULL THEN t.mcp_server || '/' || coalesce(t.mcp_tool, t.tool_name) ELSE t.tool_name END
                   AS tool_key,
               t.args_bytes, t.args_skeleton, t.args_sha256,
               coalesce(t.args_tokens, CAST(ceil(t.args_bytes / 4) AS BIGINT)) AS args_tokens,
               CASE WHEN t.args_tokens IS NOT NULL THEN coalesce(t.args_tokens_method, 'reported')
                    WHEN t.args_bytes IS NOT NULL THEN 'heuristic:bytes/4' END AS args_tokens_method,
               t.result_bytes, {tokens} AS result_tokens, {method} AS result_tokens_method,
               t.result_excerpt, t.result_sha256, t.is_error, t.error_kind, t.duration_ms, t.result_truncated
        FROM t0 AS t {joins}
        LEFT JOIN turns AS tn ON tn.call_key = t.call_key AND tn.session_id = t.session_id
        LEFT JOIN by_time AS bt ON bt.session_id = t.session_id AND bt.tool_call_id = t.tool_call_id
        WHERE t.session_id IN (SELECT session_id FROM sessions WHERE {window})
        ORDER BY t.session_id, turn, coalesce(t.ts_utc, t.result_ts_utc), t.line_no
        """,
        window_params,
    )
    store.duck.unregister("_tokaudit_turns")
    tools = tools.with_columns(pl.int_range(pl.len()).over("session_id").alias("call_idx"))
    sessions = _arrow(
        store,
        f"""
        SELECT session_id, any_value(agent) AS agent, any_value(project) AS project, any_value(task_label) AS task_label,
               any_value(outcome) AS outcome, any_value(parent_session_id) AS parent_session_id,
               any_value(subagent_type) AS subagent_type, min(started_at_utc) AS started_at_utc, max(ended_at_utc) AS ended_at_utc
        FROM sessions WHERE {window} GROUP BY session_id
        """,
        window_params,
    )
    sessions = _session_totals(sessions, calls, tools)
    tool_defs = _arrow(store, f"SELECT * EXCLUDE (source_id) FROM tool_defs WHERE session_id IN (SELECT session_id FROM sessions WHERE {window})", window_params)
    events = _arrow(store, f"SELECT * EXCLUDE (source_id) FROM session_events WHERE session_id IN (SELECT session_id FROM sessions WHERE {window})", window_params)
    return Frames(calls=calls, tools=tools, sessions=sessions, tool_defs=tool_defs, events=events)


def _session_window(since: datetime | None, until: datetime | None) -> tuple[str, list[datetime]]:
    clauses, params = ["TRUE"], []
    if since is not None:
        clauses.append("coalesce(started_at_utc, ended_at_utc) >= ?")
        params.append(since)
    if until is not None:
        clauses.append("coalesce(started_at_utc, ended_at_utc) < ?")
        params.append(until)
    return " AND ".join(clauses), params


def _arrow(store: Store, sql: str, params: list) -> pl.DataFrame:
    table = store.duck.sql(sql, params=params or None).to_arrow_table()
    return pl.from_arrow(table)  # type: ignore[return-value]


def _session_totals(sessions: pl.DataFrame, calls: pl.DataFrame, tools: pl.DataFrame) -> pl.DataFrame:
    """Add per-session totals, the main model and the cohort keys to the session rows."""
    per_call = calls.group_by("session_id").agg(
        pl.len().alias("requests"),
        pl.col("input_total_tokens").sum().alias("input_total_tokens"),
        pl.col("output_tokens").sum().alias("output_tokens"),
        pl.col("reasoning_tokens").sum().alias("reasoning_tokens"),
        pl.col("cost_usd").sum().alias("cost_usd"),
        pl.col("cost_usd").is_null().any().alias("has_unpriced"),
        pl.col("cost_equiv_tokens").sum().alias("cost_equiv_tokens"),
        pl.col("model").drop_nulls().mode().first().alias("model"),
        pl.col("segment").max().alias("compactions"),
        pl.col("is_aggregate").any().alias("is_aggregate"),
    )
    per_tool = tools.group_by("session_id").agg(pl.len().alias("tool_calls"))
    out = sessions.join(per_call, on="session_id", how="left").join(per_tool, on="session_id", how="left")
    return out.with_columns(
        pl.col("requests").fill_null(0),
        pl.col("tool_calls").fill_null(0),
        # Unpriced sessions still compare within their cohort on the price-free cost.
        pl.when(pl.col("has_unpriced")).then(None).otherwise(pl.col("cost_usd")).alias("cost_usd"),
    )
