"""The generic event format: field mapping, skip rules, problem kinds, resuming, sniffing, fixture totals."""

from __future__ import annotations

import json

import pytest

from tests.conftest import FIXTURES, snapshot
from tests.ingest.helpers import lines
from tokaudit.ingest import SNIFF_BYTES, generic, head_objects, sniff_format
from tokaudit.ingest.base import Line, ParseResult, merge_llm_call, merge_session, merge_tool_call
from tokaudit.ingest.runner import ingest_paths

PATH = "/logs/acme/run.jsonl"
TS = "2026-03-12T09:14:05.000Z"
MAIN = FIXTURES / "generic" / "acme-agent" / "run-7f3a.jsonl"
SUB = FIXTURES / "generic" / "acme-agent" / "run-7f3a.r1.jsonl"


def ev(type_, ts=TS, session_id="s1", **fields):
    return {"tokaudit": 1, "type": type_, "ts": ts, "session_id": session_id, **fields}


def llm(call_key="c1", **fields):
    return ev("llm_call", call_key=call_key, **{"model": "claude-sonnet-4-5-20250929", "input_tokens": 10, "output_tokens": 5, **fields})


def tool(tool_call_id="t1", **fields):
    return ev("tool_call", tool_call_id=tool_call_id, **{"tool_name": "bash", **fields})


def parse(*objs, state=None):
    return generic.parse(lines(*objs), path=PATH, state=state)


def kinds(r):
    return [(p.line_no, p.kind) for p in r.problems]


# --- mapping ----------------------------------------------------------------------------------------


def test_llm_call_maps_every_field():
    r = parse(llm("c1", provider="anthropic", input_tokens=3, cache_read_tokens=14210, cache_write_5m_tokens=1872, cache_write_1h_tokens=12800,
                  output_tokens=241, reasoning_tokens=100, web_search_requests=2, context_window_tokens=200000, message_id="msg_1",
                  request_id="req_1", stop_reason="tool_use", service_tier="standard", is_sidechain=True, output_is_lower_bound=True,
                  usage_source="estimated:tokenizer:o200k_base", reported_cost_usd=0.0123))
    (call,) = r.llm_calls.values()
    assert call["call_key"] == "generic:s1:c1" and call["session_id"] == "generic:s1"
    assert (call["input_tokens"], call["cache_read_tokens"], call["cache_write_5m_tokens"], call["cache_write_1h_tokens"]) == (3, 14210, 1872, 12800)
    assert (call["output_tokens"], call["reasoning_tokens"], call["web_search_requests"], call["context_window_tokens"]) == (241, 100, 2, 200000)
    assert (call["provider"], call["model"], call["message_id"], call["request_id"]) == ("anthropic", "claude-sonnet-4-5-20250929", "msg_1", "req_1")
    assert (call["stop_reason"], call["service_tier"], call["usage_source"]) == ("tool_use", "standard", "estimated:tokenizer:o200k_base")
    assert call["is_sidechain"] and call["output_is_lower_bound"] and call["cache_ttl_known"] and not call["is_aggregate"]
    assert str(call["reported_cost_usd"]) == "0.012300000000000000"
    assert call["ts_utc"].isoformat() == "2026-03-12T09:14:05"
    assert r.sessions["generic:s1"]["agent"] == "generic"


def test_defaults_and_nulls_mean_not_reported():
    r = parse(llm(cache_read_tokens=None, reasoning_tokens=None, provider=None))
    (call,) = r.llm_calls.values()
    assert (call["cache_read_tokens"], call["cache_write_5m_tokens"], call["cache_write_1h_tokens"], call["web_search_requests"]) == (0, 0, 0, 0)
    assert call["reasoning_tokens"] is None and call["provider"] is None
    assert call["usage_source"] == "reported" and not call["is_sidechain"] and not call["output_is_lower_bound"]


def test_inclusive_input_is_stored_uncached():
    r = parse(llm(input_tokens=5210, input_includes_cache=True, cache_read_tokens=4864, cache_write_5m_tokens=100, output_tokens=612, reasoning_tokens=448))
    (call,) = r.llm_calls.values()
    assert (call["input_tokens"], call["cache_read_tokens"], call["cache_write_5m_tokens"], call["reasoning_tokens"]) == (246, 4864, 100, 448)


