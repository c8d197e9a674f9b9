"""The store as polars frames: what every detector reads.

DuckDB prices the requests and folds linked tool-call records (it is fast at
both and already holds the data); the rows cross to polars through Arrow, where
turn numbers, joins and estimates are computed. Detectors work on the frames
without touching the database. Result text is not loaded: detectors compare
MinHash signatures and wording flags, and findings fetch the excerpts they
quote afterwards (``analyze.audit``).

* ``calls`` — one row per deduplicated model request, sorted by session and time:
  ``turn`` (0-based order within its session), ``segment`` (compactions before
  it), token columns, ``input_total_tokens``, ``cost_usd`` (NULL when unpriced),
  ``cost_equiv_tokens`` (a price-free cost in input-token equivalents, comparable
  across sessions of one model), ``input_usd_per_token_eff`` (the average price
  of an input token of this request given its cache mix: what re-sending one more
  token cost), ``context_window_tokens`` (reported, or the model family's default).
* ``tools`` — one row per tool call (a call recorded twice counted once), sorted
  by session and order (``call_idx``): ``turn`` of the request that asked for it
  (or the latest request before it), ``tool_key`` (``server/tool`` for MCP tools, numbers in
  the tool's name masked as ``#``: ``fetch_part_#`` — else the tool name; ``mcp_tool_name``: the key unmasked, where
  it was masked), argument and result tokens with their methods, hashes of
  the argument skeleton and of the exact arguments (``skel_hash``, ``args_hash``;
  long strings stay in the store) and of the exact result (``result_hash``), ``sig0``…``sig7`` (the result's word MinHash;
  ``idsig0``…``idsig7``: a listing's ids', NULL for other results),
  ``result_compress_ratio`` (how repetitive a result of 2 KiB or more is; NULL for smaller ones),
  ``has_continuation`` / ``has_directive`` (wording flags, ``analyze.lexicon``), ``progress`` (an MCP
  result's progress meter under a progress-like key, ``analyze.steering.PROGRESS_SQL``; NULL without one), ``eta``
  (any result's countdown — how long until done, how much is left — ``analyze.steering.ETA_SQL``; NULL without one),
  ``shape_hash`` (the arguments' keys), ``values_hash`` (their values' first characters: equal for
  a call re-sent with a draft grown at its end, not for one whose long text changed in its middle),
  ``unnarrated_hashes`` (per sentence beside other
  values of an MCP call, the hash of the values without it: two calls sharing one differ in that
  sentence alone — a narration of the call), ``steered`` (the arguments changed only in ways the
  previous call of the same tool and shape and its result dictated: a counter going up, a value
  copied from the result — ``analyze.steering``), ``resent`` (an MCP call re-sending its tool's previous call's
  values, whole or grown — not changed in the middle of a long text, which its exact arguments tell).
* ``sessions`` — per session: agent, task label, outcome, model, request and
  tool-call counts, tokens, cost.
* ``tool_defs`` and ``events`` as stored.
* ``links`` — which agent session an MCP transcript's connection served
  (``session_id`` → ``agent_session_id``, from the linked call records,
  ``ingest.link``): findings on either belong to one story.
"""

from __future__ import annotations

from contextlib import nullcontext
from dataclasses import dataclass, field
from datetime import datetime
from typing import NamedTuple

import polars as pl

from tokaudit.analyze import steering_cache
from tokaudit.analyze.lexicon import CONTINUATION, DIRECTIVES
from tokaudit.analyze.steering import ETA_SQL, PROGRESS_SQL, steering_sql
from tokaudit.analyze.tokens import ANY_CONTENT, CONTENT_SQL, FAMILY_PATTERNS, HEURISTIC_BYTES_PER_TOKEN
from tokaudit.analyze.usage import COST_SQL, INPUT_COST_SQL, PRICE_JOIN, mcp_server_sql, pricing_ctes
from tokaudit.config import Config
from tokaudit.ingest.base import SIG_BINS
from tokaudit.ingest.skeleton import MAX_ARG_TOKEN_CHARS, MAX_ARG_VALUE_CHARS, TEXT_CUT
from tokaudit.store.engine import Store
from tokaudit.store.queries import DEDUP_COPY, dedup_relation, fetch_frame, tool_calls_sql

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


DELEGATIONS_SCHEMA = {"session_id": pl.String, "tool_call_id": pl.String, "delegation_idx": pl.UInt32, "ts_utc": pl.Datetime("us"),
                      "result_ts_utc": pl.Datetime("us"), "args_values": pl.List(pl.String), "result_excerpt": pl.String}


@dataclass
class Frames:
    """Everything the detectors read, for one analysis window."""

    calls: pl.DataFrame
    tools: pl.DataFrame
    sessions: pl.DataFrame
    tool_defs: pl.DataFrame
    events: pl.DataFrame
    links: pl.DataFrame = field(default_factory=lambda: pl.DataFrame(schema={"session_id": pl.String, "agent_session_id": pl.String}))
    # The argument values of the calls that failed (the tool-call frame leaves every call's values out: most
    # calls succeed, and failure storms are what reads them).
    failures: pl.DataFrame = field(
        default_factory=lambda: pl.DataFrame(schema={"session_id": pl.String, "tool_call_id": pl.String, "args_values": pl.List(pl.String)})
    )
    # The calls that spawned subagents (a subagent of the session started while the call ran), with their argument
    # values and result excerpts: what a subagent was told, and what it answered (a few calls a task).
    delegations: pl.DataFrame = field(default_factory=lambda: pl.DataFrame(schema=DELEGATIONS_SCHEMA))


