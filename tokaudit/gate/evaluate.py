"""Budgets → verdicts: measure every budget's metric per scope member and judge it.

The measures come from the analysis frames (``analyze.frames``): model requests
for tokens, cost, request counts and peak context; tool calls with their
same-tool run lengths (``analyze.features``) and replayed-context cost
(``analyze.replay``); and the detectors' findings (``analyze.audit``). Each row
carries its scope keys:

* ``session`` — the *root* session: a subagent's requests and tool calls count
  toward the session that spawned it (as ``usage --by session`` rolls them up);
* ``task`` — the root session's task label from its log, else the first
  ``[[tasks]]`` rule that matches, else ``(unlabelled)``;
* ``model``, ``tool`` (``server/tool`` for MCP tools), ``mcp_server``, and ``run``
  (one member, ``all``).

Sums are sums over the member's rows; ``peak_context_tokens`` and
``same_tool_chain`` are maxima. A verdict is ``fail`` when the value is above
the fail level, ``warn`` when above the warn level, ``pass`` otherwise, and
``inconclusive`` when the value cannot be judged: a cost that is partly
unpriced (its known part is a lower bound: above the fail level it still
fails), or a regression whose cohort is too small.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import polars as pl

from tokaudit.gate.budgets import SEVERITIES, Budget, BudgetSet, TaskRule

if TYPE_CHECKING:
    from tokaudit.analyze.detectors import Finding
    from tokaudit.config import Config
    from tokaudit.store.engine import Store

EXIT_OK = 0
EXIT_FAIL = 1  # a fail-level budget, finding budget or regression (or a warning, with --fail-on-warn)
EXIT_USAGE = 2  # usage or configuration error (raised as ConfigError)
EXIT_NO_INPUT = 3  # no usable input (raised as NoInputError)

VERDICTS = ("pass", "warn", "fail", "inconclusive")
UNLABELLED = "(unlabelled)"
RUN_MEMBER = "all"
UNKNOWN_MODEL = "(unknown)"

_TOKEN_COLUMNS = {
    "input_tokens": pl.col("input_tokens"),
    "cache_read_tokens": pl.col("cache_read_tokens"),
    "cache_write_tokens": pl.col("cache_write_5m_tokens") + pl.col("cache_write_1h_tokens"),
    "output_tokens": pl.col("output_tokens"),
    "reasoning_tokens": pl.col("reasoning_tokens"),
}


@dataclass
class Verdict:
    """One budget (or regression rule) judged on one scope member."""

    budget: str  # Budget.name / RegressionRule.name
    scope: str
    member: str
    metric: str
    unit: str  # tokens | usd | calls | findings | fraction
    value: float | None
    warn: float | None
    fail: float | None
    verdict: str  # pass | warn | fail | inconclusive
    note: str = ""
    kind: str = "budget"  # budget | regression
    location: str | None = None  # the log file of a session-scope member

    def to_dict(self) -> dict[str, Any]:
        return {
            "budget": self.budget,
            "kind": self.kind,
            "scope": self.scope,
            "member": self.member,
            "metric": self.metric,
            "unit": self.unit,
            "value": self.value,
            "warn": self.warn,
            "fail": self.fail,
            "verdict": self.verdict,
            "note": self.note,
            "location": self.location,
        }


@dataclass
class GateResult:
    """Every verdict of one gate run, the findings behind them, and what was read."""

    verdicts: list[Verdict]
    findings: list[Finding] = field(default_factory=list)
    sessions: int = 0
    config_source: str = "defaults"
    config_file: str | None = None  # the file the budgets came from (SARIF locates run-wide violations there)
    baseline_source: str | None = None
    ingest: dict[str, Any] | None = None  # the ingest summary, when the gate read paths
    notes: list[str] = field(default_factory=list)
    seconds: float = 0.0
    # session id -> log file, for findings' locations (SARIF, annotations)
    session_files: dict[str, str] = field(default_factory=dict)

    def counts(self) -> dict[str, int]:
        """Verdicts by kind: pass, warn, fail, inconclusive."""
        out = dict.fromkeys(VERDICTS, 0)
        for v in self.verdicts:
            out[v.verdict] += 1
        return out

    def exit_code(self, fail_on_warn: bool = False) -> int:
        """0 within budget (warnings allowed), 1 when something failed (or warned, with ``fail_on_warn``)."""
        counts = self.counts()
        if counts["fail"] or (fail_on_warn and counts["warn"]):
            return EXIT_FAIL
        return EXIT_OK

    def to_dict(self, fail_on_warn: bool = False) -> dict[str, Any]:
        return {
            "exit_code": self.exit_code(fail_on_warn),
            "fail_on_warn": fail_on_warn,
            "counts": self.counts(),
            "sessions": self.sessions,
            "config": self.config_source,
            "baseline": self.baseline_source,
            "verdicts": [v.to_dict() for v in self.verdicts],
            "findings": [f.to_dict() for f in self.findings],
            "ingest": self.ingest,
            "notes": self.notes,
            "seconds": round(self.seconds, 3),
        }


def judge(value: float | None, warn: float | None, fail: float | None, complete: bool = True) -> str:
    """The verdict for ``value`` against its levels; ``complete=False`` marks a lower bound (partly unpriced).

    Examples:
        >>> judge(6, 2, 5), judge(3, 2, 5), judge(1, 2, 5), judge(0, None, 0), judge(1, None, 0)
        ('fail', 'warn', 'pass', 'pass', 'fail')
        >>> judge(3, 2, 5, complete=False), judge(6, 2, 5, complete=False), judge(3, 2, None, complete=False)
        ('inconclusive', 'fail', 'warn')
    """
    if value is None:
        return "inconclusive"
    if fail is not None and value > fail:
        return "fail"
    # A lower bound under the fail level says nothing about the fail level, nor about a warn level it is under.
    if not complete and (fail is not None or warn is None or value <= warn):
        return "inconclusive"
    if warn is not None and value > warn:
        return "warn"
    return "pass"


# --- measures -----------------------------------------------------------------------------------


@dataclass
class Measures:
    """Rows the budgets aggregate, each with its scope keys (``session``, ``task``, ``model``, ``tool``, ``mcp_server``, ``run``)."""

    calls: pl.DataFrame  # one row per deduplicated model request
    tools: pl.DataFrame  # one row per tool call: run_len, result/replay tokens, replay_usd
    findings: pl.DataFrame  # one row per finding: severity_rank, detector
    sessions: pl.DataFrame  # one row per root session: session, task, file
    finding_objects: list[Finding] = field(default_factory=list)
    session_files: dict[str, str] = field(default_factory=dict)  # every session id (subagents too) -> its log file


def session_meta(store: Store) -> pl.DataFrame:
    """Per stored session: parent, the fields task rules read, its task label and its log file."""
    rows = store.duck.execute(
        """
        SELECT s.session_id, any_value(s.parent_session_id), any_value(s.project), any_value(s.cwd), any_value(s.git_branch),
               any_value(s.agent), any_value(s.task_label), min(src.path)
        FROM sessions AS s LEFT JOIN sources AS src ON src.source_id = s.source_id
        GROUP BY s.session_id ORDER BY s.session_id
        """
    ).fetchall()
    cols = ["session_id", "parent_session_id", "project", "cwd", "git_branch", "agent", "task_label", "file"]
    return pl.DataFrame(rows, schema=dict.fromkeys(cols, pl.String), orient="row")


def assign_tasks(meta: pl.DataFrame, rules: Sequence[TaskRule]) -> pl.DataFrame:
    """Map every session to its root session and the root's task: ``session_id, session, task, file``.

    Examples:
        >>> import re
        >>> meta = pl.DataFrame({"session_id": ["a", "a:sub", "b"], "parent_session_id": [None, "a", None],
        ...     "project": ["p", "p", "q"], "cwd": ["/evals/t1", "/evals/t1", "/home/x"], "git_branch": [None] * 3,
        ...     "agent": ["claude-code"] * 3, "task_label": [None, None, None], "file": ["a.jsonl", "a.jsonl", "b.jsonl"]})
        >>> assign_tasks(meta, [TaskRule("cwd", re.compile(r"/evals/([^/]+)"))]).rows()
        [('a', 'a', 't1', 'a.jsonl'), ('a:sub', 'a', 't1', 'a.jsonl'), ('b', 'b', '(unlabelled)', 'b.jsonl')]
    """
    rows = {r["session_id"]: r for r in meta.iter_rows(named=True)}
    out = []
    for sid in rows:
        root = sid
        seen = {sid}
        # Follow parents to the top; a parent not in the store is still the root's id (its own log was not read).
        while (parent := rows.get(root, {}).get("parent_session_id")) and parent not in seen:
            seen.add(parent)
            root = parent
        # The root's label; a subagent whose parent's log was not read is labelled from its own row.
        top = rows.get(root) or rows[sid]
        task = top["task_label"] or next((label for r in rules if (label := r.label_for(top[r.field])) is not None), None)
        out.append((sid, root, task or UNLABELLED, rows[sid]["file"]))
    return pl.DataFrame(out, schema={"session_id": pl.String, "session": pl.String, "task": pl.String, "file": pl.String}, orient="row")


def build_measures(store: Store, config: Config, *, with_findings: bool) -> Measures:
    """Read the store into the rows the budgets aggregate (running the detectors when ``with_findings``)."""
    from tokaudit.analyze.audit import build_context, quote_results, run_detectors
    from tokaudit.analyze.detectors import resolve_params
    from tokaudit.analyze.features import tool_features
    from tokaudit.analyze.frames import load_frames
    from tokaudit.analyze.replay import call_attribution

    frames = load_frames(store, config=config)
    findings: list[Finding] = []
    if with_findings:
        params = resolve_params(config.detectors)
        context = build_context(frames, params["cost_blowup"].min_cohort)
        findings, _ = run_detectors(context, params)
        quote_results(store, findings)
        tools = context.tools
    else:
        tools = tool_features(frames.tools, frames.calls)
    keys = assign_tasks(session_meta(store), config.tasks)
    # Requests or tool calls of a session without a sessions row are their own root, unlabelled.
    keyed = keys.select("session_id", "session", "task")

    def attach(frame: pl.DataFrame) -> pl.DataFrame:
        out = frame.join(keyed, on="session_id", how="left")
        return out.with_columns(
            pl.coalesce(pl.col("session"), pl.col("session_id")).alias("session"),
            pl.col("task").fill_null(UNLABELLED),
            pl.lit(RUN_MEMBER).alias("run"),
        )

    calls = attach(frames.calls.with_columns(pl.col("model").fill_null(UNKNOWN_MODEL)))
    replay = call_attribution(frames).group_by("session_id", "tool_call_id").agg(
        pl.col("replay_tokens").sum(),
        pl.col("replay_usd").sum(),
        pl.col("replay_usd").is_null().any().alias("replay_unpriced"),
    )
    tools = attach(
        tools.join(replay, on=["session_id", "tool_call_id"], how="left").with_columns(
            pl.col("tool_key").fill_null("(unknown)").alias("tool"),
            pl.col("replay_tokens").fill_null(0),
            pl.col("replay_usd").fill_null(0.0),
            # A call with no attribution row (no request of its session to attach to) was never replayed.
            pl.col("replay_unpriced").fill_null(False),
        )
    )
    servers = dict(tools.filter(pl.col("mcp_server").is_not_null()).select("tool", "mcp_server").unique("tool").iter_rows())
    finding_rows = [
        (f.session_id, f.detector, SEVERITIES.index(f.severity) if f.severity in SEVERITIES else 0, f.tool_key, servers.get(f.tool_key))
        for f in findings
    ]
    finding_frame = attach(
        pl.DataFrame(
            finding_rows,
            schema={"session_id": pl.String, "detector": pl.String, "severity_rank": pl.Int64, "tool": pl.String, "mcp_server": pl.String},
            orient="row",
        )
    )
    roots = keys.filter(pl.col("session_id") == pl.col("session")).select("session", "task", "file")
    # Roots known only from their requests (no sessions row) still are sessions to budget.
    extra = calls.select("session", "task").unique().join(roots, on="session", how="anti").with_columns(pl.lit(None, pl.String).alias("file"))
    sessions = pl.concat([roots, extra]).sort("session")
    files = {sid: f for sid, f in keys.select("session_id", "file").iter_rows() if f is not None}
    return Measures(calls=calls, tools=tools, findings=finding_frame, sessions=sessions, finding_objects=findings, session_files=files)


# --- aggregation --------------------------------------------------------------------------------


def _members(measures: Measures, scope: str) -> list[str]:
    if scope == "run":
        return [RUN_MEMBER]
    if scope in ("session", "task"):
        return sorted(set(measures.sessions[scope].to_list()))
    if scope == "model":
        return sorted(set(measures.calls["model"].to_list()))
    return sorted(set(measures.tools[scope].drop_nulls().to_list()))


def _aggregate(measures: Measures, budget: Budget) -> dict[str, tuple[float, bool]]:
    """member -> (value, complete) for one budget; members without rows are absent (value 0)."""
    scope, metric = budget.scope, budget.metric
    if metric in ("total_tokens", *_TOKEN_COLUMNS, "cost_usd", "requests", "peak_context_tokens"):
        frame = measures.calls
        if metric == "total_tokens":
            agg = (pl.col("input_total_tokens") + pl.col("output_tokens")).sum(), pl.lit(True)
        elif metric in _TOKEN_COLUMNS:
            agg = _TOKEN_COLUMNS[metric].sum(), pl.lit(True)
        elif metric == "cost_usd":
            agg = pl.col("cost_usd").sum(), pl.col("cost_usd").is_not_null().all()
        elif metric == "requests":
            agg = pl.len(), pl.lit(True)
        else:
            # An aggregate row stands for several requests: its input is a sum, not one context.
            agg = pl.col("input_total_tokens").filter(~pl.col("is_aggregate")).max(), pl.lit(True)
    elif metric == "findings":
        frame = measures.findings.filter(pl.col("severity_rank") >= SEVERITIES.index(budget.min_severity))
        if budget.detectors:
            frame = frame.filter(pl.col("detector").is_in(list(budget.detectors)))
        agg = pl.len(), pl.lit(True)
    else:
        frame = measures.tools
        agg = {
            "tool_calls": (pl.len(), pl.lit(True)),
            "same_tool_chain": (pl.col("run_len").max(), pl.lit(True)),
            "result_tokens": (pl.col("result_tokens").sum(), pl.lit(True)),
            "replay_tokens": (pl.col("replay_tokens").sum(), pl.lit(True)),
            "replay_cost_usd": (pl.col("replay_usd").sum(), ~pl.col("replay_unpriced").any()),
        }[metric]
    if frame.is_empty():
        return {}
    grouped = frame.filter(pl.col(scope).is_not_null()).group_by(scope).agg(agg[0].alias("value"), agg[1].alias("complete"))
    return {k: (float(v or 0), bool(c)) for k, v, c in grouped.iter_rows()}


def evaluate_budgets(measures: Measures, budgets: BudgetSet) -> list[Verdict]:
    """One verdict per budget × scope member (in budget order; within a budget, the largest values first)."""
    files = dict(measures.sessions.select("session", "file").iter_rows())
    verdicts: list[Verdict] = []
    for budget in budgets.budgets:
        values = _aggregate(measures, budget)
        members = [m for m in _members(measures, budget.scope) if budget.matches(m)]
        if not members:
            verdicts.append(
                Verdict(budget.name, budget.scope, budget.match or "", budget.metric, budget.unit, None, budget.warn, budget.fail,
                        "inconclusive", note=f"no {budget.scope} matched {budget.match!r}")
            )
            continue
        rows = []
        for member in members:
            value, complete = values.get(member, (0.0, True))
            note = "" if complete else "partly unpriced: the value is a lower bound"
            location = files.get(member) if budget.scope == "session" else None
            rows.append(
                Verdict(budget.name, budget.scope, member, budget.metric, budget.unit, value, budget.warn, budget.fail,
                        judge(value, budget.warn, budget.fail, complete), note=note, location=location)
            )
        rows.sort(key=lambda v: (-(v.value or 0.0), v.member))
        verdicts.extend(rows)
    return verdicts


def session_totals(measures: Measures) -> pl.DataFrame:
    """Per root session: task, total tokens, cost (null when any request is unpriced) — what baselines compare."""
    per = measures.calls.group_by("session").agg(
        (pl.col("input_total_tokens") + pl.col("output_tokens")).sum().alias("total_tokens"),
        pl.when(pl.col("cost_usd").is_null().any()).then(None).otherwise(pl.col("cost_usd").sum()).alias("cost_usd"),
    )
    return measures.sessions.join(per, on="session", how="inner").select("session", "task", "total_tokens", "cost_usd").sort("session")


def evaluate(
    store: Store,
    config: Config,
    *,
    baseline: dict[str, Any] | None = None,
    baseline_source: str | None = None,
    with_findings: bool = False,
) -> GateResult:
    """Measure the store and judge every budget of ``config`` (and its max_increase rules against ``baseline``)."""
    from tokaudit.gate.baseline import compare_baseline, task_stats

    started = time.perf_counter()
    budgets = config.budgets
    measures = build_measures(store, config, with_findings=with_findings or budgets.needs_findings)
    verdicts = evaluate_budgets(measures, budgets)
    notes = []
    if baseline is not None:
        verdicts += compare_baseline(baseline, task_stats(session_totals(measures)), budgets)
    elif budgets.regressions:
        notes.append("[budgets.max_increase] rules were not checked: pass --baseline FILE (written by `tokaudit baseline save`)")
    return GateResult(
        verdicts=verdicts,
        findings=measures.finding_objects,
        sessions=measures.sessions.height,
        config_source=budgets.source,
        baseline_source=baseline_source,
        notes=notes,
        seconds=time.perf_counter() - started,
        session_files=measures.session_files,
    )
