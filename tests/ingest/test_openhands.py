"""OpenHands trajectories: usage mapping, response dedup, tool-call join, clocks, outcome, sniffing, samples."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path

import pytest

from tests.conftest import snapshot
from tokaudit.ingest import openhands
from tokaudit.ingest.base import Line

CLAUDE = "claude-3-5-sonnet-20241022"
T0 = "2025-01-27T22:45:13.000000"  # local time of a machine at UTC-8 ...
CREATED = int(datetime(2025, 1, 28, 6, 45, 10, tzinfo=timezone.utc).timestamp())  # ... and the UTC epoch 3 s earlier


def usage(prompt=4646, completion=177, cached=3482, creation=1158, reasoning=None, details=True):
    u = {"completion_tokens": completion, "prompt_tokens": prompt, "total_tokens": prompt + completion,
         "completion_tokens_details": None if reasoning is None else {"reasoning_tokens": reasoning},
         "cache_creation_input_tokens": creation, "cache_read_input_tokens": cached}
    if details:
        u["prompt_tokens_details"] = {"audio_tokens": None, "cached_tokens": cached}
    return u


def model_response(rid="chatcmpl-1", calls=(("toolu_1", "execute_bash", {"command": "ls"}),), created=CREATED, u=None, model=CLAUDE):
    tool_calls = [{"index": i, "function": {"arguments": json.dumps(a), "name": n}, "id": c, "type": "function"} for i, (c, n, a) in enumerate(calls)]
    return {"id": rid, "created": created, "model": model, "object": "chat.completion",
            "choices": [{"finish_reason": "tool_calls", "index": 0, "message": {"content": "", "role": "assistant", "tool_calls": tool_calls}}],
            "usage": usage() if u is None else u}


def meta(resp, index=0):
    call = resp["choices"][0]["message"]["tool_calls"][index]
    return {"function_name": call["function"]["name"], "tool_call_id": call["id"], "model_response": resp,
            "total_calls_in_response": len(resp["choices"][0]["message"]["tool_calls"])}


def action(eid, resp, index=0, ts=T0, kind="run", **extra):
    return {"id": eid, "timestamp": ts, "source": "agent", "message": "", "action": kind, "tool_call_metadata": meta(resp, index), "args": {}, **extra}


def observation(eid, cause, resp=None, content="ok", ts="2025-01-27T22:45:14.500000", kind="run", **extra):
    ev = {"id": eid, "timestamp": ts, "source": "agent", "message": "", "cause": cause, "observation": kind, "content": content, "extras": extra.pop("extras", {})}
    if resp is not None:
        ev["tool_call_metadata"] = meta(resp)
    return {**ev, **extra}


def state(eid, agent_state, reason=None, ts="2025-01-27T22:45:20.000000"):
    extras = {"agent_state": agent_state} | ({"reason": reason} if reason else {})
    return {"id": eid, "timestamp": ts, "source": "environment", "message": "", "observation": "agent_state_changed", "content": "", "extras": extras}


def parse(events, path="/t/session-1.json", pretty=False):
    data = events if isinstance(events, bytes) else json.dumps(events, indent=2 if pretty else None).encode()
    return openhands.parse([Line(1, 0, data)], path=path, state=None)


# --- usage mapping and dedup ----------------------------------------------------------------------


def test_litellm_usage_is_inclusive_and_mapped_to_uncached_input():
    r = model_response(u=usage(prompt=4646, cached=3482, creation=1158, completion=177, reasoning=40))
    result = parse([action(3, r), observation(4, 3, r)])
    assert result.lines_ok == 1 and not result.problems
    (row,) = result.llm_calls.values()
    assert row["call_key"] == "openhands:chatcmpl-1"
    assert (row["input_tokens"], row["cache_read_tokens"], row["cache_write_5m_tokens"], row["cache_write_1h_tokens"]) == (6, 3482, 1158, 0)
    assert (row["output_tokens"], row["reasoning_tokens"]) == (177, 40)
    assert row["cache_ttl_known"] is False and row["usage_source"] == "reported" and row["is_aggregate"] is False
    assert row["model"] == CLAUDE and row["stop_reason"] == "tool_calls" and row["provider"] is None
    assert row["ts_utc"] == datetime(2025, 1, 28, 6, 45, 10)  # created, UTC
    assert row["reported_cost_usd"] is None


def test_cache_read_falls_back_to_cache_read_input_tokens_and_parts_are_clamped():
    r = model_response(u=usage(prompt=100, cached=80, creation=50, details=False))
    (row,) = parse([action(1, r)]).llm_calls.values()
    # 80 read, then only 20 of the 50 written fit in the prompt: input never goes negative
    assert (row["input_tokens"], row["cache_read_tokens"], row["cache_write_5m_tokens"]) == (0, 80, 20)
    assert row["reasoning_tokens"] is None


def test_one_response_shared_by_two_actions_and_repeated_on_observations_counts_once():
    r = model_response(calls=(("toolu_a", "str_replace_editor", {"command": "view", "path": "/w/a.py"}), ("toolu_b", "execute_bash", {"command": "ls"})))
    events = [action(2, r, 0, kind="read"), action(3, r, 1), observation(4, 2, r, kind="read"), observation(5, 3, r)]
    result = parse(events)
    assert list(result.llm_calls) == ["openhands:chatcmpl-1"]
    assert set(result.tool_calls) == {"toolu_a", "toolu_b"}
    assert {t["call_key"] for t in result.tool_calls.values()} == {"openhands:chatcmpl-1"}


def test_response_without_id_is_keyed_by_its_content_and_still_counted_once():
    r = model_response(rid="")
    result = parse([action(1, r), observation(2, 1, r)])
    (key,) = result.llm_calls
    assert key.startswith("openhands:") and len(key) == len("openhands:") + 32
    assert result.tool_calls["toolu_1"]["call_key"] == key


def test_response_without_usage_gives_a_tool_call_but_no_llm_row():
    r = model_response()
    del r["usage"]
    result = parse([action(1, r)])
    assert not result.llm_calls and "toolu_1" in result.tool_calls


def test_created_out_of_range_is_ignored_and_the_event_time_used():
    r = model_response(created=0)
    (row,) = parse([action(1, r, ts="2025-01-27T10:00:00")]).llm_calls.values()
    assert row["ts_utc"] == datetime(2025, 1, 27, 10, 0)  # no offset can be inferred: naive taken as UTC


# --- tool calls -----------------------------------------------------------------------------------


def test_tool_call_arguments_result_duration_and_tokens():
    r = model_response(calls=(("toolu_1", "execute_bash", {"command": "pytest -q"}),))
    result = parse([action(1, r), observation(2, 1, r, content="3 passed in 0.1s", extras={"metadata": {"exit_code": 0}}, success=True)])
    row = result.tool_calls["toolu_1"]
    args = json.dumps({"command": "pytest -q"}).encode()
    assert row["tool_name"] == "execute_bash" and row["tool_kind"] == "builtin" and row["protocol_call_id"] == "toolu_1"
    assert row["args_bytes"] == len(args) and row["args_skeleton"] == '{"command": "pytest -q"}'
    assert row["args_tokens"] > 0 and row["args_tokens_method"].startswith(("tokenizer:", "heuristic:"))
    assert row["result_bytes"] == len(b"3 passed in 0.1s") and row["result_content_types"] == "text"
    assert row["result_tokens"] > 0 and row["result_tokens_method"]
    assert row["is_error"] is False and row["result_truncated"] is False
    assert (row["duration_ms"], row["duration_method"]) == (1500, "timestamps")
    assert row["ts_utc"] == datetime(2025, 1, 28, 6, 45, 13)  # local 22:45:13 at UTC-8


@pytest.mark.parametrize(
    ("obs", "expected"),
    [
        ({"kind": "error", "content": "ERROR: no replacement"}, True),
        ({"success": False}, True),
        ({"extras": {"metadata": {"exit_code": 2}}}, True),
        ({"extras": {"exit_code": 1}}, True),  # before 0.2x
        ({"extras": {"metadata": {"exit_code": 0}}}, False),
        ({"kind": "read"}, False),
        # An MCP observation carries the server's CallToolResult as JSON: its isError flag, not its wording.
        ({"kind": "mcp", "content": '{"meta": null, "content": [{"type": "text", "text": "502 upstream"}], "isError": true}'}, True),
        ({"kind": "mcp", "content": '{"meta": null, "content": [{"type": "text", "text": "isError: true in a log line"}], "isError": false}'}, False),
        ({"kind": "mcp", "content": "plain text saying isError"}, False),
    ],
)
def test_error_flag(obs, expected):
    r = model_response()
    result = parse([action(1, r), observation(2, 1, r, **obs)])
    assert result.tool_calls["toolu_1"]["is_error"] is expected


def test_an_mcp_observations_features_are_read_from_the_servers_own_text():
    """An MCP observation is the server's CallToolResult as JSON, its text an escaped string: the excerpt reads that
    text (a status at its head, a cursor under its key), the size stays the observation's."""
    page = '{"status": 429, "quota": {"remaining": 0}, "lastKnown": {"events": []}}'
    content = json.dumps({"meta": None, "content": [{"type": "text", "text": page}], "isError": False})
    r = model_response()
    row = parse([action(1, r), observation(2, 1, r, kind="mcp", content=content)]).tool_calls["toolu_1"]
    assert row["result_excerpt"] == page and row["result_bytes"] == len(content.encode())


