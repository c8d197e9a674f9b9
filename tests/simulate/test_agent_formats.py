"""Simulated sessions written as Codex CLI rollouts or OpenTelemetry traces: tokaudit reads back exactly what the
simulator billed, in each format's own terms."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from tokaudit.simulate import FAMILIES, generate_session
from tokaudit.simulate.writers import codex_lines, otel_lines, write_session

SEED = 20260311


def ingest_corpus(tmp_path_factory, agent_format: str):
    """Two sessions of every family with the agent side written as ``agent_format``, ingested with their MCP
    transcripts; yields the store, the ingest summary and the generated sessions."""
    from tokaudit.ingest.runner import ingest_paths
    from tokaudit.store import open_store

    out = tmp_path_factory.mktemp(f"{agent_format}-corpus")
    gens = []
    for family in FAMILIES:
        for i in range(2):
            gen = generate_session(SEED, i, families=[family], agent_formats={agent_format: 1.0})
            assert gen.agent_format == agent_format and gen.label["session_id"].startswith(f"{agent_format}:")
            write_session(out, gen.sim, gen.slug, gen.agent_format)
            gens.append(gen)
    store = open_store(str(tmp_path_factory.mktemp("db") / f"{agent_format}.duckdb"))
    summary = ingest_paths(store, [out / agent_format, out / "mcp"], workers=1)
    yield store, summary, gens
    store.close()


@pytest.fixture(scope="module")
def ingested(tmp_path_factory):
    """Codex rollouts."""
    yield from ingest_corpus(tmp_path_factory, "codex")


def rows(store, sql):
    return store.duck.execute(sql).fetchall()


def test_every_rollout_ingests_as_codex_without_a_problem(ingested):
    store, summary, gens = ingested
    assert rows(store, "SELECT kind, message FROM ingest_problems") == []
    assert summary.lines_read == summary.lines_ok + summary.lines_skipped
    assert set(summary.skipped_by_rule) <= {"token-count-repeat", "fork-replay", "fork-parent-meta", "notification:notifications/initialized"}
    assert summary.skipped_by_rule["token-count-repeat"] > 0  # the re-emitted totals are written, and left out
    formats = dict(rows(store, "SELECT format, count(*) FROM sources GROUP BY 1"))
    assert formats == {"codex": sum(1 + len(g.sim.subagents) for g in gens), "mcp-jsonrpc": sum(len(g.sim.servers) for g in gens)}


def test_codex_totals_equal_the_simulators_accounting_in_openai_terms(ingested):
    store, _, gens = ingested
    stored = {
        sid: (calls, uncached, cached, written, output, reasoning)
        for sid, calls, uncached, cached, written, output, reasoning in rows(
            store,
            """SELECT session_id, count(*), sum(input_tokens), sum(cache_read_tokens), sum(cache_write_5m_tokens + cache_write_1h_tokens),
                      sum(output_tokens), sum(reasoning_tokens) FROM llm_calls_dedup GROUP BY 1""",
        )
    }
    checked, lost_cache_tokens = 0, 0
    for gen in gens:
        runs = [(gen.label["session_id"], gen.sim, gen.label["tokens"])] + [
            (sub["session_id"], run.sim, sub["tokens"]) for sub, run in zip(gen.label["subagents"], gen.sim.subagents)
        ]
        for session_id, sim, tokens in runs:
            calls, uncached, cached, written, output, reasoning = stored[session_id]
            assert calls == len(sim.requests)
            # OpenAI counts no cache writes: what Claude wrote to the cache is uncached input here; and the
            # provider now and then serves a warm prompt uncached (less cached, as much more uncached).
            assert uncached + cached == sum(tokens[k] for k in ("input_tokens", "cache_read_tokens", "cache_write_5m_tokens", "cache_write_1h_tokens"))
            assert cached <= tokens["cache_read_tokens"] and (written, output) == (0, tokens["output_tokens"])
            lost_cache_tokens += tokens["cache_read_tokens"] - cached
            assert reasoning == sum(b.tokens for r in sim.requests for b in r.blocks if b.kind == "thinking")
            checked += 1
    assert checked > len(gens)  # subagents included
    assert lost_cache_tokens > 0


def test_subagents_are_spawned_threads_and_compactions_are_events(ingested):
    store, _, gens = ingested
    parents = dict(rows(store, "SELECT session_id, parent_session_id FROM sessions WHERE parent_session_id IS NOT NULL"))
    compactions = Counter(sid for (sid,) in rows(store, "SELECT session_id FROM session_events WHERE kind = 'compaction'"))
    assert any(g.label["subagents"] for g in gens) and any(g.label["compactions"] for g in gens)
    for gen in gens:
        for sub in gen.label["subagents"]:
            assert parents[sub["session_id"]] == gen.label["session_id"]
        assert compactions.get(gen.label["session_id"], 0) == gen.label["compactions"]


def test_tool_calls_arrive_with_their_request_and_mcp_calls_link_to_the_transcripts(ingested):
    store, _, gens = ingested
    per_session = dict(rows(store, "SELECT session_id, count(*) FROM tool_calls WHERE session_id LIKE 'codex:%' GROUP BY 1"))
    unasked = rows(store, "SELECT count(*) FROM tool_calls WHERE session_id LIKE 'codex:%' AND call_key IS NULL")[0][0]
    linked = rows(store, "SELECT count(*) FROM tool_calls WHERE linked_tool_call_id IS NOT NULL")[0][0]
    for gen in gens:
        assert per_session.get(gen.label["session_id"], 0) == gen.label["n_tool_calls"], gen.label["family"]
    assert unasked == 0
    assert linked == sum(g.label["n_mcp_calls"] for g in gens) > 0


def test_the_format_is_drawn_last_so_a_session_is_the_same_in_either_format():
    for index in range(12):
        claude = generate_session(7, index)
        either = generate_session(7, index, agent_formats={"codex": 0.5})
        assert claude.agent_format == "claude-code"
        assert claude.sim.totals() == either.sim.totals()
        assert {k: v for k, v in claude.label.items() if k not in ("session_id", "agent_format", "subagents")} == {
            k: v for k, v in either.label.items() if k not in ("session_id", "agent_format", "subagents")
        }
    formats = Counter(generate_session(7, i, agent_formats={"codex": 0.5}).agent_format for i in range(200))
    assert 70 < formats["codex"] < 130


def test_token_counts_run_on_and_every_call_has_its_output():
    gen = generate_session(3, 1, families=["pagination"], agent_formats={"codex": 1.0})
    lines = [json.loads(line) for line in codex_lines(gen.sim)]
    assert lines[0]["type"] == "session_meta" and lines[0]["payload"]["id"] == gen.sim.spec.session_uuid
    totals = [ln["payload"]["info"]["total_token_usage"]["total_tokens"] for ln in lines if ln["payload"].get("type") == "token_count"]
    assert totals == sorted(totals) and totals[-1] == gen.label["tokens"]["total_tokens"]
    calls = {ln["payload"]["call_id"] for ln in lines if ln["payload"].get("type") == "function_call"}
    outputs = {ln["payload"]["call_id"] for ln in lines if ln["payload"].get("type") == "function_call_output"}
    assert calls == outputs and len(calls) == gen.label["n_tool_calls"]


# --- OpenTelemetry -------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def otel_ingested(tmp_path_factory):
    """OTLP/JSON traces."""
    yield from ingest_corpus(tmp_path_factory, "otel")


def test_otel_traces_ingest_without_a_problem_and_total_exactly(otel_ingested):
    store, summary, gens = otel_ingested
    assert rows(store, "SELECT kind, message FROM ingest_problems") == []
    assert summary.lines_read == summary.lines_ok + summary.lines_skipped
    assert set(summary.skipped_by_rule) <= {"notification:notifications/initialized"}
    stored = {
        sid: (calls, uncached, cached, written, output)
        for sid, calls, uncached, cached, written, output in rows(
            store,
            """SELECT session_id, count(*), sum(input_tokens), sum(cache_read_tokens), sum(cache_write_5m_tokens + cache_write_1h_tokens),
                      sum(output_tokens) FROM llm_calls_dedup GROUP BY 1""",
        )
    }
    parents = dict(rows(store, "SELECT session_id, parent_session_id FROM sessions WHERE parent_session_id IS NOT NULL"))
    assert any(g.label["subagents"] for g in gens)
    for gen in gens:
        t = gen.label["tokens"]
        assert stored[gen.label["session_id"]] == (
            gen.label["n_requests"], t["input_tokens"], t["cache_read_tokens"], t["cache_write_5m_tokens"] + t["cache_write_1h_tokens"],
            t["output_tokens"],
        )  # fmt: skip
        for sub in gen.label["subagents"]:
            assert stored[sub["session_id"]][0] == sub["n_requests"]
            assert parents[sub["session_id"]] == gen.label["session_id"]


def test_otel_tool_calls_arrive_with_their_request_and_link_to_the_transcripts(otel_ingested):
    store, _, gens = otel_ingested
    per_session = dict(rows(store, "SELECT session_id, count(*) FROM tool_calls WHERE session_id LIKE 'otel:%' GROUP BY 1"))
    unasked = rows(store, "SELECT count(*) FROM tool_calls WHERE session_id LIKE 'otel:%' AND call_key IS NULL")[0][0]
    linked = rows(store, "SELECT count(*) FROM tool_calls WHERE linked_tool_call_id IS NOT NULL")[0][0]
    excerpts = rows(store, "SELECT count(*) FROM tool_calls WHERE session_id LIKE 'otel:%' AND result_excerpt IS NULL")[0][0]
    for gen in gens:
        assert per_session.get(gen.label["session_id"], 0) == gen.label["n_tool_calls"], gen.label["family"]
    assert unasked == 0 and excerpts == 0
    assert linked == sum(g.label["n_mcp_calls"] for g in gens) > 0


def test_one_export_request_per_request_and_one_per_agent():
    gen = generate_session(3, 1, families=["subagent"], agent_formats={"otel": 1.0})
    lines = [json.loads(line) for line in otel_lines(gen.sim)]
    spans = [sp for ln in lines for sp in ln["resourceSpans"][0]["scopeSpans"][0]["spans"]]
    ops = Counter(next(a["value"]["stringValue"] for a in sp["attributes"] if a["key"] == "gen_ai.operation.name") for sp in spans)
    n_requests = gen.label["n_requests"] + sum(s["n_requests"] for s in gen.label["subagents"])
    assert ops["chat"] == n_requests and ops["invoke_agent"] == 1 + len(gen.label["subagents"]) and len(lines) == n_requests + ops["invoke_agent"]
    assert len({sp["traceId"] for sp in spans}) == 1 and len({sp["spanId"] for sp in spans}) == len(spans)


def test_agent_format_shares_are_checked():
    with pytest.raises(ValueError, match="shares"):
        generate_session(1, 0, agent_formats={"gemini": 0.5})
    with pytest.raises(ValueError, match="shares"):
        generate_session(1, 0, agent_formats={"codex": 0.7, "otel": 0.6})


def test_the_simulator_cli_takes_format_shares(tmp_path, capsys):
    from tokaudit.simulate.__main__ import main as cli_main

    out = tmp_path / "mix"
    assert cli_main(["--out", str(out), "--sessions", "40", "--jobs", "1", "--agent-format", "codex=0.4", "--agent-format", "otel=0.3"]) == 0
    labels = json.loads((out / "labels.json").read_text())
    formats = Counter(lb["agent_format"] for lb in labels["sessions"])
    assert set(formats) == {"claude-code", "codex", "otel"} and labels["agent_formats"] == {"codex": 0.4, "otel": 0.3}
    assert all((out / folder).is_dir() for folder in ("projects", "codex", "otel", "mcp"))
    with pytest.raises(SystemExit):
        cli_main(["--out", str(tmp_path / "bad"), "--agent-format", "gemini=0.5"])
    assert "FORMAT=SHARE" in capsys.readouterr().err
