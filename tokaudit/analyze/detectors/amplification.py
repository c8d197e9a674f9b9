"""D2 — amplification: low payload yield, output far above input, verbose (sponge) results.

Payload yield Y = Σ novelty·result tokens / Σ (argument + result tokens) over a
session's tool calls: how much of what the tools put in the context was new. Fires on ``Y < max_yield`` with
the session costing ≥ ``min_ratio`` × its cohort median (withheld or drip-fed
payloads), and on a request whose output is ≥ ``min_out_in`` × its input with
≥ ``min_output_tokens`` output (reasoning bombs). False positives: generative tasks
(writing, coding) have a low yield by nature, hence the cost gate.

Verbose results: a tool returning ``min_times_tool_median`` × its usual result
size (the median, over the analysed sessions, of its median result in each: one
session calling a sponge many times does not make verbose the tool's usual) and
at least ``min_result_tokens``, on ``min_verbose_calls`` or more calls of a session
— a sponge server inflating what the model must read (and re-read every later
turn) — and ``min_times_tool_peak`` × its usual peak (the median, over sessions,
of each session's largest result of it). False positives: a tool whose results
are legitimately size-varied (file reads, a database query tool whose model
sometimes asks for a few hundred rows): such a tool's sessions usually reach
large results too, which the peak measures; the multiples are calibrated on
benign sessions.

Large results of a new tool: an MCP tool seen in fewer than ``min_tool_sessions``
sessions has no usual size to exceed; results of ``min_new_tool_result_tokens`` or
more (whole documents, about a hundred pages of text) on ``min_verbose_calls`` or
more of its calls in a session are reported on their size alone. A sponge server
the agent met once floods it with padding, hexdumps or logs that are neither
repetitive enough nor random enough for the measures below. False positives: a
newly added server that legitimately returns whole large documents.

Repetitive results: an MCP tool returning results of ``min_repetitive_result_tokens``
or more that compress ``min_compress_ratio`` × or more (repeated lines, boilerplate,
near-identical records: code, prose, real records and logs compress 2–9×), on
``min_verbose_calls`` or more calls of a session. Needs no usual size for the
tool, so a sponge server seen in one session only is measured too. False
positives: a tool legitimately returning large padded or templated output.

Opaque results: an MCP tool returning results of ``min_opaque_result_tokens`` or
more that zlib cannot shrink below ``max_opaque_compress_ratio`` × — random,
encrypted or compressed bytes spelled as text (base64 of a blob is 1.3×; lists of
hashes or UUIDs 1.7×, code 2.5×, prose and records 2–9×) — on ``min_verbose_calls``
or more calls of a session. No model reads such text, yet every later request
pays for it again; a sponge made of random data has no repetition to find and, from
a server seen once, no usual size to exceed. False positives: a tool that returns
a file's bytes as base64 text (the tokens are spent all the same).

Repeated results: an MCP tool whose results, after its first in the session, repeat
what it returned before (mean novelty ≤ ``max_repeated_novelty`` against its previous
results) on ``min_repeated_calls`` or more calls with mostly different arguments,
averaging ``min_repeated_result_tokens`` or more (or on ``min_many_repeated_calls`` or more, none
an error, averaging ``min_many_repeated_result_tokens`` and as many tokens in all: a work queue
handing out each small lease with the same policy text) — the same large boilerplate paid for
call after call, however far apart the calls (a "quality gate" the server has the model
run after every edit, a few new lines atop the same schema). Different arguments, the
same answer: a status polled with the same arguments, or a file read again, is left to the chain
and cost detectors. False positives: a tool whose answers are mostly a fixed frame
around a few new lines (browser snapshots of one site differ by more).

Re-checks after edits: an MCP tool called again with the arguments of its previous call after the agent
changed something with its own tools in between (a file edited, written or patched), on ``min_recheck_calls``
or more calls, answering ``min_recheck_result_tokens`` or more on average with mostly what it said before (mean
novelty ≤ ``max_recheck_novelty``): a validator re-run after every fix that reveals one more finding each
round, beside the same annotated copy of the file, where an honest one reports what it finds at once and is
satisfied after a round or two. False positives: an agent fixing a long list of findings one at a time,
validating after each (the same re-reads, hence the verdict's cost gate).
Accumulating results: an MCP tool called again with the same arguments (a status or log polled;
no other call to its server between, the agent's own tools aside) whose every answer repeats the one
before (novelty ≤ ``max_accumulating_novelty``) and is larger than it, on ``min_accumulating_calls``
or more polls in a row averaging ``min_accumulating_result_tokens``,
growing to ``min_accumulating_growth`` × the chain's first answer or more: a server sending its
whole history (the run's log so far, every event since the start) on each poll, so the tokens
grow with the square of the polls where a status and one final fetch would do. False positives:
a poll whose answer legitimately accumulates (an agent tailing a job's whole log through a
server instead of its status): the same waste, not always an attack, hence the verdict's cost gate. A page
snapshot taken again after each scroll of a growing feed is the agent's doing (a call to the server between).

Swelling results: the same, asked different things — an MCP tool's answers to ``min_swelling_calls`` or
more calls in a row with new arguments (no other call to its server between), each larger than the one
before and repeating part of it (novelty ≤ ``max_swelling_novelty``), averaging ``min_accumulating_result_tokens`` and growing to ``min_swelling_growth`` × the first:
a server appending everything it said before (an "audit trail", a running appendix) to each answer of a
batch, whose own answers (one account's statement, one record) would vary in size, not climb call after
call. False positives: a tool that returns the whole collection after each item added to it (a list
server answering every add with the list): the same growing re-reads, hence the verdict's cost gate.

Re-reads after a tool: the agent's own tools (a file read, ``cat``) returning the very result
they returned before in the session — the same arguments, as many tokens, the same words — of
``min_reread_result_tokens`` or more, right after results of one MCP tool, on ``min_reread_calls``
or more calls: a server ("digest mismatch, read the file again") making the model pull the same
large local content into its context over and over, where the tool's own results are small. The
finding names that MCP tool. False positives: a workflow that re-reads an unchanged large report
after every call of a tool (a file that changed in between is a different result).

Re-reads across subagents: the same large local content (the same call of the agent's own tool, the same
result, ``min_reread_result_tokens`` or more) read by ``min_subagent_rereads`` or more subagents of one task,
``min_subagent_reread_tokens`` or more read again in all — a server handing the work to a fresh agent one stage
at a time, each rebuilding in an empty (uncached) context what the last one had read. Each subagent looks small;
the finding is on the session that spawned them (evidence ``scope`` "task"), and the verdict weighs it by the
whole task's cost (``Context.group_ratio``). It names the MCP tool most of those subagents called (evidence
``mcp``); with none, it is a workflow of the agent's own. False positives: many subagents each loading one
shared guide or key module (a few do; the counts are set above that).

Repetitive and opaque results count on one call too when it is ``min_single_sponge_tokens``
or more: a sponge server needs only one such result to flood the context, and what it
holds — not its size alone — is the evidence. (A single large result of ordinary text
is a document read; the size rules above keep needing ``min_verbose_calls``.)
"""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

