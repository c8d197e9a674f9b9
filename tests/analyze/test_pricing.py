"""Pricing: the worked examples of the pricing reference, tiers, 1h writes, unknown models, overrides."""

from __future__ import annotations

from datetime import date, datetime
from decimal import Decimal

import pytest

from tokaudit.analyze.pricing import lookup
from tokaudit.analyze.usage import usage_report
from tokaudit.config import parse_config
from tokaudit.store.load import _insert

DAY = date(2026, 3, 10)


def cost(model, provider, *, inp=0, cr=0, cw5=0, cw1h=0, out=0) -> Decimal:
    """Price one request the way the SQL does: pick the tier by total input, sum rate × tokens."""
    price = lookup(model, provider, DAY)
    total_input = inp + cr + cw5 + cw1h
    tier = [t for t in price.tiers if total_input > t.above_input_tokens][-1]
    m = Decimal(1_000_000)
    return (inp * tier.input_mtok + cr * tier.cache_read_mtok + cw5 * tier.cache_write_5m_mtok
            + cw1h * tier.cache_write_1h_mtok + out * tier.output_mtok) / m


@pytest.mark.parametrize(
    ("model", "provider", "usage", "expected"),
    [
        ("claude-sonnet-4-5", "anthropic", dict(inp=10_000, cr=2_000, cw5=500, out=800), "0.044475"),
        ("claude-sonnet-4-5", "anthropic", dict(inp=10_000, cr=2_000, cw1h=500, out=800), "0.0456"),
        ("us.anthropic.claude-sonnet-4-5-20250929-v1:0", "anthropic", dict(inp=10_000, cr=2_000, cw5=500, out=800), "0.0489225"),
        ("claude-sonnet-4-5", "anthropic", dict(inp=250_000, out=800), "1.518"),
        ("claude-sonnet-4-5", "anthropic", dict(inp=10, cr=250_000, out=1_000), "0.17256"),
        ("claude-sonnet-4-5", "anthropic", dict(inp=49_000, cr=150_000, out=1_000), "0.207"),
        ("gpt-4o", "openai", dict(inp=8_000, cr=2_000, out=800), "0.0305"),
        ("gpt-5", "openai", dict(inp=8_000, cr=2_000, out=800), "0.01825"),
        ("gpt-5-mini", "openai", dict(inp=8_000, cr=2_000, out=800), "0.00365"),
        ("gpt-5", "openai", dict(inp=2_100, cr=900, out=150), "0.0042375"),
        ("claude-sonnet-4-5-20250929", "anthropic", dict(inp=10, cw5=2_000, cr=10_000, out=120), "0.01233"),
        ("claude-opus-4-5-20251101", "anthropic", dict(inp=3, cw1h=500, cr=12_000, out=300), "0.018515"),
        ("anthropic/claude-sonnet-4.5", "anthropic", dict(inp=10_000, cr=2_000, cw5=500, out=800), "0.044475"),
    ],
)
def test_reference_worked_examples(model, provider, usage, expected):
    assert cost(model, provider, **usage) == Decimal(expected)


def test_unknown_model_has_no_price():
    assert lookup("acme-coder-9000", "anthropic", DAY) is None


def _call(model, **tokens):
    row = {
        "source_id": 1, "call_key": f"k-{model}-{len(str(tokens))}", "session_id": "s", "line_no": 1, "ts_utc": datetime(2026, 3, 10, 12),
        "provider": "anthropic", "model": model, "input_tokens": 0, "cache_read_tokens": 0, "cache_write_5m_tokens": 0,
        "cache_write_1h_tokens": 0, "output_tokens": 0, "web_search_requests": 0, "usage_source": "reported",
        "output_is_lower_bound": False, "cache_ttl_known": True, "is_sidechain": False, "is_aggregate": False,
    }
    row.update(tokens)
    return row


def test_unpriced_is_listed_never_zero_and_overrides_price_it(store):
    _insert(store, "llm_calls", [_call("claude-sonnet-4-5", input_tokens=1000, output_tokens=100), _call("acme-coder-9000", input_tokens=5000)])
    report = usage_report(store, by="model")
    rows = {r["model"]: r for r in report.rows}
    assert rows["acme-coder-9000"]["cost_usd"] is None
    assert rows["acme-coder-9000"]["unpriced_calls"] == 1
    assert report.unpriced_models == ["acme-coder-9000"]
    assert any("acme-coder-9000" in n for n in report.notes)
    assert rows["claude-sonnet-4-5"]["cost_usd"] == Decimal("0.0045")
    config = parse_config({"pricing": {"overrides": {"acme-coder-9000": {"input_mtok": 2, "output_mtok": 8}}}})
    priced = {r["model"]: r for r in usage_report(store, by="model", config=config).rows}
    assert priced["acme-coder-9000"]["cost_usd"] == Decimal("0.01")
    assert priced["acme-coder-9000"]["unpriced_calls"] == 0


