"""Reports over the bundled fixtures: numbers agree with `tokaudit usage` and the audit's frames; every output format."""

from __future__ import annotations

import csv
import json
import re
from datetime import date, datetime

import polars as pl
import pytest

from tokaudit.analyze.frames import load_frames
from tokaudit.analyze.replay import attribution
from tokaudit.analyze.usage import usage_report
from tokaudit.config import Config
from tokaudit.errors import TokauditError
from tokaudit.report import model
from tokaudit.report.build import build_report, parse_formats, refresh_index, write_dated_report
from tokaudit.report.data import Window, load_report_data, parse_last, resolve_window, window_totals
from tokaudit.report.export import SCHEMA_FILE, report_dict
from tokaudit.report.model import summarize


def _report(store, window: Window | None = None):
    return summarize(load_report_data(store, Config(), window or Window()), generated_at_utc=datetime(2026, 3, 20, 12, 0))


def test_headline_equals_usage_totals(fixtures_store):
    report = _report(fixtures_store)
    totals = usage_report(fixtures_store, by="day").totals
    h = report.headline
    for key in ("input_tokens", "cache_write_tokens", "cache_read_tokens", "output_tokens", "total_tokens"):
        assert h[key] == totals[key], key
    assert h["requests"] == totals["calls"]
    assert h["unpriced_requests"] == totals["unpriced_calls"] > 0
    assert h["cost_usd"] == pytest.approx(float(totals["cost_usd"]), rel=1e-9)
    assert h["unpriced_models"] and "(model not logged)" in h["unpriced_models"]
    assert 0 < h["cache_hit_rate"] < 1 and h["effective_input_usd_per_mtok"] > 0
    assert h["cost_per_conversation_p50_usd"] <= h["cost_per_conversation_p95_usd"]
    assert h["subagent_sessions"] > 0 and h["conversations"] == h["sessions"] - h["subagent_sessions"]


def test_breakdowns_add_up_to_the_headline(fixtures_store):
    report = _report(fixtures_store)
    for frame in (report.by_model, report.by_project, report.by_agent):
        assert frame["cost_usd"].sum() == pytest.approx(report.headline["cost_usd"])
        assert frame["total_tokens"].sum() == report.headline["total_tokens"]
    assert report.spend_tree["cost_usd"].sum() == pytest.approx(report.headline["cost_usd"])
    assert report.time_series["requests"].sum() <= report.headline["requests"]  # requests without a time have no period
    by_model = usage_report(fixtures_store, by="model").rows
    assert {r["model"]: r["calls"] for r in by_model} == dict(report.by_model.select("model", "requests").iter_rows())


def test_window_and_deltas_equal_usage_over_each_window(fixtures_store):
    window = Window(date(2026, 3, 11), date(2026, 3, 12))
    report = _report(fixtures_store, window)
    now = usage_report(fixtures_store, by="day", since=window.since, until=window.until).totals
    before = usage_report(fixtures_store, by="day", since=date(2026, 3, 9), until=date(2026, 3, 10)).totals
    assert report.headline["total_tokens"] == now["total_tokens"]
    assert report.headline["cost_usd"] == pytest.approx(float(now["cost_usd"]))
    cost = report.deltas["cost_usd"]
    assert cost["previous"] == pytest.approx(float(before["cost_usd"])) and cost["current"] == pytest.approx(float(now["cost_usd"]))
    assert report.deltas["total_tokens"]["change"] == now["total_tokens"] - before["total_tokens"]
    assert report.deltas["requests"]["previous"] == before["calls"]
    assert window_totals(fixtures_store, Config(), window)["requests"] == now["calls"]


def test_turns_and_tool_estimates_match_the_audit_frames(fixtures_store):
    report = _report(fixtures_store)
    frames = load_frames(fixtures_store)
    ours = {(r["session_id"], r["turn"]): (r["ts_utc"], r["input_tokens"], r["output_tokens"]) for r in report.frames.calls.iter_rows(named=True)}
    theirs = {(r["session_id"], r["turn"]): (r["ts_utc"], r["input_tokens"], r["output_tokens"]) for r in frames.calls.iter_rows(named=True)}
    assert ours == theirs
    per_turn = ["session_id", "turn"]
    # Result tokens are compared where they are not the bytes/4 heuristic: the frames round it,
    # `tokaudit usage --by tool` (whose SQL the report shares) rounds it up.
    exact = pl.col("result_tokens_method").is_null() | ~pl.col("result_tokens_method").str.starts_with("heuristic")
    agg = [pl.len(), pl.col("args_tokens").sum(), pl.col("result_tokens").filter(exact).sum(), pl.col("result_tokens_method").sort().str.join(",")]
    mine = report.frames.tools.group_by(per_turn).agg(*agg).sort(per_turn)
    audit = frames.tools.group_by(per_turn).agg(*agg).sort(per_turn)
    assert mine.rows() == audit.rows()