from tokaudit.analyze.detectors import Finding, severity_for_ratio
from tokaudit.analyze.detectors._common import EDITING_TOOLS, Context, fire_turn, known_turns, named_for, task_cost
from tokaudit.analyze.features import similarity_to
from tokaudit.ingest.base import COMPRESS_SAMPLE_BYTES, SIG_BINS

# Content types of results a model reads as text (types are listed sorted, so a result holding an image
# or audio part lists that first).
TEXT_CONTENT = ("text", "json", "other")

NAME = "amplification"
TITLE = "Low payload yield at high cost; output far above input (D2)"


@dataclass(frozen=True)
class Params:
    max_yield: float = 0.05
    min_ratio: float = 5.0
    min_out_in: float = 50.0
    min_output_tokens: int = 4000
    min_times_tool_median: float = 5.0
    # ... and this many times the tool's usual peak: the median over sessions of each one's largest result of it.
    min_times_tool_peak: float = 3.0
    min_result_tokens: int = 5000
    min_verbose_calls: int = 2
    # A tool with fewer sessions of its own has no usual size: only results this large count, on their size.
    min_tool_sessions: int = 3
    min_new_tool_result_tokens: int = 20_000
    # Calibrated on benign content: real code, prose, records, logs and listings compress at most ~9× (zlib level 1).
    min_compress_ratio: float = 15.0
    # Repetition is evidence on its own, so smaller results count than for the size rule.
    min_repetitive_result_tokens: int = 3000
    # Random data spelled as text: base64 compresses 1.3×, hex and UUID lists 1.7×, anything a model reads 2× or more.
    max_opaque_compress_ratio: float = 1.45
    min_opaque_result_tokens: int = 5000
    # One repetitive or random result this large (a hundred pages of text) is a sponge on its own: its content is
    # the evidence, where a large result of ordinary text needs ``min_verbose_calls`` to be one.
    min_single_sponge_tokens: int = 20_000
    # The same large answer again and again, to mostly different arguments. (A tool answering bad input with its
    # usage text, a thousand tokens, is not large: ten thousand tokens at least over the calls.)
    min_repeated_calls: int = 5
    min_repeated_result_tokens: int = 2000
    max_repeated_novelty: float = 0.2
    # ... or smaller answers on many more calls, none of them an error (a policy text handed out with each lease of
    # a work queue): as many repeated tokens in all, spread thinner.
    min_many_repeated_calls: int = 10
    min_many_repeated_result_tokens: int = 500
    # A poll answered with everything it answered before and more: this many growing repeats, of this size on
    # average, up to this multiple of the first answer (a status that gains a line now and then stays below it).
    min_accumulating_calls: int = 5
    min_accumulating_result_tokens: int = 1000
    max_accumulating_novelty: float = 0.3
    min_accumulating_growth: float = 2.0
    # Answers to new arguments each larger than the one before: honest batch answers vary in size, and eight of them
    # climbing in a row by chance is one in 40,320.
    min_swelling_calls: int = 8
    min_swelling_growth: float = 3.0
    # ... each repeating part of the one before (the trail so far): sizes that climb by chance, over a fleet's millions
    # of calls, bring new content every time.
    max_swelling_novelty: float = 0.7
    # The same call of an MCP tool re-run after the agent's edits, this many times, answering this much on average with
    # mostly what it said before (an honest validator is satisfied after a round or two).
    min_recheck_calls: int = 6
    min_recheck_result_tokens: int = 1000
    max_recheck_novelty: float = 0.5
    # The same large local content read again right after an MCP tool's results, this many times.
    min_reread_calls: int = 4
    min_reread_result_tokens: int = 2000
    # The same large local content read by this many subagents of one task (each starting from an empty context),
    # this many tokens read again in all: a handful of subagents sharing a style guide or a key module is ordinary.
    min_subagent_rereads: int = 5
    min_subagent_reread_tokens: int = 20_000


