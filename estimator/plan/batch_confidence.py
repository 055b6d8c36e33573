"""A sweep group's deadline rows sized for a chance of meeting the deadline (cluster.deadline_confidence
q of the group, one value per group: a structural field of plan.batch), as plan.choose_cluster
sizes one scenario: with an MFU given the fewest cards whose chance of missing is at most 1 - q
(plan.deadline_risk.confident_cards), without one the deadline scan judged by the same rule
(plan.deadline_risk.deadline_rule, which plan.batch's layout search path takes per row); and each
planned row's chance of missing at its cards (ConfidenceRule.chances: the MFU range of its layout
and, failures counted, the interruption count's spread; money.budget's probability), what
estimate() states as compute.deadline_miss_probability. One rule per distinct (tokens, days) of the
group, each search once per distinct (tokens, days, MFU): the rows share them. Units: cards, days,
probabilities (0-1)."""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
import numpy.typing as npt

from estimator.contract.resolve import Resolved
from estimator.layout.search import LayoutEval
from estimator.model.compute import SECONDS_PER_DAY
from estimator.plan.deadline import SizeMemo, largest_cluster
from estimator.plan.deadline_risk import ConfidenceRule, confident_cards
from estimator.plan.problem import cards_multiple

# result.compute's fields of a plan sized for a chance of meeting its deadline (the JSON names):
# the chance asked (cluster.deadline_confidence) and the plan's chance of missing the deadline
CONFIDENCE_FIELD = "compute.deadline_confidence"
MISS_FIELD = "compute.deadline_miss_probability"
CONFIDENCE_FIELDS = (CONFIDENCE_FIELD, MISS_FIELD)

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]


class GroupConfidence:
    """The confidence sizing of one sweep group (None-free: build it only where the group's scenario
    gives cluster.deadline_confidence). Rules are kept per (tokens, days): building one resolves the
    stack, the evidence band and the goodput settings once."""

    def __init__(self, r: Resolved):
        confidence = r.scenario.cluster.deadline_confidence
        assert confidence is not None  # plan.batch builds one only for such a group
        self.r, self.confidence = r, float(confidence)
        self.peak = r.accelerator.peak_flops(r.scenario.training.precision)
        self._rules: dict[tuple[float, float], ConfidenceRule] = {}

    def rule(self, tokens: float, days: float) -> ConfidenceRule:
        """The rule of a deadline of `days` for `tokens` (ConfidenceRule, as deadline_rule builds it)."""
        key = (float(tokens), float(days))
        if key not in self._rules:
            self._rules[key] = ConfidenceRule(self.r, key[1] * SECONDS_PER_DAY, self.confidence, key[0])
        return self._rules[key]

    def cards_at_given_mfu(
        self, flop: FloatArray, tokens: FloatArray, days: FloatArray, mfu: FloatArray, rows: IntArray
    ) -> IntArray:
        """Cards of the rows with an MFU given: confident_cards (whole cards_multiple units) once per
        distinct (tokens, days, MFU), before they grow to a size that holds a layout (plan.batch)."""
        multiple = cards_multiple(self.r)
        keys = [(float(tokens[i]), float(days[i]), float(mfu[i]), float(flop[i])) for i in rows]
        largest = functools.partial(largest_cluster, self.r, SizeMemo(self.r, reuse=True))
        found = {
            k: confident_cards(self.rule(k[0], k[1]), k[3], self.peak, k[2], multiple, largest)
            for k in dict.fromkeys(keys)
        }
        return np.array([found[k] for k in keys], dtype=np.int64)

    def chances(
        self,
        tokens: FloatArray,
        days: FloatArray,
        cards: IntArray,
        mfu: FloatArray,
        bests: list[LayoutEval | None],
    ) -> FloatArray:
        """Each row's chance of missing its deadline at its cards, MFU and best layout (None: the MFU
        was given, its range plan.mfu_range.given_triangle), once per distinct (tokens, days, cards,
        MFU, layout)."""
        keys: list[tuple[Any, ...]] = [
            (float(t), float(d), int(c), float(m), id(b))
            for t, d, c, m, b in zip(tokens, days, cards, mfu, bests, strict=True)
        ]
        layout = dict(zip(keys, bests, strict=True))
        found = {
            k: float(self.rule(k[0], k[1]).chances(np.array([k[2]]), np.array([k[3]]), [layout[k]])[0])
            for k in dict.fromkeys(keys)
        }
        return np.array([found[k] for k in keys], dtype=float)


def confidence_columns(
    group: GroupConfidence | None,
    ok: npt.NDArray[np.bool_],
    sized: tuple[FloatArray, FloatArray, IntArray, FloatArray],
    bests: list[LayoutEval | None],
) -> dict[str, FloatArray]:
    """CONFIDENCE_FIELDS of a group's rows: NaN without a confidence and on rows not planned; else
    the confidence asked and each planned row's chance of missing (`sized`: tokens, days, cards
    and MFU per row; `bests` each row's best layout, None where the MFU was given)."""
    n = ok.shape[0]
    out = {f: np.full(n, np.nan) for f in CONFIDENCE_FIELDS}
    if group is None:
        return out
    at = np.flatnonzero(ok)
    tokens, days, cards, mfu = sized
    out[CONFIDENCE_FIELD][at] = group.confidence
    out[MISS_FIELD][at] = group.chances(tokens[at], days[at], cards[at], mfu[at], [bests[i] for i in at])
    return out
