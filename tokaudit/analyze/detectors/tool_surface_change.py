"""D12 — tool-surface integrity: a server's tool definitions changing within a session, or bloated.

From MCP ``tools/list`` results (``tool_defs``): a tool seen with more than one
definition hash in one session (a rug pull, or a schema grown to demand new
arguments), and definitions larger than ``max_definition_bytes`` (every
definition is sent to the model on every request — a "menu tax" — and long
descriptions are where hidden instructions go). False positives: server
upgrades, dynamic registries.
"""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

from tokaudit.analyze.detectors import Finding
from tokaudit.analyze.detectors._common import Context

NAME = "tool_surface_change"
TITLE = "Tool definitions changed mid-session or bloated (D12)"


@dataclass(frozen=True)
class Params:
    max_definition_bytes: int = 8000


def _span(first, last) -> str:
    return f"between {first} and {last}; " if first is not None and last is not None else ""


def detect(context: Context, params: Params) -> list[Finding]:
    defs = context.frames.tool_defs
    if defs.is_empty():
        return []
    out = []
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
