"""The numbers of a report, computed from :class:`~tokaudit.report.data.ReportData` without I/O.

Everything shown is aggregated here first — top-N rows plus one "other" row, turns
averaged into buckets for long sessions — so that the HTML stays small and fast
however large the store is. The full tables stay available for exports.

Token counts are the logs' own (exact) unless a method says otherwise; dollars are
computed per request from the price table, and a request whose model has no price
adds to ``unpriced_requests``, never to the spend.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import polars as pl

from tokaudit import __version__
from tokaudit.analyze.detectors import SEVERITIES
from tokaudit.analyze.frames import Frames
from tokaudit.analyze.replay import call_attribution, server_key
from tokaudit.report.data import ReportData, Window

TOP_MODELS = 8  # series in the cost-over-time chart (the rest is one "other" series)
TOP_ROWS = 15  # rows of a breakdown chart or table before "other"
TOP_SESSIONS = 10  # rows of each top-sessions table
MAX_DRILLDOWNS = 20  # sessions with a turn-by-turn drill-down
MAX_TURN_POINTS = 400  # turns plotted per drill-down; longer sessions are averaged into buckets
TREEMAP_TOP = (10, 4, 4)  # projects, agents per project, models per agent
WEEKLY_AFTER_DAYS = 120  # longer spans are plotted per week, not per day
OTHER = "(other)"
UNKNOWN = "(unknown)"
NO_MODEL = "(model not logged)"

TOKEN_KINDS = ("input_tokens", "cache_write_5m_tokens", "cache_write_1h_tokens", "cache_read_tokens", "output_tokens")
DELTA_KEYS = (
    "cost_usd",
    "total_tokens",
    "input_tokens",
    "cache_write_tokens",
    "cache_read_tokens",
    "output_tokens",
    "requests",
    "sessions",
    "unpriced_requests",
)
_SUM_COLUMNS = [
    "cost_usd",
    "unpriced_requests",
    "input_tokens",
    "cache_write_tokens",
    "cache_read_tokens",
    "output_tokens",
    "total_tokens",
    "requests",
]


@dataclass
class Drilldown:
    """One session turn by turn: tokens per kind (bucketed when long), tool calls and findings per turn."""

    anchor: str
    session: dict[str, Any]
    turns: pl.DataFrame
    findings: list[dict[str, Any]]
    bucket_turns: int = 1


@dataclass
class Report:
    """A computed report: headline figures, aggregated tables, findings, data-quality notes and drill-downs."""

    window: Window
    generated_at_utc: datetime
    price_source: str
    audit_run: dict[str, Any] | None
    headline: dict[str, Any]
    previous: dict[str, Any] | None
    deltas: dict[str, dict[str, Any]]
    time_series: pl.DataFrame
    by_model: pl.DataFrame
    by_project: pl.DataFrame
    by_agent: pl.DataFrame
    spend_tree: pl.DataFrame
    tools: pl.DataFrame
    mcp_servers: pl.DataFrame
    sessions: pl.DataFrame
    top_by_cost: pl.DataFrame
    top_by_excess: pl.DataFrame
    findings: list[dict[str, Any]]
    findings_summary: dict[str, Any]
    problems_by_kind: dict[str, int]
    problems: list[dict[str, Any]]
    estimates: dict[str, Any]
    drilldowns: list[Drilldown]
    frames: Frames  # the window's requests and tool calls, for exports
    tool_attribution: pl.DataFrame  # analyze.replay.call_attribution per tool call (by ``tool_row``), for exports
    notes: list[str] = field(default_factory=list)
    tokaudit_version: str = __version__

    def drilldown_anchor(self, session_id: str) -> str | None:
        """The anchor of a session's drill-down, if it has one."""
        for d in self.drilldowns:
            if d.session["session_id"] == session_id:
                return d.anchor
        return None


