"""One dimensionless factor of the layout problem fitted on the published rows tagged for it
(reference_data/throughput_runs.toml `fit = "<tag>"`): the rows' layout problems, their signed errors
at a factor, and the factor of a grid that minimises the mean absolute error of tokens/s per card.
Used by each fitted factor's module (validation.moe_core06, validation.triton_head), which names its
rows, its field and its grid; validation.ascend reads its rows here too (its fit has two factors)."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

from estimator.contract.resolve import resolve
from estimator.contract.scenario import validate_shape
from estimator.layout.problem import LayoutProblem
from estimator.layout.search import search
from estimator.plan.compose import fabric_for, layout_problem
from estimator.validation.published_runs import published_runs, run_scenario

FitRows = list[tuple[LayoutProblem, float]]


def fit_problems(tag: str) -> FitRows:
    """(layout problem, published tokens/s of the whole run) of every row tagged `tag`."""
    models, runs = published_runs()
    out = []
    for run in (r for r in runs if r.get("fit") == tag):
        resolved = resolve(validate_shape(run_scenario(run, models)))
        problem = layout_problem(resolved, run["gpus"], fabric_for(resolved, run["gpus"]))
        out.append((problem, float(run["tokens_per_s_per_gpu"]) * run["gpus"]))
    return out


def factor_errors(problems: FitRows, field: str, factor: float) -> list[float]:
    """Signed errors (%) of the rows' tokens/s with LayoutProblem.`field` set to `factor`."""
    errors = []
    for problem, published in problems:
        changes: dict[str, Any] = {field: factor}
        found = search(dataclasses.replace(problem, **changes))
        shown = found.best or found.closest
        if shown is not None:
            errors.append(100.0 * (float(shown.tokens_per_s) - published) / published)
    return errors


def default_grid() -> list[float]:
    """1.0 to 3.5 by 0.05."""
    return [round(1.0 + 0.05 * i, 2) for i in range(51)]


def grid_fit(problems: FitRows, field: str, grid: Sequence[float]) -> tuple[float, float]:
    """(factor, mean |error| %) of the grid's factor with the least mean absolute error."""
    fits = []
    for factor in grid:
        errors = factor_errors(problems, field, factor)
        fits.append((factor, sum(abs(e) for e in errors) / max(len(errors), 1)))
    return min(fits, key=lambda fit: fit[1])
