"""Claude Desktop MCP logs: line shapes, connections, truncated bodies, stderr, resume, sniffing."""

from __future__ import annotations

import json
from datetime import datetime

import pytest

from tests.conftest import FIXTURES
from tests.ingest.test_mcp_jsonrpc import _merge
from tokaudit.ingest import SNIFF_BYTES, mcp_desktop, sniff_format
from tokaudit.ingest.base import Line

FIX = FIXTURES / "mcp-desktop"
PATH = "/Users/me/Library/Logs/Claude/mcp-server-files.log"


def j(obj) -> str:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)


def call(i, name, args=None):
    return {"method": "tools/call", "params": {"name": name, "arguments": args or {}}, "jsonrpc": "2.0", "id": i}


def ok(i, result):
    return {"jsonrpc": "2.0", "id": i, "result": result}


def parse(*texts: str, path=PATH, state=None):
    data = [t.encode() if isinstance(t, str) else t for t in texts]
    return mcp_desktop.parse([Line(i, 0, d) for i, d in enumerate(data, 1)], path=path, state=state)


T0 = "2026-03-01T09:44:53.641Z"
T1 = "2026-03-01T09:44:54.141Z"


def test_both_bracket_orders_and_the_metadata_tail():
    r = parse(
        f"{T0} [files] [info] Message from client: {j(call(2, 'list', {'a': 1}))} {{ metadata: undefined }}",
        f"{T1} [info] [files] Message from server: {j(ok(2, {'content': [{'type': 'text', 'text': 'abc'}]}))}",
    )
    (row,) = r.tool_calls.values()
    assert (row["tool_name"], row["mcp_server"], row["args_bytes"], row["result_bytes"]) == ("list", "files", len(b'{"a":1}'), 3)
    assert (row["ts_utc"], row["duration_ms"], row["protocol_call_id"]) == (datetime(2026, 3, 1, 9, 44, 53, 641000), 500, "2")
    assert row["tool_call_id"] == "files@2026-03-01T09:44:53.641Z:2"
    (session,) = r.sessions.values()
    assert (session["session_id"], session["agent"], session["agent_id"]) == ("mcp-desktop:files@2026-03-01T09:44:53.641Z", "mcp", "files")
    assert r.lines_ok == 2


def test_server_comes_from_the_file_name_when_the_line_has_only_a_level():
    r = parse(f"{T0} [info] Message from client: {j(call(1, 'x'))}")
    assert next(iter(r.tool_calls.values()))["mcp_server"] == "files"
    r = parse(f"{T0} [info] Message from client: {j(call(1, 'x'))}", path="/logs/mcp.log")
    assert next(iter(r.tool_calls.values()))["mcp_server"] == "unknown"


def test_connections_are_delimited_and_unanswered_calls_flagged_when_closed():
    r = parse(
        f"{T0} [files] [info] Initializing server... {{ metadata: undefined }}",
        f"{T0} [files] [info] Message from client: {j({'method': 'initialize', 'params': {'protocolVersion': '2025-06-18'}, 'jsonrpc': '2.0', 'id': 0})}",
        f"{T0} [files] [info] Message from client: {j(call(1, 'never'))}",
        f"{T0} [files] [info] Message from client: {j(call(2, 'cancelled'))}",
        f"{T0} [files] [info] Message from client: {j({'jsonrpc': '2.0', 'method': 'notifications/cancelled', 'params': {'requestId': 2}})}",
        f"{T1} [files] [info] Client transport closed {{ metadata: undefined }}",
        f"{T1} [files] [info] Server transport closed {{ metadata: undefined }}",
        "2026-03-01T10:00:00.000Z [files] [info] Initializing server... { metadata: undefined }",
        f"2026-03-01T10:00:01.000Z [files] [info] Message from client: {j(call(1, 'pending'))}",
    )
    calls = {row["mcp_tool"]: row for row in r.tool_calls.values()}
    assert calls["never"]["error_kind"] == "missing-response"
    assert calls["cancelled"]["cancelled"] is True and calls["cancelled"].get("error_kind") is None
    assert calls["pending"].get("error_kind") is None  # end of file: it may still be answered
    assert len(r.sessions) == 2 and r.lines_ok == 9
    assert {s["agent_version"] for s in r.sessions.values()} == {"2025-06-18", None}