def test_tool_rollups_equal_replay_attribution(fixtures_store):
    report = _report(fixtures_store)
    for by, table, key in (("tool", report.tools, "tool"), ("mcp-server", report.mcp_servers, "mcp_server")):
        want = attribution(report.frames, by=by)
        got = table.filter(pl.col(key).is_in(want[key].to_list()))
        assert got.height == want.height
        joined = got.join(want, on=key, suffix="_want")
        for col in ("direct_tokens", "replay_tokens", "partly_unpriced"):
            assert joined[col].to_list() == joined[f"{col}_want"].to_list(), col
        for col in ("direct_usd", "replay_usd", "replay_share"):
            assert joined[col].to_list() == pytest.approx(joined[f"{col}_want"].to_list()), col
    assert report.tools["calls"].sum() == report.headline["tool_calls"]
    servers = usage_report(fixtures_store, by="mcp-server").rows
    assert {r["mcp_server"]: r["calls"] for r in servers} == dict(report.mcp_servers.select("mcp_server", "calls").iter_rows())


def test_top_sessions_and_drilldowns(fixtures_store):
    report = _report(fixtures_store)
    costs = report.top_by_cost["cost_usd"].to_list()
    assert costs == sorted(costs, reverse=True) and len(costs) == model.TOP_SESSIONS
    assert all(report.drilldown_anchor(s) for s in report.top_by_cost["session_id"])
    assert all(n > 0 for n in report.top_by_excess["findings"])
    d = report.drilldowns[0]
    assert d.turns.height == report.top_by_cost["requests"][0]
    assert d.turns["tool_calls"].sum() == report.top_by_cost["tool_calls"][0]


def test_json_document_follows_its_schema(fixtures_store, tmp_path):
    jsonschema = pytest.importorskip("jsonschema")
    result = build_report(fixtures_store, tmp_path / "out", formats="json")
    doc = json.loads(result.files["json"].read_text(encoding="utf-8"))
    jsonschema.validate(doc, json.loads(SCHEMA_FILE.read_text(encoding="utf-8")))
    assert doc["headline"]["requests"] == result.report.headline["requests"]
    assert doc["audit_run"]["audit_run_id"] == 1 and doc["findings_summary"]["total"] == len(doc["findings"])
    assert doc["problems"]["total"] == sum(doc["problems"]["by_kind"].values()) > 0


