"""OpenHands evaluation output.jsonl: per-call token_usages, fallbacks, tool ids, outcome, resume, sniffing, samples."""

from __future__ import annotations

import json
from collections import Counter
from datetime import datetime
from decimal import Decimal

import pytest

from tests.ingest.helpers import lines
from tests.ingest.test_openhands import action, model_response, observation, usage
from tokaudit.ingest import openhands_eval
from tokaudit.ingest.base import Line

RUN_DIR = "evaluation/evaluation_outputs/outputs/swe-bench-lite/CodeActAgent/claude_maxiter_30_N_v0.38.0-run_1"
TOKENS = ("input_tokens", "cache_read_tokens", "cache_write_5m_tokens", "cache_write_1h_tokens", "output_tokens")


def token_usage(rid, prompt, completion, read=0, write=0, model="anthropic/claude-3-5-sonnet-20241022"):
    return {"model": model, "prompt_tokens": prompt, "completion_tokens": completion, "cache_read_tokens": read, "cache_write_tokens": write, "response_id": rid}


def instance(iid="repo__repo-1", usages=None, history=None, acc=None, error=None, test_result=None, **extra):
    usages = [token_usage("chatcmpl-1", 4646, 177, 3482, 1158)] if usages is None else usages
    if acc is None:
        acc = {k: sum(u[k] for u in usages) for k in ("prompt_tokens", "completion_tokens", "cache_read_tokens", "cache_write_tokens")}
    metrics = {"accumulated_cost": 0.0, "accumulated_token_usage": {"model": "default", **acc, "response_id": ""}, "costs": [],
               "response_latencies": [{"latency": 1.0, "response_id": u["response_id"]} for u in usages], "token_usages": usages}
    return {"instance_id": iid, "test_result": test_result or {"git_patch": ""}, "instruction": "fix it",
            "metadata": {"agent_class": "CodeActAgent", "eval_output_dir": RUN_DIR}, "history": history or [],
            "metrics": metrics, "error": error, "instance": {"repo": "acme/repo", "instance_id": iid}, **extra}


def parse(*objs, state=None):
    return openhands_eval.parse(lines(*objs), path="/e/output.jsonl", state=state)


def totals(result):
    return tuple(sum(c[col] for c in result.llm_calls.values()) for col in TOKENS)


# --- usage ----------------------------------------------------------------------------------------


def test_each_token_usage_is_one_call_with_inclusive_prompt():
    usages = [token_usage("chatcmpl-1", 4646, 177, 3482, 1158), token_usage("chatcmpl-2", 5000, 20, 4640, 300)]
    result = parse(instance(usages=usages))
    assert result.lines_ok == 1 and not result.problems
    one = result.llm_calls["openhands:chatcmpl-1"]
    assert (one["input_tokens"], one["cache_read_tokens"], one["cache_write_5m_tokens"], one["output_tokens"]) == (6, 3482, 1158, 177)
    assert one["model"] == "anthropic/claude-3-5-sonnet-20241022"  # no history: the configured name
    assert one["ts_utc"] is None and one["reasoning_tokens"] is None and one["cache_ttl_known"] is False
    assert one["session_id"] == "openhands-eval:claude_maxiter_30_N_v0.38.0-run_1/repo__repo-1"
    assert totals(result) == (66, 8122, 1458, 0, 197)


def test_history_supplies_model_time_stop_reason_and_tool_calls():
    r = model_response("chatcmpl-1", u=usage(reasoning=12), model="claude-3-5-sonnet-20241022")
    history = [action(3, r), observation(4, 3, r, content="listing")]
    result = parse(instance(history=history))
    (row,) = result.llm_calls.values()
    assert row["model"] == "claude-3-5-sonnet-20241022" and row["stop_reason"] == "tool_calls" and row["reasoning_tokens"] == 12
    assert row["ts_utc"] == datetime(2025, 1, 28, 6, 45, 10)
    tool = result.tool_calls["1:toolu_1"]
    assert tool["protocol_call_id"] == "toolu_1" and tool["call_key"] == "openhands:chatcmpl-1" and tool["result_bytes"] == len("listing")
    (session,) = result.sessions.values()
    assert (session["task_label"], session["project"]) == ("repo__repo-1", "acme/repo")


