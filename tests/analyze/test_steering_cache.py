"""The steering rule's verdicts kept in the store: read back while a session's tool calls hold, computed again when not."""

from __future__ import annotations

import shutil

import polars as pl
import pytest

from tokaudit.analyze import steering_cache
from tokaudit.analyze.audit import run_audit
from tokaudit.analyze.frames import load_frames
from tokaudit.analyze.steering import steering_sql
from tokaudit.ingest.runner import ingest_paths
from tokaudit.simulate import simulate
from tokaudit.store import open_store

SESSIONS = 16


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    """Simulated sessions, half of them attacks (steered loops), with their MCP transcripts."""
    out = tmp_path_factory.mktemp("steering-corpus")
    simulate(out, SESSIONS, seed=7, attack_share=0.5)
    return out


def ingested(corpus, db_path, tmp_path, files=None):
    """A store of the corpus (or of its first ``files`` session logs and all transcripts)."""
    store = open_store(db_path)
    if files is None:
        ingest_paths(store, [corpus / "projects", corpus / "mcp"], workers=1)
    else:
        part = tmp_path / "part"
        logs = sorted((corpus / "projects").rglob("*.jsonl"))
        for log in logs[:files]:
            target = part / log.relative_to(corpus)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(log, target)
        ingest_paths(store, [part / "projects", corpus / "mcp"], workers=1)
    return store


def count(store, table):
    return store.duck.execute(f"SELECT count(*) FROM {table}").fetchall()[0][0]


def test_steering_sql_adds_exactly_the_cached_columns():
    import duckdb

    duck = duckdb.connect()
    duck.execute(
        "CREATE TABLE c AS SELECT 's' AS session_id, 'x' AS tool_call_id, 'a/b' AS tool_key, '{}' AS args_skeleton, "
        "['v'] AS args_values, 3 AS args_bytes, 7 AS args_hash, 'r' AS result_excerpt, 1 AS n"
    )
    added = [d[0] for d in duck.execute(steering_sql("c", "n")).description][9:]
    assert sorted(added) == sorted(steering_cache.STEERING_COLUMNS)


def test_a_second_read_takes_every_verdict_from_the_store_and_gives_the_same_frames(corpus, db_path, tmp_path):
    with ingested(corpus, db_path, tmp_path) as store:
        first = load_frames(store).tools
        sessions = first["session_id"].n_unique()
        assert first["steered"].any(), "the corpus has steered loops"
        assert count(store, "steering_cache") == first.height
        assert count(store, "steering_sessions") == sessions
        # Tampered verdicts are what the next read returns: it reads the store, it does not compute.
        store.duck.execute("UPDATE steering_cache SET steered = NOT steered")
        second = load_frames(store).tools
        assert second.drop("steered").equals(first.drop("steered"))
        assert (second["steered"] != first["steered"]).all()


@pytest.mark.parametrize(
    "change",
    ["result_excerpt = result_excerpt || ' more'",
     # A long text grown in its middle: the head and tail the store keeps are the same, its size is not.
     "args_bytes = args_bytes + 1000"],
)
def test_a_session_whose_calls_changed_is_computed_again_and_only_it(corpus, db_path, tmp_path, change):
    with ingested(corpus, db_path, tmp_path) as store:
        first = load_frames(store).tools
        store.duck.execute("UPDATE steering_cache SET steered = NOT steered")
        changed = first.filter(pl.col("steered"))["session_id"][0]
        # A call changes (as a re-ingested file's would): that session's fingerprint no longer holds.
        store.duck.execute(
            f"UPDATE tool_calls SET {change} WHERE tool_call_id = "
            "(SELECT min(tool_call_id) FROM tool_calls WHERE session_id = ?)",
            [changed],
        )
        again = load_frames(store).tools
        mine = pl.col("session_id") == changed
        assert again.filter(mine)["steered"].equals(first.filter(mine)["steered"])
        assert (again.filter(~mine)["steered"] != first.filter(~mine)["steered"]).all()
        assert count(store, "steering_cache") == first.height


def test_another_rule_version_empties_the_cache(corpus, db_path, tmp_path):
    with ingested(corpus, db_path, tmp_path) as store:
        first = load_frames(store).tools
        store.duck.execute("UPDATE steering_cache SET steered = NOT steered")
        store.duck.execute("UPDATE store_state SET value = 1 WHERE key = 'steering_version'")
        assert load_frames(store).tools["steered"].equals(first["steered"])
        assert count(store, "steering_cache") == first.height


def test_a_read_only_store_computes_without_writing(corpus, db_path, tmp_path):
    ingested(corpus, db_path, tmp_path).close()
    with open_store(db_path, read_only=True) as ro:
        tools = load_frames(ro).tools
        assert tools["steered"].any()
        assert count(ro, "steering_cache") == 0
    with open_store(db_path) as store:
        assert load_frames(store).tools.equals(tools)


