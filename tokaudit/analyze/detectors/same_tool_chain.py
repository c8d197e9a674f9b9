"""D3 — long same-tool chains.

The longest run of one tool (``server/tool`` for MCP) in a session, tolerating one
interleaved call of another tool. Fires above ``min_len`` (a per-tool baseline can
be set higher). Catches segment loops, cursor drip-feeds and polling storms; weak
alone — batch edits, pagination and polling make long runs too.
"""

from __future__ import annotations

from dataclasses import dataclass

from tokaudit.analyze.detectors import Finding
from tokaudit.analyze.detectors._common import Context, chain_finding, run_groups

NAME = "same_tool_chain"
TITLE = "Long chain of calls to one tool (D3)"


@dataclass(frozen=True)
class Params:
    min_len: int = 15


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
    return findings
