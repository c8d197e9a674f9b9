"""Writing parsed files into the store: Arrow batches, whole files per transaction.

New and replaced files are plain bulk inserts. A grown file may continue a
request or tool call whose first half was stored last time (Claude Code writes
a request's content blocks on several lines; a tool's result comes lines after
its call), so for grown files the rows with keys already stored are merged in
Python with the same rules the parsers use, then written back.
"""

from __future__ import annotations

import dataclasses
import json
import operator
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.compute as pc
import sqlalchemy as sa

from tokaudit.ingest import REVISION_KEY, parser_revision
from tokaudit.ingest.base import TOOL_DEF_KEY, merge_llm_call, merge_session, merge_tool_call, merge_tool_def, utc_now
from tokaudit.store import tables
from tokaudit.store.queries import fetch_dicts

if TYPE_CHECKING:
    from tokaudit.ingest.runner import FileOutcome
    from tokaudit.store.engine import Store

_ARROW_TYPES = {
    sa.BigInteger: pa.int64(),
    sa.Integer: pa.int32(),
    sa.Text: pa.string(),
    sa.Boolean: pa.bool_(),
    sa.DateTime: pa.timestamp("us"),
    sa.Numeric: pa.decimal128(38, 18),
    sa.Double: pa.float64(),
}


def arrow_schema(table: sa.Table) -> pa.Schema:
    """The Arrow schema matching a store table's columns."""
    return pa.schema([pa.field(c.name, _arrow_type(c.type)) for c in table.columns])


def _arrow_type(sa_type: sa.types.TypeEngine) -> pa.DataType:
    if isinstance(sa_type, sa.ARRAY):
        return pa.list_(_ARROW_TYPES[type(sa_type.item_type)])
    return _ARROW_TYPES[type(sa_type)]


_SCHEMAS = {
    t.name: arrow_schema(t)
    for t in (tables.sessions, tables.llm_calls, tables.tool_calls, tables.tool_defs, tables.session_events, tables.ingest_problems)
}
_SOURCES_SCHEMA = arrow_schema(tables.sources)
# Natural key columns (within one source) of the tables a grown file may continue.
_KEYS: dict[str, tuple[str, ...]] = {
    "sessions": ("session_id",),
    "llm_calls": ("call_key",),
    "tool_calls": ("tool_call_id",),
    "tool_defs": TOOL_DEF_KEY,
}
_MERGE: dict[str, Callable[[dict[str, Any], dict[str, Any]], dict[str, Any]]] = {
    "sessions": merge_session,
    "llm_calls": merge_llm_call,
    "tool_calls": merge_tool_call,
    "tool_defs": merge_tool_def,
}


@dataclass
class FileBatch:
    """Parsed files with their rows as Arrow tables, ready for one transaction.

    Built where the parsing happened (a worker process, when there are
    several), so the writer only maps file indexes to source ids and loads.
    Until then each row's ``source_id`` holds the index of its file in
    ``outcomes``.
    """

    outcomes: list[FileOutcome]
    tables: dict[str, pa.Table]
    not_logs: list[FileOutcome] = dataclasses.field(default_factory=list)  # counted, nothing written


def build_batch(outcomes: list[FileOutcome]) -> FileBatch:
    """Move the outcomes' rows into Arrow tables (the outcomes keep their counts and problems).

    Files found not to be logs are kept for counting but store nothing.
    """
    not_logs = [o for o in outcomes if o.not_a_log]
    outcomes = [o for o in outcomes if not o.not_a_log]
    rows: dict[str, list[dict[str, Any]]] = {name: [] for name in _SCHEMAS}
    for idx, o in enumerate(outcomes):
        r = o.result
        o.n_sessions, o.n_llm_calls, o.n_tool_calls = len(r.sessions), len(r.llm_calls), len(r.tool_calls)
        for name, items in (
            ("sessions", r.sessions.values()),
            ("llm_calls", r.llm_calls.values()),
            ("tool_calls", r.tool_calls.values()),
            ("tool_defs", r.tool_defs.values()),
            ("session_events", r.events.values()),
        ):
            for item in items:
                item["source_id"] = idx
                rows[name].append(item)
        for p in r.problems:
            rows["ingest_problems"].append(
                {"source_id": idx, "line_no": p.line_no, "byte_offset": p.byte_offset, "kind": p.kind, "message": p.message, "excerpt": p.excerpt}
            )
        r.sessions, r.llm_calls, r.tool_calls, r.tool_defs, r.events = {}, {}, {}, {}, {}
    tables = {name: to_arrow(items, _SCHEMAS[name]) for name, items in rows.items() if items}
    return FileBatch(outcomes, tables, not_logs)


def use_malloc_for_arrow(pool: pa.MemoryPool | None = None) -> pa.MemoryPool:
    """Make Arrow allocate from ``pool`` (default: the C library's malloc); return the pool it used before.

    Arrow's default allocator, mimalloc, takes memory from the system in large segments and keeps them:
    turning the rows of a 58 MB log into 10 MB of Arrow tables grew a parsing process by 48 MB, against
    11 MB with malloc. Ingest's memory budget is for the whole process tree, and every parsing worker
    builds such batches (benchmarks/results-ingest.md).
    """
    previous = pa.default_memory_pool()
    pa.set_memory_pool(pool if pool is not None else pa.system_memory_pool())
    return previous


