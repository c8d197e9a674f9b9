"""D9 — failure spend: tokens spent from a tool error until that tool next succeeds.

Per session, the requests from an error result of a tool up to (not including)
its next success are failure spend. Fires when they make ≥ ``min_share`` of the
session's billed tokens — and more than ``cohort_quantile`` of the analysed
sessions of the same agent spent that way (errors are common; a high share is
what is unusual) — and ≥ ``min_tokens``; also when one call (same tool and
argument skeleton) fails ``min_repeats`` times. Catches REPAIR loops reported as
errors, 429/5xx storms and broken tools. False positives: flaky test suites.

A failure storm (metric ``failure_storm``, evidence ``storm``): an MCP tool failing
``min_storm_failures`` times or more in a row (no success of the tool in between) on the same
arguments, a narration sentence the model writes anew in each call aside — a server answering
"503 warming", "lock held", "replica lag" until the agent has re-sent its whole context dozens of
times, however cheap each error looks. Agents retry a transient error a few times (framework loop
guards stop identical calls at 3–5); a batch of lookups failing on different ids is no storm.
The agent's own tools are left out: a test suite failing again and again is coding work.

A retry storm (metric ``failure_storm``, evidence ``retries``, not ``storm``): the same, but each
retry sends something new beside what it keeps — a fresh attempt token, a back-off, a timestamp (the
server's errors may ask for them, and they slip past loop guards that count identical calls). A
failed call is a retry of the tool's failed call before it when it keeps at least one of that call's
argument values and they are at least half of its own (``Frames.failures``); ``min_storm_failures``
such calls in a streak make the storm. A batch of look-ups failing one id after another keeps none
of them. The combined verdict weighs a retry storm with the session's cost.

A spread storm (metric ``failure_storm``, evidence ``spread``): an MCP tool failing on one item after another,
each item's call failing ``min_spread_repeats`` times or more in a row on the same arguments before it lands,
over ``min_spread_items`` items or more and ``min_storm_failures`` failures in all — a server throttling every
item ("429, quota 0, resets in 5 s", then the answer) so that each one costs several rounds of the whole context,
while no single streak reaches a storm. A flaky endpoint failing one call a few times now and then, and a genuine
429 waited out once per item, are not it. The combined verdict weighs it with the session's cost.
"""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

from tokaudit.analyze.detectors import Finding
from tokaudit.analyze.detectors._common import Context, billed_usd_sum, fire_turn

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
    # A spread storm: this many failures in a row of one item's call (a transient error earns one or two retries) ...
    min_spread_repeats: int = 3
    # ... on this many items or more (the same flaky call failing again later is one item).
    min_spread_items: int = 3