def detect(context: Context, params: Params) -> list[Finding]:
    out: list[Finding] = []
    tools = context.tools
    if not tools.is_empty():
        per_session = tools.group_by("session_id").agg(
            (pl.col("novelty").fill_null(0) * pl.col("result_tokens").fill_null(0)).sum().alias("novel_tokens"),
            (pl.col("args_tokens").fill_null(0) + pl.col("result_tokens").fill_null(0)).sum().alias("traffic_tokens"),
        )
        sessions = context.frames.sessions.join(per_session, on="session_id").join(context.baselines, on="session_id")
        sessions = sessions.with_columns(
            (pl.col("novel_tokens") / pl.max_horizontal(pl.col("traffic_tokens"), pl.lit(1))).alias("yield")
        ).filter((pl.col("yield") < params.max_yield) & (pl.col("cost_ratio") >= params.min_ratio))
        for s in sessions.iter_rows(named=True):
            out.append(
                Finding(
                    detector=NAME, severity=severity_for_ratio(s["cost_ratio"]), session_id=s["session_id"],
                    first_turn=0, last_turn=max(0, s["requests"] - 1), metric="payload_yield", value=s["yield"],
                    threshold=f"< {params.max_yield} with cost ≥ {params.min_ratio}× cohort median",
                    excess_tokens=None, excess_usd=None,
                    explanation=(
                        f"Only {s['yield']:.1%} of the {int(s['traffic_tokens']):,} tokens the tool calls put in the context was new "
                        f"content, while {context.ratio_text(s['session_id'])}: the tools returned little that "
                        "was new per token spent (withheld or drip-fed payloads)."
                    ),
                )
            )
    verbose = _verbose_results(context, params)
    out += verbose
    already = {(f.session_id, f.tool_key) for f in verbose}
    out += _compression_outliers(context, params, already, opaque=False)
    out += _compression_outliers(context, params, already, opaque=True)
    out += _repeated_results(context, params)
    out += _rechecks(context, params)
    out += _task_repeated_results(context, params)
    out += _rereads(context, params)
    out += _subagent_rereads(context, params)
    growing = _growing_answers(context, params)
    out += _accumulating_results(context, params, growing, same_args=True)
    out += _accumulating_results(context, params, growing, same_args=False)
    calls = context.frames.calls.filter(
        (pl.col("output_tokens") >= params.min_output_tokens)
        & (pl.col("output_tokens") >= params.min_out_in * pl.max_horizontal(pl.col("input_total_tokens"), pl.lit(1)))
    )
    for c in calls.iter_rows(named=True):
        out.append(
            Finding(
                detector=NAME, severity="medium", session_id=c["session_id"], first_turn=c["turn"], last_turn=c["turn"],
                metric="output_input_ratio", value=c["output_tokens"] / max(c["input_total_tokens"], 1),
                threshold=f"≥ {params.min_out_in} with ≥ {params.min_output_tokens:,} output tokens",
                excess_tokens=c["output_tokens"], excess_usd=None,
                explanation=f"Request {c['turn']} produced {c['output_tokens']:,} output tokens from {c['input_total_tokens']:,} input tokens: "
                "an output far out of proportion to its input (a reasoning bomb or runaway generation).",
            )
        )
    return out


def _per_session_tool(flagged: pl.DataFrame, params: Params, *measures: pl.Expr, single_tokens: int | None = None) -> pl.DataFrame:
    """Flagged result rows per session and tool — calls, tokens, turns, first call, token method and
    ``measures`` — where the tool did it on at least ``min_verbose_calls`` calls, or once with at least
    ``single_tokens`` tokens (when given)."""
    enough = pl.col("calls") >= params.min_verbose_calls
    if single_tokens is not None:
        enough = enough | (pl.col("tokens") >= single_tokens)
    return flagged.group_by("session_id", "tool_key").agg(
        pl.len().alias("calls"),
        pl.col("result_tokens").sum().alias("tokens"),
        *measures,
        pl.col("turn").min().alias("first_turn"),
        pl.col("turn").max().alias("last_turn"),
        pl.col("tool_call_id").first().alias("first_call"),
        pl.col("result_tokens_method").first().alias("method"),
    ).filter(enough)


def _tool_finding(context: Context, r: dict, **fields) -> Finding:
    """A finding about one tool's results in one session (a row of ``_per_session_tool``): ``fields`` are the
    metric, value, threshold, excess tokens, explanation and evidence; its severity follows the session's cost."""
    return Finding(detector=NAME, severity=severity_for_ratio(context.ratio(r["session_id"])), session_id=r["session_id"],
                   **known_turns(r), excess_usd=None, tool_key=r["tool_key"], **fields)


