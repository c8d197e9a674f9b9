"""Token estimates for tool traffic, self-calibrated on the logs that allow it.

Agent logs report tokens per model request, not per tool result, yet a tool
result's tokens are what it costs: it is re-read on every later call. Where a
log has a count (MCP transcripts tokenized at ingest, reported usage) that
count is used; everywhere else the size in bytes is turned into tokens here.

**Calibration.** Claude Code and Codex logs hold both the size of each tool
step and exact usage around it. For a *single-tool step* — request ``r`` asks
for exactly one tool call, and the next main-chain request ``r'`` of the same
session follows with no compaction in between — the context grows by an exact
amount: ``Δ = input_total(r') − input_total(r)`` (uncached + cache read + cache
writes). That growth holds the tool result, the assistant's tool-call turn and
some framing, so per model family and content type tokaudit fits::

    Δ ≈ tokens_per_byte · result_bytes + args_tokens_per_byte · args_bytes + overhead_tokens

by least squares with non-negative coefficients, on 4 of every 5 steps (chosen
by a hash of the tool call id, so reruns agree); the fifth is held out and the
fit's relative error on it is stored beside that of the plain ``bytes/4``
heuristic. ``tokaudit calibrate`` runs this and shows both.

**Estimates.** A tool result's tokens are, in order of preference: the count
stored at ingest (``reported`` or ``tokenizer:<encoding>``); the calibrated
fit of the calling model's family and the result's content type
(``calibrated:<family>/<content type>``, or ``calibrated:<family>/any``);
``heuristic:bytes/4``. The method travels with every figure.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

import numpy as np

from tokaudit.ingest.base import utc_now
from tokaudit.store.engine import Store
from tokaudit.store.queries import dedup_relation, fetch_dicts

MIN_TRAIN_STEPS = 8  # fewer single-tool steps than this: no fit (the heuristic is used)
# Text cannot take more than about one token per byte; a fit outside this range means the logged
# sizes do not match what the model read (redacted or truncated text) and is not used.
PLAUSIBLE_TOKENS_PER_BYTE = (0.02, 1.0)
HOLD_OUT_EVERY = 5
HEURISTIC_BYTES_PER_TOKEN = 4
ANY_CONTENT = "any"

# Model families (tokenizers differ per family, not per model): the first pattern matching the lowercased
# model id names it; no model is "unknown", anything else "other". One list feeds both the SQL here
# and the polars expression of the analysis frames (analyze.frames).
FAMILY_PATTERNS = (("claude", "claude"), ("openai", "^gpt|^o[0-9]|codex"), ("gemini", "gemini"))
FAMILY_SQL = (
    "CASE WHEN {m} IS NULL THEN 'unknown' "
    + " ".join(f"WHEN regexp_matches(lower({{m}}), '{pattern}') THEN '{family}'" for family, pattern in FAMILY_PATTERNS)
    + " ELSE 'other' END"
)

# First listed content type of a result ("image,text" -> "image"); results without one are text.
CONTENT_SQL = "coalesce(nullif(split_part({c}, ',', 1), ''), 'text')"


@dataclass
class TokenFit:
    """One calibrated fit and its held-out error (relative, as a fraction)."""

    model_family: str
    content_type: str
    tokens_per_byte: float
    args_tokens_per_byte: float
    overhead_tokens: float
    samples: int
    held_out: int
    median_rel_error: float | None
    p90_rel_error: float | None
    heuristic_median_rel_error: float | None
    heuristic_p90_rel_error: float | None
    rejected: str | None = None  # why the fit is not used (not stored)

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def single_tool_steps(store: Store) -> list[dict[str, Any]]:
    """Every single-tool step with its exact context growth (see the module docstring)."""
    relation = dedup_relation(store)
    return fetch_dicts(
        store,
        f"""
        WITH calls AS (
            SELECT session_id, call_key, ts_utc, model,
                   input_tokens + cache_read_tokens + cache_write_5m_tokens + cache_write_1h_tokens AS input_total,
                   lead(input_tokens + cache_read_tokens + cache_write_5m_tokens + cache_write_1h_tokens)
                       OVER w AS next_input_total,
                   lead(ts_utc) OVER w AS next_ts_utc
            FROM {relation}
            WHERE NOT is_sidechain AND NOT is_aggregate AND ts_utc IS NOT NULL
            WINDOW w AS (PARTITION BY session_id ORDER BY ts_utc, line_no)
        ),
        steps AS (
            SELECT c.session_id, c.ts_utc, c.next_ts_utc, c.model,
                   c.next_input_total - c.input_total AS delta_tokens,
                   count(*) AS n_tools,
                   any_value(t.tool_call_id) AS tool_call_id,
                   any_value(t.result_bytes) AS result_bytes,
                   any_value(t.args_bytes) AS args_bytes,
                   any_value(t.result_content_types) AS content_types,
                   any_value(t.result_ts_utc) AS result_ts_utc
            FROM calls AS c JOIN tool_calls AS t ON t.call_key = c.call_key AND t.session_id = c.session_id
            WHERE c.next_input_total IS NOT NULL
            GROUP BY ALL
        )
        SELECT {FAMILY_SQL.format(m="s.model")} AS model_family,
               {CONTENT_SQL.format(c="s.content_types")} AS content_type,
               s.tool_call_id, s.result_bytes, coalesce(s.args_bytes, 0) AS args_bytes, s.delta_tokens
        FROM steps AS s
        WHERE s.n_tools = 1 AND s.result_bytes > 0 AND s.delta_tokens > 0
          AND (s.result_ts_utc IS NULL OR s.result_ts_utc <= s.next_ts_utc)
          AND NOT EXISTS (
              SELECT 1 FROM session_events AS e
              WHERE e.session_id = s.session_id AND e.kind = 'compaction' AND e.ts_utc > s.ts_utc AND e.ts_utc <= s.next_ts_utc
          )
        ORDER BY s.tool_call_id
        """,
    )


def _held_out(tool_call_id: str) -> bool:
    return int(hashlib.sha256(tool_call_id.encode()).hexdigest()[:8], 16) % HOLD_OUT_EVERY == 0


def _nonneg_lstsq(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Least squares with every coefficient >= 0: refit without the columns that came out negative."""
    active = list(range(x.shape[1]))
    while active:
        coef, *_ = np.linalg.lstsq(x[:, active], y, rcond=None)
        if (coef >= 0).all():
            out = np.zeros(x.shape[1])
            out[active] = coef
            return out
        active = [a for a, c in zip(active, coef) if c > 0]
    return np.zeros(x.shape[1])


