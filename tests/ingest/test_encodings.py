"""Logs as they arrive from other machines: gzip-archived, with bare carriage returns, in UTF-16."""

from __future__ import annotations

import gzip
import shutil

import pytest

from tests.conftest import FIXTURES, snapshot
from tokaudit.ingest.discover import discover
from tokaudit.ingest.runner import ingest_paths

CLAUDE_LOG = next((FIXTURES / "claude-code" / "projects").glob("*/*.jsonl"))
CODEX_LOG = next((FIXTURES / "codex" / "sessions").rglob("*.jsonl"))

_TOTALS = "SELECT count(*), sum(input_tokens), sum(cache_read_tokens), sum(output_tokens) FROM llm_calls_dedup"


def _plain_totals(tmp_path, log) -> tuple:
    from tokaudit.store import open_store

    with open_store(str(tmp_path / "plain.duckdb")) as plain:
        ingest_paths(plain, [log])
        return plain.duck.execute(_TOTALS).fetchone()


@pytest.mark.parametrize("log", [CLAUDE_LOG, CODEX_LOG], ids=["claude-code", "codex"])
def test_a_gzipped_log_reads_as_the_log_it_holds(store, tmp_path, log):
    folder = tmp_path / "archive" / log.parent.name
    folder.mkdir(parents=True)
    packed = folder / (log.name + ".gz")
    packed.write_bytes(gzip.compress(log.read_bytes()))

    assert discover([tmp_path / "archive"]).files == [str(packed)]
    summary = ingest_paths(store, [tmp_path / "archive"])
    assert summary.files_new == 1 and summary.lines_problem == 0 and summary.files_failed == 0
    got = store.duck.execute(_TOTALS).fetchone()
    assert got == _plain_totals(tmp_path, log) and got[0] > 0
    # The session is named from the log's own name, not from the archive's.
    (session,) = store.duck.execute("SELECT DISTINCT session_id FROM llm_calls_dedup").fetchone()
    assert ".gz" not in session and ".jsonl" not in session

    before = snapshot(store)
    again = ingest_paths(store, [tmp_path / "archive"])
    assert again.files_unchanged == 1 and snapshot(store) == before


def test_a_replaced_archive_is_read_again_whole(store, tmp_path):
    packed = tmp_path / "p" / (CLAUDE_LOG.name + ".gz")
    packed.parent.mkdir()
    lines = CLAUDE_LOG.read_bytes().splitlines(keepends=True)
    packed.write_bytes(gzip.compress(b"".join(lines[: len(lines) // 2])))
    ingest_paths(store, [packed])
    packed.write_bytes(gzip.compress(b"".join(lines)))
    summary = ingest_paths(store, [packed])
    assert summary.files_replaced == 1
    assert store.duck.execute(_TOTALS).fetchone() == _plain_totals(tmp_path, CLAUDE_LOG)


def test_a_truncated_archive_keeps_the_lines_before_the_damage(store, tmp_path):
    whole = gzip.compress(CLAUDE_LOG.read_bytes())
    packed = tmp_path / (CLAUDE_LOG.name + ".gz")
    packed.write_bytes(whole[: len(whole) * 2 // 3])

    summary = ingest_paths(store, [packed])
    kinds = [p.kind for _, p in summary.problems]
    assert kinds[-1] == "corrupt-compressed-file"
    assert summary.lines_ok > 0
    assert summary.lines_read == summary.lines_ok + summary.lines_skipped + summary.lines_problem
    (requests,) = store.duck.execute("SELECT count(*) FROM llm_calls_dedup").fetchone()
    assert 0 < requests < _plain_totals(tmp_path, CLAUDE_LOG)[0]


def test_a_gz_name_on_plain_bytes_fails_with_its_reason(store, tmp_path):
    fake = tmp_path / "notes.jsonl.gz"
    shutil.copyfile(CLAUDE_LOG, fake)
    summary = ingest_paths(store, [fake])
    assert summary.files_failed == 1
    (problem,) = [p for _, p in summary.problems]
    assert problem.kind == "unreadable-file" and "decompress" in problem.message


def test_bare_carriage_returns_end_lines(store, tmp_path):
    text = CLAUDE_LOG.read_bytes()
    mac = tmp_path / CLAUDE_LOG.name
    mac.write_bytes(text.replace(b"\n", b"\r"))

    summary = ingest_paths(store, [mac])
    assert summary.lines_pending == 0 and summary.lines_problem == 0
    assert summary.lines_read == text.count(b"\n")
    assert store.duck.execute(_TOTALS).fetchone() == _plain_totals(tmp_path, CLAUDE_LOG)


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-le", "utf-32"])
def test_a_wide_encoding_is_named_with_the_fix(store, tmp_path, encoding):
    wide = tmp_path / "session.jsonl"
    wide.write_bytes(CLAUDE_LOG.read_text(encoding="utf-8").encode(encoding))
    summary = ingest_paths(store, [wide])
    assert summary.files_failed == 1
    (problem,) = [p for _, p in summary.problems]
    assert problem.kind == "unsupported-encoding"
    assert encoding.upper()[:6] in problem.message and "iconv" in problem.message
