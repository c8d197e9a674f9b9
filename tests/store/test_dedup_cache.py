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