def top_n(df: pl.DataFrame, key: str, by: str, n: int, sum_columns: list[str], other: str = OTHER) -> pl.DataFrame:
    """The ``n`` rows largest in ``by``, then one ``other`` row summing ``sum_columns`` over the rest.

    Text columns among ``sum_columns`` are merged instead: the other row lists their distinct values.

    Examples:
        >>> df = pl.DataFrame({"k": ["a", "b", "c"], "v": [1.0, 3.0, 2.0]})
        >>> top_n(df, "k", "v", 1, ["v"]).rows()
        [('b', 3.0), ('(other)', 3.0)]
    """
    ranked = df.sort(by, descending=True, nulls_last=True).select(key, *[c for c in sum_columns if c != key])
    if ranked.height <= n:
        return ranked
    tail = ranked.slice(n)

    def merged(c: str) -> pl.Expr:
        if tail.schema[c] == pl.String:
            return pl.col(c).str.split(", ").explode().drop_nulls().unique().sort().str.join(", ").alias(c)
        return pl.col(c).sum()

    rest = tail.select(pl.lit(other).alias(key), *[merged(c) for c in sum_columns if c != key])
    return pl.concat([ranked.head(n), rest], how="vertical_relaxed")


def _sums() -> list[pl.Expr]:
    priced = pl.col("cost_usd").is_not_null()
    return [
        pl.col("cost_usd").sum().alias("cost_usd"),
        pl.col("requests").filter(~priced).sum().alias("unpriced_requests"),
        pl.col("input_tokens").sum(),
        (pl.col("cache_write_5m_tokens") + pl.col("cache_write_1h_tokens")).sum().alias("cache_write_tokens"),
        pl.col("cache_read_tokens").sum(),
        pl.col("output_tokens").sum(),
        (pl.col("input_total_tokens") + pl.col("output_tokens")).sum().alias("total_tokens"),
        pl.col("requests").sum(),
    ]


def _with_session_keys(calls: pl.DataFrame, sessions: pl.DataFrame) -> pl.DataFrame:
    keys = sessions.select(
        "session_id",
        pl.col("project").fill_null(UNKNOWN).alias("project"),
        (pl.col("agent").fill_null(UNKNOWN) + pl.when(pl.col("subagent_type").is_not_null()).then(" / " + pl.col("subagent_type")).otherwise(pl.lit("")))
        .alias("agent"),
        pl.coalesce("parent_session_id", "session_id").alias("conversation"),
    )
    return calls.join(keys, on="session_id", how="left").with_columns(
        pl.col("model").fill_null(NO_MODEL),
        pl.col("project").fill_null(UNKNOWN),
        pl.col("agent").fill_null(UNKNOWN),
        pl.coalesce("conversation", "session_id").alias("conversation"),
    )


def headline(calls: pl.DataFrame, tools: pl.DataFrame) -> dict[str, Any]:
    """Spend, tokens by kind, sessions, cost per conversation (p50/p95), cache hit rate, effective input price.

    ``calls`` are the window's requests with the session keys attached; ``tools`` the window's tool calls.
    """
    s = calls.select(
        *_sums(),
        pl.col("cache_write_5m_tokens").sum(),
        pl.col("cache_write_1h_tokens").sum(),
        pl.col("reasoning_tokens").sum(),
        pl.col("session_id").n_unique().alias("sessions"),
        pl.col("conversation").n_unique().alias("conversations"),
        pl.col("input_cost_usd").filter(pl.col("cost_usd").is_not_null()).sum().alias("_input_cost"),
        pl.col("input_total_tokens").filter(pl.col("cost_usd").is_not_null()).sum().alias("_input_priced_tokens"),
        pl.col("input_total_tokens").sum().alias("_input_total"),
        pl.col("ts_utc").min().alias("first_request_utc"),
        pl.col("ts_utc").max().alias("last_request_utc"),
    ).row(0, named=True)
    # A conversation is a session with its subagents; only fully priced ones have a cost.
    per_conv = calls.group_by("conversation").agg(pl.col("cost_usd").sum(), pl.col("cost_usd").is_null().any().alias("_unpriced"))
    priced = per_conv.filter(~pl.col("_unpriced"))["cost_usd"]
    unpriced_models = sorted(calls.filter(pl.col("cost_usd").is_null())["model"].unique().to_list())
    input_total = s.pop("_input_total") or 0
    input_cost, input_priced = s.pop("_input_cost"), s.pop("_input_priced_tokens") or 0
    out = {k: (v if v is not None else 0) for k, v in s.items() if k not in ("first_request_utc", "last_request_utc")}
    out.update(
        {
            "cost_usd": float(s["cost_usd"] or 0.0),
            "unpriced_models": unpriced_models,
            "tool_calls": tools.height,
            "tool_errors": int(tools["is_error"].sum()) if tools.height else 0,
            "subagent_sessions": int(calls.filter(pl.col("conversation") != pl.col("session_id"))["session_id"].n_unique()),
            "cost_per_conversation_p50_usd": None if priced.is_empty() else float(priced.quantile(0.5, "nearest")),
            "cost_per_conversation_p95_usd": None if priced.is_empty() else float(priced.quantile(0.95, "nearest")),
            "cache_hit_rate": (s["cache_read_tokens"] / input_total) if input_total else None,
            "effective_input_usd_per_mtok": (input_cost / input_priced * 1e6) if input_priced and input_cost is not None else None,
            "first_request_utc": s["first_request_utc"],
            "last_request_utc": s["last_request_utc"],
        }
    )
    return out


