"""D9 — failure spend: tokens spent from a tool error until that tool next succeeds.

Per session, the requests from an error result of a tool up to (not including)
its next success are failure spend. Fires when they make ≥ ``min_share`` of the
session's billed tokens — and more than ``cohort_quantile`` of the analysed
sessions of the same agent spent that way (errors are common; a high share is
what is unusual) — and ≥ ``min_tokens``; also when one call (same tool and
argument skeleton) fails ``min_repeats`` times. Catches REPAIR loops reported as
errors, 429/5xx storms and broken tools. False positives: flaky test suites.

A failure storm (evidence ``storm``): an MCP tool failing ``min_storm_failures`` times or more with
the same arguments in one streak, no success of the tool in between (evidence ``same_args``: the most
of them; a narration sentence the model writes anew in each call aside) — a server answering
"503 warming", "lock held", "replica lag" until the agent has re-sent its whole context dozens of
times, however cheap each error looks. Agents retry a transient error a few times (framework loop
guards stop identical calls at 3–5); a batch of lookups failing on different ids is no storm.
The agent's own tools are left out: a test suite failing again and again is coding work.
"""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

from tokaudit.analyze.detectors import Finding
from tokaudit.analyze.detectors._common import Context, fire_turn

NAME = "failure_spend"
TITLE = "Tokens spent on failing tool calls (D9)"


@dataclass(frozen=True)
class Params:
    min_share: float = 0.3
    min_tokens: int = 20_000
    cohort_quantile: float = 0.99
    min_repeats: int = 3
    # Identical failing calls of one MCP tool that make a storm (benign retries after a 429/503 stop at a few).
    min_storm_failures: int = 8


def detect(context: Context, params: Params) -> list[Finding]:
    t = context.tools.filter(pl.col("is_error").is_not_null())
    if t.is_empty():
        return []
    # A tool's calls from an error up to its next success are the calls that failed: every call of the tool in
    # between is one more error (a success would have ended the streak), so no per-streak numbering is needed.
    failing = t.filter(pl.col("is_error"))
    per = failing.group_by("session_id").agg(
        pl.col("billed_tokens").sum().alias("failure_tokens"),
        pl.col("billed_usd").sum().alias("failure_usd"),
        pl.col("turn").min().alias("first_turn"),
        pl.col("turn").max().alias("last_turn"),
        pl.col("tool_key").mode().sort().first().alias("tool_key"),
        pl.len().alias("calls"),
    )
    sessions = context.frames.sessions.select("session_id", "agent", (pl.col("input_total_tokens") + pl.col("output_tokens")).alias("billed"))
    per = sessions.join(per, on="session_id", how="left").with_columns(
        (pl.col("failure_tokens").fill_null(0) / pl.max_horizontal(pl.col("billed"), pl.lit(1))).alias("share")
    )
    per = per.with_columns(pl.col("share").quantile(params.cohort_quantile).over("agent").alias("_cohort"))
    per = per.filter(
        (pl.col("failure_tokens") >= params.min_tokens) & (pl.col("share") >= params.min_share) & (pl.col("share") > pl.col("_cohort"))
    )
    out = [
        Finding(
            detector=NAME, severity="medium", session_id=s["session_id"], first_turn=s["first_turn"], last_turn=s["last_turn"],
            metric="failure_share", value=s["failure_tokens"] / max(s["billed"], 1),
            threshold=f"≥ {params.min_share:.0%} of billed tokens and ≥ {params.min_tokens:,}",
            excess_tokens=int(s["failure_tokens"]), excess_usd=s["failure_usd"], tool_key=s["tool_key"],
            explanation=(
                f"{int(s['failure_tokens']):,} tokens ({s['failure_tokens'] / max(s['billed'], 1):.0%} of the session) went to "
                f"{s['calls']} tool calls made between an error and the next success of the same tool (mostly {s['tool_key']!r})."
            ),
        )
        for s in per.iter_rows(named=True)
    ]
    # The largest set of identical calls failing in one streak (no success of the tool between them) in each
    # skeleton's failures, and when its ``min_storm_failures``-th failure came. Identical: the same arguments, or
    # the same but for one sentence (a narration of the call the model writes anew each time,
    # ``unnarrated_hashes``); a call counts once under each of its keys.
    keys = pl.concat_list(pl.col("args_hash"), pl.col("unnarrated_hashes").fill_null([])).list.unique()
    streak = (~pl.col("is_error")).cum_sum().over("session_id", "tool_key").alias("_streak")
    same = (
        t.with_columns(streak).filter(pl.col("is_error"))
        .select("session_id", "tool_key", "skel_hash", "_streak", "turn", keys.alias("_key")).explode("_key")
        .group_by("session_id", "tool_key", "skel_hash", "_streak", "_key").agg(pl.len().alias("same_args"), fire_turn(params.min_storm_failures))
        .sort("same_args", "fire_turn", descending=[True, False]).unique(["session_id", "tool_key", "skel_hash"], keep="first")
        .drop("_streak", "_key")
    )  # fmt: skip
    repeats = failing.group_by("session_id", "tool_key", "skel_hash").agg(
        pl.len().alias("n"), pl.col("turn").min().alias("first_turn"), pl.col("turn").max().alias("last_turn"),
        pl.col("billed_tokens").sum().alias("tokens"), pl.col("billed_usd").sum().alias("usd"),
        pl.col("tool_call_id").first().alias("first_call"), pl.col("is_mcp").fill_null(False).all().alias("mcp"),
    ).filter(pl.col("n") >= params.min_repeats)
    repeats = repeats.join(same, on=["session_id", "tool_key", "skel_hash"], how="left").sort("session_id", "tool_key", "skel_hash")
    for r in repeats.iter_rows(named=True):
        storm = r["mcp"] and r["same_args"] >= params.min_storm_failures
        explanation = f"The same call to {r['tool_key']!r} (one argument skeleton) failed {r['n']} times"
        if storm:
            explanation += (
                f", {r['same_args']} of them in a row with the same arguments: a failure storm. Each retry re-sent the whole "
                f"context ({int(r['tokens'] or 0):,} tokens over the failed calls); a server that answers with transient "
                "errors on purpose makes an agent pay this without any loop in its results"
            )
        out.append(
            Finding(
                detector=NAME, severity="medium" if storm else "low", session_id=r["session_id"], first_turn=r["first_turn"],
                last_turn=r["last_turn"], metric="repeated_failures", value=r["n"],
                threshold=(f"≥ {params.min_repeats} failures of one call; a storm at ≥ {params.min_storm_failures} identical "
                           "failing calls of an MCP tool"),
                excess_tokens=int(r["tokens"] or 0), excess_usd=r["usd"] if storm else None, tool_key=r["tool_key"],
                explanation=explanation + ".",
                evidence={"first_call": r["first_call"], "calls": r["n"], "same_args": r["same_args"], "mcp": r["mcp"],
                          "storm": storm, "fire_turn": r["fire_turn"] if storm else None},
            )
        )
    return out