def test_long_context_request_is_billed_whole_at_the_tier(store):
    _insert(store, "llm_calls", [_call("claude-sonnet-4-5", input_tokens=10, cache_read_tokens=250_000, output_tokens=1000)])
    (row,) = usage_report(store, by="model").rows
    assert row["cost_usd"] == Decimal("0.17256")


def test_each_model_takes_its_own_tier_thresholds(store):
    # Models bill long context from different thresholds (200k, 272k, or none); a request between
    # two models' thresholds must take its own model's tier, whichever other models are priced.
    models = [("claude-sonnet-4-5", "anthropic"), ("gpt-5.4", "openai"), ("claude-opus-4-5", "anthropic")]
    inputs = [150_000, 250_000, 300_000]
    rows = [
        _call(model, provider=provider, call_key=f"{model}-{n}", input_tokens=n, output_tokens=1_000)
        for model, provider in models
        for n in inputs
    ]
    _insert(store, "llm_calls", rows)
    report = {r["model"]: r for r in usage_report(store, by="model").rows}
    for model, provider in models:
        expected = sum(cost(model, provider, inp=n, out=1_000) for n in inputs)
        assert report[model]["cost_usd"] == expected, model
    assert len({report[m]["cost_usd"] / 3 for m, _ in models}) == 3


def test_sonnet_4_past_200k_is_billed_whole_at_the_long_context_tier_the_snapshot_lacks(store):
    """genai-prices 0.2.3 has no long-context tier for Claude Sonnet 4; Anthropic bills its 1M-token window as it
    bills Sonnet 4.5's: past 200k total input, every token at the premium."""
    assert cost("claude-sonnet-4-20250514", "anthropic", inp=10, cr=250_000, out=1_000) == cost("claude-sonnet-4-5", "anthropic", inp=10, cr=250_000, out=1_000)
    assert cost("claude-sonnet-4-20250514", "anthropic", inp=10, cr=150_000, out=1_000) == Decimal("0.06003")  # base rates below
    _insert(store, "llm_calls", [_call("claude-sonnet-4-20250514", input_tokens=10, cache_read_tokens=250_000, output_tokens=1000)])
    (row,) = usage_report(store, by="model").rows
    assert row["cost_usd"] == Decimal("0.17256")


def test_a_fast_mode_request_is_priced_at_fast_rates_and_unpriced_where_none_is_known(store):
    """``usage.speed == "fast"`` bills premium rates: the snapshot's fast variant (Opus 4.8, 2x), Anthropic's
    published 6x for Opus 4.6 (which the snapshot lacks, long-context tier included), and no price at all for a
    model whose fast rates nobody states — never the standard rate."""
    _insert(store, "llm_calls", [
        _call("claude-opus-4-6", call_key="a", input_tokens=10, output_tokens=1000, speed="fast"),
        _call("claude-opus-4-6", call_key="b", input_tokens=10, output_tokens=1000, speed="standard"),
        _call("claude-opus-4-6", call_key="c", input_tokens=250_000, output_tokens=1000, speed="fast"),
        _call("claude-opus-4-8", call_key="d", input_tokens=10, output_tokens=1000, speed="fast"),
        _call("claude-opus-4-7", call_key="e", input_tokens=10, output_tokens=1000, speed="fast"),
    ])
    report = usage_report(store, by="model")
    rows = {r["model"]: r for r in report.rows}
    # $30 / $150 per MTok up to 200k input, $60 / $225 above (6x the long-context tier), plus one standard request.
    assert rows["claude-opus-4-6"]["cost_usd"] == Decimal("0.1503") + Decimal("0.02505") + Decimal("15.225")
    assert rows["claude-opus-4-8"]["cost_usd"] == Decimal("0.0501")  # $10 / $50
    assert rows["claude-opus-4-7"]["cost_usd"] is None and rows["claude-opus-4-7"]["unpriced_calls"] == 1
    assert report.unpriced_models == ["claude-opus-4-7 (fast mode)"]
    config = parse_config({"pricing": {"overrides": {"claude-opus-4-7 (fast mode)": {"input_mtok": 10, "output_mtok": 50}}}})
    priced = {r["model"]: r for r in usage_report(store, by="model", config=config).rows}
    assert priced["claude-opus-4-7"]["cost_usd"] == Decimal("0.0501")
