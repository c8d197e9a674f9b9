"""D6 — argument inflation: the model writes long arguments the task does not need.

Within a run of one tool that is not a content writer (write, edit, patch,
exec …, whose arguments *are* the work; a tool named for checking what it is
sent — review_patch, validate_query — writes nothing), counting only calls with long
arguments (≥ ``min_call_args_tokens`` each) that the tool consumed: answered with little (at most
``max_transformed_share`` of them), or with as much that mostly repeats what it said before (novelty
below ``min_transformed_novelty``) for an input of its own. A new answer as large is the input
transformed — a text translated into language after language — the work's input. They total ≥ ``min_args_tokens``
over ≥ ``min_calls`` calls; or such arguments make ≥ ``min_args_share`` of the
output tokens of ≥ ``min_calls`` requests; or the arguments grow
``min_growth``× from the first call to the last over ≥ 4 calls (cumulative
restating). Short arguments never count, however many: a long pagination or
batch run writes little per call, and a request that only calls a tool always
has arguments as most of its output.

The same total and share are measured across an MCP server's calls in a session
(consecutive among its MCP calls, the agent's own calls between them aside) where
no run of one tool shows them: a server whose tools take the whole document in
turn (validate, autofix, validate …), or whose one tool wants it after every step
of the agent's own work. Only its tools that are not writers count (evidence
``across_tools``).

So are an MCP tool's calls over the whole session (evidence ``series``), where neither
shows them, for growth and repair loops only: a tool called between another server's calls
(sign a digest with one server, submit the signatures, re-sent and grown, to another; screen
a window, fetch the elements it named, screen the grown window) makes no run of one tool
nor of one server, yet its arguments grow, or are sent again, call after call the same way.
(A few long calls of one tool over a session — a report filed now and then — are ordinary.)

A run of an MCP tool — a content writer too — in which the model sent its long
arguments again ≥ ``min_resent_calls`` times (``resent``: the previous call's
values, whole or grown by a field) for a short answer (a rejection, a receipt:
at most ``max_resent_result_share`` of what it sent; an update answered with the
whole record it changed is editing) is a repair loop (evidence ``repair``): the
server rejected each payload ("checksum failed", "field ``schema_version``
mismatch") and had the whole of it written out and paid for again, however it
worded the rejection. It fires on that alone.

Arguments are output tokens — the most expensive kind — and are re-sent as input
on every later request. Catches ``calibration_sequence``-style schemas.
"""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

from tokaudit.analyze.detectors import Finding
from tokaudit.analyze.detectors._common import EDITING_VERBS, Context, chain_finding, named_for, run_groups

NAME = "argument_inflation"
TITLE = "Inflated tool arguments (D6)"

# Tools whose arguments are their work: an editor's verbs, and those of tools that upload, import or run what they are sent.
CONTENT_TOOLS = (rf"(?i)({EDITING_VERBS}|upload|import|ingest|load|append|bulk|exec|bash|shell|command|run"
                 r"|python|notebook|sql|query|task|agent)")


def _consumed(params: Params) -> pl.Expr:
    """Whether a call's long arguments count: they came back as little (a verdict, a receipt, a list of violations:
    at most ``max_transformed_share`` of them), or as an answer as large that was mostly what the tool had said
    before (novelty below ``min_transformed_novelty``: an attestation's boilerplate) for an input of its own (not
    ``resent``). A new answer as large is the input transformed — a text translated, a document summarised at
    length — and the same input sent again for another (the next language) is the work's, not the server's demand."""
    small = pl.col("result_tokens").fill_null(0) <= params.max_transformed_share * pl.col("args_tokens").fill_null(0)
    return small | (~pl.col("resent").fill_null(False) & (pl.col("novelty").fill_null(1.0) < params.min_transformed_novelty))


def _content_tool() -> pl.Expr:
    """Whether a call's tool writes content (``CONTENT_TOOLS``, not ``CHECKING_TOOLS``): its arguments are the work.
    A remote host's tool (``HOST/TOOL PATH``, ``analyze.frames``) is named by its path: the shell or HTTP tool that
    sent the request says nothing of what the endpoint does with it."""
    name = pl.when(pl.col("remote_host").is_not_null()).then(pl.col("tool_key").str.replace(r"^[^ ]* ", "")).otherwise(pl.col("tool_key"))
    return named_for(CONTENT_TOOLS, name)


