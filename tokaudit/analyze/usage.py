"""Usage breakdowns: tokens, cost and calls by time period, session, project, model, tool or MCP server.

Token columns are exact sums of reported usage over deduplicated requests
(``llm_calls_dedup``). Cost is priced per request (see ``pricing``); rows with
requests whose model has no price carry ``unpriced_calls`` and their cost
covers only the priced part — an unknown price is never counted as $0.

Tool and MCP-server rows count tool calls and the size of what they returned;
their token figure is an *estimate* (``result_tokens_method``), because agent
logs report tokens per request, not per tool result.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date
from decimal import Decimal
from typing import Any

from tokaudit.analyze.pricing import FAST_MODE_SUFFIX, price_rows, price_source
from tokaudit.config import Config
from tokaudit.errors import TokauditError
from tokaudit.store.engine import Store
from tokaudit.store.queries import dedup_relation, fetch_dicts, tool_calls_sql

TOKEN_DIMENSIONS = ("day", "week", "month", "session", "project", "model", "agent")
TOOL_DIMENSIONS = ("tool", "mcp-server")
DIMENSIONS = TOKEN_DIMENSIONS + TOOL_DIMENSIONS

_PRICE_COLUMNS = (
    "model",
    "provider",
    "price_day",
    "above_input_tokens",
    "price_model_id",
    "pricing_tier",
    "input_usd_per_token",
    "cache_read_usd_per_token",
    "cache_write_5m_usd_per_token",
    "cache_write_1h_usd_per_token",
    "output_usd_per_token",
    "web_search_usd_per_request",
)
_UNPRICED_MARK = -2  # price_cache row saying "genai-prices has no price for this model"


@dataclass
class UsageReport:
    """A usage breakdown ready to print or serialise."""

    by: str
    tz: str
    since: date | None
    until: date | None
    columns: list[str]
    rows: list[dict[str, Any]]
    totals: dict[str, Any]
    unpriced_models: list[str] = field(default_factory=list)
    price_source: str = ""
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "by": self.by,
            "tz": self.tz,
            "since": self.since.isoformat() if self.since else None,
            "until": self.until.isoformat() if self.until else None,
            "price_source": self.price_source,
            "unpriced_models": self.unpriced_models,
            "notes": self.notes,
            "rows": [_jsonable(r) for r in self.rows],
            "totals": _jsonable(self.totals),
        }


def _jsonable(row: dict[str, Any]) -> dict[str, Any]:
    return {k: (float(v) if isinstance(v, Decimal) else v.isoformat() if isinstance(v, date) else v) for k, v in row.items()}


# The key a request is priced under (``pricing.FAST_MODE_SUFFIX``): its model, or for a request Claude
# served in fast mode its model marked so, which has prices of its own.
PRICE_MODEL_SQL = f"CASE WHEN c.speed = 'fast' THEN c.model || '{FAST_MODE_SUFFIX}' ELSE c.model END"


# The --by mcp-server rows of MCP calls whose log names no server (OpenHands' call_tool_mcp), and of the agent's own tools.
UNNAMED_MCP_SERVER = "(unnamed MCP server)"
NOT_MCP = "(not MCP)"


def mcp_server_sql(t: str) -> str:
    """SQL: the MCP server of a tool call (``t`` the alias of a ``tool_calls`` row): the one its log names, else
    ``UNNAMED_MCP_SERVER`` for an MCP call (OpenHands, OTel without a server name); NULL for the agent's own tools."""
    return f"coalesce({t}.mcp_server, CASE WHEN {t}.tool_kind = 'mcp' THEN '{UNNAMED_MCP_SERVER}' END)"


# The price day of a request logged without a timestamp (SWE-agent's trajectories): no genai-prices row is
# dated so, so only a ``[pricing.overrides]`` entry prices it.
UNDATED_PRICE_DAY = date(1970, 1, 1)