def test_truncated_observation_is_flagged():
    r = model_response()
    content = "line\n" * 10 + "[... Observation truncated due to length ...]\nend"
    assert parse([action(1, r), observation(2, 1, r, content=content)]).tool_calls["toolu_1"]["result_truncated"] is True


def test_reused_tool_call_id_keeps_both_calls():
    r1, r2 = model_response("c-1", (("call_0", "fetch", {"page": 1}),)), model_response("c-2", (("call_0", "fetch", {"page": 2}),))
    result = parse([action(1, r1), observation(2, 1, r1, content="p1"), action(3, r2), observation(4, 3, r2, content="page 2")])
    assert set(result.tool_calls) == {"call_0", "call_0#3"}
    assert result.tool_calls["call_0#3"]["result_bytes"] == len("page 2")
    assert result.tool_calls["call_0#3"]["protocol_call_id"] == "call_0"


def test_mcp_action_is_an_mcp_tool_call():
    r = model_response(calls=(("call_x", "list_issues", {"repo": "a/b"}),))
    row = parse([action(1, r, kind="call_tool_mcp")]).tool_calls["call_x"]
    assert (row["tool_kind"], row["mcp_tool"], row["mcp_server"]) == ("mcp", "list_issues", None)


def test_hostile_names_are_bounded():
    r = model_response(calls=(("id-" + "x" * 5000, "n" * 5000, {}),), model="m" * 5000)
    result = parse([action(1, r)])
    (row,) = result.tool_calls.values()
    assert len(row["tool_name"]) == openhands.MAX_NAME_CHARS and len(row["tool_call_id"]) == openhands.MAX_NAME_CHARS
    assert len(next(iter(result.llm_calls.values()))["model"]) == openhands.MAX_NAME_CHARS


