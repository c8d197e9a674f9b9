"""An agent's record of an MCP call and the server transcript's record of it are one call."""

from __future__ import annotations

import json

from tests.ingest.helpers import claude_assistant, claude_user_result
from tokaudit.analyze.usage import usage_report
from tokaudit.ingest.runner import ingest_paths


def _write(path, objs):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(json.dumps(o, separators=(",", ":")) for o in objs) + "\n")


def _transcript(ts_call: str, ts_result: str, text: str, is_error: bool = False):
    env = {"server": "weather", "connection": "weather-1"}
    return [
        {**env, "timestamp": ts_call, "direction": "client_to_server",
         "message": {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "get_forecast", "arguments": {"city": "Paris"}}}},
        {**env, "timestamp": ts_result, "direction": "server_to_client",
         "message": {"jsonrpc": "2.0", "id": 7, "result": {"content": [{"type": "text", "text": text}], "isError": is_error}}},
    ]


def test_mcp_transcript_call_links_to_the_agent_call_and_counts_once(tmp_path, store):
    block = {"type": "tool_use", "id": "toolu_w1", "name": "mcp__weather__get_forecast", "input": {"city": "Paris"}}
    _write(
        tmp_path / "projects" / "p" / "s1.jsonl",
        [
            claude_assistant("msg_1", "req_1", blocks=[block], ts="2026-03-10T10:00:00.000Z", stop="tool_use"),
            claude_user_result("toolu_w1", "sunny, 18 C", ts="2026-03-10T10:00:02.000Z"),
        ],
    )
    _write(tmp_path / "mcp" / "weather.jsonl", _transcript("2026-03-10T10:00:00.400Z", "2026-03-10T10:00:01.900Z", "sunny, 18 C"))
    # A call of the same tool an hour later has no agent-side partner: it stays a call of its own.
    _write(tmp_path / "mcp" / "later.jsonl", _transcript("2026-03-10T11:00:00.000Z", "2026-03-10T11:00:01.000Z", "rain"))
    summary = ingest_paths(store, [tmp_path], workers=1)
    assert summary.tool_calls_linked == 1
    linked = store.duck.execute("SELECT linked_tool_call_id FROM tool_calls WHERE linked_tool_call_id IS NOT NULL").fetchall()
    assert linked == [("toolu_w1",)]
    (row,) = usage_report(store, by="mcp-server").rows
    assert row["mcp_server"] == "weather" and row["calls"] == 2  # the linked pair once, plus the unlinked later call
    # Re-running changes nothing: links are not made twice.
    assert ingest_paths(store, [tmp_path], workers=1).tool_calls_linked == 0


def test_a_failure_the_server_transcript_records_counts_though_the_agent_log_says_none(tmp_path, store):
    """The agent's log may flag no error (OpenHands, recent Codex keep only the answer's text): the server's own
    isError, in its transcript, makes the linked call a failure."""
    from tokaudit.store.queries import tool_calls_sql

    block = {"type": "tool_use", "id": "toolu_w1", "name": "mcp__weather__get_forecast", "input": {"city": "Paris"}}
    _write(tmp_path / "projects" / "p" / "s1.jsonl", [
        claude_assistant("msg_1", "req_1", blocks=[block], ts="2026-03-10T10:00:00.000Z", stop="tool_use"),
        claude_user_result("toolu_w1", "upstream 502", ts="2026-03-10T10:00:02.000Z", is_error=False),
    ])
    _write(tmp_path / "mcp" / "weather.jsonl", _transcript("2026-03-10T10:00:00.400Z", "2026-03-10T10:00:01.900Z", "upstream 502", is_error=True))
    assert ingest_paths(store, [tmp_path], workers=1).tool_calls_linked == 1
    assert store.duck.execute(f"SELECT tool_call_id, is_error FROM ({tool_calls_sql()})").fetchall() == [("toolu_w1", True)]
