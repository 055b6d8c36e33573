"""The step time at an MFU of 1: the fastest any run of a layout problem's batch can step.

Model FLOPs utilization (MFU, Chowdhery et al. 2022, "PaLM", appendix B: achieved model FLOP/s over
the cards' peak) is this time over the measured step time, so a measured step at or below it runs
the chips at or above their peak: a unit mistake, which the diagnosis (estimator.plan.diagnose) and
the pilot's calibration (estimator.plan.pilot, estimator.plan.calibration.check_plausible) refuse.
"""

from __future__ import annotations

from estimator.layout.problem import LayoutProblem


def step_time_at_peak_s(problem: LayoutProblem) -> float:
    """Seconds per step at MFU 1: step tokens (global_batch_seqs x seq_len) x model FLOP per token
    (problem.flop_per_token) / (cards x the accelerator's dense peak FLOP/s at the problem's
    precision). 0.0 when the catalog gives no peak (no bound: every measured step is above it)."""
    peak = problem.accelerator.peak_flops(problem.precision)
    if peak <= 0:
        return 0.0
    step_tokens = problem.global_batch_seqs * problem.seq_len
    return step_tokens * problem.flop_per_token / (problem.cards * peak)