# --- clocks ---------------------------------------------------------------------------------------


def test_local_clock_offset_is_inferred_from_created():
    r = model_response()
    result = parse([{"id": 0, "timestamp": "2025-01-27T22:44:00.000000", "source": "user", "message": "hi", "action": "message", "args": {}}, action(1, r)])
    (session,) = result.sessions.values()
    assert session["started_at_utc"] == datetime(2025, 1, 28, 6, 44)


def test_zone_aware_timestamps_are_converted_not_shifted():
    r = model_response()
    result = parse([action(1, r, ts="2025-01-28T07:45:13+01:00")])
    assert result.tool_calls["toolu_1"]["ts_utc"] == datetime(2025, 1, 28, 6, 45, 13)


# --- outcome, reconciliation --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("tail", "outcome"),
    [
        ([{"id": 9, "timestamp": T0, "source": "agent", "message": "", "action": "finish", "args": {}}, state(10, "finished")], "success"),
        ([state(10, "error", "RuntimeError: Agent reached maximum iteration in headless mode")], "capped"),
        ([{"id": 9, "timestamp": T0, "source": "environment", "message": "", "observation": "error", "content": "Agent reached maximum budget for conversation", "extras": {}}], "capped"),
        ([state(10, "error", "litellm.APIError: boom")], "error"),
        ([state(10, "awaiting_user_input")], "unknown"),
    ],
)
def test_outcome(tail, outcome):
    assert next(iter(parse([action(1, model_response())] + tail).sessions.values()))["outcome"] == outcome


def metrics(prompt, completion, read=0, write=0):
    return {"accumulated_cost": 0.0, "accumulated_token_usage": {"model": CLAUDE, "prompt_tokens": prompt, "completion_tokens": completion,
            "cache_read_tokens": read, "cache_write_tokens": write, "response_id": ""}, "costs": [], "response_latencies": [], "token_usages": []}


