"""D10 — reasoning overthinking: a request that thinks far more than results of that tool usually make it.

Reasoning tokens of a request — when not reported separately, its output minus
the arguments of the tool calls it made (a large file write is output, not
thought) — after a tool result, against how hard results of the **same tool**
make the same model think in a typical session: the ``baseline_quantile`` (the
median) over sessions of each session's hardest request after that tool (when
``min_tool_sessions`` sessions read it; else after any tool result). A model
with fewer than ``min_model_sessions`` such sessions (new, or rarely used: a
decoy aimed at it must not pass for want of a baseline) is held to its vendor
family's level (Claude, OpenAI, Gemini models pooled) when the family has enough. Decoy
problems arrive in one tool's results (OverThink), and a tool whose results
normally provoke hard thinking — failing test output — is held to its own
level, not to the cheap lookups around it. The baseline is taken over sessions,
not requests, so that a server planting decoys in many sessions cannot raise
its own bar: a request tail (p99) is already the attack once more than one
request in a hundred is one. Fires on ≥ ``min_times_baseline`` × that level,
≥ ``min_tokens`` and ≥ ``min_times_session_p25`` × the session's own lower
quartile; requests reading no tool result are not compared (deliberate thinking
on a user's prompt is not suspicious). Catches decoys planted in tool results,
reasoning bombs and sponge prompts. False positives: genuinely hard results
from a tool that rarely produces them, reasoning-effort changes. Whether the
result came from outside the user's machine — an MCP server's, or a built-in
tool reading the web (``EXTERNAL_TOOL_PATTERN``) — is in the evidence
(``external``): a model thinking hard over its own test run or patch is
working, so the combined verdict leaves such a spike to this finding. Whether the request stood out
from its own session is in the evidence (``stands_out``: ≥ ``min_times_session_median`` × the
session's median request; a session thinking that hard on most of its requests is a hard task), and
whether it thought more than after any of the session's own tools' results is too
(``beyond_own``): a decoy makes the model think beyond anything else in its session, a hard task
also over its own files and test runs.

A server can also plant smaller decoys, one in each of its results: metric
``repeated_reasoning_vs_session`` fires when at least ``min_repeated`` requests
after one external tool's results, and at least half of them, each thought ≥ ``min_repeated_tokens``, and
they thought ``min_times_session_others`` × as much (median against median) as
the same session's requests after its other tools; ``repeated_reasoning_vs_level`` when the session read too
few other results to compare with (a task spent on one server's answers), at ``min_times_baseline`` × typical
sessions' hardest request. The session's own requests
are the yardstick, so a hard task is not one; the combined verdict asks a cost
blowup beside it.
"""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

from tokaudit.analyze.detectors import Finding
from tokaudit.analyze.detectors._common import Context, previous
from tokaudit.analyze.frames import with_model_family

# Built-in tools that read content from the web (WebFetch, WebSearch, web_search, browse_url, http_get …),
# which a decoy can reach the model through as well as through a server.
EXTERNAL_TOOL_PATTERN = r"(?i)web|fetch|brows|url|http"

NAME = "overthinking"
TITLE = "Reasoning far above what the tool's results usually cause (D10)"


@dataclass(frozen=True)
class Params:
    min_times_baseline: float = 6.0
    min_tokens: int = 3000
    baseline_quantile: float = 0.5  # over sessions: robust while fewer than half of a tool's sessions are attacked
    min_model_sessions: int = 10  # fewer sessions of a model (and of its family) reading tool results: no baseline
    min_tool_sessions: int = 20  # fewer sessions read one tool: compare with the model's requests after any tool
    # A hard task thinks hard on most requests; a decoy makes one request think far beyond the rest of
    # its own session (its lower quartile: robust to a few decoys, defined for short sessions).
    min_times_session_p25: float = 5.0
    # Evidence ``stands_out``: the request thought this many times the session's median request.
    min_times_session_median: float = 3.0
    # Smaller decoys in every result of one external tool: this many requests, each thinking this much, at this
    # multiple of the session's requests after its other tools (median against median; at least three of those).
    min_repeated: int = 3
    min_repeated_tokens: int = 2000
    min_times_session_others: float = 4.0


