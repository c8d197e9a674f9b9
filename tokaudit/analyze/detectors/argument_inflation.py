"""D6 — argument inflation: the model writes long arguments the task does not need.

Within a run of one tool that is not a content writer (write, edit, patch,
exec …, whose arguments *are* the work), counting only calls with long
arguments (≥ ``min_call_args_tokens`` each): they total ≥ ``min_args_tokens``
over ≥ ``min_calls`` calls; or such arguments make ≥ ``min_args_share`` of the
output tokens of ≥ ``min_calls`` requests; or the arguments grow
``min_growth``× from the first call to the last over ≥ 4 calls (cumulative
restating). Short arguments never count, however many: a long pagination or
batch run writes little per call, and a request that only calls a tool always
has arguments as most of its output.

A run of an MCP tool — a content writer too — in which the model sent its long
arguments again ≥ ``min_resent_calls`` times (``resent``: the previous call's
values, whole or grown by a field) for a short answer (a rejection, a receipt:
at most ``max_resent_result_share`` of what it sent; an update answered with the
whole record it changed is editing) is a repair loop (evidence ``repair``): the
server rejected each payload ("checksum failed", "field ``schema_version``
mismatch") and had the whole of it written out and paid for again, however it
worded the rejection. It fires on that alone.

Arguments are output tokens — the most expensive kind — and are re-sent as input
on every later request. Catches ``calibration_sequence``-style schemas.
"""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

from tokaudit.analyze.detectors import Finding
from tokaudit.analyze.detectors._common import Context, chain_finding, run_groups

NAME = "argument_inflation"
TITLE = "Inflated tool arguments (D6)"

CONTENT_TOOLS = r"(?i)(write|edit|patch|create|insert|upload|save|replace|update|exec|bash|shell|command|run|python|notebook|sql|query|task|agent)"


@dataclass(frozen=True)
class Params:
    min_args_tokens: int = 1000
    min_calls: int = 3
    min_growth: float = 3.0
    min_args_share: float = 0.8
    min_call_args_tokens: int = 100
    # A repair loop: this many calls that re-sent the previous call's long arguments (≥ min_resent_call_args_tokens
    # each), making at least min_resent_share of the run's calls after its first. Retries after a transient
    # error are two or three.
    min_resent_calls: int = 4
    min_resent_call_args_tokens: int = 300
    min_resent_share: float = 0.75
    max_resent_result_share: float = 0.5  # each re-sent call's result at most this share of its arguments


def detect(context: Context, params: Params) -> list[Finding]:
    # Only runs long enough can fire: drop the rest before the join with the requests (on the request's
    # integer key, ``request_hash``, not on session and turn).
    tools = context.tools.filter(pl.col("run_len") >= params.min_calls).join(
        context.frames.calls.select(pl.col("call_hash").alias("request_hash"), "output_tokens"), on="request_hash", how="left"
    ).with_columns(
        # No request behind the call (an aggregate-only log): the share of output is unknown, not 100 %.
        pl.when(pl.col("output_tokens").is_not_null())
        .then(pl.col("args_tokens") / pl.max_horizontal(pl.col("output_tokens"), pl.lit(1)))
        .alias("_share")
    )
    runs = run_groups(tools, "run_id", params.min_calls)
    if runs.is_empty():
        return []
    long_args = pl.col("args_tokens").fill_null(0) >= params.min_call_args_tokens
    extra = tools.filter(pl.col("run_id").is_not_null()).group_by("run_id").agg(
        pl.col("args_tokens").first().alias("first_args"),
        pl.col("args_tokens").last().alias("last_args"),
        pl.col("args_tokens").filter(long_args).sum().alias("long_args_tokens"),
        long_args.sum().alias("long_args_calls"),
        ((pl.col("_share") >= params.min_args_share) & long_args).sum().alias("high_share_calls"),
        (pl.col("resent") & (pl.col("args_tokens").fill_null(0) >= params.min_resent_call_args_tokens)
         # What came back was a rejection or a receipt, not the work's answer: an update that returns the whole
         # record it changed, call after call, is editing.
         & (pl.col("result_tokens").fill_null(0) <= params.max_resent_result_share * pl.col("args_tokens").fill_null(0))
         ).sum().alias("resent_calls"),
    )
    runs = runs.join(extra, on="run_id").with_columns(
        pl.col("tool_key").str.contains(CONTENT_TOOLS).alias("content_tool"),
        (pl.col("last_args") / pl.max_horizontal(pl.col("first_args"), pl.lit(1))).alias("growth"),
    )
    by_total = (pl.col("long_args_tokens") >= params.min_args_tokens) & (pl.col("long_args_calls") >= params.min_calls) & ~pl.col("content_tool")
    by_growth = (
        (pl.col("growth") >= params.min_growth) & (pl.col("calls") >= 4)
        & (pl.col("last_args") >= params.min_call_args_tokens) & ~pl.col("content_tool")
    )
    by_share = (pl.col("high_share_calls") >= params.min_calls) & ~pl.col("content_tool")
    # Whatever the tool writes: its own content sent again and again is no work of the task's.
    repair = (pl.col("resent_calls") >= params.min_resent_calls) & (pl.col("resent_calls") >= params.min_resent_share * (pl.col("calls") - 1))
    runs = runs.with_columns(repair.alias("repair")).filter(by_total | by_growth | by_share | pl.col("repair"))
    return [
        chain_finding(
            context, run, detector=NAME, metric="run_args_tokens", value=run["long_args_tokens"],
            threshold=f"≥ {params.min_args_tokens:,} argument tokens over ≥ {params.min_calls} calls of ≥ {params.min_call_args_tokens} each, "
            f"growth ≥ {params.min_growth}×, or such arguments ≥ {params.min_args_share:.0%} of output on ≥ {params.min_calls} requests; "
            f"or a repair loop: ≥ {params.min_resent_calls} calls re-sending the previous call's arguments of ≥ "
            f"{params.min_resent_call_args_tokens} tokens, each answered in ≤ {params.max_resent_result_share:.0%} of that",
            what=_what(run),
            extra={"growth": run["growth"], "high_share_calls": run["high_share_calls"], "resent_calls": run["resent_calls"],
                   "repair": run["repair"]},
        )
        for run in runs.iter_rows(named=True)
    ]


def _what(run: dict) -> str:
    """What a run's finding says happened: a repair loop, or long arguments the tool does not need."""
    sizes = f"first call {int(run['first_args']):,}, last {int(run['last_args']):,} tokens"
    if not run["repair"]:
        return (f"The model wrote {int(run['args_tokens']):,} tokens of arguments for a tool that does not need long input "
                f"({sizes}); arguments are billed as output and re-read on every later request.")
    errors = f", {int(run['errors'])} of its results marked as errors" if run["errors"] else ""
    return (f"A repair loop: the model sent the same long arguments again {int(run['resent_calls'])} times, whole or grown "
            f"({sizes}; {int(run['args_tokens']):,} in all){errors}; each copy is billed as output and re-read on every later request.")
