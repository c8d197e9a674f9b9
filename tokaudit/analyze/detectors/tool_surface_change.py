"""D12 — tool-surface integrity: a server's tool definitions changing within a session, or bloated.

From MCP ``tools/list`` results (``tool_defs``): a tool seen with more than one
definition hash in one session (a rug pull, or a schema grown to demand new
arguments), a tool first listed after the server's first listing of the session
(a tool added mid-session: the server announced a new surface, often with the
instructions that steer the model to the new tool), and definitions larger than ``max_definition_bytes`` (every
definition is sent to the model on every request — a "menu tax" — and long
descriptions are where hidden instructions go). False positives: server
upgrades, dynamic registries.

Most users have only the agent's log, which holds no ``tools/list``. The change
still shows there, and is reported as an *inferred* change (an estimate, said
so): tool definitions come first in the prompt, so a new surface invalidates the
whole prompt cache. A request that reads less than ``max_cache_read_share`` of
the previous request's prompt from the cache although that request was at most
``max_gap_s`` earlier (the cache was warm), with no compaction and no model
switch between them (nor a prompt that shrank to less than half: a compaction the
log did not record), followed — in that request or within ``max_requests_to_new_tool``
after it, before the cache is lost again — by the first call to a new tool of a
server the session already used (tools count by the names the server gave them: a
tool re-published as ``lookup_v2``, then ``v3``, is new each time): the server most
likely re-announced its tools with a new one. Providers also lose a warm cache now and
then on their own (real Codex logs: about one request in sixty), so the losses
must be explained: at least ``min_explained_share`` of the session's losses each
followed by a new tool (a server that changed its surface twice loses the cache
twice; one re-publishing its tools while the agent works on its own files may
change it again before the model calls it), among at least ``min_warm_requests``
requests whose warm cache held — a session whose cache comes and goes with no new
tool after it says nothing.

A server can also re-announce the same tools with longer descriptions (a "menu tax"
every later request pays): no new tool follows, but the lost request's prompt grew
by at least ``min_swell_tokens`` more than the request before it wrote and its tools
returned (``min_swell_share_of_results`` of those results, whose sizes are
estimates, at least), and the next request kept the larger prompt. Only a request
that continued after tool results counts: a user's new prompt adds text the log does
not measure. Such a *swell* explains its loss as a new tool does, and is reported on
its own (evidence ``swell_tokens``; no tool named) in sessions that called an MCP tool.
Sessions whose transcript of that server was read are left to the transcript.
False positives: a cache the provider lost once, just before the model first
tried another tool of a server; dynamic toolsets. The combined verdict needs
more than this finding: a chain through the server, arguments written to it, or
a costly session.
"""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

from tokaudit.analyze.detectors import Finding
from tokaudit.analyze.detectors._common import Context, previous, same_context
from tokaudit.analyze.usage import UNNAMED_MCP_SERVER

NAME = "tool_surface_change"
TITLE = "Tool definitions changed mid-session or bloated (D12)"


@dataclass(frozen=True)
class Params:
    max_definition_bytes: int = 8000
    # Inferring a change from the agent's log alone:
    max_gap_s: float = 300.0  # the previous request at most this long before (the shortest cache TTL: the cache was warm)
    max_cache_read_share: float = 0.5  # of the previous request's prompt read back from the cache
    min_warm_requests: int = 3  # other requests of the session, each a warm cache that held
    max_requests_to_new_tool: int = 3  # the new tool's first call at most this many requests after the loss
    min_explained_share: float = 0.6  # of the session's cache losses, each followed by a new tool (or a swell)
    # ... or by a prompt that grew more than what the model and its tools added since the request before: a swell.
    min_swell_tokens: int = 5000
    min_swell_share_of_results: float = 0.5  # the growth beyond them is at least this share of the results added (estimates)


def _server_name(server: str) -> str:
    return "its MCP server (the log names none)" if server == UNNAMED_MCP_SERVER else repr(server)


