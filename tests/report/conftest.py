"""Stores the report tests read: the bundled fixtures (every format) with an audit run, built once per session."""

from __future__ import annotations

import pytest

from tests.conftest import FIXTURES


@pytest.fixture(scope="session")
def fixtures_db(tmp_path_factory) -> str:
    """A database file holding every bundled fixture and one stored audit run (tests open it read-only)."""
    from tokaudit.analyze.audit import run_audit
    from tokaudit.ingest.runner import ingest_paths
    from tokaudit.store import open_store

    path = str(tmp_path_factory.mktemp("report-db") / "fixtures.duckdb")
    with open_store(path) as store:
        ingest_paths(store, [FIXTURES], workers=1)
        run_audit(store)
        # Refresh the read-side caches once, so read-only opens find them current.
        from tokaudit.store.queries import dedup_relation

        dedup_relation(store)
    return path


@pytest.fixture
def fixtures_store(fixtures_db):
    from tokaudit.store import open_store

    store = open_store(fixtures_db, read_only=True)
    yield store
    store.close()
