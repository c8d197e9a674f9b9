"""`tokaudit gate` and `tokaudit baseline save` end to end: every exit code, reports parsed back, GitHub outputs,
baselines and regressions, and the acceptance cases (simulated attacks fail, the benign fixture passes)."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import jsonschema
import pytest
from click.testing import CliRunner

from tests.conftest import FIXTURES
from tests.gate.logs import write_cohort
from tokaudit.cli import cli

SCHEMA = json.loads((Path(__file__).parent / "sarif-schema-2.1.0.json").read_text(encoding="utf-8"))
LOGS = [str(FIXTURES / "claude-code"), str(FIXTURES / "codex")]

# The fixture sessions cost $0.04–$0.41 each ($0.96 in all); the longest same-tool chain is 2 calls.
BENIGN_BUDGET = """
[budgets.session]
cost_usd = { warn = 0.30, fail = 5.0 }
same_tool_chain = { warn = 10, fail = 15 }
findings = [{ min_severity = "high", fail = 0 }, { detectors = ["economic_dos"], fail = 0 }]

[budgets.tool]
tool_calls = { warn = 20 }

[budgets.run]
cost_usd = { fail = 50.0 }
"""


def run(*args: str, env: dict[str, str] | None = None):
    return CliRunner().invoke(cli, list(args), env=env, catch_exceptions=False)


def budget_file(tmp_path: Path, text: str, name: str = "tokaudit.toml") -> str:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return str(path)


def sarif_errors(doc: dict) -> list[str]:
    validator = jsonschema.Draft4Validator(SCHEMA, format_checker=jsonschema.Draft4Validator.FORMAT_CHECKER)
    return [f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(doc)]


# --- exit codes ---------------------------------------------------------------------------------


def test_exit_0_within_budget_with_a_warning_and_1_with_fail_on_warn(tmp_path):
    budget = budget_file(tmp_path, BENIGN_BUDGET)
    result = run("gate", *LOGS, "--budget", budget)
    assert result.exit_code == 0, result.output
    assert "PASS with warnings (exit 0)" in result.output
    assert "session.cost_usd" in result.output and "warn" in result.output
    strict = run("gate", *LOGS, "--budget", budget, "--fail-on-warn")
    assert strict.exit_code == 1
    assert "FAIL (exit 1)" in strict.output


def test_the_last_line_of_a_log_without_its_newline_counts_in_a_gate(tmp_path):
    log = next(Path(LOGS[0]).rglob("*.jsonl")).read_bytes()
    (tmp_path / "with").mkdir()
    (tmp_path / "without").mkdir()
    (tmp_path / "with" / "s.jsonl").write_bytes(log)
    (tmp_path / "without" / "s.jsonl").write_bytes(log.rstrip(b"\n"))
    budget = budget_file(tmp_path, "[budgets.run]\ntotal_tokens = { fail = 1000000000000 }\n")
    runs = [json.loads(run("gate", str(tmp_path / name), "--budget", budget, "--json").output) for name in ("with", "without")]
    assert [r["ingest"]["lines"]["pending"] for r in runs] == [0, 0]
    assert runs[0]["ingest"]["lines"]["read"] == runs[1]["ingest"]["lines"]["read"]
    assert runs[0]["verdicts"][0]["value"] == runs[1]["verdicts"][0]["value"] > 0


def test_exit_1_on_a_fail_level_budget(tmp_path):
    budget = budget_file(tmp_path, "[budgets.run]\ncost_usd = { fail = 0.50 }\n")
    result = run("gate", *LOGS, "--budget", budget, "--json")
    assert result.exit_code == 1
    doc = json.loads(result.output)
    (verdict,) = doc["verdicts"]
    assert verdict["budget"] == "run.cost_usd" and verdict["verdict"] == "fail"
    assert verdict["value"] == pytest.approx(0.9583171, abs=1e-6)
    assert doc["exit_code"] == 1 and doc["counts"]["fail"] == 1


@pytest.mark.parametrize(
    ("config", "extra", "needle"),
    [
        ("[budgets.sesion]\ncost_usd = { fail = 1 }\n", [], "unknown key 'budgets.sesion'"),
        ("[budgets.session]\ncost_usd = { fail = -1 }\n", [], "'budgets.session.cost_usd.fail' must be a number ≥ 0 (USD), got -1"),
        ("db = 'x.duckdb'\n", [], "no budgets in"),
        ("[budgets.session]\ncost_usd = { fail = 1 }\n", ["--baseline", "missing.json"], "baseline file not found"),
        ("[budgets.session]\ncost_usd = { fail = 1 }\n", ["--fail-on-wran"], "No such option"),
        ("[budgets.session]\ncost_usd = { fail = 1 }\n", ["--db", "x.duckdb"], "give log PATHS or --db, not both"),
    ],
)
def test_exit_2_on_usage_or_configuration_errors(tmp_path, config, extra, needle):
    budget = budget_file(tmp_path, config)
    result = run("gate", *LOGS, "--budget", budget, *extra)
    assert result.exit_code == 2, result.output
    assert needle in result.output


def test_exit_2_for_a_baseline_without_max_increase_rules(tmp_path):
    budget = budget_file(tmp_path, "[budgets.session]\ncost_usd = { fail = 1 }\n")
    base = tmp_path / "base.json"
    assert run("baseline", "save", str(base), *LOGS, "--budget", budget).exit_code == 0
    result = run("gate", *LOGS, "--budget", budget, "--baseline", str(base))
    assert result.exit_code == 2
    assert "no [budgets.max_increase] rules" in result.output


def test_exit_3_without_usable_input(tmp_path):
    budget = budget_file(tmp_path, BENIGN_BUDGET)
    empty = tmp_path / "empty"
    empty.mkdir()
    garbage = tmp_path / "garbage" / "session.jsonl"
    garbage.parent.mkdir()
    garbage.write_text("not json\n{broken\n\x00\x01\n", encoding="utf-8")
    for args in ([str(tmp_path / "nowhere")], [str(empty)], [str(garbage.parent)], ["--db", str(tmp_path / "none.duckdb")]):
        result = run("gate", *args, "--budget", budget)
        assert result.exit_code == 3, (args, result.output)
        assert "Error:" in result.output


# --- reports ------------------------------------------------------------------------------------


def test_junit_has_one_testcase_per_budget_and_member(tmp_path):
    budget = budget_file(tmp_path, BENIGN_BUDGET + "\n[budgets.model]\ncost_usd = { match = 'claude-opus-*', fail = 0.3 }\n")
    junit = tmp_path / "gate.xml"
    result = run("gate", *LOGS, "--budget", budget, "--junit", str(junit), "--json")
    assert result.exit_code == 1
    verdicts = json.loads(result.output)["verdicts"]
    root = ET.parse(junit).getroot()
    assert root.tag == "testsuites"
    assert int(root.get("tests")) == len(verdicts)
    assert int(root.get("failures")) == sum(v["verdict"] == "fail" for v in verdicts) == 1
    suites = {s.get("name"): s for s in root.iter("testsuite")}
    assert list(suites) == list(dict.fromkeys(v["budget"] for v in verdicts))
    sessions = suites["session.cost_usd"]
    cases = {c.get("name"): c for c in sessions.iter("testcase")}
    assert len(cases) == 6  # root sessions: subagents and the Codex fork roll up into their parents
    warned = [name for name, c in cases.items() if c.find("system-out") is not None]
    assert warned == ["claude-code:3615c962-02b6-42a4-a69d-b87616bd130e"]
    assert cases[warned[0]].get("file").endswith("3615c962-02b6-42a4-a69d-b87616bd130e.jsonl")
    (opus,) = suites["model[claude-opus-*].cost_usd"].iter("testcase")
    failure = opus.find("failure")
    assert opus.get("name") == "claude-opus-4-5-20251101" and failure is not None
    assert "fail $0.3000" in failure.get("message")


def test_sarif_validates_against_the_official_schema(tmp_path):
    assert SCHEMA["id"].endswith("/sarif-schema-2.1.0.json")
    budget = budget_file(tmp_path, BENIGN_BUDGET + "\n[budgets.model]\ncost_usd = { fail = 0.3 }\n")
    sarif = tmp_path / "gate.sarif"
    result = run("gate", *LOGS, "--budget", budget, "--sarif", str(sarif))
    assert result.exit_code == 1
    doc = json.loads(sarif.read_text(encoding="utf-8"))
    assert sarif_errors(doc) == []
    run0 = doc["runs"][0]
    levels = sorted((r["ruleId"], r["level"]) for r in run0["results"])
    assert levels == [("budget/model.cost_usd", "error"), ("budget/session.cost_usd", "warning")]
    rule_ids = [r["id"] for r in run0["tool"]["driver"]["rules"]]
    assert all(rule_ids[r["ruleIndex"]] == r["ruleId"] for r in run0["results"])
    session_result = next(r for r in run0["results"] if r["ruleId"] == "budget/session.cost_usd")
    assert session_result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"].endswith("3615c962-02b6-42a4-a69d-b87616bd130e.jsonl")
    model_result = next(r for r in run0["results"] if r["ruleId"] == "budget/model.cost_usd")
    assert model_result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"].endswith("tokaudit.toml")


def test_github_annotations_and_step_summary(tmp_path):
    budget = budget_file(tmp_path, BENIGN_BUDGET + "\n[budgets.model]\ncost_usd = { match = 'claude-opus-*', fail = 0.3 }\n")
    summary = tmp_path / "summary.md"
    summary.write_text("# earlier step\n", encoding="utf-8")
    env = {"GITHUB_ACTIONS": "true", "GITHUB_STEP_SUMMARY": str(summary), "GITHUB_WORKSPACE": str(FIXTURES.parent)}
    result = run("gate", *LOGS, "--budget", budget, env=env)
    assert result.exit_code == 1
    commands = [line for line in result.output.splitlines() if line.startswith("::")]
    assert len(commands) == 2
    assert commands[0].startswith("::warning file=fixtures/claude-code/projects/-home-dev-webapp/3615c962-02b6-42a4-a69d-b87616bd130e.jsonl,title=tokaudit budget session.cost_usd::")
    assert "is $0.4142 (warn $0.3000 · fail $5.00): warn" in commands[0]
    assert commands[1].startswith("::error title=tokaudit budget model[claude-opus-*].cost_usd::")
    text = summary.read_text(encoding="utf-8")
    assert text.startswith("# earlier step\n## tokaudit gate: FAIL (exit 1)")  # appended, not overwritten
    assert "| session.cost_usd | claude-code\\:3615c962-02b6-42a4-a69d-b87616bd130e | $0.4142 | warn $0.3000 · fail $5.00 | ⚠️ warn |" in text
    assert "| model[claude-opus-*].cost_usd | claude-opus-4-5-20251101 | $0.4142 | fail $0.3000 | ❌ fail |" in text
    # Off GitHub Actions: no workflow commands, no summary.
    plain = run("gate", *LOGS, "--budget", budget, env={"GITHUB_ACTIONS": "", "GITHUB_STEP_SUMMARY": str(summary)})
    assert plain.exit_code == 1
    assert not any(line.startswith("::") for line in plain.output.splitlines())
    assert summary.read_text(encoding="utf-8") == text


def test_with_json_the_annotations_go_to_stderr(tmp_path):
    budget = budget_file(tmp_path, "[budgets.run]\ncost_usd = { fail = 0.5 }\n")
    result = CliRunner().invoke(cli, ["gate", *LOGS, "--budget", budget, "--json"], env={"GITHUB_ACTIONS": "true", "GITHUB_STEP_SUMMARY": ""})
    assert result.exit_code == 1
    assert json.loads(result.stdout)["exit_code"] == 1
    assert result.stderr.startswith("::error title=tokaudit budget run.cost_usd::")


def test_gate_on_a_database_reads_it_without_changing_it(tmp_path):
    db = str(tmp_path / "t.duckdb")
    assert run("ingest", *LOGS, "--db", db, "--quiet").exit_code == 0
    budget = budget_file(tmp_path, BENIGN_BUDGET)
    on_db = run("gate", "--db", db, "--budget", budget, "--json")
    on_paths = run("gate", *LOGS, "--budget", budget, "--json")
    assert on_db.exit_code == on_paths.exit_code == 0
    strip = lambda out: [{k: v for k, v in d.items() if k != "location"} for d in json.loads(out)["verdicts"]]  # noqa: E731
    assert strip(on_db.output) == strip(on_paths.output)
    import duckdb

    with duckdb.connect(db, read_only=True) as con:
        assert con.execute("SELECT count(*) FROM audit_runs").fetchall() == [(0,)]


# --- baselines ----------------------------------------------------------------------------------

REGRESSION_BUDGET = """
[budgets.run]
cost_usd = { fail = 100.0 }