def _calls_sql(relation: str, local: str, where: str) -> str:
    # Local time decides the day a request belongs to (--tz); pricing uses the UTC day.
    return f"""
        SELECT c.*,
               {PRICE_MODEL_SQL} AS price_model,
               {local} AS ts_local,
               coalesce(CAST(c.ts_utc AS DATE), DATE '{UNDATED_PRICE_DAY.isoformat()}') AS price_day,
               c.input_tokens + c.cache_read_tokens + c.cache_write_5m_tokens + c.cache_write_1h_tokens AS input_total_tokens
        FROM {relation} AS c
        WHERE {where}
    """


def _window(since: date | None, until: date | None, column: str) -> tuple[str, list[Any]]:
    clauses, params = ["TRUE"], []
    if since:
        clauses.append(f"CAST({column} AS DATE) >= ?")
        params.append(since)
    if until:
        clauses.append(f"CAST({column} AS DATE) <= ?")
        params.append(until)
    return " AND ".join(clauses), params


def _check_tz(store: Store, tz: str) -> None:
    if tz == "UTC":
        return  # the default needs no lookup
    names = {r[0] for r in store.duck.execute("SELECT name FROM pg_timezone_names()").fetchall()}
    if tz not in names:
        raise TokauditError(f"unknown time zone {tz!r}", hint="use an IANA name such as UTC, Europe/Berlin or America/New_York")


def _prepare_prices(store: Store, config: Config, keys: list[tuple[str | None, str | None, date]]) -> tuple[list[list[Any]], list[str]]:
    """Rates for every (model, provider, day): cached in ``price_cache``, or returned as extra rows.

    genai-prices is imported and probed only for keys not cached yet under its
    current version; a writable store caches them. Override rows (and, for a
    read-only store, freshly probed rows) are returned to be joined in-line.
    Returns (extra rows in ``_PRICE_COLUMNS`` order, models with no price).
    """
    source = price_source()
    duck = store.duck
    cached = {
        (m, p, d): tier
        for m, p, d, tier in duck.execute(
            "SELECT model, provider, price_day, min(above_input_tokens) FROM price_cache WHERE price_source = ? GROUP BY ALL", [source]
        ).fetchall()
    }
    overrides = config.price_overrides

    def as_values(rows: list[dict[str, Any]]) -> list[list[Any]]:
        return [[(r.get(c) or "") if c == "provider" else r.get(c) for c in _PRICE_COLUMNS] for r in rows]

    extra: list[list[Any]] = []
    todo = [(m, p, d) for m, p, d in keys if m is not None and m not in overrides and (m, p or "", d) not in cached]
    if todo:
        rows, unpriced_now = price_rows(todo, {})
        for m, p, d in todo:
            if m in unpriced_now:
                rows.append({"model": m, "provider": p, "price_day": d, "above_input_tokens": _UNPRICED_MARK})
            cached[(m, p or "", d)] = _UNPRICED_MARK if m in unpriced_now else -1
        if store.read_only:
            extra += [v for v in as_values(rows) if v[3] != _UNPRICED_MARK]
        else:
            placeholders = ", ".join("?" * (len(_PRICE_COLUMNS) + 1))
            duck.executemany(f"INSERT OR IGNORE INTO price_cache VALUES ({placeholders})", [[source, *v] for v in as_values(rows)])
    override_rows, _ = price_rows([(m, p, d) for m, p, d in keys if m in overrides], overrides)
    extra += as_values(override_rows)
    unpriced = {m for m, p, d in keys if m is not None and m not in overrides and cached.get((m, p or "", d)) == _UNPRICED_MARK}
    if any(m is None for m, _, _ in keys):
        unpriced.add("(model not logged)")
    return extra, sorted(unpriced)


def _values_sql(rows: list[list[Any]]) -> tuple[str, list[Any]]:
    """An inline relation with the price columns (no temp table: works on a read-only store)."""
    columns = ", ".join(_PRICE_COLUMNS)
    if not rows:
        return f"SELECT {columns} FROM price_cache WHERE FALSE", []
    casts = [
        "VARCHAR", "VARCHAR", "DATE", "BIGINT", "VARCHAR", "VARCHAR",
        *["DECIMAL(38,18)"] * 6,
    ]
    row_sql = "(" + ", ".join(f"CAST(? AS {t})" for t in casts) + ")"
    return f"SELECT * FROM (VALUES {', '.join([row_sql] * len(rows))}) AS v({columns})", [x for r in rows for x in r]


