"""The self-contained HTML report, and the index page of a folder of dated reports.

One file, opened from disk with no network: plotly.js (from the installed plotly
package) is embedded once, and a Content-Security-Policy forbids every fetch. Logs
are untrusted, so:

* every text that reaches the page goes through :func:`esc` (HTML-escaped, quotes
  included) or, inside charts, through :func:`~tokaudit.report.figures.plot_text`;
* figure data is embedded as JSON with ``<``, ``>``, ``/`` and ``&`` written as
  ``\\uXXXX`` escapes, so nothing in it can close the script element;
* scripts run only with the page's random nonce, so even a tag that slipped through
  could not run a script or an inline event handler;
* links are only to anchors the page made itself (``#s-3``), never to a logged URL;
* evidence and excerpts are passed through :func:`tokaudit.redact.redact` again and cut.
"""

from __future__ import annotations

import html
import secrets
from datetime import datetime
from typing import Any

import plotly.graph_objects as go
import plotly.io as pio
import polars as pl
from plotly.io.json import to_json_plotly

from tokaudit.redact import redact
from tokaudit.report import figures
from tokaudit.report.data import evidence_text
from tokaudit.report.model import TOP_ROWS, Report, top_n
from tokaudit.report.numbers import short_number

MAX_FINDINGS_SHOWN = 200  # rows of the findings table (all of them are in the JSON / exports)
MAX_CELL_CHARS = 200
MAX_EVIDENCE_CHARS = 2000
PLOTLY_CONFIG = {"displaylogo": False, "responsive": True, "showLink": False, "showSendToCloud": False, "modeBarButtonsToRemove": ["sendDataToCloud"]}

_CSS = """
:root { --fg:#1f2328; --muted:#636c76; --line:#d0d7de; --bg:#f6f8fa; --accent:#0969da; }
* { box-sizing: border-box; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--fg); margin: 0; padding: 0 24px 48px; max-width: 1400px; margin-inline: auto; }
header { padding: 20px 0 8px; border-bottom: 1px solid var(--line); margin-bottom: 16px; }
h1 { font-size: 22px; margin: 0 0 4px; } h2 { font-size: 18px; margin: 28px 0 8px; border-bottom: 1px solid var(--line); padding-bottom: 4px; }
h3 { font-size: 15px; margin: 18px 0 6px; }
.meta { color: var(--muted); }
nav a { margin-right: 12px; color: var(--accent); text-decoration: none; }
.cards { display: grid; grid-template-columns: repeat(auto-fill, minmax(190px, 1fr)); gap: 10px; }
.card { border: 1px solid var(--line); border-radius: 6px; padding: 10px 12px; background: #fff; }
.card .label { color: var(--muted); font-size: 12px; } .card .value { font-size: 20px; font-weight: 600; }
.card .delta { font-size: 12px; color: var(--muted); } .up { color: #b42318; } .down { color: #1a7f37; }
table { border-collapse: collapse; width: 100%; margin: 6px 0 12px; font-size: 13px; }
th, td { border-bottom: 1px solid var(--line); padding: 4px 8px; text-align: left; vertical-align: top; }
th { background: var(--bg); font-weight: 600; } td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
td.id { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; font-size: 12px; word-break: break-all; }
.plot { width: 100%; min-height: 260px; border: 1px solid var(--line); border-radius: 6px; margin: 8px 0 16px; background: #fff; }
.grid2 { display: grid; grid-template-columns: 1fr 1fr; gap: 16px; } @media (max-width: 1000px) { .grid2 { grid-template-columns: 1fr; } }
.grid2 > *, section { min-width: 0; } .scroll { overflow-x: auto; }
td code { white-space: pre-wrap; word-break: break-all; }
.sev { display: inline-block; padding: 0 6px; border-radius: 10px; color: #fff; font-size: 12px; }
.sev-info { background:#9e9e9e } .sev-low { background:#689f38 } .sev-medium { background:#f9a825; color:#000 } .sev-high { background:#f4511e } .sev-critical { background:#b71c1c }
details pre { white-space: pre-wrap; word-break: break-all; background: var(--bg); padding: 6px; max-height: 320px; overflow: auto; font-size: 12px; }
.note { color: var(--muted); } ul.notes li { margin: 2px 0; }
section.drill { border-top: 2px solid var(--line); padding-top: 4px; scroll-margin-top: 8px; }
section.drill:target { border-top-color: var(--accent); }
"""


