"""Incremental ingest: idempotence, appends, rewrites, partial lines, bad files, workers, crashes."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import FIXTURES, snapshot
from tests.ingest.helpers import claude_assistant, claude_user_result
from tokaudit.ingest.runner import ingest_paths
from tokaudit.store import open_store
from tokaudit.store.queries import table_counts


def jsonl(*objs) -> bytes:
    import json

    return b"".join(json.dumps(o, separators=(",", ":")).encode() + b"\n" for o in objs)


def totals(store) -> tuple:
    return store.duck.execute(
        "SELECT count(*), sum(input_tokens), sum(cache_read_tokens), sum(cache_write_5m_tokens + cache_write_1h_tokens), sum(output_tokens) "
        "FROM llm_calls_dedup"
    ).fetchall()[0]


@pytest.fixture
def logs(tmp_path) -> Path:
    root = tmp_path / "logs"
    shutil.copytree(FIXTURES / "claude-code", root / "claude-code")
    shutil.copytree(FIXTURES / "codex", root / "codex")
    return root


def test_ingesting_twice_changes_nothing(store, logs):
    first = ingest_paths(store, [logs])
    before = snapshot(store)
    second = ingest_paths(store, [logs])
    assert first.files_new == 8 and first.llm_calls > 0
    assert second.files_unchanged == 8 and second.lines_read == 0
    assert snapshot(store) == before


def test_files_an_older_parser_read_are_read_again_once_and_give_the_same_rows(store, logs, monkeypatch):
    """A parser fix (its revision raised) re-reads that format's files, unchanged or not, once; the rows of a
    fix that changes nothing stay the same, and the other formats' files are not touched."""
    import tokaudit.ingest as formats

    ingest_paths(store, [logs])
    before = snapshot(store)
    codex_files = store.duck.execute("SELECT count(*) FROM sources WHERE format = 'codex'").fetchone()[0]
    monkeypatch.setitem(formats._REVISIONS, "codex", formats.parser_revision("codex") + 1)
    again = ingest_paths(store, [logs])
    assert codex_files > 0
    assert (again.files_reparsed, again.files_replaced, again.files_unchanged) == (codex_files, codex_files, 8 - codex_files)
    after = snapshot(store)
    assert {t: rows for t, rows in after.items() if t != "sources"} == {t: rows for t, rows in before.items() if t != "sources"}
    revisions = dict(store.duck.execute(f"SELECT format, max(json_extract_string(parser_state, '$.{formats.REVISION_KEY}')) FROM sources GROUP BY ALL").fetchall())
    assert revisions["codex"] == str(formats.parser_revision("codex")) and revisions["claude-code"] == str(formats.parser_revision("claude-code"))
    third = ingest_paths(store, [logs])
    assert third.files_unchanged == 8 and third.lines_read == 0


def test_appending_lines_adds_exactly_those(tmp_path, logs, db_path):
    session = next((logs / "claude-code").rglob("*.jsonl"))
    full = session.read_bytes()
    lines = full.splitlines(keepends=True)
    cut = len(lines) // 2
    session.write_bytes(b"".join(lines[:cut]))
    with open_store(db_path) as store:
        ingest_paths(store, [logs])
        session.write_bytes(full)  # the rest of the session arrives
        summary = ingest_paths(store, [logs])
        assert summary.files_grown == 1 and summary.files_unchanged == 7
        assert summary.lines_read == len(lines) - cut
        incremental = snapshot(store)
    with open_store(str(tmp_path / "clean.duckdb")) as clean:
        ingest_paths(clean, [logs])
        expected = snapshot(clean)
    # Row content equals a single clean ingest (source rows differ only in when/how they were read).
    for table in ("sessions", "llm_calls", "tool_calls", "session_events", "ingest_problems"):
        assert incremental[table] == expected[table], table