def test_stderr_and_multi_line_records_are_counted_by_rule():
    r = parse(
        f"{T0} [files] [info] Using MCP server command: /usr/bin/npx with args and path: {{",
        "  metadata: {",
        "    args: [ '-y', 'server', [length]: 2 ]",
        "  }",
        "}",
        "Secure MCP Filesystem Server running on stdio",
        b"\xff\xfe binary stderr",
        f"{T0} [files] [info] Server started and connected successfully {{ metadata: undefined }}",
        "",
    )
    assert r.skipped == {"desktop-notice": 2, "record-continuation": 4, "raw-stderr": 2, "blank-line": 1}
    assert r.lines_read == 9 and not r.tool_calls


def test_a_body_cut_inside_a_string_is_sized_as_stated():
    body = '{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"head\\n…[1000 chars truncated]…tail"}]}}'
    r = parse(f"{T0} [files] [info] Message from client: {j(call(3, 'read'))}", f"{T1} [files] [info] Message from server: {body}")
    (row,) = r.tool_calls.values()
    visible = len("head\ntail".encode())
    assert (row["result_truncated"], row["result_bytes"], row.get("result_sha256")) == (True, visible + 1000, None)
    assert row["result_tokens_method"] == "tokenizer:o200k_base+scaled-from-truncated"


def test_a_body_cut_at_the_end_is_salvaged_by_regex():
    body = '{"jsonrpc":"2.0","id":4,"result":{"content":[{"type":"text","text":"{\\"a\\":[1,2,3,[48000 chars truncated]'
    r = parse(f"{T0} [files] [info] Message from client: {j(call(4, 'read'))}", f"{T1} [files] [info] Message from server: {body}")
    (row,) = r.tool_calls.values()
    visible = body.replace("[48000 chars truncated]", "")
    assert (row["result_truncated"], row["result_bytes"], row["result_content_types"]) == (True, len(visible) + 48000, "text")
    assert row["result_line_no"] == 2 and row["duration_ms"] == 500


def test_a_truncated_request_keeps_its_call_and_a_truncated_error_is_a_protocol_error():
    request = '{"method":"tools/call","params":{"name":"write","arguments":{"content":"xxxx…[90000 chars truncated]…xx"}},"jsonrpc":"2.0","id":9'
    error = '{"jsonrpc":"2.0","id":9,"error":{"code":-32603,"message":"too big: xxxx[5000 chars truncated]'
    r = parse(f"{T0} [files] [info] Message from client: {request}", f"{T1} [files] [error] Message from server: {error}")
    (row,) = r.tool_calls.values()
    assert (row["tool_name"], row.get("args_bytes"), row["error_kind"], row["error_code"], row["is_error"]) == ("write", None, "protocol", -32603, True)


def test_unparseable_bodies_without_a_marker_are_problems():
    r = parse(
        f"{T0} [files] [info] Message from client: {{\"method\":\"tools/call\",",
        f"{T0} [files] [info] Message from client: {j({'hello': 'world'})}",
        f"{T0} [files] [info] Message from client: " + "[" * 5000 + "]" * 5000,
        f"{T0} [files] [info] Message from client: ".encode() + b'{"x":"\xff"}',
    )
    assert [p.kind for p in r.problems] == ["invalid-json", "not-jsonrpc", "too-deep", "invalid-utf8"]
    assert r.lines_read == 4


def test_a_prefix_whose_timestamp_is_no_date_is_a_problem_and_the_rest_is_read():
    r = parse(
        "2026-13-01T09:44:50.100Z [files] [info] Initializing server...",
        f"{T0} [files] [info] Message from client: {j(call(1, 'read_file'))}",
    )
    assert [(p.line_no, p.kind) for p in r.problems] == [(1, "bad-timestamp")]
    assert r.lines_read == 2 and r.lines_ok == 1 and len(r.tool_calls) == 1