def esc(value: Any, limit: int = MAX_CELL_CHARS) -> str:
    """Any value as escaped HTML text (quotes too), cut to ``limit`` characters.

    Examples:
        >>> esc('"><script>alert(1)</script>')
        '&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;'
    """
    text = "" if value is None else str(value)
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    return html.escape(text, quote=True)


def fmt_usd(value: float | None) -> str:
    """Dollars with cents, or four decimals under a dollar; "—" for unknown.

    Examples:
        >>> fmt_usd(1234.5), fmt_usd(0.01234), fmt_usd(None)
        ('$1,234.50', '$0.0123', '—')
    """
    if value is None:
        return "—"
    return f"${value:,.2f}" if abs(value) >= 1 else f"${value:,.4f}"


def fmt_int(value: Any) -> str:
    """An integer with thousands separators; "—" for unknown."""
    return "—" if value is None else f"{int(value):,}"


def fmt_pct(value: float | None, digits: int = 1) -> str:
    """A fraction as a percentage; "—" for unknown."""
    return "—" if value is None else f"{value * 100:.{digits}f}%"


def _delta_html(delta: dict[str, Any] | None, money: bool = False) -> str:
    if not delta:
        return ""
    change, pct = delta["change"], delta["change_pct"]
    if change == 0:
        return '<div class="delta">no change vs previous window</div>'
    arrow, cls = ("▲", "up") if change > 0 else ("▼", "down")
    amount = fmt_usd(abs(change)) if money else fmt_int(abs(change))
    rel = f" ({pct:+.1f}%)" if pct is not None else " (new)"
    prev = fmt_usd(delta["previous"]) if money else fmt_int(delta["previous"])
    return f'<div class="delta"><span class="{cls}">{arrow} {esc(amount)}{esc(rel)}</span> vs {esc(prev)}</div>'


def _card(label: str, value: str, delta: str = "", title: str = "") -> str:
    return f'<div class="card" title="{esc(title)}"><div class="label">{esc(label)}</div><div class="value">{esc(value)}</div>{delta}</div>'


def _table(rows: list[dict[str, Any]], columns: list[tuple[str, str, Any]], *, empty: str = "nothing in this window") -> str:
    """An HTML table; each column is (key, header, formatter) where the formatter returns *escaped* HTML."""
    if not rows:
        return f'<p class="note">{esc(empty)}</p>'
    head = "".join(f'<th class="{"num" if fmt in _NUMERIC else ""}">{esc(label)}</th>' for _, label, fmt in columns)
    body = []
    for r in rows:
        cells = "".join(f'<td class="{_cell_class(fmt)}">{fmt(r.get(key), r)}</td>' for key, _, fmt in columns)
        body.append(f"<tr>{cells}</tr>")
    return f'<div class="scroll"><table><thead><tr>{head}</tr></thead><tbody>{"".join(body)}</tbody></table></div>'


def _text(v: Any, _row: dict[str, Any] | None = None) -> str:
    return esc(v if v is not None else "—")


def _usd(v: Any, _row: dict[str, Any] | None = None) -> str:
    return esc(fmt_usd(v))


def _int(v: Any, _row: dict[str, Any] | None = None) -> str:
    return esc(fmt_int(v))


def _pct(v: Any, _row: dict[str, Any] | None = None) -> str:
    return esc(fmt_pct(v, 2))


def _sev(v: Any, _row: dict[str, Any] | None = None) -> str:
    if not v:
        return "—"
    level = v if v in figures.SEVERITY_COLORS else "info"
    return f'<span class="sev sev-{level}">{esc(v)}</span>'


