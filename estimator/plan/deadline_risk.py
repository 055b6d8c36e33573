"""The chance a run misses its deadline, one rule for the plan's verdict and for the sizing:
compute.deadline_miss_probability of a plan (sections.compute.with_deadline_risk) and, with
cluster.deadline_confidence q, the deadline sizing's test of each size (ConfidenceRule: the chance
of missing at most 1 - q). The probability is money.budget's: the MFU ~ Triangular(low, mode, high)
(plan.mfu_range) and, with failures counted, the interruption count's negative binomial at each
MFU (deadline_miss_probability_with_failures); without failures the triangular CDF at the MFU the
deadline needs (deadline_miss_probability). Units: days, counts, shares of peak."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from estimator.cluster import reliability as rel
from estimator.contract.resolve import Resolved
from estimator.layout.search import LayoutEval
from estimator.limits import MAX_CARDS
from estimator.model.compute import SECONDS_PER_DAY, cards_for_deadline
from estimator.money import budget as budget_rules
from estimator.plan import evidence
from estimator.plan.count_search import smallest_at_most
from estimator.plan.goodput import DeadlineMet, at_cards_of, fastest_cards, settings
from estimator.plan.mfu_range import (
    Triangle,
    band_triangle,
    calibration_width,
    class_band,
    given_triangle,
    layout_band,
    mfu_ceiling,
    ratio_triangle,
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
    (miss_probabilities of one plan)."""
    if risk.shape is None:
        arrays: dict[str, Any] = {"base_days": np.array([risk.base_days]), "shape": None}
    else:
        fields = ("base_days", "unexpected", "per_days", "shape")
        arrays = {f: np.array([getattr(risk, f)], dtype=float) for f in fields}
    return float(miss_probabilities(target_days, arrays, np.array([mfu], dtype=float))[0])


def miss_probabilities(
    target_days: Any, a: dict[str, Any], mfu: npt.NDArray[np.float64]
) -> npt.NDArray[np.float64]:
    """miss_probability of many plans at once: risk_arrays' `a` (one entry per plan; shape None:
    failures not counted) and their MFU triangles `mfu` (rows of low, mode, high), the deadline one
    or one per plan (money.budget.deadline_miss_probabilities_with_failures, or
    deadline_miss_probabilities without failures)."""
    triangle = (mfu[:, 0], mfu[:, 1], mfu[:, 2])
    if a["shape"] is None:
        return budget_rules.deadline_miss_probabilities(a["base_days"], target_days, triangle)
    return budget_rules.deadline_miss_probabilities_with_failures(
        target_days, a["base_days"], a["unexpected"], a["per_days"], a["shape"], triangle
    )


def risk_arrays(
    g: dict[str, Any], counted: bool, counts: dict[str, float], scale_sd: float
) -> dict[str, Any]:
    """Risk's fields, one array entry per size, from plan.goodput.at_cards_of's arrays `g` at those
    sizes, as the goodput section states them (result.goodput; the shape as goodput_section.
    count_shape: reliability.rate_shape of the rates, `counts` the published counts behind them,
    `scale_sd` the relative sd of the vendor's scale); shape None where failures are not counted."""
    day = SECONDS_PER_DAY
    solve = np.broadcast_to(np.asarray(g["solve_s"], dtype=float), np.shape(g["wall_s"])).ravel()
    if not counted:
        return {"base_days": solve / day, "shape": None}
    parts = np.broadcast_arrays(
        (solve + np.ravel(g["checkpoints_s"]) + np.ravel(g["planned_total_s"])) / day,
        np.ravel(g["unexpected"]),
        (np.ravel(g["rework_s"]) + np.ravel(g["restart_s"])) / day,
        np.ravel(rel.rate_shape(g["rates"], counts, scale_sd)),
    )
    return dict(zip(("base_days", "unexpected", "per_days", "shape"), parts, strict=True))


