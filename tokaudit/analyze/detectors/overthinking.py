"""D10 — reasoning overthinking: a request that thinks far more than the model usually does.

Reasoning tokens of a request — when not reported separately, its output minus
the arguments of the tool calls it made (a large file write is output, not
thought) — against the median of the same model over the analysed sessions; by
default only requests that read a tool result are compared, with each other
(decoys arrive in results; hard thinking on a user's prompt is not suspicious). Fires
on ≥ ``min_times_median`` × that median and ≥ ``min_tokens``. Catches decoy
problems planted in tool results (OverThink), reasoning bombs and sponge
prompts; notes whether the request followed a tool result. False positives:
genuinely hard problems, reasoning-effort changes.
"""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

from tokaudit.analyze.detectors import Finding
from tokaudit.analyze.detectors._common import Context

NAME = "overthinking"
TITLE = "Reasoning far above the model's norm (D10)"


@dataclass(frozen=True)
class Params:
    min_times_median: float = 8.0
    min_tokens: int = 3000
    min_model_requests: int = 20  # fewer requests of a model than this: no median to compare with
    # Decoys arrive in tool results: compare only requests that read one, with the model's other such requests.
    # Deliberate thinking on a user's prompt (a hard task) is then not held against the model.
    only_after_tool_results: bool = True


def detect(context: Context, params: Params) -> list[Finding]:
    args_per_turn = context.tools.group_by("session_id", "turn").agg(pl.col("args_tokens").sum().alias("_args"))
    calls = context.frames.calls.filter(~pl.col("is_aggregate")).join(args_per_turn, on=["session_id", "turn"], how="left")
    calls = calls.with_columns(
        pl.coalesce(pl.col("reasoning_tokens"), pl.max_horizontal(pl.lit(0), pl.col("output_tokens") - pl.col("_args").fill_null(0))).alias("_think")
    )
    if calls.is_empty():
        return []
    if not context.tools.is_empty():
        fed = context.tools.select("session_id", (pl.col("turn") + 1).alias("turn")).unique().with_columns(pl.lit(True).alias("_after_tool"))
        calls = calls.join(fed, on=["session_id", "turn"], how="left").with_columns(pl.col("_after_tool").fill_null(False))
    else:
        calls = calls.with_columns(pl.lit(False).alias("_after_tool"))
    if params.only_after_tool_results:
        calls = calls.filter(pl.col("_after_tool"))
    calls = calls.with_columns(
        pl.col("_think").median().over("model").alias("_median"), pl.len().over("model").alias("_n")
    ).filter(
        (pl.col("_n") >= params.min_model_requests)
        & (pl.col("_think") >= params.min_tokens)
        & (pl.col("_think") >= params.min_times_median * pl.max_horizontal(pl.col("_median"), pl.lit(1)))
    )
    out = []
    for c in calls.iter_rows(named=True):
        kind = "reasoning" if c["reasoning_tokens"] is not None else "output"
        follows = c["_after_tool"]
        out.append(
            Finding(
                detector=NAME, severity="medium", session_id=c["session_id"], first_turn=c["turn"], last_turn=c["turn"],
                metric=f"{kind}_tokens_vs_model_median", value=c["_think"] / max(c["_median"], 1),
                threshold=f"≥ {params.min_times_median}× the model's median and ≥ {params.min_tokens:,} tokens",
                excess_tokens=int(c["_think"] - c["_median"]), excess_usd=None,
                explanation=(
                    f"Request {c['turn']} spent {c['_think']:,} {kind} tokens, {c['_think'] / max(c['_median'], 1):.0f}× the median of "
                    f"{c['model']}" + (" — right after a tool result, which may have planted a decoy problem." if follows else ".")
                ),
                evidence={"model": c["model"], "model_median_tokens": c["_median"], "after_tool_result": follows},
            )
        )
    return out
