"""Figure builders: pure functions from a (small, aggregated) frame to a plotly figure.

No I/O and no store: each builder takes the frame :mod:`tokaudit.report.model`
computed and returns a ``go.Figure``. Builders cut their input to the top rows
plus "other" themselves, so a figure stays small whatever it is given.

Text from logs (tool, server, project and model names) is untrusted. Plotly reads
a small HTML subset in labels (``<b>``, ``<br>``, ``<a href>``), so every such
string goes through :func:`plot_text`, which escapes ``& < >``: plotly turns the
entities back into the literal characters when it draws them as SVG text.
Traces get plain Python lists, never polars Series, so their specs are plain JSON.
"""

from __future__ import annotations

import html
from typing import Any

import plotly.graph_objects as go
import polars as pl

from tokaudit.report.model import OTHER, TOP_ROWS, top_n

TEMPLATE = "plotly_white"  # applied by the page (html.py) to every figure
MAX_LABEL_CHARS = 60
MAX_FINDING_BANDS = 40  # finding bands drawn on one drill-down (all findings are listed under it)

# One colour per token kind, the same in every figure.
KIND_COLORS = {
    "input_tokens": "#4C78A8",
    "cache_read_tokens": "#72B7B2",
    "cache_write_tokens": "#F58518",
    "output_tokens": "#E45756",
}
KIND_LABELS = {
    "input_tokens": "uncached input",
    "cache_read_tokens": "cache read",
    "cache_write_tokens": "cache write",
    "output_tokens": "output",
}
SEVERITY_COLORS = {"info": "#9E9E9E", "low": "#8BC34A", "medium": "#FFB300", "high": "#F4511E", "critical": "#B71C1C"}
DIRECT_COLOR = "#4C78A8"
REPLAY_COLOR = "#F58518"


def plot_text(value: Any, limit: int = MAX_LABEL_CHARS) -> str:
    """An untrusted string made safe as plotly label text: cut to ``limit`` characters, ``& < >`` escaped.

    Examples:
        >>> plot_text('<img src=x onerror=alert(1)>')
        '&lt;img src=x onerror=alert(1)&gt;'
    """
    text = "" if value is None else str(value)
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    return html.escape(text, quote=False)


def _layout(fig: go.Figure, title: str, **kwargs: Any) -> go.Figure:
    # No template here: setting one costs ~40 ms per figure; the page applies TEMPLATE once to every chart.
    layout = {
        "title": {"text": title, "x": 0, "xanchor": "left"},
        "margin": {"l": 60, "r": 20, "t": 60, "b": 50},
        "legend": {"orientation": "h", "y": -0.2},
    }
    fig.update_layout(**{**layout, **kwargs})
    return fig


def _empty(title: str, message: str = "no data in this window") -> go.Figure:
    fig = go.Figure()
    fig.add_annotation(text=message, showarrow=False, x=0.5, y=0.5, xref="paper", yref="paper", font={"size": 14, "color": "#777"})
    fig.update_xaxes(visible=False)
    fig.update_yaxes(visible=False)
    return _layout(fig, title, height=260)


def cost_over_time(series: pl.DataFrame) -> go.Figure:
    """Spend per period stacked by model, from ``model.time_series`` (period, period_days, model, cost_usd, total_tokens, requests)."""
    title = "Cost over time by model (USD)"
    series = series.filter(pl.col("period").is_not_null())
    if series.is_empty():
        return _empty(title)
    # Largest spenders first in the stack and legend; "other" last.
    order = series.group_by("model").agg(pl.col("cost_usd").sum()).sort("cost_usd", "model", descending=[True, False], nulls_last=True)
    models = [m for m in order["model"].to_list() if m != OTHER] + ([OTHER] if OTHER in order["model"].to_list() else [])
    days = int(series["period_days"].max()) if "period_days" in series.columns else 1
    fig = go.Figure()
    for model in models:
        rows = series.filter(pl.col("model") == model).sort("period")
        fig.add_trace(
            go.Bar(
                name=plot_text(model),
                width=days * 86_400_000 * 0.8,  # milliseconds on a date axis: a lone bar stays one period wide
                x=[d.isoformat() for d in rows["period"].to_list()],
                y=[round(v or 0.0, 6) for v in rows["cost_usd"].to_list()],
                customdata=[[t, r] for t, r in zip(rows["total_tokens"].to_list(), rows["requests"].to_list())],
                hovertemplate="%{x}<br>%{fullData.name}: $%{y:,.4f}<br>%{customdata[0]:,} tokens, %{customdata[1]:,} requests<extra></extra>",
            )
        )
    xaxis = {"type": "date", "hoverformat": "%Y-%m-%d" if days == 1 else "week of %Y-%m-%d"}
    return _layout(fig, title, barmode="stack", height=380, xaxis=xaxis, yaxis={"title": "USD", "tickprefix": "$"})