@dataclass(frozen=True)
class Params:
    min_args_tokens: int = 1000
    min_calls: int = 3
    min_growth: float = 3.0
    min_args_share: float = 0.8
    min_call_args_tokens: int = 100
    # A repair loop: this many calls that re-sent the previous call's long arguments (≥ min_resent_call_args_tokens
    # each), making at least min_resent_share of the run's calls after its first. Retries after a transient
    # error are two or three.
    min_resent_calls: int = 4
    min_resent_call_args_tokens: int = 300
    min_resent_share: float = 0.75
    max_resent_result_share: float = 0.5  # each re-sent call's result at most this share of its arguments
    # Long arguments count when their answer was at most this share of them, or as large but mostly what the tool said
    # before: one text translated into language after language answers with about as much as it was sent, and new.
    max_transformed_share: float = 0.5
    min_transformed_novelty: float = 0.5


def detect(context: Context, params: Params) -> list[Finding]:
    requests = context.frames.calls.select(pl.col("call_hash").alias("request_hash"), "output_tokens")
    # Only runs long enough can fire: drop the rest before the join with the requests (on the request's
    # integer key, ``request_hash``, not on session and turn).
    found = _inflated(_with_share(context.tools.filter(pl.col("run_len") >= params.min_calls), requests), "run_id", params)
    # The MCP calls whose long arguments a tool that writes nothing consumed: what the server and series paths read.
    long_calls = context.tools.select("session_id", "mcp_server", "tool_key", "remote_host", "args_tokens", "result_tokens", "resent", "novelty",
                                      "is_mcp", "run_id").filter(_server_call() & _long_consumed_args(params))
    servers = _server_runs(context.tools, long_calls, params)
    if not servers.is_empty():
        # Only what no run of one tool already showed: a server's tools taking turns, or its calls spread
        # between the agent's own work.
        spread = (pl.col("tools") >= 2) | (pl.col("tool_runs") >= 2)
        found = _also(found, _inflated(_with_share(servers, requests), "server_run_id", params).filter(spread).drop("tools", "tool_runs"))
    series = _tool_series(context.tools, long_calls, params)
    if not series.is_empty():
        found = _also(found, _inflated(_with_share(series, requests), "tool_series_id", params))
    return [
        chain_finding(
            context, run, detector=NAME, metric="run_args_tokens", value=run["long_args_tokens"],
            threshold=f"≥ {params.min_args_tokens:,} argument tokens over ≥ {params.min_calls} calls of ≥ {params.min_call_args_tokens} each, "
            f"growth ≥ {params.min_growth}×, or such arguments ≥ {params.min_args_share:.0%} of output on ≥ {params.min_calls} requests; "
            f"or a repair loop: ≥ {params.min_resent_calls} calls re-sending the previous call's arguments of ≥ "
            f"{params.min_resent_call_args_tokens} tokens, each answered in ≤ {params.max_resent_result_share:.0%} of that",
            what=_what(run),
            extra={"growth": run["growth"], "high_share_calls": run["high_share_calls"], "resent_calls": run["resent_calls"],
                   "repair": run["repair"], "across_tools": run.get("server_run_id") is not None,
                   "series": run.get("tool_series_id") is not None},
        )
        for run in found.sort("session_id", "first_turn").iter_rows(named=True)
    ]


def _with_share(tools: pl.DataFrame, requests: pl.DataFrame) -> pl.DataFrame:
    """``tools`` with ``_share``: each call's arguments as a share of its request's output tokens."""
    return tools.join(requests, on="request_hash", how="left").with_columns(
        # No request behind the call (an aggregate-only log): the share of output is unknown, not 100 %.
        pl.when(pl.col("output_tokens").is_not_null())
        .then(pl.col("args_tokens") / pl.max_horizontal(pl.col("output_tokens"), pl.lit(1)))
        .alias("_share")
    )