def _span(first, last) -> str:
    return f"between {first} and {last}; " if first is not None and last is not None else ""


def detect(context: Context, params: Params) -> list[Finding]:
    out = _inferred(context, params)
    defs = context.frames.tool_defs
    if defs.is_empty():
        return out
    changed = defs.group_by("session_id", "mcp_server", "tool_name").agg(
        pl.col("schema_sha256").n_unique().alias("versions"),
        pl.col("first_seen_utc").min().alias("first"),
        pl.col("last_seen_utc").max().alias("last"),
        pl.col("definition_bytes").min().alias("min_bytes"),
        pl.col("definition_bytes").max().alias("max_bytes"),
    ).filter(pl.col("versions") > 1)
    for d in changed.iter_rows(named=True):
        out.append(
            Finding(
                detector=NAME, severity="high", session_id=d["session_id"], first_turn=None, last_turn=None,
                metric="definition_versions", value=d["versions"], threshold="> 1 definition of a tool in one session",
                excess_tokens=None, excess_usd=None, tool_key=f"{d['mcp_server']}/{d['tool_name']}",
                explanation=(
                    f"Server {d['mcp_server']!r} changed the definition of tool {d['tool_name']!r} {d['versions'] - 1} time(s) "
                    f"within one session ({_span(d['first'], d['last'])}{d['min_bytes']}–{d['max_bytes']} bytes): a tool "
                    "surface that changes after it was approved is how rug pulls and attack-enabling schemas arrive, and it "
                    "invalidates the prompt cache."
                ),
            )
        )
    out += _added(defs)
    big = defs.filter(pl.col("definition_bytes") > params.max_definition_bytes).unique(["session_id", "mcp_server", "tool_name"])
    for d in big.iter_rows(named=True):
        out.append(
            Finding(
                detector=NAME, severity="low", session_id=d["session_id"], first_turn=None, last_turn=None,
                metric="definition_bytes", value=d["definition_bytes"], threshold=f"> {params.max_definition_bytes:,} bytes",
                excess_tokens=None, excess_usd=None, tool_key=f"{d['mcp_server']}/{d['tool_name']}",
                explanation=(
                    f"The definition of {d['mcp_server']}/{d['tool_name']} is {d['definition_bytes']:,} bytes; it is sent with every "
                    "request, and long descriptions are where hidden instructions hide."
                ),
            )
        )
    return out


def _added(defs: pl.DataFrame) -> list[Finding]:
    """Tools a server listed only after its first ``tools/list`` of the session: its surface grew mid-session."""
    tools = defs.group_by("session_id", "mcp_server", "tool_name").agg(
        pl.col("first_seen_utc").min().alias("first"), pl.col("definition_bytes").max().alias("bytes")
    ).with_columns(pl.col("first").min().over("session_id", "mcp_server").alias("server_first"))
    added = tools.filter(pl.col("first") > pl.col("server_first")).sort("session_id", "first", "tool_name")
    return [
        Finding(
            detector=NAME, severity="medium", session_id=d["session_id"], first_turn=None, last_turn=None,
            metric="tool_added", value=float(d["bytes"] or 0), threshold="a tool first listed after the server's first tools/list of the session",
            excess_tokens=None, excess_usd=None, tool_key=f"{d['mcp_server']}/{d['tool_name']}",
            explanation=(
                f"Server {d['mcp_server']!r} first listed tool {d['tool_name']!r} ({d['bytes'] or 0:,} bytes of definition) at "
                f"{d['first']}, after it had listed its tools at {d['server_first']}: its tool surface grew mid-session. A tool "
                "added after the surface was approved is how rug pulls arrive (its description can steer the model to it), "
                "and the new definitions invalidate the prompt cache. Dynamic toolsets (tools unlocked by a login) look the same."
            ),
        )
        for d in added.iter_rows(named=True)
    ]


