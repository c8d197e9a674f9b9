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

A steered chain of ``min_shrink_len`` calls or more whose pages shrank is reported too (evidence ``shrinking``
True): the median result of its last third of steered calls at most ``max_shrink_ratio`` × that of its first
pages (its first third, five at most: a server may shrink its pages to a floor within a few calls, then serve
a hundred more), pages of ``min_shrink_page_tokens`` or more at first. A server cutting each page shorter than the one
before (load shedding, a date window covered ever more thinly) makes the agent pay a whole request for less and
less, while an honest pagination's pages keep the size the agent asked for until the last one. The combined
verdict weighs it with the session's cost, as a drip.

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

A *delegation relay*: ``min_relayed_delegations`` subagents or more of one task, each sent after a reference
that an earlier subagent's answer named and no earlier subagent had been told (``Frames.delegations``), over
``min_delegation_waves`` waves or more (a subagent's answer naming the next references, whose subagents' answers
name more) — a server spreading a loop thinly over fresh agents, each cheap, wave after wave (legs that each
have sub-legs, citations that each cite more). Reported on the session that spawned them, with evidence ``relay``
True and scope ``task``: the verdict weighs it with what the whole task cost. An honest fan-out over a listing
sends its subagents after what one answer listed (one wave), and a workflow of the agent's own (subagents that
called no MCP tool) is evidence ``mcp`` False.

A chain whose steered calls mostly carry new text the model wrote (``authored``: a thought, a note, not
a value re-sent or grown) of ``min_written_tokens`` or more per call on average, at least as much as their
results held, is reported with evidence ``writes`` True: a scratchpad server (sequential thinking: the
model numbers its own thoughts and the server echoes the count) or a note-taking tool has a loop's shape,
yet what the chain carried is the model's own writing — the combined verdict weighs it by its cost. A
REPAIR resend or a schema's calibration list re-sends the same value: no new text, still a loop.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import polars as pl

from tokaudit.analyze.detectors import Finding
from tokaudit.analyze.detectors._common import Context, chain_finding, run_groups, task_cost, tool_list

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
    # Shrinking pages: honest pages keep their size but for the last. A blind probe's servers cut pages by 0.6× every
    # two pages, or covered a month in windows ever thinner (18k-token pages down to 6k over 22 calls).
    min_shrink_len: int = 12
    max_shrink_ratio: float = 0.5
    min_shrink_page_tokens: int = 200
    # The model's own writing (evidence ``writes``): most steered calls carry new text, this many argument tokens a
    # call on average and no fewer than their results — a narration sentence beside a counter is about 20–60.
    min_written_tokens: int = 80
    min_authored_share: float = 0.5
    # A relay walk across tools: honest look-ups that follow a reference (an order, its customer, the customer's
    # account) end in a few hops.
    min_relay_len: int = 12
    min_relay_tools: int = 3
    # A delegation relay: honest research sends a few subagents after what an earlier one found; a fan-out over a
    # listing is one wave.
    min_relayed_delegations: int = 10
    min_delegation_waves: int = 3


def detect(context: Context, params: Params) -> list[Finding]:
    return _steered_chains(context, params) + _relay_walks(context, params) + _delegation_relays(context, params)


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
        _pages_median(first=True).alias("first_pages_tokens"), _pages_median(first=False).alias("last_pages_tokens"),
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
    shrinking = (
        (pl.col("steered_calls") + 1 >= params.min_shrink_len) & (pl.col("first_pages_tokens") >= params.min_shrink_page_tokens)
        & (pl.col("last_pages_tokens") <= params.max_shrink_ratio * pl.col("first_pages_tokens"))
    )
    writes = (
        (pl.col("authored_share") >= params.min_authored_share)
        & (pl.col("steered_args_tokens") >= params.min_written_tokens)
        & (pl.col("steered_args_tokens") >= pl.col("steered_result_tokens").fill_null(0))
    )
    runs = (
        runs.join(steered, on="steer_chain_id")
        .with_columns(repetitive.fill_null(False).alias("repetitive"), drip.fill_null(False).alias("drip"), writes.fill_null(False).alias("writes"),
                      shrinking.fill_null(False).alias("shrinking"))
        .filter(
            (pl.col("steered_calls") + 1 >= params.min_len)
            & (pl.col("repetitive") | pl.col("drip") | pl.col("shrinking") | (pl.col("steered_calls") + 1 >= params.min_long_len))
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
        elif run["shrinking"]:
            repeats = (f"its pages shrank while it went on (the median result of its last third of calls "
                       f"{run['last_pages_tokens']:,.0f} tokens against {run['first_pages_tokens']:,.0f} over its first pages, of "
                       f"{run['steered_calls'] + 1} calls): each request paid for the whole context bought less and less"
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
                           f"{params.max_long_drip_result_tokens}); or ≥ {params.min_shrink_len} steered calls whose last third's median result "
                           f"is ≤ {params.max_shrink_ratio}× their first pages'; or ≥ {params.min_long_len} steered calls"),
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
                       "drip": run["drip"], "writes": run["writes"], "shrinking": run["shrinking"]},
                # A long chain of new content may be the pagination the task wanted: worth a look, not an alarm.
                max_severity=None if run["repetitive"] else "medium",
            )
        )
    return findings


# The first pages a shrinking chain's last third is compared with: its first third, this many at most.
FIRST_PAGES = 5


def _pages_median(*, first: bool) -> pl.Expr:
    """Aggregation over a chain's steered calls: the median result size of its first pages (its first third, at
    most ``FIRST_PAGES``) or of its last third, in call order."""
    third = pl.len() // 3
    pages = pl.col("result_tokens").sort_by("call_idx")
    return (pages.slice(0, pl.min_horizontal(third, pl.lit(FIRST_PAGES))) if first else pages.slice(pl.len() - third, third)).median()


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


