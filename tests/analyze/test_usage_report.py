"""usage_report's totals and notes when a log holds no usage, or reports reasoning for some requests only."""

from __future__ import annotations

import json
from datetime import date

from tests.ingest.helpers import claude_assistant, codex_line, codex_tokens
from tokaudit.analyze.usage import usage_report
from tokaudit.ingest.runner import ingest_paths


def write(path, *objs):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(o, separators=(",", ":")) + "\n" for o in objs))


META = codex_line("session_meta", {"id": "019c0000-0000-7000-8000-000000000001", "timestamp": "2026-03-10T10:00:00.000Z", "cwd": "/w"})


def test_a_session_without_requests_is_noted_and_the_totals_are_zero(store, tmp_path):
    write(tmp_path / "sessions" / "rollout-2026-03-10T10-00-00-019c0000-0000-7000-8000-000000000001.jsonl", META)
    ingest_paths(store, [tmp_path])
    report = usage_report(store, by="session")
    assert report.rows == [] and set(report.totals.values()) == {0}
    assert any("1 session in the store had no model requests" in n for n in report.notes)


def test_reasoning_reported_for_some_requests_only_says_what_its_total_covers(store, tmp_path):
    write(tmp_path / "projects" / "p" / "s1.jsonl", claude_assistant("msg_A", "req_1", out=300, stop="end_turn"))
    write(tmp_path / "sessions" / "rollout-2026-03-10T10-00-00-019c0000-0000-7000-8000-000000000001.jsonl", META,
          codex_line("turn_context", {"model": "gpt-5-codex", "cwd": "/w"}), codex_tokens((1000, 800, 200, 50), (1000, 800, 200, 50)))
    ingest_paths(store, [tmp_path])
    report = usage_report(store, by="model")
    assert report.totals["calls"] == 2 and report.totals["reasoning_tokens"] == 50
    assert any("reasoning is reported for 1 of 2 requests" in n for n in report.notes)
    assert not any("no model requests" in n for n in report.notes)


def test_a_cost_the_logs_state_is_shown_beside_tokaudits_own_and_only_where_one_is_stated(store, tmp_path):
    call = {"tokaudit": 1, "type": "llm_call", "session_id": "run-1", "model": "gpt-5", "provider": "openai", "input_tokens": 1000,
            "output_tokens": 100}
    write(tmp_path / "run-1.jsonl", {"tokaudit": 1, "type": "session", "ts": "2026-03-12T09:00:00Z", "session_id": "run-1", "agent": "acme"},
          {**call, "ts": "2026-03-12T09:00:01Z", "call_key": "1", "reported_cost_usd": 0.25},
          {**call, "ts": "2026-03-12T09:00:02Z", "call_key": "2", "reported_cost_usd": 0.5},
          {**call, "ts": "2026-03-12T09:00:03Z", "call_key": "3"})
    ingest_paths(store, [tmp_path])
    report = usage_report(store, by="session")
    (row,) = report.rows
    assert float(row["reported_cost_usd"]) == 0.75 and float(row["cost_usd"]) < 0.75  # its own price of the tokens, apart
    assert report.columns.index("reported_cost_usd") == report.columns.index("cost_usd") + 1
    assert any("what the logs themselves state for 2 of 3 requests" in n for n in report.notes)
    # A log that states no cost adds no column.
    assert "reported_cost_usd" not in usage_report(store, by="session", since=date(2026, 3, 13)).columns