def test_cache_writes_of_unknown_ttl():
    (call,) = parse(llm(cache_write_tokens=900)).llm_calls.values()
    assert (call["cache_write_5m_tokens"], call["cache_write_1h_tokens"], call["cache_ttl_known"]) == (900, 0, False)
    (call,) = parse(llm(cache_write_tokens=0)).llm_calls.values()
    assert call["cache_ttl_known"] is True


def test_rewritten_call_keeps_the_record_with_most_tokens():
    r = parse(llm("c1", output_tokens=0, output_is_lower_bound=True), llm("c1", output_tokens=612), llm("c1", output_tokens=0))
    (call,) = r.llm_calls.values()
    assert (call["output_tokens"], call["line_no"], call["output_is_lower_bound"]) == (612, 2, False)


def test_session_fields_and_first_event_fixes_the_agent():
    r = parse(
        ev("session", agent="acme-agent", agent_version="0.9.2", cwd="/w", git_branch="main", parent_session_id="p1",
           subagent_type="researcher", task_label="JIRA-1"),
        llm(ts="2026-03-12T09:15:00Z"),
        ev("session", ts="2026-03-12T09:16:00Z", outcome="success", agent="other"),
        llm(session_id="s2"),
        ev("session", session_id="s2", agent="late-agent", project="p"),
    )
    s1, s2 = r.sessions["generic:s1"], r.sessions["generic:s2"]
    assert (s1["agent"], s1["agent_version"], s1["project"], s1["cwd"], s1["git_branch"]) == ("acme-agent", "0.9.2", "/w", "/w", "main")
    assert (s1["parent_session_id"], s1["subagent_type"], s1["task_label"], s1["outcome"]) == ("generic:p1", "researcher", "JIRA-1", "success")
    assert (s1["started_at_utc"].isoformat(), s1["ended_at_utc"].isoformat()) == ("2026-03-12T09:14:05", "2026-03-12T09:16:00")
    # Documented: a session's first event fixes its agent; later session events only fill unknown fields.
    assert (s2["agent"], s2["project"]) == ("generic", "p")


def test_tool_call_with_inline_result_and_args_measures():
    r = parse(tool("toolu_1", call_key="c1", tool_name="read_file", args={"path": "src/a.py", "limit": 50},
                   result="héllo\n", is_error=False, duration_ms=3, result_truncated=True))
    t = r.tool_calls["generic:s1:toolu_1"]
    args = b'{"path":"src/a.py","limit":50}'
    assert (t["call_key"], t["protocol_call_id"], t["tool_name"], t["tool_kind"], t["mcp_server"]) == ("generic:s1:c1", "toolu_1", "read_file", "function", None)
    assert (t["args_bytes"], t["args_skeleton"], t["args_tokens_method"]) == (len(args), '{"path":"src/a.py","limit":<n>}', "tokenizer:o200k_base")
    assert t["args_tokens"] > 0
    assert (t["result_bytes"], t["result_content_types"], t["result_line_no"], t.get("result_ts_utc")) == (7, "text", 1, None)
    assert (t["is_error"], t["duration_ms"], t["duration_method"], t["result_truncated"]) == (False, 3, "reported", True)
    assert t["result_tokens_method"] == "tokenizer:o200k_base"
    import hashlib

    assert t["result_sha256"] == hashlib.sha256("héllo\n".encode()).hexdigest() and t["args_sha256"] == hashlib.sha256(args).hexdigest()