# A reference a subagent can be sent after: a token of six characters or more with a letter and either a digit or a
# capital inside a word (an id such as "TdyeIL" or "rt_9f2c", a path, a URN) — not a plain word, a number or a date.
_REFERENCE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:/#-]{4,126}[A-Za-z0-9]")
_ID_LIKE = re.compile(r"[0-9]|[a-z][A-Z]")


def _references(text: str | None) -> set[str]:
    """The id-like tokens of ``text``."""
    if not text:
        return set()
    return {t for t in _REFERENCE.findall(text) if _ID_LIKE.search(t) and re.search("[A-Za-z]", t)}


def _waves(rows: list[dict]) -> list[int]:
    """For a session's delegations in order: each one's wave — 0 when it was sent after nothing an earlier subagent
    answered; else one more than the wave of the subagent whose answer (in by the time it was sent) first named a
    reference it carries that no earlier delegation had carried."""
    named: dict[str, int] = {}  # a reference -> the wave of the first answer that named it
    told: set[str] = set()
    answers = sorted(range(len(rows)), key=lambda i: (rows[i]["result_ts_utc"] is None, rows[i]["result_ts_utc"] or rows[i]["ts_utc"]))
    waves: list[int] = [0] * len(rows)
    pending = 0  # answers (in arrival order) not yet read into ``named``
    for i, row in enumerate(rows):
        while pending < len(answers):
            j = answers[pending]
            at = rows[j]["result_ts_utc"]
            if j >= i or at is None or row["ts_utc"] is None or at > row["ts_utc"]:
                break
            for ref in _references(rows[j]["result_excerpt"]):
                named.setdefault(ref, waves[j])
            pending += 1
        refs = _references(" ".join(row["args_values"] or []))
        fed = [named[r] for r in refs - told if r in named]
        waves[i] = 1 + max(fed) if fed else 0
        told |= refs
    return waves


def _delegation_relays(context: Context, params: Params) -> list[Finding]:
    """Subagents sent wave after wave after references earlier subagents' answers named (a finding on the lead)."""
    delegations = context.frames.delegations
    if delegations.height < params.min_relayed_delegations:
        return []
    busy = delegations.group_by("session_id").len().filter(pl.col("len") >= params.min_relayed_delegations)["session_id"]
    sessions = context.frames.sessions
    turns = context.tools.select("session_id", "tool_call_id", "turn")
    findings = []
    for (session,), rows in delegations.filter(pl.col("session_id").is_in(busy.implode())).sort("delegation_idx").group_by(
            "session_id", maintain_order=True):
        waves = _waves(rows.to_dicts())
        relayed = rows.with_columns(pl.Series("wave", waves, dtype=pl.Int64)).filter(pl.col("wave") > 0)
        if relayed.height < params.min_relayed_delegations or max(waves) + 1 < params.min_delegation_waves:
            continue
        relayed = relayed.join(turns, on=["session_id", "tool_call_id"], how="left")
        # The subagents sent from the first relayed delegation on, and whether they worked through a server.
        children = sessions.filter((pl.col("parent_session_id") == session) & (pl.col("started_at_utc") >= relayed["ts_utc"].min()))
        child_ids = children["session_id"]
        mcp_children = context.tools.filter(pl.col("session_id").is_in(child_ids.implode()) & pl.col("is_mcp").fill_null(False))
        served = mcp_children["session_id"].n_unique()
        driver = (mcp_children.group_by("tool_key").agg(pl.col("session_id").n_unique().alias("n")).sort("n", "tool_key", descending=[True, False])
                  ["tool_key"].first() if served else None)
        mcp = served * 2 > children.height
        tokens = int(children.select((pl.col("input_total_tokens").fill_null(0) + pl.col("output_tokens").fill_null(0)).sum()).item() or 0)
        usd = children["cost_usd"].sum() if children.height and not children["has_unpriced"].fill_null(False).any() else None
        group, severity, cost = task_cost(context, session)
        known = relayed["turn"].drop_nulls().sort()
        by = (f"Most of them worked through {driver!r} ({served} of {children.height}): a server whose every answer names more "
              "work can spread a loop over fresh agents, each cheap, so no session of its own looks long." if mcp else
              "Most of them called no MCP tool: a workflow of the agent's own, left to a person.")
        findings.append(
            Finding(
                detector=NAME, severity=severity, session_id=session,
                first_turn=known.min() if known.len() else None, last_turn=known.max() if known.len() else None,
                metric="relayed_delegations", value=float(relayed.height),
                threshold=(f"≥ {params.min_relayed_delegations} subagents of one task sent after references earlier subagents' "
                           f"answers named, over ≥ {params.min_delegation_waves} waves"),
                excess_tokens=tokens, excess_usd=usd, tool_key=driver,
                explanation=(
                    f"{relayed.height} of this session's {rows.height} delegations sent a subagent after a reference an earlier "
                    f"subagent's answer had named, over {max(waves) + 1} waves: each wave's answers named the next wave's work. "
                    f"The {children.height} subagents sent from the first of them on used {tokens:,} tokens, each rebuilding its "
                    f"context from scratch. {by}{cost}"
                ),
                evidence={"relay": True, "scope": "task", "mcp": mcp, "delegations": rows.height, "relayed": relayed.height,
                          "waves": max(waves) + 1, "subagents": children.height, "repetitive": False, "drip": False, "writes": False,
                          "group_ratio": group, "fire_turn": known[params.min_relayed_delegations - 1] if known.len() >= params.min_relayed_delegations else None},
            )
        )
    return findings
