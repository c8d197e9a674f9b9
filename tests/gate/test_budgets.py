"""Budget parsing: every scope and metric, both config file forms, and errors that name the key and the value."""

from __future__ import annotations

import pytest

from tokaudit.config import load_config, parse_config
from tokaudit.errors import ConfigError
from tokaudit.gate.budgets import METRICS, SCOPES, Budget, parse_budgets, parse_tasks

FULL = """
[budgets.session]
cost_usd = { warn = 2.0, fail = 5 }
total_tokens = { fail = 3_000_000 }
same_tool_chain = { warn = 12, fail = 25 }
findings = [{ min_severity = "high", fail = 0 }, { detectors = ["economic_dos"], fail = 0 }]

[budgets.model]
cost_usd = [{ match = "claude-opus-*", fail = 20.0 }, { match = "claude-haiku-*", warn = 1.0 }]

[budgets.mcp_server]
replay_cost_usd = { warn = 0.5 }

[budgets.run]
cost_usd = { fail = 50 }

[budgets.max_increase]
min_sessions = 8
p95_cost_usd = { warn = "10%", fail = "+20%" }
p50_total_tokens = { fail = 0.25, match = "fix-*" }

[[tasks]]
pattern = "/evals/([^/]+)"

[[tasks]]
field = "project"
pattern = "billing"
label = "billing"
"""


def test_a_full_budget_file_parses_in_file_order(tmp_path):
    path = tmp_path / "tokaudit.toml"
    path.write_text(FULL, encoding="utf-8")
    config = load_config(path)
    names = [b.name for b in config.budgets.budgets]
    assert names == [
        "session.cost_usd",
        "session.total_tokens",
        "session.same_tool_chain",
        "session.findings>=high",
        "session.findings>=info(economic_dos)",
        "model[claude-opus-*].cost_usd",
        "model[claude-haiku-*].cost_usd",
        "mcp_server.replay_cost_usd",
        "run.cost_usd",
    ]
    assert config.budgets.budgets[0] == Budget("session", "cost_usd", warn=2.0, fail=5.0)
    assert config.budgets.needs_findings
    rules = config.budgets.regressions
    assert [(r.name, r.warn, r.fail) for r in rules] == [
        ("max_increase.p95_cost_usd", 0.1, 0.2),
        ("max_increase[fix-*].p50_total_tokens", None, 0.25),
    ]
    assert config.budgets.min_sessions == 8
    assert [t.label_for("/ci/evals/fix-tests/3") for t in config.tasks] == ["fix-tests", None]
    assert config.tasks[1].label_for("svc-billing") == "billing"


def test_budgets_are_read_from_pyproject_tool_tokaudit(tmp_path):
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "x"\n\n[tool.tokaudit.budgets.session]\ncost_usd = { fail = 1.5 }\n', encoding="utf-8"
    )
    config = load_config(cwd=tmp_path)
    assert [b.name for b in config.budgets.budgets] == ["session.cost_usd"]
    assert "[tool.tokaudit]" in config.budgets.source


def test_no_budgets_is_an_empty_set():
    assert not parse_config({}).budgets
    assert parse_config({}).tasks == ()


def test_every_metric_parses_in_every_scope_it_is_measured_in():
    for name, metric in METRICS.items():
        for scope in metric.scopes:
            item = {"fail": 1} if scope != "run" else {"warn": 0, "fail": 1}
            budget = parse_budgets({scope: {name: item}}).budgets[0]
            assert (budget.scope, budget.metric) == (scope, name)
    assert set(SCOPES) == {s for m in METRICS.values() for s in m.scopes}


