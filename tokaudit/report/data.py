"""What a report reads from the store: a few column-lean queries, returned as polars frames.

A report needs far less than the detectors: no result text, MinHash signatures or
wording flags. ``analyze.frames.load_frames`` loads all of those and takes tens of
seconds on a million requests, so the report reads its own lean frames here, with
the same conventions, and hands them to the shared analysis code
(``analyze.replay.call_attribution``) as a :class:`~tokaudit.analyze.frames.Frames`.
On a million requests and tool calls the whole read takes about 3 s
(``benchmarks/results-report.md``).

* ``calls`` — every deduplicated request of the sessions that have a request in the
  window, priced (``cost_usd`` NULL when unpriced), with ``turn`` numbered over the
  *whole* session exactly as the audit numbers it (time, then line), so a finding's
  turn range points at the same requests; ``in_window`` marks those the report counts;
  ``sid`` and ``call_hash`` are 64-bit hashes of the session id and request key.
* ``tools`` — tool calls (a call recorded twice counted once) whose time falls in the
  window, with argument and result tokens and the method of each estimate, attached
  to the turn of the request that asked for them (or the latest request before).
* ``sessions`` — agent, project, parent and start time of every session above.

Windows are whole days in ``tz`` on the request's time, as in ``tokaudit usage``.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import date, timedelta
from typing import Any

import polars as pl

from tokaudit.analyze.frames import calls_turn, compaction_segments
from tokaudit.analyze.pricing import price_source
from tokaudit.analyze.tokens import HEURISTIC_BYTES_PER_TOKEN, result_tokens_sql
from tokaudit.analyze.usage import COST_SQL, PRICE_JOIN, mcp_server_sql, pricing_ctes
from tokaudit.config import Config
from tokaudit.errors import TokauditError
from tokaudit.redact import redact
from tokaudit.store.engine import Store
from tokaudit.store.queries import fetch_dicts, fetch_frame, tool_calls_sql

MAX_PROBLEMS_LISTED = 20  # problems quoted in a report; the rest are counted by kind

_LAST_RE = re.compile(r"^\s*(\d+)\s*([dw])\s*$", re.IGNORECASE)


@dataclass(frozen=True)
class Window:
    """The days a report covers (inclusive, in ``tz``); an open end means "from the first" / "to the last"."""

    since: date | None = None
    until: date | None = None
    tz: str = "UTC"

    @property
    def days(self) -> int | None:
        """Length in days, when both ends are set."""
        if self.since is None or self.until is None:
            return None
        return (self.until - self.since).days + 1

    def previous(self) -> Window | None:
        """The window of the same length just before this one (None when an end is open)."""
        days = self.days
        if days is None or self.since is None:
            return None
        return Window(self.since - timedelta(days=days), self.since - timedelta(days=1), self.tz)

    def label(self) -> str:
        """Human form: ``2026-03-01 – 2026-03-07 (UTC)``."""
        start = self.since.isoformat() if self.since else "first request"
        end = self.until.isoformat() if self.until else "last request"
        return f"{start} – {end} ({self.tz})"

    def to_dict(self) -> dict[str, Any]:
        """The window as JSON-ready values, with the previous window deltas compare with."""
        prev = self.previous()
        return {
            "since": self.since.isoformat() if self.since else None,
            "until": self.until.isoformat() if self.until else None,
            "tz": self.tz,
            "days": self.days,
            "previous": None if prev is None else {"since": prev.since.isoformat(), "until": prev.until.isoformat()},  # type: ignore[union-attr]
        }


def parse_last(text: str) -> int:
    """Days in a ``--last`` duration: ``7d`` → 7, ``2w`` → 14.

    Examples:
        >>> parse_last("7d"), parse_last("2w")
        (7, 14)
    """
    match = _LAST_RE.match(text)
    if not match or int(match.group(1)) < 1:
        raise TokauditError(f"{text!r} is not a duration", hint="use a number of days or weeks, such as 1d, 7d or 4w")
    n = int(match.group(1))
    return n * 7 if match.group(2).lower() == "w" else n


def resolve_window(since: date | None, until: date | None, last: str | None, today: date, tz: str = "UTC") -> Window:
    """The report window from ``--since``/``--until`` or ``--last`` (the ``last`` days up to ``today``)."""
    if last is not None:
        if since is not None or until is not None:
            raise TokauditError("--last cannot be combined with --since/--until", hint="give either --last 7d or --since/--until")
        days = parse_last(last)
        return Window(today - timedelta(days=days - 1), today, tz)
    if since is not None and until is not None and since > until:
        raise TokauditError(f"--since {since} is after --until {until}", hint="swap the two dates")
    return Window(since, until, tz)


@dataclass
class ReportData:
    """Everything a report is computed from (see the module docstring for the frames)."""

    window: Window
    calls: pl.DataFrame
    tools: pl.DataFrame
    sessions: pl.DataFrame
    findings: list[dict[str, Any]]
    audit_run: dict[str, Any] | None
    problems_by_kind: dict[str, int]
    problems: list[dict[str, Any]]
    previous_totals: dict[str, Any] | None
    price_source: str = ""
    notes: list[str] = field(default_factory=list)


def _local_day(tz: str, column: str) -> str:
    local = column if tz == "UTC" else f"(({column}) AT TIME ZONE 'UTC') AT TIME ZONE '{tz}'"
    return f"CAST({local} AS DATE)"


def _in_window(day_sql: str, window: Window) -> tuple[str, list[Any]]:
    clauses, params = ["TRUE"], []
    if window.since is not None:
        clauses.append(f"{day_sql} >= ?")
        params.append(window.since)
    if window.until is not None:
        clauses.append(f"{day_sql} <= ?")
        params.append(window.until)
    return "(" + " AND ".join(clauses) + ")", params


# Rates cross to polars as doubles and costs are multiplied there: on a million requests DECIMAL
# products and a SQL window for turn numbers cost seconds, and a report shows cents, not the
# exact decimals `tokaudit usage` sums (the two agree to about 1e-12 of the total).
_RATES = ("input", "cache_read", "cache_write_5m", "cache_write_1h", "output")


def load_calls(store: Store, config: Config, window: Window) -> pl.DataFrame:
    """Priced requests of every session with a request in ``window`` (see the module docstring).

    ``sid`` and ``call_hash`` are 64-bit hashes of the session id and request key: joins
    and per-session windows over a million rows are several times faster on integers.
    """
    # Priced without a window: turns are numbered over whole sessions, and the window is applied
    # as a flag. Tier choice and rates come from the same CTEs as `tokaudit usage`.
    ctes, params, _ = pricing_ctes(store, config, window.tz, None, None)
    in_window, window_params = _in_window("CAST(c.ts_local AS DATE)", window)
    touched = "" if window.since is None and window.until is None else f"WHERE c.session_id IN (SELECT c.session_id FROM calls AS c WHERE {in_window})"
    rates = ", ".join(f"CAST(p.{r}_usd_per_token AS DOUBLE) AS _{r}" for r in _RATES)
    calls = fetch_frame(
        store,
        f"""
        WITH {ctes}
        SELECT c.session_id, hash(c.session_id) AS sid, hash(c.call_key) AS call_hash, c.ts_utc, c.line_no,
               CAST(c.ts_local AS DATE) AS day, c.model, c.provider,
               c.input_tokens, c.cache_read_tokens, c.cache_write_5m_tokens, c.cache_write_1h_tokens,
               c.output_tokens, coalesce(c.reasoning_tokens, 0) AS reasoning_tokens, c.input_total_tokens,
               -- An aggregate row (totals of a run without per-call usage) stands for aggregate_calls requests.
               CASE WHEN c.is_aggregate THEN coalesce(c.aggregate_calls, 1) ELSE 1 END AS requests,
               c.is_aggregate, c.usage_source, c.output_is_lower_bound, c.cache_ttl_known,
               {in_window} AS in_window, {rates},
               c.web_search_requests * CAST(p.web_search_usd_per_request AS DOUBLE) AS _web_search_usd
        FROM tiered AS c {PRICE_JOIN}
        {touched}
        """,
        [*params, *window_params, *(window_params if touched else [])],
    )
    # Turn numbers exactly as the audit's frames number them: per session, by time (missing first), then line.
    calls = calls.sort("sid", "ts_utc", "line_no", nulls_last=False)
    input_usd = sum((pl.col(f"{r}_tokens") * pl.col(f"_{r}") for r in _RATES if r != "output"), pl.lit(0.0))
    calls = calls.with_columns(
        (pl.int_range(pl.len(), dtype=pl.Int64).over("sid")).alias("turn"),
        (input_usd + pl.col("output_tokens") * pl.col("_output") + pl.col("_web_search_usd")).alias("cost_usd"),
        input_usd.alias("input_cost_usd"),
        pl.when(pl.col("input_total_tokens") > 0).then(input_usd / pl.col("input_total_tokens")).alias("input_usd_per_token_eff"),
        pl.col("_output").alias("output_usd_per_token"),
    ).drop(*[f"_{r}" for r in _RATES], "_web_search_usd", "line_no")
    return calls.with_columns(_segments(store, calls))


def _segments(store: Store, calls: pl.DataFrame) -> pl.Series:
    """For each request, how many compactions of its session happened at or before it."""
    compactions = fetch_frame(
        store, "SELECT hash(session_id) AS sid, ts_utc AS _ts FROM session_events WHERE kind = 'compaction' AND ts_utc IS NOT NULL", []
    )
    return compaction_segments(calls, compactions, "sid")


def load_tools(store: Store, window: Window, calls: pl.DataFrame) -> pl.DataFrame:
    """Tool calls whose time falls in ``window``, with token estimates, attached to a turn of ``calls``."""
    joins, tokens, method = result_tokens_sql("t")
    if not store.duck.execute("SELECT count(*) FROM token_fits").fetchall()[0][0]:
        # Nothing calibrated: the same estimate expressions, without looking up each call's model
        # (a grouping of every request by key, over a second on a million rows) to find no fit.
        joins = (
            "LEFT JOIN (SELECT CAST(NULL AS VARCHAR) AS model) AS m ON FALSE "
            "LEFT JOIN token_fits AS f ON FALSE LEFT JOIN token_fits AS fa ON FALSE"
        )
    in_window, params = _in_window(_local_day(window.tz, "coalesce(t.ts_utc, t.result_ts_utc)"), window)
    per_byte = f"CAST(ceil(t.args_bytes / {HEURISTIC_BYTES_PER_TOKEN}) AS BIGINT)"
    tools = fetch_frame(
        store,
        f"""
        SELECT t.session_id, hash(t.session_id) AS sid, hash(t.call_key) AS call_hash, coalesce(t.ts_utc, t.result_ts_utc) AS ts_utc,
               t.tool_name, {mcp_server_sql('t')} AS mcp_server,
               coalesce(CASE WHEN t.mcp_server IS NOT NULL THEN t.mcp_server || '/' || coalesce(t.mcp_tool, t.tool_name) ELSE t.tool_name END,
                        '(unnamed)') AS tool_key,
               coalesce(t.is_error, false) AS is_error, t.args_bytes, t.result_bytes,
               coalesce(t.args_tokens, {per_byte}) AS args_tokens,
               CASE WHEN t.args_tokens IS NOT NULL THEN coalesce(t.args_tokens_method, 'reported')
                    WHEN t.args_bytes IS NOT NULL THEN 'heuristic:bytes/{HEURISTIC_BYTES_PER_TOKEN}' END AS args_tokens_method,
               {tokens} AS result_tokens, {method} AS result_tokens_method
        FROM ({tool_calls_sql()}) AS t {joins}
        WHERE {in_window}
        """,
        params,
    )
    return _attach_turns(tools, calls)


def _attach_turns(tools: pl.DataFrame, calls: pl.DataFrame) -> pl.DataFrame:
    """The turn of the request that asked for each call; without one, the latest request before it; else -1 (and -1
    for a call of a session the log gives only totals for: an aggregate request, as ``analyze.frames`` places it)."""
    by_key = calls.select("call_hash", calls_turn().alias("turn")).unique("call_hash")
    tools = tools.with_row_index("_row").join(by_key, on="call_hash", how="left")
    missing = tools.filter(pl.col("turn").is_null() & pl.col("ts_utc").is_not_null())
    if not missing.is_empty():
        timeline = calls.filter(pl.col("ts_utc").is_not_null()).select("sid", pl.col("ts_utc").alias("_t"), pl.col("turn").alias("_turn"))
        found = (
            missing.select("_row", "sid", pl.col("ts_utc").alias("_t"))
            .sort("sid", "_t")
            .join_asof(timeline.sort("sid", "_t"), on="_t", by="sid", strategy="backward", check_sortedness=False)
            .select("_row", "_turn")
        )
        tools = tools.join(found, on="_row", how="left").with_columns(pl.coalesce("turn", "_turn").alias("turn")).drop("_turn")
    return tools.sort("_row").with_columns(pl.col("turn").fill_null(-1).cast(pl.Int64)).drop("_row", "call_hash")


def load_sessions(store: Store, session_ids: list[str]) -> pl.DataFrame:
    """Agent, project, parent and start of the given sessions (one row each)."""
    return fetch_frame(
        store,
        """
        SELECT session_id, any_value(agent) AS agent, any_value(subagent_type) AS subagent_type, any_value(project) AS project,
               any_value(parent_session_id) AS parent_session_id, any_value(task_label) AS task_label,
               min(started_at_utc) AS started_at_utc
        FROM sessions WHERE session_id IN (SELECT unnest(?::VARCHAR[])) GROUP BY session_id ORDER BY session_id
        """,
        [session_ids],
    )


def window_totals(store: Store, config: Config, window: Window) -> dict[str, Any]:
    """Spend, tokens, requests and sessions of one window, summed in the database (for period-over-period deltas)."""
    ctes, params, _ = pricing_ctes(store, config, window.tz, window.since, window.until)
    rows = fetch_dicts(
        store,
        f"""
        WITH {ctes}
        SELECT CAST(sum({COST_SQL}) AS DOUBLE) AS cost_usd,
               coalesce(sum(CASE WHEN c.is_aggregate THEN coalesce(c.aggregate_calls, 1) ELSE 1 END)
                        FILTER (WHERE p.model IS NULL), 0) AS unpriced_requests,
               coalesce(sum(c.input_tokens), 0) AS input_tokens,
               coalesce(sum(c.cache_write_5m_tokens + c.cache_write_1h_tokens), 0) AS cache_write_tokens,
               coalesce(sum(c.cache_read_tokens), 0) AS cache_read_tokens,
               coalesce(sum(c.output_tokens), 0) AS output_tokens,
               coalesce(sum(c.input_total_tokens + c.output_tokens), 0) AS total_tokens,
               coalesce(sum(CASE WHEN c.is_aggregate THEN coalesce(c.aggregate_calls, 1) ELSE 1 END), 0) AS requests,
               count(DISTINCT c.session_id) AS sessions
        FROM tiered AS c {PRICE_JOIN}
        """,
        params,
    )
    return {k: (v if k == "cost_usd" else int(v or 0)) for k, v in rows[0].items()}


def load_findings(store: Store, run_id: int | None = None) -> tuple[list[dict[str, Any]], dict[str, Any] | None]:
    """Findings of an audit run (default: the latest) and the run's row; ([], None) when no audit ran."""
    from tokaudit.analyze.audit import latest_run_id, list_findings

    run_id = run_id if run_id is not None else latest_run_id(store)
    if run_id is None:
        return [], None
    runs = fetch_dicts(
        store,
        "SELECT audit_run_id, started_at_utc, window_start_utc, window_end_utc, tokaudit_version FROM audit_runs WHERE audit_run_id = ?",
        [run_id],
    )
    if not runs:
        raise TokauditError(f"no audit run {run_id} in the store", hint="list runs with `tokaudit findings --json` or run `tokaudit audit`")
    findings = list_findings(store, run_id=run_id)
    for f in findings:
        # Stored as text (exact decimals); reports compute with floats.
        f["excess_usd"] = None if f["excess_usd"] is None else float(f["excess_usd"])
        # Excerpts were redacted when they were stored; again here, because reports leave the machine.
        f["explanation"] = redact(f["explanation"] or "")
        f["evidence"] = redact_tree(f["evidence"])
    return findings, runs[0]