def load_frames(
    store: Store,
    *,
    config: Config | None = None,
    since: datetime | None = None,
    until: datetime | None = None,
    session_id: str | None = None,
    batch: SessionBatch | None = None,
) -> Frames:
    """Read the store into frames; ``since``/``until`` (UTC) keep sessions that started in the window,
    ``session_id`` one session, ``batch`` the sessions of one batch (``session_batches``)."""
    config = config or Config()
    window, window_params = _session_window(since, until)
    if session_id is not None:
        window, window_params = "session_id = ?", [session_id]
    tool_window, tool_params = call_window, call_params = window, window_params
    if batch is not None:
        window, window_params = "session_id IN (SELECT unnest(?::VARCHAR[]))", [batch.sessions]
        # The row range lets DuckDB skip the row groups of other batches' tool calls (the widest table).
        lo, hi = batch.tool_rowids or (0, -1)
        tool_window, tool_params = f"t.rowid BETWEEN ? AND ? AND {window}", [lo, hi, *window_params]
        # Likewise for the requests, when the batch holds their row ids in the deduplicated copy.
        if batch.call_rowids is not None:
            lo, hi = batch.call_rowids
            call_window, call_params = f"rowid BETWEEN ? AND ? AND {window}", [lo, hi, *window_params]
    events = fetch_frame(store, f"SELECT * EXCLUDE (source_id) FROM session_events WHERE {window}", window_params)
    calls = _calls(store, config, call_window, call_params, events)
    tools = _tools(store, calls, tool_window, tool_params, (window, window_params), batch)
    sessions = fetch_frame(
        store,
        f"""
        SELECT session_id, any_value(agent) AS agent, any_value(project) AS project, any_value(task_label) AS task_label,
               any_value(outcome) AS outcome, any_value(parent_session_id) AS parent_session_id,
               any_value(subagent_type) AS subagent_type, min(started_at_utc) AS started_at_utc, max(ended_at_utc) AS ended_at_utc
        FROM sessions WHERE {window} GROUP BY session_id
        """,
        window_params,
    )
    tool_defs = fetch_frame(store, f"SELECT * EXCLUDE (source_id) FROM tool_defs WHERE {window}", window_params)
    links = fetch_frame(
        store,
        f"""
        SELECT m.session_id, a.session_id AS agent_session_id
        FROM tool_calls AS m JOIN tool_calls AS a ON a.source_id = m.linked_source_id AND a.tool_call_id = m.linked_tool_call_id
        -- (Said outright: DuckDB then skips the unlinked calls before the window's test, ten times less work.)
        WHERE m.linked_tool_call_id IS NOT NULL AND {window.replace("session_id", "m.session_id", 1)} AND m.session_id != a.session_id
        GROUP BY m.session_id, a.session_id
        -- A connection that served several agent sessions belongs to the one it served most.
        QUALIFY row_number() OVER (PARTITION BY m.session_id ORDER BY count(*) DESC, a.session_id) = 1
        """,
        window_params,
    )
    failures = fetch_frame(
        store,
        f"SELECT t.session_id, t.tool_call_id, any_value(t.args_values) AS args_values FROM tool_calls AS t "
        f"WHERE {tool_window} AND {failed_sql('t', mcp_server_sql('t'))} "
        f"GROUP BY t.session_id, t.tool_call_id",
        tool_params,
    )
    delegations = fetch_frame(
        store,
        f"""
        SELECT t.session_id, t.tool_call_id, any_value(t.args_values) AS args_values, any_value(t.result_excerpt) AS result_excerpt,
               min(t.ts_utc) AS ts_utc, max(t.result_ts_utc) AS result_ts_utc, min(t.line_no) AS _line
        FROM tool_calls AS t
        WHERE {tool_window} AND t.ts_utc IS NOT NULL AND EXISTS (
            SELECT 1 FROM sessions AS c WHERE c.parent_session_id = t.session_id
            AND c.started_at_utc BETWEEN t.ts_utc AND coalesce(t.result_ts_utc, t.ts_utc))
        GROUP BY t.session_id, t.tool_call_id
        """,
        tool_params,
    )
    # Each call's place among its session's delegations, in the order they were made.
    delegations = delegations.sort("session_id", "ts_utc", "_line", "tool_call_id").select(
        "session_id", "tool_call_id", pl.int_range(pl.len(), dtype=pl.UInt32).over("session_id").alias("delegation_idx"),
        "ts_utc", "result_ts_utc", "args_values", "result_excerpt").cast(DELEGATIONS_SCHEMA)  # type: ignore[arg-type]
    return Frames(calls=calls, tools=tools, sessions=_session_totals(sessions, calls, tools), tool_defs=tool_defs, events=events,
                  links=links, failures=failures, delegations=delegations)


def _session_window(since: datetime | None, until: datetime | None) -> tuple[str, list[datetime]]:
    """A WHERE clause keeping rows of sessions that started in [since, until)."""
    clauses, params = [], []
    if since is not None:
        clauses.append("coalesce(started_at_utc, ended_at_utc) >= ?")
        params.append(since)
    if until is not None:
        clauses.append("coalesce(started_at_utc, ended_at_utc) < ?")
        params.append(until)
    if not clauses:
        return "TRUE", []
    return f"session_id IN (SELECT session_id FROM sessions WHERE {' AND '.join(clauses)})", params


