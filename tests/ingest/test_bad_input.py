"""The malformed fixture files: each line ends up where fixtures/README.md says it should."""

from __future__ import annotations

import pytest

from tests.conftest import FIXTURES, load_json
from tokaudit.ingest.runner import ingest_paths

HAND = load_json(FIXTURES / "expected" / "hand-totals.json")["bad"]


@pytest.mark.parametrize("name", sorted(HAND))
def test_bad_file_accounting_and_totals(store, name):
    summary = ingest_paths(store, [FIXTURES / "bad" / name])
    expected = HAND[name]
    assert sorted(p.line_no for _, p in summary.problems) == expected["problem_lines"]
    assert summary.lines_pending == len(expected["pending_partial_lines"])
    last_complete = max(expected["pending_partial_lines"]) - 1
    assert summary.lines_read == last_complete
    got = store.duck.execute(
        "SELECT count(*), sum(input_tokens), sum(cache_read_tokens), sum(output_tokens), sum(reasoning_tokens) FROM llm_calls_dedup"
    ).fetchall()[0]
    total = expected["total"]
    assert got == (total.get("requests", total.get("calls")), total["input_tokens"], total["cache_read_tokens"], total["output_tokens"], total["reasoning_tokens"])


def test_problem_excerpts_are_short_and_redacted(store, tmp_path):
    path = tmp_path / "leaky.jsonl"
    path.write_bytes(b'{"type":"assistant","sessionId":"s","message":"Authorization: Bearer sk-ant-api03-abcdefghijklmnop" \n')
    ingest_paths(store, [path], forced_format="claude-code")
    (excerpt,) = store.duck.execute("SELECT excerpt FROM ingest_problems").fetchall()[0]
    assert "abcdefghijklmnop" not in excerpt and "[REDACTED]" in excerpt
    assert len(excerpt) <= 200


def test_deeply_nested_json_is_a_problem_not_a_crash():
    from tokaudit.ingest import claude_code, codex
    from tokaudit.ingest.base import Line

    deep = b"[" * 5000
    cases = [
        (claude_code, b'{"type":"assistant","sessionId":"s","message":{"id":"m","content":[{"type":"text","text":' + deep + b"}]}}"),
        (codex, b'{"timestamp":"2026-01-01T00:00:00Z","type":"response_item","payload":{"type":"function_call_output","call_id":"c","output":' + deep + b"}}"),
    ]
    for module, data in cases:
        result = module.parse([Line(1, 0, data)], path="/x/projects/p/s.jsonl", state=None)
        assert [p.kind for p in result.problems] == ["too-deep"] and result.lines_read == 1