def pricing_ctes(
    store: Store, config: Config, tz: str, since: date | None, until: date | None, *, scope: tuple[str, list[Any]] = ("TRUE", [])
) -> tuple[str, list[Any], list[str]]:
    """CTEs ``calls``, ``prices``, ``tiered`` (calls with the price tier each falls in) and
    ``bucketed`` (calls with a ``tier_bucket`` that ``TIER_JOIN`` turns into the tier).

    ``scope`` is a further condition on the requests (on ``session_id``, say) with its
    parameters. Returns the CTE text (to follow ``WITH``), its parameters and the models
    with no price.
    """
    _check_tz(store, tz)
    local = "ts_utc" if tz == "UTC" else f"(ts_utc AT TIME ZONE 'UTC') AT TIME ZONE '{tz}'"
    where, params = _window(since, until, local)
    where, params = f"({where}) AND ({scope[0]})", [*params, *scope[1]]
    relation = dedup_relation(store)
    found = store.duck.execute(
        f"SELECT DISTINCT {PRICE_MODEL_SQL}, provider, CAST(ts_utc AS DATE) FROM {relation} AS c WHERE {where}", params
    ).fetchall()
    # A request without a timestamp cannot be priced from genai-prices (prices change over time), only by an
    # override, which has no date: it is priced on UNDATED_PRICE_DAY, where only overrides have rows.
    keys = [(m, p, UNDATED_PRICE_DAY if d is None else d) for m, p, d in found if d is not None or m in config.price_overrides]
    extra, unpriced = _prepare_prices(store, config, keys)
    undated = {m or "(model not logged)" for m, _, d in found if d is None and m not in config.price_overrides}
    unpriced = sorted({*unpriced, *(f"{m} (requests without a timestamp)" for m in undated)})
    extra_sql, extra_params = _values_sql(extra)
    thresholds = _tier_thresholds(store, extra)
    whens = " ".join(f"WHEN c.input_total_tokens > {t} THEN {t}" for t in reversed(thresholds[1:]))
    bucket = f"CASE {whens} ELSE -1 END" if whens else "-1"
    ctes = f"""
        calls AS ({_calls_sql(relation, local, where)}),
        extra AS ({extra_sql}),
        prices AS (
            SELECT * EXCLUDE (price_source) FROM price_cache
            WHERE price_source = ? AND above_input_tokens >= -1
              AND model NOT IN (SELECT model FROM extra WHERE pricing_tier = 'override')
            UNION ALL BY NAME
            SELECT * FROM extra
        ),
        -- A request is billed at the highest tier threshold its total input exceeds (the base
        -- tier's -1 always matches). Thresholds are few and shared by models, so each request
        -- first gets the highest threshold of *any* model it exceeds (a CASE, no join), and
        -- tier_map turns that bucket into the model's own tier: the highest of its thresholds at
        -- or below the bucket. Reports sum tokens per bucket and map only the sums.
        bucketed AS (SELECT c.*, {bucket} AS tier_bucket FROM calls AS c),
        tier_map AS (
            SELECT model, provider, price_day, b.bucket,
                   max(above_input_tokens) FILTER (WHERE above_input_tokens <= b.bucket) AS tier
            FROM prices, (SELECT unnest({thresholds}) AS bucket) AS b
            GROUP BY ALL
        ),
        tiered AS (SELECT c.* EXCLUDE (tier_bucket), m.tier FROM bucketed AS c {TIER_JOIN})
    """
    return ctes, [*params, *extra_params, price_source()], unpriced


# Joins a row of ``bucketed`` (or tokens summed per bucket) to ``m.tier``, its model's tier.
TIER_JOIN = """
    LEFT JOIN tier_map AS m
      ON m.model = c.price_model AND m.provider = coalesce(c.provider, '') AND m.price_day = c.price_day AND m.bucket = c.tier_bucket
"""