def spend_treemap(tree: pl.DataFrame) -> go.Figure:
    """Spend per project → agent → model, from ``model.spend_tree`` (already cut to top entries plus "other").

    When nothing in the window is priced, sizes are total tokens instead of dollars.
    """
    title = "Spend by project → agent → model"
    if tree.is_empty():
        return _empty(title)
    use_cost = (tree["cost_usd"].sum() or 0) > 0
    value_col = "cost_usd" if use_cost else "total_tokens"
    if not use_cost:
        title += " (tokens: nothing here is priced)"
    ids: list[str] = []
    labels: list[str] = []
    parents: list[str] = []
    values: list[float] = []
    index: dict[tuple[str, ...], str] = {}

    def node(path: tuple[str, ...], value: float) -> None:
        if path in index:
            return
        index[path] = f"n{len(ids)}"
        ids.append(index[path])
        labels.append(plot_text(path[-1], 40))
        parents.append(index[path[:-1]] if len(path) > 1 else "")
        values.append(value)

    for r in tree.iter_rows(named=True):
        node((r["project"],), 0.0)
        node((r["project"], r["agent"]), 0.0)
        node((r["project"], r["agent"], r["model"]), round(float(r[value_col] or 0), 6))
    fig = go.Figure(
        go.Treemap(
            ids=ids,
            labels=labels,
            parents=parents,
            values=values,
            # Inner nodes carry no value of their own: "remainder" sizes them by their children and
            # cannot drop a node over a rounding difference, as "total" can.
            branchvalues="remainder",
            hovertemplate=("%{label}<br>$%{value:,.4f}" if use_cost else "%{label}<br>%{value:,} tokens") + "<extra></extra>",
            textinfo="label+value+percent root",
            texttemplate="%{label}<br>" + ("$%{value:,.2f}" if use_cost else "%{value:,}") + "<br>%{percentRoot:.1%}",
        )
    )
    return _layout(fig, title, height=460, margin={"l": 10, "r": 10, "t": 50, "b": 10})


def attribution_bars(table: pl.DataFrame, key: str, title: str) -> go.Figure:
    """Direct vs replayed-context dollars per tool or MCP server (``key``), top rows plus "other".

    ``table`` has ``key``, ``direct_usd`` and ``replay_usd`` (``model.tool_table``).
    """
    priced = table.filter(pl.col("direct_usd").is_not_null() | pl.col("replay_usd").is_not_null())
    if priced.is_empty():
        return _empty(title, "no priced tool calls in this window")
    ranked = priced.with_columns((pl.col("direct_usd").fill_null(0) + pl.col("replay_usd").fill_null(0)).alias("_total"))
    rows = top_n(ranked, key, "_total", TOP_ROWS, ["direct_usd", "replay_usd", "direct_tokens", "replay_tokens", "_total"])
    rows = rows.reverse()  # horizontal bars draw bottom-up: largest on top
    names = [plot_text(k if k is not None else "(unnamed)") for k in rows[key].to_list()]
    fig = go.Figure()
    for column, tokens, label, color in (
        ("direct_usd", "direct_tokens", "direct (arguments written, result read once)", DIRECT_COLOR),
        ("replay_usd", "replay_tokens", "replayed context (re-read by later requests)", REPLAY_COLOR),
    ):
        fig.add_trace(
            go.Bar(
                name=label,
                orientation="h",
                y=names,
                x=[round(v or 0.0, 6) for v in rows[column].to_list()],
                customdata=[[t or 0] for t in rows[tokens].to_list()],
                marker={"color": color},
                hovertemplate="%{y}<br>$%{x:,.4f} · %{customdata[0]:,} tokens<extra>" + label.split(" ")[0] + "</extra>",
            )
        )
    height = max(260, 70 + 26 * rows.height)
    return _layout(fig, title, barmode="stack", height=height, xaxis={"tickprefix": "$"}, yaxis={"automargin": True})