def test_args_as_written_string_args_and_reported_sizes():
    raw = b'{"tokaudit":1,"type":"tool_call","ts":"2026-03-12T09:14:05Z","session_id":"s1","tool_call_id":"t1","tool_name":"bash","args":{"command": "ls -la"}}'
    t = generic.parse([Line(1, 0, raw)], path=PATH, state=None).tool_calls["generic:s1:t1"]
    assert t["args_bytes"] == len(b'{"command": "ls -la"}')  # measured as written, spaces included
    assert "result_line_no" not in t  # no result yet
    t = parse(tool(args="rg -n TODO src/", tool_kind="custom")).tool_calls["generic:s1:t1"]
    assert (t["args_bytes"], t["tool_kind"], t["args_skeleton"]) == (15, "custom", '"rg -n TODO src/"')
    t = parse(tool(args_bytes=120, args_tokens=31, result_bytes=48213, result_tokens=11904, result_content_types=["text", "resource_link", "text"])).tool_calls["generic:s1:t1"]
    assert (t["args_bytes"], t["args_tokens"], t["args_tokens_method"], t.get("args_sha256")) == (120, 31, "reported", None)
    assert (t["result_bytes"], t["result_tokens"], t["result_tokens_method"], t["result_content_types"]) == (48213, 11904, "reported", "resource_link,text")
    assert t["result_sha256"] is None


def test_mcp_server_from_name_or_field():
    r = parse(tool("a", tool_name="mcp__linear__get_issue"), tool("b", tool_name="search_docs", mcp_server="acme-docs"),
              tool("c", tool_name="lookup", mcp_server="kb", mcp_tool="kb_lookup", tool_kind="builtin"))
    a, b, c = (r.tool_calls[f"generic:s1:{k}"] for k in "abc")
    assert (a["mcp_server"], a["mcp_tool"], a["tool_kind"]) == ("linear", "get_issue", "mcp")
    assert (b["mcp_server"], b["mcp_tool"], b["tool_kind"]) == ("acme-docs", "search_docs", "mcp")
    assert (c["mcp_server"], c["mcp_tool"], c["tool_kind"]) == ("kb", "kb_lookup", "builtin")


def test_tool_result_joins_its_call_and_duration_comes_from_timestamps():
    r = parse(
        tool("t1", ts="2026-03-12T09:14:21.214Z", args={"command": "pytest"}),
        ev("tool_result", ts="2026-03-12T09:14:27.630Z", tool_call_id="t1", result="1 failed", is_error=True),
        ev("tool_result", session_id="s2", tool_call_id="t1", result_bytes=10, duration_ms=40),  # same id, other session
    )
    t = r.tool_calls["generic:s1:t1"]
    assert (t["tool_name"], t["result_bytes"], t["is_error"], t["result_line_no"]) == ("bash", 8, True, 2)
    assert (t["duration_ms"], t["duration_method"]) == (6416, "timestamps")
    other = r.tool_calls["generic:s2:t1"]
    assert (other["result_bytes"], other["duration_ms"], other["duration_method"], other.get("tool_name")) == (10, 40, "reported", None)


def test_events():
    r = parse(ev("event", kind="compaction", detail="context 30418 -> 2210 tokens"), ev("event", kind="api_error"))
    assert [(e["line_no"], e["kind"], e["detail"], e["session_id"]) for e in r.events.values()] == [
        (1, "compaction", "context 30418 -> 2210 tokens", "generic:s1"), (2, "api_error", None, "generic:s1")]


def test_secrets_in_a_task_label_or_event_detail_are_redacted_when_stored():
    token = "ghp_" + "FbLd9Rb9xqODtLMulxluWx2MqtYygX0bKRVi"
    r = parse(ev("session", task_label=f"git clone https://x-access-token:{token}@github.com/o/r"),
              ev("event", kind="api_error", detail=f"401 for Authorization: Bearer {token}"))  # fmt: skip
    stored = [r.sessions["generic:s1"]["task_label"], *(e["detail"] for e in r.events.values())]
    assert all(token not in text and "[REDACTED]" in text for text in stored)
    assert stored[0].startswith("git clone https://")


def test_unknown_fields_are_ignored_and_zones_become_utc():
    r = parse(llm(ts="2026-03-12T11:14:05.5+02:00", future_field={"x": 1}, cache_read_tokens=2))
    (call,) = r.llm_calls.values()
    assert call["ts_utc"].isoformat() == "2026-03-12T09:14:05.500000" and call["cache_read_tokens"] == 2 and not r.problems


# --- skip rules and problems ------------------------------------------------------------------------


