"""What several detectors share: the context they run in, and turning a run of tool calls into a finding."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import polars as pl

from tokaudit.analyze.detectors import SEVERITIES, Finding, severity_for_ratio
from tokaudit.analyze.frames import Frames


@dataclass
class Context:
    """Frames plus the derived tables every detector may read (built once per audit)."""

    frames: Frames
    tools: pl.DataFrame  # frames.tools with analyze.features columns
    baselines: pl.DataFrame  # analyze.cohorts.session_baselines
    findings: list[Finding] = field(default_factory=list)  # earlier detectors' findings (for the combined verdict)

    def ratio(self, session_id: str) -> float | None:
        """The session's cost as a multiple of its cohort's median (None when not known); for a subagent without
        a cohort of its own kind, its task's (``cohorts.session_baselines``: ``task_ratio``)."""
        return self._ratios.get(session_id)

    def group_ratio(self, session_id: str) -> float | None:
        """For a session that spawned subagents, its whole task's cost (the session and its subagents) as a multiple
        of its cohort's tasks' median (``cohorts.session_baselines``: ``group_ratio``); None otherwise."""
        return self._groups.get(session_id)

    def ratio_estimated(self, session_id: str) -> bool:
        """Whether the session's cost ratio is an estimate from its tool traffic (``cohorts.with_traffic_estimates``)."""
        return session_id in self._estimated

    def ratio_text(self, session_id: str) -> str:
        """The session's cost ratio in words ("the session cost 3.1× its cohort's median"), saying when it was
        estimated from tool traffic; "" when not known."""
        ratio = self._ratios.get(session_id)
        if ratio is None:
            return ""
        if session_id in self._estimated:
            return (f"the session's tool traffic, re-read by each later request, came to an estimated {ratio:.1f}× its "
                    "cohort's median (no model usage was logged for it)")
        if session_id in self._by_task:
            return f"the task this subagent served (its parent session and all its subagents) cost {ratio:.1f}× its cohort's median"
        return f"the session cost {ratio:.1f}× its cohort's median"

    def __post_init__(self) -> None:
        known = self.baselines.with_columns(pl.coalesce("task_ratio", "cost_ratio").alias("_ratio")).filter(pl.col("_ratio").is_not_null())
        self._ratios: dict[str, float] = dict(zip(known["session_id"].to_list(), known["_ratio"].to_list()))
        self._by_task: set[str] = set(known.filter(pl.col("task_ratio").is_not_null())["session_id"].to_list())
        self._estimated: set[str] = set(self.baselines.filter(pl.col("cost_estimated"))["session_id"].to_list())
        groups = self.baselines.filter(pl.col("group_ratio").is_not_null())
        self._groups: dict[str, float] = dict(zip(groups["session_id"].to_list(), groups["group_ratio"].to_list()))


# A prompt that shrank below this share of the request before it is a new context: a compaction or a
# clear, whether or not the log recorded one (OTel records none).
NEW_CONTEXT_SHARE = 0.5
# A chain's tools named in its explanation (the rest in its evidence).
MAX_NAMED_TOOLS = 5
# The highest severity of a chain made only of the agent's own tools (no MCP call in it).
OWN_TOOLS_MAX_SEVERITY = "medium"
# A tool whose name starts with a checking verb reads what it is sent, whatever its object: "review_patch",
# "validateQuery", "lint-sql" judge a patch or a query, they write none. A server asking for the whole
# diff again on every round of review is the inflation, not the work.
CHECKING_TOOLS = (r"(?i)(?:^|/)(?:review|validate|verify|check|lint|audit|inspect|analy[sz]e|evaluate|assess|score|scan|critique"
                  r"|grade|diagnose|explain|estimate|preview|dry[-_]?run)")
# Verbs of the tools that change what a checking tool would read: a file written, edited or patched.
EDITING_VERBS = "write|edit|patch|create|insert|replace|update|save"
EDITING_TOOLS = rf"(?i)({EDITING_VERBS})"


def named_for(pattern: str, name: pl.Expr | None = None) -> pl.Expr:
    """Whether a call's tool is named for ``pattern`` (a regular expression over ``tool_key``, or over ``name``) and not
    for checking what it is sent (``CHECKING_TOOLS``: "review_patch" judges a patch, it writes none)."""
    name = pl.col("tool_key") if name is None else name
    return name.str.contains(pattern) & ~name.str.contains(CHECKING_TOOLS)


