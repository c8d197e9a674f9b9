"""Codex parser: re-emitted totals, resets, fork replay bursts, tool calls, compactions."""

from __future__ import annotations

import json

from tests.ingest.helpers import codex_line, codex_tokens, lines
from tokaudit.ingest import codex

PATH = "/x/sessions/2026/03/10/rollout-a.jsonl"


def meta(session="sess-1", source="cli", forked_from=None, ts="2026-03-10T10:00:00.000Z"):
    payload = {"id": session, "cwd": "/w", "cli_version": "0.104.0", "model_provider": "openai", "source": source}
    if forked_from:
        payload["forked_from_id"] = forked_from
    return codex_line("session_meta", payload, ts)


def model(name="gpt-5.3-codex", ts="2026-03-10T10:00:00.500Z"):
    return codex_line("turn_context", {"model": name}, ts)


def parse(*objs, state=None):
    return codex.parse(lines(*objs), path=PATH, state=state)


def test_rows_are_differences_of_advancing_totals_and_reemits_are_skipped():
    r = parse(
        meta(), model(),
        codex_tokens((1000, 200, 50, 10), ts="2026-03-10T10:00:01.000Z"),
        codex_tokens((1000, 200, 50, 10), ts="2026-03-10T10:00:01.100Z"),  # re-emit
        codex_tokens((2500, 1200, 80, 10), (1500, 1000, 30, 0), ts="2026-03-10T10:00:05.000Z"),
        codex_line("event_msg", {"type": "token_count", "info": None}),
    )
    calls = sorted(r.llm_calls.values(), key=lambda c: c["line_no"])
    assert [(c["input_tokens"], c["cache_read_tokens"], c["output_tokens"], c["reasoning_tokens"]) for c in calls] == [
        (800, 200, 50, 10),
        (500, 1000, 30, 0),
    ]
    assert r.skipped == {"token-count-repeat": 1, "token-count-no-info": 1}
    assert all(c["model"] == "gpt-5.3-codex" for c in calls)
    # the file's sum equals the final running total
    assert sum(c["input_tokens"] + c["cache_read_tokens"] for c in calls) == 2500


def test_state_resumes_a_grown_file_without_recounting():
    first = parse(meta(), model(), codex_tokens((1000, 0, 50, 0), ts="2026-03-10T10:00:01.000Z"))
    more = codex.parse(lines(codex_tokens((1600, 0, 70, 0), ts="2026-03-10T10:00:09.000Z")), path=PATH, state=first.state)
    (call,) = more.llm_calls.values()
    assert (call["input_tokens"], call["output_tokens"], call["model"]) == (600, 20, "gpt-5.3-codex")


def test_counter_reset_uses_the_events_own_last_usage():
    r = parse(meta(), model(), codex_tokens((5000, 0, 100, 0), ts="2026-03-10T10:00:01.000Z"),
              codex_tokens((300, 0, 20, 0), (300, 0, 20, 0), ts="2026-03-10T10:00:09.000Z"))
    second = max(r.llm_calls.values(), key=lambda c: c["line_no"])
    assert (second["input_tokens"], second["output_tokens"]) == (300, 20)


def fork(*replayed):
    """A subagent rollout's head: the child's and the parent's session_meta, then ``replayed`` lines
    (``codex_line`` arguments without the time), all stamped with the fork's one second."""
    spawn = {"subagent": {"thread_spawn": {"parent_thread_id": "parent-1"}}}
    burst = "2026-03-10T11:00:00.{:03d}Z"
    head = [meta("child-1", spawn, ts=burst.format(0)), meta("parent-1", ts=burst.format(1))]
    return head + [codex_line(*line, burst.format(i + 2)) for i, line in enumerate(replayed)]


def replayed_tokens(totals):
    line = codex_tokens(totals)
    return line["type"], line["payload"]


def test_fork_replay_burst_is_skipped_but_moves_the_baseline():
    r = parse(
        *fork(("turn_context", {"model": "gpt-5-codex"}), replayed_tokens((4000, 0, 100, 0)), replayed_tokens((9000, 0, 300, 0))),
        model(ts="2026-03-10T11:00:05.000Z"),
        codex_tokens((9700, 0, 350, 0), ts="2026-03-10T11:00:06.000Z"),
    )
    (call,) = r.llm_calls.values()
    assert (call["input_tokens"], call["output_tokens"]) == (700, 50)
    assert r.skipped["fork-replay"] == 3 and r.skipped["fork-parent-meta"] == 1
    (session,) = r.sessions.values()
    assert session["parent_session_id"] == "codex:parent-1"