def test_tool_call_ids_repeated_across_instances_stay_apart():
    def one(iid, rid):
        r = model_response(rid, calls=(("toolu_01", "execute_bash", {"command": "ls"}),))
        return instance(iid, usages=[token_usage(rid, 100, 5)], history=[action(1, r), observation(2, 1, r)])

    result = parse(one("a-1", "r-a"), one("b-2", "r-b"))
    assert set(result.tool_calls) == {"1:toolu_01", "2:toolu_01"}


def test_duplicated_response_id_counts_once():
    usages = [token_usage("chatcmpl-1", 100, 5), token_usage("chatcmpl-1", 100, 9)]
    result = parse(instance(usages=usages, acc={"prompt_tokens": 100, "completion_tokens": 9, "cache_read_tokens": 0, "cache_write_tokens": 0}))
    assert list(result.llm_calls) == ["openhands:chatcmpl-1"] and totals(result)[-1] == 9


def test_usage_without_response_id_gets_a_stable_key():
    result = parse(instance(usages=[token_usage("", 100, 5), token_usage("", 100, 5)]))
    assert len(result.llm_calls) == 2  # two calls with equal counts at different positions
    assert result.llm_calls.keys() == parse(instance(usages=[token_usage("", 100, 5), token_usage("", 100, 5)])).llm_calls.keys()


def test_accumulated_beyond_token_usages_is_one_aggregate_row():
    result = parse(instance(acc={"prompt_tokens": 4646 + 900, "completion_tokens": 177 + 40, "cache_read_tokens": 3482, "cache_write_tokens": 1158}))
    extra = result.llm_calls["openhands:unattributed:openhands-eval:claude_maxiter_30_N_v0.38.0-run_1/repo__repo-1"]
    assert extra["is_aggregate"] and (extra["input_tokens"], extra["output_tokens"]) == (900, 40)
    assert totals(result) == (906, 3482, 1158, 0, 217)


def test_older_outputs_fall_back_to_the_history_then_to_the_accumulated_total():
    r = model_response("chatcmpl-9", u=usage(prompt=1000, cached=0, creation=0, completion=30))
    old = instance(history=[action(1, r), observation(2, 1, r)])
    del old["metrics"]["token_usages"], old["metrics"]["accumulated_token_usage"]
    assert list(parse(old).llm_calls) == ["openhands:chatcmpl-9"]

    bare = instance(usages=[], acc={"prompt_tokens": 5000, "completion_tokens": 70, "cache_read_tokens": 4000, "cache_write_tokens": 0})
    bare["metrics"]["accumulated_cost"] = 0.0123
    bare["metrics"]["response_latencies"] = [{"latency": 1.0, "response_id": "a"}, {"latency": 2.0, "response_id": "b"}]
    (row,) = parse(bare).llm_calls.values()
    assert row["is_aggregate"] and row["aggregate_calls"] == 2
    assert (row["input_tokens"], row["cache_read_tokens"], row["output_tokens"]) == (1000, 4000, 70)
    assert row["reported_cost_usd"] == Decimal("0.0123")


def test_zero_accumulated_cost_for_a_run_that_used_tokens_is_unknown_not_free():
    bare = instance(usages=[], acc={"prompt_tokens": 5000, "completion_tokens": 70, "cache_read_tokens": 0, "cache_write_tokens": 0})
    (row,) = parse(bare).llm_calls.values()
    assert row["reported_cost_usd"] is None