class _Stored(NamedTuple):
    """A session of the window: its group, its rows and where they sit in the store."""

    session_id: str
    group_id: str
    rows: int
    tool_lo: int | None  # first and last row id of its tool calls
    tool_hi: int | None
    call_lo: int | None  # first row id of its requests


@dataclass
class SessionBatch:
    """Sessions audited together, and the row ids their tool calls span (None: no tool calls) and their
    requests span in the deduplicated copy of ``llm_calls`` (None: not known, read all of it) — valid while
    the store is unchanged, as it is while an audit holds it."""

    sessions: list[str]
    tool_rowids: tuple[int, int] | None
    call_rowids: tuple[int, int] | None = None
    # Where their stored steering verdicts sit in ``steering_cache`` (None: none stored); the verdicts a
    # read of the batch stores are read by a later audit.
    cache_rowids: tuple[int, int] | None = None


def session_batches(store: Store, since: datetime | None, until: datetime | None, max_rows: int) -> list[SessionBatch] | None:
    """The window's sessions split into batches of about ``max_rows`` requests plus tool calls, or None
    when they fit in one.

    A batch holds whole session groups — an agent session, its subagents and the MCP
    connections that served it — because detectors and the verdict read them together.
    Groups are taken in the order their tool calls were stored (roughly the order the logs
    were ingested), so a batch reads a stretch of the tool calls, and of the deduplicated
    requests (stored a file at a time), rather than rows from all of them;
    the baselines detectors take per tool, model and cohort are then estimated from those
    neighbouring sessions. The split is the same on every run of an unchanged store.
    """
    window, params = _session_window(since, until)
    rows = store.duck.execute(
        f"SELECT (SELECT count(*) FROM llm_calls WHERE {window}) + (SELECT count(*) FROM tool_calls WHERE {window})", [*params, *params]
    ).fetchall()[0][0]
    if rows <= max_rows:
        return None
    # Where each session's requests sit in the deduplicated copy (stored a file at a time, as llm_calls is),
    # for the batch to read a stretch of it; a read-only store with a stale copy reads the view instead.
    with_copy = dedup_relation(store) == DEDUP_COPY
    copy_span: dict[str, tuple[int, int]] = {}
    if with_copy:
        spans = store.duck.execute(f"SELECT session_id, min(rowid), max(rowid) FROM {DEDUP_COPY} WHERE {window} GROUP BY session_id", params)
        copy_span = {session_id: (lo, hi) for session_id, lo, hi in spans.fetchall()}
    spans = store.duck.execute("SELECT session_id, min(rowid), max(rowid) FROM steering_cache GROUP BY session_id")
    cache_span = {session_id: (lo, hi) for session_id, lo, hi in spans.fetchall()}
    sessions = store.duck.execute(
        f"""
        WITH tc AS (SELECT session_id, count(*) AS n, min(rowid) AS lo, max(rowid) AS hi FROM tool_calls WHERE {window} GROUP BY session_id),
        lc AS (SELECT session_id, count(*) AS n, min(rowid) AS lo FROM llm_calls WHERE {window} GROUP BY session_id),
        ids AS (
            SELECT session_id, coalesce(tc.n, 0) + coalesce(lc.n, 0) AS n, tc.lo AS tool_lo, tc.hi AS tool_hi, lc.lo AS call_lo
            FROM tc FULL JOIN lc USING (session_id)
        ),
        parents AS (SELECT session_id, any_value(parent_session_id) AS parent_id FROM sessions GROUP BY session_id),
        served AS (
            SELECT m.session_id, min(a.session_id) AS agent_id
            FROM (SELECT * FROM tool_calls WHERE linked_tool_call_id IS NOT NULL) AS m
            JOIN tool_calls AS a ON a.source_id = m.linked_source_id AND a.tool_call_id = m.linked_tool_call_id
            WHERE m.session_id != a.session_id GROUP BY m.session_id
        )
        SELECT i.session_id, coalesce(p.parent_id, s.agent_id, i.session_id) AS group_id, i.n, i.tool_lo, i.tool_hi, i.call_lo
        FROM ids AS i LEFT JOIN served AS s USING (session_id)
        LEFT JOIN parents AS p ON p.session_id = coalesce(s.agent_id, i.session_id)
        """,
        [*params, *params],
    ).fetchall()
    groups: dict[str, list[_Stored]] = {}
    for row in sessions:
        member = _Stored(*row)
        groups.setdefault(member.group_id, []).append(member)

    def stored_at(members: list[_Stored]) -> tuple[int, int, str]:
        """Where a group's first tool call (else its first request) sits in the store."""
        first_tool = min((m.tool_lo for m in members if m.tool_lo is not None), default=rows)
        first_call = min((m.call_lo for m in members if m.call_lo is not None), default=0)
        return first_tool, first_call, members[0].group_id

    batches: list[SessionBatch] = []
    size = max_rows  # the first group starts a batch
    for members in sorted(groups.values(), key=stored_at):
        n = sum(m.rows for m in members)
        if size > 0 and size + n > max_rows:
            batches.append(SessionBatch([], None))
            size = 0
        batch = batches[-1]
        batch.sessions += [m.session_id for m in members]
        for m in members:
            if m.tool_lo is not None:
                lo, hi = batch.tool_rowids or (m.tool_lo, m.tool_hi)
                batch.tool_rowids = (min(lo, m.tool_lo), max(hi, m.tool_hi))
            batch.call_rowids = _widen(batch.call_rowids, copy_span.get(m.session_id))
            batch.cache_rowids = _widen(batch.cache_rowids, cache_span.get(m.session_id))
        size += n
    if with_copy:
        for batch in batches:
            batch.call_rowids = batch.call_rowids or (0, -1)  # no requests: an empty stretch
    return batches


