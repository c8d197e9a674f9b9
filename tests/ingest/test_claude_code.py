"""Claude Code parser: dedup, placeholders, synthetic lines, subagents, tool calls, bad lines."""

from __future__ import annotations

from tests.ingest.helpers import claude_assistant, claude_user_result, lines
from tokaudit.ingest import claude_code

PATH = "/logs/projects/-home-dev-app/s1.jsonl"


def parse(*objs, path=PATH):
    return claude_code.parse(lines(*objs), path=path, state=None)


def test_one_request_on_several_lines_counts_once_keeping_the_max():
    r = parse(
        claude_assistant(out=3, blocks=[{"type": "text", "text": "a"}]),
        claude_assistant(out=486, stop="tool_use", blocks=[{"type": "tool_use", "id": "toolu_1", "name": "Edit", "input": {"a": 1}}]),
        claude_assistant(out=3, blocks=[{"type": "text", "text": "b"}]),
    )
    assert list(r.llm_calls) == ["claude:msg_1:req_1"]
    call = r.llm_calls["claude:msg_1:req_1"]
    assert call["output_tokens"] == 486
    assert call["stop_reason"] == "tool_use"
    assert r.lines_ok == 3
    assert r.tool_calls["toolu_1"]["call_key"] == "claude:msg_1:req_1"