_NUMERIC = (_usd, _int, _pct)


def _cell_class(fmt: Any) -> str:
    return "num" if fmt in _NUMERIC else ""


class _Page:
    """Collects figures while the page is assembled; each gets a div and a JSON blob."""

    def __init__(self) -> None:
        self.figures: list[tuple[str, go.Figure]] = []

    def plot(self, fig: go.Figure) -> str:
        fig_id = f"fig-{len(self.figures) + 1}"
        self.figures.append((fig_id, fig))
        return f'<div class="plot" id="{fig_id}"></div>'


def _figure_spec(fig: go.Figure) -> dict[str, Any]:
    spec = fig.to_plotly_json()
    spec["layout"].pop("template", None)  # the page sets one template for all charts
    return spec


def _json_for_script(obj: Any) -> str:
    # plotly's encoder already writes < > / as \u escapes; & and the JS line separators are added here.
    text = to_json_plotly(obj)
    return text.replace("&", "\\u0026").replace("<", "\\u003c").replace(">", "\\u003e").replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")


def _session_cell(report: Report) -> Any:
    def cell(v: Any, _row: dict[str, Any] | None = None) -> str:
        anchor = report.drilldown_anchor(v) if v else None
        if anchor:
            return f'<a href="#{anchor}">{esc(v, 80)}</a>'
        return esc(v, 80)

    return cell


def _headline_html(report: Report) -> str:
    h, d = report.headline, report.deltas
    cards = [
        _card("spend (priced requests)", fmt_usd(h["cost_usd"]), _delta_html(d.get("cost_usd"), money=True)),
        _card("total tokens", fmt_int(h["total_tokens"]), _delta_html(d.get("total_tokens"))),
        _card("uncached input tokens", fmt_int(h["input_tokens"]), _delta_html(d.get("input_tokens"))),
        _card(
            "cache write tokens",
            fmt_int(h["cache_write_tokens"]),
            _delta_html(d.get("cache_write_tokens")),
            title=f"5 min: {h['cache_write_5m_tokens']:,}; 1 h: {h['cache_write_1h_tokens']:,}",
        ),
        _card("cache read tokens", fmt_int(h["cache_read_tokens"]), _delta_html(d.get("cache_read_tokens"))),
        _card("output tokens", fmt_int(h["output_tokens"]), _delta_html(d.get("output_tokens")), title=f"of which reasoning: {h['reasoning_tokens']:,}"),
        _card("requests", fmt_int(h["requests"]), _delta_html(d.get("requests"))),
        _card("sessions", f"{h['sessions']:,}", _delta_html(d.get("sessions")), title=f"{h['subagent_sessions']:,} of them subagents; {h['conversations']:,} conversations"),
        _card("cost per conversation p50", fmt_usd(h["cost_per_conversation_p50_usd"]), title="a session with its subagents; fully priced conversations only"),
        _card("cost per conversation p95", fmt_usd(h["cost_per_conversation_p95_usd"])),
        _card("cache hit rate", fmt_pct(h["cache_hit_rate"]), title="cache read tokens / all input tokens"),
        _card(
            "effective input price",
            "—" if h["effective_input_usd_per_mtok"] is None else f"${h['effective_input_usd_per_mtok']:,.3f} / Mtok",
            title="input-side cost / input tokens of priced requests (cache reads, writes and uncached input mixed)",
        ),
        _card("tool calls", fmt_int(h["tool_calls"]), title=f"{h['tool_errors']:,} returned an error"),
        _card(
            "unpriced requests",
            fmt_int(h["unpriced_requests"]),
            _delta_html(d.get("unpriced_requests")),
            title="models: " + (", ".join(h["unpriced_models"]) or "none"),
        ),
        _card("findings", fmt_int(report.findings_summary["total"]), title=", ".join(f"{k}: {v}" for k, v in report.findings_summary["by_severity"].items())),
    ]
    unpriced = ""
    if h["unpriced_models"]:
        unpriced = f'<p class="note">Unpriced models (cost unknown, not counted as $0): {esc(", ".join(h["unpriced_models"]), 1000)}</p>'
    prev = report.window.previous()
    compare = (
        f'<p class="note">Deltas compare with the previous {esc(report.window.days)} day(s): {esc(prev.label())}.</p>'
        if prev is not None
        else '<p class="note">No previous window to compare with: give --since and --until, or --last, for period-over-period deltas.</p>'
    )
    return f'<div class="cards">{"".join(cards)}</div>{unpriced}{compare}'


