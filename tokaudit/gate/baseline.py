"""Baselines: per-task p50/p95 of session tokens and cost, saved as JSON and compared in the gate.

``tokaudit baseline save FILE`` writes, for every task (see ``evaluate.assign_tasks``),
the number of sessions and the 50th and 95th percentiles of their total tokens
and of their cost (over the sessions whose every request is priced). The file
is meant to be committed: keys are sorted, numbers rounded, and nothing in it
depends on when it was written::

    {
      "format": "tokaudit-baseline",
      "tasks": {
        "fix-tests": {
          "cost_usd": {"p50": 0.412, "p95": 0.977, "sessions": 12},
          "sessions": 12,
          "total_tokens": {"p50": 381220.0, "p95": 902114.5, "sessions": 12}
        }
      },
      "tokaudit_version": "0.1.0",
      "version": 1
    }

``tokaudit gate --baseline FILE`` computes the same figures for the sessions it
reads and applies the ``[budgets.max_increase]`` rules: the increase of the
current p50/p95 over the baseline's, as a fraction, against the rule's warn and
fail levels. A task with fewer than ``min_sessions`` sessions on either side is
*inconclusive* — a percentile of three sessions says little — and so is a task
missing from one side.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import polars as pl

from tokaudit.errors import ConfigError
from tokaudit.gate.budgets import REGRESSION_MEASURES, REGRESSION_STATS, BudgetSet
from tokaudit.gate.evaluate import Verdict, judge

BASELINE_FORMAT = "tokaudit-baseline"
BASELINE_VERSION = 1
_QUANTILES = {"p50": 0.50, "p95": 0.95}
_DIGITS = {"total_tokens": 1, "cost_usd": 6}


def percentile(values: list[float], q: float) -> float:
    """The ``q`` quantile with linear interpolation between order statistics (numpy's default).

    Examples:
        >>> percentile([1, 2, 3, 4], 0.5), percentile([10, 20], 0.95), percentile([7], 0.95)
        (2.5, 19.5, 7.0)
    """
    ordered = sorted(values)
    rank = q * (len(ordered) - 1)
    lo, hi = math.floor(rank), math.ceil(rank)
    return float(ordered[lo] + (ordered[hi] - ordered[lo]) * (rank - lo))


def task_stats(sessions: pl.DataFrame) -> dict[str, dict[str, Any]]:
    """Per task: session count and p50/p95 of total tokens and cost, from ``evaluate.session_totals`` rows.

    Examples:
        >>> frame = pl.DataFrame({"session": ["a", "b"], "task": ["t", "t"], "total_tokens": [100, 300], "cost_usd": [1.0, None]})
        >>> task_stats(frame)["t"]["cost_usd"]
        {'sessions': 1, 'p50': 1.0, 'p95': 1.0}
    """
    out: dict[str, dict[str, Any]] = {}
    for (task,), group in sessions.group_by(["task"], maintain_order=True):
        entry: dict[str, Any] = {"sessions": group.height}
        for measure in REGRESSION_MEASURES:
            values = [v for v in group[measure].to_list() if v is not None]
            stats: dict[str, Any] = {"sessions": len(values)}
            for stat, q in _QUANTILES.items():
                stats[stat] = round(percentile(values, q), _DIGITS[measure]) if values else None
            entry[measure] = stats
        out[str(task)] = entry
    return dict(sorted(out.items()))


def baseline_document(stats: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """The JSON document ``baseline save`` writes."""
    from tokaudit import __version__

    return {"format": BASELINE_FORMAT, "version": BASELINE_VERSION, "tokaudit_version": __version__, "tasks": stats}


def dump_baseline(document: dict[str, Any]) -> str:
    """Stable text: sorted keys, two-space indent, a final newline (diffs stay small when committed)."""
    return json.dumps(document, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def load_baseline(path: str | Path) -> dict[str, Any]:
    """Read and check a baseline file; a missing or malformed one is a ConfigError (exit 2) naming the problem."""
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise ConfigError(f"baseline file not found: {path}", hint="write one with `tokaudit baseline save FILE`") from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read baseline file {path}: {exc}") from exc
    except json.JSONDecodeError as exc:
        raise ConfigError(f"baseline file {path} is not valid JSON: {exc}") from exc
    if not isinstance(data, dict) or data.get("format") != BASELINE_FORMAT:
        raise ConfigError(f"{path} is not a tokaudit baseline ('format' should be {BASELINE_FORMAT!r})", hint="write one with `tokaudit baseline save FILE`")
    if data.get("version") != BASELINE_VERSION:
        raise ConfigError(f"{path}: baseline version {data.get('version')!r} is not supported (this tokaudit reads version {BASELINE_VERSION})")
    tasks = data.get("tasks")
    if not isinstance(tasks, dict):
        raise ConfigError(f"{path}: 'tasks' must be an object keyed by task label, got {tasks!r}")
    for task, entry in tasks.items():
        if not isinstance(entry, dict) or not _count(entry.get("sessions")):
            raise ConfigError(f"{path}: 'tasks.{task}.sessions' must be a whole number, got {entry!r}")
        for measure in REGRESSION_MEASURES:
            stats = entry.get(measure)
            if not isinstance(stats, dict) or not _count(stats.get("sessions")):
                raise ConfigError(f"{path}: 'tasks.{task}.{measure}' must hold sessions, p50 and p95, got {stats!r}")
            for stat in REGRESSION_STATS:
                value = stats.get(stat)
                if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0):
                    raise ConfigError(f"{path}: 'tasks.{task}.{measure}.{stat}' must be a number ≥ 0 or null, got {value!r}")
    return data


def _count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def compare_baseline(baseline: dict[str, Any], current: dict[str, dict[str, Any]], budgets: BudgetSet) -> list[Verdict]:
    """One verdict per ``[budgets.max_increase]`` rule × task: the increase of the current p50/p95 over the baseline's.

    Examples:
        >>> from tokaudit.gate.budgets import RegressionRule
        >>> rules = BudgetSet(regressions=(RegressionRule("p95", "cost_usd", fail=0.2),), min_sessions=2)
        >>> base = {"tasks": {"t": {"sessions": 5, "cost_usd": {"sessions": 5, "p95": 1.0}}}}
        >>> now = {"t": {"sessions": 5, "cost_usd": {"sessions": 5, "p95": 1.25}}}
        >>> v = compare_baseline(base, now, rules)[0]
        >>> v.verdict, round(v.value, 4), v.note
        ('fail', 0.25, 'p95 cost_usd 1.25 vs baseline 1 (5 vs 5 sessions)')
    """
    base_tasks: dict[str, Any] = baseline.get("tasks", {})
    verdicts = []
    for rule in budgets.regressions:
        for task in sorted(set(base_tasks) | set(current)):
            if not rule.matches(task):
                continue
            verdicts.append(_compare(rule, task, base_tasks.get(task), current.get(task), budgets.min_sessions))
    return verdicts


def _compare(rule, task: str, base: dict[str, Any] | None, now: dict[str, Any] | None, min_sessions: int) -> Verdict:
    def verdict(value: float | None, outcome: str, note: str) -> Verdict:
        return Verdict(rule.name, "task", task, f"{rule.stat}_{rule.measure}", "fraction", value, rule.warn, rule.fail, outcome, note=note, kind="regression")

    what = f"{rule.stat} {rule.measure}"
    if base is None:
        return verdict(None, "inconclusive", "task not in the baseline")
    if now is None:
        return verdict(None, "inconclusive", "no sessions of this task in this run")
    b, n = base[rule.measure], now[rule.measure]
    sizes = f"({n['sessions']} vs {b['sessions']} sessions)"
    if n["sessions"] < min_sessions or b["sessions"] < min_sessions:
        return verdict(None, "inconclusive", f"cohort too small for a percentile {sizes}; min_sessions = {min_sessions}")
    old, new = b.get(rule.stat), n.get(rule.stat)
    if old is None or new is None:
        return verdict(None, "inconclusive", f"{what} unknown (unpriced sessions) {sizes}")
    if old == 0:
        if new == 0:
            return verdict(0.0, "pass", f"{what} 0 vs baseline 0 {sizes}")
        return verdict(None, "inconclusive", f"{what} {new:g} vs baseline 0: no ratio {sizes}")
    increase = new / old - 1.0
    return verdict(increase, judge(increase, rule.warn, rule.fail), f"{what} {new:g} vs baseline {old:g} {sizes}")
