"""tokaudit's per-day and per-session totals against ccusage 20.0.24's, kept as JSON files.

Tokens must be equal; cost within 1% (genai-prices and ccusage's LiteLLM table
can differ on rounding and on long-context tier rules).
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import pytest

from tests.conftest import FIXTURES, load_json
from tokaudit.analyze.usage import usage_report
from tokaudit.ingest.runner import ingest_paths
from tokaudit.store import open_store

CASES = {
    "fixtures": (lambda s: FIXTURES / "claude-code", lambda s: FIXTURES / "codex", FIXTURES / "expected" / "ccusage"),
    "samples": (lambda s: s / "claude-code", lambda s: s / "codex", None),
}


def _expected_dir(case: str, samples_root: Path | None) -> Path:
    return CASES[case][2] or samples_root / "expected-ccusage"


@pytest.fixture(params=list(CASES))
def case(request, tmp_path):
    name = request.param
    root = None
    if name == "samples":
        root = request.getfixturevalue("samples")
    claude, codex, _ = CASES[name]
    store = open_store(str(tmp_path / f"{name}.duckdb"))
    claude_summary = ingest_paths(store, [claude(root)])
    codex_summary = ingest_paths(store, [codex(root)])
    assert claude_summary.lines_problem == 0 and codex_summary.lines_problem == 0
    yield name, store, _expected_dir(name, root)
    store.close()


def _by_day(store, provider_sql: str) -> dict[str, tuple]:
    rows = store.duck.execute(
        f"""SELECT strftime(ts_utc, '%Y-%m-%d'), sum(input_tokens), sum(cache_write_5m_tokens + cache_write_1h_tokens),
                   sum(cache_read_tokens), sum(output_tokens), sum(coalesce(reasoning_tokens, 0))
            FROM llm_calls_dedup WHERE {provider_sql} GROUP BY 1 ORDER BY 1"""
    ).fetchall()
    return {r[0]: tuple(r[1:]) for r in rows}


def test_claude_daily_tokens_equal_ccusage(case):
    _, store, expected_dir = case
    expected = {
        d["date"]: (d["inputTokens"], d["cacheCreationTokens"], d["cacheReadTokens"], d["outputTokens"], 0)
        for d in load_json(expected_dir / "claude-daily.json")["daily"]
    }
    assert _by_day(store, "provider = 'anthropic'") == expected


def test_codex_daily_tokens_equal_ccusage(case):
    _, store, expected_dir = case
    expected = {
        d["date"]: (d["inputTokens"], d["cacheCreationTokens"], d["cacheReadTokens"], d["outputTokens"], d["reasoningOutputTokens"])
        for d in load_json(expected_dir / "codex-daily.json")["daily"]
    }
    assert _by_day(store, "provider <> 'anthropic'") == expected


def test_daily_cost_within_one_percent_of_ccusage(case):
    _, store, expected_dir = case
    expected: dict[str, float] = defaultdict(float)
    for d in load_json(expected_dir / "claude-daily.json")["daily"]:
        expected[d["date"]] += d["totalCost"]
    for d in load_json(expected_dir / "codex-daily.json")["daily"]:
        expected[d["date"]] += d["costUSD"]
    report = usage_report(store, by="day")
    got = {r["day"]: float(r["cost_usd"]) for r in report.rows}
    assert set(got) == set(expected)
    for day, cost in expected.items():
        assert got[day] == pytest.approx(cost, rel=0.01), day
    assert report.unpriced_models == []


def test_session_totals_equal_ccusage(case):
    """ccusage names a session after its file (a subagent file after its parent's folder)."""
    _, store, expected_dir = case
    rows = store.duck.execute(
        """SELECT s.path, sum(c.input_tokens), sum(c.cache_write_5m_tokens + c.cache_write_1h_tokens),
                  sum(c.cache_read_tokens), sum(c.output_tokens)
           FROM llm_calls_dedup AS c JOIN sources AS s USING (source_id)
           WHERE c.provider = 'anthropic' GROUP BY 1"""
    ).fetchall()
    got: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0, 0])
    for path, *tokens in rows:
        p = Path(path)
        key = p.parent.parent.name if p.parent.name == "subagents" else p.stem
        got[key] = [a + b for a, b in zip(got[key], tokens)]
    expected = {
        s["sessionId"]: [s["inputTokens"], s["cacheCreationTokens"], s["cacheReadTokens"], s["outputTokens"]]
        for s in load_json(expected_dir / "claude-session.json")["sessions"]
    }
    assert dict(got) == expected
