"""How values read in every output: measured numbers (terminal tables, HTML, Markdown), spreadsheet cells and
Markdown text from logs (report summaries, the CI step summary)."""

from __future__ import annotations

import html
import re
from typing import Any

from tokaudit.redact import printable


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
# (A leading tab or carriage return, the other known trigger, is shown as its escape before this test.)
FORMULA_START = ("=", "+", "-", "@")


def csv_cell(value: Any) -> Any:
    r"""A value as a CSV cell a spreadsheet shows as text: formulas defused, control characters (line
    breaks, terminal escapes) shown as escapes, so a row stays one line and a terminal shows it as text.

    Examples:
        >>> csv_cell("=SUM(A1:A9)"), csv_cell("innocent\rEVIL"), csv_cell("\x1b]0;x\x07"), csv_cell(-3), csv_cell(None)
        ("'=SUM(A1:A9)", 'innocent\\x0dEVIL', '\\x1b]0;x\\x07', -3, '')
    """
    if value is None:
        return ""
    if not isinstance(value, str):
        return value
    value = printable(value)
    return "'" + value if value.startswith(FORMULA_START) else value


# Markdown punctuation that can start emphasis, code, links, images or table cells inline; ":" so that
# a bare URL in a name is not auto-linked.
_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()!|~:])")


def md_text(value: Any, limit: int = 80) -> str:
    """Untrusted text made inert in Markdown: one line, ``& < >`` as entities, punctuation escaped.

    Examples:
        >>> print(md_text("<img src=x onerror=alert(1)> [x](http://e.vil) | a"))
        &lt;img src=x onerror=alert\\(1\\)&gt; \\[x\\]\\(http\\://e.vil\\) \\| a
        >>> print(md_text("red\x1b[31m text"))
        red\\\\x1b\\[31m text
    """
    text = printable(" ".join(("" if value is None else str(value)).split()))
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    text = html.escape(text, quote=False)
    # Escape Markdown punctuation, but not inside the entities just written.
    return _MD_SPECIAL.sub(r"\\\1", text)