def _widen(span: tuple[int, int] | None, other: tuple[int, int] | None) -> tuple[int, int] | None:
    """The smallest row-id range holding both (either may be None: no rows)."""
    if span is None or other is None:
        return span or other
    return min(span[0], other[0]), max(span[1], other[1])


def _calls(store: Store, config: Config, window: str, window_params: list, events: pl.DataFrame) -> pl.DataFrame:
    # The window goes inside the pricing CTEs: priced and tiered are only the requests read.
    ctes, params, _ = pricing_ctes(store, config, "UTC", None, None, scope=(window, window_params))
    calls = fetch_frame(
        store,
        f"""
        WITH {ctes}
        SELECT c.session_id, hash(c.call_key) AS call_hash, c.ts_utc, c.model,
               c.input_tokens, c.cache_read_tokens, c.cache_write_5m_tokens, c.cache_write_1h_tokens,
               c.output_tokens, c.reasoning_tokens, c.input_total_tokens, c.is_aggregate, c.stop_reason,
               coalesce(c.context_window_tokens, {DEFAULT_CONTEXT_WINDOW_SQL.replace("model", "c.model")}) AS context_window_tokens,
               CAST({COST_SQL} AS DOUBLE) AS cost_usd,
               CAST(CASE WHEN c.input_total_tokens > 0 THEN {INPUT_COST_SQL} / c.input_total_tokens END AS DOUBLE)
                   AS input_usd_per_token_eff,
               CAST(p.output_usd_per_token AS DOUBLE) AS output_usd_per_token
        FROM tiered AS c {PRICE_JOIN}
        -- The key last: rows of one line at one instant (spans of one OTel export) keep one order on every run.
        ORDER BY c.session_id, c.ts_utc NULLS FIRST, c.line_no, c.call_key
        """,
        params,
    )
    calls = calls.with_columns(
        _index_within(calls, "session_id").alias("turn"),
        (
            pl.col("input_tokens")
            + CACHE_READ_WEIGHT * pl.col("cache_read_tokens")
            + CACHE_WRITE_5M_WEIGHT * pl.col("cache_write_5m_tokens")
            + CACHE_WRITE_1H_WEIGHT * pl.col("cache_write_1h_tokens")
            + OUTPUT_WEIGHT * pl.col("output_tokens")
        ).alias("cost_equiv_tokens"),
    )
    return calls.with_columns(_segments(calls, events))


def _index_within(frame: pl.DataFrame, column: str) -> pl.Series:
    """0-based position of each row within its run of equal ``column`` values (the frame is sorted by it)."""
    groups = frame.select(pl.int_range(pl.len(), dtype=pl.Int64).alias("_row"), pl.col(column).rle_id().alias("_g"))
    return groups.select(pl.col("_row") - pl.col("_row").min().over("_g")).to_series()


def _segments(calls: pl.DataFrame, events: pl.DataFrame) -> pl.Series:
    """For each request, how many compactions of its session happened at or before it."""
    if events.is_empty() or "kind" not in events.columns:
        return pl.Series("segment", [0] * calls.height, dtype=pl.Int64)
    compactions = events.filter((pl.col("kind") == "compaction") & pl.col("ts_utc").is_not_null())
    return compaction_segments(calls, compactions.select("session_id", pl.col("ts_utc").alias("_ts")), "session_id")


def compaction_segments(calls: pl.DataFrame, compactions: pl.DataFrame, key: str) -> pl.Series:
    """For each row of ``calls`` (columns ``key`` and ``ts_utc``), how many of its session's
    ``compactions`` (columns ``key`` and ``_ts``) happened at or before it: the ``segment`` column."""
    if compactions.is_empty():
        return pl.Series("segment", [0] * calls.height, dtype=pl.Int64)
    # Compactions are few: count them per request with a join on the sessions that have any.
    keyed = calls.select(pl.int_range(pl.len()).alias("_row"), key, "ts_utc").join(compactions, on=key)
    counts = keyed.group_by("_row").agg((pl.col("_ts") <= pl.col("ts_utc")).sum().alias("segment"))
    full = pl.DataFrame({"_row": pl.int_range(calls.height, eager=True)}).join(counts, on="_row", how="left")
    return full.sort("_row")["segment"].fill_null(0).cast(pl.Int64)


_TOOLS_ORDER = "_ts NULLS FIRST, line_no, tool_call_id"
# The remote host one of the agent's own tools called (a shell running curl or wget on a URL, a web or HTTP tool given
# one): a server outside the agent as much as an MCP server is, which can steer the agent through its answers the same
# way. Loopback hosts are the agent's own (a server it is developing). A host has one "tool" per path called (its
# segments with digits masked: ids and page numbers are values, as an MCP tool's arguments are): an API's endpoints
# are its tools, polled and called in turn, and pages read one after another are distinct reads, not one tool's
# chain. Tested cheaply first: most calls name no URL.
_FETCHING = r"""CASE WHEN {t}.mcp_server IS NOT NULL OR {t}.tool_kind = 'mcp' OR {t}.args_values IS NULL THEN false
    WHEN NOT contains(array_to_string({t}.args_values, ' '), '://') THEN false
    ELSE regexp_matches({t}.tool_name, '(?i)fetch|http|url|brows|web|request|download|scrape|crawl|curl|wget')
         OR (regexp_matches({t}.tool_name, '(?i)bash|shell|exec|command|terminal|cmd|run')
             AND regexp_matches(array_to_string({t}.args_values, ' '), '(?:^|[\s;&|(`$"''])(?:curl|wget)\s')) END"""


