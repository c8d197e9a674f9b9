"""The command line: help everywhere, output formats, exit codes, README coverage."""

from __future__ import annotations

import csv
import io
import json
import re

import click
import pytest
from click.testing import CliRunner

from tests.conftest import FIXTURES, ROOT
from tokaudit.cli import cli


def run(*args, expect=0):
    result = CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)
    assert result.exit_code == expect, result.output
    return result.output


def all_commands(group=cli, prefix=()):
    for name, cmd in group.commands.items():
        yield (*prefix, name), cmd
        if isinstance(cmd, click.Group):
            yield from all_commands(cmd, (*prefix, name))


@pytest.mark.parametrize("path", [p for p, _ in all_commands()], ids=" ".join)
def test_every_command_has_help_and_is_in_the_readme(path):
    out = run(*path, "--help")
    assert "Usage:" in out
    readme = (ROOT / "README.md").read_text()
    assert f"tokaudit {' '.join(path)}" in readme


def test_ingest_then_usage_json_and_csv(db_path):
    summary = json.loads(run("ingest", "--db", db_path, "--json", FIXTURES / "claude-code", FIXTURES / "codex"))
    assert summary["files"]["new"] == 8 and summary["lines"]["problem"] == 0
    data = json.loads(run("usage", "--db", db_path, "--json"))
    assert [r["day"] for r in data["rows"]] == ["2026-03-10", "2026-03-11", "2026-03-12"]
    assert data["totals"]["calls"] == sum(r["calls"] for r in data["rows"])
    rows = list(csv.DictReader(io.StringIO(run("usage", "--db", db_path, "--csv", "--by", "model"))))
    assert {r["model"] for r in rows} >= {"gpt-5.3-codex", "claude-opus-4-5-20251101"}
    table = run("usage", "--db", db_path, "--by", "mcp-server")
    assert "github" in table and "estimate" in table


def test_tz_moves_requests_between_days(db_path):
    run("ingest", "--db", db_path, "--quiet", FIXTURES / "claude-code")
    utc = {r["day"]: r["calls"] for r in json.loads(run("usage", "--db", db_path, "--json"))["rows"]}
    tokyo = {r["day"]: r["calls"] for r in json.loads(run("usage", "--db", db_path, "--json", "--tz", "Asia/Tokyo"))["rows"]}
    assert utc != tokyo  # session B crosses UTC midnight; in Tokyo the split falls elsewhere
    assert sum(utc.values()) == sum(tokyo.values())
    window = json.loads(run("usage", "--db", db_path, "--json", "--since", "2026-03-11", "--until", "20260311"))
    assert [r["day"] for r in window["rows"]] == ["2026-03-11"]


def test_exit_codes(db_path, tmp_path):
    run("ingest", "--db", db_path, "--quiet", FIXTURES / "bad")  # problems alone do not fail
    run("ingest", "--db", str(tmp_path / "strict.duckdb"), "--quiet", "--strict", FIXTURES / "bad", expect=1)
    out = run("ingest", "--db", db_path, tmp_path / "nope", expect=3)
    assert "no such file or folder" in out
    out = run("ingest", "--db", db_path, expect=3)  # no default log folders in the test HOME
    assert "\nHint: pass paths to ingest" in out and "\\x0a" not in out
    assert "unknown time zone" in run("usage", "--db", db_path, "--tz", "Mars/Olympus", expect=2)
    assert "unknown format" in run("ingest", "--db", db_path, "--format", "nope", FIXTURES / "bad", expect=2)
    (tmp_path / "tokaudit.toml").write_text("colour = 'blue'\n")
    assert "unknown key 'colour'" in run("usage", "--db", db_path, "--config", tmp_path / "tokaudit.toml", expect=2)


@pytest.mark.parametrize("command", [["usage"], ["problems"], ["sources"], ["audit"], ["findings"], ["show", "s1"], ["report"]])
def test_a_command_that_reads_the_store_refuses_a_database_that_is_not_there(tmp_path, command):
    typo = tmp_path / "tokadit.duckdb"
    out = run(*command, "--db", typo, expect=3)
    assert f"no database at {typo}" in out and "tokaudit ingest" in out
    assert not typo.exists()  # no empty database left behind