def test_a_fork_that_sets_no_model_of_its_own_goes_on_with_the_replayed_one():
    r = parse(
        *fork(("turn_context", {"model": "gpt-5-codex"}), replayed_tokens((4000, 0, 100, 0))),
        codex_tokens((9700, 0, 350, 0), ts="2026-03-10T11:00:06.000Z"),
    )
    (call,) = r.llm_calls.values()
    assert (call["input_tokens"], call["model"]) == (5700, "gpt-5-codex")
    assert r.skipped["fork-replay"] == 2


def test_tool_calls_outputs_and_the_request_that_asked_for_them():
    r = parse(
        meta(), model(),
        codex_line("response_item", {"type": "function_call", "name": "mcp__linear__list_issues", "arguments": '{"limit": 50}', "call_id": "call_1"}),
        codex_line("response_item", {"type": "function_call_output", "call_id": "call_1", "output": '{"content":[{"type":"text","text":"boom"}],"isError":true}'}),
        codex_line("response_item", {"type": "custom_tool_call", "name": "apply_patch", "input": "*** Begin Patch", "call_id": "call_2"}),
        codex_tokens((1000, 0, 50, 0), ts="2026-03-10T10:00:03.000Z"),
        codex_line("compacted", {"message": ""}),
    )
    (key,) = r.llm_calls
    t1, t2 = r.tool_calls["call_1"], r.tool_calls["call_2"]
    assert (t1["mcp_server"], t1["mcp_tool"], t1["is_error"], t1["call_key"]) == ("linear", "list_issues", True, key)
    assert t1["args_bytes"] == len('{"limit": 50}')
    assert (t2["tool_kind"], t2["call_key"]) == ("custom", key)
    assert [e["kind"] for e in r.events.values()] == ["compaction"]


def test_an_mcp_output_written_as_the_servers_whole_answer_carries_its_error_flag():
    """Codex versions that write an MCP call's output as the ``CallToolResult`` JSON keep ``isError``; an output of
    text only (later versions) says nothing, and neither does a tool's own JSON that only looks alike."""
    answer = {"content": [{"type": "text", "text": "upstream 503 (warming)"}], "isError": True}
    outputs = [json.dumps(answer), json.dumps(dict(answer, isError=False)), "upstream 503 (warming)", '{"isError": true, "content": "x"}']
    lines = [meta(), model()]
    for i, output in enumerate(outputs):
        lines.append(codex_line("response_item", {"type": "function_call", "name": "mcp__flags__get_flags", "arguments": "{}", "call_id": f"c{i}"}))
        lines.append(codex_line("response_item", {"type": "function_call_output", "call_id": f"c{i}", "output": output}))
    r = parse(*lines)
    assert [r.tool_calls[f"c{i}"].get("is_error") for i in range(4)] == [True, False, None, None]


def test_a_results_features_are_read_from_the_answers_own_text_inside_the_json_codex_wrote():
    """An MCP answer written as the ``CallToolResult`` JSON carries the server's text as an escaped string, and a shell
    output as JSON carries the command's output the same way: the excerpt, signature and next-page pointer are read
    from that text (its own quotes), while the size and hash stay the whole output's, which the model read."""
    rows = ",".join(f'{{"id":"F{k:05d}","value":{k * 7 % 101}}}' for k in range(400))
    page = f'{{"rows":[{rows}],"page":{{"resume":"eyJzZWciOjMsIm9mZiI6MTIwfQ=="}}}}'
    answer = json.dumps({"content": [{"type": "text", "text": page}], "isError": False})
    shell = json.dumps({"output": 'line "one"\nline two\n', "metadata": {"exit_code": 0, "duration_seconds": 0.5}})
    r = parse(meta(), model(), call("c1", "mcp__archive__search_frames"), output("c1", answer), call("c2", "shell"), output("c2", shell))
    mcp, sh = r.tool_calls["c1"], r.tool_calls["c2"]
    assert mcp["result_excerpt"].startswith('{"rows":[{"id":"F00000"') and "eyJzZWciOjMsIm9mZiI6MTIwfQ==" in mcp["result_excerpt"]
    assert mcp["result_bytes"] == len(answer.encode()) and mcp["is_error"] is False
    assert sh["result_excerpt"] == 'line "one"\nline two\n' and sh["result_bytes"] == len(shell.encode()) and sh["duration_ms"] == 500


