"""D3 — long same-tool chains, and polls whose progress goes backwards.

The longest run of one tool (``server/tool`` for MCP) in a session, tolerating one
interleaved call of another tool. Fires above ``min_len`` (a per-tool baseline can
be set higher). Catches segment loops, cursor drip-feeds and polling storms; weak
alone — batch edits, pagination and polling make long runs too.

Progress regressions (metric ``progress_regressions``): an MCP tool polled with the
same arguments whose result's progress meter (a number under a progress-like key,
``analyze.steering.PROGRESS_SQL``: "progress": 0.4, <progress>0.4</progress>; a bare "3/8" is as
often a listing's ready count as progress) fell below the previous poll's on
``min_progress_regressions`` or more polls of a session — a server stalling the agent
("shard 7 re-queued", progress back to 20 %) while every poll re-sends the whole
context. A real job is re-queued now and then; one sent back again and again keeps
the agent polling as long as its server likes. False positives: a job genuinely
retrying its failed parts many times over (a crash-looping deployment's ready count).

Stalled countdowns (metric ``stalled_countdown``): a call repeated with the same arguments
(any tool: a status URL fetched with ``curl`` is a service's answer too) whose results carry a
countdown (``analyze.steering.ETA_SQL``: "etaSeconds": 30, "remaining_s": 120) on
``min_stalled_polls`` or more polls in a row, standing over their second half at half the first
countdown or more, though the polls spanned twice the first countdown or more: a job that is
always "30 s away" keeps the agent polling — and re-reading its context — as long as the
service likes, where a real job's countdown runs down. False positives: a service whose estimate never moves (a fixed "about a
minute") while a slow job runs: the same waste, hence the verdict's cost gate.
"""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

from tokaudit.analyze.detectors import Finding, severity_for_ratio
from tokaudit.analyze.detectors._common import Context, billed_usd_sum, chain_finding, fire_turn, known_turns, run_groups

NAME = "same_tool_chain"
TITLE = "Long chain of calls to one tool (D3)"


@dataclass(frozen=True)
class Params:
    min_len: int = 15
    # Polls of the same arguments whose progress fell below the poll before: a job re-queued once or twice is work.
    min_progress_regressions: int = 3
    # Polls of the same call whose countdown never ran down: a CI status polled a few times while its estimate is
    # re-computed is ordinary.
    min_stalled_polls: int = 8


def detect(context: Context, params: Params) -> list[Finding]:
    runs = run_groups(context.tools, "run_id", params.min_len)
    findings = []
    for run in runs.iter_rows(named=True):
        f = chain_finding(
            context, run, detector=NAME, metric="run_length", value=run["calls"], threshold=f"≥ {params.min_len} calls",
            what="A long chain of calls to one tool.",
        )
        f.severity = "low"  # weak alone: batch work, pagination and polling make long runs too
        findings.append(f)
    return findings + _progress_regressions(context, params) + _stalled_countdowns(context, params)


# A poll: the same call as its tool's previous one (the frame is in session and call order, so over (session, tool)
# the previous row is the tool's previous call).
_AGAIN = (pl.col("values_hash") == pl.col("values_hash").shift(1).over("session_id", "tool_key")).fill_null(False)
# What a run of polls billed, per group.
_POLL_TOTALS = (
    pl.col("turn").min().alias("first_turn"),
    pl.col("turn").max().alias("last_turn"),
    pl.col("billed_tokens").sum().alias("billed_tokens"),
    billed_usd_sum().alias("billed_usd"),
    pl.col("tool_call_id").first().alias("first_call"),
)


def _progress_regressions(context: Context, params: Params) -> list[Finding]:
    """MCP tools polled with the same arguments whose progress meter fell, poll after poll."""
    tools = context.tools.filter(pl.col("is_mcp"))
    if tools.is_empty() or tools["progress"].null_count() == len(tools):
        return []
    polls = tools.with_columns(
        _AGAIN.alias("_again"), pl.col("progress").shift(1).over("session_id", "tool_key").alias("_prev_progress"),
    ).filter(pl.col("_again"))
    fell = pl.col("progress") < pl.col("_prev_progress")
    per = polls.group_by("session_id", "tool_key").agg(
        pl.len().alias("polls"),
        fell.sum().alias("regressions"),
        *_POLL_TOTALS,
        pl.col("turn").filter(fell).sort().alias("_fall_turns"),
    ).filter(pl.col("regressions") >= params.min_progress_regressions).with_columns(
        # The turn of the poll whose fall made the count: when an online guard would have fired.
        pl.col("_fall_turns").list.get(params.min_progress_regressions - 1).alias("fire_turn")
    ).sort("session_id", "tool_key")
    return [
        _poll_finding(
            context, r, metric="progress_regressions", value=r["regressions"],
            threshold=f"≥ {params.min_progress_regressions} polls of the same arguments whose progress fell below the poll before",
            what=(f"{r['tool_key']!r} was polled {r['polls'] + 1} times with the same arguments and its progress went backwards "
                  f"{r['regressions']} times: the server kept the job from finishing while every poll re-sent"),
            evidence={"regressions": r["regressions"], "mcp": True},
        )
        for r in per.iter_rows(named=True)
    ]


