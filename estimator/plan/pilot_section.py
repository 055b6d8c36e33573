"""The result's `calibration` section (estimator.plan.result_calibration; docs/calibration.md): the
pilot as measured and as the model predicts it, the fitted factors, the plan before and after
calibration, what differs and grows from pilot to target, and the band around the calibrated plan."""

from __future__ import annotations

import math

from estimator.contract.resolve import Resolved
from estimator.layout.search import LayoutEval
from estimator.layout.steptime import BREAKDOWN_KEYS
from estimator.plan.calibration import comm_wait_share
from estimator.plan.pilot import PilotFit
from estimator.plan.result_calibration import (
    CalibrationBand,
    CalibrationFactor,
    CalibrationSection,
    Change,
    Extrapolation,
    GrowingTerm,
    PilotSummary,
    PlanFigures,
)

# The band around the calibrated prediction (docs/calibration.md#band): a relative half-width of
# BAND_BASE (the pilot's own run-to-run spread: published figures of one recipe across container
# releases differ by 1-3 %, docs/sources.md#megatron-bridge) plus BAND_PER_DOUBLING per doubling (or
# halving) of cards, of active parameters and of sequence length from pilot to target,
# BAND_PER_MECHANISM per mechanism the target uses that the pilot did not exercise (pipeline
# bubble, cross-node traffic, TP, EP, CP, recomputation), and
# BAND_ACROSS_CHIPS when the factor was measured on another chip; at most BAND_MAX.
BAND_BASE = 0.03
BAND_PER_DOUBLING = 0.02
BAND_PER_MECHANISM = 0.05
BAND_ACROSS_CHIPS = 0.10
BAND_MAX = 0.5
GROWTH_MIN_SHARE = 0.01  # a term "grows" when its share of the step rises by at least 1 point


