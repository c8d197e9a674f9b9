"""usage_report's totals and notes when a log holds no usage, or reports reasoning for some requests only."""

from __future__ import annotations

import json

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
