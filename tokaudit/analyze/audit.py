"""Running every detector over the store and keeping the result as an audit run.

``run_audit`` reads the frames, builds the shared context (tool features,
cohort baselines), runs the registered detectors in order — the combined
``economic_dos`` verdict last, over the others' findings — and, unless told
not to, stores the run with its thresholds and findings.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from tokaudit import __version__
from tokaudit.analyze import steering_cache
from tokaudit.analyze.cohorts import session_baselines, with_traffic_estimates
from tokaudit.analyze.detectors import DETECTORS, SEVERITIES, Finding, resolve_params
from tokaudit.analyze.detectors._common import Context
from tokaudit.analyze.features import tool_features
from tokaudit.analyze.frames import Frames, SessionBatch, load_frames, session_batches
from tokaudit.config import Config
from tokaudit.ingest.base import utc_now
from tokaudit.store.engine import Store

# Frames of about this many requests plus tool calls take ~1.5 GB at their peak; DuckDB's memory is
# capped meanwhile, because by default it keeps up to 80 % of RAM of the store's pages cached and, over
# the batches, every page gets read (benchmarks/results-detectors-speed.md).
BATCH_ROWS = 1_000_000
BATCH_DUCKDB_MEMORY = "1GB"


@contextmanager
def capped_duckdb_memory(store: Store, limit: str | None) -> Iterator[None]:
    """Cap DuckDB's memory at ``limit`` for a while (None: leave it as it is)."""
    if limit is None:
        yield
        return
    with store.memory_limit(limit):
        yield


@dataclass
class AuditResult:
    """What one audit found, and where it was stored."""

    audit_run_id: int | None
    started_at_utc: datetime
    sessions: int
    findings: list[Finding]
    thresholds: dict[str, Any]
    seconds: float = 0.0
    detector_seconds: dict[str, float] = field(default_factory=dict)
    # frames, features + cohorts, detectors, quotes (all batches); a batch's frames are read while the
    # detectors run over the batch before, so the stages add up to more than ``seconds``.
    stage_seconds: dict[str, float] = field(default_factory=dict)
    # Of ``sessions``: subagents' sessions and MCP transcripts' connections (each a session of its own, while
    # ``tokaudit usage --by session`` folds them into the agent session they served).
    subagent_sessions: int = 0
    mcp_connection_sessions: int = 0

    def summary(self) -> dict[str, Any]:
        by_detector = Counter(f.detector for f in self.findings)
        by_severity = Counter(f.severity for f in self.findings)
        flagged = sorted({f.session_id for f in self.findings if f.detector == "economic_dos"})
        return {
            "sessions": self.sessions,
            "subagent_sessions": self.subagent_sessions,
            "mcp_connection_sessions": self.mcp_connection_sessions,
            "findings": len(self.findings),
            "by_detector": dict(sorted(by_detector.items())),
            "by_severity": {s: by_severity.get(s, 0) for s in SEVERITIES},
            "economic_dos_sessions": len(flagged),
        }

    def to_dict(self) -> dict[str, Any]:
        return {
            "audit_run_id": self.audit_run_id,
            "started_at_utc": self.started_at_utc.isoformat(),
            "summary": self.summary(),
            "findings": [f.to_dict() for f in self.findings],
        }


def build_context(frames: Frames, min_cohort: int = 20) -> Context:
    """Derived tables every detector may read."""
    tools = tool_features(frames.tools, frames.calls)
    sessions = with_traffic_estimates(frames.sessions, tools, frames.links)
    return Context(frames=frames, tools=tools, baselines=session_baselines(sessions, min_cohort))


def run_detectors(context: Context, params: dict[str, Any], only: set[str] | None = None) -> tuple[list[Finding], dict[str, float]]:
    """Run the detectors in registry order (the combined verdict last, over the others' findings); returns
    their findings, each detector's in one order on every run, and the seconds each took."""
    timings: dict[str, float] = {}
    for name, module in DETECTORS.items():
        if only is not None and name not in only:
            continue
        started = time.perf_counter()
        found = module.detect(context, params[name])
        for f in found:
            # Turn -1 marks tool calls no request can be placed before (aggregate-only logs): no turn.
            if f.first_turn is not None and f.first_turn < 0:
                f.first_turn = f.last_turn = None
        # polars' groups and joins come out in an order that varies from run to run.
        found.sort(key=_finding_order)
        timings[name] = time.perf_counter() - started
        context.findings.extend(found)
    return context.findings, timings


