"""How ``run_detectors`` runs the registry: in its order, the combined verdict last, findings in one order."""

from __future__ import annotations

from types import SimpleNamespace

from tokaudit.analyze import audit
from tokaudit.analyze.detectors import Finding

COMBINED = "economic_dos"


def finding(detector: str, session_id: str, turn: int | None) -> Finding:
    return Finding(detector=detector, severity="low", session_id=session_id, first_turn=turn, last_turn=turn, metric="m", value=1.0,
                   threshold="t", excess_tokens=None, excess_usd=None, explanation=f"{detector} {session_id} {turn}")


def test_findings_come_in_registry_order_each_detectors_in_one_order_and_the_combined_verdict_reads_the_others(monkeypatch):
    seen_by_combined: list[Finding] = []

    def shuffled(name: str):
        # A detector's findings in whatever order its groups came out of polars.
        return SimpleNamespace(detect=lambda context, params: [finding(name, "s-2", 3), finding(name, "s-1", None), finding(name, "s-1", 5),
                                                               finding(name, "s-1", -1)])

    def combined(context, params):
        seen_by_combined.extend(context.findings)
        return [finding(COMBINED, "s-1", 0)]

    registry = {"second": shuffled("second"), "first": shuffled("first"), COMBINED: SimpleNamespace(detect=combined)}
    monkeypatch.setattr(audit, "DETECTORS", registry)
    findings, seconds = audit.run_detectors(SimpleNamespace(findings=[]), dict.fromkeys(registry))

    assert len(seen_by_combined) == 8
    assert set(seconds) == set(registry)
    # Registry order between detectors; within one, by session then turn (no turn first; turn -1 means none).
    assert [(f.detector, f.session_id, f.first_turn) for f in findings] == [
        *[(name, s, t) for name in ("second", "first") for s, t in (("s-1", None), ("s-1", None), ("s-1", 5), ("s-2", 3))],
        (COMBINED, "s-1", 0),
    ]


def test_only_runs_the_detectors_named(monkeypatch):
    ran: list[str] = []

    def module(name: str):
        return SimpleNamespace(detect=lambda context, params: ran.append(name) or [finding(name, "s", 1)])

    registry = {name: module(name) for name in ("a", "b", "c", COMBINED)}
    monkeypatch.setattr(audit, "DETECTORS", registry)
    findings, seconds = audit.run_detectors(SimpleNamespace(findings=[]), dict.fromkeys(registry), only={"b", "c"})
    assert sorted(ran) == ["b", "c"]
    assert [f.detector for f in findings] == ["b", "c"]
    assert set(seconds) == {"b", "c"}