def _breakdown_tables(report: Report) -> str:
    cols = [
        ("cost_usd", "spend", _usd),
        ("total_tokens", "tokens", _int),
        ("requests", "requests", _int),
        ("sessions", "sessions", _int),
        ("unpriced_requests", "unpriced", _int),
    ]
    sums = ["cost_usd", "total_tokens", "requests", "sessions", "unpriced_requests"]
    parts = []
    for title, frame, key in (("By model", report.by_model, "model"), ("By project", report.by_project, "project"), ("By agent", report.by_agent, "agent")):
        rows = top_n(frame, key, "cost_usd", TOP_ROWS, sums).to_dicts()
        parts.append(f"<div><h3>{esc(title)}</h3>{_table(rows, [(key, key, _text), *cols])}</div>")
    return f'<div class="grid2">{"".join(parts)}</div>'


def _tool_tables(report: Report, page: _Page) -> str:
    cols_common = [
        ("calls", "calls", _int),
        ("errors", "errors", _int),
        ("result_tokens", "result tokens", _int),
        ("direct_usd", "direct $", _usd),
        ("replay_usd", "replayed $", _usd),
        ("direct_tokens", "direct tokens", _int),
        ("replay_tokens", "replayed tokens", _int),
        ("replay_share", "share of input", _pct),
        ("result_tokens_methods", "token methods", _text),
    ]
    sums = ["calls", "errors", "result_tokens", "direct_usd", "replay_usd", "direct_tokens", "replay_tokens", "replay_share"]
    out = [
        '<p class="note">Direct: arguments the model wrote, plus the result read once by the next request. Replayed: the same tokens '
        "re-read by every later request until the context is compacted, at each request's own input price (cache hits cost less). "
        "Token sizes of tool results are estimates unless the method says <em>reported</em>.</p>",
        '<div class="grid2">',
        page.plot(figures.attribution_bars(report.tools, "tool", "Direct vs replayed-context cost per tool")),
        page.plot(figures.attribution_bars(report.mcp_servers, "mcp_server", "Direct vs replayed-context cost per MCP server")),
        "</div>",
    ]
    for title, frame, key in (("Tools", report.tools, "tool"), ("MCP servers", report.mcp_servers, "mcp_server")):
        ranked = frame.with_columns(pl.col(key).fill_null("(unnamed)"), pl.col("replay_usd").fill_null(0.0).alias("_r"))
        rows = top_n(ranked, key, "_r", TOP_ROWS, [*sums, "result_tokens_methods"]).to_dicts()
        out.append(f"<h3>{esc(title)}</h3>" + _table(rows, [(key, key.replace("_", " "), _text), *cols_common]))
    return "".join(out)


def _sessions_tables(report: Report) -> str:
    session = _session_cell(report)
    cols = [
        ("session_id", "session", session),
        ("project", "project", _text),
        ("agent", "agent", _text),
        ("model", "model", _text),
        ("cost_usd", "spend", _usd),
        ("total_tokens", "tokens", _int),
        ("requests", "requests", _int),
        ("tool_calls", "tool calls", _int),
        ("findings", "findings", _int),
        ("max_severity", "worst", _sev),
        ("excess_usd", "excess $", _usd),
        ("excess_tokens", "excess tokens", _int),
    ]
    return (
        "<h3>Top sessions by cost</h3>"
        + _table(report.top_by_cost.to_dicts(), cols)
        + "<h3>Top sessions by excess</h3>"
        + '<p class="note">Excess: the largest excess any one finding names for the session (findings overlap, so they are not added up).</p>'
        + _table(report.top_by_excess.to_dicts(), cols, empty="no findings with excess in this window" if report.audit_run else "no audit run yet")
    )


