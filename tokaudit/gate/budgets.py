"""Budgets: the ``[budgets]`` and ``[[tasks]]`` sections of ``tokaudit.toml`` (or ``[tool.tokaudit]``).

A budget is a limit on one metric, measured per member of one scope, with a
``warn`` level, a ``fail`` level, or both. A limit is the most that is allowed:
a value *above* it breaks it (so ``fail = 0`` on a count fails on the first one)::

    [budgets.session]                        # every session (subagents roll up into it)
    cost_usd = { warn = 2.0, fail = 5.0 }
    total_tokens = { fail = 3_000_000 }
    same_tool_chain = { warn = 12, fail = 25 }
    peak_context_tokens = { warn = 160_000 }
    findings = [
      { min_severity = "high", fail = 0 },                      # any high/critical finding fails
      { min_severity = "medium", warn = 0 },
      { detectors = ["economic_dos"], fail = 0 },                # the combined DoS verdict
    ]

    [budgets.model]
    cost_usd = { match = "claude-opus-*", fail = 20.0 }        # only models matching the glob

    [budgets.mcp_server]
    replay_cost_usd = { warn = 0.50, fail = 2.00 }

    [budgets.run]                            # everything the gate read, as one
    cost_usd = { fail = 50.0 }

    [budgets.max_increase]                   # against --baseline FILE (tokaudit baseline save)
    min_sessions = 5                         # smaller cohorts are inconclusive
    p95_cost_usd = { warn = "10%", fail = "20%" }

    [[tasks]]                                # task labels for sessions whose log has none
    field = "cwd"                            # session_id | project | cwd | git_branch | agent
    pattern = "/evals/([^/]+)"               # a regex; the label is its first group ...
    # label = "evals"                        # ... unless one is given

A metric is a number per member; where a metric is given for a scope it is not
measured in (tokens per tool, say), the error names the key and lists the ones
that are. See ``METRICS`` for the catalogue.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from fnmatch import fnmatchcase
from typing import Any

from tokaudit.errors import ConfigError

SCOPES = ("session", "task", "model", "tool", "mcp_server", "run")
SEVERITIES = ("info", "low", "medium", "high", "critical")  # as analyze.detectors.SEVERITIES
LEVELS = ("warn", "fail")
TASK_FIELDS = ("session_id", "project", "cwd", "git_branch", "agent")
REGRESSION_MEASURES = ("total_tokens", "cost_usd")
REGRESSION_STATS = ("p50", "p95")
DEFAULT_MIN_SESSIONS = 5
# A max_increase written as a bare number is a fraction (0.2 = +20%). Larger than this is
# almost surely a percentage typed without its sign ("20" meant as 20%), which would
# silently allow a 20-fold increase: refuse it and say how to write it.
MAX_INCREASE_FRACTION = 10.0

_ALL = frozenset(SCOPES)
_CALL_SCOPES = frozenset({"session", "task", "model", "run"})  # measured on model requests
_TOOL_SCOPES = frozenset({"session", "task", "tool", "mcp_server", "run"})  # measured on tool calls


@dataclass(frozen=True)
class Metric:
    """A measurable quantity: its unit, the scopes it is measured in, and what it means."""

    name: str
    unit: str  # tokens | usd | calls | findings
    scopes: frozenset[str]
    description: str

    @property
    def integer(self) -> bool:
        """Counts take whole-number limits; dollar amounts take any number."""
        return self.unit != "usd"


METRICS: dict[str, Metric] = {
    m.name: m
    for m in (
        Metric("total_tokens", "tokens", _CALL_SCOPES, "every token billed: uncached input, cache reads, cache writes and output"),
        Metric("input_tokens", "tokens", _CALL_SCOPES, "uncached input tokens"),
        Metric("cache_read_tokens", "tokens", _CALL_SCOPES, "input tokens read from the prompt cache"),
        Metric("cache_write_tokens", "tokens", _CALL_SCOPES, "input tokens written to the prompt cache (5-minute and 1-hour)"),
        Metric("output_tokens", "tokens", _CALL_SCOPES, "output tokens, reasoning included"),
        Metric("reasoning_tokens", "tokens", _CALL_SCOPES, "reasoning tokens (a subset of output, where the agent reports them)"),
        Metric("cost_usd", "usd", _CALL_SCOPES, "cost of the model requests, from the bundled price table and [pricing.overrides]"),
        Metric("requests", "calls", _CALL_SCOPES, "model requests"),
        Metric("peak_context_tokens", "tokens", _CALL_SCOPES, "the most tokens one request read (its whole context)"),
        Metric("tool_calls", "calls", _TOOL_SCOPES, "tool calls"),
        Metric("same_tool_chain", "calls", _TOOL_SCOPES, "the longest run of calls of one tool in a session (one interleaved call tolerated)"),
        Metric("result_tokens", "tokens", _TOOL_SCOPES, "tokens of tool results (reported, counted or estimated: see the method)"),
        Metric("replay_tokens", "tokens", _TOOL_SCOPES, "tool arguments and results re-read by later requests of the session"),
        Metric("replay_cost_usd", "usd", _TOOL_SCOPES, "what re-reading tool arguments and results cost, at each later request's input price"),
        Metric("findings", "findings", _TOOL_SCOPES, "detector findings at or above min_severity (optionally of some detectors only)"),
    )
}


@dataclass(frozen=True)
class Budget:
    """One limit: ``metric`` measured per member of ``scope`` (those matching ``match``), at warn and/or fail level."""

    scope: str
    metric: str
    warn: float | None = None
    fail: float | None = None
    match: str | None = None  # a glob on the member's key (model id, tool key, task label, ...)
    min_severity: str = "info"  # findings only
    detectors: tuple[str, ...] = ()  # findings only; empty = every detector

    @property
    def name(self) -> str:
        """A stable, readable id, e.g. ``session.cost_usd`` or ``model[claude-opus-*].findings>=high``.

        Examples:
            >>> Budget("model", "cost_usd", fail=20.0, match="claude-opus-*").name
            'model[claude-opus-*].cost_usd'
            >>> Budget("session", "findings", fail=0, min_severity="high", detectors=("economic_dos",)).name
            'session.findings>=high(economic_dos)'
        """
        scope = f"{self.scope}[{self.match}]" if self.match else self.scope
        metric = self.metric
        if metric == "findings":
            metric += f">={self.min_severity}"
            if self.detectors:
                metric += f"({','.join(self.detectors)})"
        return f"{scope}.{metric}"

    @property
    def unit(self) -> str:
        """The metric's unit (tokens, usd, calls, findings)."""
        return METRICS[self.metric].unit

    def matches(self, member: str) -> bool:
        """True when the member is in this budget (no ``match`` = every member)."""
        return self.match is None or fnmatchcase(member, self.match)