def _verbose_results(context: Context, params: Params) -> list[Finding]:
    tools = context.tools.filter(pl.col("result_tokens").is_not_null())
    if tools.is_empty():
        return []
    # Each session is one vote on a tool's usual size (the median of its session medians): one session
    # calling a sponge many times must not make verbose the tool's usual.
    # A tool whose sessions usually reach large results too (a query tool asked for a few hundred rows now and
    # then) is size-varied by nature: its usual peak is the median of its sessions' largest results.
    per_session = tools.group_by("tool_key", "session_id").agg(pl.col("result_tokens").median().alias("_session_median"),
                                                               pl.col("result_tokens").max().alias("_session_peak"))
    usual = per_session.group_by("tool_key").agg(pl.col("_session_median").median().alias("_median"),
                                                 pl.col("_session_peak").median().alias("_peak"), pl.len().alias("_sessions"))
    tools = tools.join(usual, on="tool_key", how="left")
    above_usual = (
        (pl.col("result_tokens") >= params.min_result_tokens)
        & (pl.col("result_tokens") >= params.min_times_tool_median * pl.max_horizontal(pl.col("_median"), pl.lit(1)))
        & (pl.col("result_tokens") >= params.min_times_tool_peak * pl.col("_peak"))
    )
    # Large results of a tool too new for its usual size to mean much, where they are not above it already.
    new_tool = (
        pl.col("is_mcp") & (pl.col("_sessions") < params.min_tool_sessions) & (pl.col("result_tokens") >= params.min_new_tool_result_tokens)
        & ~above_usual
    )
    verbose = tools.filter(above_usual | new_tool).with_columns(new_tool.alias("_new_tool"))
    per = _per_session_tool(
        verbose, params,
        pl.col("_median").first().alias("median"),
        pl.col("_peak").first().alias("peak"),
        (pl.col("result_tokens") / pl.max_horizontal(pl.col("_median"), pl.lit(1))).max().alias("ratio"),
        pl.col("is_mcp").first().alias("mcp"),
        pl.col("_new_tool").all().alias("new_tool"),
        pl.col("_sessions").first().alias("tool_sessions"),
    )  # fmt: skip
    return [_new_tool_finding(context, r, params) if r["new_tool"] else
        _tool_finding(
            context, r,
            metric="result_size_vs_tool_median", value=r["ratio"],
            threshold=(f"≥ {params.min_times_tool_median}× the tool's median result, ≥ {params.min_times_tool_peak}× its usual peak and "
                       f"≥ {params.min_result_tokens:,} tokens, on ≥ {params.min_verbose_calls} calls"),
            excess_tokens=int(r["tokens"] - r["calls"] * r["median"]),
            explanation=(
                f"{r['tool_key']!r} returned {r['calls']} results of up to {r['ratio']:.0f}× its usual size ({int(r['tokens']):,} tokens "
                f"in all, {r['method']}; its median is {r['median']:,.0f}, and its sessions' largest results are usually "
                f"{r['peak']:,.0f}): verbose results the model must read, and re-read on every later request."
            ),
            evidence={"first_call": r["first_call"], "calls": r["calls"], "mcp": r["mcp"]},
        )
        for r in per.iter_rows(named=True)
    ]


def _new_tool_finding(context: Context, r: dict, params: Params) -> Finding:
    """Large results of an MCP tool with too few sessions of its own for a usual size."""
    seen = "this session only" if r["tool_sessions"] == 1 else f"{r['tool_sessions']} sessions only"
    return _tool_finding(
        context, r,
        metric="large_results_new_tool", value=r["tokens"] / r["calls"],
        threshold=(f"≥ {params.min_new_tool_result_tokens:,} tokens per result on ≥ {params.min_verbose_calls} calls of an MCP tool "
                   f"seen in fewer than {params.min_tool_sessions} sessions"),
        excess_tokens=int(r["tokens"]),
        explanation=(
            f"{r['tool_key']!r}, a tool seen in {seen}, returned {r['calls']} results of {int(r['tokens']):,} tokens in all "
            f"({r['method']}): whole documents the model must read, and re-read on every later request, from a server with no "
            "history to say that is its usual."
        ),
        evidence={"first_call": r["first_call"], "calls": r["calls"], "mcp": True, "tool_sessions": r["tool_sessions"]},
    )


def _compression_outliers(context: Context, params: Params, already: set[tuple[str, str | None]], opaque: bool) -> list[Finding]:
    """Large MCP results that are mostly repetition (``opaque`` False) or random data spelled as text (True),
    measured on their own: no usual size is needed."""
    tools = context.tools
    if tools.is_empty():
        return []
    if opaque:
        # Only text: an image's or a blob's bytes are base64 by nature (its first listed type when it has one).
        outlier = (
            (pl.col("result_tokens") >= params.min_opaque_result_tokens)
            & (pl.col("result_compress_ratio") <= params.max_opaque_compress_ratio)
            & pl.col("content_type").is_in(TEXT_CONTENT)
        )
        # Random data carries nothing a model can use: all of it is excess.
        carried = pl.lit(0.0)
        ratio = pl.col("result_compress_ratio").min()
        threshold = (f"results of ≥ {params.min_opaque_result_tokens:,} tokens compressing ≤ {params.max_opaque_compress_ratio}× (zlib), "
                     f"on ≥ {params.min_verbose_calls} calls or one of ≥ {params.min_single_sponge_tokens:,}")
    else:
        outlier = (pl.col("result_tokens") >= params.min_repetitive_result_tokens) & (pl.col("result_compress_ratio") >= params.min_compress_ratio)
        # What the results carried at most: each one's size divided by how many times it compresses.
        carried = pl.col("result_tokens") / pl.col("result_compress_ratio")
        ratio = pl.col("result_compress_ratio").max()
        threshold = (f"results of ≥ {params.min_repetitive_result_tokens:,} tokens compressing ≥ {params.min_compress_ratio}× (zlib), "
                     f"on ≥ {params.min_verbose_calls} calls or one of ≥ {params.min_single_sponge_tokens:,}")
    per = _per_session_tool(
        tools.filter(pl.col("is_mcp") & outlier), params, carried.sum().alias("carried"), ratio.alias("ratio"),
        single_tokens=params.min_single_sponge_tokens,
    ).sort("session_id", "tool_key")  # fmt: skip
    return [
        _tool_finding(
            context, r,
            metric="result_opaque" if opaque else "result_compress_ratio", value=r["ratio"], threshold=threshold,
            excess_tokens=int(r["tokens"] - r["carried"]),
            explanation=_compression_explanation(r, opaque),
            evidence={"first_call": r["first_call"], "calls": r["calls"], "mcp": True, "compress_method": f"zlib level 1, first {COMPRESS_SAMPLE_BYTES // 1024} KiB"},
        )
        for r in per.iter_rows(named=True)
        if (r["session_id"], r["tool_key"]) not in already
    ]


