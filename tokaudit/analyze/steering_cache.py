"""The steering rule's verdicts, kept in the store from one audit to the next.

``analyze.steering.steering_sql`` compares every tool call with the calls before it in its session:
three window partitionings over all calls and a rule per argument value, most of a large audit's
time (``benchmarks/results-detectors-speed.md``). Its verdicts depend on nothing but the session's
own tool calls as ``store.queries.tool_calls_sql`` folds them. So an audit stores them per session
(``steering_cache``) beside a fingerprint of exactly those inputs (``steering_sessions``), and later
audits read them back for every session whose fingerprint still holds. A scheduled audit over a
growing fleet then computes the rule for the sessions ingested since, not for the whole store.

* A session that gained, lost or changed a tool call (a grown log, a re-ingested file, a linked
  MCP transcript filling a call's server) no longer matches its fingerprint: computed again.
* A change to the rule's SQL, or to DuckDB (whose ``hash`` the verdicts hold), changes
  ``rule_version``: the first audit after it empties the cache.
* A read-only store is read, never written: sessions without valid verdicts are computed for
  that audit only.

Checking the fingerprints costs a pass over the folded tool calls. When none of the sessions read has
stored verdicts (the first audit of a store, or after the rule changed), every one is a miss without a
check, and their fingerprints are taken from the calls the rule reads (``take_fingerprints``) instead of
by a pass of their own. An audit of the whole store that
leaves every session's verdicts checked or computed records the store's ``data_version`` (which every
ingest write moves) as ``steering_data_version``; while the two are equal, nothing was written since,
and a read takes every stored session's verdicts without checking them (``stamp``). A read that finds
them out of step with the calls anyway computes them again (``check``'s ``distrust``).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

import polars as pl

from tokaudit.store.engine import Store, duckdb
from tokaudit.store.queries import fetch_frame

STAMP_KEY = "steering_data_version"

STEERING_COLUMNS = ("shape_hash", "values_hash", "unnarrated_hashes", "steered", "alias_steered", "authored", "resent", "relayed")
"""The columns ``steering_sql`` adds to its relation."""

WORDING_COLUMNS = ("has_continuation", "has_directive", "progress", "eta")
"""What ``analyze.frames`` reads from a result's text with regexes (``analyze.lexicon``, a poll's progress and countdown)."""

CACHED_COLUMNS = STEERING_COLUMNS + WORDING_COLUMNS
"""What the cache keeps per tool call."""

# Every column of a folded tool call that the rule reads, directly or through what
# analyze.frames._tools derives from it (the tool key, the call's order, MCP or not).
_INPUTS = ("tool_call_id, ts_utc, result_ts_utc, line_no, tool_name, tool_kind, mcp_server, mcp_tool, args_values, args_skeleton, "
           "args_bytes, args_sha256, result_excerpt")


def input_hash_sql(alias: str) -> str:
    """SQL: the hash of one folded tool call's rule inputs (the columns of ``alias``), which a session's
    fingerprint folds with ``bit_xor``."""
    return "hash(" + ", ".join(f"{alias}.{name}" for name in _INPUTS.split(", ")) + ")"


def rule_version(rule_sql: str) -> int:
    """A version of the rule: a hash of its SQL and of the DuckDB that evaluates it (its ``hash``
    function makes the stored values), positive so that ``store_state`` (signed) holds it."""
    digest = hashlib.blake2b(f"{rule_sql}\0duckdb {duckdb.__version__}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") >> 1


@dataclass
class CacheState:
    """Which sessions of one read have valid stored verdicts and which must be computed."""

    hits: list[str] = field(default_factory=list)
    # Session -> (fingerprint, tool calls), for every session to compute.
    misses: dict[str, tuple[int, int]] = field(default_factory=dict)
    # Sessions among the misses with verdicts stored from other calls: replaced when the new ones are.
    stale: list[str] = field(default_factory=list)
    writable: bool = True
    # No session read has stored verdicts: all are misses, whose fingerprints ``take_fingerprints`` fills in.
    unchecked: bool = False


def check(
    store: Store, folded_sql: str, params: list, version: int, sessions: tuple[str, list] | None = None, *, distrust: bool = False
) -> CacheState:
    """Compare the sessions of ``folded_sql`` (folded tool calls of the sessions read, with ``params``)
    with the cache; empties the cache first when it was filled by another ``version`` of the rule.
    ``sessions`` (a condition on ``session_id`` and its parameters) names the sessions read: with it,
    and the store unchanged since the stamp, the stored sessions among them are hits without a check.
    ``distrust``: every session is a miss, its stored verdicts stale (they were found out of step with
    its calls)."""
    writable = not store.read_only
    stored = store.duck.execute("SELECT value FROM store_state WHERE key = 'steering_version'").fetchall()
    current = bool(stored) and stored[0][0] == version
    if not current and writable:
        with store.transaction() as duck:
            duck.execute("DELETE FROM steering_cache")
            duck.execute("DELETE FROM steering_sessions")
            duck.execute("DELETE FROM store_state WHERE key = ?", [STAMP_KEY])
            duck.execute("INSERT OR REPLACE INTO store_state VALUES ('steering_version', ?)", [version])
        current = True
    if current and not distrust and sessions is not None:
        where, where_params = sessions
        stored_ids = [h[0] for h in store.duck.execute(f"SELECT session_id FROM steering_sessions WHERE {where}", where_params).fetchall()]
        if not stored_ids:
            return CacheState(writable=writable, unchecked=True)
        if stamped(store):
            return CacheState(hits=stored_ids, writable=writable)
    rows = store.duck.execute(
        f"""
        SELECT f.session_id, f.fingerprint, f.tool_calls, s.session_id IS NOT NULL AS stored,
               coalesce(s.fingerprint = f.fingerprint AND s.tool_calls = f.tool_calls, false) AS holds
        FROM (SELECT session_id, bit_xor({input_hash_sql("t")}) AS fingerprint, count(*) AS tool_calls
              FROM ({folded_sql}) AS t GROUP BY session_id) AS f
        LEFT JOIN steering_sessions AS s USING (session_id)
        """,
        params,
    ).fetchall()
    state = CacheState(writable=writable)
    for session_id, fingerprint, tool_calls, stored_before, holds in rows:
        if holds and current and not distrust:
            state.hits.append(session_id)
        else:
            state.misses[session_id] = (fingerprint, tool_calls)
            if stored_before:
                state.stale.append(session_id)
    return state


def take_fingerprints(state: CacheState, tools: pl.DataFrame, column: str) -> None:
    """Fill an ``unchecked`` state's misses from ``tools`` (every folded tool call of the sessions read, with
    ``session_id`` and its ``input_hash_sql`` in ``column``): each session's fingerprint and number of calls."""
    per_session = tools.group_by("session_id").agg(pl.col(column).bitwise_xor().alias("fingerprint"), pl.len().alias("tool_calls"))
    state.misses = {session: (fingerprint, tool_calls) for session, fingerprint, tool_calls in per_session.iter_rows()}
    state.unchecked = False