def detect(context: Context, params: Params) -> list[Finding]:
    if context.tools.is_empty():
        return []
    # Per request: the arguments it wrote, and the tool whose result the next request read (its last call;
    # context.tools is in call order, which group_by keeps within each group). Keyed by ``request_hash`` (an
    # integer): joins on (session, turn) took half this detector's time.
    last_call = (pl.col("tool_key").last().alias("_fed_by"), pl.col("is_mcp").last().alias("_fed_by_mcp"))
    tools = context.tools.select("session_id", "request_hash", "args_tokens", "tool_key", "is_mcp")
    per_request = tools.filter(pl.col("request_hash").is_not_null()).group_by("request_hash").agg(pl.col("args_tokens").sum().alias("_args"), *last_call)
    # Calls logged before any request of their session (no request_hash): its first request read them.
    before_any = tools.filter(pl.col("request_hash").is_null()).group_by("session_id").agg(*last_call)
    # Only the columns read below go through the joins (the request frame has twenty). The calls are sorted by
    # session and turn, so the request before each is the row before.
    requests = context.frames.calls.select(
        "session_id", "turn", "model", "reasoning_tokens", "output_tokens", "is_aggregate", "call_hash", previous("call_hash").alias("_prev_hash")
    ).filter(~pl.col("is_aggregate"))
    calls = requests.join(per_request.select("request_hash", "_args"), left_on="call_hash", right_on="request_hash", how="left")
    fed = pl.concat([
        calls.join(per_request.drop("_args"), left_on="_prev_hash", right_on="request_hash", how="inner"),
        calls.filter(pl.col("turn") == 0).join(before_any, on="session_id", how="inner"),
    ])
    # The web-tool pattern is tested once per tool, not once per request.
    web = fed.select(pl.col("_fed_by").unique()).with_columns(pl.col("_fed_by").str.contains(EXTERNAL_TOOL_PATTERN).alias("_web"))
    calls = fed.join(web, on="_fed_by", how="left").with_columns(
        (pl.col("_fed_by_mcp").fill_null(False) | pl.col("_web")).alias("_external"),
        pl.coalesce(pl.col("reasoning_tokens"), pl.max_horizontal(pl.lit(0), pl.col("output_tokens") - pl.col("_args").fill_null(0))).alias("_think"),
    ).drop("_web", "_fed_by_mcp", "call_hash", "_prev_hash", "is_aggregate")
    if calls.is_empty():
        return []
    # The session's typical request: every request of it, whether or not it read a tool result.
    effort = pl.coalesce(pl.col("reasoning_tokens"), pl.col("output_tokens"))
    typical = (
        context.frames.calls.filter(~pl.col("is_aggregate"))
        .group_by("session_id")
        .agg(effort.quantile(0.25, interpolation="lower").alias("_session_p25"), effort.median().alias("_session_median"))
        # The hardest the session thought over its own tools' results (a failing test, a file): a decoy makes the
        # model think beyond anything else in its session.
        .join(calls.filter(~pl.col("_external")).group_by("session_id").agg(pl.col("_think").max().alias("_own_hardest")),
              on="session_id", how="left")
    )
    q = params.baseline_quantile
    # Each session's hardest request after the tool (and after any tool), then the level typical sessions reach.
    per_tool = (
        calls.group_by("session_id", "model", "_fed_by").agg(pl.col("_think").max().alias("_hardest"))
        .group_by("model", "_fed_by").agg(pl.col("_hardest").quantile(q).alias("_level_tool"), pl.len().alias("_n_tool"))
    )
    hardest = with_model_family(calls.group_by("session_id", "model").agg(pl.col("_think").max().alias("_hardest")))
    per_model = hardest.group_by("model").agg(pl.col("_hardest").quantile(q).alias("_level_model"), pl.len().alias("_n_model"))
    per_family = hardest.group_by("_family").agg(pl.col("_hardest").quantile(q).alias("_level_family"), pl.len().alias("_n_family"))
    own_model = pl.col("_n_model") >= params.min_model_sessions
    level = pl.when(own_model).then(pl.col("_level_model")).otherwise(pl.col("_level_family"))
    levels = (with_model_family(calls.select("session_id", "model").unique()).join(per_model, on="model", how="left")
              .join(per_family, on="_family", how="left")
              .filter(pl.when(own_model).then(pl.col("_n_model")).otherwise(pl.col("_n_family")) >= params.min_model_sessions)
              .group_by("session_id").agg(level.max().alias("_level")))
    repeated = _repeated_spikes(calls, params, levels)
    # The levels are over every request; only requests above the token floor can fire, so only they get them.
    calls = with_model_family(calls.filter(pl.col("_think") >= params.min_tokens)).join(typical, on="session_id", how="left")
    calls = (
        calls.join(per_tool, on=["model", "_fed_by"], how="left")
        .join(per_model, on="model", how="left")
        .join(per_family, on="_family", how="left")
        .with_columns(
            # The tool level is the model's own: a family's pooled tool levels would mix models' habits twice.
            pl.when(own_model & (pl.col("_n_tool") >= params.min_tool_sessions)).then(pl.col("_level_tool"))
            .when(own_model).then(pl.col("_level_model"))
            .otherwise(pl.col("_level_family")).alias("_baseline"),
            (own_model & (pl.col("_n_tool") >= params.min_tool_sessions)).alias("_per_tool"),
            pl.when(own_model).then(pl.col("_n_model")).otherwise(pl.col("_n_family")).alias("_n"),
            own_model.alias("_own_model"),
        )
    )
    calls = calls.filter(
        (pl.col("_n") >= params.min_model_sessions)
        & (pl.col("_think") >= params.min_tokens)
        & (pl.col("_think") >= params.min_times_baseline * pl.max_horizontal(pl.col("_baseline"), pl.lit(1)))
        & (pl.col("_think") >= params.min_times_session_p25 * pl.max_horizontal(pl.col("_session_p25").fill_null(0), pl.lit(1)))
    )
    out = []
    for c in calls.iter_rows(named=True):
        kind = "reasoning" if c["reasoning_tokens"] is not None else "output"
        baseline = max(c["_baseline"], 1)
        against = f"after {c['_fed_by']!r} results" if c["_per_tool"] else "after any tool result"
        whose = f"{c['model']}'s sessions" if c["_own_model"] else f"{c['_family']} models' sessions (too few of {c['model']} alone)"
        level = f"the {'median' if q == 0.5 else f'p{q * 100:g}'} of the hardest request {against} in each of {whose}"
        out.append(
            Finding(
                detector=NAME, severity="medium", session_id=c["session_id"], first_turn=c["turn"], last_turn=c["turn"],
                metric=f"{kind}_tokens_vs_tool_level", value=c["_think"] / baseline,
                threshold=f"≥ {params.min_times_baseline}× {level}, and ≥ {params.min_tokens:,} tokens",
                excess_tokens=int(c["_think"] - baseline), excess_usd=None, tool_key=c["_fed_by"],
                explanation=(
                    f"Request {c['turn']} spent {c['_think']:,} {kind} tokens right after a result of {c['_fed_by']!r}: "
                    f"{c['_think'] / baseline:.1f}× {level}, {baseline:,.0f} tokens. "
                    "The result may have planted a decoy problem."
                ),
                evidence={"model": c["model"], "baseline_tokens": baseline, "after_tool_result": True, "fed_by": c["_fed_by"], "external": c["_external"],
                          "per_tool_baseline": c["_per_tool"], "session_p25_tokens": c["_session_p25"],
                          "session_median_tokens": c["_session_median"], "think_tokens": c["_think"],
                          "beyond_own": c["_think"] > (c["_own_hardest"] or 0),
                          "stands_out": c["_think"] >= params.min_times_session_median * max(c["_session_median"] or 0, 1),
                          "baseline_scope": "model" if c["_own_model"] else "family"},
            )
        )
    single = {(f.session_id, f.tool_key) for f in out}
    return out + [f for f in repeated if (f.session_id, f.tool_key) not in single]


