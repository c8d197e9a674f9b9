"""Cohort baselines: what a session of the same kind normally costs.

Agent cost varies a lot even on one task (tens of times), so a session is only
compared with its own cohort, with robust statistics (median and MAD of the log
cost, which tolerate a contaminated baseline up to half of it). The cohort is
the most specific of these with enough sessions:

1. same task label, agent (and subagent type) and model — at least ``min_n``;
2. same agent (and subagent type) and model — at least ``min_n``;
3. same agent — at least ``min_fallback_n`` (a broad, noisy comparison).

A session with no such cohort gets no baseline: its cost ratio is unknown, and
detectors gated on cost stay silent rather than compare it with unlike
sessions (another agent's, another model's).

A subagent is a piece of its parent's task: compared with whole sessions (the
broad fallback) it looks cheap however much it spent. When no cohort of its own
kind is large enough, the cost gates read its task's ratio instead
(``task_ratio``): the parent session and all its subagents together against
the same sums for the parent's cohort — its tasks that spawned subagents too,
when there are enough of them.

Cost here is the price-free ``cost_equiv_tokens`` (see ``analyze.frames``), so
unpriced models compare too.
"""

from __future__ import annotations

import polars as pl

MAD_FLOOR = 0.05  # log10 units: a cohort of identical sessions must not make every tiny difference infinite
ROBUST_Z = 0.6745  # makes the MAD-based z comparable to a standard z on normal data

_LEVELS = (
    ("task", ["task_label", "agent", "subagent_type", "model"]),
    ("agent+model", ["agent", "subagent_type", "model"]),
    ("agent", ["agent"]),
)


# What every request of an agent reads before any tool traffic (its instructions and tool definitions), for
# sessions that logged no request: a modest figure (coding agents send several times more), so the estimate
# errs low.
STANDING_PROMPT_TOKENS = 4000


def with_traffic_estimates(sessions: pl.DataFrame, tools: pl.DataFrame, links: pl.DataFrame) -> pl.DataFrame:
    """``sessions`` with a price-free cost estimated for those that logged tool calls and no model request and
    served no agent session in the store — an MCP transcript recorded alone — and ``cost_estimated`` True on them.

    Without it they have no cost, and no cohort to be compared with. The estimate is what the agent must have
    read: a request per call, each reading a standing prompt (``STANDING_PROMPT_TOKENS``: instructions and
    tool definitions, never logged here) and the tool traffic so far — each call's arguments and result are
    in the context of the request after it and re-read by every later one, so they count once for each call
    from theirs to the end: n × standing prompt + Σ (args + result tokens) × (calls from it to the end).
    Like an agent's bill, it grows with the square of a chain's length, and one large read in a short session
    weighs no more than its re-reads. Such sessions form their own cohort (their agent is the transcript's),
    so the estimate is only ever compared with other estimates.
    """
    alone = sessions.filter((pl.col("requests") == 0) & (pl.col("tool_calls") > 0) & ~pl.col("session_id").is_in(links["session_id"].to_list()))
    traffic = (
        tools.filter(pl.col("session_id").is_in(alone["session_id"].to_list()))
        .sort("session_id", "call_idx")
        .with_columns((pl.len().over("session_id") - pl.int_range(pl.len()).over("session_id")).alias("_reads"))
        .group_by("session_id")
        .agg(
            (pl.len() * STANDING_PROMPT_TOKENS
             + ((pl.col("args_tokens").fill_null(0) + pl.col("result_tokens").fill_null(0)) * pl.col("_reads")).sum()).alias("_estimate")
        )
    )
    # Only the sessions recorded alone got an estimate.
    estimated = pl.col("_estimate").is_not_null()
    return (
        sessions.join(traffic, on="session_id", how="left")
        .with_columns(
            pl.when(estimated).then(pl.col("_estimate").cast(pl.Float64)).otherwise(pl.col("cost_equiv_tokens")).alias("cost_equiv_tokens"),
            estimated.alias("cost_estimated"),
        )
        .drop("_estimate")
    )


def session_baselines(sessions: pl.DataFrame, min_n: int = 20, min_fallback_n: int = 8) -> pl.DataFrame:
    """Per session: its cohort (level and size), the cohort's median cost, robust z, cost ratio, whether
    its cost was estimated (``with_traffic_estimates``), for a subagent without a cohort of its own kind,
    its task's cost ratio (``task_ratio``, else null), and for a session that spawned subagents, the cost ratio
    of its whole task (``group_ratio``: the session and its subagents, else null)."""
    return _with_task_ratios(sessions, _baselines(sessions, min_n, min_fallback_n), min_n, min_fallback_n)


