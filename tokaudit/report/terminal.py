"""Terminal and CSV rendering of ingest summaries, usage breakdowns and problems.

Everything shown here may come from a log an attacker wrote (tool names,
project folders, excerpts), so text cells are passed to rich as plain
``Text`` objects: rich markup in them is displayed, never interpreted.
"""

from __future__ import annotations

import csv
import io
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.table import Table
from rich.text import Text

from tokaudit.ingest.summary import summary_lines as ingest_summary_lines  # noqa: F401  (kept for callers)
from tokaudit.redact import printable
from tokaudit.report.numbers import csv_cell, short_number

if TYPE_CHECKING:
    from rich.console import Console

    from tokaudit.analyze.audit import AuditResult
    from tokaudit.analyze.tokens import TokenFit
    from tokaudit.analyze.usage import UsageReport
    from tokaudit.ingest.summary import IngestSummary


def safe_text(value: str, style: str = "") -> Text:
    """Text for the terminal whose control characters (from logs an attacker may write) show as escapes."""
    return Text(printable(value), style=style)


def _cell(value: Any, column: str = "") -> Text:
    if value is None:
        return safe_text("—", style="dim")
    if column in ("cost_usd", "reported_cost_usd"):
        return safe_text(f"${Decimal(value):,.4f}")
    if isinstance(value, bool):
        return safe_text("yes" if value else "no")
    if isinstance(value, int):
        return safe_text(f"{value:,}")
    return safe_text(str(value))


def render_ingest_problems(summary: IngestSummary, console: Console, *, max_problems: int = 10) -> None:
    """Print the first problems of an ingest run, one line each (text shown literally, never as markup)."""
    f = summary
    shown = min(max_problems, len(f.problems))
    table = Table(title=f"problems ({f.lines_problem + f.files_failed:,}; first {shown})", title_justify="left", expand=True)
    # Fixed widths for the short columns; message and excerpt share what is left, cut with an ellipsis.
    table.add_column("file:line", overflow="fold", width=24)
    table.add_column("kind", no_wrap=True, width=14)
    table.add_column("message", overflow="ellipsis", no_wrap=True, ratio=1)
    table.add_column("excerpt", overflow="ellipsis", no_wrap=True, ratio=1)
    for path, p in f.problems[:max_problems]:
        where = f"{Path(path).name}:{p.line_no}" if p.line_no else Path(path).name
        table.add_row(safe_text(where), safe_text(p.kind), safe_text(p.message), safe_text(p.excerpt or ""))
    console.print(table)
    console.print("Full paths, messages and excerpts: tokaudit problems (--json)", markup=False, highlight=False)


_LABELS = {
    "input_tokens": "input",
    "cache_write_tokens": "cache write",
    "cache_read_tokens": "cache read",
    "output_tokens": "output",
    "reasoning_tokens": "reasoning",
    "total_tokens": "total",
    "cost_usd": "cost",
    "reported_cost_usd": "reported cost",
    "unpriced_calls": "unpriced",
    "result_tokens": "result tokens",
    "result_tokens_methods": "method",
    "calls_without_result": "no result",
    "first_utc": "first (UTC)",
    "last_utc": "last (UTC)",
}


def render_usage(report: UsageReport, console: Console) -> None:
    """Print a usage breakdown as a table with a totals row."""
    table = Table(title=f"usage by {report.by} ({report.tz})", title_justify="left", show_footer=True)
    first = report.columns[0]
    for col in report.columns:
        total = "TOTAL" if col == first else report.totals.get(col)
        justify = "left" if col in (first, "project", "first_utc", "last_utc") else "right"
        footer = _cell(total, col) if col != first else safe_text("TOTAL")
        table.add_column(_LABELS.get(col, col.replace("_", " ")), justify=justify, footer=footer, overflow="fold", no_wrap=justify == "right")
    for row in report.rows:
        table.add_row(*(_cell(row.get(col), col) for col in report.columns))
    console.print(table)
    for note in report.notes:
        console.print(safe_text(f"note: {note}", style="yellow"))
    console.print(safe_text(f"prices: {report.price_source}", style="dim"))


def usage_csv(report: UsageReport) -> str:
    """The breakdown as CSV (one header row, then data rows; no totals row)."""
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=report.columns, extrasaction="ignore", lineterminator="\n")
    writer.writeheader()
    for row in report.rows:
        writer.writerow({k: csv_cell(v) for k, v in row.items()})
    return out.getvalue()


def render_problems(rows: list[dict[str, Any]], console: Console) -> None:
    table = Table(title=f"ingest problems ({len(rows)})", title_justify="left")
    for col in ("path", "line_no", "kind", "message", "excerpt"):
        table.add_column(col, overflow="fold")
    for r in rows:
        table.add_row(*(safe_text(str(r[c]) if r[c] is not None else "") for c in ("path", "line_no", "kind", "message", "excerpt")))
    console.print(table)


