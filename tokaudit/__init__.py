"""tokaudit: audit where AI agents spend their tokens.

Public API (imported lazily, so ``tokaudit --help`` stays fast)::

    from tokaudit import open_store, ingest_paths, ingest_db, usage_report, run_audit, run_gate, build_report
"""

from __future__ import annotations

import importlib
import os
from typing import Any

# polars allocates through its own jemalloc, which it tells to hand freed pages back to the kernel after half
# a second. An audit builds and drops frames of the same sizes batch after batch, so each batch faulted its
# memory in again: on a 10M-row store half the page faults and a sixth of the audit's time
# (benchmarks/results-detectors-speed.md). Kept pages are reused instead; the peak stays under the budget.
# The variable is read when polars loads (polars puts its own settings before it, and later ones win), so it
# is set here, before any tokaudit module imports polars; a value the user set wins.
os.environ.setdefault("_RJEM_MALLOC_CONF", "dirty_decay_ms:-1,muzzy_decay_ms:-1")

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
