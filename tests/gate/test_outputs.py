"""Report builders on hand-made results: hostile member names stay inert in every format, SARIF stays valid."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import jsonschema
from rich.console import Console

from tokaudit.analyze.detectors import Finding
from tokaudit.gate.evaluate import GateResult, Verdict
from tokaudit.gate.outputs import github_annotations, junit_xml, render_table, sarif_log, step_summary_markdown, table_rows

SCHEMA = json.loads((Path(__file__).parent / "sarif-schema-2.1.0.json").read_text(encoding="utf-8"))
HOSTILE = "evil|<img src=x>\n::error::pwned\x07[bold]x[/bold],a:b%"


def result(tmp_path: Path) -> GateResult:
    log = tmp_path / "logs dir" / "s1.jsonl"
    verdicts = [
        Verdict("tool.tool_calls", "tool", HOSTILE, "tool_calls", "calls", 40.0, 10.0, 30.0, "fail"),
        Verdict("tool.tool_calls", "tool", "Read", "tool_calls", "calls", 12.0, 10.0, 30.0, "warn"),
        Verdict("tool.tool_calls", "tool", "Bash", "tool_calls", "calls", 3.0, 10.0, 30.0, "pass"),
        Verdict("tool.tool_calls", "tool", "Edit", "tool_calls", "calls", 2.0, 10.0, 30.0, "pass"),
        Verdict("session.cost_usd", "session", "claude-code:s1", "cost_usd", "usd", 3.5, 2.0, 5.0, "inconclusive",
                note="partly unpriced: the value is a lower bound", location=str(log)),
        Verdict("max_increase.p95_cost_usd", "task", "fix-tests", "p95_cost_usd", "fraction", 0.25, 0.1, 0.2, "fail", kind="regression"),
    ]
    finding = Finding(
        detector="same_tool_chain", severity="high", session_id="claude-code:s1", first_turn=3, last_turn=40, metric="run_length",
        value=38.0, threshold="> 15", excess_tokens=120_000, excess_usd=0.42, explanation=f"Tool {HOSTILE!r} was called 38 times in a row.",
        tool_key=HOSTILE, evidence={"first_result": "x"},
    )
    return GateResult(verdicts, findings=[finding], sessions=1, session_files={"claude-code:s1": str(log)})


def test_junit_escapes_and_drops_characters_xml_cannot_carry(tmp_path):
    text = junit_xml(result(tmp_path))
    root = ET.fromstring(text.encode())
    names = [c.get("name") for c in root.iter("testcase")]
    assert names[0] == HOSTILE.replace("\x07", "\ufffd")
    assert [s.get("failures") for s in root.iter("testsuite")] == ["1", "0", "1"]
    assert root.find(".//testcase[@name='claude-code:s1']/skipped") is not None
    warned = root.find(".//testcase[@name='Read']")
    assert warned.find("failure") is None and warned.find("system-out").text.startswith("WARNING: ")
    strict = ET.fromstring(junit_xml(result(tmp_path), fail_on_warn=True).encode())
    assert strict.find(".//testcase[@name='Read']/failure") is not None
    assert strict.get("failures") == "3"


def test_sarif_with_findings_and_violations_is_schema_valid(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    log = sarif_log(result(tmp_path), config_file=str(tmp_path / "tokaudit.toml"))
    validator = jsonschema.Draft4Validator(SCHEMA, format_checker=jsonschema.Draft4Validator.FORMAT_CHECKER)
    assert [e.message for e in validator.iter_errors(log)] == []
    results = log["runs"][0]["results"]
    assert [(r["ruleId"], r["level"]) for r in results] == [
        ("detector/same_tool_chain", "error"),
        ("budget/tool.tool_calls", "error"),
        ("budget/tool.tool_calls", "warning"),
        ("budget/max_increase.p95_cost_usd", "error"),
    ]
    finding = results[0]
    assert finding["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "logs%20dir/s1.jsonl"
    assert finding["properties"]["excess_tokens"] == 120_000
    assert results[1]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "tokaudit.toml"
    # Fingerprints identify a result across runs: same inputs, same fingerprint.
    again = sarif_log(result(tmp_path), config_file=str(tmp_path / "tokaudit.toml"))["runs"][0]["results"]
    assert [r["partialFingerprints"] for r in again] == [r["partialFingerprints"] for r in results]


def test_annotations_cannot_be_split_into_new_workflow_commands(tmp_path):
    lines = github_annotations(result(tmp_path))
    assert len(lines) == 3
    assert all("\n" not in line and "\r" not in line for line in lines)
    first = lines[0]
    assert first.startswith("::error title=tokaudit budget tool.tool_calls::")
    assert "evil|<img src=x>%0A::error::pwned" in first and "a:b%25" in first
    assert "pwned\\x07[bold]" in first  # a terminal control character shows as its escape in the log view
    assert not any(ch < " " for line in lines for ch in line)
    assert lines[1].startswith("::warning title=")
    assert github_annotations(result(tmp_path), fail_on_warn=True)[1].startswith("::error title=")


def test_annotations_are_capped(tmp_path):
    many = [Verdict("session.cost_usd", "session", f"s{i}", "cost_usd", "usd", 9.0, None, 5.0, "fail") for i in range(60)]
    lines = github_annotations(GateResult(many))
    assert len(lines) == 51
    assert lines[-1] == "::notice title=tokaudit::10 more error verdicts are in the step summary and the reports"


def test_step_summary_cells_are_escaped_markdown(tmp_path):
    text = step_summary_markdown(result(tmp_path))
    assert text.startswith("## tokaudit gate: FAIL (exit 1)")
    row = next(line for line in text.splitlines() if "evil" in line)
    # A name from a log can open no tag, link or image, and its control characters show as escapes.
    assert row == "| tool.tool_calls | evil\\|&lt;img src=x&gt; \\:\\:error\\:\\:pwned\\\\x07\\[bold\\]x\\[/bold\\],a\\:b% | 40 | warn 10 · fail 30 | ❌ fail |"
    assert "Findings: 1 high" in text


def test_the_table_folds_passing_members_and_prints_names_verbatim(tmp_path):
    rows = table_rows(result(tmp_path))
    assert rows[:3] == [
        ("tool.tool_calls", HOSTILE, "40", "warn 10 · fail 30", "fail"),
        ("tool.tool_calls", "Read", "12", "warn 10 · fail 30", "warn"),
        ("tool.tool_calls", "2 tools (largest: Bash)", "3", "warn 10 · fail 30", "pass"),
    ]
    assert len(table_rows(result(tmp_path), verbose=True)) == 6
    console = Console(width=400, record=True)
    render_table(result(tmp_path), console)
    out = console.export_text()
    assert "[bold]x[/bold]" in out  # shown as written, not interpreted as markup
    assert "+25.0%" in out and "FAIL (exit 1)" in out
