"""The two calibrated costs of per-expert GEMMs (estimator.layout.steptime.constants), fitted together,
once, on every published MoE run whose stack launches one GEMM per local expert (suites moe,
blackwell and blackwell-releases of reference_data/throughput_runs.toml):

- EXPERT_GEMM_OVERHEAD_S: GPU-side time of each per-expert GEMM (moe.expert_time_s);
- EXPERT_HOST_S: host time to issue each per-expert GEMM, which shows only where the layer's GPU work
  is shorter behind the dropless dispatcher's host sync (moe.host_issue_s, layer_comm.host_floor).

The fit minimises the mean absolute error of tokens/s per GPU over a grid of both. Each published
layout is timed as it ran (validation: the memory model's refusal does not drop a row).
"""

from __future__ import annotations

import dataclasses
import itertools

from estimator.contract.resolve import resolve
from estimator.contract.scenario import validate_shape
from estimator.layout.problem import LayoutProblem
from estimator.layout.search import search
from estimator.layout.steptime.constants import EXPERT_GEMM_OVERHEAD_S, EXPERT_HOST_S
from estimator.plan.compose import fabric_for, layout_problem
from estimator.validation.published_runs import published_runs, run_scenario

FIT_SUITES = ("moe", "blackwell", "blackwell-releases")


def expert_cost_runs() -> list[tuple[LayoutProblem, float]]:
    """(problem, published tokens/s of the whole run) of every FIT_SUITES run with per-expert GEMMs."""
    models, runs = published_runs()
    out = []
    for run in (r for r in runs if r["suite"] in FIT_SUITES):
        resolved = resolve(validate_shape(run_scenario(run, models)))
        problem = layout_problem(resolved, run["gpus"], fabric_for(resolved, run["gpus"]))
        if problem.stack.per_expert_gemms and problem.arch.is_moe:
            out.append((problem, float(run["tokens_per_s_per_gpu"]) * run["gpus"]))
    return out


def mean_error_pct(runs: list[tuple[LayoutProblem, float]], overhead_s: float, host_s: float) -> float:
    """Mean |predicted - published| / published of `runs` (%) with both costs set."""
    errors: list[float] = []
    for problem, published in runs:
        found = search(dataclasses.replace(problem, expert_gemm_overhead_s=overhead_s, expert_host_s=host_s))
        shown = found.best or found.closest
        if shown is not None:
            errors.append(abs(float(shown.tokens_per_s) - published) / published)
    return 100.0 * sum(errors) / len(errors)


def calibrate_expert_costs(
    overheads: list[float] | None = None, hosts: list[float] | None = None
) -> tuple[float, float, float]:
    """(EXPERT_GEMM_OVERHEAD_S, EXPERT_HOST_S, mean |error| %) at the grid point with the smallest mean
    error over expert_cost_runs() (default grid: 0-80 us in 5 us steps x 0-150 us in 5 us steps)."""
    overheads = overheads if overheads is not None else [1e-6 * i for i in range(0, 81, 5)]
    hosts = hosts if hosts is not None else [1e-6 * i for i in range(0, 151, 5)]
    runs = expert_cost_runs()
    fits = [(o, h, mean_error_pct(runs, o, h)) for o, h in itertools.product(overheads, hosts)]
    return min(fits, key=lambda fit: fit[2])


def calibrate_expert_gemm_overhead(grid: list[float] | None = None) -> tuple[float, float]:
    """(EXPERT_GEMM_OVERHEAD_S, mean |error| %) over `grid` with EXPERT_HOST_S as committed."""
    o, _h, err = calibrate_expert_costs(grid if grid is not None else None, [EXPERT_HOST_S])
    return o, err


def calibrate_expert_host_s(grid: list[float] | None = None) -> tuple[float, float]:
    """(EXPERT_HOST_S, mean |error| %) over `grid` with EXPERT_GEMM_OVERHEAD_S as committed."""
    _o, h, err = calibrate_expert_costs([EXPERT_GEMM_OVERHEAD_S], grid)
    return h, err
