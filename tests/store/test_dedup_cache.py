"""The materialised llm_calls_dedup_cache always holds exactly the view's rows."""

from __future__ import annotations

import json

from tests.conftest import FIXTURES
from tests.ingest.helpers import claude_assistant
from tokaudit.analyze.usage import usage_report
from tokaudit.ingest.runner import ingest_paths
from tokaudit.store.queries import dedup_relation


def rows(store, relation):
    return sorted(store.duck.execute(f"SELECT * FROM {relation}").fetchall(), key=repr)


def test_cache_follows_every_ingest(store, tmp_path):
    ingest_paths(store, [FIXTURES / "claude-code"])
    assert dedup_relation(store) == "llm_calls_dedup_cache"
    assert rows(store, "llm_calls_dedup_cache") == rows(store, "llm_calls_dedup")
    calls_before = usage_report(store, by="model").totals["calls"]
    extra = tmp_path / "more.jsonl"
    extra.write_text(json.dumps(claude_assistant("m-new", "r-new"), separators=(",", ":")) + "\n")
    ingest_paths(store, [extra])
    assert usage_report(store, by="model").totals["calls"] == calls_before + 1
    assert rows(store, "llm_calls_dedup_cache") == rows(store, "llm_calls_dedup")


def test_read_only_store_reads_the_view(db_path):
    from tokaudit.store import open_store

    with open_store(db_path) as s:
        ingest_paths(s, [FIXTURES / "codex"])
    with open_store(db_path, read_only=True) as ro:
        assert dedup_relation(ro) == "llm_calls_dedup"
        assert usage_report(ro, by="day").totals["calls"] > 0


def test_the_copy_holds_each_file_s_requests_together_in_line_order(store):
    ingest_paths(store, [FIXTURES / "claude-code", FIXTURES / "codex"], workers=1)
    dedup_relation(store)
    stored = store.duck.execute("SELECT source_id, line_no, call_key FROM llm_calls_dedup_cache ORDER BY rowid").fetchall()
    assert len({s for s, _, _ in stored}) > 1
    assert stored == sorted(stored)  # a batched audit reads a stretch of the copy (analyze.frames.session_batches)


def test_a_copy_built_before_revision_0010_is_rebuilt_in_order(db_path):
    import sqlalchemy as sa

    from tokaudit.store import migrate, open_store
    from tokaudit.store.engine import db_url

    engine = sa.create_engine(db_url(db_path), poolclass=sa.pool.NullPool)
    with engine.connect() as conn:
        migrate.upgrade(conn, "0009")
    engine.dispose()
    with open_store(db_path, upgrade=False, check=False) as old:
        ingest_paths(old, [FIXTURES / "claude-code"], workers=1)
        # The copy as revision 0009 wrote it: the view's rows in no particular order.
        old.duck.execute("DELETE FROM llm_calls_dedup_cache")
        old.duck.execute("INSERT INTO llm_calls_dedup_cache SELECT * FROM llm_calls_dedup ORDER BY call_key DESC")
        old.duck.execute("UPDATE store_state SET value = (SELECT value FROM store_state WHERE key = 'data_version') WHERE key = 'dedup_version'")
    with open_store(db_path) as store:
        assert dedup_relation(store) == "llm_calls_dedup_cache"
        stored = store.duck.execute("SELECT source_id, line_no, call_key FROM llm_calls_dedup_cache ORDER BY rowid").fetchall()
        assert stored == sorted(stored)
        assert rows(store, "llm_calls_dedup_cache") == rows(store, "llm_calls_dedup")