def deltas(current: dict[str, Any], previous: dict[str, Any] | None) -> dict[str, dict[str, Any]]:
    """Change of each headline figure against the previous window (``change_pct`` None when it was 0).

    Examples:
        >>> deltas({"cost_usd": 3.0}, {"cost_usd": 2.0})["cost_usd"]
        {'previous': 2.0, 'current': 3.0, 'change': 1.0, 'change_pct': 50.0}
    """
    if previous is None:
        return {}
    out = {}
    for key in DELTA_KEYS:
        if key not in current or key not in previous:
            continue
        cur, prev = current[key] or 0, previous[key] or 0
        out[key] = {"previous": prev, "current": cur, "change": cur - prev, "change_pct": ((cur - prev) / prev * 100.0) if prev else None}
    return out


def time_series(calls: pl.DataFrame) -> pl.DataFrame:
    """Cost, tokens and requests per period (day, or week past ``WEEKLY_AFTER_DAYS``) and model (top models + other).

    Requests without a time are left out (counted in the headline, not placed in a period).
    """
    dated = calls.filter(pl.col("day").is_not_null())
    if dated.is_empty():
        schema = {"period": pl.Date, "period_days": pl.Int32, "model": pl.String, "cost_usd": pl.Float64, "total_tokens": pl.Int64, "requests": pl.Int64}
        return pl.DataFrame(schema=schema)
    weekly = (dated["day"].max() - dated["day"].min()).days > WEEKLY_AFTER_DAYS  # type: ignore[operator]
    period = pl.col("day").dt.truncate("1w") if weekly else pl.col("day")
    totals = calls.group_by("model").agg(pl.col("cost_usd").sum(), (pl.col("input_total_tokens") + pl.col("output_tokens")).sum().alias("t"))
    keep = totals.sort("cost_usd", "t", descending=True, nulls_last=True).head(TOP_MODELS)["model"].to_list()
    return (
        dated.with_columns(period.alias("period"), pl.when(pl.col("model").is_in(keep)).then(pl.col("model")).otherwise(pl.lit(OTHER)).alias("model"))
        .group_by("period", "model")
        .agg(pl.col("cost_usd").sum(), (pl.col("input_total_tokens") + pl.col("output_tokens")).sum().alias("total_tokens"), pl.col("requests").sum())
        .with_columns(pl.lit(7 if weekly else 1, pl.Int32).alias("period_days"))
        .select("period", "period_days", "model", "cost_usd", "total_tokens", "requests")
        .sort("period", "model")
    )


def breakdown(calls: pl.DataFrame, key: str) -> pl.DataFrame:
    """Spend, tokens, requests and sessions per ``key`` (model, project or agent), largest spend first."""
    return (
        calls.group_by(key)
        .agg(*_sums(), pl.col("session_id").n_unique().alias("sessions"))
        .sort("cost_usd", "total_tokens", descending=True, nulls_last=True)
    )


def spend_tree(calls: pl.DataFrame) -> pl.DataFrame:
    """Spend per project → agent → model, each level cut to its top entries plus "other" (``TREEMAP_TOP``)."""
    leaves = calls.group_by("project", "agent", "model").agg(
        pl.col("cost_usd").sum().fill_null(0.0), (pl.col("input_total_tokens") + pl.col("output_tokens")).sum().alias("total_tokens")
    )
    n_project, n_agent, n_model = TREEMAP_TOP

    def cut(df: pl.DataFrame, level: str, within: list[str], n: int) -> pl.DataFrame:
        totals = df.group_by(*within, level).agg(pl.col("cost_usd").sum().alias("_c"), pl.col("total_tokens").sum().alias("_t"))
        order = pl.int_range(1, pl.len() + 1)
        ranked = totals.sort("_c", "_t", level, descending=[True, True, False]).with_columns((order.over(within) if within else order).alias("_rank"))
        df = df.join(ranked.select(*within, level, "_rank"), on=[*within, level], how="left")
        return df.with_columns(pl.when(pl.col("_rank") <= n).then(pl.col(level)).otherwise(pl.lit(OTHER)).alias(level)).drop("_rank")

    tree = cut(leaves, "project", [], n_project)
    tree = cut(tree, "agent", ["project"], n_agent)
    tree = cut(tree, "model", ["project", "agent"], n_model)
    return tree.group_by("project", "agent", "model").agg(pl.col("cost_usd").sum(), pl.col("total_tokens").sum()).sort(
        "cost_usd", "total_tokens", descending=True
    )


