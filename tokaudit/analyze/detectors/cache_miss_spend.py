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

Slow tools: an MCP tool that took ``min_stall_seconds`` or more to answer (its
result's time minus its call's), after which the next request missed the cache —
it re-paid at least ``min_stall_miss_share`` of the prompt it should have read
back — on ``min_stall_calls`` or more calls of a session. The wait must be the
tool's own: an agent that polls a job every few minutes, sleeping in between,
loses the cache too, by its own choice. A server that
answers only after the prompt cache expired (five minutes by default), and
asks to be called again, makes every request re-write the whole context at
the cache-write price; a finding of its own, naming the tool. False
positives: a tool that legitimately blocks for minutes (a build, a deploy
wait) called several times.

Cache churn (metric ``cache_churn``): the warm cache lost again and again right after MCP calls. A
request at most ``max_warm_gap_s`` after the one before it, in the same context (no compaction, no
model switch), that reads back less than ``max_churn_read_share`` of the previous prompt lost a warm
cache. Providers lose one now and then (real Codex logs: about one request in sixty), and a server
upgraded mid-session costs one loss; a server that re-announces its tools (``tools/list_changed``
with a new catalogue, a description carrying a nonce) on every call makes every request re-write
the whole prompt at the cache-write price. Fires on ``min_churn_losses`` losses or more, making
``min_churn_share`` of the session's warm requests, ``min_churn_mcp_share`` of them right after a
request that called an MCP tool; names the tool called most before them.
"""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

from tokaudit.analyze.detectors import Finding
from tokaudit.analyze.detectors._common import Context, fire_turn, previous, same_context

NAME = "cache_miss_spend"
TITLE = "Input re-billed after cache misses (D8)"


@dataclass(frozen=True)
class Params:
    min_excess_share: float = 0.2
    min_excess_tokens: int = 50_000
    # The default prompt-cache lifetime is five minutes: a request this long after the previous one finds it gone.
    min_stall_seconds: float = 270.0
    min_stall_miss_share: float = 0.5
    min_stall_calls: int = 3
    # Cache churn: warm-cache losses again and again, right after MCP calls.
    max_warm_gap_s: float = 300.0  # the shortest cache lifetime: a request sooner than this should find the cache warm
    max_churn_read_share: float = 0.5
    min_churn_losses: int = 5
    min_churn_share: float = 0.25
    min_churn_mcp_share: float = 0.6


def detect(context: Context, params: Params) -> list[Finding]:
    calls = context.frames.calls.filter(~pl.col("is_aggregate"))
    # A provider that never reports cache reads has no cache to miss (or does not say): skip its sessions.
    calls = calls.filter((pl.col("cache_read_tokens") > 0).any().over("session_id"))
    if calls.is_empty():
        return []
    prev_input = previous("input_total_tokens")
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
    findings = _slow_tools(context, calls, params) + _churn(context, calls, params)
    per = calls.group_by("session_id").agg(
        pl.col("excess").sum().alias("excess"),
        pl.col("input_total_tokens").sum().alias("input"),
        pl.col("turn").filter(pl.col("excess") > 0).min().alias("first_turn"),
        pl.col("turn").filter(pl.col("excess") > 0).max().alias("last_turn"),
        (pl.col("excess") > 0).sum().alias("miss_requests"),
    ).filter((pl.col("excess") >= params.min_excess_tokens) & (pl.col("excess") >= params.min_excess_share * pl.col("input")))
    return findings + [
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


def _slow_tools(context: Context, calls: pl.DataFrame, params: Params) -> list[Finding]:
    """MCP tools whose calls outlasted the prompt cache, again and again (see the module docstring)."""
    prev = {c: pl.col(c).shift(1).over("session_id") for c in ("call_hash", "ts_utc", "input_total_tokens")}
    stalls = calls.with_columns(
        prev["call_hash"].alias("request_hash"),
        (pl.col("ts_utc") - prev["ts_utc"]).dt.total_seconds().alias("gap_s"),
        (pl.col("excess") / pl.max_horizontal(prev["input_total_tokens"], pl.lit(1))).alias("miss_share"),
    ).filter(
        (pl.col("gap_s") >= params.min_stall_seconds) & (pl.col("miss_share") >= params.min_stall_miss_share)
    ).select("session_id", "request_hash", "gap_s", "excess", pl.col("turn").alias("miss_turn"))
    if stalls.is_empty():
        return []
    # The MCP calls the earlier request asked for: the wait was theirs.
    waited = context.tools.filter(pl.col("is_mcp") & (pl.col("duration_ms") >= 1000 * params.min_stall_seconds)).join(
        stalls, on=["session_id", "request_hash"]
    )
    per = waited.group_by("session_id", "tool_key").agg(
        pl.col("request_hash").n_unique().alias("calls"),
        pl.col("excess").sum().alias("excess"),
        pl.col("gap_s").median().alias("gap_s"),
        pl.col("turn").min().alias("first_turn"),
        pl.col("miss_turn").max().alias("last_turn"),
        pl.col("tool_call_id").first().alias("first_call"),
    ).filter(pl.col("calls") >= params.min_stall_calls).sort("session_id", "tool_key")
    return [
        Finding(
            detector=NAME, severity="medium", session_id=r["session_id"], first_turn=r["first_turn"], last_turn=r["last_turn"],
            metric="slow_tool_cache_misses", value=float(r["calls"]),
            threshold=(f"≥ {params.min_stall_calls} calls answered ≥ {params.min_stall_seconds:.0f} s after they were made, the next "
                       f"request re-paying ≥ {params.min_stall_miss_share:.0%} of its prompt"),
            excess_tokens=int(r["excess"]), excess_usd=None, tool_key=r["tool_key"],
            explanation=(
                f"{r['calls']} calls of {r['tool_key']!r} each took minutes to answer, and the next request came "
                f"{r['gap_s'] / 60:.0f} minutes after the call (median) and found the prompt cache expired: {int(r['excess']):,} input tokens were billed again at the full or cache-write "
                "price. A server slower than the cache lifetime makes every later request re-write the whole context."
            ),
            evidence={"first_call": r["first_call"], "calls": r["calls"], "mcp": True, "median_gap_s": r["gap_s"]},
        )
        for r in per.iter_rows(named=True)
    ]


def _churn(context: Context, calls: pl.DataFrame, params: Params) -> list[Finding]:
    """Sessions whose warm prompt cache was lost again and again right after MCP calls (see the module docstring)."""
    # Most sessions lose the cache seldom if ever: only those reading back too little often enough go further.
    lossy = calls.filter(pl.col("cache_read_tokens") < params.max_churn_read_share * previous("input_total_tokens"))
    often = lossy.group_by("session_id").len().filter(pl.col("len") >= params.min_churn_losses)
    if often.is_empty():
        return []
    # A filter keeps the requests in session and turn order, which ``previous`` and ``same_context`` read.
    calls = calls.filter(pl.col("session_id").is_in(often["session_id"].implode()))
    warm = calls.with_columns(
        ((pl.col("ts_utc") - previous("ts_utc")).dt.total_seconds()).alias("gap_s"),
        previous("input_total_tokens").alias("prev_input"),
        same_context().alias("same_span"),
    ).filter(pl.col("same_span") & (pl.col("gap_s") <= params.max_warm_gap_s) & (pl.col("prev_input") > 0))
    warm = warm.with_columns((pl.col("cache_read_tokens") < params.max_churn_read_share * pl.col("prev_input")).alias("_lost"))
    counts = warm.group_by("session_id").agg(pl.col("_lost").sum().alias("losses"), pl.len().alias("warm"))
    counts = counts.filter((pl.col("losses") >= params.min_churn_losses) & (pl.col("losses") >= params.min_churn_share * pl.col("warm")))
    if counts.is_empty():
        return []
    losses = warm.filter(pl.col("_lost")).join(counts, on="session_id", how="semi").select(
        "session_id", "turn", (pl.col("prev_input") - pl.col("cache_read_tokens")).alias("lost")
    )
    # The MCP tools the request before each loss called: a server that re-announced its tools answered there.
    before = (
        context.tools.filter(pl.col("is_mcp").fill_null(False))
        .select("session_id", (pl.col("turn") + 1).alias("turn"), "tool_key")
        .join(losses, on=["session_id", "turn"], how="semi")
    )
    after_mcp = before.group_by("session_id").agg(
        pl.col("turn").n_unique().alias("after_mcp"), pl.col("tool_key").mode().sort().first().alias("tool_key")
    )
    per = (
        losses.group_by("session_id").agg(
            pl.col("lost").sum().alias("lost"), pl.col("turn").min().alias("first_turn"), pl.col("turn").max().alias("last_turn"),
            fire_turn(params.min_churn_losses),
        )
        .join(counts, on="session_id").join(after_mcp, on="session_id")
        .filter(pl.col("after_mcp") >= params.min_churn_mcp_share * pl.col("losses"))
        .sort("session_id")
    )  # fmt: skip
    return [
        Finding(
            detector=NAME, severity="medium", session_id=r["session_id"], first_turn=r["first_turn"], last_turn=r["last_turn"],
            metric="cache_churn", value=float(r["losses"]),
            threshold=(f"≥ {params.min_churn_losses} requests ≤ {params.max_warm_gap_s:.0f} s after the one before, same context, reading back "
                       f"< {params.max_churn_read_share:.0%} of its prompt; ≥ {params.min_churn_share:.0%} of the warm requests, "
                       f"≥ {params.min_churn_mcp_share:.0%} of them right after MCP calls"),
            excess_tokens=int(r["lost"]), excess_usd=None, tool_key=r["tool_key"],
            explanation=(
                f"The prompt cache was warm and lost {r['losses']} times ({r['losses']} of {r['warm']} requests made within "
                f"{params.max_warm_gap_s / 60:.0f} minutes of the one before, with no compaction or model switch), {r['after_mcp']} of "
                f"them right after MCP calls, mostly of {r['tool_key']!r}: {int(r['lost']):,} prompt tokens were billed again at the "
                "full or cache-write price. Tool definitions come first in the prompt: a server that re-announces its tools, or "
                "puts something new in their descriptions, on every call makes every request re-write the whole prompt. Record "
                "the server's traffic (tokaudit record) to see its tools/list answers."
            ),
            evidence={"calls": r["losses"], "warm_requests": r["warm"], "after_mcp": r["after_mcp"], "mcp": True,
                      "fire_turn": r["fire_turn"]},
        )
        for r in per.iter_rows(named=True)
    ]