def _repeated_enough(params: Params) -> pl.Expr:
    """Whether a (session or task, tool) row of repeats (``calls``, ``tokens``, ``distinct_args``, ``mean_novelty``,
    ``_errors``) is the same large answer paid for again and again."""
    return (
        (2 * pl.col("distinct_args") >= pl.col("calls"))
        & (pl.col("mean_novelty") <= params.max_repeated_novelty)
        & (((pl.col("calls") >= params.min_repeated_calls) & (pl.col("tokens") >= params.min_repeated_result_tokens * pl.col("calls")))
           | ((pl.col("calls") >= params.min_many_repeated_calls) & ~pl.col("_errors")
              & (pl.col("tokens") >= params.min_many_repeated_result_tokens * pl.col("calls"))
              & (pl.col("tokens") >= params.min_repeated_result_tokens * params.min_repeated_calls)))
    )


def _repeated_threshold(params: Params) -> str:
    return (f"mean novelty ≤ {params.max_repeated_novelty} over ≥ {params.min_repeated_calls} results of ≥ "
            f"{params.min_repeated_result_tokens:,} tokens on average (or ≥ {params.min_many_repeated_calls} results "
            f"of ≥ {params.min_many_repeated_result_tokens:,}, none an error, as many tokens in all), to mostly different arguments")


def _repeated_results(context: Context, params: Params) -> list[Finding]:
    """An MCP tool answering mostly different calls with what it returned before, in large results."""
    # The tool's first result in the session has nothing before it to repeat (the frame is in call order).
    results = context.tools.filter(pl.col("is_mcp") & pl.col("novelty").is_not_null())
    repeats = results.filter(~pl.struct("session_id", "tool_key").is_first_distinct())
    per = _per_session_tool(
        repeats, params,
        pl.col("args_hash").n_unique().alias("distinct_args"),
        pl.col("novelty").mean().alias("mean_novelty"),
        ((1 - pl.col("novelty")) * pl.col("result_tokens").fill_null(0)).sum().alias("repeated_tokens"),
        pl.col("is_error").any().alias("_errors"),
    ).filter(_repeated_enough(params)).sort("session_id", "tool_key")
    return [
        _tool_finding(
            context, r,
            metric="repeated_results", value=r["mean_novelty"],
            threshold=_repeated_threshold(params),
            excess_tokens=int(r["repeated_tokens"]),
            explanation=(
                f"{r['tool_key']!r} answered {r['calls']} more calls ({r['distinct_args']} different arguments) with "
                f"{int(r['tokens']):,} tokens ({r['method']}) that mostly repeat what it had returned before (mean novelty "
                f"{r['mean_novelty']:.2f}): the same large text, paid for on every call and re-read on every later request."
            ),
            evidence={"first_call": r["first_call"], "calls": r["calls"], "mcp": True, "mean_novelty": r["mean_novelty"],
                      "distinct_args": r["distinct_args"]},
        )
        for r in per.iter_rows(named=True)
    ]


def _rechecks(context: Context, params: Params) -> list[Finding]:
    """An MCP tool called again and again with its previous call's arguments after the agent's own edits, answering
    mostly what it had said before."""
    tools = context.tools
    # Only sessions calling an MCP tool with the same arguments more than ``min_recheck_calls`` times can hold such a
    # run: the rest of a large batch is skipped before the per-session scans below.
    repeated = (tools.filter(pl.col("is_mcp")).group_by("session_id", "tool_key", "args_hash").len()
                .filter(pl.col("len") > params.min_recheck_calls).select("session_id").unique())
    if repeated.is_empty():
        return []
    tools = tools.filter(pl.col("session_id").is_in(repeated["session_id"].to_list()))
    edits = ~pl.col("is_mcp") & named_for(EDITING_TOOLS)
    # Edits so far in the session (the frame is in call order), and at each MCP tool's previous call.
    calls = tools.with_columns(edits.cast(pl.Int64).cum_sum().over("session_id").alias("_edits")).filter(pl.col("is_mcp"))
    calls = calls.with_columns(
        ((pl.col("args_hash") == pl.col("args_hash").shift(1).over("session_id", "tool_key"))
         & (pl.col("_edits") > pl.col("_edits").shift(1).over("session_id", "tool_key"))).fill_null(False).alias("_recheck"))
    rechecks = calls.filter(pl.col("_recheck") & pl.col("novelty").is_not_null())
    per = _per_session_tool(rechecks, params, pl.col("novelty").mean().alias("mean_novelty")).filter(
        (pl.col("calls") >= params.min_recheck_calls) & (pl.col("tokens") >= params.min_recheck_result_tokens * pl.col("calls"))
        & (pl.col("mean_novelty") <= params.max_recheck_novelty)).sort("session_id", "tool_key")
    return [
        _tool_finding(
            context, r,
            metric="rechecks_after_edits", value=r["mean_novelty"],
            threshold=(f"≥ {params.min_recheck_calls} calls with the previous call's arguments after the agent's edits, "
                       f"≥ {params.min_recheck_result_tokens:,} tokens on average, mean novelty ≤ {params.max_recheck_novelty}"),
            excess_tokens=int(r["tokens"]),
            explanation=(
                f"{r['tool_key']!r} was called {r['calls']} more times with the same arguments after the agent's own edits, "
                f"answering {int(r['tokens']):,} tokens ({r['method']}) that mostly repeat what it had said before (mean novelty "
                f"{r['mean_novelty']:.2f}): a check re-run after every fix that finds one more thing each round, its answer "
                "paid for every time and re-read on every later request."
            ),
            evidence={"first_call": r["first_call"], "calls": r["calls"], "mcp": True, "mean_novelty": r["mean_novelty"]},
        )
        for r in per.iter_rows(named=True)
    ]