def tool_table(tools: pl.DataFrame, per_call: pl.DataFrame, key: str, input_tokens: int) -> pl.DataFrame:
    """Per tool (``tool_key``) or MCP server: calls, errors, result tokens and their methods, direct and replayed cost.

    ``tools`` are the window's tool calls; ``per_call`` is ``analyze.replay.call_attribution``
    over them (the calls it can place on a request). The roll-up is that of
    ``analyze.replay.attribution`` — done here once per key over one shared per-call
    frame, because ``attribution`` recomputes the per-call frame on every call, which costs
    seconds on a million tool calls. ``replay_share`` is the replayed tokens over all
    ``input_tokens`` the window's requests read.
    """
    group = pl.col("tool_key") if key == "tool" else server_key(remote_hosts=False)  # (report.data's calls, keyed as logged)
    counts = (
        tools.with_columns(group.alias(key))
        .group_by(key)
        .agg(
            pl.len().cast(pl.Int64).alias("calls"),
            pl.col("is_error").sum().cast(pl.Int64).alias("errors"),
            pl.col("args_tokens").sum().alias("args_tokens"),
            pl.col("result_tokens").sum().alias("result_tokens"),
            pl.col("result_tokens_method").drop_nulls().unique().sort().str.join(", ").alias("result_tokens_methods"),
        )
    )
    attr = (
        per_call.with_columns(group.alias(key))
        .group_by(key)
        .agg(
            pl.col("direct_tokens").sum(),
            pl.col("replay_tokens").sum(),
            pl.col("direct_usd").sum(),
            pl.col("replay_usd").sum(),
            pl.col("direct_usd").is_null().any().alias("partly_unpriced"),
        )
        .with_columns((pl.col("replay_tokens") / (input_tokens or 1)).alias("replay_share"))
    )
    return (
        counts.join(attr, on=key, how="left")
        .with_columns(pl.col("direct_tokens").fill_null(0), pl.col("replay_tokens").fill_null(0), pl.col("partly_unpriced").fill_null(False))
        .sort("replay_usd", "replay_tokens", "calls", descending=True, nulls_last=True)
    )


def session_table(calls: pl.DataFrame, tools: pl.DataFrame, findings: list[dict[str, Any]]) -> pl.DataFrame:
    """Per session in the window: spend, tokens, requests, tool calls, and the excess its findings name.

    A session's excess is the largest any one finding attributes to it: findings
    overlap (the combined economic-DoS verdict repeats its parts), so they are not summed.
    """
    per = calls.group_by("session_id").agg(
        pl.col("project").first(),
        pl.col("agent").first(),
        pl.col("conversation").first().alias("parent_session_id"),
        pl.col("model").mode().sort().first().alias("model"),
        pl.col("ts_utc").min().alias("first_request_utc"),
        *_sums(),
    )
    per = per.with_columns(pl.when(pl.col("parent_session_id") == pl.col("session_id")).then(None).otherwise(pl.col("parent_session_id")).alias("parent_session_id"))
    tool_counts = tools.group_by("session_id").agg(pl.len().cast(pl.Int64).alias("tool_calls"), pl.col("is_error").sum().cast(pl.Int64).alias("tool_errors"))
    rank = {s: i for i, s in enumerate(SEVERITIES)}
    fr = pl.DataFrame(
        {
            "session_id": [f["session_id"] for f in findings],
            "excess_usd": [f["excess_usd"] for f in findings],
            "excess_tokens": [f["excess_tokens"] for f in findings],
            "_sev": [rank.get(f["severity"], 0) for f in findings],
        },
        schema={"session_id": pl.String, "excess_usd": pl.Float64, "excess_tokens": pl.Int64, "_sev": pl.Int64},
    )
    per_finding = fr.group_by("session_id").agg(
        pl.len().cast(pl.Int64).alias("findings"), pl.col("excess_usd").max(), pl.col("excess_tokens").max(), pl.col("_sev").max()
    )
    out = per.join(tool_counts, on="session_id", how="left").join(per_finding, on="session_id", how="left")
    return out.with_columns(
        pl.col("tool_calls").fill_null(0),
        pl.col("tool_errors").fill_null(0),
        pl.col("findings").fill_null(0),
        pl.col("_sev").replace_strict(dict(enumerate(SEVERITIES)), default=None, return_dtype=pl.String).alias("max_severity"),
    ).drop("_sev").sort("cost_usd", "total_tokens", descending=True, nulls_last=True)


