"""How values read in every output: measured numbers (terminal tables, HTML, Markdown) and spreadsheet cells."""

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


# A cell starting with one of these is a formula to a spreadsheet (CSV injection): such cells get a quote.
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def csv_cell(value: Any) -> Any:
    r"""A value as a CSV cell a spreadsheet shows as text: formulas defused, line breaks escaped.

    Examples:
        >>> csv_cell("=SUM(A1:A9)"), csv_cell("innocent\rEVIL"), csv_cell(-3), csv_cell(None)
        ("'=SUM(A1:A9)", 'innocent\\rEVIL', -3, '')
    """
    if value is None:
        return ""
    if not isinstance(value, str):
        return value
    value = value.replace("\r", "\\r").replace("\n", "\\n")
    return "'" + value if value.startswith(FORMULA_START) else value
