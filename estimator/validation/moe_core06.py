"""MCORE06_EXPERT_TIME_FACTOR (estimator.layout.steptime.moe_core06), fitted once on every row of
reference_data/throughput_runs.toml tagged `fit = "mcore06-moe"`: the MindSpeed-LLM 1.0.RC3 README's
GPU reference column for its MoE models (suite "ascend-gpu-reference"). On those GPUs the rest of the
step is what the NVIDIA suites validate, so the factor prices the Megatron-Core 0.6 MoE path alone;
the Ascend MoE rows of the same table are its hold-outs. The fit minimises the mean absolute error
of tokens/s per card over a grid of the factor.
"""

from __future__ import annotations

from estimator.validation import factor_fit
from estimator.validation.factor_fit import FitRows

FIT_TAG = "mcore06-moe"


def fit_problems(tag: str = FIT_TAG) -> FitRows:
    """(layout problem, published tokens/s of the whole run) of every row tagged `tag`."""
    return factor_fit.fit_problems(tag)


def core06_errors(problems: FitRows, factor: float) -> list[float]:
    """Signed errors (%) of the rows' tokens/s at an expert time factor `factor`."""
    return factor_fit.factor_errors(problems, "core06_expert_factor", factor)


def calibrate_core06_expert_factor(grid: list[float] | None = None) -> tuple[float, float]:
    """(factor, mean |error| %) minimising the mean absolute error over the rows tagged
    `fit = "mcore06-moe"`; grid 1.0-3.5 by 0.05."""
    return factor_fit.grid_fit(fit_problems(), "core06_expert_factor", grid or factor_fit.default_grid())