def render_sources(rows: list[dict[str, Any]], console: Console) -> None:
    """Per-file line accounting: read = used + skipped + problems."""
    table = Table(title=f"sources ({len(rows)} files)", title_justify="left", show_footer=True)
    table.add_column("file", overflow="fold", footer=safe_text("TOTAL"))
    table.add_column("format")
    for col in ("lines_read", "lines_used", "lines_skipped", "lines_problem"):
        total = sum(r[col] for r in rows)
        table.add_column(col.removeprefix("lines_"), justify="right", footer=_cell(total))
    for r in rows:
        table.add_row(
            safe_text(r["path"]), safe_text(r["format"] if not r["file_problems"] else f"{r['format']} (failed)"),
            *(_cell(r[c]) for c in ("lines_read", "lines_used", "lines_skipped", "lines_problem")),
        )
    console.print(table)


def render_fits(fits: list[TokenFit], console: Console, *, saved: bool) -> None:
    """Calibrated token fits with their held-out errors beside the bytes/4 heuristic's."""
    if not fits:
        console.print(
            "no fit: the store holds too few single-tool steps (a request asking for one tool, then the next request); "
            "ingest more Claude Code or Codex logs"
        )
        return

    def pct(value: float | None) -> str:
        return "—" if value is None else f"{value:.0%}"

    table = Table(title="tokens per byte of tool traffic, fitted on your logs")
    for name in ("family", "content", "tok/byte result", "tok/byte args", "overhead tok", "steps", "held out",
                 "error p50", "error p90", "bytes/4 p50", "bytes/4 p90"):
        table.add_column(name, justify="left" if name in ("family", "content") else "right")
    for f in fits:
        table.add_row(
            safe_text(f.model_family), safe_text(f.content_type), f"{f.tokens_per_byte:.3f}", f"{f.args_tokens_per_byte:.3f}",
            f"{f.overhead_tokens:.0f}", f"{f.samples:,}", f"{f.held_out:,}", pct(f.median_rel_error), pct(f.p90_rel_error),
            pct(f.heuristic_median_rel_error), pct(f.heuristic_p90_rel_error),
        )
    console.print(table)
    for f in fits:
        if f.rejected:
            console.print(safe_text(f"not used: {f.model_family}/{f.content_type}: {f.rejected}", style="yellow"))
    console.print(safe_text("saved: tool results without a token count are now estimated with the usable fits" if saved else "not saved (--dry-run)", style="dim"))


_SEVERITY_STYLE = {"critical": "bold red", "high": "red", "medium": "yellow", "low": "cyan", "info": "dim"}


def render_audit(result: AuditResult, console: Console) -> None:
    """An audit's headline: sessions, findings per detector and severity, the economic-DoS sessions."""
    summary = result.summary()
    run = f"audit run {result.audit_run_id}" if result.audit_run_id is not None else "audit (not saved)"
    parts = [f"{summary[key]:,} {what}" for key, what in (("subagent_sessions", "subagents"), ("mcp_connection_sessions", "MCP connections"))
             if summary[key]]
    # Subagents and MCP connections are sessions of their own here; `tokaudit usage --by session` folds them in.
    of_which = f" (of which {' and '.join(parts)})" if parts else ""
    console.print(f"{run}: {summary['sessions']:,} sessions{of_which}, {summary['findings']:,} findings in {result.seconds:.1f} s")
    sev = ", ".join(f"{n} {s}" for s, n in summary["by_severity"].items() if n)
    if sev:
        console.print(f"by severity: {sev}")
    if summary["by_detector"]:
        table = Table(title="findings by detector")
        table.add_column("detector")
        table.add_column("findings", justify="right")
        for name, n in summary["by_detector"].items():
            table.add_row(safe_text(name), f"{n:,}")
        console.print(table)
    dos = [f for f in result.findings if f.detector == "economic_dos"]
    if dos:
        console.print(safe_text(f"economic DoS suspected in {len(dos)} session(s):", style="bold red"))
        for f in sorted(dos, key=lambda f: -(f.excess_tokens or 0))[:10]:
            console.print(safe_text(f"  {f.session_id}  [{f.severity}]  {f.explanation}"))
    console.print(safe_text("list them with `tokaudit findings`; one session turn by turn with `tokaudit show SESSION`", style="dim"))


def render_findings(rows: list[dict[str, Any]], console: Console) -> None:
    """Stored findings, most severe first, each with its explanation."""
    if not rows:
        console.print("no findings (run `tokaudit audit` first, or relax the filters)")
        return
    table = Table(show_lines=True)
    for name in ("severity", "detector", "session", "turns", "tool", "metric", "excess tokens", "explanation"):
        table.add_column(name, overflow="fold", justify="right" if name == "excess tokens" else "left")
    for r in rows:
        turns = "—" if r["first_turn"] is None else f"{r['first_turn']}–{r['last_turn']}"
        table.add_row(
            safe_text(r["severity"], style=_SEVERITY_STYLE.get(r["severity"], "")), safe_text(r["detector"]), safe_text(r["session_id"]), turns,
            safe_text(r["tool_key"] or "—"), safe_text(f"{r['metric']} = {short_number(r['value'])}"), _cell(r["excess_tokens"]), safe_text(r["explanation"]),
        )
    console.print(table)