def call(call_id, name, ts="2026-03-10T10:00:01.000Z", arguments="{}"):
    return codex_line("response_item", {"type": "function_call", "name": name, "arguments": arguments, "call_id": call_id}, ts)


def output(call_id, text, ts="2026-03-10T10:00:02.000Z"):
    return codex_line("response_item", {"type": "function_call_output", "call_id": call_id, "output": text}, ts)


def end(kind, call_id, ts="2026-03-10T10:00:02.000Z", **fields):
    return codex_line("event_msg", {"type": kind, "call_id": call_id, **fields}, ts)


def test_the_events_ending_a_tools_run_carry_what_its_output_lost():
    """Codex writes ``*_end`` events when it persists its extended events (shapes of real rollouts): an MCP
    answer's error flag, a request that failed (``Err``), a shell's exit code, a patch's success, and the run's
    time. The output's text alone says nothing of them."""
    mcp = {"server": "flags", "tool": "get_flags", "arguments": {}}
    r = parse(
        meta(), model(),
        call("m1", "mcp__flags__get_flags"),
        end("mcp_tool_call_end", "m1", invocation=mcp, duration={"secs": 1, "nanos": 250_000_000},
            result={"Ok": {"content": [{"type": "text", "text": "upstream 503"}], "isError": True}}),
        output("m1", '[{"type":"text","text":"upstream 503"}]'),
        call("m2", "mcp__flags__get_flags"),
        end("mcp_tool_call_end", "m2", invocation=mcp, duration={"secs": 0, "nanos": 1}, result={"Err": "timed out awaiting tools/call"}),
        output("m2", "err: timed out awaiting tools/call"),
        call("m3", "mcp__flags__get_flags"),
        end("mcp_tool_call_end", "m3", invocation=mcp, result={"Ok": {"content": [], "is_error": None}}),
        call("s1", "shell"),
        end("exec_command_end", "s1", exit_code=2, duration={"secs": 0, "nanos": 40_000_000}, stdout="", stderr="nope"),
        call("p1", "apply_patch"),
        end("patch_apply_end", "p1", success=False, stdout="", stderr="patch failed"),
        # The call's own line is missing (a cut log): the end event still names it.
        end("mcp_tool_call_end", "m9", invocation={"server": "docs", "tool": "search"}, result={"Ok": {"content": []}}),
        # No call id, or an outcome of an unknown shape: nothing to add, and no problem.
        end("mcp_tool_call_end", None, result={"Err": "x"}),
        end("exec_command_end", "s2", exit_code="2"),
    )
    got = {k: (v.get("is_error"), v.get("duration_ms"), v.get("duration_method")) for k, v in r.tool_calls.items()}
    assert got == {
        "m1": (True, 1250, "reported"),
        "m2": (True, 0, "reported"),
        "m3": (False, None, None),
        "s1": (True, 40, "reported"),
        "p1": (True, None, None),
        "m9": (False, None, None),
    }
    assert (r.tool_calls["m9"]["tool_name"], r.tool_calls["m9"]["mcp_server"]) == ("mcp__docs__search", "docs")
    assert r.problems == [] and r.lines_ok == r.lines_read


def test_a_reported_time_beats_the_one_between_log_lines_whichever_comes_first():
    early = parse(meta(), model(), call("s1", "shell"), output("s1", "ok", ts="2026-03-10T10:00:09.000Z"),
                  end("exec_command_end", "s1", ts="2026-03-10T10:00:09.000Z", exit_code=0, duration={"secs": 2, "nanos": 0}))
    late = parse(meta(), model(), call("s1", "shell"), end("exec_command_end", "s1", exit_code=0, duration={"secs": 2, "nanos": 0}),
                 output("s1", "ok", ts="2026-03-10T10:00:09.000Z"))
    for r in (early, late):
        assert (r.tool_calls["s1"]["duration_ms"], r.tool_calls["s1"]["duration_method"], r.tool_calls["s1"]["is_error"]) == (2000, "reported", False)