def _finding_order(f: Finding) -> tuple:
    """Where a finding goes among its detector's: by session, turns, metric, tool, then its words."""
    return (f.session_id, -1 if f.first_turn is None else f.first_turn, -1 if f.last_turn is None else f.last_turn, f.metric,
            f.tool_key or "", f.explanation)


def run_audit(
    store: Store,
    *,
    config: Config | None = None,
    since: datetime | None = None,
    until: datetime | None = None,
    save: bool = True,
    only: set[str] | None = None,
    batch_rows: int = BATCH_ROWS,
    on_progress: Callable[[int, int], None] | None = None,
) -> AuditResult:
    """Audit the sessions that started in [since, until) (UTC; default everything).

    A window of more than ``batch_rows`` requests plus tool calls is read in batches of
    whole session groups (``analyze.frames.session_batches``), so memory stays bounded
    however large the store; each batch's baselines are then estimated from its own sessions.
    A thread reads the next batch's frames while the detectors run over the current one.
    ``on_progress(done, total)`` is called before the first batch and after each.
    """
    config = config or Config()
    params = resolve_params(config.detectors)
    started_at = utc_now()
    started = time.perf_counter()
    findings: list[Finding] = []
    timings: Counter[str] = Counter()
    stages: Counter[str] = Counter()
    sessions = subagents = connections = 0
    # Capped too: on a large store, listing the batches may rebuild the deduplicated copy of the requests.
    with capped_duckdb_memory(store, BATCH_DUCKDB_MEMORY):
        batches = session_batches(store, since, until, batch_rows)
    plan = batches or [None]  # None: the whole window at once
    if on_progress is not None:
        on_progress(0, len(plan))
    with capped_duckdb_memory(store, BATCH_DUCKDB_MEMORY if batches else None), ThreadPoolExecutor(1) as reader:
        # The next batch's frames are read (DuckDB) while this batch's detectors run (polars): the two
        # libraries release the GIL and neither keeps both cores busy alone. Only the reader's thread
        # touches the store meanwhile, so its one connection is never used by two threads at once.
        def read(batch: SessionBatch | None) -> tuple[Frames, float]:
            mark = time.perf_counter()
            return load_frames(store, config=config, since=since, until=until, batch=batch), time.perf_counter() - mark

        pending = reader.submit(read, plan[0])
        for done in range(1, len(plan) + 1):
            frames, seconds = pending.result()
            stages["frames"] += seconds
            if done < len(plan):
                pending = reader.submit(read, plan[done])
            mark = time.perf_counter()
            context = build_context(frames, params["cost_blowup"].min_cohort)
            stages["features + cohorts"] += time.perf_counter() - mark
            mark = time.perf_counter()
            found, seconds = run_detectors(context, params, only)
            stages["detectors"] += time.perf_counter() - mark
            findings += found
            timings.update(seconds)
            sessions += frames.sessions.height
            subagents += frames.sessions.height - frames.sessions["parent_session_id"].null_count()
            connections += frames.links.height
            del frames, context  # the next batch's frames take their place
            if on_progress is not None:
                on_progress(done, len(plan))
    steering_cache.prune(store)
    if since is None and until is None:
        steering_cache.stamp(store)  # every session's verdicts were checked or computed just now
    mark = time.perf_counter()
    quote_results(store, findings)
    stages["quotes"] = time.perf_counter() - mark
    thresholds = {name: p.__dict__ for name, p in params.items()}
    result = AuditResult(None, started_at, sessions, findings, thresholds, time.perf_counter() - started, dict(timings), dict(stages),
                         subagent_sessions=subagents, mcp_connection_sessions=connections)
    if save and not store.read_only:
        result.audit_run_id = _save(store, result, since, until)
    return result


_QUOTES = {"first_call": "first_result", "last_call": "last_result"}


