"""SWE-agent .traj: the one aggregate row, tool calls from steps or history, outcome, retries, sniffing, samples."""

from __future__ import annotations

import json
from decimal import Decimal

import pytest

from tokaudit.ingest import swe_agent
from tokaudit.ingest.base import Line

PATH = "/runs/trajectories/me/gpt4__lite__default/astropy__astropy-1.traj"


def step(action, observation="out", response=None, **extra):
    return {"action": action, "observation": observation, "response": response or f"Run it.\n```\n{action}```", "thought": "Run it.",
            "state": '{"open_file": "n/a", "working_dir": "/repo"}\n', **extra}


def stats(sent=1000, received=50, calls=2, cost=0.0315, total=None):
    s = {"instance_cost": cost, "tokens_sent": sent, "tokens_received": received, "api_calls": calls}
    return s if total is None else {"total_cost": total, **s}


def traj(steps=(), history=None, exit_status="submitted", model_stats=None, **top):
    info = {"exit_status": exit_status, "submission": "diff", "model_stats": stats() if model_stats is None else model_stats}
    return {"environment": "swe_main", "trajectory": list(steps), "history": history or [], "info": info, **top}


def parse(doc, path=PATH, indent=2):
    data = doc if isinstance(doc, bytes) else json.dumps(doc, indent=indent).encode()
    return swe_agent.parse([Line(1, 0, data)], path=path, state=None)


# --- the aggregate row ----------------------------------------------------------------------------


def test_model_stats_become_one_aggregate_row():
    result = parse(traj([step("ls\n")], model_stats=stats(52861, 326, 5, 0.53839, total=17.2)))
    assert result.lines_ok == 1 and not result.problems
    (row,) = result.llm_calls.values()
    assert row["is_aggregate"] is True and row["aggregate_calls"] == 5
    assert (row["input_tokens"], row["output_tokens"]) == (52861, 326)
    assert (row["cache_read_tokens"], row["cache_write_5m_tokens"], row["cache_write_1h_tokens"]) == (0, 0, 0)
    assert row["cache_ttl_known"] is False and row["reasoning_tokens"] is None and row["usage_source"] == "reported"
    assert row["reported_cost_usd"] == Decimal("0.53839")  # instance_cost, never the batch's total_cost
    assert row["model"] is None and row["ts_utc"] is None and row["output_is_lower_bound"] is False
    assert row["call_key"].startswith("swe-agent:")
    (session,) = result.sessions.values()
    assert session["session_id"] == "swe-agent:gpt4__lite__default/astropy__astropy-1"
    assert (session["task_label"], session["outcome"], session["agent"]) == ("astropy__astropy-1", "success", "swe-agent")


def test_zero_cost_with_tokens_is_unknown_and_all_zero_stats_give_no_row():
    (row,) = parse(traj(model_stats=stats(cost=0))).llm_calls.values()
    assert row["reported_cost_usd"] is None
    assert not parse(traj([step("ls\n")], model_stats=stats(0, 0, 0, 0))).llm_calls


def test_replay_config_gives_model_instance_and_run():
    config = {"agent": {"model": {"name": "claude-sonnet-4-20250514"}}, "problem_statement": {"id": "django__django-1"},
              "output_dir": "trajectories/me/anthropic_filemap__run"}
    as_string = parse(traj(replay_config=json.dumps(config)), path="/x/django__django-1/django__django-1.traj")
    assert next(iter(as_string.llm_calls.values()))["model"] == "claude-sonnet-4-20250514"
    assert next(iter(as_string.sessions)) == "swe-agent:anthropic_filemap__run/django__django-1"
    retry = {"agent": {"agent_configs": [{"model": {"name": "gpt-4o"}}]}}
    assert next(iter(parse(traj(replay_config=retry)).llm_calls.values()))["model"] == "gpt-4o"
    # without a config: the instance folder and attempt folders are skipped to find the run's name
    nested = parse(traj(), path="/t/me/my-run/sympy__sympy-2/attempt_1/sympy__sympy-2.traj")
    assert next(iter(nested.sessions)) == "swe-agent:my-run/sympy__sympy-2"


