"""The trajectory simulator: determinism, ingestability, accounting, and the structure of every family."""

from __future__ import annotations

import json
import re
from collections import Counter, defaultdict
from pathlib import Path

import msgspec
import pytest

from tokaudit.ingest.skeleton import args_skeleton
from tokaudit.simulate import FAMILIES, generate_session, lexicon_hits, simulate
from tokaudit.simulate.__main__ import main as cli_main
from tokaudit.simulate.catalog import BY_SERVER
from tokaudit.simulate.families import counter_value
from tokaudit.simulate.model import Compaction, McpCall, McpListing, Prompt, Request, ToolResult
from tokaudit.simulate.templates import COUNTER, COVERAGE, CURSOR, CYCLE, DECOY, SPONGE, SURFACE
from tokaudit.simulate.text import tokens_of
from tokaudit.simulate.writers import claude_lines, mcp_lines, write_session

ATTACKS = [name for name, f in FAMILIES.items() if f.kind == "attack"]
BENIGN = [name for name, f in FAMILIES.items() if f.kind == "benign"]
MODELS = {"claude-sonnet-4-5-20250929", "claude-opus-4-5-20251101", "claude-haiku-4-5-20251001"}
SEED = 20260301


def sessions_of(family: str, n: int, seed: int = SEED):
    return [generate_session(seed, i, families=[family]) for i in range(n)]


def all_lines(gen) -> list[bytes]:
    lines = claude_lines(gen.sim, gen.slug)
    for run in gen.sim.subagents:
        lines += claude_lines(run.sim, gen.slug)
    for server in gen.sim.servers.values():
        lines += mcp_lines(server, gen.sim.spec.version)
    return lines


# --- determinism -------------------------------------------------------------------------------------


def test_a_session_is_the_same_for_the_same_seed_and_index():
    for family in FAMILIES:
        a = generate_session(5, 3, families=[family])
        b = generate_session(5, 3, families=[family])
        assert all_lines(a) == all_lines(b), family
        assert a.label == b.label, family
    assert all_lines(generate_session(5, 3)) != all_lines(generate_session(6, 3))


def test_a_corpus_is_byte_identical_whatever_the_number_of_jobs(tmp_path):
    one, two = tmp_path / "one", tmp_path / "two"
    simulate(one, 60, 11, jobs=1)
    simulate(two, 60, 11, jobs=2)
    files = sorted(p.relative_to(one) for p in one.rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(two) for p in two.rglob("*") if p.is_file())
    for rel in files:
        assert (one / rel).read_bytes() == (two / rel).read_bytes(), rel


# --- an ingested corpus covering every family --------------------------------------------------------


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    """Three sessions of every family, written to disk, plus their labels and Sims."""
    out = tmp_path_factory.mktemp("corpus")
    gens = []
    for family in FAMILIES:
        for i in range(3):
            gen = generate_session(SEED, i, families=[family])
            write_session(out, gen.sim, gen.slug)
            gens.append(gen)
    return out, gens


@pytest.fixture(scope="module")
def ingested(corpus, tmp_path_factory):
    from tokaudit.ingest.runner import ingest_paths
    from tokaudit.store import open_store

    out, gens = corpus
    store = open_store(str(tmp_path_factory.mktemp("db") / "sim.duckdb"))
    summary = ingest_paths(store, [out / "projects", out / "mcp"], workers=1)
    yield store, summary, gens
    store.close()


def rows(store, sql):
    return store.duck.execute(sql).fetchall()


def test_every_file_ingests_without_a_problem(ingested):
    store, summary, gens = ingested
    assert rows(store, "SELECT kind, message FROM ingest_problems") == []
    assert summary.lines_problem == 0 and summary.files_failed == 0
    assert summary.lines_read == summary.lines_ok + summary.lines_skipped
    assert set(summary.skipped_by_rule) <= {"type:file-history-snapshot", "notification:notifications/initialized"}
    formats = dict(rows(store, "SELECT format, count(*) FROM sources GROUP BY 1"))
    n_mcp = sum(len(g.sim.servers) for g in gens)
    n_claude = sum(1 + len(g.sim.subagents) for g in gens)
    assert formats == {"claude-code": n_claude, "mcp-jsonrpc": n_mcp}


def test_store_totals_equal_the_simulators_accounting(ingested):
    store, _, gens = ingested
    stored = dict(rows(store, """SELECT session_id, sum(input_tokens + cache_read_tokens + cache_write_5m_tokens
                                 + cache_write_1h_tokens + output_tokens) FROM llm_calls_dedup GROUP BY 1"""))
    per_kind = {
        (sid, kind): v
        for sid, *vals in rows(store, """SELECT session_id, sum(input_tokens), sum(cache_read_tokens), sum(cache_write_5m_tokens),
                                        sum(cache_write_1h_tokens), sum(output_tokens) FROM llm_calls_dedup GROUP BY 1""")
        for kind, v in zip(("input_tokens", "cache_read_tokens", "cache_write_5m_tokens", "cache_write_1h_tokens", "output_tokens"), vals)
    }
    for gen in gens:
        label = gen.label
        assert stored[label["session_id"]] == label["tokens"]["total_tokens"], label["family"]
        for kind in ("input_tokens", "cache_read_tokens", "cache_write_5m_tokens", "cache_write_1h_tokens", "output_tokens"):
            assert per_kind[(label["session_id"], kind)] == label["tokens"][kind]
        for sub in label["subagents"]:
            assert stored[sub["session_id"]] == sub["tokens"]["total_tokens"]
        assert label["total_tokens_with_subagents"] == label["tokens"]["total_tokens"] + sum(s["tokens"]["total_tokens"] for s in label["subagents"])
    n_calls = dict(rows(store, "SELECT session_id, count(*) FROM llm_calls_dedup GROUP BY 1"))
    for gen in gens:
        assert n_calls[gen.label["session_id"]] == gen.label["n_requests"]