def test_default_locations_from_env(tmp_path, monkeypatch, db_path):
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(FIXTURES / "claude-code"))
    monkeypatch.setenv("CODEX_HOME", str(FIXTURES / "codex"))
    summary = json.loads(run("ingest", "--db", db_path, "--json"))
    assert summary["files"]["new"] == 8


def test_hostile_names_are_printed_as_text_not_markup(db_path, tmp_path):
    from tests.ingest.helpers import claude_assistant

    path = tmp_path / "projects" / "[bold red]x" / "s.jsonl"
    path.parent.mkdir(parents=True)
    use = {"type": "tool_use", "id": "toolu_x", "name": "mcp__[red]evil[/red]__run", "input": {}}
    path.write_text(json.dumps(claude_assistant(blocks=[use]), separators=(",", ":")) + "\n")
    run("ingest", "--db", db_path, "--quiet", path)
    assert "[red]evil[/red]" in run("usage", "--db", db_path, "--by", "mcp-server")
    assert "[bold red]x" in run("usage", "--db", db_path, "--by", "project")


def test_db_commands(db_path):
    assert re.search(r"database: none\s+head: \d{4}", run("db", "current", "--db", db_path))
    assert "-> " in run("db", "upgrade", "--db", db_path)
    assert "up to date" in run("db", "current", "--db", db_path)
    assert "0001" in run("db", "history")
    assert "CREATE TABLE sources" in run("db", "upgrade", "--sql")


def test_problems_command(db_path):
    run("ingest", "--db", db_path, "--quiet", FIXTURES / "bad")
    rows = json.loads(run("problems", "--db", db_path, "--json"))
    assert {r["kind"] for r in rows} == {"invalid-json", "invalid-utf8", "wrong-type"}
    assert all(r["line_no"] > 0 and r["path"].endswith(".jsonl") for r in rows)
    assert len(json.loads(run("problems", "--db", db_path, "--json", "--kind", "invalid-utf8"))) == 2


def test_no_upgrade_refuses_an_older_database(tmp_path):
    import sqlalchemy as sa

    from tokaudit.store import migrate
    from tokaudit.store.engine import db_url

    path = str(tmp_path / "old.duckdb")
    engine = sa.create_engine(db_url(path), poolclass=sa.pool.NullPool)
    with engine.connect() as conn:
        migrate.upgrade(conn, migrate.known_revisions()[0])
    engine.dispose()
    out = run("usage", "--db", path, "--no-upgrade", expect=2)
    assert "tokaudit db upgrade" in out
    assert "needs `tokaudit db upgrade`" in run("db", "current", "--db", path)
    run("usage", "--db", path)  # without the flag it is migrated in place
    assert "up to date" in run("db", "current", "--db", path)


def test_usage_by_agent_splits_subagents_by_type(db_path):
    run("ingest", "--db", db_path, "--quiet", FIXTURES / "claude-code", FIXTURES / "codex")
    rows = {r["agent"]: r for r in json.loads(run("usage", "--db", db_path, "--json", "--by", "agent"))["rows"]}
    meta = json.loads(next((FIXTURES / "claude-code").rglob("agent-*.meta.json")).read_text())
    assert set(rows) == {"claude-code", f"claude-code / {meta['agentType']}", "codex", "codex / thread_spawn"}
    by_day = json.loads(run("usage", "--db", db_path, "--json"))["totals"]
    assert sum(r["calls"] for r in rows.values()) == by_day["calls"]
    assert sum(r["output_tokens"] for r in rows.values()) == by_day["output_tokens"]


def test_sources_command_accounts_for_every_line(db_path):
    run("ingest", "--db", db_path, "--quiet", FIXTURES / "bad", FIXTURES / "codex")
    rows = json.loads(run("sources", "--db", db_path, "--json"))
    assert len(rows) == 5
    for r in rows:
        assert r["lines_read"] == r["lines_used"] + r["lines_skipped"] + r["lines_problem"]
        assert sum(r["skipped_by_rule"].values()) == r["lines_skipped"]
    bad = json.loads(run("sources", "--db", db_path, "--json", "--with-problems"))
    assert {r["path"].rsplit("/", 1)[-1] for r in bad} == {"claude-bad.jsonl", "codex-bad.jsonl"}
    assert "TOTAL" in run("sources", "--db", db_path)


