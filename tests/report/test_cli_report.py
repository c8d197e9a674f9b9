"""`tokaudit report` and the scheduled audit (`tokaudit audit --ingest ... --report DIR`): files, layout, exit codes."""

from __future__ import annotations

import json

from click.testing import CliRunner

from tests.conftest import FIXTURES
from tokaudit.cli import cli


def run(*args, expect=0):
    result = CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)
    assert result.exit_code == expect, result.output
    return result.output


def test_report_command_writes_the_requested_formats(fixtures_db, tmp_path):
    out = tmp_path / "weekly"
    text = run("report", "--db", fixtures_db, "--since", "2026-03-11", "--until", "2026-03-12", "--out", out, "--format", "md,json,parquet")
    assert f"wrote {out / 'report.md'}" in text and "2026-03-11 – 2026-03-12 (UTC)" in text
    assert sorted(p.name for p in out.iterdir()) == ["report.json", "report.md", "tables"]
    doc = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert doc["window"]["previous"] == {"since": "2026-03-09", "until": "2026-03-10"} and doc["deltas"]["cost_usd"]["change"] != 0
    data = json.loads(run("report", "--db", fixtures_db, "--out", tmp_path / "all", "--format", "json", "--json"))
    assert data["files"]["json"].endswith("report.json") and data["headline"]["requests"] > 0 and data["index"] is None


def test_report_options_are_checked(fixtures_db, tmp_path):
    assert "is not a duration" in run("report", "--db", fixtures_db, "--last", "3x", "--out", tmp_path, expect=2)
    assert "cannot be combined" in run("report", "--db", fixtures_db, "--last", "7d", "--since", "2026-03-01", "--out", tmp_path, expect=2)
    assert "unknown report format" in run("report", "--db", fixtures_db, "--format", "html,pdf", "--out", tmp_path, expect=2)
    assert "no audit run 99" in run("report", "--db", fixtures_db, "--run", "99", "--out", tmp_path, expect=2)


def test_scheduled_audit_ingests_audits_reports_and_sets_the_exit_code(tmp_path):
    db, reports = tmp_path / "audit.duckdb", tmp_path / "reports"
    # The fixtures hold a high-severity finding (an MCP server changed a tool's definition mid-session).
    text = run("audit", "--db", db, "--ingest", FIXTURES / "mcp-jsonrpc", "--ingest", FIXTURES / "claude-code", "--report", reports, "--fail-on", "high", expect=1)
    assert "files:" in text and "index " in text
    dated = [p for p in reports.iterdir() if p.is_dir()]
    assert len(dated) == 1 and {p.name for p in dated[0].iterdir()} == {"report.html", "report.md", "report.json"}
    index = (reports / "index.html").read_text(encoding="utf-8")
    assert f'href="{dated[0].name}/report.html"' in index
    doc = json.loads((dated[0] / "report.json").read_text(encoding="utf-8"))
    assert doc["findings_summary"]["by_severity"]["high"] >= 1 and doc["audit_run"]["audit_run_id"] == 1
    # Nothing new to ingest, nothing at or above critical: exit 0, and the same day's folder is replaced.
    out = json.loads(run("audit", "--db", db, "--ingest", FIXTURES / "mcp-jsonrpc", "--report", reports, "--fail-on", "critical", "--json"))
    assert out["audit_run_id"] == 2 and len([p for p in reports.iterdir() if p.is_dir()]) == 1
    assert json.loads((dated[0] / "report.json").read_text(encoding="utf-8"))["audit_run"]["audit_run_id"] == 2


def test_scheduled_audit_options_are_checked(tmp_path):
    db = tmp_path / "a.duckdb"
    assert "drop --no-save" in run("audit", "--db", db, "--report", tmp_path / "r", "--no-save", expect=2)
    assert "cannot be combined" in run("audit", "--db", db, "--last", "1d", "--until", "2026-03-01", expect=2)
    run("db", "upgrade", "--db", db)  # a database with nothing in it yet
    run("audit", "--db", db, "--last", "1d", "--report", tmp_path / "r")  # an empty day is still a report
    assert (tmp_path / "r" / "index.html").is_file()