@dataclass(frozen=True)
class RegressionRule:
    """A ``[budgets.max_increase]`` rule: the most a task's p50/p95 may grow over its saved baseline (a fraction)."""

    stat: str  # p50 | p95
    measure: str  # total_tokens | cost_usd
    warn: float | None = None
    fail: float | None = None
    match: str | None = None  # glob on the task label

    @property
    def name(self) -> str:
        """E.g. ``max_increase.p95_cost_usd``."""
        base = f"{self.stat}_{self.measure}"
        return f"max_increase[{self.match}].{base}" if self.match else f"max_increase.{base}"

    def matches(self, task: str) -> bool:
        """True when the task is in this rule."""
        return self.match is None or fnmatchcase(task, self.match)


@dataclass(frozen=True)
class TaskRule:
    """A ``[[tasks]]`` rule: sessions whose ``field`` matches ``pattern`` get ``label`` (default: the first group)."""

    field: str
    pattern: re.Pattern[str]
    label: str | None = None

    def label_for(self, value: str | None) -> str | None:
        """The label this rule gives a session whose field has ``value``, or None when it does not match.

        Examples:
            >>> TaskRule("cwd", re.compile(r"/evals/([^/]+)")).label_for("/ci/evals/fix-tests/run-3")
            'fix-tests'
            >>> TaskRule("project", re.compile("billing"), "billing").label_for("svc-billing"), TaskRule("cwd", re.compile("x")).label_for(None)
            ('billing', None)
        """
        if value is None:
            return None
        m = self.pattern.search(value)
        if m is None:
            return None
        if self.label is not None:
            return self.label
        return m.group(1) if m.re.groups and m.group(1) else m.group(0)


