"""The no-op shortcut: an ingest with nothing new answers from the stat snapshot, and only then."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest

from tests.conftest import FIXTURES
from tests.ingest.helpers import claude_assistant
from tokaudit.ingest import statcache
from tokaudit.ingest.run import ingest_db
from tokaudit.store import open_store


@pytest.fixture
def logs(tmp_path):
    root = tmp_path / "logs"
    shutil.copytree(FIXTURES / "claude-code", root)
    return root


def test_unchanged_run_does_not_open_the_database(db_path, logs):
    first = ingest_db(db_path, [logs])
    assert first.files_new == 5 and statcache.snapshot_path(db_path).exists()
    holder = subprocess.Popen(
        [sys.executable, "-c", f"import duckdb, time; c = duckdb.connect({db_path!r}); print('locked', flush=True); time.sleep(30)"],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "locked"
        again = ingest_db(db_path, [logs])  # would raise DatabaseLockedError if it opened the file
    finally:
        holder.kill()
        holder.wait()
    assert (again.files_unchanged, again.lines_read, again.files_new) == (5, 0, 0)


def test_any_change_takes_the_normal_path(db_path, logs):
    ingest_db(db_path, [logs])
    session = next(logs.rglob("*.jsonl"))
    with open(session, "a") as f:
        f.write(json.dumps(claude_assistant("m-extra", "r-extra"), separators=(",", ":")) + "\n")
    grown = ingest_db(db_path, [logs])
    assert grown.files_grown == 1 and grown.lines_read == 1
    (logs / "new.jsonl").write_text(json.dumps(claude_assistant("m-n", "r-n"), separators=(",", ":")) + "\n")
    assert ingest_db(db_path, [logs]).files_new == 1
    assert ingest_db(db_path, [logs]).files_unchanged == 6


def test_a_fixed_parser_takes_the_normal_path_and_reads_its_files_again(db_path, logs, monkeypatch):
    import tokaudit.ingest as formats

    ingest_db(db_path, [logs])
    assert ingest_db(db_path, [logs]).files_unchanged == 5
    monkeypatch.setitem(formats._REVISIONS, "claude-code", formats.parser_revision("claude-code") + 1)
    again = ingest_db(db_path, [logs])
    assert (again.files_reparsed, again.files_unchanged) == (5, 0) and again.lines_read > 0
    assert ingest_db(db_path, [logs]).files_unchanged == 5


def test_another_writer_invalidates_the_snapshot(db_path, logs, tmp_path):
    ingest_db(db_path, [logs])
    other = tmp_path / "other.jsonl"
    other.write_text(json.dumps(claude_assistant("m-o", "r-o"), separators=(",", ":")) + "\n")
    with open_store(db_path) as store:  # a writer that does not refresh the snapshot
        from tokaudit.ingest.runner import ingest_paths

        ingest_paths(store, [other])
    os.utime(db_path, ns=(1, 1))  # whatever the writer did, the file's stat moved
    again = ingest_db(db_path, [logs])
    assert again.files_unchanged == 5  # answered by the database itself, still correct


def test_failed_files_are_never_short_cut(db_path, tmp_path):
    (tmp_path / "junk.jsonl").write_text('{"not":"a log"}\n')
    assert ingest_db(db_path, [tmp_path]).files_failed == 1
    assert ingest_db(db_path, [tmp_path]).files_failed == 1  # tried again, not "unchanged"


def test_in_memory_databases_have_no_snapshot(logs):
    assert ingest_db(":memory:", [logs]).files_new == 5
