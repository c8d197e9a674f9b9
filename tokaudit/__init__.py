"""tokaudit: audit where AI agents spend their tokens.

Public API (imported lazily, so ``tokaudit --help`` stays fast)::

    from tokaudit import open_store, ingest_paths, ingest_db, usage_report, run_audit, run_gate, build_report
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

_API = {
    "open_store": "tokaudit.store.engine",
    "ingest_paths": "tokaudit.ingest.runner",
    "ingest_db": "tokaudit.ingest.run",
    "usage_report": "tokaudit.analyze.usage",
    "run_audit": "tokaudit.analyze.audit",
    "load_frames": "tokaudit.analyze.frames",
    "run_gate": "tokaudit.gate.run",
    "build_report": "tokaudit.report.build",
}

__all__ = ["__version__", *_API]


def __getattr__(name: str) -> Any:
    if name in _API:
        return getattr(importlib.import_module(_API[name]), name)
    raise AttributeError(f"module 'tokaudit' has no attribute {name!r}")
