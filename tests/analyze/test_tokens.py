"""Self-calibrated token estimates: fits recover a known relation, implausible fits are refused, reports use them."""

from __future__ import annotations

import json
import random

import pytest

from tests.ingest.helpers import claude_assistant, claude_user_result
from tokaudit.analyze.tokens import calibrate, single_tool_steps
from tokaudit.analyze.usage import usage_report
from tokaudit.ingest.runner import ingest_paths


def _session(tmp_path, *, tokens_per_byte: float, args_tokens_per_byte: float, overhead: int, steps: int = 60, seed: int = 7):
    """A Claude Code session whose context grows by exactly the given relation over each tool step."""
    rng = random.Random(seed)
    lines, context = [], 10_000
    for i in range(steps):
        result = "r" * rng.randint(50, 5000)
        args = {"command": "x" * rng.randint(10, 800)}
        args_bytes = len(json.dumps(args, separators=(",", ":")))
        ts = f"2026-03-10T10:{i // 60:02d}:{i % 60:02d}.000Z"
        block = {"type": "tool_use", "id": f"toolu_{i}", "name": "Bash", "input": args}
        lines.append(claude_assistant(f"msg_{i}", f"req_{i}", inp=0, cw=0, cr=context, blocks=[block], ts=ts, stop="tool_use"))
        lines.append(claude_user_result(f"toolu_{i}", result, ts=ts.replace(".000Z", ".500Z")))
        context += round(tokens_per_byte * len(result) + args_tokens_per_byte * args_bytes + overhead)
    lines.append(claude_assistant("msg_end", "req_end", inp=0, cw=0, cr=context, ts="2026-03-10T11:59:00.000Z", stop="end_turn"))
    folder = tmp_path / "projects" / "p"
    folder.mkdir(parents=True)
    (folder / "s1.jsonl").write_text("\n".join(json.dumps(x, separators=(",", ":")) for x in lines) + "\n")
    return folder


def test_fit_recovers_a_known_relation_and_reports_use_it(store, tmp_path):
    ingest_paths(store, [_session(tmp_path, tokens_per_byte=0.31, args_tokens_per_byte=0.42, overhead=60)])
    steps = single_tool_steps(store)
    assert len(steps) == 60
    fits = {(f.model_family, f.content_type): f for f in calibrate(store)}
    fit = fits[("claude", "text")]
    assert fit.tokens_per_byte == pytest.approx(0.31, abs=0.005)
    assert fit.args_tokens_per_byte == pytest.approx(0.42, abs=0.02)
    assert fit.overhead_tokens == pytest.approx(60, abs=8)
    assert fit.samples + fit.held_out == 60 and fit.held_out > 0
    assert fit.median_rel_error < 0.01 < fit.heuristic_median_rel_error
    report = usage_report(store, by="tool")
    (row,) = report.rows
    assert row["result_tokens_methods"] == "calibrated:claude/text"
    assert row["result_tokens"] == pytest.approx(0.31 * row["result_bytes"], rel=0.02)


def test_implausible_fit_is_refused_and_not_saved(store, tmp_path):
    # Sizes that cannot match the usage (as in logs whose text was redacted): 3 tokens per byte.
    ingest_paths(store, [_session(tmp_path, tokens_per_byte=3.0, args_tokens_per_byte=0.0, overhead=0)])
    fits = calibrate(store)
    assert fits and all(f.rejected for f in fits)
    assert store.duck.execute("SELECT count(*) FROM token_fits").fetchall()[0][0] == 0
    (row,) = usage_report(store, by="tool").rows
    assert row["result_tokens_methods"] == "heuristic:bytes/4"


def test_too_few_steps_give_no_fit(store, tmp_path):
    ingest_paths(store, [_session(tmp_path, tokens_per_byte=0.3, args_tokens_per_byte=0.3, overhead=10, steps=5)])
    assert calibrate(store) == []


def test_compaction_between_requests_excludes_the_step(store, tmp_path):
    folder = _session(tmp_path, tokens_per_byte=0.3, args_tokens_per_byte=0.3, overhead=10, steps=3)
    path = folder / "s1.jsonl"
    lines = path.read_text().splitlines()
    compact = {"type": "system", "subtype": "compact_boundary", "sessionId": "s1", "timestamp": "2026-03-10T10:00:00.700Z",
               "uuid": "c1", "compactMetadata": {"trigger": "auto", "preTokens": 1000}}
    lines.insert(2, json.dumps(compact))
    path.write_text("\n".join(lines) + "\n")
    ingest_paths(store, [folder])
    assert store.duck.execute("SELECT count(*) FROM session_events WHERE kind = 'compaction'").fetchall()[0][0] == 1
    assert len(single_tool_steps(store)) == 2
