"""plan(scenario) -> the contract's result: composes model, compute, layout, network, storage,
power, cost, uncertainty, serving and advice (docs/architecture.md#data-flow).

The order matters: the cluster size decides the fabric, the fabric's cross-leaf bandwidth feeds
the layout's data-parallel time, the layout predicts the MFU when the user gave none, and the MFU
(given or predicted) decides time, and from it power and cost. When only a deadline is given and
no MFU, cards and predicted MFU are iterated to a fixed point.

The steps live by concern: the layout problem at a size (plan.problem), sizing for a deadline
(plan.deadline), choosing the cluster (plan.choose), rolling it up with its goodput and what the
budget buys (plan.sizing), assembling the sections (plan.sections). Their public names are
importable from here too, as the adapters and the sweeps have always imported them.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from estimator import ENGINE_VERSION, catalog
from estimator.contract.resolve import Resolved, normalized, resolve
from estimator.contract.scenario import validate_shape
from estimator.model.compute import MFU_PLAUSIBLE_MAX as MAX_PLAUSIBLE_MFU
from estimator.model.compute import MFU_PLAUSIBLE_MIN as MIN_PLAUSIBLE_MFU
from estimator.money.pricing import model_flops
from estimator.plan import goodput
from estimator.plan.choose import choose_cluster
from estimator.plan.deadline import (
    MAX_SIZING_EVALS,
    SIZING_BLOCK,
    SizeMemo,
    candidate_sizes,
    size_for_deadline,
    smallest_fitting,
)
from estimator.plan.problem import (
    cards_multiple,
    fabric_for,
    layout_problem,
    problem_at,
    resolved_stack,
    scaleup_domain,
)
from estimator.plan.result import Plan, Result
from estimator.plan.sections import assemble
from estimator.plan.serialise import to_json_dict
from estimator.plan.sizing import budget_affords, goodput_of, size_plan

if TYPE_CHECKING:  # annotations only: the book's pydantic models load where a book is parsed
    from estimator.contract.price_book import PriceBook

__all__ = [
    "MAX_PLAUSIBLE_MFU",
    "MAX_SIZING_EVALS",
    "MIN_PLAUSIBLE_MFU",
    "SIZING_BLOCK",
    "SizeMemo",
    "budget_affords",
    "build_result",
    "candidate_sizes",
    "cards_multiple",
    "choose_cluster",
    "estimate",
    "fabric_for",
    "goodput",
    "goodput_of",
    "layout_problem",
    "plan",
    "problem_at",
    "resolved_stack",
    "scaleup_domain",
    "size_for_deadline",
    "size_plan",
    "smallest_fitting",
]


def estimate(data: Any, books: Mapping[str, PriceBook] | None = None) -> dict[str, Any]:
    """Validate a scenario dict and plan it: {scenario (normalized), result, engine_version, catalog_version},
    the contract's JSON of plan() (plan.serialise.to_json_dict).
    `books`: price books by reference, for a scenario whose `cost.price_book` names one.

    Raises ScenarioError (field path + sentence) for anything wrong with the input.
    """
    return to_json_dict(plan(data, books))


def plan(data: Any, books: Mapping[str, PriceBook] | None = None) -> Plan:
    """Validate a scenario dict and plan it: the typed plan (estimator.plan.result.Plan).
    Raises ScenarioError as estimate() does."""
    scenario = validate_shape(data)
    resolved = resolve(scenario, books)
    result = build_result(resolved)
    return Plan(
        scenario=normalized(resolved),
        result=result,
        engine_version=ENGINE_VERSION,
        catalog_version=catalog.CATALOG_VERSION,
    )


def build_result(r: Resolved) -> Result:
    """The result of the contract (docs/architecture.md#the-result) for a resolved scenario.

    With calibration.pilot (estimator.plan.pilot) the plan uses the pilot's fitted factors and keeps
    the cluster it would have chosen before, for the report's before/after."""
    fit = None
    if r.scenario.calibration is not None:  # imported here: a plan without a pilot never needs them
        from estimator.plan.pilot import calibrated, fit_pilot
        from estimator.plan.pilot_section import section

        fit = fit_pilot(r, problem_at)
    before = None
    if fit is not None:
        flops = model_flops(r)
        before = choose_cluster(
            r, flops["training_flop"], r.accelerator.peak_flops(r.scenario.training.precision)
        )
        r = calibrated(r, fit)
    z = size_plan(r)
    problem = layout_problem(r, z.choice.cards, z.choice.fabric)
    good = goodput_of(r, z)
    result = assemble(r, z, problem, good)
    if result.budget is not None:
        result = dataclasses.replace(
            result, budget=dataclasses.replace(result.budget, affords=budget_affords(r, z))
        )
    shown = z.choice.layouts.best or z.choice.layouts.closest  # the layout the result's parallelism shows
    if fit is not None and before is not None and shown is not None:
        first = before.layouts.best or before.layouts.closest
        calibration = section(fit, r, (first, before.cards), (shown, z.choice.cards))
        result = dataclasses.replace(result, calibration=calibration)
    return result