def test_skip_rules():
    r = parse(b"", b"   ", ev("tool_def", tool_name="x"), ev("Weird Type!"), {"tokaudit": 1, "type": "x" * 40, "ts": TS})
    assert r.skipped == {"blank-line": 2, "type:tool_def": 1, "type:(other)": 2}
    assert r.lines_read == 5 and r.lines_ok == 0 and not r.problems


def test_unknown_type_rule_names_are_bounded():
    r = parse(*[ev(f"future_{i}") for i in range(40)], ev("future_0"))
    assert len(r.skipped) == generic.MAX_SKIP_RULES + 1 and r.skipped["type:future_0"] == 2
    assert r.skipped["type:(other)"] == 40 - generic.MAX_SKIP_RULES


@pytest.mark.parametrize(
    ("obj", "kind", "words"),
    [
        (b"\xff\xfe{}", "invalid-utf8", "not UTF-8"),
        (b'{"tokaudit":1,"type":"llm_call",', "invalid-json", "not valid JSON"),
        ([1, 2], "wrong-type", "line: expected `object`, got `array`"),
        ({"type": "session", "ts": TS, "session_id": "s"}, "missing-field", "line: missing required field `tokaudit`"),
        ({"tokaudit": "1", "type": "session"}, "wrong-type", "line: field `tokaudit`: expected `int`, got `str`"),
        ({"tokaudit": 1.0, "type": "session"}, "wrong-type", "field `tokaudit`: expected `int`, got `float`"),
        ({"tokaudit": 2, "type": "llm_call"}, "unsupported-version", "version 2 is newer than this tokaudit reads (1): upgrade tokaudit"),
        ({"tokaudit": 0, "type": "llm_call"}, "unsupported-version", "version 0 does not exist"),
        ({"tokaudit": 1, "ts": TS}, "missing-field", "line: missing required field `type`"),
        ({"tokaudit": 1, "type": 7}, "wrong-type", "line: field `type`: expected `str`, got `int`"),
        (llm(input_tokens="10"), "wrong-type", "llm_call event: field `input_tokens`: expected `int`, got `str`"),
        (llm(output_tokens=5.0), "wrong-type", "llm_call event: field `output_tokens`: expected `int`, got `float`"),
        (llm(is_sidechain="yes"), "wrong-type", "field `is_sidechain`"),
        (tool(result_content_types=["text", 3]), "wrong-type", "field `result_content_types[1]`"),
        (ev("llm_call", call_key="c", model="m", input_tokens=1), "missing-field", "llm_call event: missing required field `output_tokens`"),
        (ev("tool_result"), "missing-field", "tool_result event: missing required field `tool_call_id`"),
        ({"tokaudit": 1, "type": "event", "session_id": "s", "kind": "compaction"}, "missing-field", "missing required field `ts`"),
        (llm(cache_read_tokens=-1), "invalid-value", "field `cache_read_tokens`: expected `int` >= 0"),
        (llm(output_tokens=10**16), "invalid-value", "field `output_tokens`: expected `int` <= 1000000000000000"),
        (ev("session", outcome="done"), "invalid-value", "session event: field `outcome`: invalid enum value 'done'"),
        (llm(ts="2026-03-12 09:14:05Z"), "invalid-value", "field `ts`: expected `str` matching regex"),
        (llm(ts="2026-03-12T09:14:05"), "invalid-value", "field `ts`"),  # no zone
        (llm(ts="2026-02-30T09:14:05Z"), "invalid-value", "llm_call event: field `ts`: not a real date and time"),
        (llm(ts="0001-01-01T00:00:00+01:00"), "invalid-value", "field `ts`: not a real date and time (date value out of range)"),
        (llm(session_id=""), "invalid-value", "field `session_id`: expected `str` of length >= 1"),
        (ev("event", kind="Compaction"), "invalid-value", "event: field `kind`: expected `str` matching regex"),
        (llm(usage_source="guessed"), "invalid-value", "field `usage_source`"),
        (llm(reported_cost_usd=-0.5), "invalid-value", "field `reported_cost_usd`"),
        (tool(args={"a": 1}, args_bytes=7), "conflicting-fields", "give args (the arguments) or args_bytes (their size), not both"),
        (tool(result="x", result_bytes=1), "conflicting-fields", "tool_call event: give result (the text) or result_bytes"),
        (ev("tool_result", tool_call_id="t", result="x", result_bytes=1), "conflicting-fields", "tool_result event"),
        (llm(cache_write_tokens=5, cache_write_1h_tokens=5), "conflicting-fields", "cache_write_tokens (TTL unknown)"),
        (llm(output_tokens=5, reasoning_tokens=6), "inconsistent-usage", "reasoning_tokens (6) exceeds output_tokens (5)"),
        (llm(input_tokens=100, input_includes_cache=True, cache_read_tokens=90, cache_write_5m_tokens=20), "inconsistent-usage",
         "input_tokens (100) is smaller than cache_read_tokens + cache writes (110)"),
    ],
)
def test_problem_kinds_name_the_field(obj, kind, words):
    r = parse(llm("ok"), obj)
    assert kinds(r) == [(2, kind)]
    assert words in r.problems[0].message
    assert r.lines_read == 2 and r.lines_ok == 1
    assert list(r.llm_calls) == ["generic:s1:ok"]  # a rejected line leaves no rows behind


