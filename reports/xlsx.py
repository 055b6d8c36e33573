"""Excel (.xlsx) exports of a report and of a comparison, written with openpyxl. Numbers stay numbers
(with a number format), text goes through reports.cells.neutralize (no formulas from user text)."""

from __future__ import annotations

import io
from numbers import Real
from typing import Any

from django.utils.translation import gettext as _
from openpyxl import Workbook
from openpyxl.styles import Font, PatternFill
from openpyxl.worksheet.worksheet import Worksheet

from . import compare, money, summary, working
from .cells import neutralize

BOLD = Font(bold=True)
CHANGED = PatternFill("solid", fgColor="FFF2CC")
# Number formats by kind (reports.compare ROWS): the raw value stays in the cell, shown readably
NUMBER_FORMATS = {"percent": "0.0%", "money": "#,##0", "count": "#,##0", "big": "#,##0", "days": "0.00"}


def _cell(value: Any) -> Any:
    if isinstance(value, bool) or value is None:
        return neutralize("" if value is None else str(value))
    if isinstance(value, Real):
        return float(value) if not float(value).is_integer() else int(float(value))
    if isinstance(value, list | tuple | dict):
        return neutralize(str(value))
    return neutralize(str(value))


def _sheet(
    wb: Workbook, title: str, header: list[str], rows: list[list[Any]], first: bool = False
) -> Worksheet:
    ws = wb.active if first else wb.create_sheet()
    if not isinstance(ws, Worksheet):
        raise TypeError("a new workbook has a worksheet")  # never reached
    ws.title = title[:31]
    ws.append([neutralize(h) for h in header])
    for c in ws[1]:
        c.font = BOLD
    for row in rows:
        ws.append([_cell(v) for v in row])
    for col, width in zip("ABCDEFG", (34, 22, 22, 22, 22, 22, 22), strict=False):
        ws.column_dimensions[col].width = width
    return ws


def _bytes(wb: Workbook) -> bytes:
    buf = io.BytesIO()
    wb.save(buf)
    return buf.getvalue()


def report_workbook(estimate: Any) -> bytes:
    """Sheets: Summary (headline numbers, raw values), Working (labelled tables as shown), Scenario
    and Result (every field by dotted path, the same numbers as the JSON download)."""
    scenario, result = estimate.scenario, estimate.result
    cur = summary.currency(result)
    wb = Workbook()
    head = summary.headline(scenario, result)
    _sheet(
        wb,
        _("Summary"),
        [_("Item"), _("Value"), _("Unit"), _("As shown"), _("Why")],
        [
            [
                h["label"],
                h["value"],
                cur if h["kind"] == "money" else compare.UNITS.get(h["kind"], ""),
                h["text"],
                h["why"],
            ]
            for h in head
        ]
        + [[_("Currency"), cur, "", cur, ""], [_("Name"), estimate.name, "", "", ""]],
        first=True,
    )
    work = [[t["title"], label, text] for t in working.tables(result, cur) for label, text in t["rows"]]
    _sheet(wb, _("Working"), [_("Section"), _("Item"), _("Value")], work)
    _sheet(wb, _("Scenario"), [_("Field"), _("Value")], [[p, v] for p, v in summary.flatten(scenario)])
    _sheet(wb, _("Result"), [_("Field"), _("Value")], [[p, v] for p, v in summary.flatten(result)])
    return _bytes(wb)


def comparison_workbook(estimates: list[Any]) -> bytes:
    """One sheet: a row per compared figure, a column of raw values per report (changed rows shaded)."""
    reports = [{"scenario": e.scenario, "result": e.result} for e in estimates]
    wb = Workbook()
    # an unnamed report by its place, as the page heads it: never its share token (its read key)
    names = [e.name or _("Report %(n)s") % {"n": i} for i, e in enumerate(estimates, 1)]
    rows = compare.rows(reports)
    columns = [money.header(n, c) for n, c in zip(names, compare.currencies(reports), strict=True)]
    ws = _sheet(
        wb,
        _("Comparison"),
        [_("Item"), _("Unit"), *columns],  # each quote's amounts are in its own currency, named in its header
        [[r["label"], r["unit"], *r["raw"]] for r in rows]
        + [[_("Currency"), "", *compare.currencies(reports)]],
        first=True,
    )
    for i, r in enumerate(rows, start=2):
        for c in ws[i][2:]:
            c.number_format = NUMBER_FORMATS.get(r["kind"], "General")
        if r["differs"]:
            for c in ws[i]:
                c.fill = CHANGED
    return _bytes(wb)
