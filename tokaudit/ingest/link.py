"""Linking the two records of one tool call: the agent's log and the MCP server's transcript.

When an agent log (Claude Code, Codex, OTel, ...) and an MCP transcript both
hold the same ``tools/call``, the call must be counted once. After every
ingest that wrote rows, each MCP-side call not yet linked is matched to an
agent-side call:

candidates have the same MCP tool name (and the same server when both name
one) and timestamps at most ``WINDOW_S`` apart; among them a pair whose call
ids agree (the agent's id equals the MCP record's ``protocol_call_id``) comes
first, then the nearest in time; each record is used once. Ids alone are never
enough: JSON-RPC ids such as ``3`` repeat in every MCP connection.

A linked MCP record keeps its row (nothing is deleted) and points at the
agent's (``linked_source_id``, ``linked_tool_call_id``); reports read
``store.queries.tool_calls_sql()``, which counts the pair once and fills the
agent's gaps (server, result size, tokens) from the MCP side.
"""

from __future__ import annotations

from tokaudit.store.engine import Store
from tokaudit.store.load import bump_data_version

MCP_FORMATS = ("mcp-jsonrpc", "mcp-desktop")
WINDOW_S = 30

# A record ``t`` that no other record was linked to: a call already counted once with its copy is not paired again.
UNLINKED_SQL = "NOT EXISTS (SELECT 1 FROM tool_calls AS l WHERE l.linked_source_id = t.source_id AND l.linked_tool_call_id = t.tool_call_id)"

_CANDIDATES = f"""
WITH mcp AS (
    SELECT t.source_id, t.tool_call_id, t.protocol_call_id, t.mcp_server, coalesce(t.mcp_tool, t.tool_name) AS tool, t.ts_utc
    FROM tool_calls AS t JOIN sources AS s USING (source_id)
    WHERE s.format IN {MCP_FORMATS} AND t.linked_tool_call_id IS NULL
),
agent AS (
    SELECT t.source_id, t.tool_call_id, coalesce(t.protocol_call_id, t.tool_call_id) AS call_id, t.mcp_server,
           coalesce(t.mcp_tool, t.tool_name) AS tool, t.ts_utc
    FROM tool_calls AS t JOIN sources AS s USING (source_id)
    WHERE s.format NOT IN {MCP_FORMATS} AND t.linked_tool_call_id IS NULL
      AND {UNLINKED_SQL}
),
pairs AS (
    SELECT m.source_id AS m_source, m.tool_call_id AS m_call, a.source_id AS a_source, a.tool_call_id AS a_call,
           CASE WHEN m.protocol_call_id IS NOT NULL AND m.protocol_call_id = a.call_id THEN 0
                ELSE 1 + abs(epoch_ms(m.ts_utc) - epoch_ms(a.ts_utc)) END AS distance
    FROM mcp AS m JOIN agent AS a
      ON m.tool = a.tool AND (m.mcp_server IS NULL OR a.mcp_server IS NULL OR m.mcp_server = a.mcp_server)
     AND abs(epoch_ms(m.ts_utc) - epoch_ms(a.ts_utc)) <= {WINDOW_S * 1000}
),
ranked AS (
    SELECT *, row_number() OVER (PARTITION BY m_source, m_call ORDER BY distance, a_source, a_call) AS m_rank,
              row_number() OVER (PARTITION BY a_source, a_call ORDER BY distance, m_source, m_call) AS a_rank
    FROM pairs
)
SELECT m_source, m_call, a_source, a_call FROM ranked WHERE m_rank = 1 AND a_rank = 1
"""


def link_tool_calls(store: Store) -> int:
    """Link MCP-side records of tool calls to the agent-side records of the same calls; returns how many.

    Pairs are taken nearest first until none is left, so a record that lost
    its nearest partner to a closer pair can still pair with its next one.
    """
    duck = store.duck
    linked = 0
    while True:
        pairs = duck.execute(_CANDIDATES).fetchall()
        if not pairs:
            return linked
        write_links(store, pairs)
        linked += len(pairs)


def write_links(store: Store, pairs: list[tuple[int, str, int, str]]) -> None:
    """Point each (source, call) record of ``pairs`` — (its source, its call, the kept record's source, its call) —
    at the record it is a second copy of: reads count the pair once (``store.queries.tool_calls_sql``)."""
    if not pairs:
        return
    bump_data_version(store)  # a linked record folds into another: the calls audits read have changed
    store.duck.executemany(
        "UPDATE tool_calls SET linked_source_id = ?, linked_tool_call_id = ? WHERE source_id = ? AND tool_call_id = ?",
        [[kept_source, kept_call, source, call] for source, call, kept_source, kept_call in pairs],
    )
