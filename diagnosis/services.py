"""The one path from a request's run document to the core's diagnosis (API and page alike)."""

from __future__ import annotations

from typing import Any

from estimator.errors import ScenarioError
from estimator.jsonio import to_jsonable
from estimator.plan.diagnose import diagnose, run_document
from estimator.plan.work_budget import check_work_budget
from reports.services import books_for, core_errors, resolve_book


def run_diagnosis(*, data: Any, user: Any) -> dict[str, Any]:
    """The core's diagnosis of `data` (a scenario with cluster.cards plus `measured`), as strict JSON.
    A price book the run names is resolved among the user's teams' books, as for an estimate.
    ScenarioError for input the core refuses (and for its bugs: reports.services.core_errors)."""
    if not isinstance(data, dict):
        raise ScenarioError("the run must be a JSON object", "")
    _version, document = resolve_book(user=user, data=data)
    books = books_for(data=data, document=document)
    with core_errors(what="run", verb="diagnose"):
        check_work_budget(run_document(data), books)  # estimator.limits: refused before the search runs
        out = diagnose(data, books)
    return to_jsonable(out)