def _inferred(context: Context, params: Params) -> list[Finding]:
    """Surface changes read from the agent's log: a cache lost while warm, then a new tool of a known server
    (or a prompt that swelled: ``_cache_breaks``)."""
    # An MCP call the log names no server for (OpenHands' bare tool names, OTel without a server name)
    # counts under one unnamed server: "a server already in use" is then "MCP already in use".
    # (A remote host the agent fetched from with its own tools lists no tools: it has no surface to change.)
    tools = context.tools.filter(pl.col("is_mcp") & pl.col("remote_host").is_null() & (pl.col("turn") >= 0)).with_columns(
        pl.col("mcp_server").fill_null(UNNAMED_MCP_SERVER))
    if tools.is_empty():
        return []
    # A new tool of a server already in use: its first call came after the server's first call. Tools count by
    # the names the server gave them (``tool_key`` masks numbers; ``mcp_tool_name`` is the key unmasked): a tool
    # re-published as lookup_v2, then v3, is new each time.
    tools = tools.with_columns(pl.coalesce("mcp_tool_name", "tool_key").alias("_name"))
    firsts = tools.group_by("session_id", "mcp_server", "_name").agg(pl.col("turn").min().alias("tool_first"), pl.col("tool_key").first())
    firsts = firsts.with_columns(pl.col("tool_first").min().over("session_id", "mcp_server").alias("server_first"))
    new_tools = firsts.filter(pl.col("tool_first") > pl.col("server_first"))
    # A transcript of the server says what its surface did: no guessing there.
    defs = context.frames.tool_defs
    swell_sessions = tools.select("session_id").unique()
    if not defs.is_empty():
        owner = context.frames.links.select("session_id", "agent_session_id")
        seen = defs.select("session_id", "mcp_server").unique().join(owner, on="session_id", how="left").select(
            pl.coalesce("agent_session_id", "session_id").alias("session_id"), "mcp_server"
        ).unique()
        new_tools = new_tools.join(seen, on=["session_id", "mcp_server"], how="anti")
        # A swell is the session's, not one server's: left to the transcripts wherever one was read.
        swell_sessions = swell_sessions.join(seen.select("session_id"), on="session_id", how="anti")
    breaks = _cache_breaks(context, pl.concat([swell_sessions, new_tools.select("session_id")]).unique(), params)
    if breaks.is_empty():
        return []
    # A new tool explains the loss before it, not an earlier one the cache was lost again after.
    with_tool = breaks.join(new_tools, on="session_id").filter(
        (pl.col("tool_first") - pl.col("turn")).is_between(0, params.max_requests_to_new_tool)
        & (pl.col("_next_loss").is_null() | (pl.col("tool_first") < pl.col("_next_loss")))
    )
    # A swell a new tool already explains is reported once, as the new tool.
    swelled = breaks.filter(pl.col("_swelled")).join(swell_sessions, on="session_id", how="semi").join(
        with_tool.select("session_id", "turn").unique(), on=["session_id", "turn"], how="anti"
    )
    # Most losses of the session must be explained, by a new tool after it or a swell (a server that changed its
    # surface twice loses the cache twice); a loss with neither is the provider's own, and a session with
    # mostly those says nothing.
    explained = pl.concat([with_tool.select("session_id", "turn"), swelled.select("session_id", "turn")]).group_by("session_id").agg(
        pl.col("turn").n_unique().alias("_explained")
    )
    losses = breaks.group_by("session_id").agg(pl.col("_losses").first())
    enough = explained.join(losses, on="session_id").filter(pl.col("_explained") >= params.min_explained_share * pl.col("_losses"))
    found = with_tool.join(enough.select("session_id", "_explained"), on="session_id")
    # One finding per new tool: the cache break closest before its first call.
    found = found.sort("turn", descending=True).unique(["session_id", "_name"], keep="first").sort("session_id", "turn")
    swells = swelled.join(enough.select("session_id", "_explained"), on="session_id").sort("session_id", "turn")
    out = [_swell_finding(d, params) for d in swells.iter_rows(named=True)]
    for d in found.iter_rows(named=True):
        lost = d["prev_input"] - d["cache_read_tokens"]
        out.append(
            Finding(
                detector=NAME, severity="medium", session_id=d["session_id"], first_turn=d["turn"], last_turn=d["tool_first"],
                metric="inferred_surface_change", value=float(lost),
                threshold=(f"cache read < {params.max_cache_read_share:.0%} of the previous prompt ≤ {params.max_gap_s:.0f} s later, "
                           f"no compaction or model switch, ≥ {params.min_explained_share:.0%} of such losses of the session each followed within "
                           f"{params.max_requests_to_new_tool} requests by a first call to a new tool of a server in use, among "
                           f"≥ {params.min_warm_requests} warm requests that held"),
                excess_tokens=lost, excess_usd=None, tool_key=d["tool_key"],
                explanation=(
                    f"Inferred from the agent's log (no tools/list of {_server_name(d['mcp_server'])} was read): request {d['turn']} read "
                    f"{d['cache_read_tokens']:,} of the {d['prev_input']:,} prompt tokens the request {d['gap_s']:.0f} s before it had "
                    f"sent, with no compaction or model switch between them, and then the model called {d['_name']!r} for the first "
                    f"time though it had used {'MCP' if d['mcp_server'] == UNNAMED_MCP_SERVER else 'that server'} before. "
                    + ("The cache held on the session's other requests. " if d["_losses"] == 1 else
                       f"The session lost its warm cache {d['_losses']} times, {d['_explained']} of them each followed by a new tool. ")
                    + "Tool definitions come first in the prompt, so the server most likely "
                    "changed its tool surface mid-session (a rug pull adds a tool this way). Record the server's traffic "
                    "(tokaudit record) to see the definitions."
                ),
                evidence={"gap_s": d["gap_s"], "previous_prompt_tokens": d["prev_input"], "cache_read_tokens": d["cache_read_tokens"],
                          "first_call_turn": d["tool_first"], "inferred": True, "cache_losses": d["_losses"], "explained_losses": d["_explained"]},
            )
        )  # fmt: skip
    return out