def test_a_request_split_across_two_runs_is_merged_keep_max(store, tmp_path):
    path = tmp_path / "projects" / "p" / "s1.jsonl"
    path.parent.mkdir(parents=True)
    use = {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "ls"}}
    path.write_bytes(jsonl(claude_assistant(out=3, blocks=[{"type": "text", "text": "x"}])))
    ingest_paths(store, [path])
    with open(path, "ab") as f:
        f.write(jsonl(claude_assistant(out=250, stop="tool_use", blocks=[use]), claude_user_result("toolu_1", "a.txt")))
    ingest_paths(store, [path])
    assert store.duck.execute("SELECT count(*), sum(output_tokens) FROM llm_calls").fetchall() == [(1, 250)]
    row = store.duck.execute("SELECT tool_name, result_bytes, duration_ms FROM tool_calls").fetchall()
    assert row == [("Bash", 5, 2500)]


def test_rewritten_or_shrunk_file_is_replaced(store, tmp_path):
    path = tmp_path / "s.jsonl"
    path.write_bytes(jsonl(claude_assistant("m1", "r1"), claude_assistant("m2", "r2")))
    ingest_paths(store, [path])
    path.write_bytes(jsonl(claude_assistant("m9", "r9", out=77)))  # shorter, different head
    summary = ingest_paths(store, [path])
    assert summary.files_replaced == 1
    assert store.duck.execute("SELECT call_key, output_tokens FROM llm_calls").fetchall() == [("claude:m9:r9", 77)]
    assert store.duck.execute("SELECT lines_read FROM sources").fetchall() == [(1,)]


def test_partial_last_line_waits_for_its_newline(store, tmp_path):
    path = tmp_path / "s.jsonl"
    whole = jsonl(claude_assistant("m1", "r1"), claude_assistant("m2", "r2"))
    path.write_bytes(whole[:-40])  # the second line is still being written
    first = ingest_paths(store, [path])
    assert (first.lines_read, first.lines_problem, first.lines_pending) == (1, 0, 1)
    path.write_bytes(whole)
    second = ingest_paths(store, [path])
    assert (second.files_grown, second.lines_read, second.lines_problem) == (1, 1, 0)
    assert store.duck.execute("SELECT count(*) FROM llm_calls").fetchall() == [(2,)]


def test_over_long_lines_are_problems_and_reading_goes_on(store, tmp_path):
    path = tmp_path / "s.jsonl"
    huge = claude_assistant("big", "r", blocks=[{"type": "text", "text": "x" * 50_000}])
    path.write_bytes(jsonl(claude_assistant("m1", "r1"), huge, claude_assistant("m2", "r2")))
    summary = ingest_paths(store, [path], max_line_bytes=10_000)
    assert [(p.line_no, p.kind) for _, p in summary.problems] == [(2, "line-too-long")]
    assert summary.lines_read == 3 and summary.llm_calls == 2


def test_unreadable_and_unknown_files_are_recorded_and_the_run_goes_on(store, tmp_path):
    good = tmp_path / "good.jsonl"
    good.write_bytes(jsonl(claude_assistant()))
    unknown = tmp_path / "other.jsonl"
    unknown.write_bytes(b'{"hello":"world"}\n')
    locked = tmp_path / "locked.jsonl"
    locked.write_bytes(jsonl(claude_assistant("m2", "r2")))
    locked.chmod(0)
    try:
        summary = ingest_paths(store, [tmp_path])
    finally:
        locked.chmod(0o644)
    kinds = {Path(path).name: p.kind for path, p in summary.problems}
    assert kinds["other.jsonl"] == "unknown-format"
    if os.geteuid() != 0:  # root can read anything
        assert kinds["locked.jsonl"] == "unreadable-file"
    assert summary.llm_calls >= 1
    assert store.duck.execute("SELECT count(*) FROM ingest_problems WHERE line_no = 0").fetchall()[0][0] >= 1
    # Failed files are tried again (and fail again, recorded once, not twice); good files are not re-read.
    # (locked.jsonl is readable again now: if it failed before, this run reads it.)
    again = ingest_paths(store, [tmp_path])
    assert again.files_failed == 1
    assert again.files_unchanged >= 1  # good.jsonl is not re-read
    assert store.duck.execute("SELECT count(*) FROM ingest_problems WHERE kind = 'unknown-format'").fetchall()[0][0] == 1