def test_the_header_codex_puts_above_a_shells_output_gives_its_exit_code_and_wall_time():
    outputs = {
        "a": "Exit code: 1\nWall time: 0.4 seconds\nOutput:\nTraceback (most recent call last):",
        "b": "Chunk ID: 9f1c\nWall time: 0.0512 seconds\nProcess exited with code 0\nOriginal token count: 1\nOutput:\nok",
        "c": "Exit code: 0\nWall time: 3 seconds\nTotal output lines: 900\nOutput:\nlots",
        "d": "Chunk ID: 9f1d\nWall time: 5.0 seconds\nProcess running with session ID 12\nOriginal token count: 0\nOutput:\n",
        "e": "Exit code: 1 is what the docs say\nOutput:\n",  # not Codex's header line
        "f": "make: *** [all] Error 2\nExit code: 2\n",  # a command's own text, no header
        "g": '{"output":"boom","metadata":{"exit_code":0,"duration_seconds":1.5}}',
    }
    objs = [meta(), model()]
    for key, text in outputs.items():
        objs += [call(key, "shell"), output(key, text, ts="2026-03-10T10:00:01.000Z")]
    # The same header in an MCP server's answer is the server's own text: not read.
    objs += [call("m", "mcp__runner__run"), output("m", outputs["a"], ts="2026-03-10T10:00:01.000Z")]
    r = parse(*objs)
    got = {k: (v.get("is_error"), v.get("duration_ms"), v.get("duration_method")) for k, v in r.tool_calls.items()}
    assert got == {
        "a": (True, 400, "reported"),
        "b": (False, 51, "reported"),
        "c": (False, 3000, "reported"),
        "d": (None, 5000, "reported"),
        "e": (None, 0, "timestamps"),
        "f": (None, 0, "timestamps"),
        "g": (False, 1500, "reported"),
        "m": (None, 0, "timestamps"),
    }


def test_wrong_types_are_problems():
    r = parse(meta(), codex_line("event_msg", {"type": "token_count", "info": "n/a"}), b'{"timestamp":"2026-03-10T10:00:0', model())
    assert [(p.line_no, p.kind) for p in r.problems] == [(2, "wrong-type"), (3, "invalid-json")]
    assert r.lines_read == 4


def test_builds_with_only_last_token_usage_and_info_model():
    last_only = codex_line("event_msg", {"type": "token_count", "info": {"last_token_usage": {
        "input_tokens": 900, "cached_input_tokens": 100, "output_tokens": 40, "reasoning_output_tokens": 5, "total_tokens": 940},
        "model": "gpt-5-codex"}}, "2026-03-10T10:00:07.000Z")
    r = parse(meta(), last_only)
    (call,) = r.llm_calls.values()
    assert (call["input_tokens"], call["cache_read_tokens"], call["output_tokens"], call["model"]) == (800, 100, 40, "gpt-5-codex")


def test_local_shell_and_web_search_items_are_tool_calls():
    r = parse(
        meta(), model(),
        codex_line("response_item", {"type": "local_shell_call", "call_id": "ls_1", "status": "completed",
                                     "action": {"type": "exec", "command": ["bash", "-lc", "ls"]}}),
        codex_line("response_item", {"type": "function_call_output", "call_id": "ls_1", "output": "a.txt\n"}),
        codex_line("response_item", {"type": "web_search_call", "id": "ws_1", "status": "completed", "action": {"type": "search", "query": "q"}}),
    )
    shell, search = r.tool_calls["ls_1"], r.tool_calls["ws_1"]
    assert (shell["tool_name"], shell["result_bytes"]) == ("local_shell", 6)
    assert shell["args_bytes"] > 0
    assert (search["tool_name"], search["tool_kind"]) == ("web_search", "web_search")


def test_pre_envelope_rollouts_give_sessions_and_tool_calls_but_no_usage():
    from tokaudit.ingest import sniff_format

    header = {"id": "legacy-1", "timestamp": "2025-07-01T10:00:00.000Z", "instructions": None}
    items = [
        {"record_type": "state"},
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]},
        {"type": "function_call", "name": "shell", "arguments": '{"command":["ls"]}', "call_id": "c1"},
        {"type": "function_call_output", "call_id": "c1", "output": '{"output":"a\\n","metadata":{"exit_code":0}}'},
    ]
    import json

    head = b"\n".join(json.dumps(o).encode() for o in [header, *items])
    assert sniff_format(head) == "codex"
    r = parse(header, *items)
    assert list(r.sessions) == ["codex:legacy-1"]
    assert r.llm_calls == {}
    call = r.tool_calls["c1"]
    assert (call["tool_name"], call["is_error"], call["ts_utc"]) == ("shell", False, None)
    assert r.skipped == {"legacy-state-record": 1, "type:message": 1}
    assert r.lines_read == 5 and not r.problems


def test_sniffing_a_line_whose_type_is_an_object_does_not_crash():
    assert codex.sniff([{"type": {"x": 1}, "payload": {}, "timestamp": "2026-01-01T00:00:00Z"}]) is False