def test_an_audit_of_a_grown_store_finds_what_an_audit_without_the_cache_finds(corpus, db_path, tmp_path):
    def findings(result):
        return sorted((f.detector, f.session_id, f.first_turn, f.last_turn, f.metric, round(f.value, 6)) for f in result.findings)

    with ingested(corpus, db_path, tmp_path, files=SESSIONS // 2) as store:
        run_audit(store, save=False, batch_rows=400)
        cached_before = count(store, "steering_sessions")
        ingest_paths(store, [corpus / "projects"], workers=1)
        # Batches mixing sessions read back from the cache and sessions computed now.
        grown = run_audit(store, save=False, batch_rows=400)
        unlinked = count(store, "(SELECT DISTINCT session_id FROM tool_calls WHERE linked_tool_call_id IS NULL)")
        assert cached_before < count(store, "steering_sessions") == unlinked
        store.duck.execute("UPDATE store_state SET value = 1 WHERE key = 'steering_version'")
        scratch = run_audit(store, save=False, batch_rows=400)
    assert findings(grown) and findings(grown) == findings(scratch)


def stamp_holds(store):
    return steering_cache.stamped(store)


def test_a_whole_store_audit_stamps_the_cache_and_later_reads_take_it_without_checking(corpus, db_path, tmp_path):
    with ingested(corpus, db_path, tmp_path) as store:
        assert not stamp_holds(store)
        run_audit(store, save=False, batch_rows=400)
        assert stamp_holds(store)
        first = load_frames(store).tools
        # Verdicts and wording flags are what the store holds: tampered, they are what the next read returns.
        store.duck.execute("UPDATE steering_cache SET steered = NOT steered, has_continuation = NOT has_continuation")
        second = load_frames(store).tools
        assert second.drop("steered", "has_continuation").equals(first.drop("steered", "has_continuation"))
        assert (second["steered"] != first["steered"]).all()
        assert (second["has_continuation"] != first["has_continuation"]).all()


def test_a_windowed_audit_does_not_stamp(corpus, db_path, tmp_path):
    from datetime import datetime, timezone

    with ingested(corpus, db_path, tmp_path) as store:
        run_audit(store, save=False, since=datetime(2000, 1, 1, tzinfo=timezone.utc))
        assert not stamp_holds(store)


def test_an_ingest_after_the_stamp_makes_reads_check_again(corpus, db_path, tmp_path):
    with ingested(corpus, db_path, tmp_path, files=SESSIONS // 2) as store:
        run_audit(store, save=False, batch_rows=400)
        store.duck.execute("UPDATE steering_cache SET steered = NOT steered")
        ingest_paths(store, [corpus / "projects"], workers=1)
        assert not stamp_holds(store)
        # The grown store's read checks fingerprints: the tampered sessions still match theirs (their
        # calls did not change), the new ones are computed; the frame agrees with one computed from scratch.
        grown = load_frames(store).tools
        store.duck.execute("UPDATE store_state SET value = 1 WHERE key = 'steering_version'")
        scratch = load_frames(store).tools
        new = ~pl.col("session_id").is_in(grown.filter(pl.col("steered") != scratch["steered"])["session_id"].unique().to_list())
        assert grown.filter(new).height > 0
        assert grown.filter(new).equals(scratch.filter(new))


def test_a_trusted_read_that_finds_the_cache_out_of_step_computes_the_verdicts(corpus, db_path, tmp_path):
    with ingested(corpus, db_path, tmp_path) as store:
        run_audit(store, save=False, batch_rows=400)
        first = load_frames(store).tools
        victim = first.filter(pl.col("steered"))["session_id"][0]
        # Rows lost behind the store's back (no ingest moved data_version): the stamp still holds, but
        # the stored verdicts no longer line up with the calls.
        store.duck.execute(
            "DELETE FROM steering_cache WHERE session_id = ? AND call_idx = (SELECT max(call_idx) FROM steering_cache WHERE session_id = ?)",
            [victim, victim],
        )
        assert stamp_holds(store)
        assert load_frames(store).tools.equals(first)


def test_linking_a_transcript_moves_the_data_version(corpus, db_path, tmp_path):
    from tokaudit.ingest.link import write_links

    with ingested(corpus, db_path, tmp_path) as store:
        before = store.duck.execute("SELECT value FROM store_state WHERE key = 'data_version'").fetchall()[0][0]
        write_links(store, [])
        assert store.duck.execute("SELECT value FROM store_state WHERE key = 'data_version'").fetchall()[0][0] == before
        source, call = store.duck.execute("SELECT source_id, tool_call_id FROM tool_calls LIMIT 1").fetchall()[0]
        write_links(store, [(source, call, source, call)])
        assert store.duck.execute("SELECT value FROM store_state WHERE key = 'data_version'").fetchall()[0][0] == before + 1
