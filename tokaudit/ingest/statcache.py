"""A stat snapshot of the files a database holds, so an ingest with nothing new can answer without opening it.

After every ingest into a database file, tokaudit writes ``<db>.files`` beside
it: the size and mtime of every source file it has stored, and the size and
mtime of the database file itself once closed. The next ingest first walks
and stats the requested files; when every one of them is in the snapshot with
the same size and mtime (and none had failed), and the database file is
exactly as the snapshot left it, and the parsers are those that read the files
(``ingest.parser_revisions``), there is nothing to read and the run reports
all files unchanged without importing DuckDB (~0.25 s) or opening the
database. Any difference — a changed file, a new file, another writer having
touched the database, a missing or unreadable snapshot — falls back to the
normal path, which is authoritative and rewrites the snapshot. Agent hooks
that run ``tokaudit ingest`` after every turn are the case this serves.
"""

from __future__ import annotations

import os
from pathlib import Path

import msgspec

from tokaudit.ingest import parser_revisions
from tokaudit.ingest.discover import Discovery
from tokaudit.ingest.summary import IngestSummary

SNAPSHOT_SUFFIX = ".files"
_VERSION = 2


class Snapshot(msgspec.Struct):
    version: int
    db_size_bytes: int
    db_mtime_ns: int
    files: dict[str, tuple[int, int]]  # path -> (size_bytes, mtime_ns) of files ingested without failure
    parser_revisions: dict[str, int]  # format -> revision of the parser that read its files


def snapshot_path(db_path: str) -> Path:
    return Path(db_path + SNAPSHOT_SUFFIX)


def save(db_path: str, sources: list[tuple[str, int, int, str]]) -> None:
    """Record ``(path, size, mtime, format)`` rows; call after the database is closed (its checkpoint moves its mtime)."""
    try:
        st = os.stat(db_path)
    except OSError:
        return
    files = {path: (size, mtime) for path, size, mtime, fmt in sources if fmt != "unknown"}
    data = msgspec.json.encode(Snapshot(_VERSION, st.st_size, st.st_mtime_ns, files, parser_revisions()))
    target = snapshot_path(db_path)
    tmp = target.with_name(target.name + ".tmp")
    try:
        tmp.write_bytes(data)
        os.replace(tmp, target)  # atomic: a reader sees the old snapshot or the new one
    except OSError:
        return  # the snapshot is an optimisation; without it the normal path runs


def unchanged_summary(db_path: str, found: Discovery) -> IngestSummary | None:
    """A summary saying every file is unchanged, if the snapshot proves it; else None (take the normal path)."""
    try:
        snap = msgspec.json.decode(snapshot_path(db_path).read_bytes(), type=Snapshot)
        st = os.stat(db_path)
    except (OSError, msgspec.DecodeError):
        return None
    if snap.version != _VERSION or (st.st_size, st.st_mtime_ns) != (snap.db_size_bytes, snap.db_mtime_ns):
        return None
    if snap.parser_revisions != parser_revisions():
        return None  # a fixed parser: the normal path reads its format's files again
    if os.path.exists(db_path + ".wal"):
        return None  # uncommitted-to-file changes: let DuckDB replay them
    known = snap.files
    for path in found.files:
        try:
            fst = os.stat(path)
        except OSError:
            return None
        if known.get(path) != (fst.st_size, fst.st_mtime_ns):
            return None
    return IngestSummary.of_discovery(found, files_unchanged=len(found.files))