def previous(column: str) -> pl.Expr:
    """Per request (calls sorted by session and turn): ``column`` of the request before it in its session, null
    for a session's first. A plain shift within the sorted rows, not a window per session (a second a batch
    of a large store)."""
    return pl.when(pl.col("session_id") == pl.col("session_id").shift(1)).then(pl.col(column).shift(1))


def same_context() -> pl.Expr:
    """Per request (calls sorted by session and turn): it continues the previous request's context — same
    compaction segment and model, and its prompt did not shrink below ``NEW_CONTEXT_SHARE`` of the previous
    one. Only then should the previous prompt have been read back from the cache."""
    return (
        (pl.col("segment") == previous("segment")) & (pl.col("model") == previous("model"))
        & (pl.col("input_total_tokens") >= NEW_CONTEXT_SHARE * previous("input_total_tokens"))
    ).fill_null(False)  # fmt: skip


def known_turns(row: dict) -> dict[str, int | None]:
    """A row's ``first_turn`` and ``last_turn`` as a finding's turn range; turn -1 (the log has no per-request
    usage to place the calls in: aggregate-only formats) is none."""
    known = row["first_turn"] is not None and row["first_turn"] >= 0
    return {"first_turn": row["first_turn"] if known else None, "last_turn": row["last_turn"] if known else None}


def fire_turn(calls: int) -> pl.Expr:
    """Aggregation: the turn of a group's ``calls``-th call (its last if it has fewer) — when an online
    guard counting to ``calls`` would have fired."""
    return pl.col("turn").sort().get(pl.min_horizontal(pl.len() - 1, pl.lit(max(calls - 1, 0)))).alias("fire_turn")


_RUN_LENGTHS = {"run_id": "run_len", "skel_run_id": "skel_run_len", "steer_chain_id": "steer_chain_len", "relay_walk_id": "relay_walk_len",
                "server_run_id": "server_run_len", "tool_series_id": "tool_series_len"}


def billed_usd_sum(column: str = "billed_usd") -> pl.Expr:
    """The dollars a group of calls was billed (``column``, per call): null when one of them was billed tokens at no
    known price (an unpriced model, a request without a timestamp) — a sum of the priced ones alone would pass for the
    whole cost, and a sum of none for $0."""
    unpriced = pl.col(column).is_null() & pl.col("billed_tokens").is_not_null()
    return pl.when(unpriced.any()).then(None).otherwise(pl.col(column).sum())


def run_groups(tools: pl.DataFrame, by: str, min_len: int) -> pl.DataFrame:
    """One row per run (``by`` = "run_id", "skel_run_id", "steer_chain_id", "relay_walk_id", "server_run_id" or "tool_series_id") of at
    least ``min_len`` calls, with its totals.
    Run ids are unique across sessions (each counts on over the whole frame), so a run is grouped by its id alone."""
    # Runs too short are dropped on their length (analyze.features) before the totals: most runs are.
    return (
        tools.filter(pl.col(by).is_not_null() & (pl.col(_RUN_LENGTHS[by]) >= min_len))
        .group_by(by)
        .agg(
            pl.col("session_id").first(),
            pl.len().alias("calls"),
            pl.col("tool_key").first(),
            pl.col("tool_key").unique(maintain_order=True).alias("chain_tools"),
            pl.col("turn").min().alias("first_turn"),
            pl.col("turn").max().alias("last_turn"),
            pl.col("args_tokens").sum().alias("args_tokens"),
            pl.col("result_tokens").sum().alias("result_tokens"),
            pl.col("novelty").mean().alias("mean_novelty"),
            (pl.col("novelty").fill_null(0) * pl.col("result_tokens").fill_null(0)).sum().alias("novel_tokens"),
            (pl.col("args_tokens").fill_null(0) + pl.col("result_tokens").fill_null(0)).sum().alias("traffic_tokens"),
            pl.col("billed_tokens").sum().alias("billed_tokens"),
            billed_usd_sum().alias("billed_usd"),
            pl.col("billed_tokens").first().alias("first_billed_tokens"),
            pl.col("billed_usd").first().alias("first_billed_usd"),
            pl.col("tool_call_id").filter(pl.col("has_result")).first().alias("first_call"),
            pl.col("tool_call_id").filter(pl.col("has_result")).last().alias("last_call"),
            pl.col("is_error").cast(pl.Int32).sum().alias("errors"),
            pl.col("is_mcp").any().alias("mcp"),
            # Calls of other tools came between (a steered chain, a run tolerating an aside): not "in a row".
            (pl.col("call_idx").max() - pl.col("call_idx").min() + 1 > pl.len()).alias("interleaved"),
            # The turn at which the run reached min_len calls: when an online guard would have fired.
            fire_turn(min_len),
        )
        .filter(pl.col("calls") >= min_len)
        .sort("session_id", "first_turn")
    )


