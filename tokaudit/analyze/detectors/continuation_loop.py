"""D5 — continuation loop: a chain the server steered, returning little that is new.

A chain of calls to one tool (other calls may come between) in which the calls
after the first are *steered* (up to two unsteered calls in a row are tolerated:
a REPAIR resend, another question to the same tool): the arguments that changed either went up (a
counter, page or offset) or were copied from the previous result (a cursor, a
scope or id the result named) — ``analyze.frames``. The server, not the task,
chose what the model sent next. Fires when such a chain reaches ``min_len``
calls (its first call and the steered ones) while the steered calls' results stay repetitive, leaving out
the chain's last call, which may carry the payload the others withheld: either
they repeat one another (mean novelty below ``max_novelty``), or each is
boilerplate within itself (median zlib ratio ``min_compress_ratio`` × or more:
pages of one templated line under a changing label repeat nothing page to page,
yet carry nothing), or they are listings re-serving the records of the pages before (mean
``record_overlap`` ``min_record_overlap`` or more: a window of rows moved on by a few rows a call,
each page new at its ends). PROGRESS/REPAIR counters, cursor drip-feeding, "coverage 60 %,
continue with scope X". No wording is read, so lexicon-free notices are caught
alike; whether the results also read like continuation notices is reported.
False positives: real pagination is steered too, but every page is new content
(novelty well above the threshold, no record served twice) and real records compress 2–9×; batch work
over a listing and polling are not steered (the values come from elsewhere, or
nothing changes).

A steered chain of ``min_drip_len`` calls or more whose steered results averaged at most
``max_drip_result_tokens`` is reported too (evidence ``drip`` True): a server handing out a record or
none per call (the next shard named in fresh words each time) makes the agent pay a whole request per
sliver, while a real pagination's pages are listings (about a thousand tokens and more). So is one of
``min_long_drip_len`` calls or more (twice a long benign pagination) averaging at most
``max_long_drip_result_tokens``: a server serving a time range or a log in windows of a few records,
each paid for with a whole request.

A steered chain of ``min_long_len`` calls or more is reported whatever its results
(evidence ``repetitive`` False): a drip-feed padded with fresh text on every page
looks like a long pagination the task wanted, and only what it cost can tell them
apart — the combined verdict (economic_dos) weighs it so. Whether the
chain ran through an MCP tool is in the evidence (``mcp``): a chain of the
agent's own tools (the same test run again after edits) stays its own finding
and is no economic-DoS verdict.

A *relay walk*: ``min_relay_len`` MCP calls or more in a row (the agent's own calls aside), over
``min_relay_tools`` tools or more, each sending a token the previous MCP call's result named and no call
before had sent (``relayed``, ``analyze.steering``: "resolve urn:x:5c2f31 via get_policy next") — servers
walking the agent from tool to tool, each answer naming the next reference to chase, so every call pays
for the whole context again while the task waits. Its pages are new content, so only its length and the
verdict's cost gate tell it from an honest investigation (an order, its customer, the customer's
account: a few hops). Reported with evidence ``relay`` True.

A chain whose steered calls mostly carry new text the model wrote (``authored``: a thought, a note, not
a value re-sent or grown) of ``min_written_tokens`` or more per call on average, at least as much as their
results held, is reported with evidence ``writes`` True: a scratchpad server (sequential thinking: the
model numbers its own thoughts and the server echoes the count) or a note-taking tool has a loop's shape,
yet what the chain carried is the model's own writing — the combined verdict weighs it by its cost. A
REPAIR resend or a schema's calibration list re-sends the same value: no new text, still a loop.
"""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

from tokaudit.analyze.detectors import Finding
from tokaudit.analyze.detectors._common import Context, chain_finding, run_groups, tool_list

NAME = "continuation_loop"
TITLE = "Server-steered loop returning little new (D5)"


