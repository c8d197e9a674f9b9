"""Figure builders: snapshot tests of their specs (plain JSON, template dropped), built from hand-made frames.

Refresh the snapshots after a deliberate change with ``TOKAUDIT_UPDATE_SNAPSHOTS=1``
and review the diff of tests/report/snapshots/.
"""

from __future__ import annotations

import json
import os
from datetime import date
from pathlib import Path

import polars as pl
import pytest

from tokaudit.report import figures
from tokaudit.report.model import OTHER, TOP_ROWS

SNAPSHOTS = Path(__file__).with_name("snapshots")


def check_snapshot(name: str, fig) -> None:
    spec = figures.figure_spec(fig)
    text = json.dumps(spec, indent=1, sort_keys=True, default=str) + "\n"
    path = SNAPSHOTS / f"{name}.json"
    if os.environ.get("TOKAUDIT_UPDATE_SNAPSHOTS") or (not path.exists() and not os.environ.get("CI")):
        path.write_text(text, encoding="utf-8")
    assert json.loads(text) == json.loads(path.read_text(encoding="utf-8")), f"{name}: spec changed; refresh with TOKAUDIT_UPDATE_SNAPSHOTS=1"


def plain(value):
    """Every leaf of a spec is a plain JSON value: no polars Series or numpy arrays leaked into a trace."""
    if isinstance(value, dict):
        return all(plain(v) for v in value.values())
    if isinstance(value, (list, tuple)):
        return all(plain(v) for v in value)
    return value is None or isinstance(value, (str, int, float, bool))


SERIES = pl.DataFrame(
    {
        "period": [date(2026, 3, 10), date(2026, 3, 10), date(2026, 3, 11), date(2026, 3, 11), date(2026, 3, 11)],
        "model": ["claude-opus-4-5", "gpt-5", "claude-opus-4-5", "gpt-5", OTHER],
        "cost_usd": [1.25, 0.5, 2.0, None, 0.125],
        "total_tokens": [1000, 400, 1600, 50, 30],
        "requests": [3, 1, 4, 1, 1],
    }
)


def test_cost_over_time_stacks_models_largest_first_other_last():
    fig = figures.cost_over_time(SERIES)
    assert [t.name for t in fig.data] == ["claude-opus-4-5", "gpt-5", OTHER]
    assert fig.layout.barmode == "stack"
    assert list(fig.data[1].y) == [0.5, 0.0]  # an unpriced day plots as no dollars, never a gap that reads as missing data
    assert plain(figures.figure_spec(fig))
    check_snapshot("cost_over_time", fig)


def test_empty_frames_give_a_labelled_empty_figure():
    empty = SERIES.clear()
    for fig in (figures.cost_over_time(empty), figures.spend_treemap(pl.DataFrame(schema={"project": pl.String, "agent": pl.String, "model": pl.String, "cost_usd": pl.Float64, "total_tokens": pl.Int64}))):
        assert not fig.data and "no data" in fig.layout.annotations[0].text


TREE = pl.DataFrame(
    {
        "project": ["webapp", "webapp", "api", OTHER],
        "agent": ["claude-code", "codex", "claude-code", OTHER],
        "model": ["claude-opus-4-5", "gpt-5", "claude-sonnet-4-5", OTHER],
        "cost_usd": [3.0, 1.0, 0.5, 0.25],
        "total_tokens": [3000, 2000, 700, 100],
    }
)


def test_treemap_builds_a_tree_with_values_on_leaves_only():
    fig = figures.spend_treemap(TREE)
    t = fig.data[0]
    assert t.branchvalues == "remainder"
    leaves = [v for v in t.values if v]
    assert sorted(leaves) == [0.25, 0.5, 1.0, 3.0]
    ids = dict(zip(t.ids, t.labels))
    assert set(t.parents) - {""} <= set(ids)  # every parent is a node
    assert list(t.labels).count("webapp") == 1 and list(t.labels).count("claude-code") == 2  # one node per path
    check_snapshot("spend_treemap", fig)


def test_treemap_sizes_by_tokens_when_nothing_is_priced():
    fig = figures.spend_treemap(TREE.with_columns(pl.lit(0.0).alias("cost_usd")))
    assert "tokens" in fig.layout.title.text and max(fig.data[0].values) == 3000