class DeadlineChance:
    """The chance of missing a deadline of `seconds` for `tokens` (the scenario's when None) of plans
    of the scenario at given sizes, MFUs and best layouts (chances): each with the MFU range of its
    layout (plan.mfu_range, as the plan states it) and, failures counted, the goodput at its size
    (plan.goodput.at_cards_of), all of them in one vectorized integration (miss_probabilities)."""

    def __init__(self, r: Resolved, seconds: float, tokens: float | None = None):
        st = settings(r)
        self.r, self.target_days, self.tokens = r, seconds / SECONDS_PER_DAY, tokens
        self.at = at_cards_of(r, tokens, st, spread=False)
        self.counted, self.counts, self.scale_sd = st.on, st.counts, st.scale_rel_sd
        self.stack = resolved_stack(r)
        peak = r.accelerator.peak_flops(r.scenario.training.precision)
        eff = r.scenario.efficiency  # a given MFU or range: plan.mfu_range.given_triangle, as mfu_band
        self.band = class_band(r, peak, self.stack) if eff.mfu is None and eff.mfu_range is None else None
        self.ceiling = mfu_ceiling(r)  # the MFU range's cap (plan.mfu_range.mfu_ceiling)

    def chances(
        self, cards: npt.NDArray[np.int64], mfu: npt.NDArray[np.float64], bests: list[LayoutEval | None]
    ) -> npt.NDArray[np.float64]:
        """The chance of missing of each size with its best layout and that layout's MFU (1 where the
        run never finishes)."""
        return self.chances_by(np.full(np.size(cards), self.target_days), cards, mfu, bests)

    def chances_by(
        self,
        target_days: npt.NDArray[np.float64],
        cards: npt.NDArray[np.int64],
        mfu: npt.NDArray[np.float64],
        bests: list[LayoutEval | None],
    ) -> npt.NDArray[np.float64]:
        """chances with a deadline per size (`target_days`; the goodput at a size does not depend on
        the deadline, so one rule serves every deadline of its tokens)."""
        mfus, sizes, finite, risk = self._risk(cards, mfu)
        out = np.ones(mfus.shape[0])
        at = np.flatnonzero(finite)
        if at.size:
            triangles = np.array([self._triangle(float(mfus[i]), bests[i], int(sizes[i])) for i in at])
            kept = {k: v if v is None else np.asarray(v)[at] for k, v in risk.items()}
            days = np.asarray(target_days, dtype=float)[at]
            out[at] = miss_probabilities(days, kept, triangles.reshape(-1, 3))
        return out

    def _risk(
        self, cards: npt.NDArray[np.int64], mfu: npt.NDArray[np.float64]
    ) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.int64], npt.NDArray[np.bool_], dict[str, Any]]:
        """(MFUs, sizes, whether each run finishes, risk_arrays) of these sizes at these MFUs."""
        mfus, sizes = np.asarray(mfu, dtype=float).ravel(), np.asarray(cards, dtype=np.int64).ravel()
        g = self.at(sizes, mfus)
        finite = np.isfinite(np.asarray(g["wall_s"], dtype=float)).ravel()
        return mfus, sizes, finite, risk_arrays(g, self.counted, self.counts, self.scale_sd)

    def _triangle(self, mfu: float, best: LayoutEval | None, cards: int) -> Triangle:
        """The MFU range of `cards` whose best layout is `best` (plan.mfu_range, as the plan states it
        in sections.risk.mfu_band: given, a pilot's band, or the evidence band)."""
        if self.band is None:
            return given_triangle(self.r, mfu)[0]
        width = calibration_width(self.r, best, cards)
        if width is not None:
            return ratio_triangle(mfu, 1.0 - width, 1.0 + width, self.ceiling)
        return band_triangle(mfu, layout_band(self.band, self.r, best, self.stack), self.ceiling)


