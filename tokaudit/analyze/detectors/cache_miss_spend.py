"""D8 — cache-miss spend: input re-written or sent uncached although the prefix was seen before.

Per request: the new suffix it should have added is e = max(0, input − previous
input); the excess is max(0, uncached + cache writes − e) — tokens of an old prefix
that were billed at the full or cache-write price instead of the cache-read price.
Fires when the session's excess is ≥ ``min_excess_share`` of its input and ≥
``min_excess_tokens``. Catches prefix invalidation (a ``tools/list`` change, a
mutated system prompt, a server slower than the cache TTL). The first request,
requests after a compaction (recorded, or seen as a prompt that shrank to less
than half) and model switches are not counted, nor sessions that never report a
cache read (no cache, or a provider that does not say).
"""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

from tokaudit.analyze.detectors import Finding
from tokaudit.analyze.detectors._common import Context, same_context

NAME = "cache_miss_spend"
TITLE = "Input re-billed after cache misses (D8)"


@dataclass(frozen=True)
class Params:
    min_excess_share: float = 0.2
    min_excess_tokens: int = 50_000


def detect(context: Context, params: Params) -> list[Finding]:
    calls = context.frames.calls.filter(~pl.col("is_aggregate"))
    # A provider that never reports cache reads has no cache to miss (or does not say): skip its sessions.
    calls = calls.filter((pl.col("cache_read_tokens") > 0).any().over("session_id"))
    if calls.is_empty():
        return []
    prev_input = pl.col("input_total_tokens").shift(1).over("session_id")
    calls = calls.with_columns(
        pl.when(same_context())
        .then(
            pl.max_horizontal(
                pl.lit(0),
                pl.col("input_tokens") + pl.col("cache_write_5m_tokens") + pl.col("cache_write_1h_tokens")
                - pl.max_horizontal(pl.lit(0), pl.col("input_total_tokens") - prev_input),
            )
        )
        .otherwise(0)
        .alias("excess")
    )
    per = calls.group_by("session_id").agg(
        pl.col("excess").sum().alias("excess"),
        pl.col("input_total_tokens").sum().alias("input"),
        pl.col("turn").filter(pl.col("excess") > 0).min().alias("first_turn"),
        pl.col("turn").filter(pl.col("excess") > 0).max().alias("last_turn"),
        (pl.col("excess") > 0).sum().alias("miss_requests"),
    ).filter((pl.col("excess") >= params.min_excess_tokens) & (pl.col("excess") >= params.min_excess_share * pl.col("input")))
    return [
        Finding(
            detector=NAME, severity="medium", session_id=s["session_id"], first_turn=s["first_turn"], last_turn=s["last_turn"],
            metric="cache_miss_share", value=s["excess"] / max(s["input"], 1),
            threshold=f"≥ {params.min_excess_share:.0%} of input and ≥ {params.min_excess_tokens:,} tokens",
            excess_tokens=int(s["excess"]), excess_usd=None,
            explanation=(
                f"{int(s['excess']):,} input tokens ({s['excess'] / max(s['input'], 1):.0%} of the session's input) on "
                f"{s['miss_requests']} requests were billed uncached or as cache writes although the same prefix had been "
                "sent before: something invalidated the prompt cache (a changed tool list or system prompt, or pauses longer "
                "than the cache lifetime)."
            ),
        )
        for s in per.iter_rows(named=True)
    ]