def test_show_marks_the_steered_calls_and_the_flagged_turns_of_a_counter_loop(tmp_path):
    import json

    from tokaudit.simulate import simulate

    simulate(tmp_path / "sim", 2, 5, families=["counter_loop"], attack_share=1.0, knob_overrides={"chain_length": 10})
    attack = next(s for s in json.loads((tmp_path / "sim" / "labels.json").read_text())["sessions"] if s["is_attack"])
    db = tmp_path / "t.duckdb"
    run("ingest", "--db", db, tmp_path / "sim" / "projects", tmp_path / "sim" / "mcp")
    run("audit", "--db", db)
    shown = run("show", "--db", db, attack["session_id"])
    assert "↻" in shown and "⚑" in shown and "continuation_loop" in shown
    # The simulator's logs report no tool tokens: every figure is an estimate, marked and explained.
    assert "(args ~" in shown and "~ an estimated token count" in shown
    data = json.loads(run("show", "--db", db, attack["session_id"], "--json"))
    steered = [x for t in data["turns"] for x in t["tools"] if x["steered"]]
    assert len(steered) >= 8 and {x["tool"] for x in steered} == {f"{attack['attack_server']}/{attack['attack_tool']}"}


def test_show_lists_the_calls_of_an_mcp_transcript_which_logs_no_model_request(tmp_path):
    db = tmp_path / "t.duckdb"
    run("ingest", "--db", db, FIXTURES / "mcp-jsonrpc" / "filesystem.jsonl")
    data = json.loads(run("show", "--db", db, "mcp-jsonrpc:filesystem:1", "--json"))
    assert data["turns"] == [] and len(data["calls_without_request"]) == 9
    assert data["calls_without_request"][0]["tool"] == "filesystem/read_file"
    shown = run("show", "--db", db, "mcp-jsonrpc:filesystem:1")
    assert "no logged model request" in shown and "filesystem/write_file ✗" in shown and "(no tool name)" in shown


def test_audit_counts_subagents_and_mcp_connections_apart_among_its_sessions(tmp_path):
    """usage --by session folds subagents and MCP connections into the session they served; the audit reads each as a
    session of its own, and says how many of its sessions they are."""
    from tokaudit.simulate import simulate

    simulate(tmp_path / "sim", 8, 3, families=["subagent", "counter_loop"], attack_share=0.5)
    labels = json.loads((tmp_path / "sim" / "labels.json").read_text())["sessions"]
    subagents, connections = sum(len(s["subagents"]) for s in labels), sum(len(s["mcp_sessions"]) for s in labels)
    assert subagents and connections
    db = tmp_path / "t.duckdb"
    run("ingest", "--db", db, tmp_path / "sim" / "projects", tmp_path / "sim" / "mcp")
    summary = json.loads(run("audit", "--db", db, "--json"))["summary"]
    assert (summary["subagent_sessions"], summary["mcp_connection_sessions"]) == (subagents, connections)
    assert summary["sessions"] == len(labels) + subagents + connections
    assert f"(of which {subagents:,} subagents and {connections:,} MCP connections)" in run("audit", "--db", db)


def test_show_before_any_audit_says_so_instead_of_reading_as_a_clean_session(tmp_path):
    db = tmp_path / "t.duckdb"
    run("ingest", "--db", db, FIXTURES / "mcp-jsonrpc" / "filesystem.jsonl")
    assert "not audited yet" in run("show", "--db", db, "mcp-jsonrpc:filesystem:1")
    assert json.loads(run("show", "--db", db, "mcp-jsonrpc:filesystem:1", "--json"))["audit_run_id"] is None
    run("audit", "--db", db)
    assert "not audited yet" not in run("show", "--db", db, "mcp-jsonrpc:filesystem:1")
    assert json.loads(run("show", "--db", db, "mcp-jsonrpc:filesystem:1", "--json"))["audit_run_id"] is not None