@dataclass(frozen=True)
class BudgetSet:
    """Every budget and regression rule of one config, in file order."""

    budgets: tuple[Budget, ...] = ()
    regressions: tuple[RegressionRule, ...] = ()
    min_sessions: int = DEFAULT_MIN_SESSIONS
    source: str = "defaults"

    def __bool__(self) -> bool:
        return bool(self.budgets or self.regressions)

    @property
    def needs_findings(self) -> bool:
        """True when some budget counts detector findings (the detectors must run)."""
        return any(b.metric == "findings" for b in self.budgets)


# --- parsing ------------------------------------------------------------------------------------


def parse_budgets(data: Any, where: str = "config") -> BudgetSet:
    """Validate a ``[budgets]`` table; errors name the bad key and value.

    Examples:
        >>> bs = parse_budgets({"session": {"cost_usd": {"warn": 2, "fail": 5}}, "max_increase": {"p95_cost_usd": {"fail": "20%"}}})
        >>> [b.name for b in bs.budgets], bs.regressions[0].fail
        (['session.cost_usd'], 0.2)
        >>> parse_budgets({"session": {"cost_usd": {"fail": "lots"}}})
        Traceback (most recent call last):
        ...
        tokaudit.errors.ConfigError: config: 'budgets.session.cost_usd.fail' must be a number ≥ 0 (USD), got 'lots'
    """
    if not isinstance(data, dict):
        raise ConfigError(f"{where}: 'budgets' must be a table, e.g. [budgets.session], got {data!r}")
    unknown = sorted(set(data) - set(SCOPES) - {"max_increase"})
    if unknown:
        raise ConfigError(
            f"{where}: unknown key 'budgets.{unknown[0]}'",
            hint=f"budget scopes are: {', '.join(SCOPES)}; regression rules go in [budgets.max_increase]",
        )
    budgets: list[Budget] = []
    for scope in SCOPES:
        if scope not in data:
            continue
        table = data[scope]
        if not isinstance(table, dict):
            raise ConfigError(f"{where}: 'budgets.{scope}' must be a table of metrics, got {table!r}")
        for metric, spec in table.items():
            key = f"budgets.{scope}.{metric}"
            if metric not in METRICS:
                raise ConfigError(f"{where}: unknown metric '{key}'", hint=f"metrics per {scope}: {', '.join(_metrics_for(scope))}")
            if scope not in METRICS[metric].scopes:
                raise ConfigError(
                    f"{where}: '{metric}' is not measured per {scope} ('{key}')", hint=f"metrics per {scope}: {', '.join(_metrics_for(scope))}"
                )
            for i, item in _items(spec, key, where):
                budgets.append(_budget(scope, metric, item, key if i is None else f"{key}[{i}]", where))
    regressions, min_sessions = _parse_max_increase(data.get("max_increase", {}), where)
    return BudgetSet(tuple(budgets), regressions, min_sessions, where)


def _metrics_for(scope: str) -> list[str]:
    return [name for name, m in METRICS.items() if scope in m.scopes]


def _items(spec: Any, key: str, where: str) -> list[tuple[int | None, dict[str, Any]]]:
    """A metric's value: one table, or a list of tables (several limits on one metric)."""
    if isinstance(spec, dict):
        return [(None, spec)]
    if isinstance(spec, list) and spec and all(isinstance(s, dict) for s in spec):
        return list(enumerate(spec))
    raise ConfigError(
        f"{where}: '{key}' must be a table such as {{ warn = 10, fail = 20 }} or a list of them, got {spec!r}",
        hint="a limit needs its level: write `fail = 20`, not a bare number",
    )