def test_per_call_rows_never_carry_the_instance_cost():
    item = instance()
    item["metrics"]["accumulated_cost"] = 0.5
    assert all(c["reported_cost_usd"] is None for c in parse(item).llm_calls.values())


# --- outcome ---------------------------------------------------------------------------------------

CAP = "RuntimeError: Agent reached maximum iteration in headless mode. Current iteration: 30, max iteration: 30"


@pytest.mark.parametrize(
    ("kwargs", "outcome"),
    [
        ({"test_result": {"git_patch": "x", "report": {"resolved": True}}, "error": CAP}, "success"),
        ({"test_result": {"git_patch": "x", "report": {"resolved": False}}, "error": CAP}, "capped"),
        ({"error": "RuntimeError: Agent got stuck in a loop"}, "error"),
        ({"test_result": {"git_patch": "", "report": {"resolved": False}}}, "error"),
        ({"report": {"resolved": True}}, "success"),
        ({"test_result": {"resolved": True}}, "success"),
        ({"history": [{"id": 1, "timestamp": "2025-01-01T00:00:00", "source": "agent", "message": "", "action": "finish", "args": {}}]}, "success"),
        ({}, "unknown"),
    ],
)
def test_outcome(kwargs, outcome):
    assert next(iter(parse(instance(**kwargs)).sessions.values()))["outcome"] == outcome


def test_session_without_run_directory():
    item = instance()
    item["metadata"] = None
    assert next(iter(parse(item).sessions)) == "openhands-eval:repo__repo-1"


# --- accounting -------------------------------------------------------------------------------------


def test_problems_and_skip_rules():
    good = json.dumps(instance(), separators=(",", ":")).encode()
    raw = [good, b"", b'{"instance_id": "x", "metrics": ', b'{"instance_id": "caf\xe9", "test_result": {}}',
           b'{"instance_id": "x", "test_result": {}, "metrics": "n/a"}', b'{"test_result": {}, "history": []}',
           json.dumps(instance(usages=[token_usage("r", -5, 1)])).encode()]
    result = openhands_eval.parse([Line(i, i * 100, d) for i, d in enumerate(raw, 1)], path="/e/output.jsonl", state=None)
    assert result.lines_ok == 1 and result.skipped == {"blank-line": 1}
    assert [(p.line_no, p.kind) for p in result.problems] == [(3, "invalid-json"), (4, "invalid-utf8"), (5, "wrong-type"), (6, "missing-field"), (7, "wrong-type")]
    assert result.lines_read == len(raw)


def test_bad_history_events_are_counted_in_a_session_event():
    r = model_response()
    item = instance(history=[action(1, r), {"id": "x"}, {"id": 3, "timestamp": 5}])
    result = parse(item)
    assert result.lines_ok == 1 and not result.problems
    (event,) = result.events.values()
    assert event["kind"] == "invalid_events" and event["detail"].startswith("2 of 3 history events could not be used")
    assert "1:toolu_1" in result.tool_calls


def test_resuming_after_some_lines_gives_the_same_rows():
    objs = [instance("a-1", usages=[token_usage("r1", 100, 5)]), instance("b-2", usages=[token_usage("r2", 200, 7)]), instance("c-3", usages=[token_usage("r3", 300, 9)])]
    whole = openhands_eval.parse(lines(*objs), path="/e/output.jsonl", state=None)
    first = openhands_eval.parse(lines(*objs)[:1], path="/e/output.jsonl", state=None)
    rest = openhands_eval.parse(lines(*objs)[1:], path="/e/output.jsonl", state=first.state)
    assert {**first.llm_calls, **rest.llm_calls} == whole.llm_calls
    assert {**first.sessions, **rest.sessions} == whole.sessions
    assert first.lines_ok + rest.lines_ok == whole.lines_ok == 3