def _tier_thresholds(store: Store, extra: list[list[Any]]) -> list[int]:
    """Every tier threshold a price row may carry (all models), ascending, the base tier's -1 first."""
    cached = store.duck.execute("SELECT DISTINCT above_input_tokens FROM price_cache WHERE above_input_tokens > -1").fetchall()
    return sorted({-1, *(int(row[0]) for row in cached), *(int(row[3]) for row in extra if row[3] > -1)})


# Joins a row of ``tiered`` (or tokens summed per model, provider, day and tier) to its rates ``p``.
PRICE_JOIN = """
    LEFT JOIN prices AS p
      ON p.model = c.price_model AND p.provider = coalesce(c.provider, '') AND p.price_day = c.price_day AND p.above_input_tokens = c.tier
"""
# What a row's input cost (all four kinds), and all it cost; NULL when its model has no rates.
INPUT_COST_SQL = """(
      c.input_tokens * p.input_usd_per_token
    + c.cache_read_tokens * p.cache_read_usd_per_token
    + c.cache_write_5m_tokens * p.cache_write_5m_usd_per_token
    + c.cache_write_1h_tokens * p.cache_write_1h_usd_per_token)"""
COST_SQL = f"""({INPUT_COST_SQL}
    + c.output_tokens * p.output_usd_per_token
    + c.web_search_requests * p.web_search_usd_per_request)"""


# Per dimension: the grouping expression over request rows, how to print the grouped value, the column name.
# Periods group on dates and are formatted once per group, not once per request.
_GROUP_KEYS = {
    "day": ("CAST(ts_local AS DATE)", "strftime(k, '%Y-%m-%d')", "day"),
    "week": ("CAST(date_trunc('week', ts_local) AS DATE)", "strftime(k, '%Y-%m-%d')", "week_start"),
    "month": ("CAST(date_trunc('month', ts_local) AS DATE)", "strftime(k, '%Y-%m')", "month"),
    "model": ("coalesce(model, '(model not logged)')", "k", "model"),
    "project": ("coalesce(s.project, '(unknown)')", "k", "project"),
    "session": ("coalesce(s.parent_session_id, c.session_id)", "k", "session"),
    # The agent, and for subagents their type: "claude-code", "claude-code / general-purpose", ...
    "agent": ("coalesce(s.agent, '(unknown)') || coalesce(' / ' || s.subagent_type, '')", "k", "agent"),
}
# The breakdowns whose key reads the session (``s``): only they join the sessions table.
_SESSION_KEYED = {"project", "session", "agent"}

TOKEN_COLUMNS = [
    "input_tokens",
    "cache_write_tokens",
    "cache_read_tokens",
    "output_tokens",
    "reasoning_tokens",
    "total_tokens",
    "cost_usd",
    "calls",
    "unpriced_calls",
]


