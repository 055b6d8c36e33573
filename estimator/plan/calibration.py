"""Calibration from a pilot run: the fewest factors of the step-time model one measurement identifies.

A measured step time (or tokens/s per card) of a pilot layout identifies one number: the
compute-efficiency factor k that scales every compute rate of the step (`LayoutProblem.
compute_factor`, applied in estimator.layout.steptime.rates.rates: GEMMs, attention, memory-bound
kernels and the optimizer alike). A measured communication-wait share (a profiler's exposed
communication / step) identifies a second: the communication factor c that scales the links'
achieved bandwidth (`LayoutProblem.link_efficiency` = LINK_EFFICIENCY·c) of every collective. Both
are found by bisection on the same model that plans the target, so the target is planned with the
very mechanism that reproduced the pilot; nothing else is fitted.

The guard rails (the pilot is refused, with its field path) and the band around the calibrated
prediction are documented in docs/calibration.md. Units: seconds, tokens/s, dimensionless factors.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from estimator.errors import FieldError, ScenarioError
from estimator.layout.search import LayoutEval, LayoutProblem, search
from estimator.layout.steptime import LINK_EFFICIENCY
from estimator.layout.steptime.ascend import training_gemm_fraction
from estimator.plan.evidence import observations

#: Exposed communication terms of the breakdown: what a profiler reports as communication wait.
COMM_KEYS = ("tp_comm", "pp_comm", "dp_comm", "ep_comm", "cp_comm")
#: Lowest measured / predicted throughput among the validated published runs, read from the evidence
#: the bands are built on (reference_data/evidence_bands.toml, estimator.plan.evidence): one place.
VALIDATED_RATIO_MIN = min(r for ratios in observations().values() for r in ratios)
#: A pilot below half of that is refused: no validated run is that far below the model, so the
#: measurement more likely counts something else (a stalled job, data loading, the wrong unit).
PILOT_RATIO_MIN = VALIDATED_RATIO_MIN / 2.0
#: The communication factor's range: links cannot beat their rated bandwidth (LINK_EFFICIENCY·c <= 1);
#: below 5 % of the model's achieved bandwidth the wait is not the links' (a hang, a straggler).
COMM_FACTOR_MIN = 0.05
COMM_FACTOR_MAX = 1.0 / LINK_EFFICIENCY
COMPUTE_FACTOR_MIN = 0.05
_TOLERANCE = 1e-6  # of log factor: a relative precision far below the measurement's
_MAX_ITERATIONS = 60


@dataclass(frozen=True)
class Measured:
    """What the pilot measured: its step time (s) and, optionally, the communication-wait share."""

    step_time_s: float
    comm_wait_share: float | None = None


@dataclass(frozen=True)
class Factors:
    """Fitted factors: compute (scales every compute rate), comm (scales link bandwidth; 1.0 when
    no wait share was measured, comm_fitted False)."""

    compute: float
    comm: float = 1.0
    comm_fitted: bool = False

    def applied(self, problem: LayoutProblem) -> LayoutProblem:
        """`problem` with these factors at the step-time model's two hooks."""
        return dataclasses.replace(
            problem, compute_factor=self.compute, link_efficiency=LINK_EFFICIENCY * self.comm
        )


def layout_fixed(ev: LayoutEval) -> dict[str, Any]:
    """The `fixed` mapping that pins the layout search to exactly this layout."""
    return {
        "tp": ev.tp,
        "pp": ev.pp,
        "dp": ev.dp,
        "ep": ev.ep,
        "cp": ev.cp,
        "micro_batch_size": ev.micro_batch_size,
        "virtual_stages": ev.virtual_stages,
        "sequence_parallel": ev.sequence_parallel,
        "zero_stage": ev.zero_stage,
        "recompute": ev.recompute,
        "distributed_optimizer": ev.distributed_optimizer,
        "top_n": 0,
    }