def test_subagents_and_compactions_arrive_as_tokaudit_reads_them(ingested):
    store, _, gens = ingested
    parents = dict(rows(store, "SELECT session_id, parent_session_id FROM sessions WHERE agent = 'claude-code'"))
    types = dict(rows(store, "SELECT session_id, subagent_type FROM sessions WHERE parent_session_id IS NOT NULL"))
    compactions = Counter(sid for (sid,) in rows(store, "SELECT session_id FROM session_events WHERE kind = 'compaction'"))
    assert any(g.label["subagents"] for g in gens)
    for gen in gens:
        for sub, run in zip(gen.label["subagents"], gen.sim.subagents):
            assert parents[sub["session_id"]] == gen.label["session_id"]
            assert types[sub["session_id"]] == run.agent_type
        assert compactions.get(gen.label["session_id"], 0) == gen.label["compactions"]


def test_mcp_transcripts_match_the_claude_log_one_to_one(ingested):
    store, summary, gens = ingested
    mcp_side = rows(store, """SELECT t.tool_call_id, t.linked_tool_call_id FROM tool_calls t JOIN sources s USING (source_id)
                              WHERE s.format = 'mcp-jsonrpc'""")
    claude_side = rows(store, """SELECT count(*) FROM tool_calls t JOIN sources s USING (source_id)
                                 WHERE s.format = 'claude-code' AND t.mcp_server IS NOT NULL""")[0][0]
    assert len(mcp_side) == claude_side == sum(g.label["n_mcp_calls"] for g in gens) > 0
    assert all(linked is not None for _, linked in mcp_side)
    assert summary.tool_calls_linked == len(mcp_side)
    pairs = rows(store, """SELECT m.mcp_server = a.mcp_server, m.mcp_tool = a.mcp_tool, m.args_sha256 = a.args_sha256,
                                  m.result_sha256 = a.result_sha256, coalesce(m.is_error, false) = coalesce(a.is_error, false),
                                  abs(epoch_ms(m.ts_utc) - epoch_ms(a.ts_utc)) < 1000,
                                  abs(epoch_ms(m.result_ts_utc) - epoch_ms(a.result_ts_utc)) < 1000
                           FROM tool_calls m JOIN tool_calls a ON a.source_id = m.linked_source_id AND a.tool_call_id = m.linked_tool_call_id""")
    assert len(pairs) == len(mcp_side)
    assert all(all(p) for p in pairs)
    # Every call a label names is in its session's MCP transcript.
    mcp_counts = dict(rows(store, "SELECT session_id, count(*) FROM tool_calls WHERE session_id LIKE 'mcp-jsonrpc:%' GROUP BY 1"))
    for gen in gens:
        for conn in gen.label["mcp_sessions"]:
            assert mcp_counts.get(conn["session_id"], 0) == conn["calls"]


def test_tool_surface_change_is_visible_in_tool_defs(ingested):
    store, _, gens = ingested
    defs = defaultdict(set)
    for sid, tool, sha in rows(store, "SELECT session_id, tool_name, schema_sha256 FROM tool_defs"):
        defs[(sid, tool)].add(sha)
    rugs = [g for g in gens if g.label["family"] == "rug_pull"]
    assert rugs
    for gen in rugs:
        (conn,) = [c for c in gen.label["mcp_sessions"] if c["server"] == gen.label["attack_server"]]
        assert conn["surface_changed"]
        main_tool = BY_SERVER[gen.label["attack_server"]].tool
        assert len(defs[(conn["session_id"], main_tool)]) == 2  # honest definition, then the poisoned one
        assert defs[(conn["session_id"], gen.label["attack_tool"])]  # the shadow tool appears


# --- the written lines look like Claude Code 2.1.97+ -----------------------------------------------


_MSG, _REQ, _TOOLU = re.compile(r"msg_01[A-Za-z0-9]{22}"), re.compile(r"req_011C[A-Za-z0-9]{20}"), re.compile(r"toolu_01[A-Za-z0-9]{22}")