def _stalled_countdowns(context: Context, params: Params) -> list[Finding]:
    """Calls repeated with the same arguments whose countdown, poll after poll, never ran down."""
    tools = context.tools
    if tools.is_empty() or tools["eta"].null_count() == len(tools):
        return []
    sessions = tools.filter(pl.col("eta").is_not_null()).get_column("session_id").unique()
    polls = tools.filter(pl.col("session_id").is_in(sessions.implode())).with_columns(_AGAIN.alias("_again"))
    # A streak: a call with a countdown, then the same call again, each answer with one.
    starts = ~pl.col("_again") | pl.col("eta").is_null()
    polls = polls.with_columns(starts.cum_sum().over("session_id", "tool_key").alias("_streak")).filter(pl.col("eta").is_not_null())
    per = polls.group_by("session_id", "tool_key", "_streak").agg(
        pl.len().alias("polls"),
        pl.col("eta").first().alias("first_eta"),
        pl.col("eta").last().alias("last_eta"),
        # Where the countdown stood over the streak's second half (a last answer of 0, "done", aside).
        pl.col("eta").slice(pl.len() // 2).median().alias("late_eta"),
        ((pl.col("ts_utc").max() - pl.col("ts_utc").min()).dt.total_milliseconds() / 1000).alias("span_s"),
        *_POLL_TOTALS,
        pl.col("is_mcp").any().alias("mcp"),
        fire_turn(params.min_stalled_polls),
    ).filter(
        # (A first countdown of 0 has run down already: "remaining: 0" polled again is no stall.)
        (pl.col("polls") >= params.min_stalled_polls) & (pl.col("first_eta") > 0) & (pl.col("late_eta") >= pl.col("first_eta") / 2)
        & (pl.col("span_s") >= 2 * pl.col("first_eta"))
    )
    # One finding per tool and session: its longest streak.
    per = per.sort("polls", "first_turn", descending=[True, False]).unique(["session_id", "tool_key"], keep="first").sort("session_id", "tool_key")
    return [
        _poll_finding(
            context, r, metric="stalled_countdown", value=r["polls"],
            threshold=(f"≥ {params.min_stalled_polls} polls of the same call, each answer with a countdown, its second half's median at "
                       "half the first countdown or more, over twice the first countdown or more"),
            what=(f"{r['tool_key']!r} was polled {r['polls']} times with the same arguments over {r['span_s'] / 60:,.1f} minutes, and its "
                  f"answers kept saying the job was about as far away as at first (countdown {r['first_eta']:g} at the first poll, "
                  f"{r['late_eta']:g} at the median of the later half, {r['last_eta']:g} at the last): a countdown that never ran down "
                  "kept the agent polling, every poll re-sending"),
            evidence={"first_eta": r["first_eta"], "late_eta": r["late_eta"], "span_s": r["span_s"], "mcp": r["mcp"]},
        )
        for r in per.iter_rows(named=True)
    ]


def _poll_finding(context: Context, r: dict, *, metric: str, value: float, threshold: str, what: str, evidence: dict) -> Finding:
    """A finding on a run of polls ``r`` (``_POLL_TOTALS``, ``polls``, ``fire_turn``): ``what`` happened, ending on how
    each poll re-sent the context, then what they billed; ``evidence`` beside the first call, the polls and the fire turn."""
    turns = known_turns(r)
    tokens, usd = int(r["billed_tokens"] or 0), r["billed_usd"]
    ratio_text = context.ratio_text(r["session_id"])
    return Finding(
        detector=NAME, severity=severity_for_ratio(context.ratio(r["session_id"])), session_id=r["session_id"],
        **turns, metric=metric, value=value, threshold=threshold,
        excess_tokens=tokens, excess_usd=None if usd is None else float(usd), tool_key=r["tool_key"],
        explanation=(f"{what} the whole context ({tokens:,} tokens billed over those polls"
                     + (f", ${usd:,.2f}" if usd is not None else "") + ")" + (f"; {ratio_text}." if ratio_text else ".")),
        evidence={"first_call": r["first_call"], "calls": r["polls"], **evidence,
                  "fire_turn": r["fire_turn"] if turns["first_turn"] is not None else None},
    )
