"""The chance a run misses its deadline, one rule for the plan's verdict and for the sizing:
compute.deadline_miss_probability of a plan (sections.compute.with_deadline_risk) and, with
cluster.deadline_confidence q, the deadline sizing's test of each size (ConfidenceRule: the chance
of missing at most 1 - q). The probability is money.budget's: the MFU ~ Triangular(low, mode, high)
(plan.mfu_range) and, with failures counted, the interruption count's negative binomial at each
MFU (deadline_miss_probability_with_failures); without failures the triangular CDF at the MFU the
deadline needs (deadline_miss_probability). Units: days, counts, shares of peak."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from estimator.cluster import reliability as rel
from estimator.contract.resolve import Resolved
from estimator.layout.search import LayoutEval
from estimator.model.compute import SECONDS_PER_DAY, cards_for_deadline
from estimator.money import budget as budget_rules
from estimator.plan import evidence
from estimator.plan.goodput import DeadlineMet, at_cards_of, settings
from estimator.plan.mfu_range import (
    Triangle,
    band_triangle,
    class_band,
    given_triangle,
    layout_band,
    widest_band,
)
from estimator.plan.problem import resolved_stack
from estimator.plan.uncertainty import triangle_from_quantiles

MISS_SLACK = 1e-9  # relative: a chance of missing equal to the allowed one to rounding meets it


@dataclass(frozen=True)
class Risk:
    """What a plan's chance of missing depends on besides its MFU range: `base_days` the computing,
    checkpoint stalls and planned stops (days, at the likely MFU), `unexpected` the mean count of
    unexpected interruptions, `per_days` the rework and restart each costs (days), `shape` the Gamma
    shape of the interruption rate; shape None: failures not counted, base_days the whole wall."""

    base_days: float
    unexpected: float = 0.0
    per_days: float = 0.0
    shape: float | None = None


def miss_probability(target_days: float, risk: Risk, mfu: Triangle) -> float:
    """P(the wall clock exceeds `target_days`) of a plan with `risk` whose MFU is triangular `mfu`
    (money.budget.deadline_miss_probability_with_failures, or deadline_miss_probability without
    failures)."""
    if risk.shape is None:
        return budget_rules.deadline_miss_probability(risk.base_days, target_days, *mfu)
    return budget_rules.deadline_miss_probability_with_failures(
        target_days, risk.base_days, risk.unexpected, risk.per_days, risk.shape, mfu
    )


def risks_at(g: dict[str, Any], counted: bool, counts: dict[str, float], scale_sd: float) -> list[Risk]:
    """The Risk of each size from plan.goodput.at_cards_of's arrays `g` at those sizes, as the goodput
    section states them (result.goodput; the shape as goodput_section.count_shape: reliability.
    rate_shape of the rates, `counts` the published counts behind them, `scale_sd` the relative sd
    of the vendor's scale)."""
    day = SECONDS_PER_DAY
    solve = np.broadcast_to(np.asarray(g["solve_s"], dtype=float), np.shape(g["wall_s"]))
    if not counted:
        return [Risk(base_days=float(x) / day) for x in solve.ravel()]
    base = (solve + g["checkpoints_s"] + g["planned_total_s"]) / day
    per = (g["rework_s"] + g["restart_s"]) / day
    shape = rel.rate_shape(g["rates"], counts, scale_sd)
    columns = np.broadcast_arrays(base, g["unexpected"], per, shape)
    return [
        Risk(float(b), float(u), float(p), float(k))
        for b, u, p, k in zip(*(c.ravel() for c in columns), strict=True)
    ]


class ConfidenceRule:
    """The deadline sizing's test with cluster.deadline_confidence q (plan.deadline.DeadlineRule):
    a size meets when its chance of missing the deadline is at most 1 - q. Called with the sizes'
    best layouts it decides (miss_probability with the MFU range of each layout, plan.mfu_range);
    without them it is the bound the scan starts and ends by: a size can meet only if it would at
    the highest MFU of the widest range any of its layouts can have (P(late) is the mean over MFUs of
    P(late | MFU), which falls as the MFU rises, so it is at least P(late | that MFU)). A size whose
    run never finishes (an infinite wall) never meets. `chunk`: sizes the scan judges at a time (the
    exact chance costs money.budget.MFU_STRATA evaluations a size)."""

    chunk = 4

    def __init__(self, r: Resolved, seconds: float, confidence: float, tokens: float | None = None):
        st = settings(r)
        self.r, self.target_days, self.allowed = r, seconds / SECONDS_PER_DAY, 1.0 - confidence
        self.at = at_cards_of(r, tokens, st, spread=False)
        self.counted, self.counts, self.scale_sd = st.on, st.counts, st.scale_rel_sd
        self.stack = resolved_stack(r)
        peak = r.accelerator.peak_flops(r.scenario.training.precision)
        self.band = class_band(r, peak, self.stack) if r.scenario.efficiency.mfu is None else None
        # the highest MFU of the widest range per unit of predicted MFU (triangle_from_quantiles
        # scales with its inputs; band_triangle then caps it at 1)
        widest = None if self.band is None else widest_band(self.band)
        self.high_ratio = None if widest is None else triangle_from_quantiles(*_unit_quantiles(widest))[2]

    def __call__(
        self,
        cards: npt.NDArray[np.int64],
        mfu: npt.NDArray[np.float64],
        bests: list[LayoutEval | None] | None = None,
    ) -> npt.NDArray[np.bool_]:
        mfus = np.asarray(mfu, dtype=float).ravel()
        g = self.at(np.asarray(cards, dtype=np.int64).ravel(), mfus)
        finite = np.isfinite(np.asarray(g["wall_s"], dtype=float)).ravel()
        if bests is None:
            return np.asarray(finite & (self._late_at_highest(g, mfus) <= self.allowed * (1 + MISS_SLACK)))
        risks = risks_at(g, self.counted, self.counts, self.scale_sd)
        out = [
            bool(ok)
            and miss_probability(self.target_days, k, self._triangle(float(m), b))
            <= self.allowed * (1 + MISS_SLACK)
            for ok, k, m, b in zip(finite, risks, mfus, bests, strict=True)
        ]
        return np.array(out, dtype=bool)

    def _triangle(self, mfu: float, best: LayoutEval | None) -> Triangle:
        """The MFU range of a size whose best layout is `best` (plan.mfu_range, as the plan states it)."""
        if self.band is None:
            return given_triangle(self.r, mfu)[0]
        return band_triangle(mfu, layout_band(self.band, self.r, best, self.stack))

    def _late_at_highest(self, g: dict[str, Any], mfu: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
        """P(late | the MFU is the highest any layout's range at `mfu` reaches), per size: the run then
        takes s = mfu / high of its time at the likely MFU, and as many interruptions on average."""
        if self.high_ratio is None:
            high = np.array([given_triangle(self.r, float(m))[0][2] for m in mfu])
        else:
            high = np.minimum(mfu * self.high_ratio, 1.0)
        s = mfu / high
        day = SECONDS_PER_DAY
        solve = np.asarray(g["solve_s"], dtype=float).ravel()
        if not self.counted:
            return np.asarray(s * solve / day > self.target_days, dtype=float)
        base = (solve + g["checkpoints_s"] + g["planned_total_s"]) / day
        per = (g["rework_s"] + g["restart_s"]) / day
        shape = rel.rate_shape(g["rates"], self.counts, self.scale_sd)
        with np.errstate(divide="ignore", invalid="ignore"):
            room = np.where(per > 0, (self.target_days - s * base) / np.where(per > 0, per, 1.0), np.inf)
        late = rel.count_exceedance(room, s * g["unexpected"], shape)
        return np.asarray(np.where(per > 0, late, (s * base > self.target_days).astype(float)))


def _unit_quantiles(band: evidence.Band) -> tuple[float, float, float]:
    """(P10, mode, P90) of a predicted MFU of 1 under `band`."""
    return band.p10_ratio, 1.0, band.p90_ratio


def deadline_rule(r: Resolved, seconds: float, tokens: float | None = None) -> DeadlineMet | ConfidenceRule:
    """The rule a deadline of `seconds` sizes by: ConfidenceRule with cluster.deadline_confidence,
    else plan.goodput.DeadlineMet (the wall clock at the planned MFU fits)."""
    confidence = r.scenario.cluster.deadline_confidence
    if confidence is None:
        return DeadlineMet(r, seconds, tokens)
    return ConfidenceRule(r, seconds, float(confidence), tokens)


def confident_cards(
    r: Resolved, rule: ConfidenceRule, flop: float, peak: float, mfu: float, multiple: int
) -> int:
    """The fewest cards (whole `multiple`s) whose chance of missing is at most 1 - q with the MFU given
    (its range: plan.mfu_range.given_triangle). None of fewer than the deadline needs failure-free at
    the range's highest MFU can meet; from there the count doubles until one meets (at most
    MAX_DOUBLINGS times: past that the cards the deadline needs at the record MFU, whose refusal the
    plan then meets), and a bisection finds the smallest that meets between the last that does not
    and it. The chance falls as cards grow until interruptions dominate, so the bisection finds the
    first size that meets where that is monotone (tests/estimator/test_deadline_confidence.py)."""
    high = given_triangle(r, mfu)[0][2]
    low_k = max(
        1, int(cards_for_deadline(flop, rule.target_days * SECONDS_PER_DAY, peak, high, multiple)) // multiple
    )

    def meets(k: int) -> bool:
        return bool(rule(np.array([k * multiple]), np.array([mfu]), [None])[0])

    if meets(low_k):
        return low_k * multiple
    high_k = 2 * low_k
    for _ in range(MAX_DOUBLINGS):
        if meets(high_k):
            break
        low_k, high_k = high_k, 2 * high_k
    while high_k - low_k > 1:  # low_k does not meet, high_k does (or is past every size tried)
        mid = (low_k + high_k) // 2
        low_k, high_k = (low_k, mid) if meets(mid) else (mid, high_k)
    return high_k * multiple


MAX_DOUBLINGS = 12  # confident_cards: 4,096 times the cards of the lower bound