def _subagents(context: Context) -> pl.DataFrame:
    """The subagents' sessions of the frame: ``session_id`` and the ``parent_session_id`` that spawned each."""
    return context.frames.sessions.filter(pl.col("parent_session_id").is_not_null()).select("session_id", "parent_session_id")


def _task_repeated_results(context: Context, params: Params) -> list[Finding]:
    """``_repeated_results`` over the subagents of one task: each subagent calls the MCP tool once or twice (a lease
    per subagent), so no session repeats anything, while the task pays for the same answer in every one of them."""
    subagents = _subagents(context)
    if subagents.is_empty() or context.tools.is_empty():
        return []
    calls = (
        context.tools.filter(pl.col("is_mcp") & pl.col("has_result") & pl.col("sig0").is_not_null())
        .join(subagents, on="session_id").sort("parent_session_id", "tool_key", "ts_utc")
    )
    same = (pl.col("parent_session_id") == pl.col("parent_session_id").shift(1)) & (pl.col("tool_key") == pl.col("tool_key").shift(1))
    # Each answer against the task's previous answer of the tool (another subagent's, mostly); the first has none.
    repeats = calls.with_columns(pl.when(same).then(1.0 - similarity_to(1)).alias("_task_novelty")).filter(pl.col("_task_novelty").is_not_null())
    per = (
        repeats.group_by("parent_session_id", "tool_key").agg(
            pl.len().alias("calls"), pl.col("result_tokens").sum().alias("tokens"), pl.col("session_id").n_unique().alias("subagents"),
            pl.col("args_hash").n_unique().alias("distinct_args"), pl.col("_task_novelty").mean().alias("mean_novelty"),
            ((1 - pl.col("_task_novelty")) * pl.col("result_tokens").fill_null(0)).sum().alias("repeated_tokens"),
            pl.col("is_error").any().alias("_errors"), pl.col("tool_call_id").first().alias("first_call"),
            pl.col("result_tokens_method").first().alias("method"),
        )
        # Spread over subagents: one subagent repeating itself is the session rule's.
        .filter(_repeated_enough(params) & (pl.col("subagents") >= params.min_subagent_rereads))
        .sort("parent_session_id", "tool_key")
    )
    out = []
    for r in per.iter_rows(named=True):
        session = r["parent_session_id"]
        group, severity, cost = task_cost(context, session)
        out.append(
            Finding(
                detector=NAME, severity=severity, session_id=session,
                first_turn=None, last_turn=None, metric="repeated_results", value=r["mean_novelty"],
                threshold=_repeated_threshold(params) + f", across ≥ {params.min_subagent_rereads} subagents of one task",
                excess_tokens=int(r["repeated_tokens"]), excess_usd=None, tool_key=r["tool_key"],
                explanation=(
                    f"{r['subagents']} subagents of this task called {r['tool_key']!r}, and {r['calls']} of its answers after the first "
                    f"({r['distinct_args']} different arguments, {int(r['tokens']):,} tokens, {r['method']}) mostly repeat the one before "
                    f"(mean novelty {r['mean_novelty']:.2f}): the same text paid for in each subagent's context.{cost}"
                ),
                evidence={"first_call": r["first_call"], "calls": r["calls"], "mcp": True, "mean_novelty": r["mean_novelty"],
                          "distinct_args": r["distinct_args"], "subagents": r["subagents"], "scope": "task", "group_ratio": group},
            )
        )
    return out


def _growing_answers(context: Context, params: Params) -> pl.DataFrame:
    """The MCP calls with a result, each marked ``_grew_same`` (the same call as the server's previous one, its answer
    larger and repeating that one's) or ``_grew_new`` (the same tool asked something new, its answer larger and
    repeating part of that one's)."""
    # A poll: the server's previous call in the session was the same call (the frame is in session and call order;
    # the agent's own tools may come between — a sleep — but no other call to that server: a scroll or click
    # between two page snapshots is the agent changing what it reads, not the server resending it).
    calls = context.tools.filter(pl.col("is_mcp") & pl.col("result_tokens").is_not_null()).select(
        "session_id", "tool_key", "tool_call_id", "turn", "values_hash", "result_tokens", "result_tokens_method", "novelty",
        pl.coalesce(pl.col("mcp_server"), pl.lit("")).alias("_server"),
    )

    def before(column: str) -> pl.Expr:
        return pl.col(column).shift(1).over("session_id", "_server")

    calls = calls.with_columns(before("tool_key").alias("_prev_key"), before("values_hash").alias("_prev_values"),
                               before("result_tokens").alias("_prev_tokens"))
    grew = (pl.col("tool_key") == pl.col("_prev_key")) & (pl.col("result_tokens") > pl.col("_prev_tokens"))
    same = pl.col("values_hash") == pl.col("_prev_values")
    return calls.with_columns(
        (grew & same & (pl.col("novelty") <= params.max_accumulating_novelty)).fill_null(False).alias("_grew_same"),
        (grew & ~same & (pl.col("novelty") <= params.max_swelling_novelty)).fill_null(False).alias("_grew_new"),
    ).drop("_prev_key", "_prev_values")