def test_every_line_is_accounted_for_in_sources(store, logs):
    ingest_paths(store, [logs, FIXTURES / "bad"])
    rows = store.duck.execute("SELECT path, lines_read, lines_ok, lines_skipped, lines_problem FROM sources").fetchall()
    for path, read, ok, skipped, problem in rows:
        assert read == ok + skipped + problem, path
        complete_lines = Path(path).read_bytes().count(b"\n")
        assert read == complete_lines, path  # every complete line counted once


def test_workers_give_the_same_rows(tmp_path, logs, monkeypatch):
    import tokaudit.ingest.runner as runner

    monkeypatch.setattr(runner, "WORKER_CHUNK_FILES", 2)
    with open_store(str(tmp_path / "one.duckdb")) as one:
        ingest_paths(one, [logs])
        expected = snapshot(one)
    with open_store(str(tmp_path / "two.duckdb")) as two:
        ingest_paths(two, [logs], workers=2)
        got = snapshot(two)
    for table in ("sessions", "llm_calls", "tool_calls", "session_events", "ingest_problems"):
        assert got[table] == expected[table], table


def test_a_bulk_load_caps_memory_and_gives_the_settings_back(tmp_path, logs, monkeypatch):
    import pyarrow as pa

    import tokaudit.store.load as load

    seen = []
    write_batch = load.write_batch

    def spy(store, batch):
        setting = store.duck.execute("SELECT current_setting('memory_limit')").fetchall()[0][0]
        seen.append((setting, pa.default_memory_pool().backend_name))
        write_batch(store, batch)

    monkeypatch.setattr(load, "write_batch", spy)
    pool = pa.default_memory_pool().backend_name
    for db in (str(tmp_path / "file.duckdb"), ":memory:"):
        with open_store(db) as store:
            limit = store.duck.execute("SELECT current_setting('memory_limit')").fetchall()[0][0]
            ingest_paths(store, [logs])
            assert store.duck.execute("SELECT current_setting('memory_limit')").fetchall()[0][0] == limit
    assert pa.default_memory_pool().backend_name == pool
    # Arrow tables built with malloc; DuckDB's cache capped lower for a file, whose rows can go to disk.
    assert set(seen) == {("61.0 MiB", "system"), ("244.1 MiB", "system")}


def _many_files(root: Path, n_files: int) -> None:
    for i in range(n_files):
        path = root / "projects" / f"p{i % 7}" / f"s{i}.jsonl"
        path.parent.mkdir(parents=True, exist_ok=True)
        objs = []
        for j in range(40):
            objs.append(claude_assistant(f"m{i}_{j}", f"r{i}_{j}", out=j + i, session=f"s{i}", blocks=[{"type": "text", "text": "y" * 2000}]))
        path.write_bytes(jsonl(*objs))


def _processes_mentioning(text: str) -> list[int]:
    """Live processes whose command line contains ``text`` (Linux /proc)."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and text.encode() in (entry / "cmdline").read_bytes():
                state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
                if state != "Z":  # a zombie is dead, only not yet reaped
                    found.append(int(entry.name))
        except OSError:
            continue  # it exited meanwhile
    return found


def test_kill_9_mid_ingest_then_rerun_equals_one_clean_run(tmp_path):
    logs = tmp_path / "many"
    _many_files(logs, 600)
    clean_db, crash_db = str(tmp_path / "clean.duckdb"), str(tmp_path / "crash.duckdb")
    with open_store(clean_db) as clean:
        ingest_paths(clean, [logs])
        expected = totals(clean)
    cmd = [sys.executable, "-m", "tokaudit.cli", "ingest", "--quiet", "--db", crash_db, str(logs)]
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    killed_mid_run = False
    for delay in (0.6, 1.2, 2.0):
        proc = subprocess.Popen(cmd, env=env)
        time.sleep(delay)
        if proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
            killed_mid_run = True
        proc.wait()
    assert killed_mid_run, "ingest finished before it could be killed; make the corpus larger"
    # Its worker processes (same command line) notice and exit rather than wait forever.
    deadline = time.monotonic() + 10
    while _processes_mentioning(crash_db) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not _processes_mentioning(crash_db)
    with open_store(crash_db) as crashed:
        ingest_paths(crashed, [logs])
        assert totals(crashed) == expected
        counts = table_counts(crashed)
    assert counts["sources"] == 600


def test_huge_snapshot_lines_are_skipped_by_rule_not_problems(store, tmp_path):
    """ccusage#873: file-history-snapshot lines of hundreds of MB; tokaudit streams past them."""
    import json as _json

    snapshot = {"type": "file-history-snapshot", "messageId": "m", "snapshot": {"blob": "x" * 50_000}}
    path = tmp_path / "s.jsonl"
    path.write_bytes(jsonl(claude_assistant("m1", "r1")) + _json.dumps(snapshot, separators=(",", ":")).encode() + b"\n" + jsonl(claude_assistant("m2", "r2")))
    summary = ingest_paths(store, [path], max_line_bytes=10_000)
    assert summary.lines_problem == 0 and summary.skipped_by_rule["type:file-history-snapshot"] == 1
    assert summary.lines_read == 3 and summary.llm_calls == 2