def _nodes(cards: int, per_node: int) -> int:
    return -(-cards // per_node)


def changes(fit: PilotFit, target: LayoutEval, r: Resolved, cards: int) -> list[Change]:
    """What differs from pilot to target: {code, pilot, target} for the cards, the active parameters,
    the DP size, the nodes (cross-node traffic) and the TP, PP (bubble), EP and CP degrees."""
    pilot, rp = fit.layout, fit.resolved
    items = [
        ("cards", fit.resolved.scenario.cluster.cards, cards),
        ("active-params", rp.counts.active, r.counts.active),
        ("dp-size", pilot.dp, target.dp),
        (
            "nodes",
            _nodes(pilot.dp * pilot.tp * pilot.pp * pilot.cp, rp.cards_per_node),
            _nodes(cards, r.cards_per_node),
        ),
        ("tensor-parallel", pilot.tp, target.tp),
        ("pipeline", pilot.pp, target.pp),
        ("expert-parallel", pilot.ep, target.ep),
        ("context-parallel", pilot.cp, target.cp),
    ]
    return [Change(code=code, pilot_value=a, target_value=b) for code, a, b in items if a != b]


def growing_terms(pilot: LayoutEval, target: LayoutEval) -> list[GrowingTerm]:
    """Breakdown terms whose share of the step grows from the calibrated pilot to the target by at
    least GROWTH_MIN_SHARE: {term, pilot_share, target_share}, largest growth first."""
    out = []
    for key in BREAKDOWN_KEYS:
        a = pilot.breakdown_s[key] / pilot.step_time_s
        b = target.breakdown_s[key] / target.step_time_s
        if b - a >= GROWTH_MIN_SHARE:
            out.append(GrowingTerm(term=key, pilot_share=a, target_share=b))
    return sorted(out, key=lambda t: t.pilot_share - t.target_share)


def _new_mechanisms(pilot: LayoutEval, target: LayoutEval, pilot_nodes: int, target_nodes: int) -> list[str]:
    """Mechanisms the target runs that the pilot did not exercise (so its factor says nothing of them)."""
    out = []
    for name, a, b in (("tensor-parallel", pilot.tp, target.tp), ("pipeline", pilot.pp, target.pp)):
        if a == 1 < b:
            out.append(name)
    for name, a, b in (("expert-parallel", pilot.ep, target.ep), ("context-parallel", pilot.cp, target.cp)):
        if a == 1 < b:
            out.append(name)
    if pilot_nodes == 1 < target_nodes:
        out.append("cross-node")
    if pilot.recompute == "none" != target.recompute:
        out.append("recompute")
    return out


def band_half_width(fit: PilotFit, target: LayoutEval, r: Resolved, cards: int) -> tuple[float, list[str]]:
    """The band's relative half-width (docs/calibration.md#band) and the new mechanisms it counts."""
    rp = fit.resolved
    pilot_cards = int(rp.scenario.cluster.cards or 1)
    doublings = (
        abs(math.log2(cards / pilot_cards))
        + abs(math.log2(r.counts.active / rp.counts.active))
        + abs(math.log2(r.seq_len / rp.seq_len))
    )
    new = _new_mechanisms(
        fit.layout, target, _nodes(pilot_cards, rp.cards_per_node), _nodes(cards, r.cards_per_node)
    )
    width = BAND_BASE + BAND_PER_DOUBLING * doublings + BAND_PER_MECHANISM * len(new)
    if fit.carried_across_chips:
        width += BAND_ACROSS_CHIPS
    return min(width, BAND_MAX), new


def _plan_figures(best: LayoutEval | None, cards: int, tokens: float) -> PlanFigures | None:
    """Cards, tokens/s, step time, MFU and compute days (tokens / tokens/s) of one plan."""
    if best is None:
        return None
    return PlanFigures(
        cards=cards,
        tokens_per_s=best.tokens_per_s,
        tokens_per_s_per_card=best.tokens_per_s / cards,
        step_time_s=best.step_time_s,
        predicted_mfu=best.predicted_mfu,
        training_days=tokens / best.tokens_per_s / 86400.0,
    )


def _pilot_summary(fit: PilotFit) -> PilotSummary:
    """The pilot as measured and as the model predicts it, uncalibrated and calibrated."""
    rp, pilot = fit.resolved, fit.layout
    return PilotSummary(
        model=rp.model_name,
        accelerator=rp.accelerator.id,
        cards=rp.scenario.cluster.cards,
        layout={k: getattr(pilot, k) for k in ("tp", "pp", "dp", "ep", "cp", "micro_batch_size")},
        measured_step_time_s=fit.measured.step_time_s,
        measured_tokens_per_s_per_card=fit.measured_tokens_per_s_per_card,
        predicted_tokens_per_s_per_card=pilot.tokens_per_s / int(rp.scenario.cluster.cards or 1),
        measured_comm_wait_share=fit.measured.comm_wait_share,
        predicted_comm_wait_share=comm_wait_share(pilot),
        calibrated_comm_wait_share=comm_wait_share(fit.calibrated),
    )


def _factors(fit: PilotFit) -> tuple[CalibrationFactor, ...]:
    """The compute factor, and the communication factor where the pilot measured its wait."""
    compute = CalibrationFactor(
        name="compute",
        value=fit.factors.compute,
        scales="every compute rate of the step: GEMMs, attention, memory-bound kernels, optimizer",
    )
    if not fit.factors.comm_fitted:
        return (compute,)
    comm = CalibrationFactor(
        name="communication",
        value=fit.factors.comm,
        scales="the achieved bandwidth of every collective (TP, CP, EP, PP, DP)",
    )
    return (compute, comm)


BAND_RULE = (
    "3% + 2% per doubling of cards, active parameters and sequence length + 5% per "
    "mechanism the pilot did not exercise + 10% across chips, at most 50% (docs/calibration.md#band)"
)


def _band(width: float, tokens_per_s: float, tokens: float) -> CalibrationBand:
    """tokens/s and training days at +-`width` (a fraction) of the calibrated plan's tokens/s."""
    return CalibrationBand(
        half_width_fraction=width,
        low_tokens_per_s=tokens_per_s * (1.0 - width),
        high_tokens_per_s=tokens_per_s * (1.0 + width),
        low_training_days=tokens / (tokens_per_s * (1.0 + width)) / 86400.0,
        high_training_days=tokens / (tokens_per_s * (1.0 - width)) / 86400.0,
        rule=BAND_RULE,
    )


def section(
    fit: PilotFit,
    r: Resolved,
    before: tuple[LayoutEval | None, int],
    after: tuple[LayoutEval, int],
) -> CalibrationSection:
    """The result's `calibration` section: the pilot, each factor with its value and what it scales,
    the plan before and after calibration, what the extrapolation grows and the band."""
    target, cards = after
    tokens = r.scenario.training.tokens
    width, new = band_half_width(fit, target, r, cards)
    return CalibrationSection(
        pilot=_pilot_summary(fit),
        factors=_factors(fit),
        carried_across_chips=fit.carried_across_chips,
        target_accelerator=r.accelerator.id,
        before=_plan_figures(before[0], before[1], tokens),
        after=_plan_figures(target, cards, tokens),
        extrapolation=Extrapolation(
            changes=tuple(changes(fit, target, r, cards)),
            growing_terms=tuple(growing_terms(fit.calibrated, target)),
            new_mechanisms=tuple(new),
        ),
        band=_band(width, target.tokens_per_s, tokens),
    )