def test_attribution_bars_cut_to_top_rows_plus_other():
    n = TOP_ROWS + 5
    table = pl.DataFrame(
        {
            "tool": [f"tool{i}" for i in range(n)],
            "direct_usd": [float(i) for i in range(n)],
            "replay_usd": [float(2 * i) for i in range(n)],
            "direct_tokens": list(range(n)),
            "replay_tokens": [2 * i for i in range(n)],
        }
    )
    fig = figures.attribution_bars(table, "tool", "per tool")
    direct, replay = fig.data
    assert len(direct.y) == TOP_ROWS + 1 and direct.y[0] == OTHER and direct.y[-1] == f"tool{n - 1}"
    assert direct.x[0] == sum(range(5)) and replay.x[0] == 2 * sum(range(5))  # "other" sums the rest
    check_snapshot("attribution_bars", figures.attribution_bars(table.head(3), "tool", "per tool"))


def test_attribution_bars_without_priced_calls_say_so():
    table = pl.DataFrame({"tool": ["a"], "direct_usd": [None], "replay_usd": [None], "direct_tokens": [1], "replay_tokens": [2]}, schema_overrides={"direct_usd": pl.Float64, "replay_usd": pl.Float64})
    fig = figures.attribution_bars(table, "tool", "per tool")
    assert not fig.data and "no priced" in fig.layout.annotations[0].text


TURNS = pl.DataFrame(
    {
        "turn": [0, 1, 2, 3],
        "input_tokens": [900, 5, 4, 3],
        "cache_read_tokens": [0, 1000, 1900, 2500],
        "cache_write_tokens": [1000, 900, 600, 50],
        "output_tokens": [100, 120, 80, 60],
        "cost_usd": [0.01, 0.005, 0.004, 0.003],
        "tool_calls": [1, 0, 2, 0],
        "tool_errors": [0, 0, 1, 0],
        "tool_names": ["Read", None, "github/search_issues, Bash", None],
    }
)


def test_drilldown_stacks_token_kinds_marks_tools_and_findings():
    findings = [
        {"detector": "near_duplicates", "severity": "high", "first_turn": 1, "last_turn": 2},
        {"detector": "tool_surface_change", "severity": "high", "first_turn": None, "last_turn": None},
    ]
    fig = figures.session_drilldown(TURNS, findings, title="Tokens per turn")
    names = [t.name for t in fig.data]
    assert names[:4] == ["uncached input", "cache read", "cache write", "output"]
    marks = fig.data[4]
    assert list(marks.x) == [0, 2] and marks.marker.color[1] == "#C62828"  # the turn with an error is red
    assert len(fig.layout.shapes) == 1 and fig.layout.shapes[0].x0 == 0.5 and fig.layout.shapes[0].x1 == 2.5
    assert fig.layout.annotations[0].text == "near_duplicates"
    assert plain(figures.figure_spec(fig))
    check_snapshot("session_drilldown", fig)


@pytest.mark.parametrize("hostile", ["<img src=x onerror=alert(1)>", '"><script>alert(1)</script>', "<b>bold</b>", "<a href='javascript:alert(1)'>x</a>"])
def test_log_text_reaches_plotly_only_escaped(hostile):
    series = SERIES.with_columns(pl.lit(hostile).alias("model"))
    tree = TREE.with_columns(pl.lit(hostile).alias("project"), pl.lit(hostile).alias("agent"), pl.lit(hostile).alias("model"))
    table = pl.DataFrame({"tool": [hostile], "direct_usd": [1.0], "replay_usd": [2.0], "direct_tokens": [1], "replay_tokens": [2]})
    turns = TURNS.with_columns(pl.lit(hostile).alias("tool_names"))
    finding = [{"detector": hostile, "severity": "high", "first_turn": 0, "last_turn": 1}]
    for fig in (
        figures.cost_over_time(series),
        figures.spend_treemap(tree),
        figures.attribution_bars(table, "tool", "t"),
        figures.session_drilldown(turns, finding, title="t"),
    ):
        text = json.dumps(figures.figure_spec(fig), default=str)
        # Plotly reads a small HTML subset in labels: only the builders' own <br> and <extra> may be there.
        stripped = text.replace("<br>", "").replace("<extra>", "").replace("</extra>", "")
        assert "<" not in stripped and ">" not in stripped, stripped[:300]
        assert hostile not in text


def test_plot_text_bounds_length():
    assert len(figures.plot_text("x" * 500)) == figures.MAX_LABEL_CHARS
    assert figures.plot_text(None) == ""
