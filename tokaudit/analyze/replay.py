"""Replayed-context attribution (D11): what a tool's output cost after it was returned.

A tool result — and the arguments its schema made the model write — stay in the
conversation and are re-sent as input on every later request until the context
is compacted. For a call made by request ``t`` with ``s = args + result`` tokens:

* **direct** cost: the arguments at the output price of request ``t`` (they were
  generated), plus the result read once by request ``t+1``;
* **replayed** cost: ``s`` re-read by every later request of the same compaction
  segment, each priced at that request's effective input price (its own mix of
  cache reads, writes and uncached input — a cache hit costs a tenth of a miss),
  minus the first reading counted as direct.

Summed per tool and per MCP server, beside the direct cost. Prices are exact
where the model is priced; token sizes are exact only where a log reports them —
otherwise they carry the estimate's method (``tokenizer:…``, ``calibrated:…``,
``heuristic:…``), and every row lists the methods behind it.
"""

from __future__ import annotations

import polars as pl

from tokaudit.analyze.frames import Frames
from tokaudit.analyze.usage import NOT_MCP


def call_attribution(frames: Frames) -> pl.DataFrame:
    """Per tool call: direct and replayed tokens and dollars (see the module docstring)."""
    calls = frames.calls.filter(~pl.col("is_aggregate")).sort("session_id", "turn")
    seg = ["session_id", "segment"]
    calls = calls.with_columns(
        pl.col("input_usd_per_token_eff").fill_null(0.0).alias("_eff"),
        pl.col("input_usd_per_token_eff").is_null().alias("_unpriced"),
    ).with_columns(
        # Requests after this one in its segment, and the sum of their input prices.
        (pl.len().over(seg) - pl.int_range(1, pl.len() + 1).over(seg)).alias("later_requests"),
        (pl.col("_eff").sum().over(seg) - pl.col("_eff").cum_sum().over(seg)).alias("later_price_sum"),
        pl.col("_eff").shift(-1).over(seg).alias("next_price"),
        pl.col("_unpriced").any().over(seg).alias("segment_unpriced"),
    )
    tools = frames.tools.join(
        calls.select("session_id", "turn", "later_requests", "later_price_sum", "next_price", "segment_unpriced", "output_usd_per_token"),
        on=["session_id", "turn"],
        how="inner",
    )
    args = pl.col("args_tokens").fill_null(0)
    result = pl.col("result_tokens").fill_null(0)
    size = args + result
    return tools.with_columns(
        (args + pl.when(pl.col("later_requests") > 0).then(result).otherwise(0)).alias("direct_tokens"),
        (size * pl.col("later_requests") - pl.when(pl.col("later_requests") > 0).then(result).otherwise(0)).alias("replay_tokens"),
        pl.when(pl.col("segment_unpriced") | pl.col("output_usd_per_token").is_null())
        .then(None)
        .otherwise(args * pl.col("output_usd_per_token") + result * pl.col("next_price").fill_null(0.0))
        .alias("direct_usd"),
        pl.when(pl.col("segment_unpriced"))
        .then(None)
        .otherwise(size * pl.col("later_price_sum") - result * pl.col("next_price").fill_null(0.0))
        .alias("replay_usd"),
    )


def server_key(remote_hosts: bool = True) -> pl.Expr:
    """A tool call's row among MCP servers: its server (``analyze.frames`` names an MCP call whose log names none
    ``UNNAMED_MCP_SERVER``), or ``NOT_MCP`` for the agent's own tools — a remote host they called included, which the
    detectors take for the call's server (``remote_hosts``: the frame has ``remote_host``, as the audit's has)."""
    server = pl.when(pl.col("remote_host").is_null()).then(pl.col("mcp_server")) if remote_hosts else pl.col("mcp_server")
    return server.fill_null(NOT_MCP)


def attribution(frames: Frames, by: str = "tool") -> pl.DataFrame:
    """Direct and replayed tokens and dollars per ``tool`` (server/tool for MCP) or per ``mcp-server``.

    ``replay_share`` is the replayed tokens over all input tokens of the analysed
    requests: how much of what the models read was this tool's output re-read.
    """
    per_call = call_attribution(frames)
    key = pl.col("tool_key") if by == "tool" else server_key("remote_host" in per_call.columns)
    total_input = frames.calls["input_total_tokens"].sum() or 1
    out = (
        per_call.with_columns(key.alias("key"))
        .group_by("key")
        .agg(
            pl.len().alias("calls"),
            pl.col("direct_tokens").sum(),
            pl.col("replay_tokens").sum(),
            pl.col("direct_usd").sum(),
            pl.col("replay_usd").sum(),
            pl.col("direct_usd").is_null().any().alias("partly_unpriced"),
            pl.concat_list(pl.col("args_tokens_method"), pl.col("result_tokens_method")).explode().drop_nulls().unique().sort().alias("token_methods"),
        )
        .with_columns(
            (pl.col("replay_tokens") / total_input).alias("replay_share"),
            (pl.col("replay_usd") / pl.max_horizontal(pl.col("direct_usd"), pl.lit(1e-12))).alias("replay_to_direct"),
        )
        .sort("replay_tokens", descending=True)
    )
    return out.rename({"key": "tool" if by == "tool" else "mcp_server"})
