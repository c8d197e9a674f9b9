"""How measured values read in every output (terminal tables, HTML, Markdown)."""

from __future__ import annotations

from typing import Any


def short_number(value: Any) -> str:
    """A measured value (stored as text or a number) with four significant digits; whole numbers in full.

    Examples:
        >>> short_number("19.609418282548475"), short_number(7.9875400729424735), short_number("12.0")
        ('19.61', '7.988', '12')
        >>> short_number(123456.0), short_number(None), short_number("n/a")
        ('123,456', '', 'n/a')
    """
    try:
        number = float(value)
    except (TypeError, ValueError):
        return "" if value is None else str(value)
    return f"{number:,.0f}" if number.is_integer() else f"{number:.4g}"