def _evidence(v: Any, row: dict[str, Any] | None = None) -> str:
    if not v:
        return "—"
    text = redact(evidence_text(v))
    if len(text) > MAX_EVIDENCE_CHARS:
        text = text[: MAX_EVIDENCE_CHARS - 1] + "…"
    return f"<details><summary>evidence</summary><pre>{html.escape(text, quote=True)}</pre></details>"


def _findings_html(report: Report) -> str:
    run = report.audit_run
    if run is None:
        return '<p class="note">No audit run in this store yet: run <code>tokaudit audit</code>.</p>'
    summary = report.findings_summary
    head = (
        f'<p class="note">Audit run {esc(run["audit_run_id"])} of {esc(_ts(run["started_at_utc"]))}; '
        f"{esc(summary['total'])} finding(s) on sessions in this report: "
        + ", ".join(f"{esc(k)} {esc(v)}" for k, v in summary["by_severity"].items() if v)
        + "</p>"
    )
    shown = report.findings[:MAX_FINDINGS_SHOWN]
    more = (
        f'<p class="note">{len(report.findings) - len(shown):,} more findings are in report.json and the findings export.</p>'
        if len(report.findings) > len(shown)
        else ""
    )

    def turns(_v: Any, row: dict[str, Any] | None) -> str:
        assert row is not None
        if row["first_turn"] is None:
            return "—"
        return esc(f"{row['first_turn']}–{row['last_turn']}")

    def metric(_v: Any, row: dict[str, Any] | None) -> str:
        assert row is not None
        return f"{esc(row['metric'])} = {esc(short_number(row['value']), 40)}<br><span class='note'>{esc(row['threshold'])}</span>"

    def explanation(v: Any, row: dict[str, Any] | None) -> str:
        return esc(redact(v or ""), 1200)

    cols = [
        ("severity", "severity", _sev),
        ("detector", "detector", _text),
        ("session_id", "session", _session_cell(report)),
        ("first_turn", "turns", turns),
        ("tool_key", "tool", _text),
        ("metric", "measured", metric),
        ("excess_tokens", "excess tokens", _int),
        ("excess_usd", "excess $", _usd),
        ("explanation", "explanation", explanation),
        ("evidence", "evidence", _evidence),
    ]
    return head + _table(shown, cols, empty="no findings on the sessions of this window") + more


def _ts(value: Any) -> str:
    if isinstance(value, datetime):
        return value.strftime("%Y-%m-%d %H:%M UTC")
    return str(value) if value is not None else "—"


def _quality_html(report: Report) -> str:
    est = report.estimates
    problems_total = sum(report.problems_by_kind.values())
    kinds = _table(
        [{"kind": k, "count": v} for k, v in report.problems_by_kind.items()],
        [("kind", "problem kind", _text), ("count", "lines / files", _int)],
        empty="no ingest problems",
    )
    first = _table(
        report.problems,
        [
            ("path", "file", lambda v, r: f'<span class="id">{esc(v, 120)}</span>'),
            ("line_no", "line", _int),
            ("kind", "kind", _text),
            ("message", "message", _text),
            ("excerpt", "excerpt (redacted)", lambda v, r: f"<code>{esc(redact(v or ''), 200)}</code>"),
        ],
        empty="",
    )
    sources = _table(
        [{"source": k, "requests": v} for k, v in est["requests_by_usage_source"].items()],
        [("source", "usage source", _text), ("requests", "requests", _int)],
    )
    methods = _table(
        [{"method": k, **v} for k, v in est["tool_result_tokens_by_method"].items()],
        [("method", "tool result token method", _text), ("calls", "calls", _int), ("tokens", "tokens", _int)],
        empty="no tool calls",
    )
    flags = (
        f"<p>{esc(fmt_int(est['output_lower_bound_requests']))} request(s) logged a streaming placeholder for output tokens (output is a lower bound); "
        f"{esc(fmt_int(est['cache_ttl_unknown_requests']))} request(s) had no 5 min / 1 h cache-write split (booked as 5 min).</p>"
    )
    return (
        f"<h3>Ingest problems ({esc(fmt_int(problems_total))} in the whole store)</h3>"
        + '<p class="note">Lines and files that could not be used; <code>tokaudit problems</code> lists every one.</p>'
        + kinds
        + (f"<h3>First {len(report.problems)} problems</h3>{first}" if report.problems else "")
        + "<h3>Exact and estimated figures</h3>"
        + flags
        + f'<div class="grid2"><div>{sources}</div><div>{methods}</div></div>'
    )