def quote_results(store: Store, findings: list[Finding]) -> None:
    """Put the (redacted, bounded) excerpts of the results a finding points at into its evidence.

    Detectors keep only tool call ids, so the frames need not carry every
    result's text or argument skeleton; the few that findings quote are read here.
    """
    wanted = {(f.session_id, f.evidence[key]) for f in findings for key in _QUOTES if f.evidence.get(key)}
    if not wanted:
        return
    sessions = sorted({s for s, _ in wanted})
    calls = sorted({c for _, c in wanted})
    rows = store.duck.execute(
        "SELECT session_id, tool_call_id, any_value(result_excerpt), any_value(args_skeleton) FROM tool_calls "
        "WHERE session_id IN (SELECT unnest(?::VARCHAR[])) AND tool_call_id IN (SELECT unnest(?::VARCHAR[])) GROUP BY ALL",
        [sessions, calls],
    ).fetchall()
    found = {(s, c): (e, k) for s, c, e, k in rows}
    for f in findings:
        for key, quote in _QUOTES.items():
            call = f.evidence.get(key)
            if call and (f.session_id, call) in found:
                excerpt, skeleton = found[(f.session_id, call)]
                f.evidence[quote] = excerpt
                f.evidence.setdefault("skeleton", skeleton)


def _save(store: Store, result: AuditResult, since: datetime | None, until: datetime | None) -> int:
    with store.transaction() as duck:
        run_id = duck.execute("SELECT nextval('audit_run_id_seq')").fetchall()[0][0]
        duck.execute(
            "INSERT INTO audit_runs (audit_run_id, started_at_utc, window_start_utc, window_end_utc, tokaudit_version, thresholds, summary) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            [run_id, result.started_at_utc, since, until, __version__, json.dumps(result.thresholds, sort_keys=True), json.dumps(result.summary())],
        )
        rows = [
            [
                run_id, no, f.detector, f.severity, f.session_id, f.first_turn, f.last_turn, f.metric, repr(f.value), f.threshold,
                f.excess_tokens, None if f.excess_usd is None else f"{f.excess_usd:.6f}", f.explanation, f.tool_key,
                json.dumps(f.evidence, default=str, sort_keys=True),
            ]
            for no, f in enumerate(result.findings, start=1)
        ]
        if rows:
            duck.executemany(
                "INSERT INTO findings (audit_run_id, finding_no, detector, severity, session_id, first_turn, last_turn, metric, value, "
                "threshold, excess_tokens, excess_usd, explanation, tool_key, evidence) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                rows,
            )
    return run_id


def latest_run_id(store: Store) -> int | None:
    """The most recent stored audit run, or None."""
    rows = store.duck.execute("SELECT max(audit_run_id) FROM audit_runs").fetchall()
    return rows[0][0]


def list_findings(
    store: Store,
    *,
    run_id: int | None = None,
    detector: str | None = None,
    min_severity: str | None = None,
    session: str | None = None,
    limit: int | None = None,
) -> list[dict[str, Any]]:
    """Stored findings of one audit run (default: the latest), most severe and costly first."""
    from tokaudit.store.queries import fetch_dicts

    run_id = run_id if run_id is not None else latest_run_id(store)
    if run_id is None:
        return []
    levels = list(SEVERITIES[SEVERITIES.index(min_severity) :]) if min_severity else list(SEVERITIES)
    sql = """
        SELECT audit_run_id, finding_no, detector, severity, session_id, first_turn, last_turn, metric, value, threshold,
               excess_tokens, excess_usd, tool_key, explanation, evidence
        FROM findings
        WHERE audit_run_id = ? AND (? IS NULL OR detector = ?) AND severity IN (SELECT unnest(?::VARCHAR[]))
          AND (? IS NULL OR starts_with(session_id, ?))
        ORDER BY list_position(?::VARCHAR[], severity) DESC, excess_tokens DESC NULLS LAST, finding_no
    """
    params: list[Any] = [run_id, detector, detector, levels, session, session, list(SEVERITIES)]
    if limit is not None:
        sql += " LIMIT ?"
        params.append(limit)
    rows = fetch_dicts(store, sql, params)
    for r in rows:
        r["evidence"] = json.loads(r["evidence"]) if r["evidence"] else {}
    return rows


