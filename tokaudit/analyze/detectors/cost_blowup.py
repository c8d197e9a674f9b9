"""D1 — session cost blowup against its cohort.

x = log10 of the session's price-free cost; z = 0.6745·(x − cohort median)/max(MAD, 0.05)
(``analyze.cohorts``). Fires when z ≥ ``min_z`` **and** the session cost at least
``min_ratio`` times the cohort median: any economic DoS costs money, whatever the
wording of the tool results. False positives: agent cost varies a lot even on one
task; small or new cohorts (the fallback levels are broader and noisier).
"""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

from tokaudit.analyze.detectors import Finding, severity_for_ratio
from tokaudit.analyze.detectors._common import Context

NAME = "cost_blowup"
TITLE = "Session cost far above its cohort (D1)"


@dataclass(frozen=True)
class Params:
    min_z: float = 3.5
    min_ratio: float = 5.0
    min_cohort: int = 20  # cohort size before falling back to a broader cohort


def detect(context: Context, params: Params) -> list[Finding]:
    # A cost estimated from tool traffic (an MCP transcript recorded alone) is a gate for chain evidence, not a
    # finding of its own: the session logged no tokens to put a figure on.
    sessions = context.frames.sessions.join(context.baselines.filter(~pl.col("cost_estimated")), on="session_id", how="inner")
    hits = sessions.filter((sessions["cost_z"] >= params.min_z) & (sessions["cost_ratio"] >= params.min_ratio))
    out = []
    for s in hits.iter_rows(named=True):
        baseline_tokens = s["cohort_median_tokens"]
        excess_share = 1 - 1 / s["cost_ratio"]
        excess_usd = None if s["cost_usd"] is None else s["cost_usd"] * excess_share
        out.append(
            Finding(
                detector=NAME,
                severity=severity_for_ratio(s["cost_ratio"]),
                session_id=s["session_id"],
                first_turn=0,
                last_turn=max(0, (s["requests"] or 1) - 1),
                metric="cost_ratio",
                value=s["cost_ratio"],
                threshold=f"z ≥ {params.min_z} and ≥ {params.min_ratio}× the median of cohort '{s['cohort']}' (n={s['cohort_n']})",
                excess_tokens=int((s["input_total_tokens"] or 0) + (s["output_tokens"] or 0)) - int(
                    ((s["input_total_tokens"] or 0) + (s["output_tokens"] or 0)) / s["cost_ratio"]
                ),
                excess_usd=excess_usd,
                explanation=(
                    f"This session cost {s['cost_ratio']:.1f}× the median of comparable sessions (cohort '{s['cohort']}', "
                    f"{s['cohort_n']} sessions; robust z = {s['cost_z']:.1f}) over {s['requests']} requests and "
                    f"{s['tool_calls']} tool calls. Cost alone is a weak signal — agents vary a lot — so read it with the "
                    "chain findings of the same session, which say where the tokens went."
                ),
                evidence={"cohort": s["cohort"], "cohort_n": s["cohort_n"], "z": s["cost_z"], "cohort_median_tokens": baseline_tokens},
            )
        )
    return out