def comm_wait_share(ev: LayoutEval) -> float:
    """Exposed communication (COMM_KEYS) / step time of one evaluated layout (dimensionless)."""
    return sum(ev.breakdown_s[k] for k in COMM_KEYS) / ev.step_time_s


def _bisect_log(f: Callable[[float], float], lo: float, hi: float) -> float:
    """x in [lo, hi] with f(x) = 0 for f increasing in x: the Illinois variant of regula falsi on
    log x (bracketing, so it cannot leave the interval; superlinear on these smooth, nearly linear
    functions), to a relative tolerance of _TOLERANCE in x."""
    a, b = math.log(lo), math.log(hi)
    fa, fb = f(lo), f(hi)
    if fa >= 0:
        return lo
    if fb <= 0:
        return hi
    side, previous = 0, math.inf
    for _ in range(_MAX_ITERATIONS):
        x = (a * fb - b * fa) / (fb - fa)
        if abs(x - previous) < _TOLERANCE or b - a < _TOLERANCE:
            return math.exp(x)
        previous = x
        fx = f(math.exp(x))
        if fx == 0:
            return math.exp(x)
        if fx < 0:
            a, fa = x, fx
            if side == -1:
                fb /= 2.0
            side = -1
        else:
            b, fb = x, fx
            if side == 1:
                fa /= 2.0
            side = 1
    return math.exp(0.5 * (a + b))


class _Pinned:
    """The pilot's layout, evaluated at any factors (one fixed-layout search each, ~2 ms)."""

    def __init__(self, problem: LayoutProblem, layout: LayoutEval):
        self.problem = dataclasses.replace(problem, fixed=layout_fixed(layout))

    def at(self, factors: Factors) -> LayoutEval:
        return evaluate_pinned(factors.applied(self.problem))


def evaluate_pinned(problem: LayoutProblem) -> LayoutEval:
    """The one layout `problem.fixed` pins, evaluated even where the memory model says it does not
    fit (a pilot that ran did fit: the memory model is conservative)."""
    found = search(problem)
    layout = found.best or found.closest
    assert layout is not None  # a pinned layout that passed the structural checks once always does
    return layout


def compute_factor_max(problem: LayoutProblem) -> float:
    """The compute factor at which the calibrated GEMM rate reaches the chip's peak:
    1 / (matmul efficiency · GEMM fraction) (estimator.layout.steptime.gemm.gemm_rate)."""
    acc = problem.accelerator
    g = training_gemm_fraction(acc.chip_family, problem.gemm_fraction, problem.ascend_gemm_fraction)
    return 1.0 / (acc.matmul_efficiency * g)


