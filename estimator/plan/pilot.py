"""The scenario's `calibration.pilot`: resolve the pilot run, refuse an implausible one, fit its
factors (estimator.plan.calibration); estimator.plan.pilot_section describes what the
extrapolation to the target grows (the result's `calibration`).

The pilot is the scenario with its own cards, batch, sequence length, layout (searched when
absent) and, where named, its own model, hardware and stack; every error it raises names its path
under `calibration.pilot`. The layout problem of a resolved scenario is built by the caller
(`problem_for`, estimator.plan.compose), so this module sits below compose without a cycle.
docs/calibration.md states the rules (guard rails, band)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from estimator.contract.resolve import Resolved, resolve
from estimator.contract.scenario import Pilot, Scenario, validate_shape
from estimator.errors import FieldError, ScenarioError
from estimator.layout.search import LayoutEval, LayoutProblem, search
from estimator.plan.calibration import (
    Factors,
    Measured,
    check_plausible,
    evaluate_pinned,
    fit_factors,
    layout_fixed,
)
from estimator.plan.peak_step import step_time_at_peak_s

ProblemFor = Callable[[Resolved, int], LayoutProblem]
PILOT = "calibration.pilot"
# where an error of the pilot's own scenario belongs under calibration.pilot
_PATHS = (
    ("training.seq_len", "seq_len"),
    ("training.global_batch_tokens", "global_batch_tokens"),
    ("training.stack", "stack"),
    ("cluster", "cards"),
    ("parallelism", "parallelism"),
    ("model", "model"),
    ("hardware", "hardware"),
)
# the layout-against-cards refusals of the pilot's own scenario: its cards are calibration.pilot.cards
_CARDS_CODES = {
    "fixed-dp-cards": ("pilot-dp-cards", "must equal"),
    "fixed-layout-cards": ("pilot-layout-cards", "must divide"),
}


@dataclass(frozen=True)
class PilotFit:
    """The resolved pilot, its layout uncalibrated and calibrated, what it measured, the factors."""

    resolved: Resolved
    layout: LayoutEval
    calibrated: LayoutEval
    measured: Measured
    measured_tokens_per_s_per_card: float
    factors: Factors
    carried_across_chips: bool


def pilot_document(s: Scenario) -> dict[str, Any]:
    """The pilot as a scenario of its own: the target's training settings with the pilot's size,
    batch, layout and, where named, its model, hardware (then the server's own network) and stack."""
    assert s.calibration is not None
    p = s.calibration.pilot
    doc = s.normalized()
    for key in ("calibration", "serving", "efficiency", "cost", "uncertainty"):
        doc.pop(key, None)
    if p.model is not None:
        doc["model"] = p.model.model_dump(mode="json", exclude_none=True)
    if p.hardware is not None:
        doc["hardware"] = p.hardware.model_dump(mode="json", exclude_none=True)
        doc.pop("network")
    if p.stack is not None:
        doc["training"]["stack"] = p.stack
        doc["training"]["stack_overrides"] = {}
    doc["training"]["seq_len"] = p.seq_len
    doc["training"]["global_batch_tokens"] = p.global_batch_tokens
    doc["cluster"] = {"cards": p.cards}
    doc["parallelism"] = p.parallelism.fixed() if p.parallelism is not None else {}
    return doc


def _repath(exc: ScenarioError) -> ScenarioError:
    """The pilot scenario's errors with their paths under calibration.pilot (code + params kept, so
    the web layer still says them in the reader's language)."""
    out = []
    for e in exc.errors:
        if e.code in _CARDS_CODES:
            out.append(_cards_error(e))
            continue
        field = PILOT
        for prefix, target in _PATHS:
            if e.field == prefix or e.field.startswith(prefix + "."):
                rest = e.field[len(prefix) :] if target in ("parallelism", "model", "hardware") else ""
                field = f"{PILOT}.{target}{rest}"
                break
        out.append(dataclasses.replace(e, field=field))
    return ScenarioError(out)


def _cards_error(e: FieldError) -> FieldError:
    """A layout of the pilot that does not multiply to (or divide) the pilot's cards: said at
    calibration.pilot.cards, against those cards (not the target's cluster.cards)."""
    code, verb = _CARDS_CODES[e.code]
    p = e.params
    message = f"{p['names']} = {p['product']} {verb} {PILOT}.cards = {p['cards']}"
    return FieldError(f"{PILOT}.cards", message, code, dict(p))


def _measured(p: Pilot, problem: LayoutProblem) -> tuple[Measured, float, str]:
    """(Measured, tokens/s per card, the measurement's field path) of the pilot; a step holds
    global_batch_seqs · seq_len tokens (the batch the layout search plans)."""
    step_tokens = problem.global_batch_seqs * problem.seq_len
    if p.measured_step_time_s is not None:
        step = float(p.measured_step_time_s)
        path = f"{PILOT}.measured_step_time_s"
    else:
        assert p.measured_tokens_per_s_per_card is not None  # the contract requires one
        step = step_tokens / (float(p.measured_tokens_per_s_per_card) * problem.cards)
        path = f"{PILOT}.measured_tokens_per_s_per_card"
    return Measured(step, p.measured_comm_wait_share), step_tokens / step / problem.cards, path


def fit_pilot(r: Resolved, problem_for: ProblemFor) -> PilotFit:
    """Resolve the scenario's pilot, check it and fit its factors (ScenarioError with the path)."""
    s = r.scenario
    assert s.calibration is not None
    p = s.calibration.pilot
    if s.efficiency.mfu is not None:
        message = "give either efficiency.mfu or calibration.pilot: the pilot calibrates the predicted MFU"
        raise ScenarioError(FieldError("calibration", message, "pilot-with-given-mfu"))
    try:
        rp = resolve(validate_shape(pilot_document(s)), None)
        problem = problem_for(rp, p.cards)
    except ScenarioError as exc:
        raise _repath(exc) from None
    if rp.arch.is_moe != r.arch.is_moe:
        kinds = ("mixture-of-experts", "dense") if rp.arch.is_moe else ("dense", "mixture-of-experts")
        message = (
            f"the pilot is a {kinds[0]} model and the target a {kinds[1]} one: a factor measured on "
            "one does not carry to the other; run the pilot on a model of the target's kind"
        )
        code = "pilot-moe-target-dense" if rp.arch.is_moe else "pilot-dense-target-moe"
        raise ScenarioError(FieldError(f"{PILOT}.model", message, code))
    found = search(problem)
    # a measured layout ran, so it fitted: keep it where the (conservative) memory model disagrees
    layout = found.best or (found.closest if p.parallelism is not None else None)
    if layout is None:
        where = f"{PILOT}.parallelism" if p.parallelism is not None else f"{PILOT}.cards"
        message = "no layout of the pilot fits in the cards' memory; check the pilot's layout"
        raise ScenarioError(FieldError(where, message, "pilot-layout-does-not-fit"))
    measured, tokens_per_s, path = _measured(p, problem)
    predicted = layout.tokens_per_s / problem.cards
    check_plausible(tokens_per_s, predicted, step_time_at_peak_s(problem) / measured.step_time_s, path)
    factors = fit_factors(problem, layout, measured, path)
    calibrated = evaluate_pinned(dataclasses.replace(factors.applied(problem), fixed=layout_fixed(layout)))
    # another chip: another catalog entry, or an inline one with other peak or memory figures
    a, b = rp.accelerator, r.accelerator
    across = (a.id, a.peak_flops_bf16, a.hbm_bandwidth_bytes_per_s) != (
        b.id,
        b.peak_flops_bf16,
        b.hbm_bandwidth_bytes_per_s,
    )
    return PilotFit(rp, layout, calibrated, measured, tokens_per_s, factors, across)


def calibrated(r: Resolved, fit: PilotFit) -> Resolved:
    """The target scenario with the pilot's factors at the step-time model's hooks."""
    return dataclasses.replace(
        r, compute_factor=fit.factors.compute, comm_factor=fit.factors.comm, pilot_fit=fit
    )
