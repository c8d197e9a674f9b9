"""A short Markdown summary of a report: fits a pull-request comment or a chat message.

Names from logs are untrusted and Markdown renders inline HTML and links, so
every such string goes through :func:`md_text`: HTML-escaped, Markdown
punctuation backslash-escaped, newlines folded and length bounded. Nothing a log
says can become a link, an image or a tag in the comment.
"""

from __future__ import annotations

from typing import Any

import polars as pl

from tokaudit.analyze.detectors import SEVERITIES
from tokaudit.analyze.usage import NOT_MCP
from tokaudit.redact import printable, redact
from tokaudit.report.html import fmt_int, fmt_pct, fmt_usd
from tokaudit.report.model import Report, top_n
from tokaudit.report.numbers import md_text

MD_TOP = 5  # rows per table in the summary


def _delta(report: Report, key: str, money: bool = False) -> str:
    d = report.deltas.get(key)
    if not d:
        return ""
    if d["change"] == 0:
        return "±0"
    sign = "+" if d["change"] > 0 else "−"
    amount = fmt_usd(abs(d["change"])) if money else fmt_int(abs(d["change"]))
    pct = f" ({d['change_pct']:+.1f}%)" if d["change_pct"] is not None else " (new)"
    return f"{sign}{amount}{pct}"


def _rows(header: list[str], rows: list[list[str]]) -> list[str]:
    out = ["| " + " | ".join(header) + " |", "|" + "|".join("---:" if i else "---" for i in range(len(header))) + "|"]
    out += ["| " + " | ".join(r) + " |" for r in rows]
    return out


def render_markdown(report: Report, *, html_name: str | None = "report.html") -> str:
    """The summary: headline with deltas, top models, tools by replayed cost, top sessions, findings, notes."""
    h = report.headline
    w = report.window
    lines = [f"## tokaudit report — {md_text(w.label())}", ""]
    has_deltas = bool(report.deltas)
    header = ["", "this window"] + (["vs previous"] if has_deltas else [])
    figures = [
        ("spend (priced)", fmt_usd(h["cost_usd"]), _delta(report, "cost_usd", money=True)),
        ("total tokens", fmt_int(h["total_tokens"]), _delta(report, "total_tokens")),
        ("uncached input", fmt_int(h["input_tokens"]), _delta(report, "input_tokens")),
        ("cache write", fmt_int(h["cache_write_tokens"]), _delta(report, "cache_write_tokens")),
        ("cache read", fmt_int(h["cache_read_tokens"]), _delta(report, "cache_read_tokens")),
        ("output", fmt_int(h["output_tokens"]), _delta(report, "output_tokens")),
        ("requests", fmt_int(h["requests"]), _delta(report, "requests")),
        ("sessions", fmt_int(h["sessions"]), _delta(report, "sessions")),
        ("cost per conversation p50 / p95", f"{fmt_usd(h['cost_per_conversation_p50_usd'])} / {fmt_usd(h['cost_per_conversation_p95_usd'])}", ""),
        ("cache hit rate", fmt_pct(h["cache_hit_rate"]), ""),
        (
            "effective input price",
            "—" if h["effective_input_usd_per_mtok"] is None else f"${h['effective_input_usd_per_mtok']:,.3f}/Mtok",
            "",
        ),
        ("unpriced requests", fmt_int(h["unpriced_requests"]), _delta(report, "unpriced_requests")),
    ]
    lines += _rows(header, [[name, value] + ([delta] if has_deltas else []) for name, value, delta in figures])
    if h["unpriced_models"]:
        lines += ["", "Unpriced models (not counted as $0): " + ", ".join(md_text(m) for m in h["unpriced_models"][:10])]

    models = top_n(report.by_model, "model", "cost_usd", MD_TOP, ["cost_usd", "total_tokens", "requests"]).to_dicts()
    if models:
        lines += ["", "### Top models", ""]
        lines += _rows(["model", "spend", "tokens", "requests"], [[md_text(r["model"]), fmt_usd(r["cost_usd"]), fmt_int(r["total_tokens"]), fmt_int(r["requests"])] for r in models])

    tools = report.tools.filter(pl.col("replay_usd").is_not_null()).head(MD_TOP).to_dicts()
    if tools:
        lines += ["", "### Tools by replayed-context cost", ""]
        lines += _rows(
            ["tool", "calls", "direct $", "replayed $", "replayed tokens"],
            [[md_text(r["tool"]), fmt_int(r["calls"]), fmt_usd(r["direct_usd"]), fmt_usd(r["replay_usd"]), fmt_int(r["replay_tokens"])] for r in tools],
        )
    servers = report.mcp_servers.filter(pl.col("replay_usd").is_not_null() & (pl.col("mcp_server") != NOT_MCP)).head(MD_TOP).to_dicts()
    if servers:
        lines += ["", "### MCP servers by replayed-context cost", ""]
        lines += _rows(
            ["server", "calls", "direct $", "replayed $"],
            [[md_text(r["mcp_server"]), fmt_int(r["calls"]), fmt_usd(r["direct_usd"]), fmt_usd(r["replay_usd"])] for r in servers],
        )

    sessions = report.top_by_cost.head(MD_TOP).to_dicts()
    if sessions:
        lines += ["", "### Top sessions by cost", ""]
        lines += _rows(
            ["session", "project", "spend", "requests", "findings"],
            [[md_text(r["session_id"], 60), md_text(r["project"], 40), fmt_usd(r["cost_usd"]), fmt_int(r["requests"]), fmt_int(r["findings"])] for r in sessions],
        )

    fs = report.findings_summary
    lines += ["", "### Findings", ""]
    if report.audit_run is None:
        lines.append("No audit has run on this store (`tokaudit audit`).")
    else:
        counts = ", ".join(f"{s}: {fs['by_severity'][s]}" for s in reversed(SEVERITIES) if fs["by_severity"].get(s))
        lines.append(f"{fs['total']:,} finding(s) from audit run {report.audit_run['audit_run_id']}" + (f" — {counts}" if counts else "") + ".")
        top = report.findings[:MD_TOP]
        if top:
            lines += [""]
            lines += _rows(
                ["severity", "detector", "session", "tool", "excess $"],
                [[md_text(f["severity"]), md_text(f["detector"]), md_text(f["session_id"], 60), md_text(f["tool_key"] or "—", 50), fmt_usd(f["excess_usd"])] for f in top],
            )
    problems = sum(report.problems_by_kind.values())
    if problems:
        lines += ["", f"Ingest problems in the store: {problems:,} (" + ", ".join(f"{md_text(k)} {v:,}" for k, v in report.problems_by_kind.items()) + ")."]
    if report.notes:
        lines += ["", "Notes:"] + [f"- {md_text(redact(n), 400)}" for n in report.notes]
    if html_name:
        lines += ["", f"Full report with charts and drill-downs: `{md_code(html_name)}`."]
    return "\n".join(lines) + "\n"


def md_code(value: Any, limit: int = 80) -> str:
    """Untrusted text for inside a Markdown code span: one line, no backticks, bounded.

    Examples:
        >>> md_code("a`b")
        "a'b"
    """
    text = printable(" ".join(("" if value is None else str(value)).split())).replace("`", "'")
    return text if len(text) <= limit else text[: limit - 1] + "…"
