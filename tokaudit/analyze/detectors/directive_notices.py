"""D13 — directive notices in tool results (a weak signal).

Results that tell the model to call again ("call … again", "resend", "increment",
"do not abbreviate", "before answering" … — ``analyze.lexicon``), counted per session and tool. Fires
on ≥ ``min_hits``. Attackers can word notices without any of these phrases, so
the combined verdict never needs this detector; it helps explain a chain the
structural detectors found. False positives: API hints ("call with page=2").
"""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

from tokaudit.analyze.detectors import Finding
from tokaudit.analyze.detectors._common import Context

NAME = "directive_notices"
TITLE = "Results instructing the model to call again (D13, weak)"


@dataclass(frozen=True)
class Params:
    min_hits: int = 2


def detect(context: Context, params: Params) -> list[Finding]:
    tools = context.tools
    if tools.is_empty():
        return []
    hits = tools.filter(pl.col("has_directive"))
    per = hits.group_by("session_id", "tool_key").agg(
        pl.len().alias("n"), pl.col("turn").min().alias("first_turn"), pl.col("turn").max().alias("last_turn"),
        pl.col("tool_call_id").first().alias("example_call"),
    ).filter(pl.col("n") >= params.min_hits)
    return [
        Finding(
            detector=NAME, severity="low", session_id=r["session_id"], first_turn=r["first_turn"], last_turn=r["last_turn"],
            metric="directive_results", value=r["n"], threshold=f"≥ {params.min_hits} results", excess_tokens=None, excess_usd=None,
            tool_key=r["tool_key"],
            explanation=f"{r['n']} results of {r['tool_key']!r} instruct the model to call again or resend (wording-based, weak alone).",
            evidence={"first_call": r["example_call"]},
        )
        for r in per.iter_rows(named=True)
    ]
