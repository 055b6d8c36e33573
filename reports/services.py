"""Writes and computations on estimates. Views and API call these; these call the core."""

from __future__ import annotations

import logging
from typing import Any

from django.db import transaction

from estimator import ENGINE_VERSION, catalog
from estimator.errors import ScenarioError
from estimator.jsonio import to_jsonable
from estimator.plan import estimate as core_estimate
from estimator.work_budget import check_work_budget

from . import summary
from .models import Estimate

logger = logging.getLogger(__name__)


def run_estimate(data: Any) -> dict:
    """The core's answer for one scenario dict, as strict JSON.

    Raises ScenarioError for input the core rejects. Any other failure of the core on a client's
    input is logged as a bug and reported as a ScenarioError too: no body a client sends gives a 500.
    """
    try:
        check_work_budget(data)  # estimator.limits: an over-budget search is refused before it runs
        out = core_estimate(data)
    except ScenarioError:
        raise
    except RecursionError:
        raise ScenarioError("the scenario is nested too deeply") from None
    except Exception as exc:  # a bug in the core must not become a 500 for the client
        logger.exception("the estimator failed on a scenario it accepted")
        raise ScenarioError(
            f"the estimator could not plan this scenario ({type(exc).__name__}); please report it with the scenario"
        ) from exc
    return to_jsonable(out)


@transaction.atomic
def create_estimate(*, data: Any, owner=None) -> Estimate:
    """Plan `data` and store the scenario as submitted, the normalized scenario, the result and versions."""
    out = run_estimate(data)
    scenario = out["scenario"]
    return Estimate.objects.create(
        owner=owner if owner is not None and owner.is_authenticated else None,
        name=(scenario.get("name") or "")[:200],
        input=to_jsonable(data),
        scenario=scenario,
        result=out["result"],
        engine_version=str(out.get("engine_version", "")),
        catalog_version=str(out.get("catalog_version", "")),
    )


def delete_estimate(estimate: Estimate) -> None:
    estimate.delete()


def engine_versions() -> dict[str, str]:
    """Today's engine and catalog versions (what a recompute runs; CHANGELOG.md explains each)."""
    return {"engine_version": ENGINE_VERSION, "catalog_version": catalog.CATALOG_VERSION}


def recompute(estimate: Estimate) -> dict:
    """Plan the estimate's input again with today's engine and catalog (nothing is stored) and say
    what changed. Returns {"scenario", "result", "engine_version", "catalog_version", "rows", "error"}."""
    try:
        out = run_estimate(estimate.input)
    except ScenarioError as exc:
        # Today's catalog may no longer know an id the stored scenario used.
        return {"error": exc.to_dict()["errors"], "rows": [], **engine_versions()}
    return {**out, "rows": summary.diff(estimate.result, out["result"]), "error": None}
