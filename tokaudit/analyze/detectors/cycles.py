"""D15 — period-2/3 cycles: the same two or three calls over and over.

The sequence of tools in a session repeating with period p ∈ {2, 3} over ≥
``min_repetitions`` periods, across at least two distinct tools, where at least
``min_repeat_share`` of the calls repeat the call one period back with the same
arguments (their values' first characters, so a draft re-sent with a few lines
appended counts as the same; one sentence beside other values of an MCP call
may differ, so a server cannot hide the repetition behind an argument the model
must fill with new words on every call — a "reason" or "summary so far" — nor behind
tokens it hands out anew each round: an MCP call of ``min_mean_args_tokens`` or more
whose arguments keep their exact length and all but their tokens (``tokens_masked_hash``:
values without spaces holding a digit masked, text kept) and an answer no larger than them
repeats too (a lease id and a fencing token changed beside the same stock lines; a query
answered with a new page under a new cursor is not one); the model's own tools stay compared
whole, a new shell command being new work;
one step of the cycle, such as "refine" with new notes, may vary, as long as the
repeated calls carry at least ``min_repeated_args_share`` of the arguments: a step
writing new content each time between reads of no arguments — create an entity,
read the knowledge graph back — is work, not a draft going round), with mean
result novelty below ``max_novelty`` (weighed by the results' tokens: a new page of a listing between
runs of the same local command is new content, however short and repetitive the command's output) and the
model re-writing at least
``min_mean_args_tokens`` of arguments per call (analyze → validate → refine
loops between co-registered servers re-sending the same draft; ping-pong). False
positives: read → edit → test coding cycles change their arguments every time;
polling a job between sleeps repeats the very same calls but with a few tokens
of arguments and real waiting, which the argument floor leaves to the
chain-length detector (D3); retrying a failed call between sleeps (an error in most
periods, ``max_errors_per_period``) is failure spend (D9).

The sequence is read twice: every call of the session, and its MCP calls alone
— a cycle between servers stays one when the model runs a few of its own tools
(a grep, a file read) between the steps. In the MCP view the argument floor does
not apply: servers handing the model back and forth with small arguments (A → B
→ A → B, the same calls each time: at least ``min_light_repeat_share`` of them
repeated) are reported too, marked ``light_args``, with the number of ``servers``
the cycle ran through; the combined verdict asks more of them (two status tools
polled in turn look the same, and one server's tools called in turn with the same
small arguments — a page snapshot after each wait or scroll — are a client working
a user interface, not servers handing it back and forth). A queue consumer
receiving with the same arguments and acking each message's new receipt repeats
only every other call: that is work through a queue, not a cycle. Every finding
says whether an MCP call was in the cycle (``mcp``).
"""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

from tokaudit.analyze.detectors import Finding
from tokaudit.analyze.detectors._common import Context, billed_usd_sum, chain_finding, fire_turn

NAME = "cycles"
TITLE = "Calls cycling between two or three tools (D15)"


@dataclass(frozen=True)
class Params:
    min_repetitions: int = 2
    max_novelty: float = 0.5
    min_mean_args_tokens: int = 50
    min_repeat_share: float = 0.5
    # ... and the repeated calls carry this share of the cycle's argument tokens (unless they are all small).
    min_repeated_args_share: float = 0.5
    # A cycle of small arguments is the same calls each time; one step with new values (a receipt acked) is a queue.
    min_light_repeat_share: float = 0.75
    max_errors_per_period: float = 0.5  # retries after errors (429, 5xx) between sleeps are failure spend (D9), not a cycle


def detect(context: Context, params: Params) -> list[Finding]:
    t = context.tools
    if t.is_empty():
        return []
    t = t.with_columns(pl.struct("tool_key", "values_hash").hash().alias("_sig"))
    findings: list[Finding] = []
    seen: dict[str, list[tuple[int, int]]] = {}
    # Servers first: where the model's own calls interrupt a cycle, the servers' view holds all of it.
    for view, light_ok in ((t.filter(pl.col("mcp_server").is_not_null()), True), (t, False)):
        _find_cycles(context, view, params, findings, seen, light_ok)
    return findings


def _token_weighted_novelty() -> pl.Expr:
    """Aggregation: the cycle's mean result novelty weighed by each result's tokens — what share of what came back
    was new (a fixed local command's one-line output after each new page of a listing weighs little beside the
    page); the plain mean where no result has a size."""
    known = pl.col("novelty").is_not_null() & (pl.col("result_tokens").fill_null(0) > 0)
    tokens = pl.col("result_tokens").filter(known).sum()
    weighted = (pl.col("novelty") * pl.col("result_tokens")).filter(known).sum() / tokens
    return pl.when(tokens > 0).then(weighted).otherwise(pl.col("novelty").mean())