def _also(found: pl.DataFrame, inflated: pl.DataFrame) -> pl.DataFrame:
    """``found`` and the runs of ``inflated`` whose server no run in ``found`` already shows (a server is reported once)."""
    if found.is_empty():
        return inflated
    server = pl.col("tool_key").str.replace(r"/.*$", "").alias("_server")
    shown = found.select("session_id", server).unique()
    inflated = inflated.with_columns(server).join(shown, on=["session_id", "_server"], how="anti").drop("_server")
    return pl.concat([found, inflated], how="diagonal_relaxed")


def _server_call() -> pl.Expr:
    """Whether a call went to an MCP server (or a remote host, the frame's server of its calls)."""
    return pl.col("is_mcp") & pl.col("mcp_server").is_not_null()


def _long_consumed_args(params: Params) -> pl.Expr:
    """Whether a call's arguments are long (``min_call_args_tokens``), were consumed (``_consumed``) and went to a tool
    that writes nothing (``_content_tool``)."""
    return (pl.col("args_tokens").fill_null(0) >= params.min_call_args_tokens) & ~_content_tool() & _consumed(params)


def _server_runs(tools: pl.DataFrame, long_calls: pl.DataFrame, params: Params) -> pl.DataFrame:
    """A session's MCP calls in runs of one server (``server_run_id``, ``server_run_len``): consecutive among its
    MCP calls, the agent's own calls between them aside, with how many tools and runs of one tool each spans.
    A server whose schema has the model write a long argument to one tool, then another, in turn (validate,
    fix, validate …), or after every step of the agent's own work, makes no run of one tool; it makes one of these.
    ``long_calls``: the MCP calls with long consumed arguments (a few columns)."""
    # Only sessions where a server was sent long arguments by enough of its non-writing calls can fire: found on
    # a few columns first, so that the whole frame is filtered once, to those sessions.
    candidates = long_calls.group_by("session_id", "mcp_server").len().filter(pl.col("len") >= params.min_calls)
    mcp = tools.filter(_server_call() & pl.col("session_id").is_in(candidates["session_id"].unique().implode())).select(
        pl.exclude("run_id", "run_len"), pl.col("run_id").alias("_tool_run")
    )
    if mcp.is_empty():
        return mcp
    new_run = ~((pl.col("session_id") == pl.col("session_id").shift(1)) & (pl.col("mcp_server") == pl.col("mcp_server").shift(1))).fill_null(False)
    mcp = mcp.with_columns(new_run.cum_sum().alias("server_run_id"))
    spans = mcp.group_by("server_run_id").agg(
        pl.len().alias("server_run_len"), pl.col("tool_key").n_unique().alias("tools"), pl.col("_tool_run").n_unique().alias("tool_runs")
    ).filter(pl.col("server_run_len") >= params.min_calls)
    return mcp.join(spans, on="server_run_id", how="inner")


def _tool_series(tools: pl.DataFrame, long_calls: pl.DataFrame, params: Params) -> pl.DataFrame:
    """A session's calls of each MCP tool, whatever came between them (``tool_series_id``, ``tool_series_len``), for
    the tools sent long arguments that they consumed (``long_calls``) by at least ``min_calls`` calls that are not all
    one run (a run of one tool is read as such)."""
    candidates = (
        long_calls.group_by("session_id", "tool_key").agg(pl.len(), pl.col("run_id").n_unique().alias("runs"))
        .filter((pl.col("len") >= params.min_calls) & (pl.col("runs") >= 2))
    )
    if candidates.is_empty():
        return tools.clear()
    series = tools.join(candidates.select("session_id", "tool_key"), on=["session_id", "tool_key"], how="semi", maintain_order="left")
    ids = series.select("session_id", "tool_key").unique(maintain_order=True).with_row_index("tool_series_id")
    series = series.join(ids, on=["session_id", "tool_key"], how="left", maintain_order="left")
    return series.with_columns(pl.len().over("tool_series_id").alias("tool_series_len"))