def _drilldown(anchor: str, session: dict[str, Any], calls: pl.DataFrame, tools: pl.DataFrame, findings: list[dict[str, Any]]) -> Drilldown:
    turns = calls.select(
        "turn",
        "input_tokens",
        "cache_read_tokens",
        (pl.col("cache_write_5m_tokens") + pl.col("cache_write_1h_tokens")).alias("cache_write_tokens"),
        "output_tokens",
        "cost_usd",
    )
    per_turn = tools.group_by("turn").agg(
        pl.len().cast(pl.Int64).alias("tool_calls"),
        pl.col("is_error").sum().cast(pl.Int64).alias("tool_errors"),
        pl.col("tool_key").fill_null("?").value_counts(sort=True).head(3).alias("_top"),
    )
    per_turn = per_turn.with_columns(
        pl.col("_top").list.eval(pl.element().struct.field("tool_key")).list.join(", ").alias("tool_names")
    ).drop("_top")
    turns = turns.join(per_turn, on="turn", how="left").with_columns(pl.col("tool_calls").fill_null(0), pl.col("tool_errors").fill_null(0)).sort("turn")
    bucket = max(1, -(-turns.height // MAX_TURN_POINTS))
    if bucket > 1:
        # Averages keep the shape of context growth; tool calls are summed so none disappears.
        turns = (
            turns.with_columns((pl.col("turn") // bucket * bucket).alias("turn"))
            .group_by("turn")
            .agg(
                pl.col("input_tokens", "cache_read_tokens", "cache_write_tokens", "output_tokens").mean().round(0).cast(pl.Int64),
                pl.col("cost_usd").sum(),
                pl.col("tool_calls").sum(),
                pl.col("tool_errors").sum(),
                pl.col("tool_names").drop_nulls().first(),
            )
            .sort("turn")
        )
    return Drilldown(anchor=anchor, session=session, turns=turns, findings=findings, bucket_turns=bucket)


def estimates(calls: pl.DataFrame, tools: pl.DataFrame) -> dict[str, Any]:
    """Which figures are exact and which are estimated, with the method of each estimate."""

    def counts(df: pl.DataFrame, column: str, value: str | None = None) -> dict[str, Any]:
        if df.is_empty():
            return {}
        aggs = [pl.len().alias("n")] + ([pl.col(value).sum().alias("v")] if value else [])
        rows = df.group_by(pl.col(column).fill_null("(none)")).agg(*aggs).sort(column).rows()
        return {r[0]: ({"calls": r[1], "tokens": r[2]} if value else r[1]) for r in rows}

    return {
        "requests_by_usage_source": counts(calls, "usage_source"),
        "output_lower_bound_requests": int(calls["output_is_lower_bound"].sum()) if calls.height else 0,
        "cache_ttl_unknown_requests": int((~calls["cache_ttl_known"]).sum()) if calls.height else 0,
        "tool_result_tokens_by_method": counts(tools, "result_tokens_method", "result_tokens"),
        "tool_args_tokens_by_method": counts(tools, "args_tokens_method", "args_tokens"),
    }


def findings_summary(findings: list[dict[str, Any]]) -> dict[str, Any]:
    """Findings counted by severity (every level, most severe last) and by detector."""
    by_detector: dict[str, int] = {}
    for f in findings:
        by_detector[f["detector"]] = by_detector.get(f["detector"], 0) + 1
    return {
        "total": len(findings),
        "by_severity": {s: sum(1 for f in findings if f["severity"] == s) for s in SEVERITIES},
        "by_detector": dict(sorted(by_detector.items())),
        "economic_dos_sessions": len({f["session_id"] for f in findings if f["detector"] == "economic_dos"}),
    }


def summarize(data: ReportData, *, generated_at_utc: datetime) -> Report:
    """Compute a :class:`Report` from the data read for its window."""
    calls_all = _with_session_keys(data.calls, data.sessions)
    calls = calls_all.filter(pl.col("in_window"))
    # Calls without a request to place them on (MCP transcripts, turn -1) count in the tool tables;
    # attribution's join on (session, turn) leaves them out of the dollars.
    tools = data.tools.with_row_index("tool_row")
    frames = Frames(
        calls=calls,
        tools=tools,
        sessions=data.sessions,
        tool_defs=pl.DataFrame(),
        events=pl.DataFrame(),
    )
    # Attribution partitions and joins by session: on 64-bit session hashes that is about twice as
    # fast as on the id strings, which ride along under "session".
    keyed = Frames(
        calls=calls.drop("session_id").rename({"sid": "session_id"}),
        tools=frames.tools.rename({"session_id": "session"}).rename({"sid": "session_id"}),
        sessions=data.sessions,
        tool_defs=frames.tool_defs,
        events=frames.events,
    )
    per_call = call_attribution(keyed).drop("session_id").rename({"session": "session_id"})
    input_tokens = int(calls["input_total_tokens"].sum() or 0)
    by_tool = tool_table(tools, per_call, "tool", input_tokens)
    by_server = tool_table(tools, per_call, "mcp_server", input_tokens)
    head = headline(calls, tools)
    sessions = session_table(calls, tools, data.findings)
    top_cost = sessions.head(TOP_SESSIONS)
    top_excess = (
        sessions.filter(pl.col("findings") > 0)
        .sort("excess_usd", "excess_tokens", "cost_usd", descending=True, nulls_last=True)
        .head(TOP_SESSIONS)
    )
    drill_ids: list[str] = []
    for sid in [*top_cost["session_id"].to_list(), *top_excess["session_id"].to_list()]:
        if sid not in drill_ids and len(drill_ids) < MAX_DRILLDOWNS:
            drill_ids.append(sid)
    by_session_calls = {k[0]: v for k, v in calls_all.filter(pl.col("session_id").is_in(drill_ids)).partition_by("session_id", as_dict=True).items()}
    by_session_tools = {k[0]: v for k, v in tools.filter(pl.col("session_id").is_in(drill_ids)).partition_by("session_id", as_dict=True).items()}
    session_rows = {r["session_id"]: r for r in sessions.filter(pl.col("session_id").is_in(drill_ids)).iter_rows(named=True)}
    empty_tools = tools.clear()
    drilldowns = [
        _drilldown(
            f"s-{i + 1}",
            session_rows[sid],
            by_session_calls[sid],
            by_session_tools.get(sid, empty_tools),
            [f for f in data.findings if f["session_id"] == sid],
        )
        for i, sid in enumerate(drill_ids)
    ]
    notes = list(data.notes)
    if head["unpriced_models"]:
        notes.append(
            f"{head['unpriced_requests']:,} requests use models with no known price ({', '.join(head['unpriced_models'])}): "
            "their cost is not in the spend (never counted as $0)"
        )
    est = estimates(calls, tools)
    if est["output_lower_bound_requests"]:
        notes.append(f"{est['output_lower_bound_requests']:,} requests logged a streaming placeholder for output tokens: output is a lower bound")
    if tools.height:
        notes.append(
            "tool token sizes are estimates unless their method says 'reported' (agent logs report tokens per request, not per tool "
            "result); direct vs replayed cost is computed from them"
        )
    if data.audit_run is None:
        notes.append("no audit has run on this store: run `tokaudit audit` for findings and top sessions by excess")
    return Report(
        window=data.window,
        generated_at_utc=generated_at_utc,
        price_source=data.price_source,
        audit_run=data.audit_run,
        headline=head,
        previous=data.previous_totals,
        deltas=deltas(head, data.previous_totals),
        time_series=time_series(calls),
        by_model=breakdown(calls, "model"),
        by_project=breakdown(calls, "project"),
        by_agent=breakdown(calls, "agent"),
        spend_tree=spend_tree(calls),
        tools=by_tool,
        mcp_servers=by_server,
        sessions=sessions,
        top_by_cost=top_cost,
        top_by_excess=top_excess,
        findings=data.findings,
        findings_summary=findings_summary(data.findings),
        problems_by_kind=data.problems_by_kind,
        problems=data.problems,
        estimates=est,
        drilldowns=drilldowns,
        frames=frames,
        tool_attribution=per_call,
        notes=notes,
    )
