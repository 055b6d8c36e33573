"""TRITON_UNEVEN_HEAD_BACKWARD_FACTOR (estimator.layout.steptime.attention), fitted once on every row
of reference_data/throughput_runs.toml tagged `fit = "triton-uneven-head"`: every MPT-30B row of
llm-foundry's H100 80GB BF16 table (8 GPUs at 1K-8K, 16 and 32 GPUs at 2K) and A100 80GB table (8
GPUs at 512-8K), the published runs of the Triton FlashAttention with a head size (112) below its
block (128). The fit minimises the mean absolute error of tokens/s per card over a grid of the
factor (estimator.validation.factor_fit).
"""

from __future__ import annotations

from estimator.validation import factor_fit
from estimator.validation.factor_fit import FitRows

FIT_TAG = "triton-uneven-head"


def triton_errors(problems: FitRows, factor: float) -> list[float]:
    """Signed errors (%) of the rows' tokens/s at a backward factor `factor`."""
    return factor_fit.factor_errors(problems, "triton_uneven_backward", factor)


def calibrate_triton_backward(grid: list[float] | None = None) -> tuple[float, float]:
    """(factor, mean |error| %) minimising the mean absolute error over the rows tagged
    `fit = "triton-uneven-head"`; grid 1.0-3.5 by 0.05."""
    problems = factor_fit.fit_problems(FIT_TAG)
    return factor_fit.grid_fit(problems, "triton_uneven_backward", grid or factor_fit.default_grid())
