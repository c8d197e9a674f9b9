"""Prices per model and call time, from the genai-prices snapshot shipped with the package.

Cost is never stored: it is computed at query time from the canonical token
columns and a price table built here, so a corrected price table re-prices
history. Rules (see the project's pricing reference):

* offline only — genai-prices' bundled data, never its updater;
* per request, whole-request long-context tiers: once a request's total input
  (uncached + cache read + cache writes) passes a tier's threshold, *every*
  token of it is billed at that tier (Anthropic's rule, as genai-prices does);
* a long-context tier the snapshot lacks is added (``_MISSING_LONG_CONTEXT``: Claude Sonnet 4);
* a request served in Claude's fast mode (``speed = "fast"``) is priced under its own key, its
  model with ``FAST_MODE_SUFFIX``: genai-prices' fast-mode variant where the model has one, else
  Anthropic's published multiplier where the snapshot lacks it (``_MISSING_FAST_MODE``), else
  unpriced — never at the standard rate, which would undercount it several times over;
* 5-minute and 1-hour cache writes priced apart;
* a model with no price is *unpriced* (cost NULL, listed), never $0;
* user overrides (``[pricing.overrides."MODEL"]``) win, keyed by the logged id.

Rates are obtained by asking genai-prices to price small probe usages, so its
own fallbacks (e.g. a model without a cache-write price bills writes as input)
apply unchanged. One row per (model, provider, day, tier) feeds an ASOF join
on the request's total input.
"""

from __future__ import annotations

import importlib.util
import re
from dataclasses import dataclass
from datetime import date, datetime, time, timezone
from decimal import Decimal
from functools import lru_cache
from pathlib import Path

from tokaudit.config import PriceOverride

PROBE_TOKENS = 1000
_MTOK = Decimal(1_000_000)


@lru_cache(maxsize=1)
def price_source() -> str:
    """The price table's name and version, recorded beside every cost (and keying the price cache); the
    revision of tokaudit's own additions to it (``_MISSING_LONG_CONTEXT``, ``_MISSING_FAST_MODE``) too, so that a change re-prices."""
    return f"genai-prices {_installed_version('genai_prices')} + tokaudit tiers {_ADDITIONS_REVISION}"


def _installed_version(package: str) -> str:
    """A package's installed version, read from its ``.dist-info`` folder name.

    Every ``usage`` run needs it (it keys the price cache), and ``importlib.metadata``
    costs about a tenth of that command's wall time to import; the folder beside the
    package says the same. Anything unusual falls back to ``importlib.metadata``.
    """
    spec = importlib.util.find_spec(package)
    if spec is not None and spec.submodule_search_locations:
        site = Path(next(iter(spec.submodule_search_locations))).parent
        found = sorted(site.glob(f"{package}-*.dist-info"))
        if len(found) == 1:
            return found[0].name[len(package) + 1 : -len(".dist-info")]
    from importlib.metadata import version

    return version(package)


@dataclass(frozen=True)
class PriceTier:
    """Rates (USD per million tokens) for requests whose total input exceeds ``above_input_tokens``."""

    above_input_tokens: int  # -1 for the base tier
    input_mtok: Decimal
    cache_read_mtok: Decimal
    cache_write_5m_mtok: Decimal
    cache_write_1h_mtok: Decimal
    output_mtok: Decimal
    web_search_request_usd: Decimal


@dataclass(frozen=True)
class ModelPrice:
    """How one logged model id was priced."""

    model: str
    provider: str | None
    price_model_id: str
    price_provider_id: str | None
    source: str  # "genai-prices X.Y.Z" or "override"
    tiers: tuple[PriceTier, ...]


_ROUTER_PREFIX = re.compile(r"^(?:openrouter/|anthropic/|openai/|bedrock/|vertex_ai/|azure/)+")
_BEDROCK = re.compile(r"^(?:(?:us|eu|apac|global)\.)?anthropic\.")


def _candidates(model: str, provider: str | None) -> list[tuple[str, str | None]]:
    """Model ids to try, most specific first: as logged, then normalised aliases."""
    tries: list[tuple[str, str | None]] = [(model, provider), (model, None)]
    if _BEDROCK.match(model):
        tries.insert(0, (model, "aws"))
    stripped = _ROUTER_PREFIX.sub("", model)
    dashed = re.sub(r"(\d)\.(\d)", r"\1-\2", stripped)  # claude-sonnet-4.5 -> claude-sonnet-4-5
    for alias in (stripped, dashed):
        if alias != model:
            tries += [(alias, provider), (alias, None)]
    seen, unique = set(), []
    for t in tries:
        if t not in seen:
            seen.add(t)
            unique.append(t)
    return unique


