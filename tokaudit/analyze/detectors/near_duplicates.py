"""D4 — near-duplicate calls: same argument skeleton, results with little new content.

A run of calls to one tool whose arguments have the same skeleton (only numbers,
ids, cursors or long strings changed — exact-equality loop guards never fire on
these) and whose results have mean novelty below ``max_novelty``. Catches counter
and cursor loops, REPAIR resends and paraphrased retries. False positives: status
polling (identical arguments, similar results) — hence the cost gate in the
combined verdict.
"""

from __future__ import annotations

from dataclasses import dataclass

from tokaudit.analyze.detectors import Finding
from tokaudit.analyze.detectors._common import Context, chain_finding, run_groups

NAME = "near_duplicates"
TITLE = "Near-duplicate calls with little new in their results (D4)"


@dataclass(frozen=True)
class Params:
    min_len: int = 4
    max_novelty: float = 0.5


def detect(context: Context, params: Params) -> list[Finding]:
    runs = run_groups(context.tools, "skel_run_id", params.min_len)
    runs = runs.filter(runs["mean_novelty"].fill_null(1.0) < params.max_novelty)
    return [
        chain_finding(
            context, run, detector=NAME, metric="skeleton_run_length", value=run["calls"],
            threshold=f"≥ {params.min_len} calls with one argument skeleton and mean result novelty < {params.max_novelty}",
            what=f"Calls that differ only in numbers, ids or long strings, returning little new (mean novelty {run['mean_novelty']:.2f}).",
        )
        for run in runs.iter_rows(named=True)
    ]
