"""Tool and MCP-server usage rows: totals agree with the rows they sum (a DuckDB optimizer bug once broke them)."""

from __future__ import annotations

import pytest

from tests.conftest import FIXTURES
from tokaudit.analyze.usage import usage_report
from tokaudit.ingest.runner import ingest_paths
from tokaudit.store.queries import tool_calls_sql


def test_mcp_server_totals_equal_the_tool_rows(store):
    ingest_paths(store, [FIXTURES / "mcp-jsonrpc", FIXTURES / "mcp-desktop"], workers=1)
    report = usage_report(store, by="mcp-server")
    want = store.duck.execute(f"SELECT count(*), sum(result_bytes), sum(args_bytes) FROM ({tool_calls_sql()})").fetchall()[0]
    assert (report.totals["calls"], report.totals["result_bytes"], report.totals["args_bytes"]) == want
    assert all(r["result_bytes"] is None or r["result_bytes"] >= 0 for r in report.rows)


def test_desktop_calls_logged_in_two_files_count_once(store, tmp_path):
    # Claude Desktop writes a server's traffic to mcp-server-NAME.log and again to mcp.log.
    server_log = (FIXTURES / "mcp-desktop" / "mcp-server-filesystem.log").read_bytes()
    (tmp_path / "mcp-server-filesystem.log").write_bytes(server_log)
    (tmp_path / "mcp.log").write_bytes(server_log)
    ingest_paths(store, [tmp_path], workers=1)
    stored, distinct = store.duck.execute("SELECT count(*), count(DISTINCT (session_id, tool_call_id)) FROM tool_calls").fetchall()[0]
    counted = store.duck.execute(f"SELECT count(*) FROM ({tool_calls_sql()})").fetchall()[0][0]
    assert stored == 2 * distinct and counted == distinct > 0


def test_mcp_calls_whose_log_names_no_server_are_a_row_of_their_own(store):
    """OpenHands logs an MCP call without its server: it is an MCP call all the same, not one of the agent's own tools."""
    ingest_paths(store, [FIXTURES / "openhands" / "trajectories" / "trajectory-qwen-mcp-capped.json"], workers=1)
    rows = {r["mcp_server"]: r["calls"] for r in usage_report(store, by="mcp-server").rows}
    mcp_calls = store.duck.execute(f"SELECT count(*) FROM ({tool_calls_sql()}) WHERE tool_kind = 'mcp'").fetchall()[0][0]
    assert mcp_calls > 0 and rows.get("(unnamed MCP server)") == mcp_calls
    assert rows.get("(not MCP)", 0) == sum(rows.values()) - mcp_calls


def test_requests_without_a_timestamp_list_their_model_as_unpriced(store):
    # SWE-agent runs carry totals but no time: they cannot be priced by date, so they are listed.
    ingest_paths(store, [FIXTURES / "swe-agent"], workers=1)
    report = usage_report(store, by="model")
    assert report.unpriced_models and all("without a timestamp" in m for m in report.unpriced_models)
    assert report.totals["unpriced_calls"] == report.totals["calls"]


def test_an_override_prices_requests_without_a_timestamp(store):
    """An override has no date, so it prices a model's requests whether or not the log timed them."""
    from decimal import Decimal

    from tokaudit.config import Config, PriceOverride

    ingest_paths(store, [FIXTURES / "swe-agent"], workers=1)
    models = [r["model"] for r in usage_report(store, by="model").rows if r["model"] != "(model not logged)"]
    overrides = {m: PriceOverride(m, input_mtok=Decimal(2), output_mtok=Decimal(8)) for m in models}
    report = usage_report(store, by="model", config=Config(price_overrides=overrides))
    assert models and all(m.startswith("(model not logged)") for m in report.unpriced_models)  # a run that names no model stays unpriced
    rows = [r for r in report.rows if r["model"] in models]
    assert len(rows) == len(models)
    for row in rows:
        # SWE-agent logs no cache split: every input token is priced as input.
        want = (2 * (row["input_tokens"] + row["cache_read_tokens"] + row["cache_write_tokens"]) + 8 * row["output_tokens"]) / 1e6
        assert float(row["cost_usd"]) == pytest.approx(want) and want > 0


def test_a_result_whose_call_the_log_does_not_hold_is_counted_under_no_tool_name(store, tmp_path):
    """A transcript cut or resumed after a call keeps its result: counted, not dropped, and named for what it is."""
    import json

    from tests.ingest.helpers import claude_assistant, claude_user_result

    lines = [claude_user_result("toolu_before", "output of a call logged elsewhere"),
             claude_assistant(stop="tool_use", blocks=[{"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "ls"}}]),
             claude_user_result("toolu_1", "a.py")]
    folder = tmp_path / "projects" / "p"
    folder.mkdir(parents=True)
    (folder / "s1.jsonl").write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    ingest_paths(store, [folder], workers=1)
    rows = {r["tool"]: r for r in usage_report(store, by="tool").rows}
    assert set(rows) == {"Bash", "(no tool name)"} and rows["(no tool name)"]["calls"] == 1
