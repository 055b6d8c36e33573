"""The one path from a request's run document to the core's diagnosis (API and page alike)."""

from __future__ import annotations

import logging
from typing import Any

from estimator.errors import ScenarioError
from estimator.jsonio import to_jsonable
from estimator.plan.diagnose import diagnose, run_document
from estimator.plan.work_budget import check_work_budget
from reports.services import books_for, resolve_book

logger = logging.getLogger(__name__)


def run_diagnosis(*, data: Any, user: Any) -> dict[str, Any]:
    """The core's diagnosis of `data` (a scenario with cluster.cards plus `measured`), as strict JSON.
    A price book the run names is resolved among the user's teams' books, as for an estimate.
    ScenarioError for input the core refuses; any other failure of the core is logged and reported
    as a ScenarioError, so no body gives a 500."""
    if not isinstance(data, dict):
        raise ScenarioError("the run must be a JSON object", "")
    _version, document = resolve_book(user, data)
    books = books_for(data, document)
    try:
        check_work_budget(run_document(data), books)  # estimator.limits: refused before the search runs
        return to_jsonable(diagnose(data, books))
    except ScenarioError:
        raise
    except RecursionError:
        raise ScenarioError("the run is nested too deeply") from None
    except Exception as exc:  # a bug in the core must not become a 500 for the client
        logger.exception("the estimator failed on a run it accepted")
        raise ScenarioError(
            f"the estimator could not diagnose this run ({type(exc).__name__}); please report it with the run"
        ) from exc
