"""D5 — continuation loop with low yield.

A run of calls to one tool with one argument skeleton whose arguments do change
(a counter, page or cursor — ``counter_only``) **or** whose results read like
continuation notices (``has_more``, ``next_cursor``, "page 3 of 9", "partial",
"segment", "remaining" … — ``analyze.lexicon``), while the run's payload yield (new result tokens per
billed token) stays below ``max_yield``. Fires on runs of ``min_len`` or more. The
counter-only test needs no wording, so lexicon-free notices are still caught.
False positives: small-page pagination and job polling (both return new content
or finish quickly; the yield gate and the cohort cost gate separate them).
"""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

from tokaudit.analyze.detectors import Finding
from tokaudit.analyze.detectors._common import Context, chain_finding, run_groups

NAME = "continuation_loop"
TITLE = "Continuation loop returning little (D5)"


@dataclass(frozen=True)
class Params:
    min_len: int = 5
    max_yield: float = 0.1


def detect(context: Context, params: Params) -> list[Finding]:
    tools = context.tools.with_columns(pl.col("has_continuation").alias("_marker"))
    runs = run_groups(tools, "skel_run_id", params.min_len)
    if runs.is_empty():
        return []
    extra = tools.group_by("session_id", "skel_run_id").agg(
        pl.col("args_hash").n_unique().alias("distinct_args"), pl.col("_marker").mean().alias("marker_share")
    )
    runs = runs.join(extra, on=["session_id", "skel_run_id"]).with_columns(
        (pl.col("novel_tokens") / pl.max_horizontal(pl.col("traffic_tokens"), pl.lit(1.0))).alias("run_yield")
    )
    runs = runs.filter((pl.col("distinct_args") > 1) & (pl.col("run_yield") < params.max_yield))
    findings = []
    for run in runs.iter_rows(named=True):
        how = "arguments change only in a counter, page or cursor" + (
            " and the results read like continuation notices" if run["marker_share"] >= 0.5 else ""
        )
        findings.append(
            chain_finding(
                context, run, detector=NAME, metric="run_yield", value=run["run_yield"],
                threshold=f"< {params.max_yield} over ≥ {params.min_len} calls",
                what=f"A continuation loop: {how}, and only {run['run_yield']:.1%} of the tokens the calls added to the context was new result content.",
                extra={"distinct_args": run["distinct_args"], "continuation_marker_share": run["marker_share"]},
            )
        )
    return findings