def fit_factors(problem: LayoutProblem, layout: LayoutEval, measured: Measured, path: str) -> Factors:
    """The compute factor (and with a wait share the communication factor) that make the model's
    step time of `layout` on `problem` equal the measured one (and its exposed-communication share
    the measured share). `path`: the field path of the measurement, for the refusals.

    Step time falls as either factor grows, and the wait share falls as c grows at fixed step
    time, so nested bisections on log k (inner) and log c (outer) find the unique solution."""
    pinned = _Pinned(problem, layout)
    k_max = compute_factor_max(problem)

    def reachable(comm: float) -> bool:
        """Whether the measured step can be reproduced at this communication factor."""
        return measured.step_time_s >= pinned.at(Factors(k_max, comm)).step_time_s

    def k_for(comm: float) -> float:
        fastest = pinned.at(Factors(k_max, comm)).step_time_s
        slowest = pinned.at(Factors(COMPUTE_FACTOR_MIN, comm)).step_time_s
        times = {"measured_s": measured.step_time_s}
        if measured.step_time_s < fastest:
            message = (
                f"the pilot's step ({measured.step_time_s:.4g} s) would need its GEMMs above the chip's "
                f"peak (fastest possible {fastest:.4g} s for this layout); check the figure and its unit"
            )
            params = {**times, "model_s": fastest}
            raise ScenarioError(FieldError(path, message, "pilot-step-above-peak", params))
        if measured.step_time_s > slowest:
            message = _far_below_message(measured.step_time_s, slowest)
            params = {**times, "model_s": slowest, "share": COMPUTE_FACTOR_MIN}
            raise ScenarioError(FieldError(path, message, "pilot-step-too-slow", params))
        return _bisect_log(
            lambda k: measured.step_time_s - pinned.at(Factors(k, comm)).step_time_s,
            COMPUTE_FACTOR_MIN,
            k_max,
        )

    share = measured.comm_wait_share
    if share is None:
        return Factors(k_for(1.0))
    share_path = path.rsplit(".", 1)[0] + ".measured_comm_wait_share"

    def share_at(comm: float) -> float:
        # links this slow leave no compute factor that reproduces the step: "more wait than measured"
        if not reachable(comm):
            return 1.0
        return comm_wait_share(pinned.at(Factors(k_for(comm), comm)))

    lowest, highest = share_at(COMM_FACTOR_MAX), share_at(COMM_FACTOR_MIN)
    if highest <= 0.0:
        message = (
            "the pilot's layout exposes no communication in the model (everything overlaps or stays "
            "on one card), so a wait share cannot calibrate the links; leave it out"
        )
        raise ScenarioError(FieldError(share_path, message, "pilot-no-exposed-comm"))
    if not lowest <= share <= highest:
        message = (
            f"a communication wait of {share:.0%} is outside what this layout can show "
            f"({lowest:.1%} with links at their rated bandwidth to {highest:.0%} at "
            f"{COMM_FACTOR_MIN:.0%} of the model's); check the profiler's figure"
        )
        params = {"share": share, "lowest_share": lowest, "highest_share": highest, "links": COMM_FACTOR_MIN}
        raise ScenarioError(FieldError(share_path, message, "pilot-comm-share-outside", params))
    comm = _bisect_log(lambda c: share - share_at(c), COMM_FACTOR_MIN, COMM_FACTOR_MAX)
    return Factors(k_for(comm), comm, True)


def _far_below_message(measured_s: float, slowest_s: float) -> str:
    return (
        f"the pilot's step ({measured_s:.4g} s) is slower than the model allows even at "
        f"{COMPUTE_FACTOR_MIN:.0%} compute efficiency ({slowest_s:.4g} s); check the figure and its unit"
    )


def check_plausible(
    measured_tokens_per_s: float, predicted_tokens_per_s: float, mfu: float, path: str
) -> None:
    """Refuse a pilot above the chip's peak (the FLOPs its kernels compute at or above it) or far
    below every validated row (measured / predicted tokens/s below PILOT_RATIO_MIN). Tokens/s per
    card; mfu dimensionless, the share of peak the kernels would run at: the step time with the
    kernels at peak (estimator.plan.peak_step.step_time_at_peak_s) over the measured step."""
    if mfu >= 1.0:
        message = (
            f"{measured_tokens_per_s:,.0f} tokens/s per card is {mfu:.0%} of the chip's peak for this model: "
            "above peak, which no run can reach; check the figure and its unit"
        )
        params = {"tokens": measured_tokens_per_s, "mfu": mfu}
        raise ScenarioError(FieldError(path, message, "pilot-above-peak", params))
    ratio = measured_tokens_per_s / predicted_tokens_per_s
    if ratio < PILOT_RATIO_MIN:
        message = (
            f"{measured_tokens_per_s:,.0f} tokens/s per card is {ratio:.2f}x what the model predicts for "
            f"this pilot ({predicted_tokens_per_s:,.0f}); no validated published run is below "
            f"{VALIDATED_RATIO_MIN:.2f}x, so this one is refused (a stalled job, data loading, or another unit?)"
        )
        params = {
            "tokens": measured_tokens_per_s,
            "times_model": ratio,
            "predicted": predicted_tokens_per_s,
            "speedup": VALIDATED_RATIO_MIN,
        }
        raise ScenarioError(FieldError(path, message, "pilot-far-below-model", params))
