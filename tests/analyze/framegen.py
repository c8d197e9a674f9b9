"""Small analysis frames built by hand, for detector unit tests (no store needed)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

import duckdb
import polars as pl

from tokaudit.analyze.frames import DELEGATIONS_SCHEMA, IN_BAND_FAILURE_SQL, Frames, _session_totals
from tokaudit.analyze.lexicon import CONTINUATION, DIRECTIVES
from tokaudit.analyze.steering import ETA_SQL, PROGRESS_SQL, steering_sql
from tokaudit.analyze.steering_cache import STEERING_COLUMNS
from tokaudit.ingest.base import SIG_BINS, result_features
from tokaudit.ingest.skeleton import args_values

T0 = datetime(2026, 3, 10, 10, 0, 0)
PRICE_IN = 3e-6
PRICE_OUT = 15e-6


@dataclass
class Session:
    """A session being written turn by turn: each turn is one request, with its tool calls."""

    session_id: str
    agent: str = "claude-code"
    model: str = "claude-sonnet-4-5-20250929"
    task_label: str | None = None
    outcome: str | None = None
    parent_session_id: str | None = None  # set on a subagent's session
    subagent_type: str | None = None
    calls: list[dict[str, Any]] = field(default_factory=list)
    tools: list[dict[str, Any]] = field(default_factory=list)
    context_tokens: int = 8000
    clock_s: float = 0.0  # seconds since T0 of the latest request
    start_s: float = 0.0  # seconds after T0 when the session started (a subagent: while its parent's call ran)

    def turn(self, *, tools: list[tuple[str, ...]] = (), output_tokens: int = 200, reasoning_tokens: int | None = None,
             cache_read_share: float = 0.9, stop_reason: str = "tool_use", wait_s: float = 10.0, tool_s: float = 2.0) -> Session:
        """Add a request, ``wait_s`` after the previous one, asking for ``tools`` = [(tool_key, args_json,
        result_text[, content_type])] that each take ``tool_s`` to answer, and feed their results back."""
        turn = len(self.calls)
        if turn:
            self.clock_s += wait_s
        ts = T0 + timedelta(seconds=self.start_s + self.clock_s)
        inp = self.context_tokens
        cache_read = int(inp * cache_read_share) if turn else 0
        write = inp - cache_read
        self.calls.append(
            {
                "session_id": self.session_id, "call_hash": hash(f"{self.session_id}:{turn}"), "ts_utc": ts, "model": self.model,
                "turn": turn, "segment": 0, "input_tokens": 3, "cache_read_tokens": cache_read,
                "cache_write_5m_tokens": max(0, write - 3), "cache_write_1h_tokens": 0, "output_tokens": output_tokens,
                "reasoning_tokens": reasoning_tokens, "input_total_tokens": inp, "is_aggregate": False, "stop_reason": stop_reason,
                "context_window_tokens": 200_000,
                "cost_usd": (3 + max(0, write - 3)) * PRICE_IN * 1.25 + cache_read * PRICE_IN * 0.1 + output_tokens * PRICE_OUT,
                "cost_equiv_tokens": 3 + 1.25 * max(0, write - 3) + 0.1 * cache_read + 5 * output_tokens,
                "input_usd_per_token_eff": ((3 + max(0, write - 3)) * PRICE_IN * 1.25 + cache_read * PRICE_IN * 0.1) / max(inp, 1),
                "output_usd_per_token": PRICE_OUT,
            }
        )
        added = output_tokens
        for tool_key, args, result, *content_type in tools:
            server, _, name = tool_key.rpartition("/")
            features = result_features(result.encode())
            idx = len(self.tools)
            args_tokens, result_tokens = max(1, len(args) // 4), max(1, len(result) // 4)
            self.tools.append(
                {
                    "session_id": self.session_id, "tool_call_id": f"{self.session_id}:t{idx}", "call_hash": hash(f"{self.session_id}:{turn}"),
                    "request_hash": hash(f"{self.session_id}:{turn}"), "ts_utc": ts, "turn": turn, "mcp_server": server or None, "is_mcp": bool(server),
                    # As the store keys a call: an MCP tool's numbers masked, the name the server gave it kept beside.
                    "tool_key": f"{server}/{re.sub('[0-9]+', '#', name)}" if server else tool_key,
                    "mcp_tool_name": tool_key if server and re.search("[0-9]", name) else None,
                    "remote_host": None,
                    "args_bytes": len(args), "skel_hash": hash(_skeleton(args)), "args_hash": hash(args),
                    "tokens_masked_hash": hash(tuple("#" if re.fullmatch(r"\S*[0-9]\S*", v) else v for v in args_values(args))) if server else None,
                    "result_hash": hash(result),
                    "args_tokens": args_tokens, "args_tokens_method": "heuristic:bytes/4", "result_bytes": len(result),
                    "result_tokens": result_tokens, "result_tokens_method": "heuristic:bytes/4",
                    "content_type": content_type[0] if content_type else "text",
                    "is_error": bool(server) and _in_band_failure(features["result_excerpt"]), "call_idx": idx, "model": self.model, "duration_ms": int(tool_s * 1000),
                    "has_result": True, "has_continuation": re.search(CONTINUATION, result) is not None,
                    "has_directive": re.search(DIRECTIVES, result) is not None,
                    "_args_values": args_values(args), "_skeleton": _skeleton(args), "_excerpt": features["result_excerpt"],
                    "_result_ts": ts + timedelta(seconds=tool_s),
                    "result_compress_ratio": features["result_compress_ratio"],
                    # The word bins, then a listing's id bins (as the store's frame splits them; none: NULL).
                    **{f"sig{i}": v for i, v in enumerate(features["result_sig"][:SIG_BINS])},
                    **{f"idsig{i}": v for i, v in enumerate((features["result_sig"][SIG_BINS:] or [None] * SIG_BINS))},
                }
            )
            added += args_tokens + result_tokens + 20
        self.context_tokens += added
        return self


def _in_band_failure(excerpt: str) -> bool:
    """An MCP answer's own status says it failed for now (the store's frame reads it so: ``IN_BAND_FAILURE_SQL``)."""
    # On a connection of its own, the result read whole: an open result would hold the default connection others use.
    return _IN_BAND.execute("SELECT " + IN_BAND_FAILURE_SQL.format(c="$1"), [excerpt]).fetchall()[0][0]


_IN_BAND = duckdb.connect()


def _skeleton(args: str) -> str:
    from tokaudit.ingest.skeleton import args_skeleton

    return args_skeleton(args)


def _with_steering(tools: pl.DataFrame) -> pl.DataFrame:
    """The ``steered`` flag by the store's own rule (``analyze.steering.steering_sql``), run by DuckDB."""
    con = duckdb.connect()
    con.register("t", tools.select("tool_call_id", "session_id", "tool_key", "call_idx", "args_bytes", "args_hash", "_args_values", "_skeleton", "_excerpt").to_arrow())
    flags = con.sql(
        f"SELECT tool_call_id, {', '.join(STEERING_COLUMNS)}, {PROGRESS_SQL} AS progress, {ETA_SQL} AS eta FROM ("
        + steering_sql("(SELECT *, _args_values AS args_values, _skeleton AS args_skeleton, _excerpt AS result_excerpt FROM t)", "call_idx")
        + ")"
    ).pl()
    return tools.join(flags, on="tool_call_id").sort("session_id", "call_idx").drop("_args_values", "_skeleton", "_excerpt", "_result_ts")