[budgets.max_increase]
min_sessions = 5
p95_cost_usd = { warn = "10%", fail = "20%" }
p95_total_tokens = { fail = "20%" }

[[tasks]]
pattern = "/evals/([^/]+)"
"""


@pytest.fixture
def baseline(tmp_path):
    write_cohort(tmp_path / "before", task="fix-tests", sessions=6)
    write_cohort(tmp_path / "before", task="tiny", sessions=3)
    budget = budget_file(tmp_path, REGRESSION_BUDGET)
    path = tmp_path / "baseline.json"
    result = run("baseline", "save", str(path), str(tmp_path / "before"), "--budget", budget)
    assert result.exit_code == 0, result.output
    assert result.output.startswith(f"wrote {path}: 2 tasks, 9 sessions")
    return path, budget


def test_a_baseline_file_is_stable_and_sorted(tmp_path, baseline):
    path, budget = baseline
    first = path.read_text(encoding="utf-8")
    assert run("baseline", "save", str(path), str(tmp_path / "before"), "--budget", budget).exit_code == 0
    assert path.read_text(encoding="utf-8") == first
    doc = json.loads(first)
    assert first == json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    assert list(doc["tasks"]) == ["fix-tests", "tiny"]
    fix = doc["tasks"]["fix-tests"]
    # 1..6 requests of 46,800 tokens ($0.045) each: p50 = 3.5 requests, p95 = 5.75 requests.
    assert fix["sessions"] == 6
    assert fix["total_tokens"] == {"p50": 163800.0, "p95": 269100.0, "sessions": 6}
    assert fix["cost_usd"] == {"p50": 0.1575, "p95": 0.25875, "sessions": 6}


def _regression(tmp_path, baseline, factor: float):
    path, budget = baseline
    current = tmp_path / f"after-{factor}"
    write_cohort(current, task="fix-tests", sessions=6, factor=factor)
    write_cohort(current, task="tiny", sessions=3, factor=factor)
    result = run("gate", str(current), "--budget", budget, "--baseline", str(path), "--json")
    doc = json.loads(result.output)
    rows = {(v["budget"], v["member"]): v for v in doc["verdicts"] if v["kind"] == "regression"}
    return result.exit_code, rows


def test_a_25_percent_cost_regression_fails(tmp_path, baseline):
    code, rows = _regression(tmp_path, baseline, 1.25)
    assert code == 1
    cost = rows[("max_increase.p95_cost_usd", "fix-tests")]
    assert cost["verdict"] == "fail" and cost["value"] == pytest.approx(0.25, abs=1e-4)
    assert rows[("max_increase.p95_total_tokens", "fix-tests")]["verdict"] == "fail"


def test_a_5_percent_cost_regression_passes(tmp_path, baseline):
    code, rows = _regression(tmp_path, baseline, 1.05)
    assert code == 0
    cost = rows[("max_increase.p95_cost_usd", "fix-tests")]
    assert cost["verdict"] == "pass" and cost["value"] == pytest.approx(0.05, abs=1e-4)


def test_a_small_cohort_is_inconclusive_not_pass_or_fail(tmp_path, baseline):
    code, rows = _regression(tmp_path, baseline, 2.0)
    tiny = rows[("max_increase.p95_cost_usd", "tiny")]
    assert tiny["verdict"] == "inconclusive" and tiny["value"] is None
    assert "cohort too small" in tiny["note"] and "min_sessions = 5" in tiny["note"]
    assert rows[("max_increase.p95_cost_usd", "fix-tests")]["verdict"] == "fail"
    assert code == 1


# --- acceptance: simulated attacks fail, the benign fixture passes ------------------------------


def test_a_simulated_attack_fails_the_gate_and_the_benign_fixture_passes(tmp_path):
    from tokaudit.simulate import simulate

    budget = budget_file(tmp_path, BENIGN_BUDGET)
    assert run("gate", *LOGS, "--budget", budget).exit_code == 0

    corpus = tmp_path / "corpus"
    simulate(corpus, 40, 7, attack_share=0.25, jobs=1)
    labels = json.loads((corpus / "labels.json").read_text(encoding="utf-8"))["sessions"]
    attacks = {s["session_id"] for s in labels if s["is_attack"]}
    sarif = tmp_path / "attack.sarif"
    result = run("gate", str(corpus / "projects"), str(corpus / "mcp"), "--budget", budget, "--json", "--sarif", str(sarif))
    assert result.exit_code == 1
    doc = json.loads(result.output)
    failed = {v["member"] for v in doc["verdicts"] if v["verdict"] == "fail" and v["scope"] == "session"}
    assert failed & attacks, "no simulated attack session failed its budget"
    assert any(f["detector"] == "economic_dos" for f in doc["findings"])
    log = json.loads(sarif.read_text(encoding="utf-8"))
    assert sarif_errors(log) == []
    assert any(r["ruleId"] == "detector/economic_dos" for r in log["runs"][0]["results"])