def test_lines_have_real_shapes_ids_and_increasing_timestamps():
    seen_ids: set[str] = set()
    for family in FAMILIES:
        for gen in sessions_of(family, 3):
            files = [claude_lines(gen.sim, gen.slug)] + [claude_lines(r.sim, gen.slug) for r in gen.sim.subagents]
            for lines in files:
                last_ts = ""
                for raw in lines:
                    obj = json.loads(raw)
                    if obj["type"] == "file-history-snapshot":
                        continue
                    assert obj["timestamp"] >= last_ts, family
                    last_ts = obj["timestamp"]
                    assert tuple(map(int, obj["version"].split("."))) >= (2, 1, 97)
                    if obj["type"] != "assistant":
                        continue
                    msg = obj["message"]
                    assert msg["model"] in MODELS and msg["stop_reason"] in ("tool_use", "end_turn")
                    assert _MSG.fullmatch(msg["id"]) and _REQ.fullmatch(obj["requestId"])
                    block = msg["content"][0]
                    if block["type"] == "tool_use":
                        assert _TOOLU.fullmatch(block["id"]) and block["id"] not in seen_ids
                        seen_ids.add(block["id"])
                    assert b'"usage":{' in raw  # compact JSON, as ccusage needs
            ids = [r.message_id for r in gen.sim.requests]
            assert len(set(ids)) == len(ids)


def test_one_line_per_content_block_with_the_same_usage():
    gen = next(g for g in sessions_of("coding_long", 3) if any(len(r.blocks) > 1 for r in g.sim.requests))
    by_message = defaultdict(list)
    for raw in claude_lines(gen.sim, gen.slug):
        obj = json.loads(raw)
        if obj["type"] == "assistant":
            by_message[obj["message"]["id"]].append(obj)
    for request in gen.sim.requests:
        lines = by_message[request.message_id]
        assert len(lines) == len(request.blocks)
        assert len({json.dumps(x["message"]["usage"]) for x in lines}) == 1
        assert len({x["requestId"] for x in lines}) == 1


# --- token, cache and time accounting ---------------------------------------------------------------


def added_between(events) -> int:
    """Tokens a request reads beyond its predecessor's input and output: results, prompts, framing."""
    total = 0
    for e in events:
        if isinstance(e, ToolResult):
            total += tokens_of(e.text) + 9
        elif isinstance(e, Prompt):
            total += tokens_of(e.text) + 5
    return total


def test_input_grows_by_output_and_what_was_added_and_the_prefix_is_read_from_cache():
    checked = cache_hits = 0
    for family in FAMILIES:
        for gen in sessions_of(family, 4):
            sims = [gen.sim] + [r.sim for r in gen.sim.subagents]
            changes = [r.ts_ms for s in gen.sim.servers.values() for r in s.records if isinstance(r, McpListing) and r.changed]
            for sim in sims:
                prev, since = None, []
                for event in sim.events:
                    if not isinstance(event, Request):
                        since.append(event)
                        continue
                    u = event.usage
                    visible = sum(b.tokens for b in event.blocks if b.kind != "thinking")
                    assert u.output_tokens >= visible and (u.output_tokens == visible) == all(b.kind != "thinking" for b in event.blocks)
                    assert 1 <= u.input_tokens <= 12
                    reset = any(isinstance(e, Compaction) for e in since) or any(prev and prev.start_ms < t <= event.start_ms for t in changes)
                    if prev is not None and not reset:
                        assert u.input_total_tokens == prev.usage.input_total_tokens + prev.usage.output_tokens + added_between(since), family
                        assert u.cache_read_tokens <= prev.usage.input_total_tokens
                        if event.start_ms - prev.start_ms <= sim.spec.ttl_ms:
                            assert u.cache_read_tokens == prev.usage.input_total_tokens
                            cache_hits += 1
                        else:
                            assert u.cache_read_tokens <= sim.spec.system_prefix_tokens
                        checked += 1
                    prev, since = event, []
    assert checked > 1000 and cache_hits > 900


def test_long_pauses_cost_a_cache_rewrite_and_1h_sessions_write_1h():
    misses = 0
    for gen in sessions_of("polling", 40):
        reqs = gen.sim.requests
        for a, b in zip(reqs, reqs[1:]):
            if b.start_ms - a.start_ms > gen.sim.spec.ttl_ms:
                misses += 1
                assert b.usage.cache_read_tokens < a.usage.input_total_tokens
        if gen.label["cache_ttl"] == "1h":
            assert all(r.usage.cache_write_5m_tokens == 0 for r in reqs)
        else:
            assert all(r.usage.cache_write_1h_tokens == 0 for r in reqs)
    assert misses > 0


def test_long_coding_sessions_compact():
    gens = sessions_of("coding_long", 12)
    assert all(50 <= g.label["n_requests"] for g in gens)
    assert any(g.label["compactions"] for g in gens)
    for gen in gens:
        assert all(r.usage.input_total_tokens < 200_000 for r in gen.sim.requests)


# --- labels ---------------------------------------------------------------------------------------


