"""The Ascend constants, fitted once on every dense Ascend row of reference_data/throughput_runs.toml
together (suite "ascend", rows with `fit = "ascend-dense"`); the other Ascend rows are hold-outs.

- ASCEND_TRAINING_GEMM_FRACTION (estimator.layout.steptime.ascend): the part of the 910B's measured
  best-case GEMM rate (catalog matmul_efficiency 0.91, a MAMF measurement) a training step reaches;
- ASCEND_MC2_EXPOSED_FRACTION (estimator.layout.steptime.ascend): the share of the MC2-pipelined
  tensor-parallel collectives left exposed.

The two separate on these rows: TP 1 rows (Llama 2 7B, Qwen2 7B) see only the GEMM rate, TP 8 rows
both. The fit minimises the mean absolute error of tokens/s per card over a grid of both.
"""

from __future__ import annotations

import dataclasses
import itertools

from estimator.layout.problem import LayoutProblem
from estimator.layout.search import search
from estimator.validation import factor_fit
from estimator.validation.factor_fit import FitRows

FIT_TAG = "ascend-dense"


def _fit_problems() -> FitRows:
    """(layout problem, published tokens/s of the whole run) of every row tagged for the fit."""
    return factor_fit.fit_problems(FIT_TAG)


def ascend_mean_error(
    problems: list[tuple[LayoutProblem, float]], gemm_fraction: float, fraction: float
) -> float:
    """Mean |error| % of the rows at an Ascend training GEMM fraction and an MC2 exposed fraction."""
    errors = []
    for problem, published in problems:
        trial = dataclasses.replace(
            problem, ascend_gemm_fraction=gemm_fraction, mc2_exposed_fraction=fraction
        )
        found = search(trial)
        shown = found.best or found.closest
        if shown is not None:
            errors.append(abs(float(shown.tokens_per_s) - published) / published)
    return 100.0 * sum(errors) / max(len(errors), 1)


def calibrate_ascend(
    gemm_fractions: list[float] | None = None, fractions: list[float] | None = None
) -> tuple[float, float, float]:
    """(Ascend training GEMM fraction, MC2 exposed fraction, mean |error| %) minimising the mean
    absolute error over the rows tagged `fit = "ascend-dense"`; grids 0.60-0.85 by 0.01 and 0-1 by 0.05."""
    gemm_grid = gemm_fractions or [round(0.60 + 0.01 * i, 2) for i in range(26)]
    fractions = fractions or [round(0.05 * i, 2) for i in range(21)]
    problems = _fit_problems()
    fits = [(e, f, ascend_mean_error(problems, e, f)) for e, f in itertools.product(gemm_grid, fractions)]
    return min(fits, key=lambda fit: fit[2])
