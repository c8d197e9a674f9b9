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
  the tool's name masked as ``#``: ``fetch_part_#`` — else the tool name), argument and result tokens with their methods, hashes of
  the argument skeleton and of the exact arguments (``skel_hash``, ``args_hash``;
  long strings stay in the store) and of the exact result (``result_hash``), ``sig0``…``sig7`` (the result's word MinHash),
  ``result_compress_ratio`` (how repetitive a result of 2 KiB or more is; NULL for smaller ones),
  ``has_continuation`` / ``has_directive`` (wording flags, ``analyze.lexicon``), ``progress`` (an MCP
  result's progress meter under a progress-like key, ``PROGRESS_SQL``; NULL without one),
  ``shape_hash`` (the arguments' keys), ``values_hash`` (their values' first characters: equal for
  a call re-sent with a draft grown at its end, not for one whose long text changed in its middle),
  ``unnarrated_hashes`` (per sentence beside other
  values of an MCP call, the hash of the values without it: two calls sharing one differ in that
  sentence alone — a narration of the call), ``steered`` (the arguments changed only in ways the
  previous call of the same tool and shape and its result dictated: a counter going up, a value
  copied from the result — ``steering_sql``), ``resent`` (an MCP call re-sending its tool's previous call's
  values, whole or grown — not changed in the middle of a long text, which its exact arguments tell).
* ``sessions`` — per session: agent, task label, outcome, model, request and
  tool-call counts, tokens, cost.
* ``tool_defs`` and ``events`` as stored.
* ``links`` — which agent session an MCP transcript's connection served
  (``session_id`` → ``agent_session_id``, from the linked call records,
  ``ingest.link``): findings on either belong to one story.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import NamedTuple

import polars as pl

from tokaudit.analyze import steering_cache
from tokaudit.analyze.lexicon import CONTINUATION, DIRECTIVES
from tokaudit.analyze.tokens import ANY_CONTENT, CONTENT_SQL, FAMILY_PATTERNS, HEURISTIC_BYTES_PER_TOKEN
from tokaudit.analyze.usage import COST_SQL, INPUT_COST_SQL, PRICE_JOIN, pricing_ctes
from tokaudit.config import Config
from tokaudit.ingest.base import SIG_BINS
from tokaudit.ingest.skeleton import MAX_ARG_VALUE_CHARS, TEXT_CUT
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


@dataclass
class Frames:
    """Everything the detectors read, for one analysis window."""

    calls: pl.DataFrame
    tools: pl.DataFrame
    sessions: pl.DataFrame
    tool_defs: pl.DataFrame
    events: pl.DataFrame
    links: pl.DataFrame = field(default_factory=lambda: pl.DataFrame(schema={"session_id": pl.String, "agent_session_id": pl.String}))


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
    tools = _tools(store, calls, tool_window, tool_params)
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
        WHERE {window.replace("session_id", "m.session_id", 1)} AND m.session_id != a.session_id
        GROUP BY m.session_id, a.session_id
        -- A connection that served several agent sessions belongs to the one it served most.
        QUALIFY row_number() OVER (PARTITION BY m.session_id ORDER BY count(*) DESC, a.session_id) = 1
        """,
        window_params,
    )
    return Frames(calls=calls, tools=tools, sessions=_session_totals(sessions, calls, tools), tool_defs=tool_defs, events=events,
                  links=links)


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
            span = copy_span.get(m.session_id)
            if span is not None:
                lo, hi = batch.call_rowids or span
                batch.call_rowids = (min(lo, span[0]), max(hi, span[1]))
        size += n
    if with_copy:
        for batch in batches:
            batch.call_rowids = batch.call_rowids or (0, -1)  # no requests: an empty stretch
    return batches


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


# Free text: two words or more (a question, a draft, a narration of the call), not a token.
PROSE_PATTERN = "\\S\\s+\\S"
# A narration of a call is a sentence: four words or more (a shell command or a topic is shorter).
NARRATION_PATTERN = "\\S+\\s+\\S+\\s+\\S+\\s+\\S"
# Scripts written without spaces between words (Chinese, Japanese, Thai — the scripts the result signature
# reads in pairs of characters, ingest.base._UNSPACED_RUN): four of their characters are a phrase, eight a sentence.
_UNSPACED = "[\\p{Han}\\p{Hiragana}\\p{Katakana}\\p{Thai}]"


def _text_sql(v: str, pattern: str, unspaced_chars: int) -> str:
    """SQL: ``v`` matches ``pattern`` (words with spaces) or holds ``unspaced_chars`` characters of an unspaced
    script in a row. (The script's test runs only on values with non-ASCII characters: a Unicode class in
    the pattern itself made the tool-call query about 7 % slower.)"""
    return (f"CASE WHEN regexp_matches({v}, '{pattern}') THEN true WHEN strlen({v}) = length({v}) THEN false "
            f"ELSE regexp_matches({v}, '{_UNSPACED}{{{unspaced_chars}}}') END")


def _prose_sql(v: str) -> str:
    """SQL: ``v`` is free text (``PROSE_PATTERN``, or a phrase of an unspaced script)."""
    return _text_sql(v, PROSE_PATTERN, 4)


def _narration_sql(v: str) -> str:
    """SQL: ``v`` is a sentence (``NARRATION_PATTERN``, or eight characters of an unspaced script)."""
    return _text_sql(v, NARRATION_PATTERN, 8)


# The session's previous call (an MCP call's own values) sent an id- or path-like value that the result
# before it named: it was fed by the call before.
_LAST_FED = """coalesce(list_bool_or(list_transform(_last_values, lambda x: CASE
    WHEN length(x) < 6 OR _last2_excerpt IS NULL THEN false WHEN NOT contains(_last2_excerpt, x) THEN false
    ELSE regexp_matches(x, '[0-9/.:=+]') END)), false)"""
# A value copied as a token from the result before it: that of the same tool, or — id- or path-like,
# sent to an MCP tool — the session's last result, when the call that returned it had itself been handed
# an id by the result before it (``_LAST_FED``: two tools handing each other tokens), or was the same call
# as that tool's call before (a dispenser) answering little but the token (a grant issuing a new
# token to relay on each round). A receipt acked after a receive of the same arguments (a message came
# with it), a job's status after the submit the task asked for (new arguments each time), are the model
# acting on what it was given, not a relay. (The agent's own tools reading, one after another, the files
# a search listed is batch work, not a server steering it.)
# (A CASE, its cheap tests first: the relay tests run only for values the session's last result holds.)
_COPIED = f"""coalesce(contains({{excerpt}}, args_values[i]) OR CASE
                 WHEN length(args_values[i]) < 6 OR NOT _mcp THEN false
                 WHEN NOT contains(_last_excerpt, args_values[i]) THEN false
                 WHEN NOT regexp_matches(args_values[i], '[0-9/.:=+]') THEN false
                 ELSE {_LAST_FED}
                      -- A dispenser: the previous call repeated its tool's call two before it, answering little but the token.
                      OR (_last_tool = _last3_tool AND _last_values = _last3_values
                          AND length(_last_excerpt) <= length(args_values[i]) + 32) END, false)"""

# The words, numbers and ids of a value (a URL, a path, a query string, SQL, a GraphQL query). A value of an
# MCP call whose new tokens (one to three) include evidence (``_TOKEN_EVIDENCE``) and no other id or
# number — the rest as it was, new words aside (the parameter's name) — carries a cursor or counter the
# server chose (…/items?cursor=c_77ab10z&limit=50). Words alone are not enough: a docs page named
# after a word of the last page is the model's own choice.
_TOKENS = "list_filter(string_split_regex({v}, '[^A-Za-z0-9_-]+'), lambda x: x != '')"
# A new token is evidence when it is an id (digits, four characters or more) the result named, a number
# of three digits or more the result named, or — in a value without spaces — the number one above a
# token of the value before ("…?chunk=3" → "…?chunk=4": a page counter inside a URL; in text, "file 3"
# → "file 4" is a batch over numbered things).
_TOKEN_EVIDENCE = """((length(x) >= 4 AND regexp_matches(x, '[0-9]') AND contains({excerpt}, x))
    OR (regexp_full_match(x, '[0-9]{{1,18}}') AND ((length(x) >= 3 AND {named:x})
                                                 OR (NOT regexp_matches(args_values[i], '\\s')
                                                     AND list_contains({prev_tokens}, CAST(TRY_CAST(x AS BIGINT) - 1 AS VARCHAR))))))"""
# The tokens of three values in a row: one token alone changed, a number moving by the same step both
# times (not zero), the rest kept.
_TOKEN_STEP = """len({tokens}) = len({prev_tokens}) AND len({prev_tokens}) = len({prev2_tokens})
    AND len(list_filter(range(1, len({tokens}) + 1), lambda k: {tokens}[k] != {prev_tokens}[k])) = 1
    AND list_bool_and(list_transform(range(1, len({tokens}) + 1), lambda k: CASE
        WHEN {tokens}[k] = {prev_tokens}[k] THEN {prev_tokens}[k] = {prev2_tokens}[k]
        ELSE regexp_full_match({tokens}[k] || ' ' || {prev_tokens}[k] || ' ' || {prev2_tokens}[k], '[0-9]{{1,18}} [0-9]{{1,18}} [0-9]{{1,18}}')
             AND TRY_CAST({tokens}[k] AS BIGINT) - TRY_CAST({prev_tokens}[k] AS BIGINT)
                 = TRY_CAST({prev_tokens}[k] AS BIGINT) - TRY_CAST({prev2_tokens}[k] AS BIGINT) END))"""
# The tokens of a value that the value before did not have.
_NEW_TOKENS = "list_filter({tokens}, lambda x: NOT list_contains({prev_tokens}, x))"


def _named_whole(pattern: str) -> str:
    """SQL: the result before names ``pattern`` (a regular expression) as a whole, not inside a longer number."""
    return f"regexp_matches({{excerpt}}, '(^|[^0-9])' || {pattern} || '($|[^0-9])')"

def _fill(sql: str, *slots: tuple[str, str]) -> str:
    """``sql`` with each ``(slot, text)`` put in, in order."""
    for slot, text in slots:
        sql = sql.replace(slot, text)
    return sql


# Counters written as words: numbers and ordinals (English), Roman numerals — and, apart, single letters
# (a letter "i" or "v" is not the Roman one).
_ONES = "one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen nineteen twenty"
_ORDINALS = ("first second third fourth fifth sixth seventh eighth ninth tenth eleventh twelfth thirteenth fourteenth fifteenth "
             "sixteenth seventeenth eighteenth nineteenth twentieth")
_ROMAN = "i ii iii iv v vi vii viii ix x xi xii xiii xiv xv xvi xvii xviii xix xx"
NUMBER_WORDS = {w: n for words in (_ONES, _ORDINALS, _ROMAN) for n, w in enumerate(words.split(), start=1)}
LETTERS = {chr(ord("a") + n): n + 1 for n in range(26)}


def _spelled_up_by_one(words: dict[str, int]) -> str:
    """SQL: the last word of ``args_values[i]`` is one above that of ``{prev}[i]`` in ``words``."""
    table = "MAP {{" + ", ".join(f"'{w}': {n}" for w, n in words.items()) + "}}"  # braces doubled: the rule is formatted later
    last = "lower(regexp_extract({v}, '([A-Za-z]+)$', 1))"
    return (f"coalesce(({table})[{last.format(v='args_values[i]')}] = ({table})[{last.format(v='{prev}[i]')}] + 1, false)")


# A call is *steered* when every argument value that changed since the previous call of the same
# tool and argument shape (the same keys) is evidence that the server chose it:
#   - it went up by one, or moved by the same step as before, up or down (a counter, page, offset or
#     countdown of steps "remaining"; for an MCP call, a date moving a day on, a numbered word such as "step-07", or a counter
#     spelled out — "phase two", "Part IV", section "c"; other numbers inside text are not counters —
#     "f3.py" → "f4.py" is a batch over numbered files);
#   - it was copied as a token from that call's result (a cursor, an id, a scope the result named);
#   - for an MCP call: a number of three digits or more, or a value whose numbers alone changed, that
#     the result named as a whole number (an offset the server chose, "next_offset=289"; "part 4") — a
#     day or count below 100 is in any listing, and an editor's view range copied from the line
#     numbers it showed is the model's own reading, so neither counts;
#   - for an MCP call: the ids or numbers that changed inside a URL, a path or a query (SQL, GraphQL:
#     ``_TOKENS``);
#   - for an MCP call, when it looks like an id or path, not a word: it was copied from the session's
#     last result, whichever tool returned it (two tools handing each other tokens; text with spaces
#     copied into an edit is editing);
#   - it restores a long JSON value (one cut at the stored length) sent the call before (a REPAIR
#     resend; re-running a shell command is not one);
# and any value added was copied from that result (cumulative restating; an added URL carrying an id
# the result named). The server, not the task, chose what the model sent next. Batch work (values
# from an earlier listing, ids in any order), polling (nothing changed) and new questions are not steered.
# Free text that changed or was added (words with spaces) is neutral beside such evidence: clients
# have the model narrate each call in an argument of its own (an "explanation" or "reason" — new
# words every time), which says nothing about who chose the counter or cursor next to it; alone,
# changed text is a new question. Each value scores 1 (evidence), 0 (unchanged, or narration) or -64
# (anything else: more than the 32 values a call keeps could make up); a call is steered when the
# sum is positive.
# Values are compared slot by slot (ingest.skeleton.args_values); CASE keeps the costlier tests to
# the values that need them.
_STEERED_RULE = _fill(
    """
    {prev} IS NOT NULL AND args_values IS NOT NULL AND len(args_values) >= len({prev})
    AND args_values != {prev}
    AND list_sum(list_transform(range(1, len(args_values) + 1), lambda i: CASE
        WHEN i > len({prev}) THEN CASE
            WHEN length(args_values[i]) >= 4 AND {copied} THEN 1
            -- An added URL or path of an MCP call carrying an id (digits, six characters or more) the result named.
            WHEN _mcp AND NOT regexp_matches(args_values[i], '\\s')
                 AND coalesce(list_bool_or(list_transform({tokens}, lambda x: length(x) >= 6 AND regexp_matches(x, '[0-9]')
                                                                          AND contains({excerpt}, x))), false) THEN 1
            WHEN {prose} THEN 0
            ELSE -64 END
        WHEN args_values[i] = {prev}[i] THEN 0
        WHEN regexp_full_match(args_values[i], '-?[0-9]+([.][0-9]+)?')  -- parse only what can be a number
             AND coalesce(TRY_CAST(args_values[i] AS DOUBLE) - TRY_CAST({prev}[i] AS DOUBLE) = 1
                      OR (TRY_CAST(args_values[i] AS DOUBLE) != TRY_CAST({prev}[i] AS DOUBLE)
                          -- The same step; a fraction rounded to its last digit may miss it by one unit of that
                          -- digit (0.029, 0.059, 0.088: a share of parts done), when the step is ten units or more.
                          AND abs((TRY_CAST(args_values[i] AS DOUBLE) - TRY_CAST({prev}[i] AS DOUBLE))
                                  - (TRY_CAST({prev}[i] AS DOUBLE) - TRY_CAST({prev2}[i] AS DOUBLE)))
                              <= CASE WHEN contains(args_values[i], '.')
                                           AND abs(TRY_CAST({prev}[i] AS DOUBLE) - TRY_CAST({prev2}[i] AS DOUBLE))
                                               >= 10 * {last_digit}
                                      THEN 1.01 * {last_digit} ELSE 0 END),
                      false) THEN 1
        -- A date of an MCP call moving a day on, or by the same step as before (a week, a month of days): a
        -- calendar counter ("2024-03-04" → "2024-03-05").
        WHEN _mcp AND regexp_full_match(args_values[i], '[0-9]{{4}}-[0-9]{{2}}-[0-9]{{2}}')
             AND coalesce(TRY_CAST(args_values[i] AS DATE) - TRY_CAST({prev}[i] AS DATE) = 1
                          OR (TRY_CAST(args_values[i] AS DATE) != TRY_CAST({prev}[i] AS DATE)
                              AND TRY_CAST(args_values[i] AS DATE) - TRY_CAST({prev}[i] AS DATE)
                                  = TRY_CAST({prev}[i] AS DATE) - TRY_CAST({prev2}[i] AS DATE)), false) THEN 1
        -- A numbered word of an MCP call going up by one ("step-07" → "step-08", "seg7" → "seg8"); a
        -- file name ("f3.py") or a path has more than a word and its number.
        WHEN _mcp AND regexp_full_match(args_values[i], '{WORD_COUNTER}') AND regexp_full_match({prev}[i], '{WORD_COUNTER}')
             AND regexp_extract(args_values[i], '{WORD_COUNTER}', 1) = regexp_extract({prev}[i], '{WORD_COUNTER}', 1)
             AND TRY_CAST(regexp_extract(args_values[i], '{WORD_COUNTER}', 2) AS BIGINT)
                 = TRY_CAST(regexp_extract({prev}[i], '{WORD_COUNTER}', 2) AS BIGINT) + 1 THEN 1
        -- A counter spelled out in an MCP call going up by one, the rest of the value kept ("phase one" →
        -- "phase two", "third" → "fourth", "Part IV" → "Part V", section "c" → "d").
        WHEN _mcp AND regexp_replace(args_values[i], '[A-Za-z]+$', '') = regexp_replace({prev}[i], '[A-Za-z]+$', '')
             AND ({spelled:NUMBER_WORDS} OR {spelled:LETTERS}) THEN 1
        WHEN length(args_values[i]) >= 4 AND NOT regexp_matches(args_values[i], '\\s')
             AND {copied} THEN 1
        WHEN _mcp AND contains({excerpt}, args_values[i])  -- cheap, and needed by the exact test below
             AND regexp_matches(args_values[i], '[0-9]') AND (length(args_values[i]) >= 3 OR regexp_matches(args_values[i], '[^0-9]'))
             AND translate(args_values[i], '0123456789', '') = translate({prev}[i], '0123456789', '')  -- cheap, then exact
             AND regexp_replace(args_values[i], '[0-9]+', '#', 'g') = regexp_replace({prev}[i], '[0-9]+', '#', 'g')
             AND coalesce({named:value}, false) THEN 1
        WHEN _mcp
             -- A few tokens changed, the rest kept (a cursor in a GraphQL query, an offset in SQL): the two
             -- values start or end alike (a cheap test first).
             -- (A CASE, not AND: DuckDB evaluates every operand of an AND inside a lambda.)
             AND CASE WHEN left(args_values[i], 8) = left({prev}[i], 8) OR right(args_values[i], 8) = right({prev}[i], 8) THEN
                 coalesce(len({tokens}) >= 2 AND len({new_tokens}) BETWEEN 1 AND 3
                          AND list_bool_or(list_transform({new_tokens}, lambda x: {token_evidence}))
                          AND list_bool_and(list_transform({new_tokens}, lambda x: NOT regexp_matches(x, '[0-9]') OR {token_evidence})), false)
                 ELSE false END
             THEN 1
        WHEN length(args_values[i]) >= {long} AND args_skeleton LIKE '{{%' AND coalesce(args_values[i] = {prev2}[i], false) THEN 1
        -- A number standing as its own token in a URL, path or label of an MCP call moving by the same step
        -- as the call before ("…/part/6" → "…/part/11", "5/250" → "10/250"), nothing else changed.
        WHEN CASE WHEN NOT _mcp OR {prev2}[i] IS NULL THEN false  -- cheap tests first, one by one
                  WHEN translate(args_values[i], '0123456789', '') != translate({prev}[i], '0123456789', '') THEN false
                  WHEN translate({prev}[i], '0123456789', '') != translate({prev2}[i], '0123456789', '') THEN false
                  WHEN regexp_matches(args_values[i], '\\s') THEN false
                  ELSE coalesce({token_step}, false) END THEN 1
        WHEN {prose} THEN 0
        ELSE -64
    END)) > 0
""",
    # In this order: a slot's SQL may hold the slots after it.
    ("{copied}", _COPIED),
    # One unit of a decimal value's last digit (0.001 for "0.029").
    ("{last_digit}", "pow(10, -(length(args_values[i]) - strpos(args_values[i], '.')))"),
    ("{prose}", _prose_sql("args_values[i]").replace("{", "{{").replace("}", "}}")),  # the rule is formatted later
    ("{WORD_COUNTER}", "([A-Za-z][A-Za-z_]*[-_]?)([0-9]{{1,9}})"),
    ("{spelled:NUMBER_WORDS}", _spelled_up_by_one(NUMBER_WORDS)),
    ("{spelled:LETTERS}", _spelled_up_by_one(LETTERS)),
    ("{token_step}", _TOKEN_STEP),
    ("{new_tokens}", _NEW_TOKENS),
    ("{token_evidence}", _TOKEN_EVIDENCE),
    ("{named:x}", _named_whole("x")),  # a token: digits only
    ("{named:value}", _named_whole("regexp_escape(args_values[i])")),
    ("{tokens}", _TOKENS.format(v="args_values[i]")),
    ("{prev_tokens}", _TOKENS.format(v="{prev}[i]")),
    ("{prev2_tokens}", _TOKENS.format(v="{prev2}[i]")),
)

# The keys of a call's arguments, from its skeleton: calls of one tool asking different kinds of
# question (other keys) are compared separately.
SHAPE_SQL = """hash(regexp_extract_all(args_skeleton, '"((?:[^"\\\\]|\\\\.)*)"\\s*:', 1))"""


# A progress meter under a progress-like key: "coverage_pct": 40, "progress": 0.4, progress=0.4,
# <progress>0.4</progress>. A key that measures a change, not progress ("change_pct", "growth_percent" of a
# quote) is no meter.
PROGRESS_SQL = r"""TRY_CAST(
    list_transform([regexp_extract(result_excerpt, '(?i)([a-z_]*(?:pct|percent|progress|completion)[a-z_]*)"?\s*[:=>]\s*"?([0-9]+(?:[.][0-9]+)?)',
                                   ['k', 'v'])],
                   lambda m: CASE WHEN NOT regexp_matches(m.k, '(?i)change|delta|diff|growth|gain|loss|return|yield|rate|margin')
                                  THEN nullif(m.v, '') END)[1] AS DOUBLE)"""

# A progress meter in a result: one under a progress-like key (``PROGRESS_SQL``), else the first "NN%" or
# "N of M" / "N/M". A server that paces a chain
# (LoopTrap: "coverage 60 % — continue") shows it rising while the model keeps calling with new
# arguments of the same keys; a job being polled shows it rising too, but the poll's arguments never
# change. Free-text commands are left out: their output (curl's progress table) is full of percents.
METER_SQL = f"""coalesce({PROGRESS_SQL},
    TRY_CAST(nullif(regexp_extract(result_excerpt, '([0-9]+(?:[.][0-9]+)?) ?%', 1), '') AS DOUBLE),
    TRY_CAST(nullif(regexp_extract(result_excerpt, '([0-9]+) ?(?:/|of) ?[0-9]+', 1), '') AS DOUBLE))"""


# A value's head: text keeps its first characters and its last (ingest.skeleton._cut); a draft re-sent
# grown at its end is the same value by its first ones (a cycle re-sending a growing draft).
HEAD = f"CASE WHEN length({{v}}) <= {MAX_ARG_VALUE_CHARS} THEN {{v}} WHEN regexp_matches({{v}}, '\\s') THEN left({{v}}, {MAX_ARG_VALUE_CHARS}) ELSE {{v}} END"
HEADS = "list_transform({v}, lambda h: " + HEAD.format(v="h") + ")"

# A call re-sends its tool's previous call: the same values; every long text of that call again (a file or
# document by its head, ``HEAD``: as it was or grown by a line, beside a new checksum or attempt number); or at least
# ``RESENT_SHARE`` of its distinct values were in that call too (records sent again after a rejection, grown by the
# field the rejection named; a new batch of records shares its categories, not its ids and names). Only MCP calls
# are read. A long text that came back ``WRITTEN_ON_BYTES`` or more longer was written on — a page written section
# by section through a tool that takes the whole body — not re-sent: a rejection asks for a fix, not a new section.
RESENT_SHARE = 0.8
WRITTEN_ON_BYTES = 400
_PREV_LONG = f"list_filter(_any_values, lambda x: length(x) > {MAX_ARG_VALUE_CHARS} AND regexp_matches(x, '\\s'))"
# A narration is a sentence (tens of words); a call's only long value (cut to its head and tail at
# MAX_ARG_VALUE_CHARS) with more than this many bytes of the call to itself is a document: a file written
# whole, a draft — text the call is for.
NARRATION_MAX_BYTES = 1024
# The call has exactly one long value (cut to its head and tail).
_ONE_LONG_VALUE = f"len(list_filter(args_values, lambda x: length(x) > {MAX_ARG_VALUE_CHARS})) = 1"
_BULK_TEXT = (f"(length({{v}}) > {MAX_ARG_VALUE_CHARS} AND {_ONE_LONG_VALUE} "
              f"AND args_bytes - {MAX_ARG_VALUE_CHARS} * (len(args_values) - 1) > {NARRATION_MAX_BYTES})")
# The call's values, as stored, are its tool's previous call's, but its exact arguments are not: a long text
# changed out of sight, between the head and tail the store keeps (a whole file written again with a fix).
_EDITED_UNSEEN = "coalesce(args_values = _any_values AND args_hash != _any_args_hash, false)"
_NOT_WRITTEN_ON = f"coalesce(args_bytes < _any_args_bytes + {WRITTEN_ON_BYTES}, true)"
RESENT_SQL = f"""CASE WHEN NOT _mcp OR _any_values IS NULL OR len(args_values) = 0 THEN false
    -- The same values: the same call again, unless a long text, kept by its head and tail, grew in the middle
    -- or changed there (the exact arguments differ: a whole file written again with a line fixed is an edit).
    WHEN args_values = _any_values THEN NOT {_EDITED_UNSEEN} AND {_NOT_WRITTEN_ON}
    WHEN len({_PREV_LONG}) > 0 AND list_has_all({HEADS.format(v="args_values")}, {HEADS.format(v=_PREV_LONG)}) THEN {_NOT_WRITTEN_ON}
    ELSE len(list_filter(list_distinct(args_values), lambda x: list_contains(_any_values, x)))
         >= {RESENT_SHARE} * len(list_distinct(args_values)) END"""

# A call carries new text the model wrote: its only long value (``ingest.skeleton._cut`` keeps a text's
# head and tail around ``TEXT_CUT``) is text that starts otherwise than the same argument of the tool's
# previous call (of that shape, else of any). A thought for a scratchpad server, a note, a new query — not a
# value re-sent or grown at its end (a REPAIR resend, cumulative restating; a document sent again with a
# cursor added), not a long list of numbers (no spaces: never cut so), and not a narration sentence beside
# such a value (the call's bulk is then the other value). A tool's first call has nothing to differ from.
# Only MCP calls are read: a chain of the agent's own tools is no verdict whatever it carried.
_CUT_AT = MAX_ARG_VALUE_CHARS + 1
AUTHORED_SQL = f"""CASE WHEN NOT _mcp OR coalesce(_prev_values, _any_values) IS NULL THEN false
    WHEN NOT {_ONE_LONG_VALUE} THEN false
    ELSE coalesce(list_bool_or(list_transform(range(1, len(args_values) + 1), lambda i: CASE
        WHEN length(args_values[i]) < {_CUT_AT + len(TEXT_CUT)} THEN false
        WHEN substr(args_values[i], {_CUT_AT}, {len(TEXT_CUT)}) != '{TEXT_CUT}' THEN false
        ELSE left(args_values[i], 32) IS DISTINCT FROM left(coalesce(_prev_values, _any_values)[i], 32) END)), false) END"""


def _steered_rule(prev: str, prev2: str | None, excerpt: str, values: str = "args_values") -> str:
    """SQL: ``_STEERED_RULE`` for the call's ``values`` (a column) against the earlier call's ``prev`` values,
    ``prev2`` (the call before that, for steps; None: no such call) and ``excerpt`` (its result)."""
    sql = _STEERED_RULE.format(prev=prev, prev2=prev2 or "(CAST(NULL AS VARCHAR[]))", excerpt=excerpt, long=MAX_ARG_VALUE_CHARS)
    # The rule names the call's own values args_values throughout (its slots included).
    return sql.replace("args_values", values) if values != "args_values" else sql


def steering_sql(relation: str, order_by: str, mcp: str = "tool_key LIKE '%/%'") -> str:
    """``relation`` (tool calls with session_id, tool_key, args_skeleton, args_values, args_bytes, args_hash (of
    the exact arguments) and result_excerpt) plus ``shape_hash``, ``values_hash``, ``unnarrated_hashes``, ``steered``, ``alias_steered``,
    ``authored`` (``AUTHORED_SQL``) and ``resent`` (``RESENT_SQL``), calls ordered by ``order_by``.

    A call is compared with the previous call of its tool and shape, and with the previous call of
    its tool whatever the shape (a first call without a cursor, then the same call with one). An MCP
    call is also compared with the session's previous call (or, after one aside, the call before it) when
    another tool of its server made it with arguments of the same keys (``alias_steered``: a loop spread over
    tools the server rotates). A call
    with new JSON arguments of the same keys whose result's progress meter rose (``METER_SQL``) is
    steered too: the server paced it. ``mcp`` (SQL over the relation's columns) tells an MCP call —
    the calls some rules are kept to — from the agent's own tools.
    """
    same_shape = _steered_rule("_prev_values", "_prev2_values", "_prev_excerpt")
    any_shape = _steered_rule("_any_values", None, "_any_excerpt")
    alias = _steered_rule("_alias_values", "_alias2_values", "_alias_excerpt", values="_own_values")
    # A list argument that grew in the middle ("skip": [the ids so far]) shifts the values after it: the
    # call is compared again with the values the result named taken out where they went in.
    grown = _steered_rule("_prev_values", None, "_prev_excerpt", values="_grown_values")
    return f"""
        WITH s AS (
            SELECT *, {SHAPE_SQL} AS shape_hash, coalesce({mcp}, false) AS _mcp,
                   -- The server of an MCP tool key ("server/tool"); none for the agent's own tools.
                   CASE WHEN coalesce({mcp}, false) THEN nullif(regexp_extract(tool_key, '^(.*)/', 1), '') END AS _server,
                   -- An MCP tool's own values (for aliases), without its numbered name, which analyze.frames._tools
                   -- puts first when it masks the number in the key ("fetch_part_#").
                   CASE WHEN NOT coalesce({mcp}, false) THEN NULL WHEN contains(tool_key, '#') THEN args_values[2:]
                        ELSE args_values END AS _own_values
            FROM {relation}
        ), w AS (
            SELECT *, lag(args_values) OVER same_shape AS _prev_values, lag(args_values, 2) OVER same_shape AS _prev2_values,
                   lag(result_excerpt) OVER same_shape AS _prev_excerpt,
                   lag(args_values) OVER same_tool AS _any_values, lag(result_excerpt) OVER same_tool AS _any_excerpt,
                   lag(args_bytes) OVER same_tool AS _any_args_bytes, lag(args_hash) OVER same_tool AS _any_args_hash,
                   lag(shape_hash) OVER same_tool AS _any_shape,
                   lag(_meter) OVER same_shape AS _prev_meter, lag(result_excerpt) OVER same_session AS _last_excerpt,
                   -- The session's previous call and the one before (another tool of the same server, maybe).
                   lag(tool_key) OVER same_session AS _last_tool, lag(_server_shape) OVER same_session AS _last_server_shape,
                   lag(_own_values) OVER same_session AS _last_values,
                   lag(_server_shape, 2) OVER same_session AS _last2_server_shape, lag(_own_values, 2) OVER same_session AS _last2_values,
                   lag(tool_key, 2) OVER same_session AS _last2_tool, lag(result_excerpt, 2) OVER same_session AS _last2_excerpt,
                   lag(tool_key, 3) OVER same_session AS _last3_tool, lag(_own_values, 3) OVER same_session AS _last3_values
            FROM (SELECT *, {METER_SQL} AS _meter, CASE WHEN _server IS NOT NULL THEN hash(_server, shape_hash) END AS _server_shape
                  FROM s)
            WINDOW same_shape AS (PARTITION BY session_id, tool_key, shape_hash ORDER BY {order_by}),
                   same_tool AS (PARTITION BY session_id, tool_key ORDER BY {order_by}),
                   same_session AS (PARTITION BY session_id ORDER BY {order_by})
        ), al AS (
            -- An alias: the session's previous call, made by another tool of the same server with arguments of
            -- the same keys; for a step, the call before it too. When the previous call was an aside (another
            -- server's, or the agent's own: a file read between two calls of the loop), the call before it.
            SELECT *, CASE WHEN _alias_at = 1 THEN _last_values WHEN _alias_at = 2 THEN _last2_values END AS _alias_values,
                   CASE WHEN _alias_at = 1 THEN _last_excerpt WHEN _alias_at = 2 THEN _last2_excerpt END AS _alias_excerpt,
                   CASE WHEN _alias_at = 1 AND _last2_server_shape = _server_shape THEN _last2_values END AS _alias2_values
            FROM (SELECT *, CASE WHEN _last_server_shape = _server_shape THEN CASE WHEN _last_tool != tool_key THEN 1 END
                                 WHEN _last2_server_shape = _server_shape AND _last2_tool != tool_key THEN 2 END AS _alias_at
                  FROM w)
        ), g AS (
            -- Where values went in: the first place after which the rest can follow and the values put there
            -- are tokens of the previous result.
            SELECT *, CASE WHEN _insert_at IS NOT NULL
                           THEN list_concat(args_values[1:_insert_at - 1],
                                            args_values[_insert_at + len(args_values) - len(_prev_values):len(args_values)]) END AS _grown_values
            FROM (SELECT *, CASE WHEN len(args_values) > len(_prev_values) THEN list_filter(range(1, len(_prev_values) + 2), lambda j:
                                     args_values[1:j - 1] = _prev_values[1:j - 1]
                                     AND list_bool_and(list_transform(args_values[j:j + len(args_values) - len(_prev_values) - 1],
                                                                      lambda x: length(x) >= 4 AND contains(_prev_excerpt, x))))[1]
                            END AS _insert_at
                  FROM al)
        ), v AS (
            SELECT *,
                   -- CASE evaluates each test only on the calls the ones before left undecided; after a call
                   -- of the same shape, the test against the previous call of the tool is the same test.
                   CASE WHEN coalesce({same_shape}, false) THEN true
                        WHEN _any_shape IS DISTINCT FROM shape_hash AND coalesce({any_shape}, false) THEN true
                        WHEN _grown_values IS NOT NULL AND (_grown_values = _prev_values OR coalesce({grown}, false)) THEN true
                        ELSE coalesce(_meter > _prev_meter AND args_values IS DISTINCT FROM _prev_values AND args_skeleton LIKE '{{%', false)
                   END AS _steered_here,
                   -- A server that spreads one loop over several tools of the same arguments (aliases it
                   -- rotates: fetchPart, loadSegment, pullChunk …): the call against the previous one (``al``).
                   -- (Only where the tool's own calls left it unsteered: the test is costly, and a loop's first
                   -- calls of each name, before the tool has a step of its own, are enough to link the names.)
                   CASE WHEN _alias_values IS NOT NULL AND NOT _steered_here
                        THEN coalesce({alias}, false) ELSE false END AS alias_steered
            FROM g
        )
        SELECT * EXCLUDE (_prev_values, _prev2_values, _prev_excerpt, _any_values, _any_excerpt, _any_args_bytes, _any_args_hash, _any_shape, _meter, _prev_meter,
                          _last_excerpt, _last3_tool, _last3_values, _mcp, _server, _own_values,
                          _insert_at, _grown_values, _steered_here, _server_shape, _last_tool, _last_server_shape, _last_values,
                          _last2_server_shape, _last2_values, _last2_tool, _last2_excerpt, _alias_at, _alias_values, _alias_excerpt,
                          _alias2_values),
               -- A long text changed out of sight (its head and tail kept, the exact arguments not) is new
               -- values: a whole file written again with a line fixed in its middle.
               CASE WHEN {_EDITED_UNSEEN} THEN hash({HEADS.format(v="args_values")}, args_hash)
                    ELSE hash({HEADS.format(v="args_values")}) END AS values_hash,
               -- For each sentence beside other values of an MCP call, the hash of the values without it. A
               -- call's only long value that makes its bulk is a document, not a narration ({_BULK_TEXT}).
               CASE WHEN len(args_values) > 1 AND _mcp THEN list_transform(
                        list_filter(range(1, len(args_values) + 1),
                                    lambda j: {_narration_sql('args_values[j]')} AND NOT {_BULK_TEXT.format(v='args_values[j]')}),
                        lambda j: hash(list_transform(range(1, len(args_values) + 1),
                                                      lambda i: CASE WHEN i = j THEN '' ELSE {HEAD.format(v="args_values[i]")} END)))
                    ELSE [] END AS unnarrated_hashes,
               _steered_here OR alias_steered AS steered, {AUTHORED_SQL} AS authored, {RESENT_SQL} AS resent
        FROM v
    """


_TOOLS_ORDER = "_ts NULLS FIRST, line_no, tool_call_id"


def _tools(store: Store, calls: pl.DataFrame, window: str, window_params: list) -> pl.DataFrame:
    sig = ", ".join(f"t.result_sig[{i + 1}] AS sig{i}" for i in range(SIG_BINS))
    # An MCP call: a server named (Claude Code, Codex, transcripts) or marked so without one (OpenHands).
    is_mcp = "coalesce(t.mcp_server IS NOT NULL OR t.tool_kind = 'mcp', false)"
    folded = tool_calls_sql(window.replace("session_id", "t.session_id", 1))
    # Everything but the steering rule's inputs is reduced to its final (narrow) form first: the
    # rule's windows and the final sort then move fewer bytes per call.
    calls_sql = f"""
            SELECT t.session_id, t.tool_call_id, hash(t.call_key) AS call_hash, coalesce(t.ts_utc, t.result_ts_utc) AS _ts, t.line_no,
                   -- An MCP tool's numbers are masked: fetch_part_1 … fetch_part_16, list_flags_v1 … v12 are one tool
                   -- whose name carries a counter, and that name is the first of the values the steering rule reads.
                   CASE WHEN t.mcp_server IS NOT NULL
                        THEN t.mcp_server || '/' || regexp_replace(coalesce(t.mcp_tool, t.tool_name), '[0-9]+', '#', 'g')
                        ELSE t.tool_name END AS tool_key,
                   t.mcp_server, t.args_bytes, hash(t.args_skeleton) AS skel_hash, hash(t.args_sha256) AS args_hash,
                   CASE WHEN t.result_sha256 IS NOT NULL THEN hash(t.result_sha256) END AS result_hash,
                   t.args_tokens, t.args_tokens_method, t.result_bytes, t.result_tokens, t.result_tokens_method, t.result_compress_ratio,
                   t.duration_ms,
                   {CONTENT_SQL.format(c="t.result_content_types")} AS content_type, t.is_error,
                   t.result_excerpt IS NOT NULL OR t.result_bytes IS NOT NULL AS has_result,
                   coalesce(regexp_matches(t.result_excerpt, ?), false) AS has_continuation,
                   coalesce(regexp_matches(t.result_excerpt, ?), false) AS has_directive,
                   -- Only MCP calls' progress is read (a poll of a server); the regex is costly on every call.
                   CASE WHEN {is_mcp} THEN {PROGRESS_SQL.replace("result_excerpt", "t.result_excerpt")} END AS progress,
                   {sig},
                   CASE WHEN t.mcp_server IS NOT NULL AND regexp_matches(coalesce(t.mcp_tool, t.tool_name), '[0-9]')
                        THEN list_prepend(coalesce(t.mcp_tool, t.tool_name), coalesce(t.args_values, []))
                        ELSE t.args_values END AS args_values,
                   t.args_skeleton, t.result_excerpt,
                   {is_mcp} AS is_mcp
            FROM ({folded}) AS t"""
    rule = steering_sql("computed", _TOOLS_ORDER, mcp="is_mcp")
    # The rule's verdicts of sessions an earlier audit computed are read back from the store. (Its
    # version leaves out which calls were read: an audit and ``tokaudit show`` share the cache.)
    version = steering_cache.rule_version(calls_sql.replace(folded, "folded") + rule)
    cache = steering_cache.check(store, folded, window_params, version)
    cached = ", ".join(f"c.{name}" for name in steering_cache.STEERING_COLUMNS)
    verdicts = ", ".join(steering_cache.STEERING_COLUMNS)
    read_back = f"""
            SELECT t.*, {cached}
            FROM t JOIN (SELECT * FROM steering_cache WHERE session_id IN (SELECT session_id FROM hits)) AS c
                 USING (session_id, tool_call_id)"""
    # Only the branches needed: with every session's verdicts cached (a repeated audit), ``t`` is read
    # once, and its long texts, which only the rule reads, are never fetched.
    branches = ([f"SELECT * FROM ({rule})"] if cache.misses or not cache.hits else []) + ([read_back] if cache.hits else [])
    tools = fetch_frame(
        store,
        f"""
        WITH t AS ({calls_sql}),
        hits AS (SELECT unnest(?::VARCHAR[]) AS session_id),
        computed AS (SELECT * FROM t WHERE session_id NOT IN (SELECT session_id FROM hits)),
        steered AS ({" UNION ALL BY NAME ".join(branches)})
        SELECT session_id, tool_call_id, call_hash, _ts AS ts_utc,
               * EXCLUDE (session_id, tool_call_id, call_hash, _ts, line_no, args_values, args_skeleton, result_excerpt, {verdicts}),
               {verdicts}  -- in one order, whichever branches ran
        FROM steered
        -- The id last: calls of one line at one instant (parallel tools in one OTel export) keep one order on every run.
        ORDER BY session_id, {_TOOLS_ORDER}
        """,
        [CONTINUATION, DIRECTIVES, *window_params, cache.hits],
    )
    steering_cache.save(store, cache, tools)
    tools = tools.with_columns(_index_within(tools, "session_id").alias("call_idx"))
    tools = _attach_turns(tools, calls)
    return _estimate_tokens(store, tools)


def _attach_turns(tools: pl.DataFrame, calls: pl.DataFrame) -> pl.DataFrame:
    """The turn (and model) of the request that asked for each call; without one, the latest request before it.
    ``request_hash`` is that request's ``call_hash`` (an integer key into ``calls``; null when none)."""
    by_key = calls.select("call_hash", "turn", "model", pl.col("call_hash").alias("request_hash")).unique("call_hash")
    tools = tools.join(by_key, on="call_hash", how="left")
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
        tools = tools.join(found, on=["session_id", "tool_call_id"], how="left").with_columns(
            pl.coalesce(pl.col("turn"), pl.col("_turn")).alias("turn"), pl.coalesce(pl.col("model"), pl.col("_model")).alias("model"),
            pl.coalesce(pl.col("request_hash"), pl.col("_request")).alias("request_hash"),
        ).drop("_turn", "_model", "_request")
    return tools.with_columns(pl.col("turn").fill_null(-1)).sort("session_id", "call_idx")


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
        pl.col("reasoning_tokens").sum().alias("reasoning_tokens"),
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