def test_labels_describe_attacks_and_benign_sessions():
    for family in FAMILIES:
        for gen in sessions_of(family, 6):
            label = gen.label
            assert label["session_id"] == f"claude-code:{gen.sim.spec.session_uuid}"
            if label["is_attack"] and label["info"].get("in_subagent"):
                # The chain ran in a subagent the session handed the task to: its window is the subagent's.
                (run,) = gen.sim.subagents
                assert label["onset_turn"] is None and label["attack_requests"] == 0 and run.agent_type == "general-purpose"
                assert any(r.phase == "attack" for r in run.sim.requests) and label["excess_tokens"] > 0
            elif label["is_attack"]:
                assert label["onset_turn"] >= 1, family  # attacks start after some benign requests
                assert gen.sim.requests[label["onset_turn"]].phase == "attack"
                assert label["attack_end_turn"] >= label["onset_turn"] and label["attack_requests"] >= 1
                assert label["excess_tokens"] > 0 and label["twin_tokens"] < label["total_tokens_with_subagents"]
                assert label["attack_server"] in gen.sim.servers and 0 <= label["stealth"] <= 4
                assert label["template_family"] and label["attack_tool_name"] == f"mcp__{label['attack_server']}__{label['attack_tool']}"
            else:
                assert label["onset_turn"] is None and label["excess_tokens"] == 0 and label["stealth"] is None
            msgspec.json.encode(label)  # JSON-serialisable


def test_simulate_writes_labels_beside_the_log_folders_and_the_cli_refuses_to_mix_corpora(tmp_path, capsys):
    out = tmp_path / "corpus"
    assert cli_main(["--out", str(out), "--sessions", "12", "--seed", "4", "--jobs", "1", "--attack-share", "0.5"]) == 0
    assert "12 sessions" in capsys.readouterr().out
    labels = json.loads((out / "labels.json").read_text())
    assert labels["seed"] == 4 and len(labels["sessions"]) == 12
    assert not list(out.rglob("*.jsonl")) or all(p.parts[len(out.parts)] in ("projects", "mcp") for p in out.rglob("*.jsonl"))
    for label in labels["sessions"]:
        assert (out / label["transcript"]).is_file()
        assert all((out / p).is_file() for p in label["mcp_transcripts"] + label["subagent_transcripts"])
    with pytest.raises(SystemExit):
        cli_main(["--out", str(out), "--sessions", "3"])
    only = tmp_path / "only"
    simulate(only, 8, 1, families=["counter_loop"])
    assert {lb["family"] for lb in json.loads((only / "labels.json").read_text())["sessions"]} == {"counter_loop"}
    with pytest.raises(ValueError, match="unknown families"):
        simulate(tmp_path / "x", 1, 1, families=["nope"])


def test_attack_share_is_honoured():
    labels = [generate_session(3, i, attack_share=0.3).label for i in range(400)]
    share = sum(lb["is_attack"] for lb in labels) / len(labels)
    assert 0.24 < share < 0.36
    assert {lb["family"] for lb in labels} == set(FAMILIES)


# --- attack structure ---------------------------------------------------------------------------------


def attack_calls(gen):
    """The (name, args, result text) of the attack server's tool calls, in order (the chain runs in the main
    session or, delegated, in a subagent)."""
    server = gen.label["attack_server"]
    requests = gen.sim.requests + [r for run in gen.sim.subagents for r in run.sim.requests]
    return [(u.name, msgspec.json.decode(u.input_json), u.result.text) for r in requests for u in r.tool_uses
            if u.name.startswith(f"mcp__{server}__")]  # fmt: skip


def test_counter_loop_is_a_same_tool_chain_with_counter_only_argument_changes():
    for gen in sessions_of("counter_loop", 30):
        k = gen.label["knobs"]
        calls = [c for c in attack_calls(gen) if c[0] == gen.label["attack_tool_name"]]
        assert len(calls) == k["chain_length"] + gen.label["info"]["repairs"]
        arg = k["arg_name"]
        sent = [args[arg] for _, args, _ in calls]
        steps = {counter_value(k["counter_form"], t): t for t in range(1, k["chain_length"] + 1)}
        counters = [steps[v] for v in sent]  # every value sent is the counter's value for one step
        assert counters[0] == 1 and counters[-1] == k["chain_length"]
        assert all(b - a in (0, 1) for a, b in zip(counters, counters[1:]))
        if k["counter_form"] != "index":
            # An offset or a numbered word the model cannot work out is named by the result before it.
            assert all(str(b) in text for (_, _, text), a, b in zip(calls, sent, sent[1:]) if a != b)
        full = ",".join(map(str, range(1, k["list_length"] + 1)))
        complete = [args for _, args, _ in calls if args["calibration_sequence"] == full]
        assert len(complete) == k["chain_length"]  # every repair was followed by a full resend
        # Only the counter (and, when cumulative, the restated log; when narrated, the narration) changes.
        complete = [{key: v for key, v in a.items() if key != "explanation"} for a in complete]
        masked = {json.dumps({key: v for key, v in a.items() if key not in (arg, "prior_results")}, sort_keys=True) for a in complete}
        assert len(masked) == 1
        if not k["cumulative"] and k["counter_form"] != "words":  # a skeleton keeps short strings ("part 4") as they are
            assert len({args_skeleton(msgspec.json.encode(a)) for a in complete}) == 1
        task_payload = calls[-1][2]
        assert all(len(text) < len(task_payload) for _, _, text in calls[:-1])  # the payload comes only at the end
        # Argument inflation: the sequence dominates the output of each chain request.
        runs = [run.sim for run in gen.sim.subagents] if gen.label["info"]["in_subagent"] else [gen.sim]
        chain_reqs = [r for sim in runs for r in sim.requests if any(u.name == gen.label["attack_tool_name"] for u in r.tool_uses)]
        if k["list_length"] >= 200:
            assert all(r.usage.output_tokens >= tokens_of(full) for r in chain_reqs if full in r.tool_uses[0].input_json.decode())
        # The onset request is the first call of the chain (delegated: the subagent's first request of the attack).
        first = gen.sim.requests[gen.label["onset_turn"]] if runs == [gen.sim] else next(r for r in runs[0].requests if r.phase == "attack")
        assert first is chain_reqs[0]


