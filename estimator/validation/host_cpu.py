"""Does the model's host time depend on the host CPU? The Grace check of docs/steptime.md.

The host constants of the step-time model (HOST_OP_S, EXPERT_HOST_S; the MoE host floor and the
operators issued after the dropless dispatcher's sync) stand for x86 server hosts: EXPERT_HOST_S
binds only on the micro-batch-1 Qwen3-30B-A3B rows on 8 DGX B200 (Xeon). Transformer Engine issue
2053 (NVIDIA/TransformerEngine, 2025-08-11, docs/sources.md#transformer-engine) measures the host
time of one BF16 Linear forward (hidden 2,048, 8,192 tokens) at 37.08 us on GB200's Grace, 33.17 us
on GH200's Grace and 13.48 us on a DGX H100's Xeon Platinum 8480C (torch.nn.Linear, one operator):
2.75x per eager operator on GB200. This module prices the GB200 rows with that ratio on their host
terms (LayoutProblem.host_time_factor) and refits the per-expert costs with it, so the evidence
for or against a host-CPU term is reproducible:

    python -m estimator.validation.host_cpu

Nothing here sets a prediction: plans keep host_time_factor 1.0 (docs/steptime.md says why).
"""

from __future__ import annotations

import dataclasses
import itertools

from estimator.contract.resolve import resolve
from estimator.contract.scenario import validate_shape
from estimator.layout.problem import LayoutProblem
from estimator.layout.search import search
from estimator.plan.compose import fabric_for, layout_problem
from estimator.validation.expert_costs import expert_cost_runs
from estimator.validation.published_runs import published_runs, run_scenario

# Host time of one torch.nn.Linear forward, us (TE issue 2053, 2025-08-11: BF16, hidden 2,048,
# 8,192 tokens; the CPU-runtime column of the table).
TE2053_LINEAR_HOST_US = {"gb200-grace": 37.08, "gh200-grace": 33.17, "dgx-h100-xeon-8480c": 13.48}
GRACE_ACCELERATORS = ("gb200", "gb300", "gh200")  # superchips whose host is their Grace CPU


def grace_ratio() -> float:
    """Per-operator host time of GB200's Grace over a DGX H100's Xeon (TE issue 2053): 2.75."""
    return TE2053_LINEAR_HOST_US["gb200-grace"] / TE2053_LINEAR_HOST_US["dgx-h100-xeon-8480c"]


def is_grace(problem: LayoutProblem) -> bool:
    """True where the card's host is a Grace CPU (GB200, GB300, GH200 superchips)."""
    return problem.accelerator.id in GRACE_ACCELERATORS


def signed_error_pct(problem: LayoutProblem, published_per_card: float, factor: float) -> float:
    """Signed error (%) of the fixed layout's tokens/s per card with host_time_factor = factor."""
    found = search(dataclasses.replace(problem, host_time_factor=factor))
    shown = found.best or found.closest
    if shown is None:
        return float("nan")
    return 100.0 * (float(shown.tokens_per_s) / problem.cards - published_per_card) / published_per_card


def grace_rows(factor: float) -> list[tuple[str, float, float]]:
    """(row id, error % as priced, error % with the Grace host at `factor`) of every published row
    on a Grace superchip."""
    models, runs = published_runs()
    out = []
    for run in runs:
        if run.get("accelerator") not in GRACE_ACCELERATORS:
            continue
        resolved = resolve(validate_shape(run_scenario(run, models)))
        problem = layout_problem(resolved, run["gpus"], fabric_for(resolved, run["gpus"]))
        published = float(run["tokens_per_s_per_gpu"])
        out.append(
            (
                run["id"],
                signed_error_pct(problem, published, 1.0),
                signed_error_pct(problem, published, factor),
            )
        )
    return out


def refit_expert_costs(factor: float) -> tuple[float, float, float]:
    """(EXPERT_GEMM_OVERHEAD_S, EXPERT_HOST_S, mean |error| %) of the joint per-expert fit
    (expert_costs.calibrate_expert_costs' runs and grid) with the Grace rows' host at `factor`."""
    runs = [
        (dataclasses.replace(p, host_time_factor=factor if is_grace(p) else 1.0), published)
        for p, published in expert_cost_runs()
    ]
    grid = itertools.product([1e-6 * i for i in range(0, 81, 5)], [1e-6 * i for i in range(0, 151, 5)])
    fits = []
    for overhead, host in grid:
        errors = []
        for problem, published in runs:
            found = search(dataclasses.replace(problem, expert_gemm_overhead_s=overhead, expert_host_s=host))
            shown = found.best or found.closest
            if shown is not None:
                errors.append(abs(float(shown.tokens_per_s) - published) / published)
        fits.append((overhead, host, 100.0 * sum(errors) / len(errors)))
    return min(fits, key=lambda fit: fit[2])


def main() -> None:
    """Prints the Grace rows at the TE-2053 ratio and the per-expert refit with and without it."""
    ratio = grace_ratio()
    print(f"Grace / Xeon host time per operator (TE issue 2053): {ratio:.2f}")
    for case, before, after in grace_rows(ratio):
        print(f"{case:45s} {before:+7.1f}% -> {after:+7.1f}%")
    for factor in (1.0, ratio):
        o, h, err = refit_expert_costs(factor)
        print(
            f"per-expert refit, Grace host x{factor:.2f}: {o * 1e6:.0f} us / {h * 1e6:.0f} us, mean {err:.1f}%"
        )


if __name__ == "__main__":
    main()