def test_every_format_ingests_once_and_resumes_to_the_same_rows(store, tmp_path):
    """All fixtures of every format: a second run changes nothing, and files touched (same bytes, new
    mtime) are read again to identical rows. (Each format's tests check that a file parsed in two
    pieces, at every cut, gives the rows of one parse.)"""
    from tests.conftest import snapshot
    from tokaudit.ingest import INGESTERS

    root = tmp_path / "all"
    for fmt in INGESTERS:
        shutil.copytree(FIXTURES / fmt, root / fmt)
    first = ingest_paths(store, [root], workers=1)
    before = snapshot(store)
    assert first.files_new > 0 and first.files_failed == 0
    again = ingest_paths(store, [root], workers=1)
    assert again.lines_read == 0 and snapshot(store) == before
    # Touch every file: same content, so each is re-read (grown by zero bytes) and nothing changes.
    for path in root.rglob("*"):
        if path.is_file():
            os.utime(path, ns=(path.stat().st_atime_ns, path.stat().st_mtime_ns + 1_000_000_000))
    ingest_paths(store, [root], workers=1)
    after = snapshot(store)
    assert {k: v for k, v in after.items() if k != "sources"} == {k: v for k, v in before.items() if k != "sources"}


def test_a_line_nested_too_deep_at_a_files_head_is_a_problem_not_a_crash(store, tmp_path):
    logs = tmp_path / "projects" / "p"
    logs.mkdir(parents=True)
    deep = b"[" * 5000 + b"]" * 5000  # deeper than a decoder recurses, short enough to sit in the sniffed head
    (logs / "deep.jsonl").write_bytes(deep + b"\n" + jsonl(claude_assistant(out=5)))
    (logs / "ok.jsonl").write_bytes(jsonl(claude_assistant("m2", "r2", out=7)))
    summary = ingest_paths(store, [tmp_path])
    assert summary.files_new == 2 and summary.llm_calls == 2  # the sniff passes over the deep line; both files are read
    kinds = [r[0] for r in store.duck.execute("SELECT kind FROM ingest_problems").fetchall()]
    assert len(kinds) == 1 and summary.lines_problem == 1


def test_a_fifo_named_like_a_log_is_not_walked_into(tmp_path):
    from tokaudit.ingest.discover import discover

    (tmp_path / "s.jsonl").write_bytes(jsonl(claude_assistant(out=1)))
    os.mkfifo(tmp_path / "pipe.jsonl")  # opening it for reading would block until a writer comes
    assert discover([tmp_path]).files == [str(tmp_path / "s.jsonl")]


def test_a_symlinked_folder_is_walked_once_and_links_that_lead_nowhere_are_reported(tmp_path):
    from tokaudit.ingest.discover import discover

    real = tmp_path / "elsewhere" / "proj"
    real.mkdir(parents=True)
    (real / "s.jsonl").write_bytes(jsonl(claude_assistant(out=1)))
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "proj-link").symlink_to(real)  # a projects folder kept elsewhere and linked in
    (logs / "up").symlink_to(logs)  # a link back up the tree must not loop
    (logs / "gone.jsonl").symlink_to(tmp_path / "deleted.jsonl")
    (logs / "loop.jsonl").symlink_to(logs / "loop.jsonl")
    (logs / "notes.txt").symlink_to(tmp_path / "deleted.txt")  # not a log name: no one asked for it
    found = discover([logs])
    assert found.files == [str(real / "s.jsonl")]
    assert sorted(Path(p).name for p, _ in found.unreadable) == ["gone.jsonl", "loop.jsonl"]
    assert all("leads nowhere" in reason for _, reason in found.unreadable)