def _drilldowns_html(report: Report, page: _Page) -> str:
    if not report.drilldowns:
        return '<p class="note">No sessions in this window.</p>'
    parts = ['<p class="note">Each drill-down shows the whole session, turns outside the window included, numbered as the audit numbers them.</p>']
    for d in report.drilldowns:
        s = d.session
        fig = figures.session_drilldown(d.turns, d.findings, title="Tokens per turn (context growth)", bucket_turns=d.bucket_turns)
        facts = (
            f"project {esc(s.get('project'))} · agent {esc(s.get('agent'))} · model {esc(s.get('model'))} · "
            f"{esc(fmt_usd(s.get('cost_usd')))} · {esc(fmt_int(s.get('requests')))} requests · "
            f"{esc(fmt_int(s.get('tool_calls')))} tool calls · {esc(fmt_int(s.get('findings')))} finding(s)"
        )
        if s.get("parent_session_id"):
            facts += f" · subagent of {esc(s['parent_session_id'], 80)}"
        finding_rows = _table(
            d.findings,
            [
                ("severity", "severity", _sev),
                ("detector", "detector", _text),
                ("first_turn", "first turn", _int),
                ("last_turn", "last turn", _int),
                ("excess_usd", "excess $", _usd),
                ("explanation", "explanation", lambda v, r: esc(redact(v or ""), 600)),
            ],
            empty="no findings on this session",
        )
        parts.append(
            f'<section class="drill" id="{d.anchor}"><h3>{esc(s["session_id"], 120)}</h3><p class="note">{facts}</p>'
            f"{page.plot(fig)}{finding_rows}<p><a href=\"#sessions\">↑ back to top sessions</a></p></section>"
        )
    return "".join(parts)