def test_grown_file_is_read_from_where_it_stopped(tmp_path, store):
    from tokaudit.ingest.runner import ingest_paths

    path = tmp_path / "output.jsonl"
    path.write_text(json.dumps(instance("a-1", usages=[token_usage("r1", 100, 5)])) + "\n")
    ingest_paths(store, [path], workers=1)
    with open(path, "a") as f:
        f.write(json.dumps(instance("b-2", usages=[token_usage("r2", 200, 7)])) + "\n")
    summary = ingest_paths(store, [path], workers=1)
    assert summary.files_grown == 1 and summary.lines_read == 1
    assert store.duck.execute("SELECT count(*), sum(input_tokens) FROM llm_calls").fetchall() == [(2, 300)]


# --- sniffing -----------------------------------------------------------------------------------------


def test_sniff_and_sniff_prefix_claim_an_evaluation_line():
    item = instance()
    assert openhands_eval.sniff([item])
    assert openhands_eval.sniff_prefix(json.dumps(item).encode()[:4096])
    assert openhands_eval.sniff_prefix(b'{"instance_id": "a\\"b", "instruction": "x' + b"y" * 5000)


@pytest.mark.parametrize(
    "head",
    [[{"instance_id": "x"}], [{"instance_id": "x", "model_patch": "", "model_name_or_path": "m"}], [{"instance_id": 3, "test_result": {}, "history": []}], [[1]]],
)
def test_sniff_rejects_other_shapes(head):
    assert not openhands_eval.sniff(head)


@pytest.mark.parametrize(
    "first",
    [b'{"model_name_or_path": "m", "instance_id": "x", "model_patch": ""}', b'{"instance_id": "x", "model_patch": "diff"}', b'[{"instance_id": "x"', b'{"instance_id": 5, "test_result": {}}'],
)
def test_sniff_prefix_rejects_other_shapes(first):
    assert not openhands_eval.sniff_prefix(first)


# --- the real sample ----------------------------------------------------------------------------------


def test_sample_totals_equal_the_accumulated_usage_it_states(samples):
    path = samples / "openhands" / "evaluation_benchmarks_multi_swe_bench_examples_output.jsonl"
    data = path.read_bytes()
    assert openhands_eval.sniff_prefix(data[:4096])
    raw_lines = data.splitlines()
    result = openhands_eval.parse([Line(i, 0, d) for i, d in enumerate(raw_lines, 1)], path=str(path), state=None)
    assert result.lines_ok == 3 and not result.problems
    for i, raw in enumerate(raw_lines, 1):
        item = json.loads(raw)
        acc = item["metrics"]["accumulated_token_usage"]
        rows = [c for c in result.llm_calls.values() if c["line_no"] == i]
        assert len(rows) == len(item["metrics"]["token_usages"]) and not any(c["is_aggregate"] for c in rows)
        prompt = sum(c["input_tokens"] + c["cache_read_tokens"] + c["cache_write_5m_tokens"] for c in rows)
        assert prompt == acc["prompt_tokens"] and sum(c["output_tokens"] for c in rows) == acc["completion_tokens"]
        assert sum(c["cache_read_tokens"] for c in rows) == acc["cache_read_tokens"] == 0
    first = [c for c in result.llm_calls.values() if c["line_no"] == 1]
    assert sum(c["input_tokens"] for c in first) == 565_158  # the figure formats.md quotes
    assert all(c["reported_cost_usd"] is None for c in result.llm_calls.values())  # accumulated_cost 0.0: unpriced, not free
    outcomes = Counter(s["outcome"] for s in result.sessions.values())
    assert outcomes == {"success": 2, "capped": 1}  # the third instance hit max iterations
    assert len(result.tool_calls) == 105 and all(t["call_key"] in result.llm_calls for t in result.tool_calls.values())


def test_history_of_action_observation_pairs_is_read_in_order():
    r = model_response()
    pairs = [[action(1, r), observation(2, 1, r, content="done")]]
    result = parse(instance(history=pairs))
    assert not result.events and result.tool_calls["1:toolu_1"]["result_bytes"] == 4