def _probe(model: str, provider: str | None, when: datetime):
    from genai_prices import Usage, calc_price

    def total(**usage: int) -> Decimal:
        return calc_price(Usage(**usage), model, provider_id=provider, genai_request_timestamp=when).total_price

    return total


# The price key of a request served in fast mode: the logged model id with this suffix (the usage queries
# build it, ``analyze.usage.PRICE_MODEL_SQL``). Reports group by the logged id; only the price join and the
# unpriced list see the key (an override may name it too).
FAST_MODE_SUFFIX = " (fast mode)"
_FAST = {"speed": "fast"}


@lru_cache(maxsize=4096)
def lookup(model: str, provider: str | None, day: date) -> ModelPrice | None:
    """Price ``model`` (a logged id, or one with ``FAST_MODE_SUFFIX``) as of ``day`` from genai-prices;
    None when it has no price."""
    from genai_prices import Usage, calc_price

    logged = model.removesuffix(FAST_MODE_SUFFIX)
    fast = logged != model
    when = datetime.combine(day, time(0), tzinfo=timezone.utc)
    for candidate, prov in _candidates(logged, provider):
        try:
            calc = calc_price(Usage(input_tokens=PROBE_TOKENS), candidate, provider_id=prov, genai_request_timestamp=when)
        except (LookupError, ValueError):
            continue
        tiers = _with_missing_tier(calc.model.id, _tiers_of(calc.model_price, candidate, prov, when))
        if fast:
            tiers = _fast_mode_tiers(calc, when, tiers)
            if tiers is None:
                return None
        return ModelPrice(model, provider, calc.model.id, calc.provider.id, price_source(), tiers)
    return None


# Fast-mode prices Anthropic publishes that the genai-prices snapshot (0.2.3) lacks, as a multiple of the
# standard rates of the request's tier: Claude Opus 4.6 in fast mode bills 6x every standard rate, the
# long-context tier's included ($30/$150 per MTok up to 200k input, $60/$225 above), cache multipliers on top
# (platform.claude.com/docs/en/build-with-claude/fast-mode).
_MISSING_FAST_MODE = {"claude-opus-4-6": Decimal(6)}


def _fast_mode_tiers(calc, when: datetime, standard: tuple[PriceTier, ...]) -> tuple[PriceTier, ...] | None:
    """A fast-mode request's tiers: the snapshot's fast variant, a published multiplier, or None (unpriced)."""
    from genai_prices import Usage

    variants = getattr(calc.model, "price_variants", None) or ()
    if any(v.when == _FAST and (v.constraint is None or v.constraint.active(when)) for v in variants):
        fast_price = calc.model.get_prices(when, _FAST)

        # Priced by the variant itself: genai-prices drops a price context when it falls back to another provider.
        def total(**usage: int) -> Decimal:
            return fast_price.calc_price(Usage(**usage))["total_price"]

        return _probed_tiers(fast_price, total)
    factor = _MISSING_FAST_MODE.get(calc.model.id)
    if factor is None:
        return None
    return tuple(
        PriceTier(
            above_input_tokens=t.above_input_tokens, input_mtok=t.input_mtok * factor, cache_read_mtok=t.cache_read_mtok * factor,
            cache_write_5m_mtok=t.cache_write_5m_mtok * factor, cache_write_1h_mtok=t.cache_write_1h_mtok * factor,
            output_mtok=t.output_mtok * factor, web_search_request_usd=t.web_search_request_usd,
        )
        for t in standard
    )


_TIERS_BY_PRICE: dict[int, tuple[object, tuple[PriceTier, ...]]] = {}

# Long-context tiers Anthropic bills that the genai-prices snapshot lacks (0.2.3): Claude Sonnet 4 with its
# 1M-token context window bills a request whose total input passes 200k at the premium, every token of it —
# input, cache reads and writes at 2× their base rates, output at 1.5×, as the snapshot's Sonnet 4.5 tier does.
# A request of more than 200k input is only possible with that window, so the tier applies to every such one.
_MISSING_LONG_CONTEXT = {"claude-sonnet-4-0": (200_000, Decimal(2), Decimal("1.5"))}
_ADDITIONS_REVISION = 2  # raise with any change to the additions (long-context tiers, fast-mode multipliers)


def _with_missing_tier(price_model_id: str, tiers: tuple[PriceTier, ...]) -> tuple[PriceTier, ...]:
    """``tiers`` plus a long-context tier genai-prices lacks for this model (``_MISSING_LONG_CONTEXT``), if any."""
    missing = _MISSING_LONG_CONTEXT.get(price_model_id)
    if missing is None or len(tiers) > 1:
        return tiers  # a snapshot that knows the tier wins
    above, inputs, output = missing
    base = tiers[0]
    return (base, PriceTier(
        above_input_tokens=above, input_mtok=base.input_mtok * inputs, cache_read_mtok=base.cache_read_mtok * inputs,
        cache_write_5m_mtok=base.cache_write_5m_mtok * inputs, cache_write_1h_mtok=base.cache_write_1h_mtok * inputs,
        output_mtok=base.output_mtok * output, web_search_request_usd=base.web_search_request_usd,
    ))