def test_content_blocks_of_a_response_without_request_id_count_once():
    r = parse(
        claude_assistant(req=None, out=40, version="1.0.30", blocks=[{"type": "text", "text": "a"}]),
        claude_assistant(req=None, out=40, version="1.0.30", blocks=[{"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {}}]),
        claude_assistant("msg_2", req=None, out=7, version="1.0.30"),
    )
    assert sorted(r.llm_calls) == ["claude:msg_1:", "claude:msg_2:"]
    assert r.llm_calls["claude:msg_1:"]["output_tokens"] == 40


def test_cache_ttl_split_and_missing_split():
    r = parse(
        claude_assistant("m1", "r1", cw=300, cache_creation=False),
        {**claude_assistant("m2", "r2", cw=0)},
    )
    m1 = r.llm_calls["claude:m1:r1"]
    assert (m1["cache_write_5m_tokens"], m1["cache_write_1h_tokens"], m1["cache_ttl_known"]) == (300, 0, False)
    obj = claude_assistant("m3", "r3", cw=700)
    obj["message"]["usage"]["cache_creation"] = {"ephemeral_5m_input_tokens": 200, "ephemeral_1h_input_tokens": 500}
    m3 = parse(obj).llm_calls["claude:m3:r3"]
    assert (m3["cache_write_5m_tokens"], m3["cache_write_1h_tokens"], m3["cache_ttl_known"]) == (200, 500, True)
    # A split short of the total (seen in lines relayed by API gateways): the total is what was billed.
    short = claude_assistant("m4", "r4", cw=10_000)
    short["message"]["usage"]["cache_creation"] = {"ephemeral_5m_input_tokens": 1_800, "ephemeral_1h_input_tokens": 5_000}
    m4 = parse(short).llm_calls["claude:m4:r4"]
    assert (m4["cache_write_5m_tokens"], m4["cache_write_1h_tokens"], m4["cache_ttl_known"]) == (5_000, 5_000, False)


def test_placeholder_output_is_a_lower_bound_only_before_2_1_97():
    old = parse(claude_assistant(version="2.1.14")).llm_calls["claude:msg_1:req_1"]
    new = parse(claude_assistant(version="2.1.97")).llm_calls["claude:msg_1:req_1"]
    finished = parse(claude_assistant(version="2.1.14", stop="end_turn")).llm_calls["claude:msg_1:req_1"]
    assert old["output_is_lower_bound"] is True
    assert new["output_is_lower_bound"] is False
    assert finished["output_is_lower_bound"] is False


def test_synthetic_lines_are_events_not_calls():
    synthetic = claude_assistant("m9", "r9", out=0, inp=0, cw=0, cr=0, model="<synthetic>", isApiErrorMessage=True,
                                 blocks=[{"type": "text", "text": "API Error: 529 overloaded"}])
    r = parse(synthetic)
    assert r.llm_calls == {}
    assert [e["kind"] for e in r.events.values()] == ["api_error"]


def test_tool_use_and_result_join_with_mcp_split_and_duration():
    use = claude_assistant(blocks=[{"type": "tool_use", "id": "toolu_9", "name": "mcp__plugin:docs__fetch_page", "input": {"url": "x", "page": 2}}])
    result = claude_user_result("toolu_9", [{"type": "text", "text": "héllo"}, {"type": "text", "text": "!"}], is_error=True)
    r = parse(use, result)
    tc = r.tool_calls["toolu_9"]
    assert (tc["mcp_server"], tc["mcp_tool"], tc["tool_kind"]) == ("plugin:docs", "fetch_page", "mcp")
    assert tc["result_bytes"] == len("héllo".encode()) + 1
    assert tc["is_error"] is True
    assert tc["duration_ms"] == 2500 and tc["duration_method"] == "timestamps"
    assert tc["args_skeleton"] == '{"url":"x","page":<n>}'


def test_subagent_file_is_its_own_session_under_the_parent():
    path = "/logs/projects/-home-dev-app/s1/subagents/agent-abc123.jsonl"
    r = parse(claude_assistant(session="s1", isSidechain=True, agentId="abc123"), path=path)
    (session,) = r.sessions.values()
    assert session["session_id"] == "claude-code:s1:agent-abc123"
    assert session["parent_session_id"] == "claude-code:s1"
    assert session["project"] == "-home-dev-app"
    assert r.llm_calls["claude:msg_1:req_1"]["is_sidechain"] is True


def test_bad_lines_are_problems_and_the_rest_is_used():
    bad_usage = claude_assistant("m2", "r2")
    bad_usage["message"]["usage"] = "lots"
    negative = claude_assistant("m3", "r3", out=-5)
    r = parse(claude_assistant(), b"{not json", b'{"type":"user","x":"\xff"}', bad_usage, negative, b"", claude_assistant("m4", "r4"))
    assert [(p.line_no, p.kind) for p in r.problems] == [(2, "invalid-json"), (3, "invalid-utf8"), (4, "wrong-type"), (5, "wrong-type")]
    assert set(r.llm_calls) == {"claude:msg_1:req_1", "claude:m4:r4"}
    assert r.lines_read == 7 and r.skipped["blank-line"] == 1


def test_ui_lines_are_skipped_by_rule_and_counted():
    r = parse({"type": "queue-operation", "sessionId": "s1"}, {"type": "file-history-snapshot", "snapshot": {}, "messageId": "x"}, claude_assistant())
    assert r.skipped == {"type:queue-operation": 1, "type:file-history-snapshot": 1}
    assert r.lines_ok == 1


def test_any_json_whitespace_is_accepted():
    import json

    spaced = json.dumps(claude_assistant()).encode()  # "usage": { with spaces, which ccusage ignores
    r = claude_code.parse(lines(spaced), path=PATH, state=None)
    assert r.llm_calls["claude:msg_1:req_1"]["cache_read_tokens"] == 1000


def test_older_subagent_files_next_to_sessions_and_leading_summaries():
    path = "/logs/projects/-home-dev-app/agent-7f3a.jsonl"
    summary = {"type": "summary", "summary": "Fixing the build", "leafUuid": "x"}
    r = parse(summary, claude_assistant(session="s1", isSidechain=True), path=path)
    assert list(r.sessions) == ["claude-code:s1:agent-7f3a"]
    assert r.lines_ok == 2


def test_reported_tool_duration_wins_over_timestamps():
    use = claude_assistant(blocks=[{"type": "tool_use", "id": "toolu_t", "name": "Task", "input": {"prompt": "x"}}])
    result = claude_user_result("toolu_t", "done")
    result["toolUseResult"] = {"status": "completed", "totalDurationMs": 41234, "usage": {"input_tokens": 9}}
    tc = parse(use, result).tool_calls["toolu_t"]
    assert (tc["duration_ms"], tc["duration_method"]) == (41234, "reported")


def test_a_usage_line_mentioning_snapshots_is_not_skipped():
    line = claude_assistant(cwd="/home/dev/file-history-snapshot-tool")
    r = parse(line)
    assert r.llm_calls and r.skipped == {}


def with_iterations(line, *steps):
    line["message"]["usage"]["iterations"] = list(steps)
    return line


STEP = {"type": "message", "input_tokens": 5, "output_tokens": 10, "cache_read_input_tokens": 1000, "cache_creation_input_tokens": 100}
COMPACTION = {"type": "compaction", "input_tokens": 180_000, "output_tokens": 3_500, "cache_read_input_tokens": 0, "cache_creation_input_tokens": 0}
ADVISOR = {"type": "advisor_message", "model": "claude-opus-4-6", "input_tokens": 823, "output_tokens": 531, "cache_read_input_tokens": 0,
           "cache_creation_input_tokens": 40, "cache_creation": {"ephemeral_5m_input_tokens": 0, "ephemeral_1h_input_tokens": 40}}


def test_steps_of_a_request_its_top_level_usage_leaves_out_are_requests_of_their_own():
    """Anthropic's ``usage.iterations``: a server-side compaction's summary and an advisor's sub-inference are
    billed, but the top-level usage counts only the request's own steps (``message``). Each becomes a row of its
    own (the advisor's under its model), kept with the line that carries the request; a step of an unknown type or
    shape is left out, and the request is not."""
    odd = {"type": "advisor_message", "input_tokens": "many"}
    r = parse(
        with_iterations(claude_assistant(out=3), STEP),  # a streaming placeholder: superseded
        with_iterations(claude_assistant(out=10, stop="end_turn"), STEP, COMPACTION, ADVISOR, {"type": "future_step", "input_tokens": 9}, odd),
    )
    assert sorted(r.llm_calls) == ["claude:msg_1:req_1", "claude:msg_1:req_1#1:compaction", "claude:msg_1:req_1#2:advisor_message"]
    main, compaction, advisor = (r.llm_calls[k] for k in sorted(r.llm_calls))
    assert (main["input_tokens"], main["output_tokens"], main["model"]) == (5, 10, "claude-sonnet-4-5-20250929")
    assert (compaction["input_tokens"], compaction["output_tokens"], compaction["model"]) == (180_000, 3_500, "claude-sonnet-4-5-20250929")
    assert (advisor["input_tokens"], advisor["output_tokens"], advisor["model"]) == (823, 531, "claude-opus-4-6")
    assert (advisor["cache_write_5m_tokens"], advisor["cache_write_1h_tokens"], advisor["cache_ttl_known"]) == (0, 40, True)
    assert advisor["message_id"] == main["message_id"] and advisor["line_no"] == main["line_no"] == 2
    assert r.problems == [] and r.lines_ok == 2


def test_a_subagent_written_into_the_main_transcript_is_a_subagent_session_and_a_side_question_is_not():
    """Claude Code 1.x-2.0.x wrote a Task's subagent into the parent's transcript as a chain of its own
    (``isSidechain``, rooted at the subagent's prompt). A /btw side question branches off the session's own chain."""
    task = claude_assistant("m1", "r1", version="1.0.98", uuid="u1", parentUuid="u0",
                            blocks=[{"type": "tool_use", "id": "toolu_task", "name": "Task", "input": {"prompt": "look"}}])
    prompt = {"type": "user", "sessionId": "s1", "timestamp": "2026-03-10T10:00:01.000Z", "uuid": "sc0", "parentUuid": None,
              "isSidechain": True, "message": {"role": "user", "content": "look for the bug"}}
    step1 = claude_assistant("m2", "r2", version="1.0.98", uuid="sc1", parentUuid="sc0", isSidechain=True,
                             blocks=[{"type": "tool_use", "id": "toolu_grep", "name": "Grep", "input": {"pattern": "bug"}}])
    found = {**claude_user_result("toolu_grep", "a.py:3: bug"), "uuid": "sc2", "parentUuid": "sc1", "isSidechain": True}
    step2 = claude_assistant("m3", "r3", version="1.0.98", uuid="sc3", parentUuid="sc2", isSidechain=True)
    done = {**claude_user_result("toolu_task", "found it"), "uuid": "u2", "parentUuid": "u1"}
    main2 = claude_assistant("m4", "r4", version="1.0.98", uuid="u3", parentUuid="u2")
    side = claude_assistant("m4", "r5", version="1.0.98", uuid="b1", parentUuid="u3", isSidechain=True)
    r = parse(task, prompt, step1, found, step2, done, main2, side)
    child = "claude-code:s1:agent-sc0"
    assert {c: r.llm_calls[c]["session_id"] for c in r.llm_calls} == {
        "claude:m1:r1": "claude-code:s1", "claude:m2:r2": child, "claude:m3:r3": child,
        "claude:m4:r4": "claude-code:s1", "claude:m4:r5": "claude-code:s1"}
    sessions = {s["session_id"]: s for s in r.sessions.values()}
    assert sessions[child]["parent_session_id"] == "claude-code:s1" and sessions["claude-code:s1"]["parent_session_id"] is None
    assert r.tool_calls["toolu_grep"]["session_id"] == child and r.tool_calls["toolu_grep"]["result_bytes"] == len("a.py:3: bug")
    assert r.tool_calls["toolu_task"]["session_id"] == "claude-code:s1"