def _repeated_spikes(calls: pl.DataFrame, params: Params, levels: pl.DataFrame) -> list[Finding]:
    """Findings for external tools after whose results a session kept thinking far more than after its other tools
    — or, in a session that read too few other results to compare with, far more than typical sessions' hardest
    request (``levels``: per session, the level of its model or family). ``calls``: requests that read a tool
    result, with ``_think``, ``_fed_by`` and ``_external``."""
    # Most of the requests after the tool, not every one: the request that reads its last result may only wrap up.
    heavy = pl.col("_think") >= params.min_repeated_tokens
    spiked = calls.filter(pl.col("_external")).group_by("session_id", "_fed_by").agg(
        pl.col("_think").filter(heavy).median().alias("_median"), heavy.sum().alias("_n"), pl.len().alias("_after"),
        pl.col("_think").filter(heavy).min().alias("_least"), pl.col("_think").filter(heavy).sum().alias("_total"),
        pl.col("turn").min().alias("first_turn"), pl.col("turn").max().alias("last_turn"),
    ).filter((pl.col("_n") >= params.min_repeated) & (2 * pl.col("_n") >= pl.col("_after")))
    if spiked.is_empty():
        return []
    others = (
        calls.join(spiked.select("session_id", "_fed_by"), on="session_id")
        .filter(pl.col("_fed_by") != pl.col("_fed_by_right"))
        .group_by("session_id", pl.col("_fed_by_right").alias("_fed_by"))
        .agg(pl.col("_think").median().alias("_others"), pl.len().alias("_n_others"))
    )
    # A session spent almost wholly on one external tool's results has no requests of its own to compare with:
    # typical sessions' hardest request is the yardstick then, at the single spike's multiple.
    spiked = spiked.join(others, on=["session_id", "_fed_by"], how="left").join(levels, on="session_id", how="left").filter(
        pl.when(pl.col("_n_others").fill_null(0) >= 3)
        .then(pl.col("_median") >= params.min_times_session_others * pl.max_horizontal(pl.col("_others"), pl.lit(1)))
        .otherwise(pl.col("_level").is_not_null() & (pl.col("_median") >= params.min_times_baseline * pl.max_horizontal(pl.col("_level"), pl.lit(1))))
    ).with_columns(pl.col("_n_others").fill_null(0) >= 3).rename({"_n_others": "_vs_session"})
    return [
        _repeated_finding(r, params) for r in spiked.iter_rows(named=True)
    ]


