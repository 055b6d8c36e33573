"""TRITON_UNEVEN_HEAD_BACKWARD_FACTOR (estimator.layout.steptime.attention), fitted once on every row
of reference_data/throughput_runs.toml tagged `fit = "triton-uneven-head"`: the llm-foundry MPT-30B
rows of the validation suites (head dimension 112 in the Triton FlashAttention's 128 block, the only
published runs on that kernel path: 8K on 8 H100, 8K and 2K on 8 A100-80GB). The other MPT-30B rows
of the same H100 table (4K, 2K, 1K on 8 GPUs) are its hold-outs. The fit minimises the mean absolute
error of tokens/s per card over a grid of the factor, as estimator.validation.moe_core06 does.
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