def _inflated(tools: pl.DataFrame, by: str, params: Params) -> pl.DataFrame:
    """The runs (grouped ``by`` a run id column) whose arguments are inflated or re-sent (module docstring). Across
    a server's tools (``server_run_id``) only the total and the share count: sizes of different tools' arguments
    do not make a growth, nor are they re-sent from one tool to another."""
    across = by == "server_run_id"
    runs = run_groups(tools, by, params.min_calls)
    if runs.is_empty():
        return runs
    long_args = (pl.col("args_tokens").fill_null(0) >= params.min_call_args_tokens) & _consumed(params)
    content = _content_tool()
    spans = [pl.col("tools").first(), pl.col("tool_runs").first()] if "tools" in tools.columns else []
    extra = tools.filter(pl.col(by).is_not_null()).group_by(by).agg(
        pl.col("args_tokens").first().alias("first_args"),
        pl.col("args_tokens").last().alias("last_args"),
        # A writer's arguments are its work: across a server's tools only the others' count.
        pl.col("args_tokens").filter(long_args & ~content).sum().alias("long_args_tokens"),
        (long_args & ~content).sum().alias("long_args_calls"),
        ((pl.col("_share") >= params.min_args_share) & long_args & ~content).sum().alias("high_share_calls"),
        (pl.col("resent") & (pl.col("args_tokens").fill_null(0) >= params.min_resent_call_args_tokens)
         # What came back was a rejection or a receipt, not the work's answer: an update that returns the whole
         # record it changed, call after call, is editing.
         & (pl.col("result_tokens").fill_null(0) <= params.max_resent_result_share * pl.col("args_tokens").fill_null(0))
         ).sum().alias("resent_calls"),
        content.first().alias("_content_first"),
        *spans,
    )
    runs = runs.join(extra, on=by).with_columns(
        (pl.lit(False) if across else pl.col("_content_first")).alias("content_tool"),
        (pl.col("last_args") / pl.max_horizontal(pl.col("first_args"), pl.lit(1))).alias("growth"),
    )
    by_total = (pl.col("long_args_tokens") >= params.min_args_tokens) & (pl.col("long_args_calls") >= params.min_calls) & ~pl.col("content_tool")
    by_growth = (
        (pl.col("growth") >= params.min_growth) & (pl.col("calls") >= 4)
        & (pl.col("last_args") >= params.min_call_args_tokens) & ~pl.col("content_tool")
    )
    by_share = (pl.col("high_share_calls") >= params.min_calls) & ~pl.col("content_tool")
    # Whatever the tool writes: its own content sent again and again is no work of the task's.
    repair = (pl.col("resent_calls") >= params.min_resent_calls) & (pl.col("resent_calls") >= params.min_resent_share * (pl.col("calls") - 1))
    if across:
        by_growth, repair = pl.lit(False), pl.lit(False)
    if by == "tool_series_id":
        # Over a whole session, a few long calls of one tool (a report filed now and then) are ordinary: only arguments
        # that grew call after call, or were sent again, count there.
        by_total, by_share = pl.lit(False), pl.lit(False)
    return runs.with_columns(repair.alias("repair")).filter(by_total | by_growth | by_share | pl.col("repair"))


def _what(run: dict) -> str:
    """What a run's finding says happened: a repair loop, or long arguments the tool does not need."""
    sizes = f"first call {int(run['first_args']):,}, last {int(run['last_args']):,} tokens"
    if run.get("server_run_id") is not None:
        server = run["tool_key"].split("/")[0]
        return (f"The model wrote {int(run['long_args_tokens']):,} tokens of arguments to the tools of server '{server}', "
                f"in turn or between its own work, none of them a writer; arguments are billed as output and re-read on "
                f"every later request.")
    if not run["repair"]:
        return (f"The model wrote {int(run['args_tokens']):,} tokens of arguments for a tool that does not need long input "
                f"({sizes}); arguments are billed as output and re-read on every later request.")
    errors = f", {int(run['errors'])} of its results marked as errors" if run["errors"] else ""
    return (f"A repair loop: the model sent the same long arguments again {int(run['resent_calls'])} times, whole or grown "
            f"({sizes}; {int(run['args_tokens']):,} in all){errors}; each copy is billed as output and re-read on every later request.")
