"""Configuration: ``tokaudit.toml``, ``[tool.tokaudit]`` in ``pyproject.toml``, env vars, defaults.

Lookup order for the file: ``--config PATH``, then ``$TOKAUDIT_CONFIG``, then
``./tokaudit.toml``, then ``[tool.tokaudit]`` in ``./pyproject.toml``. Options
given on the command line win over the file; the file wins over defaults.

Example ``tokaudit.toml``::

    db = "audit/tokaudit.duckdb"
    max_line_bytes = 10_485_760

    [pricing.overrides."acme-coder-1"]      # keyed by the model id as logged
    input_mtok = 1.0                        # USD per million tokens
    output_mtok = 4.0
    cache_read_mtok = 0.1
    cache_write_mtok = 1.25                 # 5-minute cache writes
    cache_write_1h_mtok = 2.0
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any

from tokaudit.errors import ConfigError
from tokaudit.gate.budgets import BudgetSet, TaskRule, parse_budgets, parse_tasks

DEFAULT_DB = "tokaudit.duckdb"
DEFAULT_MAX_LINE_BYTES = 10 * 1024 * 1024

PRICE_FIELDS = ("input_mtok", "output_mtok", "cache_read_mtok", "cache_write_mtok", "cache_write_1h_mtok")


@dataclass(frozen=True)
class PriceOverride:
    """User-given prices for one logged model id, in USD per million tokens."""

    model: str
    input_mtok: Decimal
    output_mtok: Decimal
    cache_read_mtok: Decimal | None = None
    cache_write_mtok: Decimal | None = None
    cache_write_1h_mtok: Decimal | None = None


@dataclass(frozen=True)
class Config:
    """Resolved settings; build with :func:`load_config`."""

    db: str | None = None
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES
    price_overrides: dict[str, PriceOverride] = field(default_factory=dict)
    # [detectors.<name>] tables, as written; the detector registry validates them (it knows the keys).
    detectors: dict[str, dict[str, Any]] = field(default_factory=dict)
    # [budgets.*] and [[tasks]] for `tokaudit gate` / `tokaudit baseline save` (tokaudit.gate.budgets).
    budgets: BudgetSet = field(default_factory=BudgetSet)
    tasks: tuple[TaskRule, ...] = ()
    source: str = "defaults"


def find_config_file(explicit: str | os.PathLike[str] | None = None, cwd: Path | None = None) -> tuple[Path, bool] | None:
    """Return ``(path, is_pyproject)`` of the config file in effect, or None."""
    if explicit:
        path = Path(explicit)
        if not path.is_file():
            raise ConfigError(f"config file not found: {path}", hint="check the --config path or $TOKAUDIT_CONFIG")
        return path, path.name == "pyproject.toml"
    env = os.environ.get("TOKAUDIT_CONFIG")
    if env:
        return find_config_file(env)
    cwd = cwd or Path.cwd()
    if (cwd / "tokaudit.toml").is_file():
        return cwd / "tokaudit.toml", False
    if (cwd / "pyproject.toml").is_file():
        return cwd / "pyproject.toml", True
    return None


def load_config(explicit: str | os.PathLike[str] | None = None, cwd: Path | None = None) -> Config:
    """Read and validate the config file in effect (see module docstring)."""
    found = find_config_file(explicit, cwd)
    if found is None:
        return Config()
    path, is_pyproject = found
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read config file {path}: {exc}") from exc
    if is_pyproject and "tokaudit" not in text:
        return Config()  # a project's own pyproject.toml, without a [tool.tokaudit] table: nothing to parse
    import tomllib  # only when there is a file to read (it adds to every command's start-up)

    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path} is not valid TOML: {exc}") from exc
    if is_pyproject:
        data = data.get("tool", {}).get("tokaudit")
        if data is None:
            return Config()
        where = f"{path} [tool.tokaudit]"
    else:
        where = str(path)
    return parse_config(data, where)


_TOP_LEVEL_KEYS = {"db", "max_line_bytes", "pricing", "detectors", "budgets", "tasks"}


def parse_config(data: dict[str, Any], where: str = "config") -> Config:
    """Validate a config mapping; errors name the bad key and value."""
    unknown = sorted(set(data) - _TOP_LEVEL_KEYS)
    if unknown:
        raise ConfigError(
            f"{where}: unknown key {unknown[0]!r}",
            hint=f"valid top-level keys are: {', '.join(sorted(_TOP_LEVEL_KEYS))}",
        )
    db = data.get("db")
    if db is not None and not isinstance(db, str):
        raise ConfigError(f"{where}: 'db' must be a path or URL string, got {db!r}")
    max_line = data.get("max_line_bytes", DEFAULT_MAX_LINE_BYTES)
    if not isinstance(max_line, int) or isinstance(max_line, bool) or max_line < 1024:
        raise ConfigError(
            f"{where}: 'max_line_bytes' must be an integer ≥ 1024, got {max_line!r}",
            hint="the default is 10485760 (10 MiB)",
        )
    return Config(
        db=db,
        max_line_bytes=max_line,
        price_overrides=_parse_pricing(data.get("pricing", {}), where),
        detectors=_parse_detectors(data.get("detectors", {}), where),
        budgets=parse_budgets(data.get("budgets", {}), where),
        tasks=parse_tasks(data.get("tasks", []), where),
        source=where,
    )


def _parse_detectors(detectors: Any, where: str) -> dict[str, dict[str, Any]]:
    if not isinstance(detectors, dict) or not all(isinstance(v, dict) for v in detectors.values()):
        raise ConfigError(f"{where}: 'detectors' must hold one table per detector, e.g. [detectors.same_tool_chain]")
    return {name: dict(table) for name, table in detectors.items()}


def _parse_pricing(pricing: Any, where: str) -> dict[str, PriceOverride]:
    if not isinstance(pricing, dict):
        raise ConfigError(f"{where}: 'pricing' must be a table, got {pricing!r}")
    unknown = sorted(set(pricing) - {"overrides"})
    if unknown:
        raise ConfigError(f"{where}: unknown key 'pricing.{unknown[0]}'", hint="only [pricing.overrides.\"MODEL\"] tables are read")
    overrides = pricing.get("overrides", {})
    if not isinstance(overrides, dict):
        raise ConfigError(f"{where}: 'pricing.overrides' must be a table of tables keyed by model id")
    result = {}
    for model, prices in overrides.items():
        key = f"pricing.overrides.{model!r}"
        if not isinstance(prices, dict):
            raise ConfigError(f"{where}: '{key}' must be a table of prices, got {prices!r}")
        bad = sorted(set(prices) - set(PRICE_FIELDS))
        if bad:
            raise ConfigError(f"{where}: unknown key '{key}.{bad[0]}'", hint=f"price keys are: {', '.join(PRICE_FIELDS)}")
        for required in ("input_mtok", "output_mtok"):
            if required not in prices:
                raise ConfigError(f"{where}: '{key}' needs '{required}' (USD per million tokens)")
        values = {name: _price(prices[name], f"{key}.{name}", where) for name in prices}
        result[model] = PriceOverride(model=model, **values)
    return result


def _price(value: Any, key: str, where: str) -> Decimal:
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise ConfigError(f"{where}: '{key}' must be a number (USD per million tokens), got {value!r}")
    try:
        price = Decimal(str(value))
    except InvalidOperation as exc:
        raise ConfigError(f"{where}: '{key}' must be a number (USD per million tokens), got {value!r}") from exc
    if not price.is_finite() or price < 0:
        raise ConfigError(f"{where}: '{key}' must be a non-negative number, got {value!r}")
    return price


def resolve_db(option: str | None, config: Config) -> str:
    """The database path or URL in effect: ``--db``, then ``$TOKAUDIT_DB``, then config, then the default."""
    return option or os.environ.get("TOKAUDIT_DB") or config.db or DEFAULT_DB