def test_a_folder_that_cannot_be_listed_is_reported_and_fails_strict(tmp_path, monkeypatch):
    from click.testing import CliRunner

    from tokaudit.cli import cli

    logs = tmp_path / "logs"
    (logs / "locked").mkdir(parents=True)
    (logs / "s.jsonl").write_bytes(jsonl(claude_assistant(out=1)))
    scandir = os.scandir

    def denied(path):  # what chmod 000 does to anyone but root (the tests may run as root)
        if os.fspath(path) == str(logs / "locked"):
            raise PermissionError(13, "Permission denied", os.fspath(path))
        return scandir(path)

    monkeypatch.setattr(os, "scandir", denied)
    result = CliRunner().invoke(cli, ["ingest", "--strict", "--json", "--db", str(tmp_path / "t.duckdb"), str(logs)])
    out = json.loads(result.output)
    assert result.exit_code == 1 and out["files"]["new"] == 1
    assert out["unreadable_paths"] == [{"path": str(logs / "locked"), "reason": "cannot list folder: Permission denied"}]


def test_a_byte_order_mark_opens_the_file_and_is_not_part_of_its_first_line(tmp_path):
    rollout = next((FIXTURES / "codex").rglob("*.jsonl"))
    plain, marked = tmp_path / "plain" / rollout.name, tmp_path / "marked" / rollout.name
    plain.parent.mkdir()
    marked.parent.mkdir()
    plain.write_bytes(rollout.read_bytes())
    marked.write_bytes(b"\xef\xbb\xbf" + rollout.read_bytes())
    with open_store(str(tmp_path / "a.duckdb")) as a, open_store(str(tmp_path / "b.duckdb")) as b:
        ingest_paths(a, [plain])
        summary = ingest_paths(b, [marked])
        assert summary.lines_problem == 0
        want, got = snapshot(a), snapshot(b)
    for table in ("sessions", "llm_calls", "tool_calls", "session_events"):
        assert got[table] == want[table], table


def test_final_reads_a_last_line_left_without_its_newline_once(tmp_path):
    log = tmp_path / "s.jsonl"
    log.write_bytes(jsonl(claude_assistant(out=3)) + jsonl(claude_assistant("m2", "r2", out=5)).rstrip(b"\n"))
    with open_store(str(tmp_path / "t.duckdb")) as store:
        first = ingest_paths(store, [log])
        assert (first.llm_calls, first.lines_pending) == (1, 1)  # maybe still being written: left for later
        final = ingest_paths(store, [log], final=True)
        assert (final.files_grown, final.llm_calls, final.lines_pending) == (1, 1, 0)
        again = ingest_paths(store, [log], final=True)
        assert (again.files_unchanged, again.lines_read) == (1, 0)
        assert store.duck.execute("SELECT sum(output_tokens), count(*) FROM llm_calls").fetchall() == [(8, 2)]


def test_a_forced_format_that_uses_nothing_is_called_out_and_fails_strict(tmp_path):
    from click.testing import CliRunner

    from tokaudit.cli import cli

    rollouts = str(FIXTURES / "codex")
    args = ["ingest", "--strict", "--json", "--format", "claude-code", "--db", str(tmp_path / "t.duckdb"), rollouts]
    result = CliRunner().invoke(cli, args)
    out = json.loads(result.output)
    assert out["lines"]["used"] == 0 and out["format_doubts"] and result.exit_code == 1
    assert all("it looks like a codex log" in d["reason"] for d in out["format_doubts"])
    right = CliRunner().invoke(cli, [*args[:4], "codex", "--db", str(tmp_path / "u.duckdb"), rollouts])
    assert right.exit_code == 0 and json.loads(right.output)["format_doubts"] == []