def render_timeline(data: dict[str, Any], console: Console) -> None:
    """A session turn by turn, flagged turns marked (✗ a failed call, ↻ a call the previous result steered)."""
    s = data["session"]
    console.print(safe_text(f"session {s.get('session_id')}  agent {s.get('agent')}  model {s.get('model')}  outcome {s.get('outcome') or '—'}"))
    table = Table()
    for name in ("turn", "time (UTC)", "uncached", "cache read", "cache write", "output", "reasoning", "context", "tool calls", "flags"):
        table.add_column(name, justify="left" if name in ("time (UTC)", "tool calls", "flags") else "right", overflow="fold")
    estimated = unknown = False

    def describe(x: dict[str, Any]) -> str:
        nonlocal estimated, unknown
        sizes = []
        for what in ("args", "result"):
            tokens, method = x[f"{what}_tokens"], x.get(f"{what}_tokens_method")
            guessed = method is not None and method != "reported"
            estimated |= guessed and tokens is not None
            unknown |= tokens is None
            sizes.append(f"{what} ?" if tokens is None else f"{what} {'~' if guessed else ''}{tokens:,}")
        return f"{x['tool'] or '(no tool name)'}{' ✗' if x['is_error'] else ''}{' ↻' if x.get('steered') else ''} ({', '.join(sizes)} tokens)"

    for t in data["turns"]:
        tools = "; ".join(describe(x) for x in t["tools"])
        flags = ", ".join(t["flags"])
        table.add_row(
            str(t["turn"]), (t["ts_utc"] or "")[:19], _cell(t["input_tokens"]), _cell(t["cache_read_tokens"]), _cell(t["cache_write_tokens"]),
            _cell(t["output_tokens"]), _cell(t["reasoning_tokens"]), _cell(t["context_tokens"]), safe_text(tools),
            safe_text(("⚑ " + flags) if flags else "", style="bold red" if flags else ""),
        )
    if data["turns"]:
        console.print(table)
    unplaced = data.get("calls_without_request") or []
    if unplaced:
        calls = Table(title="tool calls, in the order they came (the log gives the session's usage as a total, not per request)"
                      if data["session"].get("is_aggregate") else "tool calls no logged model request asked for (the log records none for them)")
        for name in ("#", "time (UTC)", "tool call"):
            calls.add_column(name, justify="right" if name == "#" else "left", overflow="fold")
        for k, x in enumerate(unplaced, 1):
            calls.add_row(str(k), (x["ts_utc"] or "")[:19], safe_text(describe(x)))
        console.print(calls)
    if estimated:
        console.print("~ an estimated token count (the log reports none for that call; `tokaudit show --json` gives each figure's method)")
    if unknown:
        console.print("? a size the log does not record (a call without its result; a transcript of a server's replies without the requests)")
    audited = data.get("audit_run_id") is not None
    if not audited:
        console.print("not audited yet: `tokaudit audit` finds what to flag (no findings here means no audit, not a clean session)")
    for f in data["findings"]:
        console.print(safe_text(f"[{f['severity']}] {f['detector']}: {f['explanation']}", style=_SEVERITY_STYLE.get(f["severity"], "")))
    for sub in data.get("subagents", []):
        verdict = "; economic_dos suspected" if sub["economic_dos"] else ""
        found = f"{sub['findings']} findings{verdict}" if audited else "not audited yet"
        console.print(safe_text(f"subagent {sub['session_id']}: {found} (tokaudit show {sub['session_id']})",
                           style="bold red" if sub["economic_dos"] else ""))


def report_written_lines(result: Any) -> list[str]:
    """What ``tokaudit report`` / ``audit --report`` wrote (a ``report.build.ReportResult``), with its headline, as plain lines."""
    lines = []
    for fmt, paths in result.files.items():
        for path in paths if isinstance(paths, list) else [paths]:
            lines.append(f"wrote {path} ({Path(path).stat().st_size / 1e6:,.2f} MB)" if fmt == "html" else f"wrote {path}")
    if result.index is not None:
        lines.append(f"index {result.index}")
    h = result.report.headline
    cost = f"${h['cost_usd']:,.2f}" + (f" + {h['unpriced_requests']:,} unpriced requests" if h["unpriced_requests"] else "")
    findings = result.report.findings_summary
    lines.append(
        f"{result.report.window.label()}: {cost}, {h['total_tokens']:,} tokens, {h['requests']:,} requests, "
        f"{h['sessions']:,} sessions, {findings['total']:,} findings ({result.seconds.get('total', 0.0):.1f} s)"
    )
    return lines