# A URL in a value, and whether the stored value cut it (``ingest.skeleton.args_values`` keeps a text's first
# characters and its last, with a URL they would cut whole between them, and a value without spaces up to a limit;
# a free-text command, SWE-agent's, keeps its first characters): a cut URL's host or path is not the one called.
_URL = r"""'https?://[A-Za-z0-9.-]+(?::[0-9]+)?(?:/[^\s?#''"<>|;&)`]*)?'"""
_URL_END = f"(strpos(v, regexp_extract(v, {_URL})) + length(regexp_extract(v, {_URL})) - 1)"
_URL_CUT = (f"({_URL_END} = length(v) AND length(v) IN ({MAX_ARG_VALUE_CHARS}, {MAX_ARG_TOKEN_CHARS}) "
            f"OR {_URL_END} = {MAX_ARG_VALUE_CHARS} AND strpos(v, '{TEXT_CUT}') = {MAX_ARG_VALUE_CHARS + 1})")


def remote_calls_sql(relation: str) -> str:
    """``relation`` (tool calls with ``tool_name``, ``tool_kind``, ``mcp_server`` and ``args_values``) with
    ``remote_host`` (the host the agent's own tool called, see above; NULL for other calls) and ``remote_tool``
    (its tool there: the tool's name and the path called)."""
    first_url = (f"list_filter(list_transform(r.args_values, lambda v: CASE WHEN NOT contains(v, '://') OR {_URL_CUT} THEN NULL "
                 f"ELSE regexp_extract(v, {_URL}) END), lambda u: u IS NOT NULL AND u != '')[1]")
    url = (f"CASE WHEN {_FETCHING.format(t='r')} THEN regexp_extract({first_url}, '^https?://([^/]+)(/.*)?$', ['host', 'path']) END")
    path = r"coalesce(nullif(rtrim(regexp_replace(_url.path, '/[^/]*[0-9][^/]*', '/#', 'g'), '/'), ''), '/')"
    return f"""
        SELECT * EXCLUDE (_url),
               nullif(regexp_replace(lower(_url.host), '^(?:localhost|127\\.[0-9.]+|0\\.0\\.0\\.0)(?::[0-9]+)?$', ''), '') AS remote_host,
               CASE WHEN nullif(_url.host, '') IS NOT NULL THEN tool_name || ' ' || left({path}, 80) END AS remote_tool
        FROM (SELECT r.*, {url} AS _url FROM ({relation}) AS r)"""


# An MCP server's answer saying in its own body that the call failed for now — rate limited (429) or a server error
# (500-504) in a status field near the top of a JSON answer (``{"container": …, "status": 429, "quota": …}``): a
# server may answer a throttled call as a normal result (``isError`` false). It counts as the tool's error, as the
# failure detectors read errors. (A conflict or a validation error, 409 or 422, asks the model to do something else:
# not a failure to wait out.)
IN_BAND_FAILURE_SQL = (
    r"""regexp_matches(left({c}, 200), '^\s*\{{[^\[]{{0,160}}"(?:status|statusCode|status_code|http_status|code)"\s*:\s*"?(?:429|50[0-4])\b')"""
)


def failed_sql(t: str, server: str) -> str:
    """SQL: the tool call ``t`` (a ``tool_calls`` row's alias) failed — its log says so, or, an MCP call (``server``, its
    MCP server, not NULL), its answer's own status does (``IN_BAND_FAILURE_SQL``)."""
    return f"({t}.is_error OR ({server} IS NOT NULL AND {IN_BAND_FAILURE_SQL.format(c=f'{t}.result_excerpt')}))"


# DuckDB's memory while the steering rule computes a batch's verdicts (its three windows sort wide rows).
STEERING_DUCKDB_MEMORY = "2GB"
# What the steering rule reads of a call (analyze.steering.steering_sql): the call, its order and its arguments and result.
_RULE_INPUTS = "session_id, tool_call_id, _ts, line_no, tool_key, is_mcp, remote_host, args_values, args_skeleton, args_bytes, args_hash, result_excerpt"
_WORDING = "/* wording */"  # where the tool frame's SQL computes the wording flags, when it does
_INPUT_HASH = "/* input hash */"  # and each call's steering inputs' hash, when the cache takes fingerprints from it