def resolve_session(store: Store, prefix: str) -> str:
    """The one stored session id equal to or starting with ``prefix`` (the format namespace may be left out)."""
    from tokaudit.errors import TokauditError

    rows = store.duck.execute(
        "SELECT DISTINCT session_id FROM sessions WHERE session_id = ? OR starts_with(session_id, ?) "
        "OR starts_with(split_part(session_id, ':', 2), ?) ORDER BY 1 LIMIT 5",
        [prefix, prefix, prefix],
    ).fetchall()
    # The id itself, or the id without its format namespace (a session's subagents share its prefix).
    exact = [r[0] for r in rows if r[0] == prefix] or [r[0] for r in rows if r[0].partition(":")[2] == prefix]
    if len(exact) == 1:
        return exact[0]
    if len(rows) == 1:
        return rows[0][0]
    if not rows:
        # A name from the middle of an id (a SWE-agent run's file name, a transcript's stem): point to the ids holding it.
        near = [r[0] for r in store.duck.execute(
            "SELECT DISTINCT session_id FROM sessions WHERE contains(session_id, ?) ORDER BY 1 LIMIT 5", [prefix]).fetchall()]
        hint = (f"ids holding {prefix!r}: {', '.join(near)}" if near else
                "list sessions with `tokaudit usage --by session` (sessions with model requests) or `tokaudit sources --json`")
        raise TokauditError(f"no session {prefix!r} in the store", hint=hint)
    raise TokauditError(f"{prefix!r} matches several sessions: {', '.join(r[0] for r in rows)}", hint="give more of the id")


def session_timeline(store: Store, session_id: str, *, config: Config | None = None) -> dict[str, Any]:
    """A session turn by turn: tokens per kind, context size, tool calls, and the latest audit's findings on each turn;
    tool calls no logged request asked for (an MCP transcript's) under ``calls_without_request``."""
    import polars as pl

    frames = load_frames(store, config=config, session_id=session_id)
    calls = frames.calls.filter(pl.col("session_id") == session_id).sort("turn")
    tools = frames.tools.filter(pl.col("session_id") == session_id)
    # No audit run yet: no findings is "not audited", not "clean".
    run_id = latest_run_id(store)
    every_finding = list_findings(store, run_id=run_id)
    findings = [f for f in every_finding if f["session_id"] == session_id]
    # Subagents are sessions of their own (their findings are theirs): the parent's timeline points to them.
    children = [r[0] for r in store.duck.execute(
        "SELECT DISTINCT session_id FROM sessions WHERE parent_session_id = ? ORDER BY 1", [session_id]).fetchall()]
    subagents = [
        {"session_id": child, "findings": sum(f["session_id"] == child for f in every_finding),
         "economic_dos": any(f["session_id"] == child and f["detector"] == "economic_dos" for f in every_finding)}
        for child in children
    ]
    def tool_rows(rows: pl.DataFrame) -> list[dict[str, Any]]:
        return [
            {"tool": r["tool_key"], "args_tokens": r["args_tokens"], "args_tokens_method": r["args_tokens_method"],
             "result_tokens": r["result_tokens"], "result_tokens_method": r["result_tokens_method"], "is_error": r["is_error"],
             # Dictated by the previous result: by its tool's own answer, or relayed from another tool's.
             "steered": bool(r["steered"] or r["relayed"])}
            for r in rows.iter_rows(named=True)
        ]

    turns = []
    for c in calls.iter_rows(named=True):
        t = c["turn"]
        turn_tools = tools.filter(pl.col("turn") == t)
        flags = sorted(
            {
                f["detector"]
                for f in findings
                if f["first_turn"] is not None and f["last_turn"] is not None and f["first_turn"] <= t <= f["last_turn"] and f["detector"] != "economic_dos"
            }
        )
        turns.append(
            {
                "turn": t,
                "ts_utc": c["ts_utc"].isoformat() if c["ts_utc"] else None,
                "model": c["model"],
                "input_tokens": c["input_tokens"],
                "cache_read_tokens": c["cache_read_tokens"],
                "cache_write_tokens": c["cache_write_5m_tokens"] + c["cache_write_1h_tokens"],
                "output_tokens": c["output_tokens"],
                "reasoning_tokens": c["reasoning_tokens"],
                "context_tokens": c["input_total_tokens"],
                "cost_usd": c["cost_usd"],
                "tools": tool_rows(turn_tools),
                "flags": flags,
            }
        )
    # Calls no logged request asked for — an MCP transcript's (it logs no model requests) — in the order they came.
    placed_nowhere = tools.filter(pl.col("turn") < 0)
    unplaced = [
        {"ts_utc": ts.isoformat() if ts else None, **row} for ts, row in zip(placed_nowhere["ts_utc"].to_list(), tool_rows(placed_nowhere))
    ]
    session = frames.sessions.filter(pl.col("session_id") == session_id).to_dicts()
    return {"session": session[0] if session else {"session_id": session_id}, "turns": turns, "calls_without_request": unplaced,
            "findings": findings, "subagents": subagents, "audit_run_id": run_id}
