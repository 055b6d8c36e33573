"""Published MoE, FP8, long-context and Ascend runs with their exact layouts and software versions
(reference_data/throughput_runs.toml): predicted against published tokens/s per GPU. Nothing was
calibrated on them."""

from __future__ import annotations

import dataclasses
import tomllib
from typing import Any

from estimator.contract.resolve import Resolved, resolve
from estimator.contract.scenario import validate_shape
from estimator.errors import ScenarioError
from estimator.layout.search import LayoutEval, search
from estimator.plan.compose import fabric_for, layout_problem
from estimator.validation.rows import REFERENCE_DIR, row


def published_runs() -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """(models, runs) of reference_data/throughput_runs.toml: MoE, FP8 and long-context runs."""
    with (REFERENCE_DIR / "throughput_runs.toml").open("rb") as fh:
        data = tomllib.load(fh)
    return data["models"], data["runs"]


def run_scenario(run: dict[str, Any], models: dict[str, Any], **training: object) -> dict[str, Any]:
    """The scenario of one published run (its layout fixed as published); `training` overrides."""
    layout = dict(run["layout"])
    model_parallel = layout["tp"] * layout["pp"] * layout["cp"]
    layout["dp"] = run["gpus"] // model_parallel
    train = {
        "tokens": 1e12,
        "seq_len": run["seq_len"],
        "global_batch_tokens": run["global_batch_seqs"] * run["seq_len"],
        "precision": run["precision"],
        "stack": run["stack"],
        "stack_overrides": dict(run.get("stack_overrides", {})),
        "moe_imbalance": run["moe_imbalance"],
    }
    if "grad_dtype" in run:
        train["grad_dtype"] = run["grad_dtype"]
    train.update(training)
    return {
        "name": run["id"],
        "model": dict(models[run["model"]]),
        "training": train,
        "hardware": {
            "accelerator": run.get("accelerator", "h100-sxm"),
            "server": run.get("server", "dgx-h100"),
        },
        "cluster": {"cards": run["gpus"]},
        "parallelism": layout,
    }


def published_layout(r: Resolved) -> LayoutEval:
    """The scenario's fixed (published) layout, timed: the layout ran, so it is evaluated even where
    the memory model finds it over HBM (a plan would refuse it, plan.refusal; validation compares
    the step time). ScenarioError when no layout passes the rules."""
    cards = int(r.scenario.cluster.cards or 0)
    found = search(layout_problem(r, cards, fabric_for(r, cards)))
    shown = found.best or found.closest
    if shown is None:
        raise ScenarioError("no layout passes the rules", "parallelism")
    return shown


def predicted_tokens_per_s_per_gpu(scenario: dict[str, Any]) -> float:
    """Predicted training tokens/s per card of a scenario with a fixed layout, as published
    (published_layout); nan when no layout passes the rules."""
    r = resolve(validate_shape(scenario))
    try:
        shown = published_layout(r)
    except ScenarioError:
        return float("nan")
    return float(shown.tokens_per_s) / int(r.scenario.cluster.cards or 1)


def calibrate_expert_gemm_overhead(grid: list[float] | None = None) -> tuple[float, float]:
    """(seconds per expert GEMM, mean |error| %) minimising the mean absolute error of the tokens/s
    of every MoE run (suite "moe") over `grid` (0-100 us): EXPERT_GEMM_OVERHEAD_S is fitted here,
    once, on all of them together. A run whose published layout the memory model cannot fit is
    left out (the DeepSeek-V3 DualPipe run; its stack has no per-expert GEMMs anyway)."""
    grid = grid if grid is not None else [1e-6 * i for i in range(0, 101, 2)]
    models, runs = published_runs()
    problems = []
    for run in (r for r in runs if r["suite"] == "moe"):
        resolved = resolve(validate_shape(run_scenario(run, models)))
        problem = layout_problem(resolved, run["gpus"], fabric_for(resolved, run["gpus"]))
        problems.append((problem, float(run["tokens_per_s_per_gpu"]) * run["gpus"]))

    def mean_error(overhead: float) -> float:
        errors: list[float] = []
        for problem, published in problems:
            best = search(dataclasses.replace(problem, expert_gemm_overhead_s=overhead)).best
            if best is not None:
                errors.append(abs(float(best.tokens_per_s) - published) / published)
        return 100.0 * sum(errors) / len(errors)

    fits = [(x, mean_error(x)) for x in grid]
    return min(fits, key=lambda fit: fit[1])


HOST_FIT_SUITES = ("moe", "blackwell")


def calibrate_expert_host_s(grid: list[float] | None = None) -> tuple[float, float]:
    """(host seconds per expert GEMM, mean |error| %) minimising the mean absolute error of the
    tokens/s of every run of HOST_FIT_SUITES whose stack launches one GEMM per local expert behind the
    dropless dispatcher's host sync, over `grid` (0-200 us): EXPERT_HOST_S is fitted here, once, on
    all of them together, with EXPERT_GEMM_OVERHEAD_S as committed (moe.host_issue_s)."""
    grid = grid if grid is not None else [1e-6 * i for i in range(0, 201, 5)]
    models, runs = published_runs()
    problems = []
    for run in (r for r in runs if r["suite"] in HOST_FIT_SUITES):
        resolved = resolve(validate_shape(run_scenario(run, models)))
        problem = layout_problem(resolved, run["gpus"], fabric_for(resolved, run["gpus"]))
        if problem.stack.per_expert_gemms and problem.stack.moe_host_sync and problem.arch.is_moe:
            problems.append((problem, float(run["tokens_per_s_per_gpu"]) * run["gpus"]))

    def mean_error(host_s: float) -> float:
        errors: list[float] = []
        for problem, published in problems:
            found = search(dataclasses.replace(problem, expert_host_s=host_s))
            best = found.best or found.closest  # the layout ran: timed even where the memory model refuses it
            if best is not None:
                errors.append(abs(float(best.tokens_per_s) - published) / published)
        return 100.0 * sum(errors) / len(errors)

    fits = [(x, mean_error(x)) for x in grid]
    return min(fits, key=lambda fit: fit[1])


def throughput_rows() -> list[dict[str, Any]]:
    """Rows {case, suite, published, predicted, error_pct, source, software} for the published runs."""
    models, runs = published_runs()
    rows = []
    for run in runs:
        predicted = predicted_tokens_per_s_per_gpu(run_scenario(run, models))
        published = float(run["tokens_per_s_per_gpu"])
        rows.append(
            {
                "case": run["id"],
                "suite": run["suite"],
                "published": published,
                "predicted": round(predicted, 1),
                "error_pct": round(100.0 * (predicted - published) / published, 1),
                "source": run["source"],
                "software": run["software"],
            }
        )
    return rows


def published_run_rows() -> list[dict[str, Any]]:
    """MoE, FP8, long-context and Ascend runs with their published layouts and software versions
    (reference_data/throughput_runs.toml): predicted against published tokens/s per GPU."""
    return [
        row(
            r["suite"],
            r["case"],
            "tokens/s per GPU",
            r["published"],
            r["predicted"],
            f"{r['source']}; {r['software']}",
        )
        for r in throughput_rows()
    ]
