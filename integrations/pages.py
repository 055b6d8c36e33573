"""The comparison page of a batch: every planned quote side by side (the rows of the compare page,
reports.compare), the scenarios that were refused, how many are still being planned, and the
Excel download (reports.xlsx). Public through the batch's unguessable token, like a report's
share link."""

from __future__ import annotations

from django.http import Http404, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from reports import compare, xlsx
from reports.pages import XLSX

from . import batches
from .models import Batch


def _batch_or_404(token: str) -> Batch:
    try:
        return batches.shared_batch(token)
    except Batch.DoesNotExist:
        raise Http404 from None


@require_GET
def batch(request, token: str):
    found = _batch_or_404(token)
    items = batches.items_of(found)
    estimates = [item.estimate for item in items if item.estimate is not None]
    reports = [{"scenario": e.scenario, "result": e.result} for e in estimates]
    response = render(
        request,
        "integrations/batch.html",
        {
            "batch": found,
            "estimates": estimates,
            "rows": compare.rows(reports) if estimates else [],
            "refused": [item for item in items if item.estimate is None and item.status != batches.PENDING],
            "pending": sum(1 for item in items if item.status == batches.PENDING),
            "mixed_currencies": len(set(compare.currencies(reports))) > 1,
        },
    )
    response["X-Robots-Tag"] = "noindex"
    return response


@require_GET
def batch_xlsx(request, token: str):
    """One column per planned quote, a row per compared figure (reports.xlsx.comparison_workbook)."""
    estimates = batches.estimates_of(_batch_or_404(token))
    if not estimates:
        raise Http404
    response = HttpResponse(xlsx.comparison_workbook(estimates), content_type=XLSX)
    response["Content-Disposition"] = 'attachment; filename="clusterplan-batch-comparison.xlsx"'
    return response
