"""MCORE06_EXPERT_TIME_FACTOR (estimator.layout.steptime.moe_core06), fitted once on every row of
reference_data/throughput_runs.toml tagged `fit = "mcore06-moe"`: the MindSpeed-LLM 1.0.RC3 README's
GPU reference column for its MoE models (suite "ascend-gpu-reference"). On those GPUs the rest of the
step is what the NVIDIA suites validate, so the factor prices the Megatron-Core 0.6 MoE path alone;
the Ascend MoE rows of the same table are its hold-outs. The fit minimises the mean absolute error
of tokens/s per card over a grid of the factor.
"""

from __future__ import annotations

import dataclasses

from estimator.contract.resolve import resolve
from estimator.contract.scenario import validate_shape
from estimator.layout.problem import LayoutProblem
from estimator.layout.search import search
from estimator.plan.compose import fabric_for, layout_problem
from estimator.validation.published_runs import published_runs, run_scenario

FIT_TAG = "mcore06-moe"


def fit_problems(tag: str = FIT_TAG) -> list[tuple[LayoutProblem, float]]:
    """(layout problem, published tokens/s of the whole run) of every row tagged `tag`."""
    models, runs = published_runs()
    out = []
    for run in (r for r in runs if r.get("fit") == tag):
        resolved = resolve(validate_shape(run_scenario(run, models)))
        problem = layout_problem(resolved, run["gpus"], fabric_for(resolved, run["gpus"]))
        out.append((problem, float(run["tokens_per_s_per_gpu"]) * run["gpus"]))
    return out


def core06_errors(problems: list[tuple[LayoutProblem, float]], factor: float) -> list[float]:
    """Signed errors (%) of the rows' tokens/s at an expert time factor `factor`."""
    errors = []
    for problem, published in problems:
        found = search(dataclasses.replace(problem, core06_expert_factor=factor))
        shown = found.best or found.closest
        if shown is not None:
            errors.append(100.0 * (float(shown.tokens_per_s) - published) / published)
    return errors


def calibrate_core06_expert_factor(grid: list[float] | None = None) -> tuple[float, float]:
    """(factor, mean |error| %) minimising the mean absolute error over the rows tagged
    `fit = "mcore06-moe"`; grid 1.0-3.5 by 0.05."""
    grid = grid or [round(1.0 + 0.05 * i, 2) for i in range(51)]
    problems = fit_problems()
    fits = []
    for factor in grid:
        errors = core06_errors(problems, factor)
        fits.append((factor, sum(abs(e) for e in errors) / max(len(errors), 1)))
    return min(fits, key=lambda fit: fit[1])