def _tiers_of(model_price, model: str, provider: str | None, when: datetime) -> tuple[PriceTier, ...]:
    """Probe a price's tiers once per distinct genai-prices price object (most models have one for all dates)."""
    cached = _TIERS_BY_PRICE.get(id(model_price))
    if cached is not None and cached[0] is model_price:
        return cached[1]
    tiers = _probed_tiers(model_price, _probe(model, provider, when))
    _TIERS_BY_PRICE[id(model_price)] = (model_price, tiers)
    return tiers


def _probed_tiers(model_price, total) -> tuple[PriceTier, ...]:
    """A genai-prices price's tiers (its base one and one per long-context threshold), probed with ``total``."""
    from genai_prices.types import TieredPrices

    starts = sorted({tier.start for value in vars(model_price).values() if isinstance(value, TieredPrices) for tier in value.tiers})
    web_kcount = getattr(model_price, "web_searches_kcount", None) or Decimal(0)
    return tuple(_tier(total, above, web_kcount) for above in [-1, *starts])


def _clean(rate: Decimal) -> Decimal:
    """Drop the division noise of probing (7.4999…9 -> 7.5); prices have at most 9 decimals per MTok."""
    return rate.quantize(Decimal("1e-9")).normalize()


def _tier(total, above: int, web_kcount: Decimal) -> PriceTier:
    """Rates inside one tier, probed with usages whose total input lands in it."""
    n = max(PROBE_TOKENS, above + 1)  # total input tokens of every probe in this tier
    per_mtok = _MTOK / n
    base_input = total(input_tokens=n)
    output = (total(input_tokens=n, output_tokens=PROBE_TOKENS) - base_input) * _MTOK / PROBE_TOKENS
    return PriceTier(
        above_input_tokens=above,
        input_mtok=_clean(base_input * per_mtok),
        cache_read_mtok=_clean(total(input_tokens=n, cache_read_tokens=n) * per_mtok),
        cache_write_5m_mtok=_clean(total(input_tokens=n, cache_write_tokens=n) * per_mtok),
        cache_write_1h_mtok=_clean(total(input_tokens=n, cache_write_tokens=n, cache_write_1h_tokens=n) * per_mtok),
        output_mtok=_clean(output),
        web_search_request_usd=web_kcount / 1000,
    )


def override_price(o: PriceOverride) -> ModelPrice:
    """A user's override as a single-tier price; missing cache prices bill as plain input (an upper bound)."""
    write_5m = o.cache_write_mtok if o.cache_write_mtok is not None else o.input_mtok
    tier = PriceTier(
        above_input_tokens=-1,
        input_mtok=o.input_mtok,
        cache_read_mtok=o.cache_read_mtok if o.cache_read_mtok is not None else o.input_mtok,
        cache_write_5m_mtok=write_5m,
        cache_write_1h_mtok=o.cache_write_1h_mtok if o.cache_write_1h_mtok is not None else write_5m,
        output_mtok=o.output_mtok,
        web_search_request_usd=Decimal(0),
    )
    return ModelPrice(o.model, None, o.model, None, "override", (tier,))


def price_rows(
    keys: list[tuple[str | None, str | None, date]], overrides: dict[str, PriceOverride]
) -> tuple[list[dict], list[str]]:
    """Price-table rows for each (model, provider, day) key, and the models with no price."""
    rows, unpriced = [], set()
    for model, provider, day in keys:
        if model is None:
            unpriced.add("(model not logged)")
            continue
        price = override_price(overrides[model]) if model in overrides else lookup(model, provider, day)
        if price is None:
            unpriced.add(model)
            continue
        for tier in price.tiers:
            rows.append(
                {
                    "model": model,
                    "provider": provider,
                    "price_day": day,
                    "above_input_tokens": tier.above_input_tokens,
                    "price_model_id": price.price_model_id,
                    "price_source": price.source,
                    "pricing_tier": "override" if price.source == "override" else "base" if tier.above_input_tokens < 0 else f">{tier.above_input_tokens // 1000}k",
                    "input_usd_per_token": tier.input_mtok / _MTOK,
                    "cache_read_usd_per_token": tier.cache_read_mtok / _MTOK,
                    "cache_write_5m_usd_per_token": tier.cache_write_5m_mtok / _MTOK,
                    "cache_write_1h_usd_per_token": tier.cache_write_1h_mtok / _MTOK,
                    "output_usd_per_token": tier.output_mtok / _MTOK,
                    "web_search_usd_per_request": tier.web_search_request_usd,
                }
            )
    return rows, sorted(unpriced)