def test_cumulative_metrics_beyond_the_responses_become_one_aggregate_row():
    r1 = model_response("c-1", u=usage(prompt=1000, cached=0, creation=996, completion=50))
    # a plain reply (no tool call) used prompt 1200 (read 996, write 200) and 30 output: only the snapshot knows
    events = [action(1, r1, llm_metrics=metrics(1000, 50, 0, 996)),
              {"id": 2, "timestamp": T0, "source": "agent", "message": "done?", "action": "message", "args": {}, "llm_metrics": metrics(2200, 80, 996, 1196)}]
    result = parse(events)
    extra = result.llm_calls["openhands:unattributed:openhands:session-1"]
    assert extra["is_aggregate"] is True and extra["aggregate_calls"] is None
    assert (extra["input_tokens"], extra["cache_read_tokens"], extra["cache_write_5m_tokens"], extra["output_tokens"]) == (4, 996, 200, 30)
    total = sum(c["input_tokens"] + c["cache_read_tokens"] + c["cache_write_5m_tokens"] for c in result.llm_calls.values())
    assert total == 2200  # the snapshot is never summed: the stored total equals it


def test_no_remainder_when_the_snapshot_matches():
    r1 = model_response("c-1", u=usage(prompt=1000, cached=0, creation=996, completion=50))
    assert list(parse([action(1, r1, llm_metrics=metrics(1000, 50, 0, 996))]).llm_calls) == ["openhands:c-1"]


# --- accounting: problems and skip rules ----------------------------------------------------------


def test_document_problems_and_skip_rule():
    bad_utf8 = openhands.parse([Line(1, 0, b'[{"id": 0, "message": "caf\xe9"}]')], path="/t/a.json", state=None)
    assert [p.kind for p in bad_utf8.problems] == ["invalid-utf8"] and bad_utf8.lines_read == 1
    assert [p.kind for p in parse(b'[{"id": 0,').problems] == ["invalid-json"]
    shape = parse(b'{"trajectory": []}')
    assert [p.kind for p in shape.problems] == ["wrong-shape"] and shape.lines_problem == 1
    empty = parse(b"[]")
    assert empty.skipped == {"no-events": 1} and empty.lines_read == 1 and not empty.sessions


def test_malformed_events_are_passed_over_and_reported_once_for_the_file():
    r = model_response()
    events = [action(1, r), {"id": "two", "timestamp": T0, "source": "agent"}, {"id": 3, "timestamp": "yesterday"}, observation(4, 1, r)]
    result = parse(events)
    assert result.lines_ok == 1 and result.lines_read == 1
    (problem,) = result.problems
    assert (problem.line_no, problem.kind) == (0, "invalid-event")
    assert problem.message.startswith("2 of 4 events could not be used; first: event 1")
    assert result.tool_calls["toolu_1"]["result_bytes"] == 2  # the good events still count


def test_out_of_range_token_counts_are_rejected():
    r = model_response(u=usage(prompt=10**16))
    result = parse([action(1, r)])
    assert not result.llm_calls and result.problems[0].kind == "invalid-event"


# --- sniffing ---------------------------------------------------------------------------------------


def test_sniff_claims_a_compact_trajectory_and_sniff_prefix_a_pretty_one():
    events = [action(1, model_response())]
    assert openhands.sniff([events])
    pretty = json.dumps(events, indent=2).encode()
    assert openhands.sniff_prefix(pretty[:4096])
    assert openhands.sniff_prefix(b'[\n  {\n    "id": 0,\n    "sequence": 0,\n    "timestamp": "2024-10-01T10:00:00.1",\n    "source": "user"')


@pytest.mark.parametrize(
    "head",
    [[[1, 2]], [[]], [{"id": 1, "source": "agent", "timestamp": "x", "action": "run"}], [[{"id": 1, "source": "agent"}]], ["x"]],
)
def test_sniff_rejects_other_shapes(head):
    assert not openhands.sniff(head)


@pytest.mark.parametrize(
    "first",
    [b"[1, 2]", b'[{"id": "a", "timestamp": "2025-01-01T00:00:00", "source": "user"}]', b'{"trajectory": [{"action": "ls"',
     b'[{"timestamp": "2025-01-01T00:00:00", "id": 1, "source": "user"}]', b'{"instance_id": "x", "test_result": {}}'],
)
def test_sniff_prefix_rejects_other_shapes(first):
    assert not openhands.sniff_prefix(first)


# --- through the store: a changed document replaces its rows; an unchanged one is not read again -----