def test_cursor_drip_feeds_the_payload_in_tiny_pieces_behind_an_opaque_cursor():
    for gen in sessions_of("cursor_drip", 20):
        k = gen.label["knobs"]
        calls = attack_calls(gen)
        assert len(calls) == k["chain_length"]
        arg = k["arg_name"]
        if k["cursor_in_url"]:  # the cursor rides in the URL's query string, as the previous result named it
            cursors = [dict(p.split("=") for p in a["url"].split("?")[1].split("&")).get(arg) for _, a, _ in calls]
            assert cursors[0] is None and all(c in text for c, (_, _, text) in zip(cursors[1:], calls))
            calls = [(n, {**{key: v for key, v in a.items() if key != "url"}, **({arg: c} if c else {})}, t) for (n, a, t), c in zip(calls, cursors)]
        assert arg not in calls[0][1] and all(arg in a for _, a, _ in calls[1:])
        assert len({json.dumps({key: v for key, v in a.items() if key not in (arg, "explanation")}, sort_keys=True) for _, a, _ in calls}) == 1
        assert len({a[arg] for _, a, _ in calls[1:]}) == len(calls) - 1  # a new opaque cursor every time
        if k["chain_length"] >= 10:
            sizes = [len(text) for _, _, text in calls]
            assert max(sizes) < 2500 + k["boilerplate_tokens"] * 8
    assert {g.label["knobs"]["cursor_in_url"] for g in sessions_of("cursor_drip", 20)} == {False, True}


def test_narrated_sessions_explain_every_mcp_call_in_new_words():
    # (test_the_benign_twin_is_the_same_task_without_the_attack checks that twins narrate alike before the onset)
    gens = [g for g in sessions_of("cursor_drip", 40) if g.label["narration"]]
    assert gens, "some sessions narrate"
    for gen in gens:
        where = gen.label["narration"]
        uses = [u for r in gen.sim.requests for u in r.tool_uses if u.name.startswith("mcp__")]
        args = [json.loads(u.input_json) for u in uses]
        assert all(list(a)[0 if where == "first" else -1] == "explanation" for a in args)
        notes = [a["explanation"] for a in args]
        assert len(set(notes)) == len(notes) and all(" " in n for n in notes)
    assert not any("explanation" in u.input_json.decode() for g in sessions_of("cursor_drip", 40) if not g.label["narration"]
                   for r in g.sim.requests for u in r.tool_uses)  # fmt: skip


def test_tool_cycles_have_period_two_or_three_across_servers():
    for gen in sessions_of("tool_cycle", 20):
        period = gen.label["knobs"]["period"]
        names = [u.name for r in gen.sim.requests[gen.label["onset_turn"] : gen.label["attack_end_turn"] + 1] for u in r.tool_uses
                 if u.name.startswith("mcp__")]  # fmt: skip
        assert len({n.split("__")[1] for n in names}) == period  # co-registered servers
        assert len(names) >= 2 * period - 1  # at least two cycles (the last one stops at the approval)
        assert all(names[i] == names[i + period] for i in range(len(names) - period - (1 if period == 3 else 0)))


def test_sponge_results_are_big_and_repetitive():
    for gen in sessions_of("sponge", 12):
        k = gen.label["knobs"]
        texts = [text for _, _, text in attack_calls(gen)]
        assert len(texts) == k["chain_length"]
        assert all(text.count("\n") >= k["list_length"] for text in texts)
        assert all(tokens_of(text) <= 25_000 + 2_000 for text in texts)


def test_overthink_decoys_blow_up_the_next_requests_output():
    for gen in sessions_of("overthink", 12):
        decoy = gen.sim.requests[gen.label["onset_turn"]]
        after = gen.sim.requests[gen.label["onset_turn"] + 1]
        assert any(u.name == gen.label["attack_tool_name"] for u in decoy.tool_uses)  # the decoy comes in this call's result
        assert after.usage.output_tokens >= 0.6 * gen.label["knobs"]["thinking_tokens"]
        assert after.usage.output_tokens > 8 * decoy.usage.output_tokens


