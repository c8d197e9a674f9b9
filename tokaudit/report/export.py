"""The report as a JSON document, and its underlying tables as CSV or Parquet files.

The JSON document (``schema: "tokaudit.report/1"``) carries the same numbers as
the HTML page; its JSON Schema ships as ``report-v1.schema.json`` beside this
module and ``reports/README.md`` describes every field.

Exported tables (one file per table and format, under ``tables/``):

=================  ==========================================================
``requests``       every request in the window: session, time, model, tokens by kind, cost
``tool_calls``     every tool call in the window, with direct and replayed tokens and dollars
``sessions``       per session: spend, tokens, tool calls, findings and excess
``daily``          spend, tokens and requests per period and model (top models + other)
``by_model``       spend and tokens per model (also ``by_project``, ``by_agent``)
``tools``          per tool: calls, errors, result tokens, direct vs replayed cost
``mcp_servers``    the same per MCP server
``findings``       every finding of the audit run on the window's sessions, evidence as JSON
=================  ==========================================================

CSV cells that a spreadsheet would run as a formula (starting with ``= + - @``,
tab or carriage return) get a leading ``'``: names in them come from logs.
"""

from __future__ import annotations

import json
from datetime import date, datetime
from pathlib import Path
from typing import Any

import polars as pl

from tokaudit.report.data import evidence_text
from tokaudit.report.model import Report
from tokaudit.report.numbers import csv_cell

SCHEMA_ID = "tokaudit.report/1"
SCHEMA_FILE = Path(__file__).with_name("report-v1.schema.json")
MAX_JSON_FINDINGS = 1000  # findings listed in report.json; every one is in the findings export
TABLE_FORMATS = ("csv", "parquet")


def _plain(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, float) and value != value:  # NaN is not JSON
        return None
    return value


def _records(df: pl.DataFrame) -> list[dict[str, Any]]:
    return [{k: _plain(v) for k, v in row.items()} for row in df.iter_rows(named=True)]


def report_dict(report: Report) -> dict[str, Any]:
    """The JSON document of a report (see ``reports/README.md`` and ``report-v1.schema.json``)."""
    h = {k: _plain(v) for k, v in report.headline.items()}
    findings = [{k: _plain(v) for k, v in f.items()} for f in report.findings[:MAX_JSON_FINDINGS]]
    return {
        "schema": SCHEMA_ID,
        "generated_at_utc": report.generated_at_utc.isoformat(),
        "tokaudit_version": report.tokaudit_version,
        "price_source": report.price_source,
        "window": report.window.to_dict(),
        "audit_run": None if report.audit_run is None else {k: _plain(v) for k, v in report.audit_run.items()},
        "headline": h,
        "previous": report.previous,
        "deltas": report.deltas,
        "time_series": _records(report.time_series),
        "by_model": _records(report.by_model),
        "by_project": _records(report.by_project),
        "by_agent": _records(report.by_agent),
        "tools": _records(report.tools),
        "mcp_servers": _records(report.mcp_servers),
        "top_sessions_by_cost": _records(report.top_by_cost),
        "top_sessions_by_excess": _records(report.top_by_excess),
        "findings_summary": report.findings_summary,
        "findings": findings,
        "problems": {"total": sum(report.problems_by_kind.values()), "by_kind": report.problems_by_kind, "first": report.problems},
        "estimates": report.estimates,
        "notes": report.notes,
    }


def report_json(report: Report) -> str:
    """The JSON document as text (UTF-8, indented)."""
    return json.dumps(report_dict(report), indent=2, ensure_ascii=False, default=str) + "\n"


def export_tables(report: Report) -> dict[str, pl.DataFrame]:
    """The underlying tables of a report, by name (see the module docstring)."""
    frames = report.frames
    requests = frames.calls.select(
        "session_id", "ts_utc", "day", "model", "provider", "project", "agent", "input_tokens", "cache_read_tokens",
        "cache_write_5m_tokens", "cache_write_1h_tokens", "output_tokens", "reasoning_tokens", "requests", "usage_source", "cost_usd",
    )  # fmt: skip
    attributed = report.tool_attribution.select("tool_row", "direct_tokens", "replay_tokens", "direct_usd", "replay_usd")
    per_call = (
        frames.tools.join(attributed, on="tool_row", how="left")
        .select(
            "session_id", "turn", "ts_utc", "tool_name", "mcp_server", "tool_key", "is_error", "args_bytes", "result_bytes",
            "args_tokens", "args_tokens_method", "result_tokens", "result_tokens_method", "direct_tokens", "replay_tokens",
            "direct_usd", "replay_usd",
        )
    )  # fmt: skip
    findings = pl.DataFrame(
        [{**{k: v for k, v in f.items() if k != "evidence"}, "evidence": evidence_text(f.get("evidence") or {})} for f in report.findings],
        schema={
            "audit_run_id": pl.Int64, "finding_no": pl.Int64, "detector": pl.String, "severity": pl.String, "session_id": pl.String,
            "first_turn": pl.Int64, "last_turn": pl.Int64, "metric": pl.String, "value": pl.String, "threshold": pl.String,
            "excess_tokens": pl.Int64, "excess_usd": pl.Float64, "tool_key": pl.String, "explanation": pl.String, "evidence": pl.String,
        },
    )  # fmt: skip
    return {
        "requests": requests,
        "tool_calls": per_call,
        "sessions": report.sessions,
        "daily": report.time_series,
        "by_model": report.by_model,
        "by_project": report.by_project,
        "by_agent": report.by_agent,
        "tools": report.tools,
        "mcp_servers": report.mcp_servers,
        "findings": findings,
    }


def _defuse_formulas(df: pl.DataFrame) -> pl.DataFrame:
    """Every text cell made safe for a spreadsheet and a terminal by the one rule, ``numbers.csv_cell``."""
    text = [c for c, t in df.schema.items() if t == pl.String]
    return df.with_columns(pl.col(c).map_elements(csv_cell, return_dtype=pl.String, skip_nulls=True) for c in text)


def write_tables(report: Report, out_dir: Path, formats: tuple[str, ...]) -> list[Path]:
    """Write every exported table in each of ``formats`` (csv, parquet) under ``out_dir/tables``; returns the paths."""
    wanted = [f for f in formats if f in TABLE_FORMATS]
    if not wanted:
        return []
    folder = out_dir / "tables"
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for name, df in export_tables(report).items():
        if "csv" in wanted:
            path = folder / f"{name}.csv"
            _defuse_formulas(df).write_csv(path)
            written.append(path)
        if "parquet" in wanted:
            path = folder / f"{name}.parquet"
            df.write_parquet(path)
            written.append(path)
    return written