def _cache_breaks(context: Context, sessions: pl.DataFrame, params: Params) -> pl.DataFrame:
    """Per session of ``sessions``: the requests a warm cache should have served but did not (a loss), with the
    session's count of losses, the next loss, and whether the prompt swelled there (``_swelled``, ``_swell``)."""
    calls = context.frames.calls.filter(~pl.col("is_aggregate"))
    # Most sessions never lose the cache: only those with a request reading back less than the share go further.
    lossy = calls.filter(pl.col("cache_read_tokens") < params.max_cache_read_share * previous("input_total_tokens"))
    keep = lossy.select("session_id").unique().join(sessions, on="session_id", how="semi")["session_id"]
    # A filter keeps the requests in session and turn order, which ``previous`` and ``same_context`` read.
    calls = calls.filter(pl.col("session_id").is_in(keep.implode())).select(
        "session_id", "turn", "ts_utc", "segment", "model", "input_total_tokens", "output_tokens", "cache_read_tokens"
    )
    if calls.is_empty():
        return calls.select("session_id", "turn")
    # The requests a warm cache should have served: the same context as the one before (same compaction segment
    # and model, the prompt not shrunk to a new context), soon after it.
    calls = calls.with_columns(
        ((pl.col("ts_utc") - previous("ts_utc")).dt.total_milliseconds() / 1000).alias("gap_s"),
        previous("input_total_tokens").alias("prev_input"),
        previous("output_tokens").alias("_prev_output"),
        same_context().alias("same_span"),
        # The next request kept this prompt (a swell re-sent after, not a one-off).
        pl.when(pl.col("session_id") == pl.col("session_id").shift(-1))
        .then(pl.col("input_total_tokens").shift(-1) >= pl.col("input_total_tokens")).alias("_kept"),
    )  # fmt: skip
    reads = calls.group_by("session_id").agg((pl.col("cache_read_tokens") > 0).any().alias("_reads"))
    warm = calls.filter(pl.col("same_span") & (pl.col("gap_s") <= params.max_gap_s) & (pl.col("prev_input") > 0)).with_columns(
        (pl.col("cache_read_tokens") < params.max_cache_read_share * pl.col("prev_input")).alias("_lost")
    )
    # Each request the cache should have served warm: lost or held. Only losses that are explained,
    # among enough that held, stand out from the provider's own misses.
    counts = warm.group_by("session_id").agg(pl.col("_lost").sum().alias("_losses"), pl.len().alias("_warm"))
    breaks = (
        warm.filter(pl.col("_lost")).join(counts, on="session_id").join(reads, on="session_id")
        .filter(pl.col("_reads") & (pl.col("_warm") - pl.col("_losses") >= params.min_warm_requests))
    )  # fmt: skip
    # What the request before added to the context: its output and the results of the tools it asked for (estimates).
    added = (
        context.tools.join(breaks.select("session_id", (pl.col("turn") - 1).alias("turn")), on=["session_id", "turn"], how="semi")
        .group_by("session_id", "turn").agg(pl.col("result_tokens").sum().alias("_prev_results"))
        .with_columns(pl.col("turn") + 1)
    )  # fmt: skip
    breaks = breaks.join(added, on=["session_id", "turn"], how="left").with_columns(
        # The prompt's growth beyond what the request before wrote and its tools returned. Only a request that
        # continued after tool results counts (a user's new prompt adds text the log does not measure).
        (pl.col("input_total_tokens") - pl.col("prev_input") - pl.col("_prev_output") - pl.col("_prev_results")).alias("_swell")
    )
    swelled = (
        pl.col("_prev_results").is_not_null() & pl.col("_kept").fill_null(False)
        & (pl.col("_swell") >= params.min_swell_tokens) & (pl.col("_swell") >= params.min_swell_share_of_results * pl.col("_prev_results"))
    )  # fmt: skip
    return breaks.sort("session_id", "turn").select(
        "session_id", "turn", "gap_s", "prev_input", "cache_read_tokens", "input_total_tokens", "_losses", "_swell",
        swelled.fill_null(False).alias("_swelled"), pl.col("turn").shift(-1).over("session_id").alias("_next_loss"),
    )