@pytest.mark.parametrize(
    ("budgets", "needle"),
    [
        ({"sesion": {}}, "unknown key 'budgets.sesion'"),
        ({"session": {"cost": {"fail": 1}}}, "unknown metric 'budgets.session.cost'"),
        ({"tool": {"cost_usd": {"fail": 1}}}, "'cost_usd' is not measured per tool ('budgets.tool.cost_usd')"),
        ({"model": {"same_tool_chain": {"fail": 1}}}, "'same_tool_chain' is not measured per model"),
        ({"session": {"cost_usd": 5}}, "'budgets.session.cost_usd' must be a table such as { warn = 10, fail = 20 } or a list of them, got 5"),
        ({"session": {"cost_usd": {}}}, "'budgets.session.cost_usd' has no level"),
        ({"session": {"cost_usd": {"fail": -1}}}, "'budgets.session.cost_usd.fail' must be a number ≥ 0 (USD), got -1"),
        ({"session": {"cost_usd": {"fail": True}}}, "'budgets.session.cost_usd.fail' must be a number ≥ 0 (USD), got True"),
        ({"session": {"total_tokens": {"fail": 1.5}}}, "'budgets.session.total_tokens.fail' must be a whole number ≥ 0 (tokens), got 1.5"),
        ({"session": {"total_tokens": {"warn": 10, "fail": 5}}}, "'budgets.session.total_tokens.warn' (10) is above 'budgets.session.total_tokens.fail' (5)"),
        ({"session": {"total_tokens": {"fail": 5, "limit": 3}}}, "unknown key 'budgets.session.total_tokens.limit'"),
        ({"session": {"total_tokens": {"fail": 5, "min_severity": "high"}}}, "unknown key 'budgets.session.total_tokens.min_severity'"),
        ({"session": {"findings": {"fail": 0, "min_severity": "severe"}}}, "'budgets.session.findings.min_severity' must be one of info, low, medium, high, critical, got 'severe'"),
        ({"session": {"findings": {"fail": 0, "detectors": ["economic_doss"]}}}, "unknown detector 'economic_doss' in 'budgets.session.findings.detectors'"),
        ({"session": {"findings": [{"fail": 0}, {"warn": "x"}]}}, "'budgets.session.findings[1].warn' must be a whole number ≥ 0 (findings), got 'x'"),
        ({"model": {"cost_usd": {"fail": 1, "match": 3}}}, "'budgets.model.cost_usd.match' must be a glob"),
        ({"run": {"cost_usd": {"fail": 1, "match": "x"}}}, "'budgets.run.cost_usd.match' has nothing to match"),
        ({"max_increase": {"p95_cost": {"fail": "20%"}}}, "unknown key 'budgets.max_increase.p95_cost'"),
        ({"max_increase": {"p95_cost_usd": {"fail": "twenty"}}}, "'budgets.max_increase.p95_cost_usd.fail' must be a percentage such as \"20%\" or a fraction such as 0.2, got 'twenty'"),
        ({"max_increase": {"p95_cost_usd": {"fail": 20}}}, "'budgets.max_increase.p95_cost_usd.fail' = 20 would allow a 20-fold increase"),
        ({"max_increase": {"min_sessions": 0}}, "'budgets.max_increase.min_sessions' must be a whole number ≥ 1, got 0"),
        ([], "'budgets' must be a table"),
    ],
)
def test_bad_budgets_name_the_key_and_the_value(budgets, needle):
    with pytest.raises(ConfigError) as exc:
        parse_config({"budgets": budgets}, "tokaudit.toml")
    assert needle in str(exc.value)
    assert str(exc.value).startswith("tokaudit.toml: ")
    assert exc.value.exit_code == 2


@pytest.mark.parametrize(
    ("tasks", "needle"),
    [
        ({"pattern": "x"}, "'tasks' must be a list of tables"),
        ([{"pattern": "("}], "'tasks[0].pattern' is not a valid regular expression"),
        ([{"pattern": "x"}, {"field": "branch", "pattern": "y"}], "'tasks[1].field' must be one of session_id, project, cwd, git_branch, agent, got 'branch'"),
        ([{"patern": "x"}], "unknown key 'tasks[0].patern'"),
        ([{"pattern": "x", "label": ""}], "'tasks[0].label' must be a non-empty string, got ''"),
        ([{"field": "cwd"}], "'tasks[0].pattern' must be a regular expression string, got None"),
    ],
)
def test_bad_task_rules_name_the_key_and_the_value(tasks, needle):
    with pytest.raises(ConfigError) as exc:
        parse_tasks(tasks, "tokaudit.toml")
    assert needle in str(exc.value)


def test_a_task_rule_without_a_group_labels_with_the_whole_match():
    (rule,) = parse_tasks([{"field": "session_id", "pattern": "nightly-[a-z]+"}])
    assert rule.label_for("claude-code:nightly-evals-3") == "nightly-evals"
