"""Calibrating detector thresholds on benign sessions.

The defaults are starting points. An operator's own agents, tools and tasks set
what "unusually long" means, so each threshold can be re-fitted on a reference
store the operator believes benign: the detectors run with permissive settings,
each session's largest value of the calibrated metric is collected (0 when the
detector did not fire), and the threshold is set just above the ``1 − fpr``
quantile of those values — so at most ``fpr`` of the reference sessions would
fire. Attacks are never used to set a threshold.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from tokaudit.analyze.audit import build_context, run_detectors
from tokaudit.analyze.detectors import resolve_params
from tokaudit.analyze.frames import Frames


@dataclass(frozen=True)
class Knob:
    """One calibrated threshold: which parameter, how to read its metric from a finding, the permissive setting."""

    detector: str
    param: str
    permissive: dict[str, Any]
    metric: str  # "value" (the finding's value) or an evidence key
    integer: bool
    finding_metric: str | None = None  # only findings reporting this metric (a detector may report several)
    floor: float = 0  # never below this: a chain of one or two calls is no chain, whatever the reference says
    evidence: tuple[str, Any] | None = None  # only findings with this (key, value) in their evidence


KNOBS = (
    Knob("same_tool_chain", "min_len", {"min_len": 2}, "value", True, floor=15),
    Knob("near_duplicates", "min_len", {"min_len": 2}, "value", True, floor=4),
    # Repetitive steered chains set min_len; long chains of new content (real paginations look like them) set min_long_len.
    Knob("continuation_loop", "min_len", {"min_len": 2}, "value", True, floor=3, evidence=("repetitive", True)),
    Knob("continuation_loop", "min_long_len", {"min_long_len": 2}, "value", True, floor=30, evidence=("repetitive", False)),
    # Steered chains of slivers (a record or none a call) set the drip length: a queue consumer's chain looks the same.
    Knob("continuation_loop", "min_drip_len", {"min_drip_len": 2}, "value", True, floor=15, evidence=("drip", True)),
    # Relay walks across tools: honest look-ups following a reference end in a few hops.
    Knob("continuation_loop", "min_relay_len", {"min_relay_len": 2}, "value", True, "relay_walk_length", floor=12),
    Knob("payload_withholding", "min_len", {"min_len": 2}, "calls", True, floor=4),
    Knob("argument_inflation", "min_args_tokens", {"min_args_tokens": 1}, "value", True),
    # Identical failing calls of an MCP tool: benign retries after a 429/503 stop at a few; never below the
    # exact-repeat guard agent frameworks ship (5 identical calls).
    Knob("failure_spend", "min_storm_failures", {"min_storm_failures": 2}, "value", True, "failure_storm", floor=5),
    Knob("cycles", "min_repetitions", {"min_repetitions": 2}, "value", True, floor=2),
    # Polls answered with everything said before and more; polls whose progress fell back: a log that grows a few
    # times while a job runs, a job re-queued once or twice, are ordinary.
    Knob("amplification", "min_accumulating_calls", {"min_accumulating_calls": 2}, "value", True, "accumulating_results", floor=5),
    # Answers to new questions climbing in a row: a few in a row happen by chance.
    Knob("amplification", "min_swelling_calls", {"min_swelling_calls": 2}, "value", True, "swelling_results", floor=8),
    Knob("same_tool_chain", "min_progress_regressions", {"min_progress_regressions": 1}, "value", True, "progress_regressions", floor=3),
    Knob("same_tool_chain", "min_stalled_polls", {"min_stalled_polls": 2}, "value", True, "stalled_countdown", floor=8),
    Knob("amplification", "min_times_tool_median", {"min_times_tool_median": 1.0, "min_result_tokens": 0}, "value", False,
         "result_size_vs_tool_median"),
    # Only among requests long enough to matter (min_tokens kept): short requests many times a cheap tool's
    # level are everyday (a 600-token plan after a 30-token lookup) and would set the ratio for the long ones.
    Knob("overthinking", "min_times_baseline", {"min_times_baseline": 1.0}, "value", False),
)


def _quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return 0.0
    return ordered[min(len(ordered) - 1, max(0, math.ceil(q * len(ordered)) - 1))]


def calibrate_thresholds(frames: Frames, *, fpr: float = 0.0025, base: dict[str, dict[str, Any]] | None = None) -> dict[str, dict[str, Any]]:
    """``[detectors.NAME]`` settings that make each calibrated detector fire on at most ``fpr`` of these sessions.

    ``frames`` should hold benign sessions only. ``base`` is the configuration
    the result is merged into (thresholds not calibrated here are kept).
    """
    overrides: dict[str, dict[str, Any]] = {name: dict(table) for name, table in (base or {}).items()}
    for knob in KNOBS:
        overrides.setdefault(knob.detector, {}).update(knob.permissive)
    context = build_context(frames)
    findings, _ = run_detectors(context, resolve_params(overrides), only={k.detector for k in KNOBS})
    sessions = frames.sessions["session_id"].to_list()
    out: dict[str, dict[str, Any]] = {name: dict(table) for name, table in (base or {}).items()}
    for knob in KNOBS:
        largest = dict.fromkeys(sessions, 0.0)
        for f in findings:
            if f.detector != knob.detector or f.session_id not in largest:
                continue
            if knob.finding_metric is not None and f.metric != knob.finding_metric:
                continue
            if knob.evidence is not None and f.evidence.get(knob.evidence[0]) != knob.evidence[1]:
                continue
            value = f.value if knob.metric == "value" else f.evidence.get(knob.metric, 0)
            largest[f.session_id] = max(largest[f.session_id], float(value or 0))
        q = _quantile(list(largest.values()), 1 - fpr)
        if q <= 0:
            # The detector (nearly) never fired on the reference: nothing says how low it could go, so the
            # default stays — "just above 0" would be far more permissive than any default.
            continue
        threshold: float = max(knob.floor, math.floor(q) + 1 if knob.integer else q * 1.0001 + 1e-9)
        out.setdefault(knob.detector, {})[knob.param] = int(threshold) if knob.integer else float(threshold)
    return out
