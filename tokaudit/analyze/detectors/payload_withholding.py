"""D14 — payload withholding: a chain whose results say nothing new until the last one.

In a run of one tool, the share of result tokens with novelty below
``low_novelty`` before the first result with novelty ≥ ``high_novelty``. Fires on
a withheld share ≥ ``min_withheld_share`` over ≥ ``min_len`` calls — the
PROGRESS-until-TERMINAL shape. False positive: job polling has the same shape;
the combined verdict adds the cost gate.
"""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

from tokaudit.analyze.detectors import Finding
from tokaudit.analyze.detectors._common import Context, chain_finding, run_groups

NAME = "payload_withholding"
TITLE = "Payload withheld until the end of a chain (D14)"


@dataclass(frozen=True)
class Params:
    min_len: int = 4
    low_novelty: float = 0.2
    high_novelty: float = 0.5
    min_withheld_share: float = 0.9


def detect(context: Context, params: Params) -> list[Finding]:
    t = context.tools.filter(pl.col("run_id").is_not_null() & (pl.col("run_pos") > 0) & (pl.col("run_len") >= params.min_len))
    if t.is_empty():
        return []
    # Results after the first call of the run (the first is always new), up to the first high-novelty one.
    # (Run ids are unique across sessions.)
    t = t.with_columns((pl.col("novelty").fill_null(0) >= params.high_novelty).cum_sum().over("run_id").alias("_after"))
    before = t.filter((pl.col("_after") == 0) | ((pl.col("_after") == 1) & (pl.col("novelty").fill_null(0) >= params.high_novelty)))
    stats = before.group_by("run_id").agg(
        pl.col("result_tokens").filter(pl.col("novelty").fill_null(0) < params.low_novelty).sum().alias("withheld"),
        pl.col("result_tokens").filter(pl.col("novelty").fill_null(0) < params.high_novelty).sum().alias("before_payload"),
        (pl.col("novelty").fill_null(0) >= params.high_novelty).any().alias("terminal_payload"),
        pl.len().alias("n"),
    ).with_columns((pl.col("withheld") / pl.max_horizontal(pl.col("before_payload"), pl.lit(1))).alias("share"))
    stats = stats.filter((pl.col("n") >= params.min_len - 1) & (pl.col("share") >= params.min_withheld_share))
    runs = run_groups(context.tools, "run_id", params.min_len).join(stats, on="run_id")
    findings = [
        chain_finding(
            context, run, detector=NAME, metric="withheld_share", value=run["share"],
            threshold=f"≥ {params.min_withheld_share:.0%} of result tokens with novelty < {params.low_novelty} over ≥ {params.min_len} calls",
            what=(
                "The chain's results repeated themselves ("
                + ("the real payload came only at the end" if run["terminal_payload"] else "no result brought new content")
                + ")."
            ),
            extra={"terminal_payload": run["terminal_payload"]},
        )
        for run in runs.iter_rows(named=True)
    ]
    for f in findings:
        f.severity = "low"  # job polling has this shape too: it supports the verdict, it is not one
    return findings