def test_the_same_traffic_in_mcp_log_and_the_server_log_gets_the_same_ids():
    lines = (
        f"{T0} [files] [info] Initializing server... {{ metadata: undefined }}",
        f"{T0} [files] [info] Message from client: {j(call(1, 'x'))} {{ metadata: undefined }}",
        f"{T1} [files] [info] Message from server: {j(ok(1, {'content': []}))} {{ metadata: undefined }}",
    )
    a = parse(*lines, path="/logs/mcp-server-files.log")
    b = parse(*(ln.replace("[files] [info]", "[info] [files]") for ln in lines), path="/logs/mcp.log")
    assert set(a.tool_calls) == set(b.tool_calls) and set(a.sessions) == set(b.sessions)


@pytest.mark.parametrize("name", ["mcp-server-filesystem.log", "mcp.log"])
def test_parsing_in_two_pieces_equals_parsing_in_one(name):
    data = (FIX / name).read_bytes().splitlines()
    all_lines = [Line(i, 0, d) for i, d in enumerate(data, 1)]
    whole = mcp_desktop.parse(all_lines, path=str(FIX / name), state=None)
    for cut in range(1, len(all_lines)):
        first = mcp_desktop.parse(all_lines[:cut], path=str(FIX / name), state=None)
        second = mcp_desktop.parse(all_lines[cut:], path=str(FIX / name), state=json.loads(json.dumps(first.state)))
        assert _merge([first, second]) == _merge([whole]), f"cut after line {cut}"
        assert dict(first.skipped + second.skipped) == dict(whole.skipped)


def test_fixture_totals():
    data = (FIX / "mcp-server-filesystem.log").read_bytes().splitlines()
    r = mcp_desktop.parse([Line(i, 0, d) for i, d in enumerate(data, 1)], path=str(FIX / "mcp-server-filesystem.log"), state=None)
    assert r.lines_read == len(data) == 36 and not r.problems
    assert len(r.tool_calls) == 8 and len(r.sessions) == 2 and len(r.tool_defs) == 2
    kinds = sorted((row.get("error_kind") or "-", bool(row.get("result_truncated"))) for row in r.tool_calls.values())
    assert kinds == [("-", False)] * 4 + [("-", True)] * 2 + [("missing-response", False), ("protocol", False)]


def test_sniffing():
    for path in FIX.glob("*.log"):
        assert sniff_format(path.read_bytes()[:SNIFF_BYTES]) == "mcp-desktop", path.name
    assert not mcp_desktop.sniff([{"jsonrpc": "2.0"}])
    assert not mcp_desktop.sniff_prefix(b"2026-03-01T09:44:53.641Z [main] [info] Window created\n")  # no MCP phrase
    assert not mcp_desktop.sniff_prefix(b"2026-03-01T09:44:53.641Z [files] [chatter] Message from client: {}\n")  # no level
    assert not mcp_desktop.sniff_prefix(b"[2026-03-01 09:44:53] [info] Message from client: {}\n")
    assert mcp_desktop.sniff_prefix(b"2024-11-28T09:27:43.719Z [info] Attempting to connect to MCP server neo4j...\n")


def test_file_patterns_and_default_roots(monkeypatch):
    from fnmatch import fnmatch

    names = ["mcp.log", "mcp.old.log", "mcp-server-filesystem.log", "mcp-server-github.old.log"]
    assert all(any(fnmatch(n, p) for p in mcp_desktop.FILE_PATTERNS) for n in names)
    assert not any(fnmatch("main.log", p) for p in mcp_desktop.FILE_PATTERNS)
    assert mcp_desktop._server_of_file("/x/mcp-server-github.old.log") == "github"
    monkeypatch.setenv("LOCALAPPDATA", "/c/Users/me/AppData/Local")
    assert any(str(p).endswith("Claude/Logs") for p in mcp_desktop.default_roots())