@dataclass(frozen=True)
class Params:
    min_len: int = 3
    max_novelty: float = 0.4
    # The same calibration as amplification's repetitive results: real records, logs and listings shrink at most ~9×.
    min_compress_ratio: float = 15.0
    # Pages of an honest pagination share no record ids (a few a page may name the same parent: a project, a tenant).
    # A window of 50 rows moved on by 14-18 rows a call re-serves two thirds of them, read as about 0.2-0.3 here:
    # ids stamped anew on every page (a cursor per record) dilute the share.
    min_record_overlap: float = 0.2
    # Benign pagination in the simulator's reference corpora reaches about 30 pages.
    min_long_len: int = 30
    # A drip-feed: this many steered calls whose results averaged at most this much — a record or two, or none
    # (a blind probe's shard hops returned 60–85 tokens a call); a page of three short records is more, and the
    # simulator's benign paginations include such pages (120–200 tokens).
    min_drip_len: int = 15
    max_drip_result_tokens: int = 100
    # A longer drip: twice the longest benign pagination above, of pages no larger than a few short records
    # (a blind probe's sensor windows: 100–300 calls of 100–170 tokens).
    min_long_drip_len: int = 60
    max_long_drip_result_tokens: int = 300
    # The model's own writing (evidence ``writes``): most steered calls carry new text, this many argument tokens a
    # call on average and no fewer than their results — a narration sentence beside a counter is about 20–60.
    min_written_tokens: int = 80
    min_authored_share: float = 0.5
    # A relay walk across tools: honest look-ups that follow a reference (an order, its customer, the customer's
    # account) end in a few hops.
    min_relay_len: int = 12
    min_relay_tools: int = 3


def detect(context: Context, params: Params) -> list[Finding]:
    return _steered_chains(context, params) + _relay_walks(context, params)


def _steered_chains(context: Context, params: Params) -> list[Finding]:
    tools = context.tools
    runs = run_groups(tools, "steer_chain_id", params.min_len)
    if runs.is_empty():
        return []
    # The chain's last call may carry the payload the others withheld; the loop is what came before it.
    steered = tools.filter(pl.col("steered"))
    steered = steered.with_columns((pl.col("call_idx") == pl.col("call_idx").max().over("steer_chain_id")).alias("_last")).group_by("steer_chain_id").agg(
        pl.col("novelty").filter(~pl.col("_last")).mean().alias("steered_novelty"),
        pl.col("result_compress_ratio").filter(~pl.col("_last")).median().alias("steered_compress_ratio"),
        pl.col("record_overlap").filter(~pl.col("_last")).mean().alias("steered_record_overlap"),
        (pl.col("novelty").fill_null(0) * pl.col("result_tokens").fill_null(0)).sum().alias("steered_novel_tokens"),
        (pl.col("args_tokens").fill_null(0) + pl.col("result_tokens").fill_null(0)).sum().alias("steered_traffic_tokens"),
        pl.col("result_tokens").mean().alias("steered_result_tokens"),
        pl.col("args_tokens").mean().alias("steered_args_tokens"),
        pl.col("authored").mean().alias("authored_share"),
        pl.col("has_continuation").mean().alias("marker_share"),
        pl.len().alias("steered_calls"),
        pl.col("is_mcp").any().alias("mcp"),
    )
    repetitive = (
        (pl.col("steered_novelty") < params.max_novelty) | (pl.col("steered_compress_ratio") >= params.min_compress_ratio)
        | (pl.col("steered_record_overlap").fill_null(0.0) >= params.min_record_overlap)
    )
    drip = ((pl.col("steered_calls") + 1 >= params.min_drip_len) & (pl.col("steered_result_tokens") <= params.max_drip_result_tokens)) | (
        (pl.col("steered_calls") + 1 >= params.min_long_drip_len) & (pl.col("steered_result_tokens") <= params.max_long_drip_result_tokens)
    )
    writes = (
        (pl.col("authored_share") >= params.min_authored_share)
        & (pl.col("steered_args_tokens") >= params.min_written_tokens)
        & (pl.col("steered_args_tokens") >= pl.col("steered_result_tokens").fill_null(0))
    )
    runs = (
        runs.join(steered, on="steer_chain_id")
        .with_columns(repetitive.fill_null(False).alias("repetitive"), drip.fill_null(False).alias("drip"), writes.fill_null(False).alias("writes"))
        .filter(
            (pl.col("steered_calls") + 1 >= params.min_len)
            & (pl.col("repetitive") | pl.col("drip") | (pl.col("steered_calls") + 1 >= params.min_long_len))
        )
    )
    findings = []
    for run in runs.iter_rows(named=True):
        yield_share = run["steered_novel_tokens"] / max(run["steered_traffic_tokens"], 1)
        wording = " Its results also read like continuation notices." if run["marker_share"] >= 0.5 else ""
        if run["writes"]:
            wording += (f" Most of its calls carried new text the model wrote ({run['steered_args_tokens']:.0f} argument tokens a call "
                        f"on average, against {run['steered_result_tokens'] or 0:.0f} of result): a scratchpad or note-taking tool "
                        "numbering the model's own entries has this shape.")
        novelty, ratio, overlap = run["steered_novelty"], run["steered_compress_ratio"], run["steered_record_overlap"]
        if novelty is not None and novelty < params.max_novelty:
            repeats = f"the results were mostly repeats (mean novelty {novelty:.2f}"
        elif ratio is not None and ratio >= params.min_compress_ratio:
            repeats = f"each result was mostly boilerplate (zlib shrinks them {ratio:.0f}× at the median"
        elif run["repetitive"]:
            repeats = (f"each page served again records of the pages before it (mean record-id overlap {overlap:.2f}, estimated "
                       "from MinHash bins of their ids; an honest pagination's pages share none): a window moved on by a few rows a call")
        elif run["drip"]:
            repeats = (f"each result was a sliver ({run['steered_result_tokens']:.0f} tokens on average over {run['steered_calls'] + 1} "
                       "calls: a record or none per call, each call paying for the whole context"
                       + (f"; mean novelty {novelty:.2f}" if novelty is not None else ""))
        else:
            repeats = (f"it ran {run['steered_calls'] + 1} calls of new content (a long pagination the task may have wanted, or "
                       f"a drip-feed padded with fresh text: only its cost tells them apart"
                       + (f"; mean novelty {novelty:.2f}" if novelty is not None else ""))
        findings.append(
            chain_finding(
                context, run, detector=NAME, metric="steered_chain_length", value=run["steered_calls"] + 1,
                threshold=(f"≥ {params.min_len} steered calls with mean result novelty < {params.max_novelty}, "
                           f"results compressing ≥ {params.min_compress_ratio}× (median) or pages re-serving records (mean "
                           f"overlap ≥ {params.min_record_overlap}); or ≥ {params.min_drip_len} steered calls of "
                           f"≤ {params.max_drip_result_tokens} result tokens on average (≥ {params.min_long_drip_len} of ≤ "
                           f"{params.max_long_drip_result_tokens}); or ≥ {params.min_long_len} steered calls"),
                what=(
                    "A server-steered loop: what changed in each call's arguments was dictated by the previous result (a counter "
                    "going up, a cursor or id copied from it, a rejected value sent again, or new arguments while its progress "
                    f"meter rose), and {repeats}; {yield_share:.1%} of the steered calls' argument and result tokens was new "
                    f"content).{wording}"
                ),
                extra={"steered_novelty": run["steered_novelty"], "steered_compress_ratio": ratio, "steered_record_overlap": overlap,
                       "payload_yield": yield_share,
                       "steered_calls": run["steered_calls"],
                       "continuation_marker_share": run["marker_share"], "mcp": run["mcp"], "repetitive": run["repetitive"],
                       "drip": run["drip"], "writes": run["writes"]},
                # A long chain of new content may be the pagination the task wanted: worth a look, not an alarm.
                max_severity=None if run["repetitive"] else "medium",
            )
        )
    return findings


