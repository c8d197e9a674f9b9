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


def session_baselines(sessions: pl.DataFrame, min_n: int = 20, min_fallback_n: int = 8) -> pl.DataFrame:
    """Per session: its cohort (level and size), the cohort's median cost, robust z and cost ratio."""
    base = sessions.filter(pl.col("cost_equiv_tokens") > 0).select(
        "session_id", "task_label", "agent", "subagent_type", "model", pl.col("cost_equiv_tokens").log10().alias("log_cost")
    )
    if base.is_empty():
        return pl.DataFrame(
            schema={"session_id": pl.String, "cohort": pl.String, "cohort_n": pl.UInt32, "cohort_median_tokens": pl.Float64,
                    "cost_z": pl.Float64, "cost_ratio": pl.Float64}
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
    return chosen.select(
        "session_id",
        "cohort",
        pl.col("n").cast(pl.UInt32).alias("cohort_n"),
        (10 ** pl.col("med")).alias("cohort_median_tokens"),
        (ROBUST_Z * (pl.col("log_cost") - pl.col("med")) / pl.max_horizontal(pl.col("mad"), pl.lit(MAD_FLOOR))).alias("cost_z"),
        (10 ** (pl.col("log_cost") - pl.col("med"))).alias("cost_ratio"),
    )
