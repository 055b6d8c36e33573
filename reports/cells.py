"""Spreadsheet cells that cannot run as formulas (OWASP "CSV Injection" rule).

A text cell that starts with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return is read as a
formula by Excel, LibreOffice and Google Sheets. OWASP's rule: prefix such a cell with a single
quote, so the spreadsheet shows it as text. Numbers stay numbers (a negative number is data, not a
formula). Every CSV and .xlsx writer of the product passes its cells through ``neutralize``.
"""

from __future__ import annotations

from typing import Any

FORMULA_TRIGGERS = ("=", "+", "-", "@", "\t", "\r")


def neutralize(value: Any) -> Any:
    """The cell as written to a spreadsheet: text that could start a formula gets a leading quote."""
    if isinstance(value, str) and value.startswith(FORMULA_TRIGGERS):
        return "'" + value
    return value


def neutralize_row(row: list[Any] | tuple[Any, ...]) -> list[Any]:
    """``neutralize`` applied to each cell of a row."""
    return [neutralize(v) for v in row]