def test_show_marks_sizes_a_log_does_not_record_as_unknown_and_finds_a_session_by_a_name_inside_its_id(tmp_path):
    """A server's replies without the requests: no argument size (unknown, not 0), and an id whose format's
    namespace and file name hide the name a user knows it by."""
    replies = [
        {"jsonrpc": "2.0", "id": 1, "result": {"protocolVersion": "2025-06-18", "serverInfo": {"name": "inventory"}, "capabilities": {}}},
        {"jsonrpc": "2.0", "id": 2, "result": {"content": [{"type": "text", "text": "12 devices enrolled"}]}},
    ]
    path = tmp_path / "inventory-replies.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in replies))
    db = tmp_path / "t.duckdb"
    run("ingest", "--db", db, path)
    data = json.loads(run("show", "--db", db, "mcp-jsonrpc:inventory-replies:1", "--json"))
    (call,) = data["calls_without_request"]
    assert call["args_tokens"] is None and call["result_tokens"] > 0
    shown = run("show", "--db", db, "mcp-jsonrpc:inventory-replies:1")
    assert "args ?" in shown and "? a size the log does not record" in shown
    assert "ids holding 'replies': mcp-jsonrpc:inventory-replies:1" in run("show", "--db", db, "replies", expect=2)


def test_a_session_whose_log_reports_no_reasoning_has_unknown_reasoning_not_zero(tmp_path):
    db = tmp_path / "t.duckdb"
    run("ingest", "--db", db, FIXTURES / "claude-code")
    data = json.loads(run("show", "--db", db, "894af375-a52f-4d5a-a92d-9d9c279b1489", "--json"))
    assert all(t["reasoning_tokens"] is None for t in data["turns"]) and data["session"]["reasoning_tokens"] is None


def test_show_finds_a_session_by_its_bare_id_beside_its_subagents(tmp_path):
    db = tmp_path / "t.duckdb"
    run("ingest", "--db", db, FIXTURES / "claude-code")
    parent = "894af375-a52f-4d5a-a92d-9d9c279b1489"  # has a subagent: claude-code:<id>:agent-…
    data = json.loads(run("show", "--db", db, parent, "--json"))
    assert data["session"]["session_id"] == f"claude-code:{parent}"
    assert [sub["session_id"] for sub in data["subagents"]] == [f"claude-code:{parent}:agent-a802f38266558e95a"]
    assert f"subagent claude-code:{parent}:agent-a802f38266558e95a" in run("show", "--db", db, parent)
    assert "matches several sessions" in run("show", "--db", db, parent[:8], expect=2)  # a prefix of both stays ambiguous


def test_usage_csv_cells_are_text_to_a_spreadsheet(tmp_path):
    from tests.ingest.helpers import claude_assistant

    path = tmp_path / "projects" / "p" / "s.jsonl"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(claude_assistant(model='=HYPERLINK("http://evil.example")')) + "\n"
                    + json.dumps(claude_assistant("m2", "r2", model="innocent\rEVIL")) + "\n"
                    + json.dumps(claude_assistant("m3", "r3", model="\x1b]0;pwned\x07m")) + "\n")
    db = tmp_path / "t.duckdb"
    run("ingest", "--db", db, tmp_path / "projects")
    models = [row["model"] for row in csv.DictReader(io.StringIO(run("usage", "--db", db, "--csv", "--by", "model")))]
    assert sorted(models) == sorted(["'=HYPERLINK(\"http://evil.example\")", "innocent\\x0dEVIL", "\\x1b]0;pwned\\x07m"])


def test_control_characters_from_logs_reach_the_terminal_as_escapes(tmp_path):
    from tests.ingest.helpers import claude_assistant

    path = tmp_path / "projects" / "p" / "s.jsonl"
    path.parent.mkdir(parents=True)
    hostile = "m\x1b]0;pwned\x07\x1b[2J\n::error::INJECTED"
    path.write_text(json.dumps(claude_assistant(model=hostile)) + "\n")
    db = tmp_path / "t.duckdb"
    run("ingest", "--db", db, tmp_path / "projects")
    for out in (run("usage", "--db", db, "--by", "model"), run("show", "--db", db, "s1")):
        assert "\x1b" not in out and "\x07" not in out and "\\x1b]0;pwned" in out
        assert not any(line.startswith("::error::") for line in out.splitlines())