def _repeated_finding(r: dict, params: Params) -> Finding:
    """The finding for one row of ``_repeated_spikes``: against the session's other requests, or typical sessions."""
    yardstick = max((r["_others"] if r["_vs_session"] else r["_level"]) or 0, 1)
    against, times = (("the median of the session's requests after its other tools", params.min_times_session_others) if r["_vs_session"]
                      else ("typical sessions' hardest request after a tool result (the session read too few other results)",
                            params.min_times_baseline))
    return Finding(
        detector=NAME, severity="medium", session_id=r["session_id"], first_turn=r["first_turn"], last_turn=r["last_turn"],
        metric="repeated_reasoning_vs_session" if r["_vs_session"] else "repeated_reasoning_vs_level", value=r["_median"] / yardstick,
        threshold=(f"≥ {params.min_repeated} requests after one external tool, each ≥ {params.min_repeated_tokens:,} tokens, "
                   f"at ≥ {times}× {against} (medians)"),
        excess_tokens=int(r["_total"] - r["_n"] * yardstick), excess_usd=None, tool_key=r["_fed_by"],
        explanation=(
            f"{r['_n']} of the {r['_after']} requests that read a result of {r['_fed_by']!r} thought at least {r['_least']:,} tokens "
            f"(median {r['_median']:,.0f}), {r['_median'] / yardstick:.1f}× {against} ({yardstick:,.0f}). "
            "Its results may each carry a decoy problem."
        ),
        evidence={"after_tool_result": True, "fed_by": r["_fed_by"], "external": True, "requests": r["_n"],
                  "session_others_tokens": r["_others"], "baseline_tokens": None if r["_vs_session"] else yardstick, "repeated": True},
    )