def test_function_calling_runs_flag_output_as_a_lower_bound():
    history = [{"role": "assistant", "content": "", "action": "ls", "agent": "main", "message_type": "action",
                "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "bash", "arguments": '{"command": "ls"}'}}]}]
    (row,) = parse(traj([step("ls")], history=history)).llm_calls.values()
    assert row["output_is_lower_bound"] is True


def test_call_key_ignores_whitespace_and_paths_but_not_content():
    doc = traj([step("ls\n")])
    one = parse(doc, indent=2).llm_calls.keys()
    assert parse(doc, indent=None, path="/elsewhere/copy.traj").llm_calls.keys() == one
    assert parse(traj([step("ls -la\n")])).llm_calls.keys() != one


@pytest.mark.parametrize(
    ("status", "outcome"),
    [("submitted", "success"), ("submitted (exit_cost)", "capped"), ("submitted (exit_context)", "capped"), ("exit_cost", "capped"),
     ("exit_total_execution_time", "capped"), ("exit_format", "error"), ("exit_error", "error"), ("exit_api", "error"),
     ("exit_environment_error", "error"), ("exit_command_timeout", "error"), ("exit_forfeit", "error"), ("early_exit", "error"),
     ("submitted (exit_format)", "error"), (None, "unknown"), ("skipped", "unknown")],
)
def test_exit_status_outcome(status, outcome):
    assert swe_agent.outcome(status) == outcome
    assert next(iter(parse(traj(exit_status=status)).sessions.values()))["outcome"] == outcome


# --- tool calls -----------------------------------------------------------------------------------


def test_text_command_steps():
    steps = [step('find_file "a.py"\n', "Found 1 matches", execution_time=0.25), step("", ""), step("  \n", ""), step("submit\n", "diff --git")]
    result = parse(traj(steps))
    assert list(result.tool_calls) == ["00001-step", "00004-step"]  # steps without an action are unparsed replies
    first = result.tool_calls["00001-step"]
    assert (first["tool_name"], first["tool_kind"], first["protocol_call_id"]) == ("find_file", "builtin", None)
    assert first["args_bytes"] == len(b'find_file "a.py"\n') and first["args_skeleton"].startswith('"find_file \\"a.py')
    assert first["result_bytes"] == len(b"Found 1 matches") and first["result_tokens"] > 0 and first["result_content_types"] == "text"
    assert (first["duration_ms"], first["duration_method"]) == (250, "reported")
    assert first["is_error"] is None and first["ts_utc"] is None
    assert first["call_key"] == next(iter(result.llm_calls))
    assert result.tool_calls["00004-step"].get("duration_ms") is None


def test_function_calls_are_matched_to_steps_through_the_history():
    def msg(action, cid, name, args):
        return {"role": "assistant", "content": "", "thought": "", "action": action, "agent": "main", "message_type": "action",
                "tool_calls": [{"function": {"arguments": json.dumps(args), "name": name}, "id": cid, "type": "function"}]}

    history = [{"role": "system", "content": "sys", "agent": "main", "message_type": "system_prompt"},
               {**msg("submit", "demo", "submit", {}), "is_demo": True},
               msg("str_replace_editor view /r/a.py", "call_A", "str_replace_editor", {"command": "view", "path": "/r/a.py"}),
               msg("cd /r && ls", "call_B", "bash", {"command": "cd /r && ls"})]
    steps = [step("str_replace_editor view /r/a.py"), step("", "", response="garbled"), step("cd /r && ls"), step("submit")]
    result = parse(traj(steps, history=history))
    assert list(result.tool_calls) == ["00001-call_A", "00003-call_B", "00004-step"]
    a = result.tool_calls["00001-call_A"]
    assert a["tool_name"] == "str_replace_editor" and a["protocol_call_id"] == "call_A"
    assert a["args_bytes"] == len(json.dumps({"command": "view", "path": "/r/a.py"}))
    assert result.tool_calls["00003-call_B"]["tool_name"] == "bash"
    assert result.tool_calls["00004-step"]["tool_name"] == "submit"  # the demonstration's submit is never matched
    # No timestamps: the ids keep the step order wherever calls are sorted (call ids are random: call_B may sort first).
    reordered = parse(traj(steps, history=[history[0], msg("str_replace_editor view /r/a.py", "call_Z", "str_replace_editor", {}),
                                          msg("cd /r && ls", "call_A", "bash", {})]))
    assert sorted(reordered.tool_calls) == list(reordered.tool_calls) == ["00001-call_Z", "00003-call_A", "00004-step"]


def test_history_only_demonstration():
    history = [
        {"role": "system", "content": "SETTING", "agent": "main", "message_type": "system_prompt"},
        {"role": "assistant", "content": "find it", "action": "find_file a.py", "agent": "main", "message_type": "action",
         "tool_calls": json.dumps([{"function": {"arguments": '{"file_name":"a.py"}', "name": "find_file"}, "id": "call_1", "type": "function"}])},
        {"role": "tool", "content": [{"type": "text", "text": "Found 1"}, {"type": "image_url", "image_url": {"url": "data:"}}], "agent": "main",
         "message_type": "observation", "tool_call_ids": ["call_1"]},
        {"role": "assistant", "content": "run", "action": "python a.py", "agent": "main", "message_type": "action"},
        {"role": "user", "content": "8.2\nbash-$", "agent": "main", "message_type": "observation"},
    ]
    result = parse({"history": history})
    assert not result.llm_calls and result.lines_ok == 1
    found = result.tool_calls["00002-call_1"]
    assert (found["tool_name"], found["result_bytes"], found["result_content_types"]) == ("find_file", len("Found 1"), "image,text")
    text_cmd = result.tool_calls["00004-msg"]
    assert (text_cmd["tool_name"], text_cmd["result_bytes"]) == ("python", len("8.2\nbash-$"))
    assert next(iter(result.sessions.values()))["outcome"] == "unknown"


# --- RetryAgent files -----------------------------------------------------------------------------


def retry_doc():
    a0 = traj([step("ls\n")], exit_status="exit_cost", model_stats=stats(1000, 40, 3, 0.5))
    a1 = traj([step("cat a.py\n"), step("submit\n")], model_stats=stats(2000, 60, 4, 0.75))
    best = json.loads(json.dumps(a1))
    best["info"]["model_stats"] = stats(3500, 130, 9, 1.4)  # attempts + the reviewer's 500 / 30 / 2 / 0.15
    return {"attempts": [a0, a1], **best}, a0, a1


def test_retry_file_splits_attempts_and_reviewer_and_totals_match():
    doc, a0, a1 = retry_doc()
    result = parse(doc)
    rows = sorted(result.llm_calls.values(), key=lambda r: r["input_tokens"])
    assert [(r["input_tokens"], r["output_tokens"], r["aggregate_calls"]) for r in rows] == [(500, 30, 2), (1000, 40, 3), (2000, 60, 4)]
    assert sum(r["reported_cost_usd"] for r in rows) == Decimal("1.4")
    assert set(result.tool_calls) == {"a00:00001-step", "a01:00001-step", "a01:00002-step"}  # the top-level copy of the best attempt is not re-counted
    # Each attempt's row has the key its own attempt_<n>/<id>.traj file gets, so ingesting both counts it once.
    assert set(parse(a0).llm_calls) | set(parse(a1).llm_calls) < set(result.llm_calls)


def test_retry_attempt_files_are_deduplicated_by_the_store(tmp_path, store):
    from tokaudit.ingest.runner import ingest_paths

    doc, a0, a1 = retry_doc()
    run = tmp_path / "run" / "astropy__astropy-1"
    for rel, d in (("astropy__astropy-1.traj", doc), ("attempt_0/astropy__astropy-1.traj", a0), ("attempt_1/astropy__astropy-1.traj", a1)):
        (run / rel).parent.mkdir(parents=True, exist_ok=True)
        (run / rel).write_text(json.dumps(d, indent=2))
    ingest_paths(store, [tmp_path], workers=1)
    assert store.duck.execute("SELECT count(*) FROM llm_calls").fetchall() == [(5,)]
    assert store.duck.execute("SELECT count(*), sum(input_tokens), sum(aggregate_calls) FROM llm_calls_dedup").fetchall() == [(3, 3500, 9)]


# --- accounting ---------------------------------------------------------------------------------------


def test_document_problems_and_skip_rule():
    assert [p.kind for p in parse(b'{"trajectory": [').problems] == ["invalid-json"]
    assert [p.kind for p in parse(b'{"history": [{"content": "caf\xe9"}]}').problems] == ["invalid-utf8"]
    for shape in (b"[1, 2]", b'{"trajectory": "none"}'):
        result = parse(shape)
        assert [p.kind for p in result.problems] == ["wrong-shape"] and result.lines_problem == 1
    empty = parse({"environment": "swe_main"})
    assert empty.skipped == {"no-content": 1} and empty.lines_read == 1


def test_bad_parts_are_passed_over_and_reported_once_for_the_file():
    doc = traj([step("ls\n"), {"action": 5}, step("pwd\n")], model_stats={"tokens_sent": "many"})
    result = parse(doc)
    assert result.lines_ok == 1 and result.lines_read == 1 and not result.llm_calls
    (problem,) = result.problems
    assert (problem.line_no, problem.kind) == (0, "invalid-part")
    assert problem.message.startswith("2 parts of the trajectory could not be used; first: trajectory[1]")
    assert set(result.tool_calls) == {"00001-step", "00003-step"}


# --- sniffing -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "doc",
    [traj([step("ls")]), {"trajectory": [], "history": [], "info": {"exit_status": None}}, {"history": [{"role": "system", "content": "x", "agent": "main"}]}],
)
def test_sniff_claims_compact_trajectories(doc):
    assert swe_agent.sniff([doc])


@pytest.mark.parametrize(
    "first",
    [b'{\n  "environment": "swe_main",\n  "trajectory": [\n    {\n      "action": "ls',
     b'{\n  "trajectory": [\n    {\n      "action": "find_file',
     b'{\n  "trajectory": [],\n  "history": [',
     b'{\n  "attempts": [\n    {\n      "trajectory": [',
     b'{\n  "history": [\n    {\n      "role": "system",\n      "content": "SETTING'],
)
def test_sniff_prefix_claims_pretty_trajectories(first):
    assert swe_agent.sniff_prefix(first)


@pytest.mark.parametrize(
    "head",
    [[{"trajectory": [1]}], [{"history": [{"role": "user", "content": "x"}]}], [{"messages": [], "info": {"exit_status": "x"}}],
     [{"info": {"model_stats": {}}, "trajectory_format": "mini-swe-agent-1"}], [[{"action": "ls", "observation": "x"}]]],
)
def test_sniff_rejects_other_shapes(head):
    assert not swe_agent.sniff(head)


@pytest.mark.parametrize(
    "first",
    [b'{"history": [{"role": "user", "content": "x"}]}', b'{"trajectory": [{"step": 1}]}', b'{"info": {"model_stats": {}}, "messages": [',
     b'[{"action": "ls"}]', b'{"messages": [{"role": "system", "content": "x"}]}'],
)
def test_sniff_prefix_rejects_other_shapes(first):
    assert not swe_agent.sniff_prefix(first)


# --- the real samples -----------------------------------------------------------------------------


def test_samples_store_exactly_their_model_stats(samples):
    files = sorted((samples / "swe-agent").glob("*.traj"))
    assert len(files) == 3
    for path in files:
        data = path.read_bytes()
        assert swe_agent.sniff_prefix(data.lstrip()[:4096]), path.name
        result = swe_agent.parse([Line(1, 0, data)], path=str(path), state=None)
        assert result.lines_ok == 1 and not result.problems, path.name
        info = json.loads(data).get("info")
        if info is None:  # the demonstration: history only, no usage
            assert not result.llm_calls and len(result.tool_calls) == 5
            continue
        ms = info["model_stats"]
        rows = list(result.llm_calls.values())
        if ms["api_calls"] == 0 and ms["tokens_sent"] == 0:  # a replayed demo: no model was called
            assert not rows
        else:
            (row,) = rows
            assert (row["input_tokens"], row["output_tokens"], row["aggregate_calls"]) == (ms["tokens_sent"], ms["tokens_received"], ms["api_calls"])
            assert row["reported_cost_usd"] == Decimal(str(ms["instance_cost"]))
        assert len(result.tool_calls) == len(json.loads(data)["trajectory"])
        assert next(iter(result.sessions.values()))["outcome"] == "success"  # both say "submitted"


def test_reingest_is_a_noop_and_a_rewritten_trajectory_replaces_its_rows(tmp_path, store):
    from tests.conftest import snapshot
    from tokaudit.ingest.runner import ingest_paths

    path = tmp_path / "run" / "astropy__astropy-1.traj"
    path.parent.mkdir()
    path.write_text(json.dumps(traj([step("ls\n")], exit_status=None, model_stats=stats(100, 5, 1)), indent=2))
    ingest_paths(store, [tmp_path], workers=1)
    before = snapshot(store)
    ingest_paths(store, [tmp_path], workers=1)
    assert snapshot(store) == before
    # SWE-agent rewrites the file after every step
    path.write_text(json.dumps(traj([step("ls\n"), step("submit\n")], model_stats=stats(250, 11, 2)), indent=2))
    ingest_paths(store, [tmp_path], workers=1)
    assert store.duck.execute("SELECT input_tokens, aggregate_calls FROM llm_calls").fetchall() == [(250, 2)]
    assert store.duck.execute("SELECT outcome FROM sessions").fetchall() == [("success",)]
    assert store.duck.execute("SELECT count(*) FROM tool_calls").fetchall() == [(2,)]


def test_odd_values_cost_only_themselves():
    doc = traj([step("ls\n", execution_time=-3), step("pwd\n", execution_time="fast"), step("id\n", execution_time=True)], exit_status=7)
    doc["info"]["swe_agent_version"] = 1.1
    result = parse(doc)
    assert not result.problems and len(result.llm_calls) == 1
    assert all(t.get("duration_ms") is None for t in result.tool_calls.values()) and len(result.tool_calls) == 3
    session = next(iter(result.sessions.values()))
    assert (session["outcome"], session["agent_version"]) == ("unknown", None)
