"""D16 — cap hits: sessions that ended on a turn, budget or token cap.

A session whose outcome is ``capped`` (SWE-agent cost limit, max turns, budget)
or with a request that stopped on ``max_tokens``/``length``. A cap bounds the loss
of a runaway loop; it does not say the loop was harmless. Every hit is reported
(info); operators compare the rate with their baseline. False positives:
deliberate "run until budget" jobs.
"""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

from tokaudit.analyze.detectors import Finding
from tokaudit.analyze.detectors._common import Context

NAME = "cap_hits"
TITLE = "Session ended on a cap (D16)"

TOKEN_CAP_STOPS = ("max_tokens", "length", "max_output_tokens")


@dataclass(frozen=True)
class Params:
    report_token_caps: bool = True


def detect(context: Context, params: Params) -> list[Finding]:
    out = []
    for s in context.frames.sessions.filter(pl.col("outcome") == "capped").iter_rows(named=True):
        out.append(
            Finding(
                detector=NAME, severity="info", session_id=s["session_id"], first_turn=None, last_turn=None,
                metric="capped", value=1.0, threshold="session outcome = capped", excess_tokens=None, excess_usd=None,
                explanation=f"The session ended on a cap (turns, budget or cost limit) after {s['requests']} requests: a runaway it did not finish.",
            )
        )
    if params.report_token_caps:
        stops = context.frames.calls.filter(pl.col("stop_reason").is_in(TOKEN_CAP_STOPS)).group_by("session_id").agg(
            pl.len().alias("n"), pl.col("turn").min().alias("first_turn"), pl.col("turn").max().alias("last_turn")
        )
        for s in stops.iter_rows(named=True):
            out.append(
                Finding(
                    detector=NAME, severity="info", session_id=s["session_id"], first_turn=s["first_turn"], last_turn=s["last_turn"],
                    metric="max_token_stops", value=s["n"], threshold="stop reason max_tokens/length", excess_tokens=None, excess_usd=None,
                    explanation=f"{s['n']} request(s) stopped because they hit the output token limit.",
                )
            )
    return out
