"""Joining the parts of an OpenTelemetry trace that were stored in different files.

A collector's file exporter writes spans in the order they end and rotates its file by size, so one
long agent run can straddle two files; the ``invoke_agent`` span that names the conversation
(``gen_ai.conversation.id``) ends last, in the later file. The OTel parser reads a file alone: spans of
the earlier file never see that name and fall back to the session ``otel:<traceId>``
(``ingest.otel``). After every ingest that wrote rows, a fallback session whose trace's other spans
were stored under exactly one conversation's session is moved into it — its requests, tool calls,
events and session rows — so the conversation is one session with all of its tokens, however its
spans were split. A trace whose spans name several conversations (or none) is left as it was.

One call can be recorded by the agent's ``execute_tool`` span and by the MCP client's or server's span; read from
one file the parser stores them as one row, but split over two files they are two. After the move, a tool row of
one file that lies within another file's row of the same trace and tool (it starts no earlier and ends no later)
is linked to it, as an MCP transcript's record is (``ingest.link``): the pair counts once, the outer row's gaps
filled from the inner one. Each row is paired once, the nearest first.

Re-running changes nothing (nothing is left in the fallback session, a linked row is not paired again); a file
re-read later (grown or replaced) has its rows moved and paired again by the next run.
"""

from __future__ import annotations

from tokaudit.ingest.link import UNLINKED_SQL, write_links
from tokaudit.store.engine import Store
from tokaudit.store.load import bump_data_version

# Fallback sessions: "otel:" and a 32-digit hex trace id; the conversation each one's trace was also stored under.
_MOVES = """
WITH fallback AS (
    SELECT DISTINCT session_id, substr(session_id, 6) AS trace_id FROM sessions
    WHERE starts_with(session_id, 'otel:') AND regexp_full_match(substr(session_id, 6), '[0-9a-f]{32}')
),
-- Keys name their trace ("otel:<traceId>:<spanId>" a request, "<traceId>:<spanId>" a tool call): joined on the
-- trace id itself, a hash join, not a prefix test of every fallback against every row.
named AS (
    SELECT f.session_id AS fallback, c.session_id AS target FROM fallback AS f
    JOIN llm_calls AS c ON split_part(c.call_key, ':', 2) = f.trace_id AND starts_with(c.call_key, 'otel:') AND c.session_id <> f.session_id
    UNION
    SELECT f.session_id, t.session_id FROM fallback AS f
    JOIN tool_calls AS t ON split_part(t.tool_call_id, ':', 1) = f.trace_id AND t.session_id <> f.session_id
)
SELECT fallback, any_value(target) AS target FROM named GROUP BY fallback HAVING count(DISTINCT target) = 1
"""


# Tool rows of one OTel trace and tool stored by two files, one within the other: the same call's spans.
_NESTED = f"""
WITH otel AS (
    SELECT t.source_id, t.tool_call_id, t.session_id, split_part(t.tool_call_id, ':', 1) AS trace_id,
           coalesce(t.mcp_tool, t.tool_name) AS tool, t.ts_utc, t.result_ts_utc
    FROM tool_calls AS t JOIN sources AS s USING (source_id)
    WHERE s.format = 'otel' AND t.linked_tool_call_id IS NULL AND t.ts_utc IS NOT NULL AND t.result_ts_utc IS NOT NULL
      AND {UNLINKED_SQL}
),
pairs AS (
    SELECT i.source_id AS inner_source, i.tool_call_id AS inner_id, o.source_id AS outer_source, o.tool_call_id AS outer_id,
           (i.ts_utc - o.ts_utc) + (o.result_ts_utc - i.result_ts_utc) AS gap
    FROM otel AS o JOIN otel AS i
      ON i.session_id = o.session_id AND i.trace_id = o.trace_id AND i.tool = o.tool AND i.source_id <> o.source_id
     AND i.tool_call_id <> o.tool_call_id AND i.ts_utc >= o.ts_utc AND i.result_ts_utc <= o.result_ts_utc
     -- two spans of the very same times: the later file's is the inner one
     AND NOT (i.ts_utc = o.ts_utc AND i.result_ts_utc = o.result_ts_utc AND i.source_id < o.source_id)
)
SELECT inner_source, inner_id, outer_source, outer_id FROM pairs
QUALIFY row_number() OVER (PARTITION BY inner_source, inner_id ORDER BY gap, outer_source, outer_id) = 1
    AND row_number() OVER (PARTITION BY outer_source, outer_id ORDER BY gap, inner_source, inner_id) = 1
"""


def join_split_traces(store: Store) -> int:
    """Move every OTel fallback session whose trace was also stored under one conversation's session into that
    session, then link the tool rows of one call that two files stored (see the module docstring); the number
    of sessions moved. Call inside a transaction."""
    duck = store.duck
    moves = duck.execute(_MOVES).fetchall()
    if moves:
        _move(store, moves)
    nested = duck.execute(_NESTED).fetchall()
    write_links(store, nested)
    return len(moves)


def _move(store: Store, moves: list[tuple[str, str]]) -> None:
    """Move each (fallback, target) session's rows into the target."""
    duck = store.duck
    duck.execute("CREATE OR REPLACE TEMP TABLE _tokaudit_trace_moves (fallback VARCHAR, target VARCHAR)")
    duck.executemany("INSERT INTO _tokaudit_trace_moves VALUES (?, ?)", moves)
    for table in ("llm_calls", "tool_calls", "session_events"):
        duck.execute(f"UPDATE {table} SET session_id = m.target FROM _tokaudit_trace_moves AS m WHERE {table}.session_id = m.fallback")
    # A file holding rows of both sessions keeps one session row, spanning both; elsewhere the row is renamed.
    duck.execute(
        """
        UPDATE sessions SET started_at_utc = least(sessions.started_at_utc, f.started_at_utc),
                            ended_at_utc = greatest(sessions.ended_at_utc, f.ended_at_utc)
        FROM _tokaudit_trace_moves AS m JOIN sessions AS f ON f.session_id = m.fallback
        WHERE sessions.session_id = m.target AND sessions.source_id = f.source_id
        """
    )
    duck.execute(
        """
        DELETE FROM sessions WHERE EXISTS (
            SELECT 1 FROM _tokaudit_trace_moves AS m JOIN sessions AS t ON t.session_id = m.target
            WHERE sessions.session_id = m.fallback AND t.source_id = sessions.source_id)
        """
    )
    duck.execute("UPDATE sessions SET session_id = m.target FROM _tokaudit_trace_moves AS m WHERE sessions.session_id = m.fallback")
    duck.execute("DROP TABLE _tokaudit_trace_moves")
    bump_data_version(store)
