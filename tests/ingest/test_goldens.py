"""Goldens: each format's fixtures ingest to exactly the canonical rows checked in beside them.

``fixtures/expected/goldens/<format>.json`` holds every stored row (minus
ingest time and source ids, which are replaced by the file's path relative to
``fixtures/``). After a deliberate change, regenerate with
``TOKAUDIT_UPDATE_GOLDENS=1 python -m pytest tests/ingest/test_goldens.py`` and
review the diff like code.
"""

from __future__ import annotations

import json
import os
from datetime import date, datetime
from decimal import Decimal
from typing import Any

import pytest

from tests.conftest import FIXTURES
from tokaudit.ingest import INGESTERS
from tokaudit.ingest.runner import ingest_paths

GOLDENS = FIXTURES / "expected" / "goldens"
TABLES = ("sessions", "llm_calls", "tool_calls", "tool_defs", "session_events", "ingest_problems")
VOLATILE = {"ingested_at_utc", "source_id", "mtime_ns", "linked_source_id"}


def _plain(value: Any) -> Any:
    if isinstance(value, (datetime, date)):
        return value.isoformat()
    if isinstance(value, Decimal):
        return str(value)
    return value


def canonical_rows(store) -> dict[str, list[dict[str, Any]]]:
    """Every ingest table's rows, with the source id replaced by the file's path under fixtures/."""
    paths = {sid: os.path.relpath(path, FIXTURES) for sid, path in store.duck.execute("SELECT source_id, path FROM sources").fetchall()}
    out: dict[str, list[dict[str, Any]]] = {}
    for table in TABLES:
        cur = store.duck.execute(f"SELECT * FROM {table}")
        cols = [d[0] for d in cur.description]
        rows = []
        for values in cur.fetchall():
            row = dict(zip(cols, values))
            file = paths[row["source_id"]]
            rows.append({"file": file, **{c: _plain(v) for c, v in row.items() if c not in VOLATILE}})
        out[table] = sorted(rows, key=lambda r: json.dumps(r, sort_keys=True))
    return out


FORMATS_WITH_FIXTURES = sorted(fmt for fmt in INGESTERS if (FIXTURES / fmt).is_dir())


@pytest.mark.parametrize("fmt", FORMATS_WITH_FIXTURES)
def test_fixtures_ingest_to_their_goldens(store, fmt):
    ingest_paths(store, [FIXTURES / fmt], forced_format=None, workers=1)
    got = canonical_rows(store)
    golden = GOLDENS / f"{fmt}.json"
    if os.environ.get("TOKAUDIT_UPDATE_GOLDENS") == "1":
        GOLDENS.mkdir(parents=True, exist_ok=True)
        golden.write_text(json.dumps(got, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    assert golden.exists(), f"no golden for {fmt}: run with TOKAUDIT_UPDATE_GOLDENS=1 and review it"
    want = json.loads(golden.read_text(encoding="utf-8"))
    for table in TABLES:
        assert got[table] == want[table], f"{fmt}: {table} differs from {golden.name}"


def test_every_format_has_a_golden():
    assert {p.stem for p in GOLDENS.glob("*.json")} == set(FORMATS_WITH_FIXTURES) == set(INGESTERS)
