"""D7 — context pressure: sessions that fill the model's window or keep compacting.

Peak occupancy = the largest input (all kinds) of a request over the model's
context window (reported, or the family default); a row summing a session's
requests (``is_aggregate``: SWE-agent's per-run totals, what an OpenHands log
reports beyond its steps) is no request, and its sum no context; compactions counted from the
log. Fires on occupancy ≥ ``min_occupancy`` or ≥ ``min_compactions``
compactions. Long coding sessions do this legitimately: it sets severity and
context for other findings rather than alerting alone.
"""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

from tokaudit.analyze.detectors import Finding
from tokaudit.analyze.detectors._common import Context

NAME = "context_pressure"
TITLE = "Context window nearly full or repeatedly compacted (D7)"


@dataclass(frozen=True)
class Params:
    min_occupancy: float = 0.7
    min_compactions: int = 2


def detect(context: Context, params: Params) -> list[Finding]:
    calls = context.frames.calls.filter(~pl.col("is_aggregate"))
    if calls.is_empty():
        return []
    per = calls.group_by("session_id").agg(
        (pl.col("input_total_tokens") / pl.col("context_window_tokens")).max().alias("peak"),
        pl.col("input_total_tokens").arg_max().alias("_i"),
        pl.col("turn").get(pl.col("input_total_tokens").arg_max()).alias("peak_turn"),
        pl.col("segment").max().alias("compactions"),
        pl.col("turn").max().alias("last_turn"),
    )
    per = per.filter((pl.col("peak").fill_null(0) >= params.min_occupancy) | (pl.col("compactions") >= params.min_compactions))
    out = []
    for s in per.iter_rows(named=True):
        peak = s["peak"]
        out.append(
            Finding(
                detector=NAME, severity="info", session_id=s["session_id"], first_turn=0, last_turn=s["last_turn"],
                metric="peak_context_occupancy", value=peak if peak is not None else 0.0,
                threshold=f"≥ {params.min_occupancy:.0%} of the window or ≥ {params.min_compactions} compactions",
                excess_tokens=None, excess_usd=None,
                explanation=(
                    (f"The context reached {peak:.0%} of the model's window (turn {s['peak_turn']})" if peak is not None else "The context window is unknown")
                    + f" and was compacted {s['compactions']} times: every request re-reads all of it."
                ),
                evidence={"compactions": s["compactions"]},
            )
        )
    return out