def test_a_problem_line_adds_no_session():
    r = parse(llm(session_id="bad", reasoning_tokens=99))
    assert r.sessions == {} and r.llm_calls == {} and kinds(r) == [(1, "inconsistent-usage")]


# --- resuming a grown file -----------------------------------------------------------------------------


def _merge_results(a: ParseResult, b: ParseResult) -> ParseResult:
    """What the store does with a grown file's second parse: the same merge rules, by key."""
    for key, row in b.sessions.items():
        a.sessions[key] = merge_session(a.sessions[key], row) if key in a.sessions else row
    for key, row in b.llm_calls.items():
        a.llm_calls[key] = merge_llm_call(a.llm_calls[key], row) if key in a.llm_calls else row
    for key, row in b.tool_calls.items():
        a.tool_calls[key] = merge_tool_call(a.tool_calls[key], row) if key in a.tool_calls else row
    a.events.update(b.events)
    a.lines_ok += b.lines_ok
    a.skipped.update(b.skipped)
    return a


@pytest.mark.parametrize("path", [MAIN, SUB], ids=lambda p: p.name)
def test_parse_in_two_pieces_equals_parse_in_one(path):
    data = path.read_bytes().splitlines()
    all_lines = [Line(i, 0, d) for i, d in enumerate(data, start=1)]
    whole = generic.parse(all_lines, path=str(path), state=None)
    for cut in range(1, len(all_lines)):
        first = generic.parse(all_lines[:cut], path=str(path), state=None)
        second = generic.parse(all_lines[cut:], path=str(path), state=first.state)
        both = _merge_results(first, second)
        assert (both.sessions, both.llm_calls, both.tool_calls, both.events) == (whole.sessions, whole.llm_calls, whole.tool_calls, whole.events), cut
        assert (both.lines_ok, both.skipped) == (whole.lines_ok, whole.skipped)


def test_grown_file_ingests_to_the_same_rows_as_the_whole(tmp_path):
    from tokaudit.store import open_store

    data = SUB.read_bytes()
    cut = data.index(b'"type":"tool_result"')
    cut = data.rindex(b"\n", 0, cut) + 1  # between the tool call (and the future type) and its result
    grown = tmp_path / "grown" / "run.jsonl"
    whole = tmp_path / "whole" / "run.jsonl"
    grown.parent.mkdir()
    whole.parent.mkdir()
    grown.write_bytes(data[:cut])
    whole.write_bytes(data)
    with open_store(str(tmp_path / "a.duckdb")) as a, open_store(str(tmp_path / "b.duckdb")) as b:
        ingest_paths(a, [grown], workers=1)
        with grown.open("ab") as f:
            f.write(data[cut:])
        ingest_paths(a, [grown], workers=1)
        ingest_paths(b, [whole], workers=1)
        got, want = snapshot(a), snapshot(b)
    for table in ("sessions", "llm_calls", "tool_calls", "session_events", "ingest_problems"):
        assert got[table] == want[table], table


# --- sniffing -----------------------------------------------------------------------------------------