def _relay_walks(context: Context, params: Params) -> list[Finding]:
    """MCP calls in a row each relaying a token the previous one's result named, across several tools."""
    tools = context.tools
    sessions = tools.filter(pl.col("relayed")).get_column("session_id").unique()
    if sessions.is_empty():
        return []
    # Only MCP calls: the agent's own calls between are asides (the rule looked past one of them).
    mcp = tools.filter(pl.col("is_mcp") & pl.col("session_id").is_in(sessions.implode()))
    start = ~pl.col("relayed") | (pl.col("session_id") != pl.col("session_id").shift(1)).fill_null(True)
    mcp = mcp.with_columns(start.cum_sum().alias("relay_walk_id"))
    mcp = mcp.with_columns(pl.len().over("relay_walk_id").alias("relay_walk_len"))
    walks = run_groups(mcp, "relay_walk_id", params.min_relay_len).filter(pl.col("chain_tools").list.len() >= params.min_relay_tools)
    findings = []
    for walk in walks.iter_rows(named=True):
        names = walk["chain_tools"]
        servers = sorted({t.split("/")[0] for t in names})
        named = f"Tools {tool_list(names)} ({len(names)} tools of {len(servers)} server{'s' if len(servers) > 1 else ''}) were"
        findings.append(
            chain_finding(
                context, walk, detector=NAME, metric="relay_walk_length", value=walk["calls"],
                threshold=f"≥ {params.min_relay_len} MCP calls in a row over ≥ {params.min_relay_tools} tools, each relaying a token the previous result named",
                what=(
                    "A walk the servers steered from tool to tool: each call sent a reference the previous call's result named "
                    "and no call before had sent, so every answer chose the next call while the context was paid for again "
                    f"(mean novelty {walk['mean_novelty'] or 0:.2f}: new content, which an honest investigation has too — "
                    "its length and cost tell them apart)."
                ),
                extra={"relay": True, "servers": servers, "repetitive": False, "drip": False, "writes": False},
                max_severity="medium", named=named,
            )
        )
    return findings
