"""Thresholds calibrated on benign sessions stay quiet on them and still catch a loop."""

from __future__ import annotations

from tests.analyze.framegen import Session, benign, frames
from tests.analyze.test_detectors import counter_loop
from tokaudit.analyze.audit import build_context, run_detectors
from tokaudit.analyze.calibration import KNOBS, calibrate_thresholds
from tokaudit.analyze.detectors import resolve_params


def batch_edits(n: int) -> list[Session]:
    """Benign sessions with long runs of one tool (the hard negative that sets chain thresholds)."""
    out = []
    for i in range(n):
        s = Session(f"claude-code:batch-{i}")
        for k in range(10 + i % 5):
            s.turn(tools=[("Edit", f'{{"file_path":"/src/f{k}.py","old":"a{k}","new":"b{k}"}}', f"edited /src/f{k}.py")])
        out.append(s)
    return out


def test_calibrated_thresholds_clear_the_benign_reference_and_keep_catching_loops():
    reference = benign(40) + batch_edits(20)
    thresholds = calibrate_thresholds(frames(*reference), fpr=0.0)
    # Detectors that never fired on the reference keep their defaults (nothing says how low they could go).
    assert "same_tool_chain" in thresholds
    assert "continuation_loop" not in thresholds  # nothing benign is steered here
    assert thresholds["same_tool_chain"]["min_len"] > 14  # the longest benign Edit run is 14 calls
    params = resolve_params(thresholds)
    quiet = build_context(frames(*reference))
    findings, _ = run_detectors(quiet, params, only={k.detector for k in KNOBS})
    assert not findings
    loud = build_context(frames(*reference, counter_loop(steps=40, sequence_len=600)))
    findings, _ = run_detectors(loud, params, only={k.detector for k in KNOBS})
    assert {f.session_id for f in findings} == {"claude-code:attack"}


def test_long_benign_paginations_set_the_long_chain_length_not_the_loop_length():
    """Real paginations of 35 pages are steered chains of new content: they raise min_long_len, not min_len
    (nor min_drip_len: their pages are more than slivers), so a short repetitive loop is still caught."""
    from tests.analyze.test_detectors import _long_pagination

    reference = benign(30) + [_long_pagination(f"claude-code:pages-{i}", 35, 2_000) for i in range(3)]
    thresholds = calibrate_thresholds(frames(*reference), fpr=0.0)
    assert thresholds["continuation_loop"] == {"min_long_len": 36}
    params = resolve_params(thresholds)
    context = build_context(frames(*reference, counter_loop(steps=6)))
    findings, _ = run_detectors(context, params, only={"continuation_loop"})
    assert {f.session_id for f in findings} == {"claude-code:attack"}


def test_a_benign_queue_handing_out_one_item_a_call_sets_the_drip_length():
    """A consumer taking one small item a call, each named by a receipt from the last: slivers on a steered
    chain, benign here — so the drip length moves above the reference's longest such chain."""
    reference = benign(30)
    for i in range(3):
        s = Session(f"claude-code:queue-{i}")
        receipt = "r0"
        for k in range(20 + i):
            nxt = f"rcpt{(k + 1) * 7919 % 10007:05d}q{i}"
            s.turn(tools=[("queue/receive", f'{{"ack":"{receipt}"}}', f'{{"item":"job {k}","receipt":"{nxt}"}}')])
            receipt = nxt
        reference.append(s)
    thresholds = calibrate_thresholds(frames(*reference), fpr=0.0)
    assert thresholds["continuation_loop"]["min_drip_len"] == 23