def read(store: Store, sessions: list[str], rowids: tuple[int, int] | None = None) -> pl.DataFrame:
    """The stored verdicts of ``sessions``: ``session_id``, ``tool_call_id`` and ``CACHED_COLUMNS``, in
    the order the calls were read when they were computed (by session, then ``call_idx``). ``rowids``:
    the row-id range of ``steering_cache`` holding them, when known (the scan skips the rest)."""
    span, params = ("rowid BETWEEN ? AND ? AND ", list(rowids)) if rowids else ("", [])
    return fetch_frame(
        store,
        f"SELECT session_id, tool_call_id, {', '.join(CACHED_COLUMNS)} FROM steering_cache "
        f"WHERE {span}session_id IN (SELECT unnest(?::VARCHAR[])) ORDER BY session_id, call_idx",
        [*params, sessions],
    )


def save(store: Store, state: CacheState, tools: pl.DataFrame) -> None:
    """Store the verdicts computed for ``state``'s misses (``tools``: rows with ``session_id``,
    ``tool_call_id``, ``call_idx`` and ``CACHED_COLUMNS``; other sessions' rows are ignored), in one transaction."""
    if not state.writable or not state.misses:
        return
    verdicts = tools.filter(pl.col("session_id").is_in(list(state.misses))).select("session_id", "tool_call_id", "call_idx", *CACHED_COLUMNS)
    sessions = pl.DataFrame(
        {
            "session_id": list(state.misses),
            "fingerprint": [fp for fp, _ in state.misses.values()],
            "tool_calls": [n for _, n in state.misses.values()],
        },
        schema={"session_id": pl.String, "fingerprint": pl.UInt64, "tool_calls": pl.Int64},
    )
    duck = store.relational
    duck.register("_tokaudit_steering_verdicts", verdicts.to_arrow())
    duck.register("_tokaudit_steering_sessions", sessions.to_arrow())
    try:
        with store.transaction():
            _drop(duck, state.stale)
            duck.execute("INSERT INTO steering_cache BY NAME SELECT * FROM _tokaudit_steering_verdicts")
            duck.execute("INSERT INTO steering_sessions BY NAME SELECT * FROM _tokaudit_steering_sessions")
    finally:
        duck.unregister("_tokaudit_steering_verdicts")
        duck.unregister("_tokaudit_steering_sessions")


def prune(store: Store) -> None:
    """Drop the verdicts of sessions left without tool calls of their own: an MCP transcript whose
    calls were linked to the agent's records since, a log re-ingested without them."""
    if store.read_only:
        return
    gone = store.duck.execute(
        "SELECT session_id FROM steering_sessions "
        "WHERE session_id NOT IN (SELECT session_id FROM tool_calls WHERE linked_tool_call_id IS NULL)"
    ).fetchall()
    if gone:
        with store.transaction() as duck:
            _drop(duck, [g[0] for g in gone])


def stamped(store: Store) -> bool:
    """Whether nothing was written to the store since the last stamp (every stored verdict holds)."""
    rows = dict(store.duck.execute("SELECT key, value FROM store_state WHERE key IN ('data_version', ?)", [STAMP_KEY]).fetchall())
    return STAMP_KEY in rows and rows[STAMP_KEY] == rows.get("data_version")


def stamp(store: Store) -> None:
    """Record that every stored session's verdicts hold for the store as it is now: called by an audit
    of the whole store, after it checked or computed every session's verdicts and pruned the rest."""
    if store.read_only:
        return
    with store.transaction() as duck:
        duck.execute("INSERT OR REPLACE INTO store_state SELECT ?, value FROM store_state WHERE key = 'data_version'", [STAMP_KEY])


def _drop(duck: duckdb.DuckDBPyConnection, sessions: list[str]) -> None:
    if sessions:
        for table in ("steering_cache", "steering_sessions"):
            duck.execute(f"DELETE FROM {table} WHERE session_id IN (SELECT unnest(?::VARCHAR[]))", [sessions])