_BUDGET_KEYS = {"warn", "fail", "match"}
_FINDING_KEYS = {"min_severity", "detectors"}


def _budget(scope: str, metric: str, item: dict[str, Any], key: str, where: str) -> Budget:
    allowed = _BUDGET_KEYS | (_FINDING_KEYS if metric == "findings" else set())
    unknown = sorted(set(item) - allowed)
    if unknown:
        raise ConfigError(f"{where}: unknown key '{key}.{unknown[0]}'", hint=f"keys of a {metric} budget: {', '.join(sorted(allowed))}")
    m = METRICS[metric]
    levels = {level: _limit(item[level], f"{key}.{level}", m, where) for level in LEVELS if level in item}
    _check_levels(levels, key, where)
    match = item.get("match")
    if match is not None and (not isinstance(match, str) or not match):
        raise ConfigError(f"{where}: '{key}.match' must be a glob such as \"claude-opus-*\", got {match!r}")
    if scope == "run" and match is not None:
        raise ConfigError(f"{where}: '{key}.match' has nothing to match: the run scope has one member")
    extra: dict[str, Any] = {}
    if metric == "findings":
        severity = item.get("min_severity", "info")
        if severity not in SEVERITIES:
            raise ConfigError(f"{where}: '{key}.min_severity' must be one of {', '.join(SEVERITIES)}, got {severity!r}")
        detectors = item.get("detectors", [])
        if not isinstance(detectors, list) or not all(isinstance(d, str) for d in detectors):
            raise ConfigError(f"{where}: '{key}.detectors' must be a list of detector names, got {detectors!r}")
        known = _detector_names()
        bad = [d for d in detectors if d not in known]
        if bad:
            raise ConfigError(f"{where}: unknown detector {bad[0]!r} in '{key}.detectors'", hint=f"detectors are: {', '.join(known)}")
        extra = {"min_severity": severity, "detectors": tuple(detectors)}
    return Budget(scope, metric, levels.get("warn"), levels.get("fail"), match, **extra)


def _detector_names() -> list[str]:
    from tokaudit.analyze.detectors import DETECTORS

    return list(DETECTORS)


def _limit(value: Any, key: str, metric: Metric, where: str) -> float:
    if metric.integer:
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise ConfigError(f"{where}: '{key}' must be a whole number ≥ 0 ({metric.unit}), got {value!r}")
        return float(value)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0 or value != value or value == float("inf"):
        raise ConfigError(f"{where}: '{key}' must be a number ≥ 0 (USD), got {value!r}")
    return float(value)


def _check_levels(levels: dict[str, float], key: str, where: str) -> None:
    if not levels:
        raise ConfigError(f"{where}: '{key}' has no level", hint="give `warn = ...`, `fail = ...`, or both")
    if "warn" in levels and "fail" in levels and levels["warn"] > levels["fail"]:
        raise ConfigError(
            f"{where}: '{key}.warn' ({_fmt(levels['warn'])}) is above '{key}.fail' ({_fmt(levels['fail'])})",
            hint="a warning should come before the failure: warn ≤ fail",
        )


def _fmt(value: float) -> str:
    return f"{value:g}"


