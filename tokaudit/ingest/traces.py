"""Joining the parts of an OpenTelemetry trace that were stored in different files.

A collector's file exporter writes spans in the order they end and rotates its file by size, so one
long agent run can straddle two files; the ``invoke_agent`` span that names the conversation
(``gen_ai.conversation.id``) ends last, in the later file. The OTel parser reads a file alone: spans of
the earlier file never see that name and fall back to the session ``otel:<traceId>``
(``ingest.otel``). After every ingest that wrote rows, a fallback session whose trace's other spans
were stored under exactly one conversation's session is moved into it — its requests, tool calls,
events and session rows — so the conversation is one session with all of its tokens, however its
spans were split. A trace whose spans name several conversations (or none) is left as it was.

Re-running changes nothing (nothing is left in the fallback session); a file re-read later (grown or
replaced) has its rows moved again by the next run.
"""

from __future__ import annotations

from tokaudit.store.engine import Store
from tokaudit.store.load import bump_data_version

# Fallback sessions: "otel:" and a 32-digit hex trace id; the conversation each one's trace was also stored under.
_MOVES = """
WITH fallback AS (
    SELECT DISTINCT session_id, substr(session_id, 6) AS trace_id FROM sessions
    WHERE starts_with(session_id, 'otel:') AND regexp_full_match(substr(session_id, 6), '[0-9a-f]{32}')
),
named AS (
    SELECT f.session_id AS fallback, c.session_id AS target FROM fallback AS f
    JOIN llm_calls AS c ON starts_with(c.call_key, 'otel:' || f.trace_id || ':') AND c.session_id <> f.session_id
    UNION
    SELECT f.session_id, t.session_id FROM fallback AS f
    JOIN tool_calls AS t ON starts_with(t.tool_call_id, f.trace_id || ':') AND t.session_id <> f.session_id
)
SELECT fallback, any_value(target) AS target FROM named GROUP BY fallback HAVING count(DISTINCT target) = 1
"""


def join_split_traces(store: Store) -> int:
    """Move every OTel fallback session whose trace was also stored under one conversation's session into that
    session (see the module docstring); the number of sessions moved. Call inside a transaction."""
    duck = store.duck
    moves = duck.execute(_MOVES).fetchall()
    if not moves:
        return 0
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
    return len(moves)