def _find_cycles(
    context: Context, t: pl.DataFrame, params: Params, findings: list[Finding], seen: dict[str, list[tuple[int, int]]], light_ok: bool
) -> None:
    """Append to ``findings`` the cycles in ``t`` (calls in session order) overlapping none in ``seen`` (turn ranges per session).
    ``light_ok``: cycles below the argument floor count too, marked ``light_args`` (servers handing the model back
    and forth with small arguments)."""
    # The calls are in session order: a plain shift within the same session is "k calls back".
    narration = t["unnarrated_hashes"].list.len().max() or 0

    def back(column: str, k: int) -> pl.Expr:
        return pl.when(pl.col("session_id") == pl.col("session_id").shift(k)).then(pl.col(column).shift(k))

    for period in (2, 3):
        matches = (pl.col("tool_key") == back("tool_key", period)).fill_null(False)
        # The same call again: the same values, or the same but for one sentence (a narration of the
        # call; an edit changing its old and new text is new work).
        repeats = (pl.col("_sig") == back("_sig", period)).fill_null(False)
        # So is an MCP call re-sending a large argument with only tokens of the same length changed (a lease id and
        # fencing token the cycle's previous answer handed out, beside the same stock lines): the bulk goes round.
        resent = (
            pl.col("is_mcp") & (pl.col("tokens_masked_hash") == back("tokens_masked_hash", period))
            & (pl.col("args_bytes") == back("args_bytes", period))
            & (pl.col("args_tokens") >= params.min_mean_args_tokens)
            # The bulk is the arguments: a query answered with pages far larger than it (a listing's next page under a
            # cursor of the same length) is read by what came back, not by what it sent.
            & (pl.col("result_tokens").fill_null(0) <= pl.col("args_tokens"))
        )
        repeats = repeats | resent.fill_null(False)
        if narration:
            narrated = pl.col("unnarrated_hashes").list.set_intersection(back("unnarrated_hashes", period)).list.len() > 0
            repeats = repeats | narrated.fill_null(False)
        # Cycling calls must not all be one tool (that is a chain, D3/D4's business).
        varied = (pl.col("tool_key") != back("tool_key", 1)).fill_null(False)
        c = t.with_columns(matches.alias("_m"), varied.alias("_v"), repeats.alias("_r"))
        # A stretch starts at every call that does not match (a session's first calls never do).
        c = c.with_columns((~pl.col("_m")).cum_sum().alias("_stretch"))
        matched = c.filter(pl.col("_m"))
        # Most stretches are too short or not repeats: drop them on two cheap columns before the full totals.
        long_enough = (
            matched.group_by("_stretch")
            .agg(pl.len().alias("_n"), pl.col("_r").mean().alias("_rs"))
            .filter((pl.col("_n") >= period * (params.min_repetitions - 1)) & (pl.col("_rs") >= params.min_repeat_share))
        )
        stretches = matched.join(long_enough.select("_stretch"), on="_stretch", how="semi").group_by("session_id", "_stretch").agg(
            pl.len().alias("matched"),
            pl.col("_v").mean().alias("varied_share"),
            pl.col("_r").mean().alias("repeat_share"),
            pl.col("is_error").fill_null(False).sum().alias("errors"),
            pl.col("tool_key").n_unique().alias("tools"),
            pl.col("tool_key").mode().sort().first().alias("tool_key"),
            pl.col("turn").min().alias("first_turn"),
            pl.col("turn").max().alias("last_turn"),
            pl.col("args_tokens").sum().alias("args_tokens"),
            pl.col("args_tokens").filter(pl.col("_r")).sum().alias("repeated_args_tokens"),
            pl.col("result_tokens").sum().alias("result_tokens"),
            _token_weighted_novelty().alias("mean_novelty"),
            pl.col("is_mcp").any().alias("mcp"),
            pl.col("mcp_server").drop_nulls().n_unique().alias("servers"),
            pl.col("remote_host").is_not_null().any().alias("remote"),
            pl.col("billed_tokens").sum().alias("billed_tokens"),
            billed_usd_sum().alias("billed_usd"),
            pl.col("billed_tokens").first().alias("first_billed_tokens"),
            pl.col("billed_usd").first().alias("first_billed_usd"),
            pl.col("tool_call_id").filter(pl.col("has_result")).first().alias("first_call"),
            pl.col("tool_call_id").filter(pl.col("has_result")).last().alias("last_call"),
            # The turn at which the cycle had repeated min_repetitions times: when an online guard would have fired.
            fire_turn(period * (params.min_repetitions - 1)),
        ).with_columns(
            (pl.col("args_tokens") < params.min_mean_args_tokens * pl.col("matched")).alias("light_args")
        ).filter(
            (pl.col("matched") >= period * (params.min_repetitions - 1))
            & (pl.col("tools") >= 2)
            & (pl.col("mean_novelty").fill_null(0) < params.max_novelty)
            & (~pl.col("light_args") | (light_ok & (pl.col("repeat_share") >= params.min_light_repeat_share)))
            & (pl.col("repeat_share") >= params.min_repeat_share)
            # What is re-sent is the bulk of what the model wrote: a step with new content each time between calls
            # of no arguments (write an entity, read the graph back) is work, not a draft going round.
            & (pl.col("light_args") | (pl.col("repeated_args_tokens") >= params.min_repeated_args_share * pl.col("args_tokens")))
            & (pl.col("errors") * period <= params.max_errors_per_period * pl.col("matched"))
        )
        for run in stretches.iter_rows(named=True):
            ranges = seen.setdefault(run["session_id"], [])
            if any(first <= run["last_turn"] and run["first_turn"] <= last for first, last in ranges):
                continue
            ranges.append((run["first_turn"], run["last_turn"]))
            run["calls"] = run["matched"] + period
            findings.append(
                chain_finding(
                    context, run, detector=NAME, metric="cycle_repetitions", value=run["calls"] / period,
                    threshold=(f"≥ {params.min_repetitions} repetitions of a period-{period} cycle with novelty < {params.max_novelty} "
                               f"and ≥ {params.min_mean_args_tokens} argument tokens per call"),
                    what=(f"A period-{period} cycle across {run['tools']} tools repeated {run['calls'] / period:.0f} times with the same arguments "
                          f"({run['args_tokens']:,} argument tokens re-written), returning little new."),
                    extra={"period": period, "repeat_share": run["repeat_share"], "light_args": run["light_args"], "mcp": run["mcp"],
                           "servers": run["servers"], "remote": run["remote"]},
                )
            )