def redact_tree(value: Any) -> Any:
    """Every string inside a JSON-like value passed through :func:`tokaudit.redact.redact`.

    Examples:
        >>> redact_tree({"quote": ["Authorization: Bearer abcdefghijk"], "n": 3})
        {'quote': ['Authorization: Bearer [REDACTED]'], 'n': 3}
    """
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {k: redact_tree(v) for k, v in value.items()}
    if isinstance(value, list):
        return [redact_tree(v) for v in value]
    return value


def load_problems(store: Store) -> tuple[dict[str, int], list[dict[str, Any]]]:
    """Ingest problems counted by kind, and the first few with their file (excerpts are redacted at ingest)."""
    from tokaudit.store.queries import list_problems

    by_kind = dict(store.duck.execute("SELECT kind, count(*) FROM ingest_problems GROUP BY kind ORDER BY 2 DESC, 1").fetchall())
    problems = list_problems(store, limit=MAX_PROBLEMS_LISTED)
    for p in problems:
        p["excerpt"] = None if p["excerpt"] is None else redact(p["excerpt"])
    return by_kind, problems


def load_report_data(store: Store, config: Config, window: Window, *, run_id: int | None = None) -> ReportData:
    """Read everything a report over ``window`` needs from ``store``."""
    calls = load_calls(store, config, window)
    tools = load_tools(store, window, calls)
    session_ids = sorted(set(calls["session_id"].unique().to_list()) | set(tools["session_id"].unique().to_list()))
    sessions = load_sessions(store, session_ids)
    findings, audit_run = load_findings(store, run_id)
    wanted = set(session_ids)
    findings = [f for f in findings if f["session_id"] in wanted]
    by_kind, problems = load_problems(store)
    previous = window.previous()
    previous_totals = window_totals(store, config, previous) if previous is not None else None
    return ReportData(
        window=window,
        calls=calls,
        tools=tools,
        sessions=sessions,
        findings=findings,
        audit_run=audit_run,
        problems_by_kind=by_kind,
        problems=problems,
        previous_totals=previous_totals,
        price_source=price_source(),
    )


def evidence_text(evidence: dict[str, Any]) -> str:
    """A finding's evidence as compact JSON text (callers redact and bound it before showing)."""
    return json.dumps(evidence, default=str, sort_keys=True, ensure_ascii=False)