def detect(context: Context, params: Params) -> list[Finding]:
    t = context.tools.filter(pl.col("is_error").is_not_null())
    if t.is_empty():
        return []
    # A tool's calls from an error up to its next success are the calls that failed: every call of the tool in
    # between is one more error (a success would have ended the streak), so no per-streak numbering is needed.
    failing = t.filter(pl.col("is_error"))
    per = failing.group_by("session_id").agg(
        pl.col("billed_tokens").sum().alias("failure_tokens"),
        billed_usd_sum().alias("failure_usd"),
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
    repeats = failing.group_by("session_id", "tool_key", "skel_hash").agg(
        pl.len().alias("n"), pl.col("turn").min().alias("first_turn"), pl.col("turn").max().alias("last_turn"),
        pl.col("billed_tokens").sum().alias("tokens"), pl.col("tool_call_id").first().alias("first_call"),
    ).filter(pl.col("n") >= params.min_repeats).sort("session_id", "tool_key", "skel_hash")
    for r in repeats.iter_rows(named=True):
        out.append(
            Finding(
                detector=NAME, severity="low", session_id=r["session_id"], first_turn=r["first_turn"], last_turn=r["last_turn"],
                metric="repeated_failures", value=r["n"], threshold=f"≥ {params.min_repeats} failures of one call",
                excess_tokens=int(r["tokens"] or 0), excess_usd=None, tool_key=r["tool_key"],
                explanation=f"The same call to {r['tool_key']!r} (one argument skeleton) failed {r['n']} times.",
                evidence={"first_call": r["first_call"]},
            )
        )
    return out + _storms(t, context.frames.failures, params)


def _storms(t: pl.DataFrame, failures: pl.DataFrame, params: Params) -> list[Finding]:
    """Failure storms: per session and MCP tool, the largest set of identical calls failing in one streak (no
    success of the tool between them), when it has ``min_storm_failures`` calls or more. Identical: the same
    arguments, or the same but for one sentence (a narration of the call the model writes anew each time,
    ``unnarrated_hashes``; its length may change the skeleton, so the skeleton is no part of the key). A call
    counts once under each of its keys. ``t``: tool calls whose outcome is known, in session and call order."""
    keys = pl.concat_list(pl.col("args_hash"), pl.col("unnarrated_hashes").fill_null([])).list.unique()
    streak = (~pl.col("is_error")).cum_sum().over("session_id", "tool_key").alias("_streak")
    failed = t.with_columns(streak).filter(pl.col("is_error") & pl.col("is_mcp").fill_null(False))
    exploded = failed.with_columns(keys.alias("_key")).explode("_key")
    identical = _largest(exploded, params)
    # Retries: each keeps at least half of its values from the tool's failed call before it in the streak. Only
    # streaks long enough to make a storm are compared.
    long_streaks = failed.group_by("session_id", "tool_key", "_streak").len().filter(pl.col("len") >= params.min_storm_failures)
    failed = failed.join(long_streaks.drop("len"), on=["session_id", "tool_key", "_streak"], how="semi", maintain_order="left")
    values = failed.join(failures, on=["session_id", "tool_call_id"], how="inner", maintain_order="left").with_columns(
        pl.col("args_values").list.unique().alias("_values")
    )
    kept = pl.col("_values").list.set_intersection(pl.col("_values").shift(1).over("session_id", "tool_key", "_streak")).list.len()
    link = ((kept >= 1) & (2 * kept >= pl.col("_values").list.len())).fill_null(False)
    values = values.with_columns(link.alias("_link"))
    retried = values.filter(pl.col("_link") | pl.col("_link").shift(-1).over("session_id", "tool_key", "_streak").fill_null(False))
    retries = _largest(retried.with_columns(pl.lit(0).alias("_key")), params).join(identical, on=["session_id", "tool_key"], how="anti")
    spread = _spread(exploded, params).join(pl.concat([identical.select("session_id", "tool_key"), retries.select("session_id", "tool_key")]),
                                            on=["session_id", "tool_key"], how="anti")
    return ([_storm_finding(r, params, same_arguments=True) for r in identical.iter_rows(named=True)]
            + [_storm_finding(r, params, same_arguments=False) for r in retries.iter_rows(named=True)]
            + [_spread_finding(r, params) for r in spread.iter_rows(named=True)])


def _spread(failed: pl.DataFrame, params: Params) -> pl.DataFrame:
    """Per session and MCP tool, its failed calls in streaks of ``min_spread_repeats`` or more identical calls (one
    ``_key``: ``failed`` has a row per call and key), when they cover ``min_spread_items`` distinct keys (the same call
    failing again in a later streak is one item) and ``min_storm_failures`` calls or more."""
    groups = ["session_id", "tool_key", "_streak", "_key"]
    repeated = failed.filter(pl.len().over(groups) >= params.min_spread_repeats)
    # Each call once, though it may be kept under two keys (its exact arguments, and them without a narration sentence
    # that stayed the same): the lower key stands for its item, the same for every call of it.
    calls = repeated.group_by("session_id", "tool_key", "tool_call_id").agg(
        pl.col("_key").min(), pl.col("_streak").first(), pl.col("turn").first(), pl.col("billed_tokens").first(), pl.col("billed_usd").first())
    return (
        calls.group_by("session_id", "tool_key").agg(
            pl.len().alias("n"), pl.col("_key").n_unique().alias("items"),
            pl.col("turn").min().alias("first_turn"), pl.col("turn").max().alias("last_turn"),
            pl.col("billed_tokens").sum().alias("tokens"), billed_usd_sum().alias("usd"),
            pl.col("tool_call_id").sort_by("turn").first().alias("first_call"), fire_turn(params.min_storm_failures),
        )
        .filter((pl.col("n") >= params.min_storm_failures) & (pl.col("items") >= params.min_spread_items))
        .sort("session_id", "tool_key")
    )  # fmt: skip


def _spread_finding(r: dict, params: Params) -> Finding:
    """A spread storm: one item after another failing several times in a row before it lands."""
    return Finding(
        detector=NAME, severity="medium", session_id=r["session_id"], first_turn=r["first_turn"], last_turn=r["last_turn"],
        metric="failure_storm", value=r["n"],
        threshold=(f"≥ {params.min_storm_failures} failures of one MCP tool, each in a run of ≥ {params.min_spread_repeats} identical "
                   f"calls failing in a row, over ≥ {params.min_spread_items} items"),
        excess_tokens=int(r["tokens"] or 0), excess_usd=r["usd"], tool_key=r["tool_key"],
        explanation=(
            f"{r['tool_key']!r} failed {r['n']} times over {r['items']} items, each item's call failing "
            f"{params.min_spread_repeats} times or more in a row on the same arguments before it landed: a storm spread "
            f"over the items. Each retry re-sent the whole context ({int(r['tokens'] or 0):,} tokens over the failed calls); "
            "a server that throttles every item on purpose makes an agent pay several rounds per item, while no single "
            "streak looks like a storm."
        ),
        evidence={"first_call": r["first_call"], "calls": r["n"], "items": r["items"], "mcp": True, "storm": False,
                  "retries": False, "spread": True, "fire_turn": r["fire_turn"]},
    )


def _largest(failed: pl.DataFrame, params: Params) -> pl.DataFrame:
    """Per session and MCP tool, its largest set of failed calls sharing a ``_key`` in one ``_streak``, when it has
    ``min_storm_failures`` calls or more."""
    return (
        failed.group_by("session_id", "tool_key", "_streak", "_key").agg(
            pl.len().alias("n"), pl.col("turn").min().alias("first_turn"), pl.col("turn").max().alias("last_turn"),
            pl.col("billed_tokens").sum().alias("tokens"), billed_usd_sum().alias("usd"),
            pl.col("tool_call_id").first().alias("first_call"), fire_turn(params.min_storm_failures),
        )
        .filter(pl.col("n") >= params.min_storm_failures)
        .sort("n", "fire_turn", descending=[True, False]).unique(["session_id", "tool_key"], keep="first")
        .sort("session_id", "tool_key")
    )  # fmt: skip


def _storm_finding(r: dict, params: Params, *, same_arguments: bool) -> Finding:
    """A failure storm on the same arguments (evidence ``storm``), or a storm of retries that each kept most of them."""
    what = "on the same arguments" if same_arguments else "on retries each keeping most of the arguments before it (something new in each)"
    return Finding(
        detector=NAME, severity="medium", session_id=r["session_id"], first_turn=r["first_turn"], last_turn=r["last_turn"],
        metric="failure_storm", value=r["n"],
        threshold=(f"≥ {params.min_storm_failures} failures in a row of one MCP call (the same arguments, narration aside; or "
                   "retries keeping at least half of the values before them)"),
        excess_tokens=int(r["tokens"] or 0), excess_usd=r["usd"], tool_key=r["tool_key"],
        explanation=(
            f"{r['tool_key']!r} failed {r['n']} times in a row {what}: a failure storm. Each retry "
            f"re-sent the whole context ({int(r['tokens'] or 0):,} tokens over the failed calls); a server that "
            "answers with transient errors on purpose makes an agent pay this without any loop in its results."
        ),
        evidence={"first_call": r["first_call"], "calls": r["n"], "mcp": True, "storm": same_arguments, "retries": not same_arguments,
                  "fire_turn": r["fire_turn"]},
    )