def _parse_max_increase(table: Any, where: str) -> tuple[tuple[RegressionRule, ...], int]:
    if not isinstance(table, dict):
        raise ConfigError(f"{where}: 'budgets.max_increase' must be a table, got {table!r}")
    min_sessions = table.get("min_sessions", DEFAULT_MIN_SESSIONS)
    if isinstance(min_sessions, bool) or not isinstance(min_sessions, int) or min_sessions < 1:
        raise ConfigError(f"{where}: 'budgets.max_increase.min_sessions' must be a whole number ≥ 1, got {min_sessions!r}")
    names = [f"{s}_{m}" for s in REGRESSION_STATS for m in REGRESSION_MEASURES]
    rules: list[RegressionRule] = []
    for name, spec in table.items():
        if name == "min_sessions":
            continue
        key = f"budgets.max_increase.{name}"
        if name not in names:
            raise ConfigError(f"{where}: unknown key '{key}'", hint=f"keys of [budgets.max_increase]: min_sessions, {', '.join(names)}")
        stat, measure = name.split("_", 1)
        for i, item in _items(spec, key, where):
            k = key if i is None else f"{key}[{i}]"
            unknown = sorted(set(item) - _BUDGET_KEYS)
            if unknown:
                raise ConfigError(f"{where}: unknown key '{k}.{unknown[0]}'", hint="keys of a max_increase rule: fail, match, warn")
            levels = {level: _fraction(item[level], f"{k}.{level}", where) for level in LEVELS if level in item}
            _check_levels(levels, k, where)
            match = item.get("match")
            if match is not None and (not isinstance(match, str) or not match):
                raise ConfigError(f"{where}: '{k}.match' must be a glob on the task label, got {match!r}")
            rules.append(RegressionRule(stat, measure, levels.get("warn"), levels.get("fail"), match))
    return tuple(rules), min_sessions


def _fraction(value: Any, key: str, where: str) -> float:
    """An allowed increase: ``"20%"`` / ``"+20%"`` or a fraction ``0.2``.

    Examples:
        >>> _fraction("+20%", "k", "w"), _fraction(0.05, "k", "w"), _fraction("7.5%", "k", "w")
        (0.2, 0.05, 0.075)
    """
    bad = ConfigError(f"{where}: '{key}' must be a percentage such as \"20%\" or a fraction such as 0.2, got {value!r}")
    if isinstance(value, str):
        text = value.strip().removeprefix("+")
        if not text.endswith("%"):
            raise bad
        try:
            fraction = float(text[:-1]) / 100
        except ValueError:
            raise bad from None
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        fraction = float(value)
        if fraction > MAX_INCREASE_FRACTION:
            raise ConfigError(
                f"{where}: '{key}' = {value!r} would allow a {value:g}-fold increase",
                hint=f'a bare number is a fraction (0.2 = +20%); write "{value:g}%" for a percentage',
            )
    else:
        raise bad
    if fraction != fraction or fraction < 0 or fraction == float("inf"):
        raise bad
    return round(fraction, 12)


def parse_tasks(data: Any, where: str = "config") -> tuple[TaskRule, ...]:
    """Validate the ``[[tasks]]`` rules; errors name the bad key (``tasks[N].pattern``) and value.

    Examples:
        >>> [r.field for r in parse_tasks([{"pattern": "x"}, {"field": "project", "pattern": "y", "label": "why"}])]
        ['cwd', 'project']
    """
    if not isinstance(data, list) or not all(isinstance(t, dict) for t in data):
        raise ConfigError(f"{where}: 'tasks' must be a list of tables ([[tasks]] with field, pattern and label), got {data!r}")
    rules = []
    for i, item in enumerate(data):
        key = f"tasks[{i}]"
        unknown = sorted(set(item) - {"field", "pattern", "label"})
        if unknown:
            raise ConfigError(f"{where}: unknown key '{key}.{unknown[0]}'", hint="keys of a [[tasks]] rule: field, label, pattern")
        fld = item.get("field", "cwd")
        if fld not in TASK_FIELDS:
            raise ConfigError(f"{where}: '{key}.field' must be one of {', '.join(TASK_FIELDS)}, got {fld!r}")
        pattern = item.get("pattern")
        if not isinstance(pattern, str) or not pattern:
            raise ConfigError(f"{where}: '{key}.pattern' must be a regular expression string, got {pattern!r}")
        try:
            compiled = re.compile(pattern)
        except re.error as exc:
            raise ConfigError(f"{where}: '{key}.pattern' is not a valid regular expression ({exc}), got {pattern!r}") from exc
        label = item.get("label")
        if label is not None and (not isinstance(label, str) or not label):
            raise ConfigError(f"{where}: '{key}.label' must be a non-empty string, got {label!r}")
        rules.append(TaskRule(fld, compiled, label))
    return tuple(rules)