def test_every_format_is_written(fixtures_store, tmp_path):
    result = build_report(fixtures_store, tmp_path / "out", formats="html,md,json,csv,parquet")
    html = result.files["html"].read_text(encoding="utf-8")
    assert html.startswith("<!DOCTYPE html>") and len(html) > 3_000_000  # plotly.js is inside
    assert not re.search(r"<(script|link|img|iframe)\b[^>]*\b(src|href)\s*=", html, re.IGNORECASE)  # nothing loaded from elsewhere
    assert "default-src 'none'" in html
    assert html.count('class="plot"') == 4 + len(result.report.drilldowns)
    md = result.files["md"].read_text(encoding="utf-8")
    assert "## tokaudit report" in md and "### Top sessions by cost" in md and len(md) < 8000  # fits a PR comment
    names = {p.stem for p in result.files["parquet"]}
    assert names == {"requests", "tool_calls", "sessions", "daily", "by_model", "by_project", "by_agent", "tools", "mcp_servers", "findings"}
    requests = pl.read_parquet(next(p for p in result.files["parquet"] if p.stem == "requests"))
    assert requests["requests"].sum() == result.report.headline["requests"]
    tool_calls = pl.read_parquet(next(p for p in result.files["parquet"] if p.stem == "tool_calls"))
    assert tool_calls["replay_tokens"].sum() == result.report.tools["replay_tokens"].sum()
    assert tool_calls.height == result.report.headline["tool_calls"]  # calls no request asked for are exported too
    with open(next(p for p in result.files["csv"] if p.stem == "sessions"), newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == result.report.sessions.height


def test_csv_cells_that_look_like_formulas_are_defused(tmp_path):
    from tokaudit.report.export import _defuse_formulas

    df = pl.DataFrame({"tool": ["=HYPERLINK(\"http://x\")", "+1", "-2", "@SUM(A1)", "ok", None], "n": [-1, 2, 3, 4, 5, 6]})
    out = _defuse_formulas(df)
    assert out["tool"].to_list() == ["'=HYPERLINK(\"http://x\")", "'+1", "'-2", "'@SUM(A1)", "ok", None]
    assert out["n"].to_list() == df["n"].to_list()


def test_the_table_export_defuses_cells_by_the_same_rule_as_every_other_csv():
    from tokaudit.report.export import _defuse_formulas
    from tokaudit.report.numbers import csv_cell

    cells = ["\r=cmd", "\n+1", "a\r\nb", "\t@x", "=1\n=2", "plain", "-", "'quoted"]
    out = _defuse_formulas(pl.DataFrame({"tool": cells}))
    assert out["tool"].to_list() == [csv_cell(c) for c in cells]
    assert not any("\n" in c or "\r" in c for c in out["tool"].to_list())


def test_empty_store_gives_an_empty_report(store, tmp_path):
    result = build_report(store, tmp_path / "empty", formats="html,md,json")
    assert result.report.headline["requests"] == 0 and result.report.drilldowns == []
    assert "No sessions in this window" in result.files["html"].read_text(encoding="utf-8")


def test_dated_reports_and_index(fixtures_store, tmp_path):
    root = tmp_path / "reports"
    first = write_dated_report(fixtures_store, root, since=date(2026, 3, 10), until=date(2026, 3, 10), today=date(2026, 3, 11))
    second = write_dated_report(fixtures_store, root, formats="md", today=date(2026, 3, 12))
    assert first.out_dir == root / "2026-03-11" and (second.out_dir / "report.json").is_file()  # json always, for the index
    (root / "2026-03-13").mkdir()
    (root / "2026-03-13" / "report.json").write_text('{"headline": "<script>alert(1)</script>"', encoding="utf-8")
    (root / "not-a-date").mkdir()
    index = refresh_index(root).read_text(encoding="utf-8")
    assert index.index("2026-03-13") < index.index("2026-03-12") < index.index("2026-03-11")  # newest first
    assert "report.json unreadable" in index and "<script>" not in index and "not-a-date" not in index
    assert 'href="2026-03-11/report.html"' in index and 'href="2026-03-12/report.html"' not in index


def test_model_helpers():
    df = pl.DataFrame({"k": ["a", "b", "c", "d"], "v": [1.0, 4.0, 3.0, None], "m": ["x", "y", "y, z", None]})
    assert model.top_n(df, "k", "v", 2, ["v", "m"]).rows() == [("b", 4.0, "y"), ("c", 3.0, "y, z"), (model.OTHER, 1.0, "x")]
    assert model.deltas({"requests": 5}, {"requests": 0})["requests"]["change_pct"] is None
    assert model.deltas({"requests": 5}, None) == {}
    assert parse_last("1d") == 1 and parse_last(" 3W ") == 21
    for bad in ("0d", "7", "7h", "-1d"):
        with pytest.raises(TokauditError):
            parse_last(bad)
    w = resolve_window(None, None, "7d", date(2026, 3, 14))
    assert (w.since, w.until, w.days) == (date(2026, 3, 8), date(2026, 3, 14), 7)
    assert w.previous() == Window(date(2026, 3, 1), date(2026, 3, 7))
    assert Window(date(2026, 3, 1), None).previous() is None
    with pytest.raises(TokauditError):
        resolve_window(date(2026, 3, 1), None, "7d", date(2026, 3, 14))
    with pytest.raises(TokauditError):
        resolve_window(date(2026, 3, 2), date(2026, 3, 1), None, date(2026, 3, 14))
    assert parse_formats("HTML, md,html") == ("html", "md")
    with pytest.raises(TokauditError):
        parse_formats("pdf")


def test_session_excess_is_the_largest_finding_not_the_sum():
    calls = pl.DataFrame(
        {
            "session_id": ["s"], "project": ["p"], "agent": ["a"], "conversation": ["s"], "model": ["m"], "ts_utc": [datetime(2026, 3, 1)],
            "cost_usd": [1.0], "requests": [1], "input_tokens": [1], "cache_write_5m_tokens": [0], "cache_write_1h_tokens": [0],
            "cache_read_tokens": [0], "output_tokens": [1], "input_total_tokens": [1],
        }
    )  # fmt: skip
    tools = pl.DataFrame({"session_id": ["s"], "is_error": [False]})
    findings = [
        {"session_id": "s", "excess_usd": 0.5, "excess_tokens": 100, "severity": "medium"},
        {"session_id": "s", "excess_usd": 0.75, "excess_tokens": 80, "severity": "high"},
    ]
    row = model.session_table(calls, tools, findings).row(0, named=True)
    assert (row["excess_usd"], row["excess_tokens"], row["findings"], row["max_severity"]) == (0.75, 100, 2, "high")


def test_long_sessions_are_bucketed_in_drilldowns():
    n = model.MAX_TURN_POINTS * 3 + 7
    calls = pl.DataFrame(
        {
            "turn": list(range(n)), "input_tokens": [1] * n, "cache_read_tokens": list(range(n)), "cache_write_5m_tokens": [2] * n,
            "cache_write_1h_tokens": [0] * n, "output_tokens": [3] * n, "cost_usd": [0.001] * n,
        }
    )  # fmt: skip
    tools = pl.DataFrame({"turn": [0, 5, n - 1], "is_error": [False, True, False], "tool_key": ["a", "b", "c"]})
    d = model._drilldown("s-1", {"session_id": "s"}, calls, tools, [])
    assert d.bucket_turns == 4 and d.turns.height <= model.MAX_TURN_POINTS
    assert d.turns["tool_calls"].sum() == 3 and d.turns["tool_errors"].sum() == 1  # no tool call disappears
    assert d.turns["cost_usd"].sum() == pytest.approx(0.001 * n)


def test_report_dict_has_no_nan_and_is_plain_json(fixtures_store):
    doc = report_dict(_report(fixtures_store))
    text = json.dumps(doc, allow_nan=False, default=str)
    assert json.loads(text)["schema"] == "tokaudit.report/1"
