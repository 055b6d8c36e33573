"""Assemble the contract's result (estimator.plan.result.Result; docs/architecture.md#the-result)
from the pieces plan.compose computed: model and compute (sections.compute), parallelism, memory
and layout (sections.layout), network, storage, power and cost (their stages' own types),
uncertainty (sections.risk), the planes, the stack's effect, goodput, budget and serving, advice and
the starting configuration (which read the contract's dicts, plan.serialise.result_dict), warnings
(sections.warnings) and the assumptions behind them (sections.assumptions)."""

from __future__ import annotations

import dataclasses
from typing import Any

from estimator.cluster.supernode import planes_section
from estimator.contract.resolve import Resolved
from estimator.layout.search import LayoutProblem
from estimator.plan.advice import advise
from estimator.plan.chosen import Sized
from estimator.plan.fewer_cards import fewer_cards_faster, with_planned_batch
from estimator.plan.goodput_section import advice as goodput_advice
from estimator.plan.goodput_section import assumptions as goodput_assumptions
from estimator.plan.goodput_section import count_shape
from estimator.plan.inference import Deployment, Serving
from estimator.plan.inference import serving as size_serving
from estimator.plan.result import Assumption, CostSection, Result
from estimator.plan.result_goodput import FailureAssumption, GoodputSection
from estimator.plan.sections.assumptions import assumptions
from estimator.plan.sections.compute import compute_section, model_section, with_deadline_risk
from estimator.plan.sections.layout import layout_sections
from estimator.plan.sections.risk import uncertainty_section
from estimator.plan.sections.warnings import budget_of, budget_section, warnings
from estimator.plan.serialise import encode, result_dict
from estimator.plan.stack_sensitivity import stack_section
from estimator.plan.starting_config import starting_configuration

__all__ = ["assemble"]


def assemble(r: Resolved, z: Sized, problem: LayoutProblem, goodput: GoodputSection | None = None) -> Result:
    """The result for the plan's choices `z` (plan.sizing.size_plan); `problem` is the layout
    search's input at the chosen cards and fabric (for the ZeRO-2 what-if, the stack and the planes),
    `goodput` plan.goodput's section (the deadline is met or missed with failures counted). The
    budget's `affords` is left None for plan.compose to fill in."""
    choice, roll = z.choice, z.roll
    good_days = goodput.wall_clock_days if goodput is not None else None
    compute = compute_section(r, z.flops, z.peak, choice, roll, good_days)
    uncertainty = uncertainty_section(
        r, z.flops["training_flop"], z.peak, choice, roll, z.prices, problem.stack
    )
    shape = None  # the interruption rate's Gamma shape, when failures are counted
    if goodput is not None and goodput.failures_counted:
        shape = count_shape(r, goodput.interruptions_by_cause)
    confidence = r.scenario.cluster.deadline_confidence
    compute = with_deadline_risk(compute, uncertainty, goodput, shape, confidence)
    parallelism, memory, layout = layout_sections(r, choice, problem)
    cost = CostSection(cost=roll["_cost"], budget_in_currency=budget_of(r))
    result = Result(
        model=model_section(r, z.flops),
        compute=compute,
        parallelism=parallelism,
        memory=memory,
        layout=layout,
        network=choice.fabric,
        storage=z.storage,
        power=roll["_power"],
        cost=cost,
        uncertainty=uncertainty,
        # both planes: the scale-up plane of each supernode and the scale-out fabric between them
        scaleup=planes_section(r, choice.fabric, choice.layouts, roll, problem),
        stack=stack_section(
            problem,
            choice.layouts.best,
            compute.wall_clock_days,
            r.accelerator.vendor,
            problem.stack.id,
            not r.scenario.training.stack,
        ),
        goodput=goodput,
        budget=budget_section(r, cost),
        serving=_serving(r, z.peak),
        advice=(),
        starting_configuration=(),
        warnings=(),
        assumptions=(),
    )
    return _advised(r, result, z, problem, goodput)


def _advised(
    r: Resolved, result: Result, z: Sized, problem: LayoutProblem, goodput: GoodputSection | None
) -> Result:
    """The result with its advice and starting configuration (plan.advice and plan.starting_config
    read the contract's dicts of the sections so far), warnings and assumptions."""
    scenario_dict = r.scenario.normalized()
    scenario_dict["hardware"]["cards_per_node"] = r.cards_per_node
    sections = _without_trailing(result_dict(result))
    items = with_planned_batch(r, tuple(advise(scenario_dict, sections)))
    items += tuple(goodput_advice(goodput, r.scenario.cost.currency)) if goodput is not None else ()
    fewer = fewer_cards_faster(r, sections)
    items += (fewer,) if fewer is not None else ()
    sections["advice"] = encode(items)
    start = starting_configuration(scenario_dict, sections)
    rows: list[Assumption | FailureAssumption] = list(
        assumptions(r, z.choice, z.equipment, z.prices, problem.stack)
    )
    rows += goodput_assumptions(r, goodput) if goodput is not None else []
    good_days = goodput.wall_clock_days if goodput is not None else None
    return dataclasses.replace(
        result,
        advice=items,
        starting_configuration=tuple(start),
        warnings=tuple(warnings(r, z.choice, result.compute, result.cost, items, good_days)),
        assumptions=tuple(rows),
    )


def _without_trailing(sections: dict[str, Any]) -> dict[str, Any]:
    """The sections before advice (what plan.advice reads): without the empty trailing lists and the
    budget's `affords`, not yet known."""
    for key in ("advice", "starting_configuration", "warnings", "assumptions"):
        sections.pop(key)
    if "budget" in sections:
        sections["budget"].pop("affords")
    return sections


def _serving(r: Resolved, peak: float) -> Serving | None:
    """result.serving: the scenario's serving deployment sized on the same accelerator (plan.inference)."""
    sv = r.scenario.serving
    if sv is None:
        return None
    return size_serving(
        r.arch,
        Deployment(
            sv.cards or r.cards_per_node, sv.context_len, sv.concurrency, sv.kv_dtype, sv.weights_dtype
        ),
        params_total=r.counts.total,
        params_active=r.counts.active,
        hbm_bytes_per_card=r.accelerator.hbm_bytes,
        hbm_bandwidth_bytes_per_s=r.accelerator.hbm_bandwidth_bytes_per_s,
        peak_flops=peak,
    )