def test_rug_pull_changes_the_surface_invalidates_the_cache_and_adds_shadow_calls():
    for gen in sessions_of("rug_pull", 12):
        server = gen.sim.servers[gen.label["attack_server"]]
        listings = [r for r in server.records if isinstance(r, McpListing)]
        assert [x.changed for x in listings] == [False, True]
        grown = sum(len(t.get("description", "")) for t in listings[1].tools) - sum(len(t.get("description", "")) for t in listings[0].tools)
        assert grown >= gen.label["knobs"]["bloat_tokens"] * 2
        onset = gen.sim.requests[gen.label["onset_turn"]]
        assert onset.usage.cache_read_tokens == 0  # tool definitions come first: the whole prompt is written again
        shadow = [c for c in attack_calls(gen) if c[0] == gen.label["attack_tool_name"]]
        assert len(shadow) == gen.label["knobs"]["chain_length"]
        lines = [json.loads(x) for x in mcp_lines(server, "2.1.97")]
        assert any(x.get("message", {}).get("method") == "notifications/tools/list_changed" for x in lines)


def test_looptrap_scans_new_scopes_until_coverage_reaches_100():
    for gen in sessions_of("looptrap", 12):
        calls = attack_calls(gen)
        assert len(calls) == gen.label["knobs"]["chain_length"]
        scopes = [a["scope"] for _, a, _ in calls]
        assert len(set(scopes)) == len(scopes)
        pcts = [int(m.group(1)) for _, _, text in calls[:-1] for m in [re.search(r"(?:coverage|Coverage|Audit|audit)\D{0,12}(\d+)", text)] if m]
        assert pcts == sorted(pcts)


def server_text(gen) -> list[str]:
    """Everything the attack's server(s) wrote that the attack controls: results and changed definitions."""
    label = gen.label
    servers = [label["attack_server"]] + ([s["server"] for s in label["mcp_sessions"]] if label["family"] == "tool_cycle" else [])
    texts = []
    for name in servers:
        server = gen.sim.servers[name]
        honest = {t["name"]: t for t in server.records[0].tools} if label["family"] == "rug_pull" else {}
        for record in server.records:
            if isinstance(record, McpCall):
                texts.append(record.text)
            else:
                for tool in record.tools:
                    if tool != honest.get(tool["name"]) and tool["name"] in (BY_SERVER[name].tool if name in BY_SERVER else "", label["attack_tool"]):
                        texts.append(json.dumps(tool))
    return texts


def test_stealth_4_is_lexicon_free_and_stealth_0_is_not():
    blunt = Counter()
    for family in ATTACKS:
        found = 0
        for i in range(60):
            gen = generate_session(SEED + 1, i, families=[family])
            stealth = gen.label["stealth"]
            if stealth == 4:
                found += 1
                hits = [h for text in server_text(gen) for h in lexicon_hits(text)]
                assert hits == [], (family, gen.label["template_family"], hits[:5])
            elif stealth == 0:
                blunt[family] += bool([h for text in server_text(gen) for h in lexicon_hits(text)])
        assert found >= 5, family
    assert all(blunt[f] > 0 for f in ATTACKS), blunt


def test_every_stealth_4_template_renders_lexicon_free():
    fields = {"tool": "get_forecast", "arg": "window", "t": 3, "next": 4, "T": 20, "L": 500, "got": 5, "pct": 15, "left": 17,
              "receipt": "Xa81kq", "noun": "forecast", "cursor": "QWx9", "item": "{}", "scope": "src/api", "scope_list": "src/api",
              "k": 2, "s": "0.81", "d": "d-1", "A": "mcp__a__x", "B": "mcp__b__y", "C": "mcp__c__z", "body": "r1: 1 ? 3 | 9", "n": 4,
              "shadow": "record_step"}  # fmt: skip
    templates = [t for fam in COUNTER.values() for t in fam[4].values()]
    templates += [t for fam in CURSOR.values() for t in fam[4].values() if isinstance(t, str)]
    templates += [" ".join(fam[4]["keys"]) for fam in CURSOR.values() if "keys" in fam[4]]
    templates += [fam[4] for group in (COVERAGE, SPONGE, DECOY, SURFACE) for fam in group.values()]
    templates += [t for fam in CYCLE.values() for t in fam[4].values()]
    for template in templates:
        assert lexicon_hits(template.format(**fields)) == [], template
    assert all(lexicon_hits(COUNTER[f][0]["progress"].format(**fields)) for f in COUNTER)


def test_template_families_and_knobs_cover_the_evaluation_grid():
    labels = [g.label for family in ATTACKS for g in sessions_of(family, 40, seed=SEED + 2)]
    counter = [lb for lb in labels if lb["family"] == "counter_loop"]
    assert {lb["knobs"]["chain_length"] for lb in counter} == {3, 5, 10, 20, 40}
    assert {lb["stealth"] for lb in labels} == {0, 1, 2, 3, 4}
    assert len({lb["template_family"] for lb in labels}) >= 12
    assert {lb["knobs"]["json_envelope"] for lb in counter} == {True, False}
    assert len({lb["knobs"]["arg_name"] for lb in counter}) >= 5
    assert any(lb["info"].get("repairs") for lb in counter)
    assert any(lb["knobs"]["server_latency"] == "slow" for lb in labels)


# --- benign hard negatives ------------------------------------------------------------------------------


def mcp_calls(gen):
    return [(u.name, u.input_json, u.result.text) for r in gen.sim.requests for u in r.tool_uses if u.name.startswith("mcp__")]