def usage_report(
    store: Store,
    *,
    by: str = "day",
    since: date | None = None,
    until: date | None = None,
    tz: str = "UTC",
    config: Config | None = None,
) -> UsageReport:
    """Break usage down ``by`` a dimension (see ``DIMENSIONS``) over an optional date window in ``tz``."""
    if by not in DIMENSIONS:
        raise TokauditError(f"unknown breakdown {by!r}", hint=f"choose one of: {', '.join(DIMENSIONS)}")
    config = config or Config()
    if by in TOOL_DIMENSIONS:
        return _tool_report(store, by, since, until, tz)
    ctes, params, unpriced = pricing_ctes(store, config, tz, since, until)
    key_expr, key_out, key_name = _GROUP_KEYS[by]
    inner_extra = outer_extra = ""
    sess_join = "LEFT JOIN sess AS s ON s.session_id = c.session_id" if by in _SESSION_KEYED else ""
    if by == "session":
        inner_extra = ", any_value(s.project) AS project, min(c.ts_utc) AS first_utc, max(c.ts_utc) AS last_utc"
        outer_extra = ", any_value(c.project) AS project, min(c.first_utc) AS first_utc, max(c.last_utc) AS last_utc"
    # Cost is linear in tokens within one (model, provider, day, tier), so tokens are summed per
    # group first and priced once per group: the same exact decimal sum, far fewer multiplications.
    query = f"""
        WITH {ctes},
        sess AS (SELECT session_id, any_value(project) AS project, any_value(parent_session_id) AS parent_session_id,
                        any_value(agent) AS agent, any_value(subagent_type) AS subagent_type
                 FROM sessions GROUP BY session_id),
        grouped AS (
            SELECT {key_expr} AS k, c.price_model, c.provider, c.price_day, c.tier_bucket,
                   sum(c.input_tokens) AS input_tokens,
                   sum(c.cache_write_5m_tokens) AS cache_write_5m_tokens,
                   sum(c.cache_write_1h_tokens) AS cache_write_1h_tokens,
                   sum(c.cache_read_tokens) AS cache_read_tokens,
                   sum(c.output_tokens) AS output_tokens,
                   sum(c.reasoning_tokens) AS reasoning_tokens,
                   sum(c.web_search_requests) AS web_search_requests,
                   sum(c.input_total_tokens + c.output_tokens) AS total_tokens,
                   -- An aggregate row (totals of a run without per-call usage) stands for aggregate_calls calls.
                   sum(CASE WHEN c.is_aggregate THEN coalesce(c.aggregate_calls, 1) ELSE 1 END) AS calls,
                   count(*) FILTER (WHERE c.output_is_lower_bound) AS lower_bound_calls,
                   count(*) AS request_rows, count(c.reasoning_tokens) AS reasoning_rows,
                   sum(c.reported_cost_usd) AS reported_cost_usd, count(c.reported_cost_usd) AS reported_cost_rows
                   {inner_extra}
            FROM bucketed AS c {sess_join}
            GROUP BY ALL
        )
        SELECT {key_out} AS "{key_name}",
               sum(c.input_tokens) AS input_tokens,
               sum(c.cache_write_5m_tokens + c.cache_write_1h_tokens) AS cache_write_tokens,
               sum(c.cache_read_tokens) AS cache_read_tokens,
               sum(c.output_tokens) AS output_tokens,
               sum(c.reasoning_tokens) AS reasoning_tokens,
               sum(c.total_tokens) AS total_tokens,
               sum({COST_SQL}) AS cost_usd,
               sum(c.calls) AS calls,
               coalesce(sum(c.calls) FILTER (WHERE p.model IS NULL), 0) AS unpriced_calls,
               sum(c.lower_bound_calls) AS lower_bound_calls,
               sum(c.request_rows) AS request_rows, sum(c.reasoning_rows) AS reasoning_rows,
               sum(c.reported_cost_usd) AS reported_cost_usd, sum(c.reported_cost_rows) AS reported_cost_rows
               {outer_extra}
        FROM (SELECT c.*, m.tier FROM grouped AS c {TIER_JOIN}) AS c {PRICE_JOIN}
        GROUP BY k ORDER BY k
    """
    rows = fetch_dicts(store, query, params)
    # A cost the logs themselves state (SWE-agent's instance_cost, an OTel span's llm.cost.total, the generic
    # format's reported_cost_usd): a column beside tokaudit's own price, only where some log states one.
    stated = sum(r.pop("reported_cost_rows") or 0 for r in rows)
    token_columns = list(TOKEN_COLUMNS)
    if stated:
        token_columns.insert(token_columns.index("cost_usd") + 1, "reported_cost_usd")
    else:
        for r in rows:
            del r["reported_cost_usd"]
    out_columns = [key_name, *(["project", "first_utc", "last_utc"] if by == "session" else []), *token_columns]
    totals = _totals(rows, token_columns)
    notes = []
    if unpriced:
        notes.append(f"unpriced (no price known; cost excludes them): {', '.join(unpriced)}")
    lower = sum(r.pop("lower_bound_calls") for r in rows)
    if lower:
        notes.append(f"{lower:,} request{'s' if lower > 1 else ''} logged only part of {'their' if lower > 1 else 'its'} output (Claude Code "
                     "before 2.1.97 wrote a streaming placeholder; SWE-agent with function calling does not count the tool calls' "
                     "arguments): output is a lower bound")
    request_rows, reasoning_rows = sum(r.pop("request_rows") for r in rows), sum(r.pop("reasoning_rows") for r in rows)
    if 0 < reasoning_rows < request_rows:
        notes.append(f"reasoning is reported for {reasoning_rows:,} of {request_rows:,} requests (the others' logs do not split it out of "
                     "output): its total covers those only")
    if stated:
        notes.append(f"reported cost: what the logs themselves state for {stated:,} of {request_rows:,} requests, for comparison; "
                     "cost is tokaudit's own price of the tokens")
    silent = _sessions_without_requests(store, since, until)
    if silent:
        notes.append(f"{silent:,} session{'s' if silent > 1 else ''} in the store had no model requests (a log cut short, or one that "
                     "records no usage): nothing to count, so not in the rows")
    return UsageReport(by, tz, since, until, out_columns, rows, totals, unpriced, price_source(), notes)