def task_cost(context: Context, session: str) -> tuple[float | None, str, str]:
    """A task-scope finding's cost on the lead ``session``: the whole task's ratio to its cohort (``Context.group_ratio``),
    the severity it gives (the lead's own ratio without one), and a sentence saying it ("" without one)."""
    group = context.group_ratio(session)
    severity = severity_for_ratio(group if group is not None else context.ratio(session))
    text = f" The task (this session and all its subagents) cost {group:.1f}× its cohort's median." if group is not None else ""
    return group, severity, text


def tool_list(tools: list[str]) -> str:
    """The first ``MAX_NAMED_TOOLS`` of ``tools`` quoted, for an explanation ("'a', 'b' …")."""
    return f"{', '.join(repr(t) for t in tools[:MAX_NAMED_TOOLS])}{' …' if len(tools) > MAX_NAMED_TOOLS else ''}"


def chain_finding(
    context: Context,
    run: dict[str, Any],
    *,
    detector: str,
    metric: str,
    value: float,
    threshold: str,
    what: str,
    extra: dict[str, Any] | None = None,
    max_severity: str | None = None,
    named: str | None = None,
) -> Finding:
    """A finding about a run of calls: the tokens and dollars after its first call count as excess; its
    severity follows the session's cost, up to ``max_severity`` (evidence that may be benign). ``named`` replaces
    the explanation's "Tool 'x' was" (the chain's tools as one tool's aliases) for chains of several tools of their own."""
    ratio = context.ratio(run["session_id"])
    excess_tokens = int((run["billed_tokens"] or 0) - (run["first_billed_tokens"] or 0))
    usd = run.get("billed_usd")
    excess_usd = None if usd is None else float(usd - (run.get("first_billed_usd") or 0))
    tool = run["tool_key"]
    turns = known_turns(run)
    first_turn, last_turn = turns["first_turn"], turns["last_turn"]
    where = f" (turns {first_turn}–{last_turn})" if first_turn is not None else ""
    tools = run.get("chain_tools") or [tool]
    # Aliases of one server's tool that it rotated (features.chain_key): one chain under several names.
    named = named or (f"Tool {tool!r} was" if len(tools) == 1
                      else f"Tools {tool_list(tools)} (one server's tool under {len(tools)} names it rotated) were")
    # An MCP transcript logs no model requests: there is no bill of those turns to quote. A log of one total for the
    # run (SWE-agent) places its calls on no turn: what they were billed is their share of that total.
    whose = "those turns were billed" if first_turn is not None else "their share of the run's logged total was"
    billed = (f"; {whose} {int(run['billed_tokens']):,} tokens" + (f" (${usd:,.2f})" if usd is not None else "")
              if run["billed_tokens"] else "")
    explanation = (
        f"{what} {named} called {run['calls']} times{' (other calls between)' if run.get('interleaved') else ' in a row'}{where}{billed}"
        + (f"; {context.ratio_text(run['session_id'])}." if ratio is not None else ".")
    )
    evidence = {
        "calls": run["calls"],
        "args_tokens": run.get("args_tokens"),
        "result_tokens": run.get("result_tokens"),
        "mean_novelty": run.get("mean_novelty"),
        # Tool call ids of the first and last result; the audit quotes their excerpts (analyze.audit).
        "first_call": run.get("first_call"),
        "last_call": run.get("last_call"),
        "fire_turn": run.get("fire_turn"),
        "mcp": run.get("mcp", True),
        **({"tools": tools} if len(tools) > 1 else {}),
        **(extra or {}),
    }
    severity = severity_for_ratio(ratio)
    # A chain of the agent's own tools (reads, edits, test runs) is how long coding work looks: the
    # session's cost still shows, but it does not make the chain an attack.
    caps = [] if evidence["mcp"] else [OWN_TOOLS_MAX_SEVERITY]
    if max_severity is not None:
        caps.append(max_severity)
    severity = min([severity, *caps], key=SEVERITIES.index)
    return Finding(
        detector=detector,
        severity=severity,
        session_id=run["session_id"],
        first_turn=first_turn,
        last_turn=last_turn,
        metric=metric,
        value=float(value),
        threshold=threshold,
        excess_tokens=excess_tokens,
        excess_usd=excess_usd,
        explanation=explanation,
        tool_key=tool,
        evidence=evidence,
    )