def _accumulating_results(context: Context, params: Params, calls: pl.DataFrame, *, same_args: bool) -> list[Finding]:
    """An MCP tool polled with the same arguments whose answers, poll after poll, each repeat the one before and grow;
    or (``same_args`` False) one asked new things whose answers climb call after call (swelling results). ``calls``:
    ``_growing_answers``."""
    if same_args:
        grew, min_calls, min_growth, metric = "_grew_same", params.min_accumulating_calls, params.min_accumulating_growth, "accumulating_results"
    else:
        grew, min_calls, min_growth, metric = "_grew_new", params.min_swelling_calls, params.min_swelling_growth, "swelling_results"
    # Only sessions with enough growing answers can hold a streak long enough.
    enough = calls.group_by("session_id").agg(pl.col(grew).sum()).filter(pl.col(grew) >= min_calls)["session_id"]
    calls = calls.filter(pl.col("session_id").is_in(enough.implode())).rename({grew: "_grew"})
    calls = calls.with_columns((~pl.col("_grew")).cum_sum().over("session_id", "_server").alias("_streak"))
    streaks = calls.filter(pl.col("_grew")).group_by("session_id", "tool_key", "_streak").agg(
        pl.len().alias("calls"),
        pl.col("result_tokens").sum().alias("tokens"),
        pl.col("_prev_tokens").sum().alias("repeated_tokens"),
        pl.col("_prev_tokens").first().alias("first_tokens"),
        pl.col("result_tokens").last().alias("last_tokens"),
        pl.col("novelty").mean().alias("mean_novelty"),
        pl.col("turn").min().alias("first_turn"),
        pl.col("turn").max().alias("last_turn"),
        pl.col("tool_call_id").first().alias("first_call"),
        pl.col("result_tokens_method").first().alias("method"),
        fire_turn(min_calls),
    ).filter(
        (pl.col("calls") >= min_calls)
        & (pl.col("tokens") >= params.min_accumulating_result_tokens * pl.col("calls"))
        & (pl.col("last_tokens") >= min_growth * pl.col("first_tokens"))
    )
    # One finding per tool and session: its longest streak.
    per = streaks.sort("calls", "first_turn", descending=[True, False]).unique(["session_id", "tool_key"], keep="first").sort("session_id", "tool_key")
    if same_args:
        threshold = (f"≥ {min_calls} answers to the same arguments, each larger than the one before and repeating it "
                     f"(novelty ≤ {params.max_accumulating_novelty}), of ≥ {params.min_accumulating_result_tokens:,} tokens on average, "
                     f"growing ≥ {min_growth}×")
    else:
        threshold = (f"≥ {min_calls} answers in a row to new arguments, each larger than the one before and repeating part of it "
                     f"(novelty ≤ {params.max_swelling_novelty}), of ≥ {params.min_accumulating_result_tokens:,} tokens on average, "
                     f"growing ≥ {min_growth}×")
    return [
        _tool_finding(
            context, r, metric=metric, value=r["calls"], threshold=threshold,
            excess_tokens=int(r["repeated_tokens"]), explanation=_accumulating_text(r, same_args),
            evidence={"first_call": r["first_call"], "calls": r["calls"], "mcp": True, "mean_novelty": r["mean_novelty"],
                      "fire_turn": r["fire_turn"]},
        )
        for r in per.iter_rows(named=True)
    ]


def _accumulating_text(r: dict, same_args: bool) -> str:
    """The explanation of an accumulating (``same_args``) or swelling streak ``r``."""
    sizes = f"from {int(r['first_tokens']):,} to {int(r['last_tokens']):,} tokens ({r['method']})"
    if same_args:
        return (f"{r['tool_key']!r} was asked the same thing {r['calls'] + 1} times and each answer repeated the one before and "
                f"added to it, {sizes}: the server sent its whole history on every call, {int(r['repeated_tokens']):,} tokens of it "
                "already sent, each re-read on every later request. A status and one final fetch would have cost a fraction.")
    return (f"{r['tool_key']!r} was asked {r['calls'] + 1} different things in a row and each answer was larger than the one before, "
            f"{sizes}, each repeating part of the last (mean novelty {r['mean_novelty'] or 0:.2f}): answers to different questions "
            "vary in size, these climbed, as when a server appends everything it said before to each answer. Every answer is "
            "re-read on every later request.")


def _rereads(context: Context, params: Params) -> list[Finding]:
    """The agent's own tools returning a large result they returned before, each time right after an MCP tool's
    result: findings on that MCP tool."""
    # Only large results of the agent's own tools can be re-reads (and their first reads share their size and tool).
    # The frame is in session and call order: the previous row is the previous call unless a session starts there.
    same_session = pl.col("session_id") == pl.col("session_id").shift(1)
    tools = context.tools.with_columns(
        (same_session & pl.col("is_mcp").shift(1)).fill_null(False).alias("_after_mcp"),
        pl.col("tool_key").shift(1).alias("_driver"),
    ).filter(~pl.col("is_mcp").fill_null(False) & (pl.col("result_tokens") >= params.min_reread_result_tokens))
    # The same result again: the same call of the same tool, answered with as many tokens and the same words
    # (numbers aside: a shell's output carries its run time) — or, for a result without words, the very same text.
    # (A file edited in between has more or fewer tokens; its words' MinHash alone would not tell a few new lines.)
    again = tools.filter(
        pl.col("_after_mcp")
        & ~pl.struct("session_id", "tool_key", "args_hash", "result_tokens", pl.coalesce(pl.col("sig0"), pl.col("result_hash")),
                     *(f"sig{i}" for i in range(1, SIG_BINS))).is_first_distinct()
    )
    per = _per_session_tool(
        again.with_columns(pl.col("tool_key").alias("_read_by"), pl.col("_driver").alias("tool_key")), params,
        pl.col("_read_by").unique().sort().alias("read_by"),
    ).filter(pl.col("calls") >= params.min_reread_calls).sort("session_id", "tool_key")
    return [
        _tool_finding(
            context, r,
            metric="rereads_after_tool", value=r["calls"],
            threshold=(f"≥ {params.min_reread_calls} results of ≥ {params.min_reread_result_tokens:,} tokens that the agent's own tools "
                       "had returned before, each right after a result of this MCP tool"),
            excess_tokens=int(r["tokens"]),
            explanation=(
                f"Right after results of {r['tool_key']!r}, the agent's own tools ({', '.join(map(repr, r['read_by']))}) read the same "
                f"content again {r['calls']} times: {int(r['tokens']):,} tokens ({r['method']}) it had already read in this session, "
                "pulled into the context again and re-read on every later request. The server may be making the model re-read "
                "large local files."
            ),
            evidence={"first_call": r["first_call"], "calls": r["calls"], "mcp": True, "read_by": r["read_by"]},
        )
        for r in per.iter_rows(named=True)
    ]