def test_polling_repeats_identical_arguments_with_running_results():
    gen = next(g for g in sessions_of("polling", 20) if g.label["knobs"]["variant"] == "mcp" and g.label["knobs"]["polls"] >= 5)
    calls = [c for c in mcp_calls(gen) if "status" in c[0] or "get_" in c[0]]
    assert len({c[1] for c in calls}) == 1 and len(calls) >= 5
    assert sum('"running"' in c[2] for c in calls) == len(calls) - 1


def test_pagination_pages_bring_new_content():
    gen = next(g for g in sessions_of("pagination", 20) if g.label["knobs"]["variant"] == "mcp" and g.label["knobs"]["pages"] >= 5)
    calls = mcp_calls(gen)
    assert len(calls) == gen.label["knobs"]["pages"]
    assert len({c[1] for c in calls}) == len(calls) and len({c[2] for c in calls}) == len(calls)
    assert len({args_skeleton(c[1]) for c in calls[1:]}) == 1  # same shape, cursor/page masked


def test_batch_edits_use_one_tool_over_many_paths():
    gen = next(g for g in sessions_of("batch_edit", 20) if g.label["knobs"]["variant"] == "edit")
    edits = [msgspec.json.decode(u.input_json)["file_path"] for r in gen.sim.requests for u in r.tool_uses if u.name == "Edit"]
    assert len(edits) == gen.label["knobs"]["items"] and len(set(edits)) > len(edits) * 0.8


def test_retries_fail_then_succeed_with_the_same_arguments():
    gen = next(g for g in sessions_of("retry", 20) if g.label["knobs"]["variant"] == "mcp")
    calls = [(u.input_json, u.result.is_error) for r in gen.sim.requests for u in r.tool_uses if u.name.startswith("mcp__")]
    assert calls[0][1] and not calls[-1][1]
    assert calls[0][0] == next(args for args, err in calls if not err)


def test_large_writes_and_reasoning_put_output_in_args_and_thinking():
    gen = sessions_of("large_write", 1)[0]
    writes = [r for r in gen.sim.requests if any(u.name == "Write" for u in r.tool_uses)]
    assert writes and all(sum(u.tokens for u in r.tool_uses) > 0.5 * r.usage.output_tokens for r in writes)
    gen = sessions_of("reasoning_heavy", 1)[0]
    assert max(r.usage.output_tokens for r in gen.sim.requests) >= 1_000
    assert all(r.blocks[0].kind == "thinking" for r in gen.sim.requests)


def test_hard_negatives_and_attacks_share_server_names():
    benign_servers = {s for family in ("simple_tool", "retry", "pagination", "polling") for g in sessions_of(family, 60) for s in g.sim.servers}
    attack_servers = {g.label["attack_server"] for family in ATTACKS for g in sessions_of(family, 10)}
    assert attack_servers <= benign_servers


def test_paths_layout(corpus):
    out, gens = corpus
    gen = next(g for g in gens if g.sim.subagents)
    run = gen.sim.subagents[0]
    folder = next(Path(out, "projects").glob(f"*/{gen.sim.spec.session_uuid}/subagents"))
    assert (folder / f"agent-{run.agent_id}.jsonl").is_file()
    assert json.loads((folder / f"agent-{run.agent_id}.meta.json").read_text()) == {"agentType": run.agent_type}


def test_the_benign_twin_is_the_same_task_without_the_attack():
    from tokaudit.simulate.corpus import build

    def shape(request):
        return [(b.kind, b.text if b.kind == "text" else None, b.tool.name if b.tool else None, b.tool.input_json if b.tool else None)
                for b in request.blocks if b.kind != "thinking"]  # fmt: skip

    for family in ATTACKS:
        for gen in sessions_of(family, 5):
            label = gen.label
            twin, _ = build(FAMILIES[family], gen.sim.spec, label["knobs"], f"{SEED}:{label['index']}:{family}", False)
            if label["info"].get("in_subagent"):
                # Delegated: the main session is its twin's request for request; only the subagent's work differs.
                assert [shape(r) for r in gen.sim.requests] == [shape(r) for r in twin.requests], family
                (run,), (twin_run,) = gen.sim.subagents, twin.subagents
                assert [shape(r) for r in run.sim.requests] != [shape(r) for r in twin_run.sim.requests], family
                assert label["twin_tokens"] == sum(r.usage.total_tokens for r in twin.requests) + twin_run.sim.totals().total_tokens
                continue
            onset = label["onset_turn"]
            before, twin_before = gen.sim.requests[: onset + 1], twin.requests[: onset + 1]
            assert [shape(r) for r in before[:-1]] == [shape(r) for r in twin_before[:-1]], family
            results = [[u.result.text for u in r.tool_uses] for r in before]
            assert results[:-1] == [[u.result.text for u in r.tool_uses] for r in twin_before[:-1]]
            deltas = [a.usage.input_total_tokens - b.usage.input_total_tokens for a, b in zip(before, twin_before)]
            assert len(set(deltas[:-1])) <= 1  # only the attack-enabling schema (if any) differs before the onset
            # ... and the onset request is where they part: its calls, their results or its input differ.
            twin_onset = twin_before[-1]
            assert (shape(before[-1]) != shape(twin_onset) or results[-1] != [u.result.text for u in twin_onset.tool_uses]
                    or deltas[-1] != deltas[0]), family  # fmt: skip
            assert shape(gen.sim.requests[-1]) == shape(twin.requests[-1])  # same final answer
            assert sum(r.usage.total_tokens for r in twin.requests) + sum(r.sim.totals().total_tokens for r in twin.subagents) == label["twin_tokens"]


