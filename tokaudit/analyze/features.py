"""Per-tool-call features the chain detectors share: result novelty, same-tool runs, skeleton runs.

* ``novelty`` — 1 − the highest Jaccard similarity between this result's word
  set and those of the previous ``lookback`` results of the same tool in the
  session (digits and long tokens masked, so "segment 3 of 20" and "segment 4
  of 20" are the same words). A first result has novelty 1; a call without a
  result has none. Computed on the stored excerpt (head and tail).
* runs — consecutive calls of one tool (``tool_key``) in a session, tolerating
  one interleaved call of another tool (A A B A A is one run of four A; the B
  belongs to no run): ``run_id``, ``run_len``, ``run_pos``.
* skeleton runs — within a run, consecutive calls whose arguments have the same
  skeleton (only numbers, ids or long strings changed): ``skel_run_id``,
  ``skel_run_len``.
* ``billed_tokens``, ``billed_usd`` — input (all kinds) plus output of the
  request that asked for the call, and its cost, divided among the calls it asked for.
"""

from __future__ import annotations

import polars as pl

LOOKBACK_CALLS = 8
_MASK_DIGITS = r"[0-9]+"
_MASK_TOKENS = r"[a-z0-9_+/=-]{16,}"
_WORD = r"[a-z0#]+"


def masked_words(col: str = "result_excerpt") -> pl.Expr:
    """The set of words of a result excerpt with digits and long tokens masked."""
    return (
        pl.col(col)
        .str.to_lowercase()
        .str.replace_all(_MASK_TOKENS, "#")
        .str.replace_all(_MASK_DIGITS, "0")
        .str.extract_all(_WORD)
        .list.unique()
    )


def tool_features(tools: pl.DataFrame, calls: pl.DataFrame, lookback: int = LOOKBACK_CALLS) -> pl.DataFrame:
    """``tools`` with novelty, run and skeleton-run columns and billed tokens (see the module docstring)."""
    if tools.is_empty():
        return tools.with_columns(
            pl.lit(None, pl.Float64).alias("novelty"),
            pl.lit(None, pl.Int64).alias("run_id"),
            pl.lit(None, pl.UInt32).alias("run_len"),
            pl.lit(None, pl.Int64).alias("run_pos"),
            pl.lit(None, pl.Int64).alias("skel_run_id"),
            pl.lit(None, pl.UInt32).alias("skel_run_len"),
            pl.lit(None, pl.Float64).alias("billed_tokens"),
            pl.lit(None, pl.Float64).alias("billed_usd"),
        )
    t = tools.sort("session_id", "call_idx").with_columns(masked_words().alias("_words"))
    by_tool = ["session_id", "tool_key"]
    best = pl.lit(0.0)
    for k in range(1, lookback + 1):
        prev = pl.col("_words").shift(k).over(by_tool)
        inter = pl.col("_words").list.set_intersection(prev).list.len()
        union = pl.col("_words").list.set_union(prev).list.len()
        sim = pl.when(prev.is_not_null() & (union > 0)).then(inter / union).otherwise(0.0)
        best = pl.max_horizontal(best, sim)
    t = t.with_columns(pl.when(pl.col("result_excerpt").is_null()).then(None).otherwise(1.0 - best).alias("novelty"))

    prev_key = pl.col("tool_key").shift(1).over("session_id")
    next_key = pl.col("tool_key").shift(-1).over("session_id")
    t = t.with_columns(((pl.col("tool_key") != prev_key) & (pl.col("tool_key") != next_key) & (prev_key == next_key)).fill_null(False).alias("_interleaved"))
    main = t.filter(~pl.col("_interleaved")).with_columns(
        (pl.col("tool_key") != pl.col("tool_key").shift(1).over("session_id")).fill_null(True).cum_sum().over("session_id").alias("run_id")
    )
    main = main.with_columns(
        pl.len().over("session_id", "run_id").alias("run_len"),
        pl.int_range(pl.len()).over("session_id", "run_id").alias("run_pos"),
        ((pl.col("args_skeleton") != pl.col("args_skeleton").shift(1).over("session_id", "run_id")).fill_null(True))
        .cum_sum()
        .over("session_id", "run_id")
        .alias("_skel_n"),
    )
    main = main.with_columns((pl.col("run_id") * 100_000 + pl.col("_skel_n")).alias("skel_run_id"))
    main = main.with_columns(pl.len().over("session_id", "skel_run_id").alias("skel_run_len"))
    t = t.join(main.select("session_id", "tool_call_id", "run_id", "run_len", "run_pos", "skel_run_id", "skel_run_len"),
               on=["session_id", "tool_call_id"], how="left")

    per_turn = t.group_by("session_id", "turn").agg(pl.len().alias("_n"))
    billed = calls.select(
        "session_id", "turn", (pl.col("input_total_tokens") + pl.col("output_tokens")).alias("_billed"), pl.col("cost_usd").alias("_usd")
    )
    t = t.join(per_turn, on=["session_id", "turn"], how="left").join(billed, on=["session_id", "turn"], how="left")
    t = t.with_columns((pl.col("_billed") / pl.col("_n")).alias("billed_tokens"), (pl.col("_usd") / pl.col("_n")).alias("billed_usd"))
    return t.drop("_words", "_interleaved", "_n", "_billed", "_usd").sort("session_id", "call_idx")
