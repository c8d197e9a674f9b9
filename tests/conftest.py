"""Shared test fixtures: isolated environment, paths to fixtures and shared samples, stores."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "fixtures"
SAMPLES = ROOT.parent / "shared" / "samples"


@pytest.fixture(autouse=True)
def isolated_env(tmp_path_factory, monkeypatch):
    """No test sees the developer's own logs, config or database."""
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    for var in ("TOKAUDIT_DB", "TOKAUDIT_CONFIG", "CLAUDE_CONFIG_DIR", "CODEX_HOME", "XDG_CONFIG_HOME"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.chdir(home)
    return home


@pytest.fixture
def samples() -> Path:
    if not SAMPLES.is_dir():
        pytest.skip("../shared/samples is not present")
    return SAMPLES


@pytest.fixture
def db_path(tmp_path) -> str:
    return str(tmp_path / "test.duckdb")


@pytest.fixture
def store(db_path):
    from tokaudit.store import open_store

    s = open_store(db_path)
    yield s
    s.close()


def load_json(path: Path):
    return json.loads(path.read_text(encoding="utf-8"))


def snapshot(store) -> dict[str, list]:
    """Every row of every ingest table (minus ingest time), sorted: equal snapshots mean nothing changed.

    Source ids are surrogate keys (files are written largest first, so they follow file sizes): each
    is replaced by its file's rank in path order in the tables that refer to one, so two stores that read
    the same files compare equal (``sources`` keeps its ids: within one store they must not change).
    """
    ranked = store.duck.execute("SELECT source_id FROM sources ORDER BY path").fetchall()
    paths = {source_id: f"source#{rank}" for rank, (source_id,) in enumerate(ranked)}
    out = {}
    for table in ("sources", "sessions", "llm_calls", "tool_calls", "tool_defs", "session_events", "ingest_problems"):
        cur = store.duck.execute(f"SELECT * FROM {table}")
        cols = [d[0] for d in cur.description]
        rows = [
            tuple(paths.get(v, v) if c in ("source_id", "linked_source_id") and table != "sources" else v
                  for c, v in zip(cols, r) if c != "ingested_at_utc")
            for r in cur.fetchall()
        ]
        out[table] = sorted(rows, key=repr)
    return out