def _with_task_ratios(sessions: pl.DataFrame, own: pl.DataFrame, min_n: int, min_fallback_n: int) -> pl.DataFrame:
    """``own`` plus ``task_ratio`` for subagents compared only with whole sessions (or with nothing): the cost
    ratio of their parent's group — the parent and its subagents summed — among the groups of the parent's cohort."""
    cost = pl.col("cost_equiv_tokens").fill_null(0)
    subagent_cost = (
        sessions.filter(pl.col("parent_session_id").is_not_null())
        .group_by("parent_session_id")
        .agg(cost.sum().alias("_subagents"))
        .rename({"parent_session_id": "session_id"})
    )
    # Whole tasks only (main sessions), each with its subagents' cost added: like is compared with like.
    groups = (
        sessions.filter(pl.col("parent_session_id").is_null())
        .join(subagent_cost, on="session_id", how="left")
        .with_columns((cost + pl.col("_subagents").fill_null(0)).alias("cost_equiv_tokens"), pl.col("_subagents").is_not_null().alias("_delegated"))
        .drop("_subagents")
    )
    # A task that spawns subagents costs more than one that does not: it is compared with other tasks that
    # delegated when they make a cohort, else with every task of its cohort.
    delegated = _baselines(groups.filter(pl.col("_delegated")), min_n, min_fallback_n)
    every = _baselines(groups, min_n, min_fallback_n).join(delegated.select("session_id"), on="session_id", how="anti")
    by_group = pl.concat([delegated, every]).select(pl.col("session_id").alias("parent_session_id"), pl.col("cost_ratio").alias("_group_ratio"))
    # Subagents with a cohort of their own kind (type and model) keep it: only the broad fallback is replaced.
    of_their_kind = own.filter(pl.col("cohort") != "agent")["session_id"]
    wanted = (
        sessions.filter(pl.col("parent_session_id").is_not_null() & ~pl.col("session_id").is_in(of_their_kind.to_list()))
        .join(by_group, on="parent_session_id", how="inner")
        .select("session_id", pl.col("_group_ratio").alias("task_ratio"))
    )
    # The task's ratio on the session that spawned it: waste spread over its subagents is measured on the whole.
    group = (
        by_group.rename({"parent_session_id": "session_id", "_group_ratio": "group_ratio"})
        .join(groups.filter(pl.col("_delegated")).select("session_id"), on="session_id", how="semi")
    )
    # A subagent with no baseline of its own still gets a row: the gates read its task's ratio.
    return (
        own.join(wanted, on="session_id", how="full", coalesce=True)
        .join(group, on="session_id", how="full", coalesce=True)
        .with_columns(pl.col("cost_estimated").fill_null(False))
    )


def _baselines(sessions: pl.DataFrame, min_n: int, min_fallback_n: int) -> pl.DataFrame:
    """``session_baselines`` without task ratios."""
    base = sessions.filter(pl.col("cost_equiv_tokens") > 0).select(
        "session_id", "task_label", "agent", "subagent_type", "model", pl.col("cost_equiv_tokens").log10().alias("log_cost")
    )
    if base.is_empty():
        return pl.DataFrame(
            schema={"session_id": pl.String, "cohort": pl.String, "cohort_n": pl.UInt32, "cohort_median_tokens": pl.Float64,
                    "cost_z": pl.Float64, "cost_ratio": pl.Float64, "cost_estimated": pl.Boolean}
        )
    parts = []
    for level, keys in _LEVELS:
        # Sessions without a task label form no task cohort: "no label" is not a task.
        members = base.filter(pl.col("task_label").is_not_null()) if level == "task" else base
        stats = members.group_by(keys).agg(
            pl.len().alias("n"),
            pl.col("log_cost").median().alias("med"),
            (pl.col("log_cost") - pl.col("log_cost").median()).abs().median().alias("mad"),
        )
        frame = members.join(stats, on=keys, how="left", nulls_equal=True).with_columns(pl.lit(level).alias("cohort"))
        frame = frame.select("session_id", "log_cost", "cohort", "n", "med", "mad")
        frame = frame.filter(pl.col("n") >= (min_fallback_n if level == "agent" else min_n))
        if parts:
            frame = frame.join(pl.concat(parts).select("session_id"), on="session_id", how="anti")
        parts.append(frame)
    chosen = pl.concat(parts)
    # Sessions straight from the frames (tests, tools) have no estimates: their costs are all logged.
    estimated = sessions.select("session_id", pl.col("cost_estimated") if "cost_estimated" in sessions.columns else pl.lit(False).alias("cost_estimated"))
    return chosen.join(estimated, on="session_id", how="left").select(
        "session_id",
        "cohort",
        pl.col("n").cast(pl.UInt32).alias("cohort_n"),
        (10 ** pl.col("med")).alias("cohort_median_tokens"),
        (ROBUST_Z * (pl.col("log_cost") - pl.col("med")) / pl.max_horizontal(pl.col("mad"), pl.lit(MAD_FLOOR))).alias("cost_z"),
        (10 ** (pl.col("log_cost") - pl.col("med"))).alias("cost_ratio"),
        pl.col("cost_estimated").fill_null(False),
    )
