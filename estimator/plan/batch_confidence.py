"""A sweep group's deadline rows: sized for a chance of meeting the deadline where the group gives
one (cluster.deadline_confidence q of the group, one value per group: a structural field of
plan.batch), as plan.choose_cluster sizes one scenario: with an MFU given the fewest cards whose
chance of missing is at most 1 - q (plan.deadline_risk.confident_cards), without one the deadline
scan judged by the same rule (plan.deadline_risk.deadline_rule, which plan.batch's layout search
path takes per row); and, confidence or not, each planned row's chance of missing at its cards
(DeadlineChance.chances: the MFU range of its layout and, failures counted, the interruption
count's spread; money.budget's probability), what estimate() states as
compute.deadline_miss_probability for every deadline plan (sections.compute.with_deadline_risk).
One rule per distinct (tokens, days) of the group, each search once per distinct (tokens, days,
MFU), the chances of a (tokens, days) in one vectorized integration: the rows share them. Units:
cards, days, probabilities (0-1)."""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
import numpy.typing as npt

from estimator.contract.resolve import Resolved
from estimator.layout.search import LayoutEval
from estimator.model.compute import SECONDS_PER_DAY
from estimator.plan.deadline import SizeMemo, largest_cluster
from estimator.plan.deadline_risk import ConfidenceRule, DeadlineChance, confident_cards
from estimator.plan.problem import cards_multiple

# result.compute's fields of a plan sized for a chance of meeting its deadline (the JSON names):
# the chance asked (cluster.deadline_confidence) and the plan's chance of missing the deadline
CONFIDENCE_FIELD = "compute.deadline_confidence"
MISS_FIELD = "compute.deadline_miss_probability"
CONFIDENCE_FIELDS = (CONFIDENCE_FIELD, MISS_FIELD)

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]


class GroupConfidence:
    """The deadline risk of one sweep group sized by deadline (build it only for such a group), and
    its confidence sizing where the group's scenario gives cluster.deadline_confidence (`confidence`,
    else None). Rules are kept per (tokens, days): building one resolves the stack, the evidence band
    and the goodput settings once."""

    def __init__(self, r: Resolved):
        confidence = r.scenario.cluster.deadline_confidence
        self.r, self.confidence = r, None if confidence is None else float(confidence)
        self.peak = r.accelerator.peak_flops(r.scenario.training.precision)
        self._rules: dict[tuple[float, float], ConfidenceRule] = {}
        self._chances: dict[float, DeadlineChance] = {}

    def rule(self, tokens: float, days: float) -> ConfidenceRule:
        """The rule of a deadline of `days` for `tokens` (ConfidenceRule, as deadline_rule builds it;
        a group with cluster.deadline_confidence only)."""
        assert self.confidence is not None  # plan.batch_sizing sizes by it only with a confidence
        key = (float(tokens), float(days))
        if key not in self._rules:
            self._rules[key] = ConfidenceRule(self.r, key[1] * SECONDS_PER_DAY, self.confidence, key[0])
        return self._rules[key]

    def chance(self, tokens: float) -> DeadlineChance:
        """The chance of missing of plans for `tokens`, any deadline (DeadlineChance.chances_by)."""
        key = float(tokens)
        if key not in self._chances:
            self._chances[key] = DeadlineChance(self.r, SECONDS_PER_DAY, key)
        return self._chances[key]

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
        MFU, layout), those of one token count in one vectorized call (DeadlineChance.chances_by)."""
        keys: list[tuple[Any, ...]] = [
            (float(t), float(d), int(c), float(m), id(b))
            for t, d, c, m, b in zip(tokens, days, cards, mfu, bests, strict=True)
        ]
        layout = dict(zip(keys, bests, strict=True))
        by_tokens: dict[float, list[tuple[Any, ...]]] = {}
        for k in dict.fromkeys(keys):
            by_tokens.setdefault(k[0], []).append(k)
        found: dict[tuple[Any, ...], float] = {}
        for t, ks in by_tokens.items():
            days, sizes = np.array([k[1] for k in ks]), np.array([k[2] for k in ks], dtype=np.int64)
            chances = self.chance(t).chances_by(
                days, sizes, np.array([k[3] for k in ks]), [layout[k] for k in ks]
            )
            found.update(zip(ks, chances.tolist(), strict=True))
        return np.array([found[k] for k in keys], dtype=float)


def confidence_columns(
    group: GroupConfidence | None,
    ok: npt.NDArray[np.bool_],
    sized: tuple[FloatArray, FloatArray, IntArray, FloatArray],
    bests: list[LayoutEval | None],
) -> dict[str, FloatArray]:
    """CONFIDENCE_FIELDS of a group's rows: NaN where the group is not sized by deadline (`group`
    None) and on rows not planned; else each planned row's chance of missing and, sized for a
    chance, the confidence asked (`sized`: tokens, days, cards and MFU per row; `bests` each row's
    best layout, None where the MFU was given)."""
    n = ok.shape[0]
    out = {f: np.full(n, np.nan) for f in CONFIDENCE_FIELDS}
    if group is None:
        return out
    at = np.flatnonzero(ok)
    tokens, days, cards, mfu = sized
    if group.confidence is not None:
        out[CONFIDENCE_FIELD][at] = group.confidence
    out[MISS_FIELD][at] = group.chances(tokens[at], days[at], cards[at], mfu[at], [bests[i] for i in at])
    return out
