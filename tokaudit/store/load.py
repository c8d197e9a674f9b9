"""Writing parsed files into the store: Arrow batches, whole files per transaction.

New and replaced files are plain bulk inserts. A grown file may continue a
request or tool call whose first half was stored last time (Claude Code writes
a request's content blocks on several lines; a tool's result comes lines after
its call), so for grown files the rows with keys already stored are merged in
Python with the same rules the parsers use, then written back.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import sqlalchemy as sa

from tokaudit.ingest.base import merge_llm_call, merge_session, merge_tool_call
from tokaudit.store import tables
from tokaudit.store.engine import Store

if TYPE_CHECKING:
    from tokaudit.ingest.runner import FileOutcome

_ARROW_TYPES = {
    sa.BigInteger: pa.int64(),
    sa.Integer: pa.int32(),
    sa.Text: pa.string(),
    sa.Boolean: pa.bool_(),
    sa.DateTime: pa.timestamp("us"),
}


def arrow_schema(table: sa.Table) -> pa.Schema:
    """The Arrow schema matching a store table's columns."""
    return pa.schema([pa.field(c.name, _ARROW_TYPES[type(c.type)]) for c in table.columns])


_SCHEMAS = {t.name: arrow_schema(t) for t in (tables.sessions, tables.llm_calls, tables.tool_calls, tables.session_events, tables.ingest_problems)}
_KEYS = {"sessions": "session_id", "llm_calls": "call_key", "tool_calls": "tool_call_id"}
_MERGE: dict[str, Callable[[dict[str, Any], dict[str, Any]], dict[str, Any]]] = {
    "sessions": merge_session,
    "llm_calls": merge_llm_call,
    "tool_calls": merge_tool_call,
}


def write_outcomes(store: Store, outcomes: Sequence[FileOutcome]) -> None:
    """Write parsed files in one transaction: each file's rows land whole or not at all."""
    from tokaudit.ingest.runner import utc_now

    duck = store.duck
    rows: dict[str, list[dict[str, Any]]] = {name: [] for name in _SCHEMAS}
    duck.execute("BEGIN TRANSACTION")
    try:
        for o in outcomes:
            work = o.work
            source_id = work.source_id
            if source_id is None:
                source_id = duck.execute("SELECT nextval('source_id_seq')").fetchall()[0][0]
            elif work.kind == "replaced":
                for name in _SCHEMAS:
                    duck.execute(f"DELETE FROM {name} WHERE source_id = ?", [source_id])
            r = o.result
            file_rows = {
                "sessions": list(r.sessions.values()),
                "llm_calls": list(r.llm_calls.values()),
                "tool_calls": list(r.tool_calls.values()),
                "session_events": list(r.events.values()),
                "ingest_problems": [
                    {"line_no": p.line_no, "byte_offset": p.byte_offset, "kind": p.kind, "message": p.message, "excerpt": p.excerpt}
                    for p in r.problems
                ],
            }
            if work.kind == "grown":
                # Problems and events are keyed by line, and a grown file brings only new lines.
                for name in _KEYS:
                    file_rows[name] = _merge_with_stored(store, name, source_id, file_rows[name])
            for name, items in file_rows.items():
                for item in items:
                    item["source_id"] = source_id
                rows[name].extend(items)
            _write_source(store, o, source_id, utc_now())
        for name, items in rows.items():
            if items:
                _insert(store, name, items)
        duck.execute("COMMIT")
    except BaseException:
        duck.execute("ROLLBACK")
        raise


def _merge_with_stored(store: Store, name: str, source_id: int, items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    if not items:
        return items
    key = _KEYS[name]
    duck = store.duck
    cursor = duck.execute(
        f"SELECT * FROM {name} WHERE source_id = ? AND {key} IN (SELECT unnest(?::VARCHAR[]))",
        [source_id, [item[key] for item in items]],
    )
    columns = [d[0] for d in cursor.description]
    stored = {row[key]: row for row in (dict(zip(columns, values)) for values in cursor.fetchall())}
    if not stored:
        return items
    duck.execute(
        f"DELETE FROM {name} WHERE source_id = ? AND {key} IN (SELECT unnest(?::VARCHAR[]))", [source_id, list(stored)]
    )
    merge = _MERGE[name]
    return [merge(stored[item[key]], item) if item[key] in stored else item for item in items]


def _insert(store: Store, name: str, items: list[dict[str, Any]]) -> None:
    schema = _SCHEMAS[name]
    table = pa.Table.from_pylist(items, schema=schema)
    view = f"_tokaudit_load_{name}"
    store.duck.register(view, table)
    try:
        store.duck.execute(f"INSERT INTO {name} BY NAME SELECT * FROM {view}")
    finally:
        store.duck.unregister(view)


def _write_source(store: Store, o: FileOutcome, source_id: int, now: Any) -> None:
    work, r = o.work, o.result
    skipped = dict(r.skipped)
    counts = [r.lines_read, r.lines_ok, r.lines_skipped, r.lines_problem]
    if work.kind == "grown":
        old = store.duck.execute(
            "SELECT lines_read, lines_ok, lines_skipped, lines_problem, skipped_by_rule FROM sources WHERE source_id = ?", [source_id]
        ).fetchall()[0]
        counts = [a + b for a, b in zip(counts, old[:4])]
        for rule, n in json.loads(old[4]).items():
            skipped[rule] = skipped.get(rule, 0) + n
    values = {
        "source_id": source_id,
        "path": work.path,
        "format": o.format,
        "size_bytes": work.size_bytes,
        "mtime_ns": work.mtime_ns,
        "head_bytes": o.head_bytes,
        "head_sha256": o.head_sha256,
        "byte_offset": o.end_offset,
        "lines_read": counts[0],
        "lines_ok": counts[1],
        "lines_skipped": counts[2],
        "lines_problem": counts[3],
        "skipped_by_rule": json.dumps(dict(sorted(skipped.items()))),
        "parser_state": json.dumps(r.state, default=str),
        "ingested_at_utc": now,
    }
    if work.source_id is None:
        cols = ", ".join(values)
        store.duck.execute(f"INSERT INTO sources ({cols}) VALUES ({', '.join('?' * len(values))})", list(values.values()))
    else:
        sets = ", ".join(f"{c} = ?" for c in values if c not in ("source_id", "path"))
        params = [v for c, v in values.items() if c not in ("source_id", "path")]
        store.duck.execute(f"UPDATE sources SET {sets} WHERE source_id = ?", [*params, source_id])