def _tools(
    store: Store, calls: pl.DataFrame, window: str, window_params: list, sessions: tuple[str, list], batch: SessionBatch | None
) -> pl.DataFrame:
    """The tool-call frame of the calls ``window`` keeps, of the sessions ``sessions`` names (a condition
    on ``session_id`` and its parameters); when they are a ``batch``, their stored steering verdicts are
    within its ``cache_rowids`` of ``steering_cache``."""
    # A listing's record bins follow its word bins (``ingest.base.result_features``); other results have none (NULL).
    sig = ", ".join([f"t.result_sig[{i + 1}] AS sig{i}" for i in range(SIG_BINS)]
                    + [f"t.result_sig[{SIG_BINS + i + 1}] AS idsig{i}" for i in range(SIG_BINS)])
    # A call to a server outside the agent: an MCP call, or the agent's own tool fetching from a remote host (``remote_host``).
    is_mcp = "(t._server IS NOT NULL OR t.remote_host IS NOT NULL)"
    folded = tool_calls_sql(window.replace("session_id", "t.session_id", 1))
    folded_params = [*window_params, *window_params]  # the fold's condition appears twice
    # Everything but the steering rule's inputs is reduced to its final (narrow) form first: the
    # rule's windows and the final sort then move fewer bytes per call.
    calls_sql = f"""
            SELECT t.session_id, t.tool_call_id, hash(t.call_key) AS call_hash, coalesce(t.ts_utc, t.result_ts_utc) AS _ts, t.line_no,
                   -- An MCP tool's numbers are masked: fetch_part_1 … fetch_part_16, list_flags_v1 … v12 are one tool
                   -- whose name carries a counter, and that name is the first of the values the steering rule reads.
                   -- A remote host's calls through one of the agent's tools are that host's tool.
                   CASE WHEN t._server IS NOT NULL
                        THEN t._server || '/' || regexp_replace(coalesce(t.mcp_tool, t.tool_name), '[0-9]+', '#', 'g')
                        WHEN t.remote_host IS NOT NULL THEN t.remote_host || '/' || t.remote_tool
                        ELSE t.tool_name END AS tool_key,
                   -- (The server of a remote host's calls is that host, for the detectors; reports keep them apart: remote_host.)
                   coalesce(t._server, t.remote_host) AS mcp_server, t.remote_host, t.args_bytes, hash(t.args_skeleton) AS skel_hash, hash(t.args_sha256) AS args_hash,
                   -- An MCP call's values with its tokens masked (values without spaces holding a digit: ids, numbers,
                   -- leases), its text kept: equal for the same call re-sent with new tokens the server handed out.
                   CASE WHEN t._server IS NOT NULL
                        THEN hash(list_transform(t.args_values, lambda v: CASE WHEN regexp_matches(v, '^[^[:space:]]*[0-9][^[:space:]]*$') THEN '#' ELSE v END))
                        END AS tokens_masked_hash,
                   CASE WHEN t.result_sha256 IS NOT NULL THEN hash(t.result_sha256) END AS result_hash,
                   t.args_tokens, t.args_tokens_method, t.result_bytes, t.result_tokens, t.result_tokens_method, t.result_compress_ratio,
                   t.duration_ms,
                   {CONTENT_SQL.format(c="t.result_content_types")} AS content_type,
                   {failed_sql("t", "t._server")} AS is_error,
                   t.result_excerpt IS NOT NULL OR t.result_bytes IS NOT NULL AS has_result,{_WORDING}{_INPUT_HASH}
                   {sig},
                   CASE WHEN t._server IS NOT NULL AND regexp_matches(coalesce(t.mcp_tool, t.tool_name), '[0-9]')
                        THEN list_prepend(coalesce(t.mcp_tool, t.tool_name), coalesce(t.args_values, []))
                        ELSE t.args_values END AS args_values,
                   t.args_skeleton, t.result_excerpt,
                   {is_mcp} AS is_mcp,
                   -- The name as the server gave it, where ``tool_key`` masked numbers in it: a tool renamed lookup_v2, v3 … is
                   -- new each time. (NULL elsewhere: the steering rule's windows carry every column, and a NULL costs them nothing.)
                   CASE WHEN t._server IS NOT NULL AND regexp_matches(coalesce(t.mcp_tool, t.tool_name), '[0-9]')
                        THEN t._server || '/' || coalesce(t.mcp_tool, t.tool_name) END AS mcp_tool_name
            FROM (SELECT f.*,
                         -- An MCP call's server; one the log names none for (OpenHands, OTel without a server name) is unnamed.
                         {mcp_server_sql('f')} AS _server
                  FROM ({remote_calls_sql(folded)}) AS f) AS t"""
    # The wording flags (analyze.lexicon), a poll's progress and its countdown, read from the result's text; like the
    # rule's verdicts, kept in the cache. Only MCP calls' progress is read (a poll of a server): the regex is costly.
    wording = f"""
                   coalesce(regexp_matches(t.result_excerpt, ?), false) AS has_continuation,
                   coalesce(regexp_matches(t.result_excerpt, ?), false) AS has_directive,
                   CASE WHEN {is_mcp} THEN {PROGRESS_SQL.replace("result_excerpt", "t.result_excerpt")} END AS progress,
                   {ETA_SQL.replace("result_excerpt", "t.result_excerpt")} AS eta,"""
    rule = steering_sql("computed", _TOOLS_ORDER, mcp="is_mcp", command="remote_host IS NOT NULL")
    # The rule's verdicts of sessions an earlier audit computed are read back from the store. (Its
    # version leaves out which calls were read: an audit and ``tokaudit show`` share the cache.)
    version = steering_cache.rule_version(calls_sql.replace(folded, "folded") + wording + rule + CONTINUATION + DIRECTIVES)
    cache = steering_cache.check(store, folded, folded_params, version, sessions)
    cached = steering_cache.CACHED_COLUMNS

    def kept(*last: str) -> str:
        """The columns the frame keeps, ``last`` at the end: the long texts only the rule reads are not
        fetched for it, and the cached columns come last in one order whichever way they were had."""
        moved = "".join(f", {name}" for name in last)
        return (f"session_id, tool_call_id, call_hash, _ts AS ts_utc, "
                f"* EXCLUDE (session_id, tool_call_id, call_hash, _ts, line_no, args_values, args_skeleton, result_excerpt{moved}){moved}")

    # The id last: calls of one line at one instant (parallel tools in one OTel export) keep one order on every run.
    order = f"ORDER BY session_id, {_TOOLS_ORDER}"
    tools = None
    if cache.hits and not cache.misses:
        # Every session's verdicts are stored (a repeated audit): they are read in the order they were
        # computed, which is the calls' order while the calls are unchanged, and set beside the calls —
        # a join on the two text keys cost half the read, the wording's regexes a third of the rest.
        tools = fetch_frame(store, f"WITH t AS ({calls_sql.replace(_WORDING, '').replace(_INPUT_HASH, '')}) SELECT {kept()} FROM t {order}", folded_params)
        stored = steering_cache.read(store, cache.hits, batch.cache_rowids if batch else None)
        if stored.height == tools.height and stored["session_id"].equals(tools["session_id"]) and stored["tool_call_id"].equals(tools["tool_call_id"]):
            tools = tools.hstack(stored.drop("session_id", "tool_call_id").get_columns())
        else:  # verdicts lost or left behind the store's back: computed again, and stored when it can be
            tools = None
            cache = steering_cache.check(store, folded, folded_params, version, distrust=True)
    if tools is None:

        def beside_calls(verdicts: str) -> str:
            """The calls of ``t`` with the steering verdicts of ``verdicts`` (SQL of rows keyed by session and call id)."""
            return f"""
            SELECT t.*, {", ".join(f"v.{name}" for name in steering_cache.STEERING_COLUMNS)}
            FROM t JOIN ({verdicts}) AS v USING (session_id, tool_call_id)"""

        read_back = beside_calls("SELECT * FROM steering_cache WHERE session_id IN (SELECT session_id FROM hits)")
        # The rule reads only its inputs (its windows then carry narrow rows); its verdicts are set beside the calls.
        branches = ([beside_calls(rule)] if cache.misses or not cache.hits else []) + ([read_back] if cache.hits else [])
        # Sessions none of which had stored verdicts: their fingerprints come from the calls read here.
        input_hash = f"\n                   {steering_cache.input_hash_sql('t')} AS _input_hash," if cache.unchecked else ""
        # A batch is read under the audit's memory cap (analyze.audit), which makes the rule's windows spill
        # their sorts of wide rows to disk: the rule gets more while it runs (a batch's query took 4.7-4.8 s
        # instead of 5.8-6.6 s; benchmarks/results-detectors-speed.md).
        with store.memory_limit(STEERING_DUCKDB_MEMORY) if batch is not None else nullcontext():
            tools = fetch_frame(
                store,
                f"""
            WITH t AS ({calls_sql.replace(_WORDING, wording).replace(_INPUT_HASH, input_hash)}),
            hits AS (SELECT unnest(?::VARCHAR[]) AS session_id),
            computed AS (SELECT {_RULE_INPUTS} FROM t WHERE session_id NOT IN (SELECT session_id FROM hits)),
            steered AS ({" UNION ALL BY NAME ".join(branches)})
            SELECT {kept(*cached)}
            FROM steered {order}
            """,
                [CONTINUATION, DIRECTIVES, *folded_params, cache.hits],
            )
    if cache.unchecked:
        steering_cache.take_fingerprints(cache, tools, "_input_hash")
        tools = tools.drop("_input_hash")
    tools = tools.with_columns(_index_within(tools, "session_id").alias("call_idx"))
    steering_cache.save(store, cache, tools)
    tools = _attach_turns(tools, calls)
    return _estimate_tokens(store, tools)