def session_drilldown(turns: pl.DataFrame, findings: list[dict[str, Any]], *, title: str, bucket_turns: int = 1) -> go.Figure:
    """Context growth per turn split into uncached input, cache read, cache write and output tokens.

    ``turns`` is ``Drilldown.turns`` (turn, the four token kinds, cost_usd, tool_calls,
    tool_errors, tool_names); turns with tool calls are marked above their bar (errors
    in red); each finding with a turn range is a shaded band labelled with its detector.
    """
    if turns.is_empty():
        return _empty(title, "no requests")
    x = turns["turn"].to_list()
    fig = go.Figure()
    for kind, label in KIND_LABELS.items():
        fig.add_trace(
            go.Bar(
                name=label,
                x=x,
                y=turns[kind].to_list(),
                marker={"color": KIND_COLORS[kind], "line": {"width": 0}},
                hovertemplate="turn %{x}<br>" + label + ": %{y:,}<extra></extra>",
            )
        )
    totals = turns.select(pl.sum_horizontal(*KIND_LABELS.keys()).alias("t"))["t"].to_list()
    marked = [i for i, n in enumerate(turns["tool_calls"].to_list()) if n]
    if marked:
        names = turns["tool_names"].to_list()
        calls = turns["tool_calls"].to_list()
        errors = turns["tool_errors"].to_list()
        fig.add_trace(
            go.Scatter(
                name="tool calls (red: with errors)",
                mode="markers",
                x=[x[i] for i in marked],
                y=[totals[i] * 1.04 for i in marked],
                marker={
                    "symbol": "triangle-down",
                    "size": 8,
                    "color": ["#C62828" if errors[i] else "#455A64" for i in marked],
                },
                customdata=[[calls[i], errors[i], plot_text(names[i] or "", 120)] for i in marked],
                hovertemplate="turn %{x}: %{customdata[0]} tool call(s), %{customdata[1]} error(s)<br>%{customdata[2]}<extra></extra>",
            )
        )
    # The most severe first (findings arrive sorted so), at most MAX_FINDING_BANDS of them.
    spans = [f for f in findings if f.get("first_turn") is not None and f.get("last_turn") is not None][:MAX_FINDING_BANDS]
    # One label row per detector, so that bands of different detectors over the same turns stay readable.
    rows = {d: i for i, d in enumerate(dict.fromkeys(f.get("detector", "") for f in spans))}
    shapes, labels = [], []
    for f in spans:
        color = SEVERITY_COLORS.get(f.get("severity", ""), "#9E9E9E")
        x0 = f["first_turn"] - 0.5
        shapes.append(
            {"type": "rect", "xref": "x", "yref": "paper", "x0": x0, "x1": f["last_turn"] + 0.5, "y0": 0, "y1": 1,
             "fillcolor": color, "opacity": 0.08, "line": {"width": 0}, "layer": "below"}
        )  # fmt: skip
        labels.append(
            {"x": x0, "y": 1.0 - 0.07 * rows[f.get("detector", "")], "xref": "x", "yref": "paper", "xanchor": "left", "yanchor": "top",
             "showarrow": False, "text": plot_text(f.get("detector", ""), 30), "font": {"size": 10, "color": "#333"},
             "bgcolor": "rgba(255,255,255,0.7)", "bordercolor": color, "borderwidth": 1}
        )  # fmt: skip
    # Set in one go: add_vrect/add_annotation re-validate every shape so far on each call.
    fig.update_layout(shapes=shapes, annotations=labels)
    xlabel = "turn" if bucket_turns == 1 else f"turn (averaged over buckets of {bucket_turns} turns)"
    return _layout(fig, title, barmode="stack", bargap=0.05, height=380, xaxis={"title": xlabel}, yaxis={"title": "tokens"})


def figure_spec(fig: go.Figure) -> dict[str, Any]:
    """A figure as plain JSON data without its template (what snapshot tests compare)."""
    spec = fig.to_plotly_json()
    spec.get("layout", {}).pop("template", None)
    return spec
