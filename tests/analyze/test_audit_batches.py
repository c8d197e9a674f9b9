"""A batched audit reads the next batch's frames while the detectors run over the current one."""

from __future__ import annotations

import threading

import pytest

from tokaudit.analyze import audit
from tokaudit.analyze.audit import BATCH_DUCKDB_MEMORY, build_context, capped_duckdb_memory, run_audit, run_detectors
from tokaudit.analyze.detectors import resolve_params
from tokaudit.analyze.frames import load_frames, session_batches
from tokaudit.config import Config
from tokaudit.ingest.runner import ingest_paths
from tokaudit.simulate import simulate
from tokaudit.store import open_store

BATCH_ROWS = 150


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    out = tmp_path_factory.mktemp("batch-corpus")
    simulate(out, 12, seed=11, attack_share=0.5)
    return out


@pytest.fixture
def store(corpus, db_path):
    with open_store(db_path) as store:
        ingest_paths(store, [corpus / "projects", corpus / "mcp"], workers=1)
        yield store


def memory_limit(store):
    return store.duck.execute("SELECT current_setting('memory_limit')").fetchall()[0][0]


def _key(f):
    return (f.detector, f.session_id, f.first_turn, f.last_turn, f.metric, round(f.value, 6), f.excess_tokens)


def test_findings_are_those_of_the_batches_audited_one_after_another(store):
    batches = session_batches(store, None, None, BATCH_ROWS)
    assert batches and len(batches) >= 3
    params = resolve_params(Config().detectors)
    one_by_one = []
    for batch in batches:
        found, _ = run_detectors(build_context(load_frames(store, batch=batch), params["cost_blowup"].min_cohort), params)
        one_by_one += found
    result = run_audit(store, save=False, batch_rows=BATCH_ROWS)
    assert one_by_one
    # (Within a batch, detectors list their findings in no fixed order: polars groups them.)
    assert sorted(map(_key, result.findings)) == sorted(map(_key, one_by_one))


def test_the_next_batch_is_read_while_the_detectors_run(store, monkeypatch):
    second_read_started = threading.Event()
    overlapped = []
    reads = []

    def load(*args, **kwargs):
        reads.append(kwargs["batch"])
        if len(reads) == 2:
            second_read_started.set()
        return load_frames(*args, **kwargs)

    def detect(context, params, only=None):
        if not overlapped:
            # Without a reader ahead of the detectors, the second batch is read only after this returns.
            overlapped.append(second_read_started.wait(timeout=30))
        return run_detectors(context, params, only)

    monkeypatch.setattr(audit, "load_frames", load)
    monkeypatch.setattr(audit, "run_detectors", detect)
    run_audit(store, save=False, batch_rows=BATCH_ROWS)
    assert overlapped == [True]
    expected = session_batches(store, None, None, BATCH_ROWS)
    assert [set(b.sessions) for b in reads] == [set(b.sessions) for b in expected]  # each batch read once, in order


def test_a_failed_read_stops_the_audit_with_its_error_and_restores_duckdb_memory(store, monkeypatch):
    limit = memory_limit(store)
    reads = []

    def load(*args, **kwargs):
        reads.append(kwargs["batch"])
        if len(reads) == 2:
            raise OSError("disk gone")
        return load_frames(*args, **kwargs)

    monkeypatch.setattr(audit, "load_frames", load)
    with pytest.raises(OSError, match="disk gone"):
        run_audit(store, save=False, batch_rows=BATCH_ROWS)
    assert len(reads) == 2  # no batch read after the failure
    assert memory_limit(store) == limit


def test_batches_are_listed_under_the_memory_cap(store, monkeypatch):
    """Listing the batches of a large store may rebuild the deduplicated copy of its requests: a big sort."""
    seen = []

    def listing(*args, **kwargs):
        seen.append(memory_limit(store))
        return session_batches(*args, **kwargs)

    monkeypatch.setattr(audit, "session_batches", listing)
    before = memory_limit(store)
    run_audit(store, save=False, batch_rows=BATCH_ROWS)
    with capped_duckdb_memory(store, BATCH_DUCKDB_MEMORY):
        capped = memory_limit(store)
    assert seen == [capped] and capped != before


def test_the_steering_rule_gets_more_memory_than_the_batches_cap_while_it_runs(store, monkeypatch):
    """Under the audit's cap, the rule's windows spill their sorts to disk; the rule runs under a larger limit,
    and the cap holds again for the reads after it."""
    from tokaudit.analyze import frames

    rule_limits, other_limits = [], []

    def fetch(store_, sql, params=None):
        (rule_limits if "same_shape" in sql else other_limits).append(memory_limit(store_))
        return frames_fetch(store_, sql, params)

    frames_fetch = frames.fetch_frame
    monkeypatch.setattr(frames, "fetch_frame", fetch)
    run_audit(store, save=False, batch_rows=BATCH_ROWS)
    with capped_duckdb_memory(store, frames.STEERING_DUCKDB_MEMORY):
        raised = memory_limit(store)
    with capped_duckdb_memory(store, BATCH_DUCKDB_MEMORY):
        capped = memory_limit(store)
    assert len(rule_limits) == len(session_batches(store, None, None, BATCH_ROWS))  # every batch computed its verdicts
    assert set(rule_limits) == {raised} and raised != capped
    assert set(other_limits) == {capped}
