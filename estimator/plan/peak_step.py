"""The step time with the kernels at peak: the fastest any run of a layout problem's batch can step.

The FLOPs the kernels compute per token (6·N and the causal half of the attention matrix) over the
cards' peak: a measured step at or below it runs the chips at or above their peak, a unit mistake,
which the diagnosis (estimator.plan.diagnose) and the pilot's calibration (estimator.plan.pilot,
estimator.plan.calibration.check_plausible) refuse. Where attention is a small share this is MFU 1
(Chowdhery et al. 2022, "PaLM", appendix B); at long context the model FLOPs count about twice what
the kernels run (plan.mfu_range.mfu_ceiling).
"""

from __future__ import annotations

from estimator.layout.problem import LayoutProblem
from estimator.model.transformer import flops_per_token_terms
from estimator.money.pricing import causal_share


def step_time_at_peak_s(problem: LayoutProblem) -> float:
    """Seconds per step with the kernels at peak: step tokens (global_batch_seqs x seq_len) x the
    FLOP per token the kernels compute (6·N plus the attention's causal half: money.pricing
    .causal_share of PaLM's whole-matrix count) / (cards x the accelerator's dense peak FLOP/s at
    the problem's precision). Not the model FLOPs' MFU 1: at long context they count twice the
    attention the kernels run, and a real step is faster than that (DeepSeek-V3 at 128K: 10.2 s
    for 32 sequences on 768 Ascend 910C, not 18.8). 0.0 when the catalog gives no peak (no bound:
    every measured step is above it)."""
    peak = problem.accelerator.peak_flops(problem.precision)
    if peak <= 0:
        return 0.0
    dense, attention = (
        float(x) for x in flops_per_token_terms(problem.arch, problem.seq_len, problem.counts)
    )
    computed = (dense + attention) * causal_share(dense, attention)
    step_tokens = problem.global_batch_seqs * problem.seq_len
    return step_tokens * computed / (problem.cards * peak)