def _rel_errors(predicted: np.ndarray, actual: np.ndarray) -> tuple[float | None, float | None]:
    if not len(actual):
        return None, None
    err = np.abs(predicted - actual) / actual
    return float(np.median(err)), float(np.quantile(err, 0.9))


def fit_steps(family: str, content_type: str, steps: list[dict[str, Any]]) -> TokenFit | None:
    """Fit one family and content type; None when there are too few steps to learn from."""
    train = [s for s in steps if not _held_out(s["tool_call_id"])]
    test = [s for s in steps if _held_out(s["tool_call_id"])]
    if len(train) < MIN_TRAIN_STEPS:
        return None

    def matrix(rows: list[dict[str, Any]]) -> tuple[np.ndarray, np.ndarray]:
        x = np.array([[r["result_bytes"], r["args_bytes"], 1.0] for r in rows], dtype=float).reshape(-1, 3)
        y = np.array([r["delta_tokens"] for r in rows], dtype=float)
        return x, y

    x, y = matrix(train)
    coef = _nonneg_lstsq(x, y)
    tx, ty = matrix(test)
    fitted = _rel_errors(tx @ coef, ty)
    heuristic = _rel_errors((tx[:, 0] + tx[:, 1]) / HEURISTIC_BYTES_PER_TOKEN, ty)
    fit = TokenFit(family, content_type, float(coef[0]), float(coef[1]), float(coef[2]), len(train), len(test), *fitted, *heuristic)
    low, high = PLAUSIBLE_TOKENS_PER_BYTE
    if not low <= fit.tokens_per_byte <= high:
        fit.rejected = (
            f"{fit.tokens_per_byte:.3g} tokens per result byte is outside {low}-{high}: "
            "the logged sizes do not match what the model read (redacted or truncated text?)"
        )
    return fit