def test_sniff_claims_any_version_by_the_marker_only():
    assert generic.sniff([{"tokaudit": 1, "type": "session"}])
    assert generic.sniff([{"tokaudit": 2}])  # so a newer file is reported as such, not as an unknown format
    assert not generic.sniff([{"tokaudit": True}])
    assert not generic.sniff([{"tokaudit": "1"}])
    assert not generic.sniff([{"type": "session", "session_id": "s"}])
    assert not generic.sniff([{"type": "x"}, {"tokaudit": 1}])  # the marker must be on the first event
    assert not generic.sniff([[{"tokaudit": 1}]]) and not generic.sniff([])


def test_sniff_prefix_for_a_first_line_over_the_window():
    huge = json.dumps(tool(result="x" * (SNIFF_BYTES * 2)), separators=(",", ":")).encode()
    assert head_objects(huge[:SNIFF_BYTES]) == []
    assert sniff_format(huge[:SNIFF_BYTES]) == "generic"
    assert not generic.sniff_prefix(b'{"type":"tool_call","tokaudit":1')


# --- the fixtures, end to end ----------------------------------------------------------------------------


def test_fixture_totals_by_hand(store):
    summary = ingest_paths(store, [FIXTURES / "generic"], workers=1)
    assert (summary.lines_read, summary.skipped_by_rule, len(summary.problems)) == (28, {"type:tool_def": 1}, 0)
    rows = store.duck.execute(
        """SELECT session_id, count(*), sum(input_tokens), sum(cache_read_tokens), sum(cache_write_5m_tokens), sum(cache_write_1h_tokens),
                  sum(output_tokens), sum(reasoning_tokens), count(*) FILTER (WHERE is_sidechain)
           FROM llm_calls_dedup GROUP BY 1 ORDER BY 1"""
    ).fetchall()
    # Main session: 9 calls. Uncached input: gpt-5 planner 9120 (inclusive, nothing cached) + sonnet 3+5+4+6+5+3+6
    # + haiku summariser 30418. Cache reads 14210+16082+17212+17614+12800+15440; 5m writes 1410+1872+1130+402+690+2640+118;
    # 1h writes 12800; output 1544+188+241+1302+96+214+2210+377+164; reasoning: only gpt-5 reports it (1216).
    # Researcher: r1 placeholder (0 output) replaced by its final record; inclusive input 5210-4864 and 6120-5120.
    assert rows == [
        ("generic:run-7f3a", 9, 39570, 93358, 8262, 12800, 6336, 1216, 1),
        ("generic:run-7f3a.r1", 2, 1346, 9984, 0, 0, 1000, 704, 0),
    ]
    tools = store.duck.execute(
        "SELECT count(*), count(*) FILTER (WHERE is_error), count(*) FILTER (WHERE mcp_server IS NOT NULL), sum(result_bytes) FROM tool_calls"
    ).fetchall()[0]
    assert tools[:3] == (7, 1, 2)
    events = store.duck.execute("SELECT kind, session_id FROM session_events ORDER BY kind").fetchall()
    assert events == [("compaction", "generic:run-7f3a"), ("task_complete", "generic:run-7f3a.r1")]
    parent = store.duck.execute("SELECT parent_session_id, agent, outcome FROM sessions WHERE session_id = 'generic:run-7f3a.r1'").fetchall()
    assert parent == [("generic:run-7f3a", "acme-agent", "success")]


def docs_example() -> list[bytes]:
    from tests.conftest import ROOT

    text = (ROOT / "docs" / "generic-format.md").read_text(encoding="utf-8")
    block = text.split("```jsonl\n", 1)[1].split("```", 1)[0]
    return block.encode().splitlines()


def test_the_documented_example_ingests_cleanly():
    r = generic.parse([Line(i, 0, d) for i, d in enumerate(docs_example(), start=1)], path=PATH, state=None)
    assert not r.problems and r.lines_ok == 8
    assert r.llm_calls["generic:run-7f3a:1"]["input_tokens"] == 9120 - 8192
    t = r.tool_calls["generic:run-7f3a:toolu_02"]
    assert (t["is_error"], t["duration_ms"], t["duration_method"]) == (True, 6416, "timestamps")
    assert r.sessions["generic:run-7f3a"]["outcome"] == "success"