def to_arrow(items: list[dict[str, Any]], schema: pa.Schema) -> pa.Table:
    """Rows (dicts; missing keys are NULL) as an Arrow table.

    Each row is fetched whole by a C-level ``itemgetter`` and the rows are
    transposed with ``zip``: per-cell Python (``from_pylist``, or a
    comprehension per column) cost ten times more on wide rows.
    """
    names = schema.names
    if not items:
        return schema.empty_table()
    getter = operator.itemgetter(*names)
    template = dict.fromkeys(names)

    def fetch(item: dict[str, Any]) -> tuple[Any, ...]:
        try:
            return getter(item)
        except KeyError:  # a row without some optional columns: they are NULL
            return getter({**template, **item})

    rows = [fetch(item) for item in items]
    columns = zip(*rows) if len(names) > 1 else ([r] for r in rows)
    return pa.table([pa.array(col, type=field.type) for col, field in zip(columns, schema)], schema=schema)


def write_batch(store: Store, batch: FileBatch) -> None:
    """Write a batch of parsed files in one transaction: each file's rows land whole or not at all."""
    with store.transaction():
        ids = _source_ids(store, batch.outcomes)
        _write_sources(store, batch.outcomes, ids)
        bump_data_version(store)
        _write_rows(store, batch, ids)


def _source_ids(store: Store, outcomes: list[FileOutcome]) -> list[int]:
    """The stored id of each file, drawing new ids from the sequence for files never seen."""
    n_new = sum(1 for o in outcomes if o.work.source_id is None)
    new_ids = iter(r[0] for r in store.duck.execute("SELECT nextval('source_id_seq') FROM range(?)", [n_new]).fetchall())
    return [o.work.source_id if o.work.source_id is not None else next(new_ids) for o in outcomes]


def _write_sources(store: Store, outcomes: list[FileOutcome], ids: list[int]) -> None:
    """Insert or update each file's ``sources`` row; a replaced file's old rows are deleted first."""
    duck = store.duck
    now = utc_now()
    new_sources = []
    for o, source_id in zip(outcomes, ids):
        if o.work.kind == "replaced" and o.work.source_id is not None:
            for name in _SCHEMAS:
                duck.execute(f"DELETE FROM {name} WHERE source_id = ?", [source_id])
        row = _source_row(store, o, source_id, now)
        if o.work.source_id is None:
            new_sources.append(row)
        else:
            changed = {c: v for c, v in row.items() if c not in ("source_id", "path")}
            sets = ", ".join(f"{c} = ?" for c in changed)
            duck.execute(f"UPDATE sources SET {sets} WHERE source_id = ?", [*changed.values(), source_id])
    if new_sources:
        _insert_table(store, "sources", to_arrow(new_sources, _SOURCES_SCHEMA))


def _write_rows(store: Store, batch: FileBatch, ids: list[int]) -> None:
    """Load the batch's tables, mapping file indexes to source ids; grown files merge with stored rows."""
    grown = [i for i, o in enumerate(batch.outcomes) if o.work.kind == "grown"]
    id_array = pa.array(ids, pa.int64())
    for name, table in batch.tables.items():
        if grown and name in _KEYS:
            # A grown file may continue a request or tool call stored last time: merge those rows.
            in_grown = pc.is_in(table["source_id"], pa.array(grown, pa.int64()))
            grown_rows = table.filter(in_grown).to_pylist()
            merged: list[dict[str, Any]] = []
            for i in grown:
                file_rows = [dict(item, source_id=ids[i]) for item in grown_rows if item["source_id"] == i]
                merged.extend(_merge_with_stored(store, name, ids[i], file_rows))
            if merged:
                _insert(store, name, merged)
            table = table.filter(pc.invert(in_grown))
        if table.num_rows:
            column = table.schema.get_field_index("source_id")
            table = table.set_column(column, "source_id", pc.take(id_array, table["source_id"]))
            _insert_table(store, name, table)


def _merge_with_stored(store: Store, name: str, source_id: int, items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    if not items:
        return items
    columns = _KEYS[name]
    key_sql = " || chr(0) || ".join(columns)

    def key(row: dict[str, Any]) -> str:
        return "\0".join(row[c] for c in columns)

    duck = store.duck
    found = fetch_dicts(
        store,
        f"SELECT * FROM {name} WHERE source_id = ? AND {key_sql} IN (SELECT unnest(?::VARCHAR[]))",
        [source_id, [key(item) for item in items]],
    )
    stored = {key(row): row for row in found}
    if not stored:
        return items
    duck.execute(
        f"DELETE FROM {name} WHERE source_id = ? AND {key_sql} IN (SELECT unnest(?::VARCHAR[]))", [source_id, list(stored)]
    )
    merge = _MERGE[name]
    return [merge(stored[key(item)], item) if key(item) in stored else item for item in items]


def _insert(store: Store, name: str, items: list[dict[str, Any]]) -> None:
    _insert_table(store, name, to_arrow(items, _SCHEMAS[name]))


def bump_data_version(store: Store) -> None:
    """Mark derived caches (llm_calls_dedup_cache) stale; call inside the writing transaction."""
    store.duck.execute("UPDATE store_state SET value = value + 1 WHERE key = 'data_version'")


def _insert_table(store: Store, name: str, table: pa.Table) -> None:
    view = f"_tokaudit_load_{name}"
    store.relational.register(view, table)
    try:
        store.duck.execute(f"INSERT INTO {name} BY NAME SELECT * FROM {view}")
    finally:
        store.duck.unregister(view)


def _source_row(store: Store, o: FileOutcome, source_id: int, now: Any) -> dict[str, Any]:
    """The file's ``sources`` row after this read; a grown file's counts add to the stored ones."""
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
    return {
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
        # The parser's revision beside its state: a later tokaudit whose parser was fixed reads the file again.
        "parser_state": json.dumps({**r.state, REVISION_KEY: parser_revision(o.format)}, default=str),
        "ingested_at_utc": now,
    }
