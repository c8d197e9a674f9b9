"""The tokaudit database: schema (tables.py), migrations, and opening it (engine.py)."""

from tokaudit.store.engine import Store, open_store

__all__ = ["Store", "open_store"]