def test_knob_overrides_steer_a_sweep(tmp_path):
    for i in range(10):
        gen = generate_session(1, i, families=["counter_loop"], knob_overrides={"stealth": 4, "chain_length": 40, "template_family": "sync"})
        k = gen.label["knobs"]
        assert (k["stealth"], k["chain_length"], k["template_family"]) == (4, 40, "sync")
        assert not lexicon_hits(k["arg_name"].replace("_", " "))
        assert all(not lexicon_hits(text) for text in server_text(gen))
    benign = generate_session(1, 0, families=["polling"], knob_overrides={"stealth": 4})
    assert "stealth" not in benign.label["knobs"]
    drip = generate_session(1, 0, families=["cursor_drip"], knob_overrides={"template_family": "sync"})
    assert drip.label["template_family"] in CURSOR  # another kind's wording is not forced on it
    out = tmp_path / "sweep"
    assert cli_main(["--out", str(out), "--sessions", "6", "--family", "looptrap", "--knob", "chain_length=5", "--knob", "template_family=audit", "--jobs", "1"]) == 0
    labels = json.loads((out / "labels.json").read_text())
    assert {(lb["knobs"]["chain_length"], lb["template_family"]) for lb in labels["sessions"]} == {(5, "audit")}


def test_an_audit_in_batches_sees_every_session_once_with_its_group(ingested):
    """A store too large for one batch is audited in batches of whole session groups."""
    from tokaudit.analyze.audit import run_audit
    from tokaudit.analyze.frames import load_frames, session_batches

    store, _, _ = ingested
    (total,) = rows(store, "SELECT (SELECT count(*) FROM llm_calls) + (SELECT count(*) FROM tool_calls)")[0]
    assert session_batches(store, None, None, total) is None
    batches = session_batches(store, None, None, total // 4)
    assert len(batches) >= 3
    batch_of = {s: i for i, batch in enumerate(batches) for s in batch.sessions}
    assert sum(len(b.sessions) for b in batches) == len(batch_of)  # no session twice
    stored = {s for (s,) in rows(store, "SELECT session_id FROM llm_calls UNION SELECT session_id FROM tool_calls")}
    assert set(batch_of) == stored
    subagents = rows(store, "SELECT session_id, parent_session_id FROM sessions WHERE parent_session_id IS NOT NULL")
    links = load_frames(store).links.rows()
    assert subagents and links
    for child, owner in [*subagents, *links]:
        assert batch_of[child] == batch_of[owner], (child, owner)
    everything = load_frames(store)
    parts = [load_frames(store, batch=batch) for batch in batches]
    assert sum(p.tools.height for p in parts) == everything.tools.height  # each batch's row range holds all its calls
    assert sum(p.calls.height for p in parts) == everything.calls.height
    whole = run_audit(store, save=False)
    limit = rows(store, "SELECT current_setting('memory_limit')")
    progress = []
    batched = run_audit(store, save=False, batch_rows=total // 4, on_progress=lambda done, of: progress.append((done, of)))
    assert progress == [(done, len(batches)) for done in range(len(batches) + 1)]
    assert set(batched.stage_seconds) == {"frames", "features + cohorts", "detectors", "quotes"}
    assert rows(store, "SELECT current_setting('memory_limit')") == limit  # capped while batching, then restored
    assert batched.sessions == whole.sessions
    # Steered loops need no baseline: the same sessions, whatever the batches.
    loops = [{f.session_id for f in r.findings if f.detector == "continuation_loop"} for r in (whole, batched)]
    assert loops[0] and loops[0] == loops[1]


def test_some_attacks_run_their_chain_in_a_subagent_the_session_handed_the_task_to():
    """The main session's one request hands the task over; the chain (and in the twin, the honest call) runs in
    the subagent's transcript, through the session's MCP server."""
    gens = [g for g in sessions_of("counter_loop", 40) if g.label["info"]["in_subagent"]]
    assert gens, "no counter loop was delegated to a subagent"
    for gen in gens:
        label, (run,) = gen.label, gen.sim.subagents
        steered = [r for r in run.sim.requests if r.phase == "attack"]
        assert [u.input.get("subagent_type") for r in gen.sim.requests for u in r.tool_uses if u.name in ("Task", "Agent")] == ["general-purpose"]
        chain = [u for r in steered for u in r.tool_uses if u.mcp]
        assert len(chain) >= label["knobs"]["chain_length"] and label["excess_tokens"] > 0
        assert {u.mcp for u in chain} == {(label["attack_server"], label["attack_tool"])}
        assert len(gen.sim.servers[label["attack_server"]].calls) == len(chain)
