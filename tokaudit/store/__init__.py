"""The tokaudit database: schema (tables.py), migrations, opening it (engine.py), loading (load.py).

``open_store`` is imported lazily: importing DuckDB costs ~0.25 s, which
commands that never open the database should not pay.
"""

from __future__ import annotations

from typing import Any

__all__ = ["Store", "open_store"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from tokaudit.store import engine

        return getattr(engine, name)
    raise AttributeError(f"module 'tokaudit.store' has no attribute {name!r}")