def calls_turn() -> pl.Expr:
    """Per request: the turn its tool calls are placed on — its own, or -1 (none) for an aggregate request, a log's one
    total for a whole run (SWE-agent), whose calls no turn asked for."""
    return pl.when(~pl.col("is_aggregate")).then(pl.col("turn")).otherwise(-1)


def _attach_turns(tools: pl.DataFrame, calls: pl.DataFrame) -> pl.DataFrame:
    """The turn (and model) of the request that asked for each call; without one, the latest request before it.
    ``request_hash`` is that request's ``call_hash`` (an integer key into ``calls``; null when none). A call of a
    session the log gives only totals for (an aggregate request: SWE-agent) has no turn (-1), its request aside."""
    by_key = calls.select("call_hash", calls_turn().alias("turn"), "model", pl.col("call_hash").alias("request_hash")).unique("call_hash")
    # ``tools`` comes sorted by session and call order; the joins keep that order (no sort of every column after).
    tools = tools.join(by_key, on="call_hash", how="left", maintain_order="left")
    missing = tools.filter(pl.col("turn").is_null() & pl.col("ts_utc").is_not_null())
    if not missing.is_empty():
        timeline = calls.filter(pl.col("ts_utc").is_not_null()).select(
            "session_id", pl.col("ts_utc").alias("_t"), "turn", "model", pl.col("call_hash").alias("_request")
        ).sort("_t")
        found = (
            missing.select("session_id", "tool_call_id", pl.col("ts_utc").alias("_t"))
            .sort("_t")
            .join_asof(timeline, on="_t", by="session_id", strategy="backward", check_sortedness=False)
            .select("session_id", "tool_call_id", pl.col("turn").alias("_turn"), pl.col("model").alias("_model"), "_request")
        )
        tools = tools.join(found, on=["session_id", "tool_call_id"], how="left", maintain_order="left").with_columns(
            pl.coalesce(pl.col("turn"), pl.col("_turn")).alias("turn"), pl.coalesce(pl.col("model"), pl.col("_model")).alias("model"),
            pl.coalesce(pl.col("request_hash"), pl.col("_request")).alias("request_hash"),
        ).drop("_turn", "_model", "_request")
    return tools.with_columns(pl.col("turn").fill_null(-1))