def _sessions_without_requests(store: Store, since: date | None, until: date | None) -> int:
    """Sessions with no model request at all (whose start is in the window, when one is given)."""
    where, params = _window(since, until, "s.started_at_utc")
    sql = f"""SELECT count(DISTINCT s.session_id) AS n FROM sessions AS s
              WHERE {where} AND NOT EXISTS (SELECT 1 FROM llm_calls AS c WHERE c.session_id = s.session_id)"""
    return fetch_dicts(store, sql, params)[0]["n"]


def _totals(rows: list[dict[str, Any]], columns: list[str]) -> dict[str, Any]:
    """Column sums; None for a column no row knows (reasoning no log reported), 0 for every column when there are no rows."""
    if not rows:
        return dict.fromkeys(columns, 0)
    totals: dict[str, Any] = {}
    for col in columns:
        values = [r[col] for r in rows if r.get(col) is not None]
        totals[col] = sum(values) if values else None
    return totals


def _tool_report(store: Store, by: str, since: date | None, until: date | None, tz: str) -> UsageReport:
    from tokaudit.analyze.tokens import result_tokens_sql

    _check_tz(store, tz)
    local = f"(coalesce(t.ts_utc, t.result_ts_utc) AT TIME ZONE 'UTC') AT TIME ZONE '{tz}'"
    where, params = _window(since, until, local)
    # A result whose call the log does not hold (its file starts after the call: a resumed or cut transcript) has no name.
    key_expr, key_name = (("coalesce(t.tool_name, '(no tool name)')", "tool") if by == "tool"
                          else (f"coalesce({mcp_server_sql('t')}, '{NOT_MCP}')", "mcp_server"))
    joins, tokens, method = result_tokens_sql("t")
    rows = fetch_dicts(
        store,
        f"""
        WITH per_call AS (
            SELECT {key_expr} AS k, t.is_error, t.args_bytes, t.result_bytes, {tokens} AS result_tokens, {method} AS method
            FROM ({tool_calls_sql()}) AS t {joins}
            WHERE {where}
        )
        SELECT k AS "{key_name}",
               count(*) AS calls,
               count(*) FILTER (WHERE is_error) AS errors,
               sum(args_bytes) AS args_bytes,
               sum(result_bytes) AS result_bytes,
               sum(result_tokens) AS result_tokens,
               string_agg(DISTINCT method, ', ' ORDER BY method) AS result_tokens_methods,
               count(*) FILTER (WHERE result_bytes IS NULL) AS calls_without_result
        FROM per_call
        GROUP BY ALL ORDER BY calls DESC, 1
        """,
        params,
    )
    out_columns = [key_name, "calls", "errors", "args_bytes", "result_bytes", "result_tokens", "result_tokens_methods", "calls_without_result"]
    totals = _totals(rows, [c for c in out_columns[1:] if c != "result_tokens_methods"])
    from tokaudit.ingest.tokens import HEURISTIC_METHOD  # here: importing the ingest package costs every usage run

    notes = [
        "result_tokens: logs report tokens per request, not per tool result, so these are estimates unless the method says "
        "'reported' (methods: tokenizer:<encoding> counted at ingest; calibrated:<family>/<content> fitted by `tokaudit calibrate`; "
        f"{HEURISTIC_METHOD})"
    ]
    return UsageReport(by, tz, since, until, out_columns, rows, totals, [], price_source(), notes)
