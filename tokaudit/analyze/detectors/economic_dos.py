"""Economic DoS suspected — the combined verdict per session.

A session is flagged when:

* a server-steered loop returning little (D5), a cycle re-sending the same
  calls through an MCP server (D15), or a repair loop (D6 evidence ``repair``: the model
  sending an MCP tool the same long arguments again and again, whole or grown, however the
  server worded its rejections) ran in it — all specific enough to stand alone (a queue
  consumer acking each message's receipt, one small template under new values, has a loop's
  shape too: a known false positive, which calibrating the loop length on benign sessions moves) —
  except a steered loop of ``min_walk_calls`` or more whose small results each brought some new content
  (mean novelty above ``min_walk_novelty``: a wizard evaluating the next patient at each step, a booking
  tool offering the next week's free slots), which stands alone only in a session costing at least
  ``min_walk_cost_ratio`` × its cohort median (else it is a chain like those below);
* a failure storm (D9 ``failure_storm``): an MCP tool failing again and again on the same
  arguments, far past the few retries a transient error earns — cheap errors, so no cost gate (a storm of
  retries each sending something new, or one spread over items each throttled several times in a row, counts
  with the weaker structural detectors below);
* a steered loop whose calls carried the model's own new writing (D5 ``writes``: a scratchpad server
  echoing the count of the thoughts sent to it has a loop's shape) with the session costing at least
  ``min_cost_ratio`` × its cohort median;
* a steered chain of slivers (D5 ``drip``: a record or none per call over many calls) or of pages the server
  cut shorter and shorter (D5 ``shrinking``), or a fan-out
  of small identical results (below), with the session costing at least ``min_weak_cost_ratio`` ×
  its cohort median — shapes benign queue consumers and batch writes share, so only a clear blowup
  convicts, and neither makes a surface change (below) a verdict;
* only when ``long_chain_verdict`` is on: a very long server-steered chain of new
  content (D5 without repetition: a drip-feed padded with fresh text) ran in it
  and the session cost at least ``min_long_chain_cost_ratio`` × its cohort median.
  Off by default: a long pagination the task wanted has the same shape and costs
  as much (listings of 30–60 pages at 4–22× their cohort in a blind probe, against
  two drip-feeds), so the D5 finding stays its own, for a person to judge — up to
  ``min_very_long_chain_len`` calls: a chain of that many (a server shrinking its pages
  call after call, 100–400 pages of a listing an agent had asked 100 rows a page of) convicts at
  ``min_long_chain_cost_ratio`` whatever the setting, a length no honest listing of the
  blind probes or the simulator's reached;
* a weaker structural detector fired — argument inflation (D6), a relay walk across tools (D5 ``relay``:
  each MCP call sending a reference the previous answer named, new content every call, as an honest
  investigation's are but for many more hops), verbose,
  repetitive, random or repeated (sponge) results of an MCP tool, or answers to the same poll
  that each repeat the one before and grow (D2 ``accumulating_results``), or answers to new questions that climb
  call after call (D2 ``swelling_results``: a server appending all it said before), a check re-run with the
  same arguments after every edit of the agent's, answering mostly what it said before (D2
  ``rechecks_after_edits``: a validator revealing one finding a round), a poll whose progress
  went backwards again and again (D3 ``progress_regressions``), or whose countdown never ran down
  (D3 ``stalled_countdown``: "ready in 30 s" for forty minutes, fetched by any tool), an MCP tool slower
  than the prompt cache's lifetime called again and again, or one after whose calls the warm prompt cache was
  lost again and again (D8 ``cache_churn``: a server re-announcing its tools on every call), near-duplicate
  calls of an MCP tool whose results were large (``min_near_duplicate_result_tokens``
  per call on average) and mostly repeats (D4 with mean novelty ≤
  ``max_near_duplicate_novelty``: a fan-out over ids each returning
  the same boilerplate; batch work over a listing returns new content) — or, over at least
  ``min_fanout_calls`` calls with mostly distinct arguments, results of ``min_fanout_result_tokens`` on
  average that are all but identical (mean novelty ≤ ``max_fanout_novelty``: a hydration fan-out whose
  detail pages are one boilerplate under new ids; batch work's identical answers are mostly a few tokens,
  "ok", "updated"; this one at ``min_weak_cost_ratio``) — or a cycle of small arguments between
  servers that went round fewer than ``min_light_cycle_repetitions`` times, or ran within one
  server (D15: two status tools polled in turn look the same; so does a browser snapshot
  taken after each wait), and any cycle through a remote host the agent called with its own
  tools (curl's flags and headers make a poll's arguments look written), with payload
  withholding (D14) counting only beside one of them, since job polling has its
  shape — **and** the session cost at least ``min_cost_ratio`` × its cohort median;
* its cost alone is a blowup (D1) against sessions of the same task (against
  the broader agent cohorts, which mix lookups with long coding work, D1 stays
  its own finding);
* reasoning overthinking (D10) fired after a result from outside the user's machine (an MCP server's,
  or a built-in tool reading the web: D10 evidence ``external``), beyond anything the session thought
  over its own tools' results (D10 evidence ``beyond_own``; else with the cost gate); for smaller decoys in
  every result of one tool (D10 evidence ``repeated``), with that cost. A spike after the agent's own tools
  (a failing test run, a file, a patch) stays its own finding however costly the session: a hard task
  thinks hard over them, in bursts that stand out from its session, and that thinking is what it costs
  (blind probes: honest race-condition hunts at 1.5–2.7× their cohort, 9 of 13 convicted when it counted);
* for a session whose cost was estimated from its tool traffic (an MCP transcript recorded alone,
  ``cohorts.with_traffic_estimates``) the same gates apply to that estimate, except that a result far
  above its tool's usual size (D2) does not count: the estimate is made of those sizes;
* a server changed its tool definitions mid-session (D12) and the session then
  paid for cache misses (D8), ran a structural chain through that server, had
  the model write ≥ ``min_changed_server_args_tokens`` of arguments to that
  server (a shadow tool wanting a digest on every step), or cost ≥
  ``min_cost_ratio`` × its cohort. A change inferred from the agent's log (D12
  without a transcript) rests on a cache miss itself, so D8 does not count beside it, the
  arguments count only those written to the tool it introduced, and the cost alone convicts
  beside it only at ``min_weak_cost_ratio``:
  a provider loses a warm cache on its own now and then, and a poll of a server's
  other tool right after it is a costly session's ordinary shape.

A cycle or a steered chain of the agent's own tools alone (read, edit, run the
same test again) is coding work, whatever it cost: it stays its own finding, as do near-duplicate
calls (D4): batch work over a listing has their shape, and the steered-loop test
(D5) is what tells a loop from it.
Directive wording (D13) is never needed: it only enriches the explanation.
A subagent without a cohort of subagents of its kind meets every cost gate with its task's
ratio — its parent session and all its subagents against the parent's cohort, of tasks that delegated
when there are enough (``cohorts.session_baselines``): compared with whole sessions, a loop in a subagent looks cheap.
Findings on an MCP transcript's connection count for the agent session it
served (``Frames.links``). The explanation names the tool and server the chain
ran through and whether that server's tool surface changed (D12).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

import polars as pl

from tokaudit.analyze.detectors import Finding, severity_for_ratio
from tokaudit.analyze.detectors._common import Context

NAME = "economic_dos"
TITLE = "Economic DoS suspected (combined)"

STRONG = ("continuation_loop", "cycles")  # structural evidence that needs no cost gate
STRUCTURAL = ("continuation_loop", "argument_inflation", "cycles")
SUPPORTING = ("payload_withholding",)  # structural only beside one of STRUCTURAL
# D2 findings that say an MCP tool's results were a sponge: far above its usual size, mostly repetition, or random data.
SPONGE_METRICS = ("result_size_vs_tool_median", "large_results_new_tool", "result_compress_ratio", "result_opaque", "repeated_results",
                  "rereads_after_tool", "accumulating_results", "swelling_results", "subagent_rereads", "rechecks_after_edits")
# D8 findings that name a tool: an MCP server slower than the prompt cache's lifetime, called again and again; or
# one after whose calls the warm cache was lost again and again (cache churn).
CACHE_METRICS = ("slow_tool_cache_misses", "cache_churn")
# D12 metrics that say a surface changed: seen in a transcript, or inferred from the agent's log.
SURFACE_CHANGES = ("definition_versions", "tool_added", "inferred_surface_change")
SEEN_CHANGES = ("definition_versions", "tool_added")  # the ones a transcript shows


@dataclass(frozen=True)
class Params:
    min_cost_ratio: float = 1.5
    # A steered chain of new content (a drip-feed, or the long pagination a task wanted) as a verdict: off by
    # default; when on, at this cost.
    long_chain_verdict: bool = False
    min_long_chain_cost_ratio: float = 3.0
    # ... and from this many calls on, whatever ``long_chain_verdict`` says (honest paginations in the blind probes and
    # the simulator's corpora stopped at about 60 pages).
    min_very_long_chain_len: int = 100
    # Arguments the model wrote to a server whose tool definitions changed mid-session (a shadow tool
    # asking for a "context digest" on every step): enough of them make the change a verdict.
    min_changed_server_args_tokens: int = 500
    # A cycle of small arguments between servers stands alone once it has gone round this many times
    # (before that, two status tools polled in turn look the same, and the cost gate decides).
    min_light_cycle_repetitions: float = 6.0
    # Near-duplicate MCP calls count as structural when their results averaged this much: the same large
    # content paid for again and again (small repeated results — "ok", "updated" — are batch work's).
    min_near_duplicate_result_tokens: int = 500
    max_near_duplicate_novelty: float = 0.35  # "mostly repeats": well below D4's own bar, which real pages of records can near
    # A fan-out over many ids whose every detail is the same boilerplate: smaller results count when they are
    # all but identical across many calls (real detail pages differ; batch edits answer "ok").
    min_fanout_calls: int = 10
    min_fanout_result_tokens: int = 100
    max_fanout_novelty: float = 0.1
    # Such a fan-out and a drip of slivers (D5 ``drip``) are shapes benign batch writes and queue consumers share:
    # they convict only at a clear blowup, and do not make a surface change a verdict on their own.
    min_weak_cost_ratio: float = 2.0
    # A steered loop of ``min_walk_calls`` or more whose small results (``max_walk_result_tokens`` on average) each
    # brought some new content (mean novelty above ``min_walk_novelty``: a record per step — a wizard's evaluation of
    # the next patient, the free slots of the next week) walks through steps an honest task has too. It stands alone
    # only in a session costing at least ``min_walk_cost_ratio`` × its cohort's median. A loop of notices (the same
    # words each time, only a counter or cursor changing) stands alone at any cost; so does a shorter loop, whose few
    # results measure no novelty well (eight MinHash bins), and one of large pages (the same rows shuffled read as new
    # in the sampled head and tail).
    min_walk_novelty: float = 0.2
    min_walk_calls: int = 7
    max_walk_result_tokens: int = 400
    min_walk_cost_ratio: float = 1.0


def _server(tool_key: str) -> str:
    """The server part of a ``server/tool`` key (a built-in tool's key is its own)."""
    return tool_key.split("/")[0]


def _large_results(f: Finding) -> float:
    """A chain finding's mean result tokens per call (0 when unknown)."""
    calls = f.evidence.get("calls") or 0
    return (f.evidence.get("result_tokens") or 0) / calls if calls else 0.0


def _large_repeats(f: Finding, params: Params) -> bool:
    """A near-duplicate finding (D4) whose large results were mostly repeats: the same content paid for again and again."""
    return (_large_results(f) >= params.min_near_duplicate_result_tokens
            and (f.evidence.get("mean_novelty") or 0.0) <= params.max_near_duplicate_novelty)


def _fanout(f: Finding, params: Params) -> bool:
    """A near-duplicate finding (D4) over many distinct arguments whose results were one boilerplate."""
    calls = f.evidence.get("calls") or 0
    return (
        calls >= params.min_fanout_calls
        and 2 * (f.evidence.get("distinct_args") or 0) >= calls
        and _large_results(f) >= params.min_fanout_result_tokens
        and (f.evidence.get("mean_novelty") or 0.0) <= params.max_fanout_novelty
    )


def _structural(f: Finding, params: Params, ratio: float | None, estimated: bool) -> bool:
    """Whether finding ``f`` is chain or content evidence the verdict can rest on (beside the cost gate)."""
    if f.detector == "near_duplicates":
        kind = _large_repeats(f, params) or _fanout(f, params)
    elif f.detector == "amplification":
        # A cost estimated from tool traffic is made of the very result sizes a size outlier reports: it cannot
        # confirm one (a lookup tool's occasional broad answer), so only content evidence counts there.
        kind = f.metric in SPONGE_METRICS and not (estimated and f.metric == "result_size_vs_tool_median")
    elif f.detector == "cache_miss_spend":
        kind = f.metric in CACHE_METRICS
    elif f.detector == "failure_spend":
        kind = f.metric == "failure_storm"
    elif f.detector == "same_tool_chain":
        kind = f.metric in ("progress_regressions", "stalled_countdown")
    else:
        kind = f.detector in STRUCTURAL
    # A chain of the agent's own tools alone (a cycle of read, edit, test; a long file read) is coding
    # work on what the user's machine holds: findings that say so (evidence "mcp") do not count.
    # A long steered chain of new content counts only at a high cost; a drip-feed of slivers with the cost gate.
    # A countdown that never runs down is a service's answer whichever tool fetched it (a status URL polled with curl).
    return (
        kind and (f.evidence.get("mcp", True) or f.metric == "stalled_countdown")
        and (f.evidence.get("repetitive", True) or bool(f.evidence.get("drip")) or bool(f.evidence.get("shrinking")) or bool(f.evidence.get("relay"))
             or ((params.long_chain_verdict or (f.evidence.get("steered_calls") or 0) + 1 >= params.min_very_long_chain_len)
                 and ratio is not None and ratio >= params.min_long_chain_cost_ratio))
    )


def _weak(f: Finding, params: Params) -> bool:
    """Structural evidence of a shape benign work shares: a fan-out of small identical results (a batch of writes
    answered by one confirmation) or a drip of slivers (a queue handing out one item a call)."""
    if f.detector == "near_duplicates":
        return not _large_repeats(f, params)
    return _weak_chain(f)


def _weak_chain(f: Finding) -> bool:
    """A steered chain (D5) that is no loop of repeats, only a long run of slivers (evidence ``drip``) or of pages
    shrinking as it went on (evidence ``shrinking``)."""
    return (f.detector == "continuation_loop" and not f.evidence.get("repetitive", True)
            and (bool(f.evidence.get("drip")) or bool(f.evidence.get("shrinking"))))


def _cheap_walk(f: Finding, params: Params, ratio: float | None) -> bool:
    """A steered loop (D5) whose results each brought some new content, in a session no costlier than its cohort's
    typical one (or of unknown cost): a walk through steps, which needs other evidence or the cost gate."""
    novelty = f.evidence.get("steered_novelty")
    small = (f.evidence.get("result_tokens") or 0) <= params.max_walk_result_tokens * (f.evidence.get("calls") or 1)
    return (f.detector == "continuation_loop" and novelty is not None and novelty > params.min_walk_novelty
            and f.value >= params.min_walk_calls and small and (ratio is None or ratio < params.min_walk_cost_ratio))


def _fire_turn(convicting: list[Finding], found: list[Finding]) -> int | None:
    """The earliest turn at which the evidence was complete (for latency: turns after an attack's onset).
    ``convicting``: the findings the verdict rests on (supporting evidence alone convicts nothing)."""
    turns = [f.evidence.get("fire_turn") for f in convicting] or [f.first_turn for f in found]
    turns = [t for t in turns if t is not None]
    return min(turns) if turns else None


def _severity(ratio: float | None) -> str:
    """At least medium: a confirmed chain is worth a look however cheap it was this time."""
    level = severity_for_ratio(ratio)
    return "medium" if level == "low" else level


def detect(context: Context, params: Params) -> list[Finding]:
    # An MCP transcript's connection is part of the agent session it served: a surface change seen in
    # the transcript and a chain seen in the agent's log are one story.
    owner = dict(zip(context.frames.links["session_id"].to_list(), context.frames.links["agent_session_id"].to_list()))
    # Arguments written per (session, server), summed only for the sessions whose servers changed their
    # definitions (the only ones that read it).
    changed = {f.session_id for f in context.findings if f.detector == "tool_surface_change" and f.metric in SURFACE_CHANGES}
    changed |= {owner.get(s, s) for s in changed}
    written_to = context.tools.filter(pl.col("session_id").is_in(list(changed)) & pl.col("mcp_server").is_not_null())
    args_by_server = {
        (row["session_id"], row["mcp_server"]): row["args_tokens"] or 0
        for row in written_to.group_by("session_id", "mcp_server").agg(pl.col("args_tokens").sum()).iter_rows(named=True)
    }
    # ... and per tool: beside a change inferred from a cache loss, only what the model wrote to the tool it introduced.
    args_by_tool = {
        (row["session_id"], row["tool_key"]): row["args_tokens"] or 0
        for row in written_to.group_by("session_id", "tool_key").agg(pl.col("args_tokens").sum()).iter_rows(named=True)
    }
    by_session: dict[str, list[Finding]] = defaultdict(list)
    for f in context.findings:
        by_session[owner.get(f.session_id, f.session_id)].append(f)
    out = []
    for session_id, found in sorted(by_session.items()):
        names = {f.detector for f in found}
        ratio = context.ratio(session_id)
        # Waste spread over a task's subagents (evidence scope "task") is weighed by what the whole task cost.
        if any(f.evidence.get("scope") == "task" for f in found) and context.group_ratio(session_id) is not None:
            ratio = context.group_ratio(session_id)
        structural = [f for f in found if _structural(f, params, ratio, context.ratio_estimated(session_id))]
        if structural:
            structural += [f for f in found if f.detector in SUPPORTING]
        # A short cycle of small arguments between servers could be two tools polled in turn: it needs the cost gate; so
        # does one within a single server however long (a browser snapshot after each wait: a client working a page).
        # A cycle through a remote host the agent called with its own tools is weighed so whatever its arguments: a
        # command line's flags and headers make a poll's arguments look written.
        # A drip-feed of slivers could be a queue handing out one item a call: it needs the cost gate too.
        strong = [
            f for f in structural
            if (f.detector in STRONG and (not (f.evidence.get("light_args") or f.evidence.get("remote"))
                                          or (f.value >= params.min_light_cycle_repetitions and f.evidence.get("servers", 2) >= 2))
                and not _weak_chain(f) and not f.evidence.get("writes") and not f.evidence.get("relay")
                and not _cheap_walk(f, params, ratio))
            or f.evidence.get("repair") or f.evidence.get("storm")
        ]
        reasons = []
        if strong:
            loops = [f for f in strong if f.detector == "continuation_loop"]
            reasons.append("repair loop" if all(f.evidence.get("repair") for f in strong)
                           else "failure storm" if all(f.evidence.get("storm") for f in strong) else "cycle" if not loops
                           else "steered loop" if any(f.evidence.get("repetitive", True) for f in loops) else "long steered chain")
        elif ratio is not None and (
            any(not _weak(f, params) for f in structural) and ratio >= params.min_cost_ratio
            or structural and ratio >= params.min_weak_cost_ratio
        ):
            reasons.append("structural")
        # Cost alone convicts only against sessions of the same task: an agent's sessions mix one-line
        # lookups with long coding work, so a blowup against that broad cohort stays its own finding.
        if any(f.detector == "cost_blowup" and f.evidence.get("cohort") == "task" for f in found):
            reasons.append("cost")
        # Smaller decoys in every result of one tool (evidence "repeated") ask the cost gate too. A spike after the
        # agent's own tools never convicts: hard tasks think hardest there, and that is what they cost.
        if any(f.detector == "overthinking" and f.evidence.get("external", True)
               and ((not f.evidence.get("repeated") and f.evidence.get("beyond_own", True))
                    or (ratio is not None and ratio >= params.min_cost_ratio))
               for f in found):
            reasons.append("overthinking")
        seen_change = any(f.detector == "tool_surface_change" and f.metric in SEEN_CHANGES for f in found)
        # The cost a change convicts beside: a change inferred from a cache loss alone asks a clear blowup.
        surface_cost_ratio = params.min_cost_ratio if seen_change else params.min_weak_cost_ratio
        surface_changed = any(f.detector == "tool_surface_change" and f.metric in SURFACE_CHANGES for f in found)
        changed_servers = {_server(f.tool_key) for f in found if f.detector == "tool_surface_change" and f.tool_key}
        # A chain through the changed server: evidence of its own (payload withholding only supports one; a weak
        # shape — a batch of writes after a login unlocked them — is no chain here).
        chain_on_changed = any(
            f.tool_key and _server(f.tool_key) in changed_servers and f.detector not in SUPPORTING and not _weak(f, params)
            for f in structural
        )
        written = max((args_by_server.get((session_id, server), 0) for server in changed_servers), default=0)
        # The arguments written to the changed server count where a transcript showed the change. An inferred one
        # rests on a single cache loss, and an upload's parts or a search's queries written to the server's old
        # tools are arguments too: there only what the model wrote to the tool that explained the loss counts
        # (a shadow tool asking for a digest on every step).
        new_tools = {f.tool_key for f in found if f.detector == "tool_surface_change" and f.metric == "inferred_surface_change" and f.tool_key}
        written_new = max((args_by_tool.get((session_id, tool), 0) for tool in new_tools), default=0)
        if surface_changed and (
            ("cache_miss_spend" in names and seen_change) or chain_on_changed
            or (written >= params.min_changed_server_args_tokens and seen_change) or written_new >= params.min_changed_server_args_tokens
            or (ratio is not None and ratio >= surface_cost_ratio)
        ):
            reasons.append("tool surface")
        if not reasons:
            continue
        # The chain the verdict rests on: a steered loop or cycle when one fired, else the costliest chain.
        chain = max(strong or structural, key=lambda f: f.excess_tokens or 0) if structural else None
        turns = [t for f in found for t in (f.first_turn, f.last_turn) if t is not None]
        tool = chain.tool_key if chain else next((f.tool_key for f in found if f.tool_key), None)
        parts = [f"Suspected economic denial of service ({', '.join(reasons)} evidence)."]
        if chain:
            parts.append(f"The chain ran through {tool!r}: {chain.explanation}")
        if ratio is not None and "cohort's median" not in (chain.explanation if chain else ""):
            text = context.ratio_text(session_id)
            parts.append(f"{text[0].upper()}{text[1:]}.")
        if tool and _server(tool) in changed_servers:
            parts.append("That server's tool definitions changed during the session" + ("." if seen_change else " (inferred from the agent's log)."))
        if "directive_notices" in names:
            parts.append("Its results also told the model to call again.")
        parts.append(f"Detectors that fired: {', '.join(sorted(names))}.")
        # A long chain of new content alone may be the pagination the task wanted: worth a look, not an alarm.
        severity = "medium" if reasons == ["long steered chain"] else _severity(ratio)
        out.append(
            Finding(
                detector=NAME, severity=severity, session_id=session_id,
                first_turn=min(turns) if turns else None, last_turn=max(turns) if turns else None,
                metric="cost_ratio", value=ratio if ratio is not None else 0.0,
                threshold=("D5, D15, a D6 repair loop or a D9 failure storm; a D5 chain of new content "
                           + ("" if params.long_chain_verdict else f"of ≥ {params.min_very_long_chain_len} calls ")
                           + f"with cost ≥ {params.min_long_chain_cost_ratio}× cohort median; another "
                           f"chain detector with cost ≥ {params.min_cost_ratio}× cohort median; D1; D10; or D12 with D8"),
                excess_tokens=max((f.excess_tokens or 0 for f in found), default=None),
                excess_usd=max((f.excess_usd for f in found if f.excess_usd is not None), default=None),
                explanation=" ".join(parts), tool_key=tool,
                evidence={"detectors": sorted(names), "reasons": reasons, "fire_turn": _fire_turn(
                    strong or [f for f in structural if f.detector not in SUPPORTING], found)},
            )
        )
    return out
