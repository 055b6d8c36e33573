"""TRITON_UNEVEN_HEAD_BACKWARD_FACTOR (estimator.layout.steptime.attention), fitted once on every row
of reference_data/throughput_runs.toml tagged `fit = "triton-uneven-head"`: every MPT-30B row of
llm-foundry's H100 80GB BF16 table (8 GPUs at 1K-8K, 16 and 32 GPUs at 2K) and A100 80GB table (8
GPUs at 512-8K), the published runs of the Triton FlashAttention with a head size (112) below its
block (128). The fit minimises the mean absolute error of tokens/s per card over a grid of the
factor, as estimator.validation.moe_core06 does.
"""

from __future__ import annotations

import dataclasses

from estimator.layout.problem import LayoutProblem
from estimator.layout.search import search
from estimator.validation.moe_core06 import fit_problems

FIT_TAG = "triton-uneven-head"


def triton_errors(problems: list[tuple[LayoutProblem, float]], factor: float) -> list[float]:
    """Signed errors (%) of the rows' tokens/s at a backward factor `factor`."""
    errors = []
    for problem, published in problems:
        found = search(dataclasses.replace(problem, triton_uneven_backward=factor))
        shown = found.best or found.closest
        if shown is not None:
            errors.append(100.0 * (float(shown.tokens_per_s) - published) / published)
    return errors


def calibrate_triton_backward(grid: list[float] | None = None) -> tuple[float, float]:
    """(factor, mean |error| %) minimising the mean absolute error over the rows tagged
    `fit = "triton-uneven-head"`; grid 1.0-3.5 by 0.05."""
    grid = grid or [round(1.0 + 0.05 * i, 2) for i in range(51)]
    problems = fit_problems(FIT_TAG)
    fits = []
    for factor in grid:
        errors = triton_errors(problems, factor)
        fits.append((factor, sum(abs(e) for e in errors) / max(len(errors), 1)))
    return min(fits, key=lambda fit: fit[1])