def frames(*sessions: Session, tool_defs: pl.DataFrame | None = None) -> Frames:
    calls = pl.DataFrame([c for s in sessions for c in s.calls], infer_schema_length=None)
    tools = pl.DataFrame([t for s in sessions for t in s.tools], infer_schema_length=None) if any(s.tools for s in sessions) else _empty_tools()
    # The failed calls' argument values, as the store's query reads them (``Frames.failures``).
    failures = (
        tools.filter(pl.col("is_error")).select("session_id", "tool_call_id", pl.col("_args_values").alias("args_values"))
        if "_args_values" in tools.columns else None
    )
    base = pl.DataFrame(
        [
            {"session_id": s.session_id, "agent": s.agent, "project": "p", "task_label": s.task_label, "outcome": s.outcome,
             "parent_session_id": s.parent_session_id, "subagent_type": s.subagent_type,
             "started_at_utc": T0 + timedelta(seconds=s.start_s), "ended_at_utc": T0 + timedelta(seconds=s.start_s)}
            for s in sessions
        ],
        schema_overrides={"task_label": pl.String, "outcome": pl.String, "parent_session_id": pl.String, "subagent_type": pl.String},
    )
    # The calls a subagent started under (``Frames.delegations``), as the store's query finds them.
    delegations = None
    if "_args_values" in tools.columns:
        starts = base.filter(pl.col("parent_session_id").is_not_null()).select(pl.col("parent_session_id").alias("session_id"), "started_at_utc")
        spawning = tools.join(starts, on="session_id").filter(pl.col("started_at_utc").is_between(pl.col("ts_utc"), pl.col("_result_ts")))
        delegations = (
            tools.join(spawning.select("tool_call_id").unique(), on="tool_call_id", how="semi").sort("session_id", "call_idx")
            .select("session_id", "tool_call_id", pl.int_range(pl.len(), dtype=pl.UInt32).over("session_id").alias("delegation_idx"),
                    "ts_utc", pl.col("_result_ts").alias("result_ts_utc"), pl.col("_args_values").alias("args_values"),
                    pl.col("_excerpt").alias("result_excerpt"))
            .cast(DELEGATIONS_SCHEMA)  # type: ignore[arg-type]
        )
    tools = _with_steering(tools) if "_args_values" in tools.columns else tools
    return Frames(
        calls=calls,
        tools=tools,
        sessions=_session_totals(base, calls, tools),
        tool_defs=tool_defs if tool_defs is not None else pl.DataFrame(schema={"session_id": pl.String, "mcp_server": pl.String,
                                                                              "tool_name": pl.String, "schema_sha256": pl.String,
                                                                              "description_bytes": pl.Int64, "first_seen_utc": pl.Datetime,
                                                                              "last_seen_utc": pl.Datetime, "definition_bytes": pl.Int64}),
        events=pl.DataFrame(),
        **({"failures": failures} if failures is not None else {}),
        **({"delegations": delegations} if delegations is not None else {}),
    )


def _empty_tools() -> pl.DataFrame:
    s = Session("x").turn(tools=[("t", "{}", "r")])
    return _with_steering(pl.DataFrame(s.tools)).clear()


def benign(n: int, *, prefix: str = "benign", turns: int = 6, seed: int = 0) -> list[Session]:
    """Ordinary sessions: a few distinct tools, new content in every result."""
    out = []
    for i in range(n):
        s = Session(f"claude-code:{prefix}-{i}")
        for t in range(turns + (i + seed) % 3):
            tool = ("Read", "Grep", "Edit", "Bash")[t % 4]
            s.turn(tools=[(tool, f'{{"file_path":"/src/m{i}_{t}.py"}}', f"content of module {i} part {t}: " + " ".join(f"w{i}x{t}y{k}" for k in range(40)))])
        s.turn(stop_reason="end_turn")
        out.append(s)
    return out