def calibrate(store: Store, *, save: bool = True) -> list[TokenFit]:
    """Fit tokens per byte per model family and content type (and per family over all content).

    Saves the usable fits in ``token_fits`` (replacing earlier ones) unless ``save`` is False or
    the store is read-only; rejected fits are returned with the reason.
    """
    steps = single_tool_steps(store)
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for s in steps:
        groups.setdefault((s["model_family"], s["content_type"]), []).append(s)
        groups.setdefault((s["model_family"], ANY_CONTENT), []).append(s)
    fits = [f for (family, ctype), rows in sorted(groups.items()) if (f := fit_steps(family, ctype, rows)) is not None]
    if save and not store.read_only:
        with store.transaction() as duck:
            duck.execute("DELETE FROM token_fits")
            now = utc_now()
            for f in fits:
                if f.rejected:
                    continue
                row = f.to_dict()
                del row["rejected"]
                columns = ", ".join([*row, "fitted_at_utc"])
                duck.execute(f"INSERT INTO token_fits ({columns}) VALUES ({', '.join('?' * (len(row) + 1))})", [*row.values(), now])
    return fits


def result_tokens_sql(tool_alias: str = "t", model_sql: str = "m.model") -> tuple[str, str, str]:
    """SQL pieces for a tool call's result tokens and their method.

    Returns ``(joins, tokens_expr, method_expr)``: ``joins`` attaches the
    calling request's model (as ``m``) and the fits (``f`` for the content type,
    ``fa`` for the family's fit over all content) to rows of ``tool_calls`` aliased
    ``tool_alias``.
    """
    t = tool_alias
    family = FAMILY_SQL.format(m=model_sql)
    content = CONTENT_SQL.format(c=f"{t}.result_content_types")
    joins = f"""
        LEFT JOIN (SELECT call_key, any_value(model) AS model FROM llm_calls GROUP BY call_key) AS m ON m.call_key = {t}.call_key
        LEFT JOIN token_fits AS f ON f.model_family = {family} AND f.content_type = {content}
        LEFT JOIN token_fits AS fa ON fa.model_family = {family} AND fa.content_type = '{ANY_CONTENT}'
    """
    tokens = f"""CASE
        WHEN {t}.result_tokens IS NOT NULL THEN {t}.result_tokens
        WHEN {t}.result_bytes IS NULL THEN NULL
        WHEN f.tokens_per_byte IS NOT NULL THEN CAST(round(f.tokens_per_byte * {t}.result_bytes) AS BIGINT)
        WHEN fa.tokens_per_byte IS NOT NULL THEN CAST(round(fa.tokens_per_byte * {t}.result_bytes) AS BIGINT)
        ELSE CAST(ceil({t}.result_bytes / {HEURISTIC_BYTES_PER_TOKEN}) AS BIGINT) END"""
    method = f"""CASE
        WHEN {t}.result_tokens IS NOT NULL THEN coalesce({t}.result_tokens_method, 'reported')
        WHEN {t}.result_bytes IS NULL THEN NULL
        WHEN f.tokens_per_byte IS NOT NULL THEN 'calibrated:' || f.model_family || '/' || f.content_type
        WHEN fa.tokens_per_byte IS NOT NULL THEN 'calibrated:' || fa.model_family || '/{ANY_CONTENT}'
        ELSE 'heuristic:bytes/{HEURISTIC_BYTES_PER_TOKEN}' END"""
    return joins, tokens, method
