"""The detector registry: one module per detector, each a pure function from frames to findings.

A detector module provides ``NAME`` (its registry key and ``[detectors.NAME]``
config table), ``TITLE``, ``Params`` (a dataclass of thresholds with defaults)
and ``detect(frames, params, context) -> list[Finding]``. It reads only the
frames (``analyze.frames``) and the shared context (cohort baselines, per-call
features); it never touches the store. ``run_detectors`` runs them all in
registry order; the combined ``economic_dos`` verdict runs last, over the
others' findings.

Catalogue ids (see the project's detector reference) are given per module.
"""

from __future__ import annotations

import dataclasses
import importlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

from tokaudit.errors import ConfigError

# Registry order is report order; economic_dos must stay last (it combines the others).
_MODULES = {
    "cost_blowup": "tokaudit.analyze.detectors.cost_blowup",  # D1
    "amplification": "tokaudit.analyze.detectors.amplification",  # D2
    "same_tool_chain": "tokaudit.analyze.detectors.same_tool_chain",  # D3
    "near_duplicates": "tokaudit.analyze.detectors.near_duplicates",  # D4
    "continuation_loop": "tokaudit.analyze.detectors.continuation_loop",  # D5
    "argument_inflation": "tokaudit.analyze.detectors.argument_inflation",  # D6
    "context_pressure": "tokaudit.analyze.detectors.context_pressure",  # D7
    "cache_miss_spend": "tokaudit.analyze.detectors.cache_miss_spend",  # D8
    "failure_spend": "tokaudit.analyze.detectors.failure_spend",  # D9
    "overthinking": "tokaudit.analyze.detectors.overthinking",  # D10
    "tool_surface_change": "tokaudit.analyze.detectors.tool_surface_change",  # D12
    "directive_notices": "tokaudit.analyze.detectors.directive_notices",  # D13
    "payload_withholding": "tokaudit.analyze.detectors.payload_withholding",  # D14
    "cycles": "tokaudit.analyze.detectors.cycles",  # D15
    "cap_hits": "tokaudit.analyze.detectors.cap_hits",  # D16
    "economic_dos": "tokaudit.analyze.detectors.economic_dos",  # combined verdict
}

SEVERITIES = ("info", "low", "medium", "high", "critical")


@dataclass
class Finding:
    """One thing a detector saw, with the evidence a security engineer needs to act on it."""

    detector: str
    severity: str
    session_id: str
    first_turn: int | None
    last_turn: int | None
    metric: str
    value: float
    threshold: str
    excess_tokens: int | None
    excess_usd: float | None
    explanation: str
    tool_key: str | None = None  # the tool (server/tool for MCP) the finding is about
    evidence: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


class _Registry(Mapping[str, ModuleType]):
    def __getitem__(self, name: str) -> ModuleType:
        return importlib.import_module(_MODULES[name])

    def __iter__(self):
        return iter(_MODULES)

    def __len__(self) -> int:
        return len(_MODULES)


DETECTORS: Mapping[str, ModuleType] = _Registry()


def resolve_params(overrides: Mapping[str, Mapping[str, Any]] | None = None) -> dict[str, Any]:
    """Each detector's thresholds: its defaults with ``[detectors.NAME]`` overrides applied.

    Unknown detectors, unknown keys and values of the wrong type are errors that
    name the key, so a typo never silently leaves a default in force.
    """
    overrides = dict(overrides or {})
    unknown = sorted(set(overrides) - set(DETECTORS))
    if unknown:
        raise ConfigError(f"unknown detector [detectors.{unknown[0]}]", hint=f"detectors are: {', '.join(DETECTORS)}")
    out: dict[str, Any] = {}
    for name, module in DETECTORS.items():
        params = module.Params()
        given = dict(overrides.get(name, {}))
        fields = {f.name: f for f in dataclasses.fields(params)}
        for key, value in given.items():
            if key not in fields:
                raise ConfigError(f"unknown key detectors.{name}.{key}", hint=f"keys of [detectors.{name}]: {', '.join(fields)}")
            default = getattr(params, key)
            if isinstance(default, bool) != isinstance(value, bool) or not isinstance(value, (type(default), int if isinstance(default, float) else type(default))):
                raise ConfigError(f"detectors.{name}.{key} must be {type(default).__name__}, got {value!r}")
        out[name] = dataclasses.replace(params, **given)
    return out


def severity_for_ratio(ratio: float | None) -> str:
    """Severity from how many times the cohort's typical cost a session spent.

    Examples:
        >>> severity_for_ratio(60), severity_for_ratio(12), severity_for_ratio(4), severity_for_ratio(1.1)
        ('critical', 'high', 'medium', 'low')
    """
    if ratio is None:
        return "medium"
    if ratio >= 50:
        return "critical"
    if ratio >= 10:
        return "high"
    if ratio >= 3:
        return "medium"
    return "low"