def _subagent_rereads(context: Context, params: Params) -> list[Finding]:
    """Subagents of one task reading the same large local content one after another: a finding on the session
    that spawned them, naming the MCP tool most of them called when there is one."""
    subagents = _subagents(context)
    if subagents.is_empty() or context.tools.is_empty():
        return []
    calls = context.tools.join(subagents, on="session_id")
    # The same content: the same call of the same tool answered with the same text.
    reads = calls.filter(~pl.col("is_mcp").fill_null(False) & (pl.col("result_tokens") >= params.min_reread_result_tokens)
                         & pl.col("result_hash").is_not_null())
    shared = (
        reads.group_by("parent_session_id", "tool_key", "args_hash", "result_hash")
        .agg(pl.col("session_id").unique().alias("readers"), pl.len().alias("reads"), pl.col("result_tokens").max().alias("tokens"),
             pl.col("result_tokens_method").first().alias("method"))
        .filter(pl.col("readers").list.len() >= params.min_subagent_rereads)
    )
    if shared.is_empty():
        return []
    per_task = shared.group_by("parent_session_id").agg(
        pl.col("readers").list.explode(keep_nulls=False, empty_as_null=False).unique().alias("readers"),
        ((pl.col("reads") - 1) * pl.col("tokens")).sum().alias("reread_tokens"),
        pl.len().alias("contents"),
        pl.col("tool_key").unique().sort().alias("read_by"),
        pl.col("method").first(),
    ).filter(pl.col("reread_tokens") >= params.min_subagent_reread_tokens)
    # The server behind it: an MCP tool that most of those subagents called (a plan stage handed to each).
    drivers = (
        calls.filter(pl.col("is_mcp").fill_null(False))
        .join(per_task.select("parent_session_id", pl.col("readers").alias("_readers")), on="parent_session_id")
        .filter(pl.col("session_id").is_in(pl.col("_readers")))
        .group_by("parent_session_id", "tool_key").agg(pl.col("session_id").n_unique().alias("driven"))
        .sort("driven", "tool_key", descending=[True, False])
        .group_by("parent_session_id", maintain_order=True).first()
    )
    per_task = per_task.join(drivers, on="parent_session_id", how="left").sort("parent_session_id")
    out = []
    for r in per_task.iter_rows(named=True):
        session, n = r["parent_session_id"], len(r["readers"])
        driven = (r["driven"] or 0) * 2 > n  # called in most of the subagents that re-read
        group, severity, cost = task_cost(context, session)
        by = (f"Each of them also called {r['tool_key']!r} ({r['driven']} of {n}): the server may be handing the work to fresh "
              "agents one stage at a time, so each rebuilds the context the last one had.") if driven else (
              "No MCP tool was called in most of them: a workflow of the agent's own, left to a person.")
        out.append(
            Finding(
                detector=NAME, severity=severity, session_id=session,
                first_turn=None, last_turn=None, metric="subagent_rereads", value=float(n),
                threshold=(f"the same result of ≥ {params.min_reread_result_tokens:,} tokens read by ≥ {params.min_subagent_rereads} "
                           f"subagents of one task, ≥ {params.min_subagent_reread_tokens:,} tokens read again in all"),
                excess_tokens=int(r["reread_tokens"]), excess_usd=None,
                tool_key=r["tool_key"] if driven else r["read_by"][0],
                explanation=(
                    f"{n} subagents of this task read the same local content again ({r['contents']} results of "
                    f"{', '.join(map(repr, r['read_by']))}): {int(r['reread_tokens']):,} tokens ({r['method']}) read before, each time "
                    f"into a fresh context that paid to write it to the cache. {by}{cost}"
                ),
                evidence={"subagents": n, "contents": r["contents"], "read_by": r["read_by"], "mcp": driven, "scope": "task",
                          "group_ratio": group},
            )
        )
    return out


def _compression_explanation(r: dict, opaque: bool) -> str:
    returned = f"a result of {int(r['tokens']):,} tokens" if r["calls"] == 1 else f"{r['calls']} results of {int(r['tokens']):,} tokens in all"
    head = f"{r['tool_key']!r} returned {returned} ({r['method']}) that compress{'es' if r['calls'] == 1 else ''} "
    if opaque:
        return head + (f"only {r['ratio']:.2f}× — random, encrypted or compressed bytes spelled as text (base64, hex), where anything "
                       "a model can read compresses 2× or more. A sponge: tokens the model cannot use, paid for again on every later request.")
    return head + (f"up to {r['ratio']:.0f}× — repeated lines, boilerplate or near-identical records, where code, prose and real records "
                   "compress 2–9×. A sponge: text the model must read, and re-read on every later request, that carries little.")