def test_reingest_is_a_noop_and_a_rewritten_trajectory_replaces_its_rows(tmp_path, store):
    from tokaudit.ingest.runner import ingest_paths

    path = tmp_path / "sess.json"
    r1 = model_response("c-1")
    path.write_text(json.dumps([action(1, r1)], indent=2))
    ingest_paths(store, [path], workers=1)
    before = snapshot(store)
    ingest_paths(store, [path], workers=1)
    assert snapshot(store) == before
    r2 = model_response("c-2", calls=(("toolu_2", "execute_bash", {"command": "ls"}),))
    path.write_text(json.dumps([action(1, r1), observation(2, 1, r1), action(3, r2)], indent=2))  # OpenHands rewrites the file
    ingest_paths(store, [path], workers=1)
    keys = sorted(k for (k,) in store.duck.execute("SELECT call_key FROM llm_calls").fetchall())
    assert keys == ["openhands:c-1", "openhands:c-2"]
    assert store.duck.execute("SELECT lines_read, lines_ok FROM sources").fetchall() == [(1, 1)]


# --- the real samples -----------------------------------------------------------------------------


def _sample_rows(samples: Path, name: str):
    path = samples / "openhands" / name
    return openhands.parse([Line(1, 0, path.read_bytes())], path=str(path), state=None)


def test_sample_trajectories_dedup_per_response(samples):
    basic = _sample_rows(samples, "tests_runtime_trajs_basic.json")
    # 2 responses, each repeated on its action and observation
    got = sorted((c["input_tokens"], c["cache_write_5m_tokens"], c["cache_read_tokens"], c["output_tokens"]) for c in basic.llm_calls.values())
    assert got == [(4, 3482, 0, 1135), (6, 1158, 3482, 177)]
    assert next(iter(basic.sessions.values()))["outcome"] == "success"
    gui = _sample_rows(samples, "tests_runtime_trajs_basic_gui_mode.json")
    assert len(gui.llm_calls) == 4 and len(gui.tool_calls) == 4
    assert sum(c["output_tokens"] for c in gui.llm_calls.values()) == 104 + 1142 + 693 + 85
    # The samples carry no llm_metrics, so there is no cumulative figure to reconcile with (and no remainder row).
    for name in ("tests_runtime_trajs_basic.json", "tests_runtime_trajs_basic_gui_mode.json"):
        assert b'"llm_metrics"' not in (samples / "openhands" / name).read_bytes()
    assert not any(c["is_aggregate"] for c in gui.llm_calls.values())


def test_sample_eval_histories_reconcile_with_their_cumulative_metrics(samples):
    """The trajectory walk over each evaluation history: Σ deduplicated responses == the last llm_metrics snapshot."""
    for raw in (samples / "openhands" / "evaluation_benchmarks_multi_swe_bench_examples_output.jsonl").read_bytes().splitlines():
        item = json.loads(raw)
        events, bad, _ = openhands.decode_events([json.dumps(e).encode() for e in item["history"]])
        walk = openhands.walk_events(events, session_id="s", line_no=1)
        assert bad == 0
        last = walk.accumulated
        prompt = sum(c["input_tokens"] + c["cache_read_tokens"] + c["cache_write_5m_tokens"] for c in walk.calls.values())
        assert (prompt, sum(c["output_tokens"] for c in walk.calls.values())) == (last.prompt_tokens, last.completion_tokens)
        assert openhands.remainder_row(last, walk.calls.values(), "s", 1, None) is None


def test_lone_surrogate_escapes_are_a_recorded_problem_not_a_crash(tmp_path, store):
    """``"\\ud800"`` is valid UTF-8 bytes but no text: msgspec rejects it, so no unencodable name reaches the store."""
    from tokaudit.ingest import openhands_eval
    from tokaudit.ingest.runner import ingest_paths

    r = model_response(calls=(("t-1", "bash\ud800", {"command": "ls"}),))
    path = tmp_path / "s.json"
    path.write_bytes(json.dumps([action(1, r)]).encode())
    summary = ingest_paths(store, [path], workers=1)
    assert summary.lines_problem == 1 and [p.kind for _, p in summary.problems] == ["invalid-json"]
    eval_line = json.dumps({"instance_id": "i-\ud800", "test_result": {}, "history": []}).encode()
    assert [p.kind for p in openhands_eval.parse([Line(1, 0, eval_line)], path="/o.jsonl", state=None).problems] == ["invalid-json"]