def render_html(report: Report, *, plotly_js: str | None = None) -> str:
    """The report as one self-contained HTML page (plotly.js embedded; ``plotly_js`` overrides the bundle, for tests)."""
    from plotly.offline import get_plotlyjs

    page = _Page()
    nonce = secrets.token_urlsafe(16)
    w = report.window
    sections = [
        ("headline", "Headline", _headline_html(report)),
        ("time", "Cost over time", page.plot(figures.cost_over_time(report.time_series))),
        ("breakdown", "Breakdowns", page.plot(figures.spend_treemap(report.spend_tree)) + _breakdown_tables(report)),
        ("tools", "Tools and MCP servers: direct vs replayed-context cost", _tool_tables(report, page)),
        ("sessions", "Top sessions", _sessions_tables(report)),
        ("findings", "Findings", _findings_html(report)),
        ("quality", "Ingest problems and estimates", _quality_html(report)),
        ("drilldowns", "Session drill-downs", _drilldowns_html(report, page)),
    ]
    nav = "".join(f'<a href="#{sid}">{esc(title.split(":")[0])}</a>' for sid, title, _ in sections)
    body = "".join(f'<section id="{sid}"><h2>{esc(title)}</h2>{content}</section>' for sid, title, content in sections)
    notes = "".join(f"<li>{esc(n, 600)}</li>" for n in report.notes)
    specs = ",".join(f'["{fig_id}",{_json_for_script(_figure_spec(fig))}]' for fig_id, fig in page.figures)
    template = _json_for_script(pio.templates[figures.TEMPLATE].to_plotly_json())
    csp = f"default-src 'none'; script-src 'nonce-{nonce}'; style-src 'unsafe-inline'; img-src data:; font-src data:"
    title = f"tokaudit report {w.label()}"
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{csp}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="tokaudit {esc(report.tokaudit_version)}">
<title>{esc(title)}</title>
<style>{_CSS}</style>
<script nonce="{nonce}">{plotly_js if plotly_js is not None else get_plotlyjs()}</script>
</head><body>
<header><h1>tokaudit report</h1>
<div class="meta">{esc(w.label())} · generated {esc(_ts(report.generated_at_utc))} · tokaudit {esc(report.tokaudit_version)} · prices: {esc(report.price_source)}</div>
<nav>{nav}</nav></header>
{body}
<section id="notes"><h2>Notes</h2><ul class="notes">{notes}</ul></section>
<script nonce="{nonce}">
(function () {{
  var config = {_json_for_script(PLOTLY_CONFIG)};
  var template = {template};
  var specs = [{specs}];
  specs.forEach(function (s) {{ s[1].layout.template = template; Plotly.newPlot(s[0], s[1].data, s[1].layout, config); }});
}})();
</script>
</body></html>
"""


def _mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def render_index(entries: list[dict[str, Any]]) -> str:
    """The index page of a reports folder: one row per dated report with its headline numbers, newest first.

    Each entry has ``folder`` (the dated folder name), ``files`` (format → file name in it)
    and ``report`` (that report's JSON document, or None when it could not be read).
    """
    rows = []
    for e in entries:
        # The documents are read back from disk: take only well-typed values.
        doc = _mapping(e.get("report"))
        h, fs, window = _mapping(doc.get("headline")), _mapping(doc.get("findings_summary")), _mapping(doc.get("window"))
        sev = {k: v for k, v in _mapping(fs.get("by_severity")).items() if isinstance(v, int)}
        h = {k: v for k, v in h.items() if isinstance(v, (int, float)) and not isinstance(v, bool)}
        fs = {k: v for k, v in fs.items() if isinstance(v, int)}
        links = " ".join(f'<a href="{esc(e["folder"])}/{esc(name)}">{esc(fmt)}</a>' for fmt, name in sorted(e.get("files", {}).items()))
        rows.append(
            "<tr>"
            f'<td>{esc(e["folder"])}</td>'
            f"<td>{esc(window.get('since') or 'start')} – {esc(window.get('until') or 'end')}</td>"
            f'<td class="num">{esc(fmt_usd(h.get("cost_usd")))}</td>'
            f'<td class="num">{esc(fmt_int(h.get("total_tokens")))}</td>'
            f'<td class="num">{esc(fmt_int(h.get("sessions")))}</td>'
            f'<td class="num">{esc(fmt_int(h.get("unpriced_requests")))}</td>'
            f'<td class="num">{esc(fmt_int(fs.get("total")))}</td>'
            f'<td class="num">{esc(fmt_int((sev.get("high") or 0) + (sev.get("critical") or 0)) if sev else "—")}</td>'
            f"<td>{links if e.get('report') is not None else esc('report.json unreadable') + ' ' + links}</td>"
            "</tr>"
        )
    table = (
        "<table><thead><tr><th>report</th><th>window</th><th class='num'>spend</th><th class='num'>tokens</th><th class='num'>sessions</th>"
        "<th class='num'>unpriced requests</th><th class='num'>findings</th><th class='num'>high+critical</th><th>files</th></tr></thead>"
        f"<tbody>{''.join(rows)}</tbody></table>"
        if rows
        else "<p class='note'>No reports yet.</p>"
    )
    csp = "default-src 'none'; style-src 'unsafe-inline'"
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{csp}">
<title>tokaudit reports</title><style>{_CSS}</style></head><body>
<header><h1>tokaudit reports</h1><div class="meta">{len(entries)} report(s), newest first; written by <code>tokaudit audit --report</code></div></header>
{table}
</body></html>
"""
