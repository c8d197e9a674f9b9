"""Measuring budgets: scope keys (subagent roll-up, tasks), sums against the usage report, unpriced cost, tool scopes."""

from __future__ import annotations

import pytest

from tests.conftest import FIXTURES
from tests.gate.logs import write_session
from tokaudit.config import parse_config
from tokaudit.gate.evaluate import build_measures, evaluate
from tokaudit.ingest.runner import ingest_paths
from tokaudit.store.engine import open_store

LOGS = [FIXTURES / "claude-code", FIXTURES / "codex"]


@pytest.fixture
def memory_store():
    store = open_store(":memory:")
    yield store
    store.close()


def verdicts(store, budgets: dict, tasks: list | None = None):
    config = parse_config({"budgets": budgets, "tasks": tasks or []})
    return {(v.budget, v.member): v for v in evaluate(store, config).verdicts}


def test_session_scope_rolls_subagents_up_and_sums_match_the_usage_report(memory_store):
    from tokaudit.analyze.usage import usage_report

    ingest_paths(memory_store, LOGS)
    got = verdicts(memory_store, {"session": {"cost_usd": {"fail": 100}, "requests": {"fail": 100}}, "run": {"cost_usd": {"fail": 100}}})
    sessions = {m: v.value for (b, m), v in got.items() if b == "session.cost_usd"}
    assert len(sessions) == 6  # 8 stored sessions: the Claude subagent and the Codex fork roll up
    parent = "claude-code:894af375-a52f-4d5a-a92d-9d9c279b1489"
    assert sessions[parent] == pytest.approx(0.1013763 + 0.01718)  # the session itself + its Haiku subagent
    assert got[("session.requests", parent)].value == 7 + 4
    total = float(usage_report(memory_store, by="model").to_dict()["totals"]["cost_usd"])
    assert got[("run.cost_usd", "all")].value == pytest.approx(total)
    assert sum(sessions.values()) == pytest.approx(total)


def test_tasks_come_from_rules_and_task_scope_sums_its_sessions(memory_store):
    ingest_paths(memory_store, LOGS)
    got = verdicts(
        memory_store,
        {"task": {"total_tokens": {"warn": 1}}, "session": {"total_tokens": {"warn": 1}}},
        tasks=[{"field": "cwd", "pattern": "/home/dev/([^/]+)"}],
    )
    tasks = {m: v.value for (b, m), v in got.items() if b == "task.total_tokens"}
    assert set(tasks) == {"api-server", "notes", "webapp"}
    assert sum(tasks.values()) == sum(v.value for (b, _), v in got.items() if b == "session.total_tokens")
    assert tasks["notes"] == 47188 + 456  # session D: input (all kinds) + output


def test_a_session_without_a_rule_is_unlabelled(memory_store):
    ingest_paths(memory_store, LOGS)
    got = verdicts(memory_store, {"task": {"requests": {"warn": 1000}}}, tasks=[{"field": "project", "pattern": "notes", "label": "notes"}])
    assert {m for (_, m) in got} == {"notes", "(unlabelled)"}


def test_unpriced_cost_is_a_lower_bound(tmp_path, memory_store):
    write_session(tmp_path, cwd="/w/a", requests=2)  # priced: 2 × $0.045
    write_session(tmp_path, cwd="/w/b", requests=1, model="acme-coder-9")  # no price known
    ingest_paths(memory_store, [tmp_path])
    got = verdicts(memory_store, {"session": {"cost_usd": {"fail": 1.0}}})
    unpriced = next(v for v in got.values() if v.value == 0)
    assert unpriced.verdict == "inconclusive" and "lower bound" in unpriced.note
    assert [v.verdict for v in got.values() if v.value] == ["pass"]
    config = parse_config({"budgets": {"run": {"cost_usd": [{"fail": 0.05}, {"fail": 1.0}, {"warn": 0.05}]}}})
    outcomes = [v.verdict for v in evaluate(memory_store, config).verdicts]
    # Known part $0.09: above a $0.05 fail level it fails whatever the rest costs; under $1 it could go either way;
    # above a warn level (with no fail level) it is at least a warning.
    assert outcomes == ["fail", "inconclusive", "warn"]


def test_a_model_budget_matches_by_glob_and_reports_no_match(memory_store):
    ingest_paths(memory_store, LOGS)
    got = verdicts(memory_store, {"model": {"requests": [{"match": "claude-*", "fail": 100}, {"match": "gemini-*", "fail": 1}]}})
    claude = sorted(m for (b, m) in got if b == "model[claude-*].requests")
    assert claude == ["claude-haiku-4-5-20251001", "claude-opus-4-5-20251101", "claude-sonnet-4-5-20250929"]
    nothing = got[("model[gemini-*].requests", "gemini-*")]
    assert nothing.verdict == "inconclusive" and nothing.note == "no model matched 'gemini-*'"


def test_tool_and_server_scopes_point_at_the_attacking_server(tmp_path, memory_store):
    from tokaudit.simulate import generate_session
    from tokaudit.simulate.writers import write_session as write_simulated

    gen = generate_session(20260301, 1, families=["counter_loop"])
    write_simulated(tmp_path, gen.sim, gen.slug)
    ingest_paths(memory_store, [tmp_path])
    server = gen.label["attack_server"]
    tool = f"{server}/{gen.label['attack_tool']}"
    budgets = {
        "mcp_server": {"same_tool_chain": {"fail": 15}, "replay_cost_usd": {"warn": 0}, "findings": {"min_severity": "medium", "fail": 0}},
        "tool": {"tool_calls": {"warn": 1000}},
    }
    got = verdicts(memory_store, budgets)
    assert got[("mcp_server.same_tool_chain", server)].verdict == "fail"
    assert got[("mcp_server.findings>=medium", server)].value >= 1
    replay = {m: v.value for (b, m), v in got.items() if b == "mcp_server.replay_cost_usd"}
    assert max(replay, key=replay.get) == server
    assert got[("tool.tool_calls", tool)].value >= gen.label["attack_requests"]


def test_measures_keep_every_session_file(memory_store):
    ingest_paths(memory_store, LOGS)
    measures = build_measures(memory_store, parse_config({}), with_findings=False)
    sub = "claude-code:894af375-a52f-4d5a-a92d-9d9c279b1489:agent-a802f38266558e95a"
    assert measures.session_files[sub].endswith("agent-a802f38266558e95a.jsonl")
    assert sub not in set(measures.sessions["session"].to_list())
