"""D4 — near-duplicate calls: same argument skeleton, results with little new content.

A run of calls to one tool whose arguments have the same skeleton (only numbers,
ids, cursors or long strings changed — exact-equality loop guards never fire on
these) and whose results have mean novelty below ``max_novelty``. Catches counter
and cursor loops, REPAIR resends and paraphrased retries. False positives: status
polling (identical arguments, similar results): a run whose calls all have the
very same small arguments is left to the chain-length and cost detectors (D3,
D1) — exact repeats are what shipped loop guards already catch — unless the
arguments are large (``min_repeat_args_tokens``), as in REPAIR resends.
"""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

from tokaudit.analyze.detectors import Finding
from tokaudit.analyze.detectors._common import Context, chain_finding, run_groups

NAME = "near_duplicates"
TITLE = "Near-duplicate calls with little new in their results (D4)"


@dataclass(frozen=True)
class Params:
    min_len: int = 4
    max_novelty: float = 0.5
    min_repeat_args_tokens: int = 100  # identical arguments at least this long per call still count


def detect(context: Context, params: Params) -> list[Finding]:
    runs = run_groups(context.tools, "skel_run_id", params.min_len)
    # (Run ids are unique across sessions.)
    distinct = context.tools.group_by("skel_run_id").agg(pl.col("args_hash").n_unique().alias("distinct_args"))
    runs = runs.join(distinct, on="skel_run_id").filter(
        (pl.col("mean_novelty").fill_null(1.0) < params.max_novelty)
        & ((pl.col("distinct_args") > 1) | (pl.col("args_tokens") >= params.min_repeat_args_tokens * pl.col("calls")))
    )
    return [
        chain_finding(
            context, run, detector=NAME, metric="skeleton_run_length", value=run["calls"],
            threshold=f"≥ {params.min_len} calls with one argument skeleton and mean result novelty < {params.max_novelty}",
            what=f"Calls that differ only in numbers, ids or long strings, returning little new (mean novelty {run['mean_novelty']:.2f}).",
            extra={"distinct_args": run["distinct_args"]},
        )
        for run in runs.iter_rows(named=True)
    ]