class ConfidenceRule(DeadlineChance):
    """The deadline sizing's test with cluster.deadline_confidence q (a plan.deadline.Met):
    a size meets when its chance of missing the deadline is at most 1 - q. Called with the sizes'
    best layouts it decides (miss_probability with the MFU range of each layout, plan.mfu_range);
    without them it is the bound the scan starts and ends by: a size can meet only if it would at
    the highest MFU of the widest range any of its layouts can have (P(late) is the mean over MFUs of
    P(late | MFU), which falls as the MFU rises, so it is at least P(late | that MFU)). A size whose
    run never finishes (an infinite wall) never meets. `chunk`: sizes the scan judges at a time (the
    exact chance costs money.budget.MFU_STRATA evaluations a size)."""

    chunk = 4

    def __init__(self, r: Resolved, seconds: float, confidence: float, tokens: float | None = None):
        super().__init__(r, seconds, tokens)
        self.allowed = 1.0 - confidence
        # the highest MFU of the widest range per unit of predicted MFU (triangle_from_quantiles
        # scales with its inputs; band_triangle then caps it at the ceiling, mfu_ceiling)
        widest = None if self.band is None else widest_band(self.band)
        self.high_ratio = None if widest is None else triangle_from_quantiles(*_unit_quantiles(widest))[2]
        if self.band is not None and r.pilot_fit is not None:  # the pilot's band, at most BAND_MAX wide
            from estimator.plan.pilot_section import BAND_MAX  # a plan without a pilot never needs it

            self.high_ratio = triangle_from_quantiles(1.0 - BAND_MAX, 1.0, 1.0 + BAND_MAX)[2]

    def __call__(
        self,
        cards: npt.NDArray[np.int64],
        mfu: npt.NDArray[np.float64],
        bests: list[LayoutEval | None] | None = None,
    ) -> npt.NDArray[np.bool_]:
        if bests is not None:
            return np.asarray(self.chances(cards, mfu, bests) <= self.allowed * (1 + MISS_SLACK))
        mfus, _, finite, risk = self._risk(cards, mfu)
        return np.asarray(finite & (self._late_at_highest(risk, mfus) <= self.allowed * (1 + MISS_SLACK)))

    def _late_at_highest(self, a: dict[str, Any], mfu: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
        """P(late | the MFU is the highest any layout's range at `mfu` reaches), per size (risk_arrays
        `a`): the run then takes s = mfu / high of its time at the likely MFU, and as many
        interruptions on average; late for certain where an interruption costs nothing and the base
        alone is late."""
        if self.high_ratio is None:
            high = np.array([given_triangle(self.r, float(m))[0][2] for m in mfu])
        else:
            high = np.minimum(mfu * self.high_ratio, np.maximum(self.ceiling, mfu))
        base = mfu / high * a["base_days"]
        if a["shape"] is None:
            return np.asarray(base > self.target_days, dtype=float)
        per = a["per_days"]
        with np.errstate(divide="ignore", invalid="ignore"):
            room = (self.target_days - base) / np.where(per > 0, per, 1.0)
        late = rel.count_exceedance(room, mfu / high * a["unexpected"], a["shape"])
        return np.asarray(np.where(per > 0, late, (base > self.target_days).astype(float)))


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
    rule: ConfidenceRule,
    flop: float,
    peak: float,
    mfu: float,
    multiple: int,
    largest: Callable[[], int],
) -> int:
    """The fewest cards (whole `multiple`s, up to the largest cluster the network builds, `largest()`)
    whose chance of missing is at most 1 - q at the MFU given (its range: plan.mfu_range.
    given_triangle); where none gets there, the fastest count (plan.goodput.fastest_cards: the
    shortest mean wall clock), as the sizing without an MFU keeps its fastest size and a deadline no
    count meets keeps the fastest (near the lowest chance, whose count is noise where the chance is
    flat: 0.99968 to 0.99969 over hundreds of cards).

    None of fewer than the deadline needs without failures at the range's highest MFU can meet
    (their chance is 1), so the search runs from there; the chance falls as cards grow until
    interruptions dominate, then rises (plan.count_search.smallest_at_most, exact for such a
    quantity; the fabric's switches grow in steps, a pod or a layer of cores at a time, so near its
    lowest the chance is jagged by a few percent of itself and the count found is the fewest to
    within that; tests/estimator/test_deadline_confidence.py). A chance costs money.budget.MFU_STRATA
    evaluations, each kept for the rounds that share it. Counts past the largest cluster are never
    judged: their fabric, and so their failure rates, do not exist. `flop` and `peak` (FLOP, FLOP/s)
    give the failure-free need at `mfu`, returned as it is where it is past the largest (the caller
    refuses it: plan.deadline_refusals.too_many_cards)."""
    top = max(1, min(MAX_CARDS, int(largest())) // multiple)
    seconds = rule.target_days * SECONDS_PER_DAY
    if int(cards_for_deadline(flop, seconds, peak, mfu, multiple)) > top * multiple:
        return int(cards_for_deadline(flop, seconds, peak, mfu, multiple))
    high = given_triangle(rule.r, mfu)[0][2]
    first = min(top, max(1, int(cards_for_deadline(flop, seconds, peak, high, multiple)) // multiple))
    known: dict[int, float] = {}  # the rounds share their ends

    def chance(_: npt.NDArray[np.int64], k: npt.NDArray[np.int64]) -> npt.NDArray[np.float64]:
        todo = [int(c) for c in dict.fromkeys(k.tolist()) if int(c) not in known]
        if todo:
            found = rule.chances(np.array(todo) * multiple, np.full(len(todo), mfu), [None] * len(todo))
            known.update(zip(todo, found.tolist(), strict=True))
        return np.array([known[int(c)] for c in k.tolist()])

    lo, hi = np.array([first], dtype=np.int64), np.array([top], dtype=np.int64)
    found, met = smallest_at_most(chance, lo, hi, rule.allowed * (1 + MISS_SLACK))
    if met[0]:
        return int(found[0]) * multiple
    # the rule's tokens (a sweep row's), not the scenario's: the fastest count grows with the work
    return int(fastest_cards(rule.r, mfu, multiple, rule.tokens, np.ones(1, dtype=bool), top * multiple)[0])