def with_model_family(frame: pl.DataFrame) -> pl.DataFrame:
    """``frame`` plus ``_family``: its ``model``'s family (analyze.tokens.FAMILY_PATTERNS), matched once per
    distinct model and joined back (a text match on every row of ten million costs seconds)."""
    model = pl.col("model")
    lowered = model.str.to_lowercase()
    family = pl.when(model.is_null()).then(pl.lit("unknown"))
    for name, pattern in FAMILY_PATTERNS:
        family = family.when(lowered.str.contains(pattern)).then(pl.lit(name))
    families = frame.select("model").unique().with_columns(family.otherwise(pl.lit("other")).alias("_family"))
    return frame.join(families, on="model", how="left", nulls_equal=True, maintain_order="left")


def _estimate_tokens(store: Store, tools: pl.DataFrame) -> pl.DataFrame:
    """Argument and result tokens: the stored count, else the calibrated fit, else bytes/4 — with the method."""
    fits = fetch_frame(store, "SELECT model_family, content_type, tokens_per_byte FROM token_fits", [])
    tools = with_model_family(tools)
    if fits.is_empty():
        tools = tools.with_columns(pl.lit(None, pl.Float64).alias("_tpb"), pl.lit(None, pl.String).alias("_fit"))
    else:
        specific = fits.rename({"model_family": "_family", "tokens_per_byte": "_tpb_c"})
        general = fits.filter(pl.col("content_type") == ANY_CONTENT).select(pl.col("model_family").alias("_family"), pl.col("tokens_per_byte").alias("_tpb_a"))
        tools = tools.join(specific, on=["_family", "content_type"], how="left").join(general, on="_family", how="left")
        tools = tools.with_columns(
            pl.coalesce(pl.col("_tpb_c"), pl.col("_tpb_a")).alias("_tpb"),
            pl.when(pl.col("_tpb_c").is_not_null())
            .then(pl.lit("calibrated:") + pl.col("_family") + "/" + pl.col("content_type"))
            .when(pl.col("_tpb_a").is_not_null())
            .then(pl.lit("calibrated:") + pl.col("_family") + f"/{ANY_CONTENT}")
            .alias("_fit"),
        ).drop("_tpb_c", "_tpb_a")
    per_byte = 1.0 / HEURISTIC_BYTES_PER_TOKEN
    # The same rounding as analyze.tokens.result_tokens_sql (usage and reports): fits round, bytes/4 rounds up.
    bytes_est = (
        pl.when(pl.col("_tpb").is_not_null())
        .then((pl.col("result_bytes") * pl.col("_tpb")).round())
        .otherwise((pl.col("result_bytes") * per_byte).ceil())
        .cast(pl.Int64)
    )
    return tools.with_columns(
        pl.coalesce(pl.col("args_tokens"), (pl.col("args_bytes") * per_byte).ceil().cast(pl.Int64)).alias("args_tokens"),
        pl.when(pl.col("args_tokens").is_not_null()).then(pl.coalesce(pl.col("args_tokens_method"), pl.lit("reported")))
        .when(pl.col("args_bytes").is_not_null()).then(pl.lit(f"heuristic:bytes/{HEURISTIC_BYTES_PER_TOKEN}"))
        .alias("args_tokens_method"),
        pl.coalesce(pl.col("result_tokens"), bytes_est).alias("result_tokens"),
        pl.when(pl.col("result_tokens").is_not_null()).then(pl.coalesce(pl.col("result_tokens_method"), pl.lit("reported")))
        .when(pl.col("result_bytes").is_null()).then(None)
        .otherwise(pl.coalesce(pl.col("_fit"), pl.lit(f"heuristic:bytes/{HEURISTIC_BYTES_PER_TOKEN}")))
        .alias("result_tokens_method"),
    ).drop("_family", "_tpb", "_fit")  # fmt: skip


def _session_totals(sessions: pl.DataFrame, calls: pl.DataFrame, tools: pl.DataFrame) -> pl.DataFrame:
    """Add per-session totals and the main model to the session rows."""
    per_call = calls.group_by("session_id").agg(
        pl.len().alias("requests"),
        pl.col("input_total_tokens").sum().alias("input_total_tokens"),
        pl.col("output_tokens").sum().alias("output_tokens"),
        # Unknown where no request of the session reported it (a sum of nothing is not 0 reasoning tokens).
        pl.when(pl.col("reasoning_tokens").is_not_null().any()).then(pl.col("reasoning_tokens").sum()).alias("reasoning_tokens"),
        pl.col("cost_usd").sum().alias("cost_usd"),
        pl.col("cost_usd").is_null().any().alias("has_unpriced"),
        pl.col("cost_equiv_tokens").sum().alias("cost_equiv_tokens"),
        pl.col("model").drop_nulls().mode().sort().first().alias("model"),
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