def _swell_finding(d: dict, params: Params) -> Finding:
    """A surface change inferred from a cache loss where the prompt also grew beyond what was added to it."""
    lost = d["prev_input"] - d["cache_read_tokens"]
    return Finding(
        detector=NAME, severity="medium", session_id=d["session_id"], first_turn=d["turn"], last_turn=d["turn"],
        metric="inferred_surface_change", value=float(lost),
        threshold=(f"cache read < {params.max_cache_read_share:.0%} of the previous prompt ≤ {params.max_gap_s:.0f} s later, no "
                   f"compaction or model switch, the prompt grown ≥ {params.min_swell_tokens:,} tokens beyond the previous output and "
                   f"tool results, ≥ {params.min_explained_share:.0%} of such losses of the session explained"),
        excess_tokens=lost, excess_usd=None, tool_key=None,
        explanation=(
            f"Inferred from the agent's log (no tools/list was read): request {d['turn']} read {d['cache_read_tokens']:,} of the "
            f"{d['prev_input']:,} prompt tokens the request {d['gap_s']:.0f} s before it had sent, and its prompt grew by "
            f"{d['_swell']:,} tokens more than the previous request's output and tool results add up to (result sizes are "
            "estimates), with no compaction or model switch between them, and the requests after it kept the larger prompt. "
            "Tool definitions come first in the prompt: most likely a server re-announced its tools with longer descriptions "
            "(or more tools), which every later request re-sends. Record the servers' traffic (tokaudit record) to see the "
            "definitions."
        ),
        evidence={"gap_s": d["gap_s"], "previous_prompt_tokens": d["prev_input"], "cache_read_tokens": d["cache_read_tokens"],
                  "swell_tokens": d["_swell"], "inferred": True, "cache_losses": d["_losses"], "explained_losses": d["_explained"]},
    )  # fmt: skip
