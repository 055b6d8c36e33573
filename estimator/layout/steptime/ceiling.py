"""The highest MFU the step-time model can predict for a layout problem, whatever the layout: what
the deadline sizing starts its scan from (plan.deadline), so no cluster size that could meet the
deadline lies below the first it looks at.

MFU = tokens/s · counted FLOP per token / (cards · peak of the training precision), the counted
FLOPs being the scenario's convention (money.pricing.model_flops: 6·N_active plus, by default,
PaLM's 12·L·s·d_attn, the whole attention matrix). A card's tokens/s is at most 1 / t, t the time
its share of one token's compute takes at the fastest rates the model prices it at:

    t = 6 · P_linear / R_linear + 3 · A_causal / (ATTENTION_EFFICIENCY_MAX · R_peak16)

- P_linear: the parameters a token runs through as GEMMs (ParamCounts.active without the input
  embedding, a lookup, where the output layer has its own weights, and without the norms); each
  runs 2 FLOP per parameter forward and 4 backward (Kaplan et al. 2020), at most at the linears'
  rate R_linear (steptime.rates: the GEMM roofline's compute side, FP8 where trained in FP8; a
  16-bit GEMM runs at most that fast);
- A_causal: the attention core's forward FLOPs per token with the causal mask skipped (the keys
  `attended_keys(causal=True)` counts, over the score and value widths `attention.score_dims`), a
  backward of at least twice the forward (attention.BACKWARD_TO_FORWARD_FUSED 2.5, _UNFUSED 2.0 on
  the whole matrix); a fused kernel reaches a fraction of the 16-bit peak R_peak16 that is its base
  efficiency (at most 1) times its head-size factor (at most attention.HEAD_FACTOR_MAX) times a
  sequence factor below 1, so at most ATTENTION_EFFICIENCY_MAX of it; an unfused core runs at the
  16-bit GEMM rate, below R_peak16.

Everything else the model adds (element-wise kernels, communication, the bubble, recomputation,
the optimizer, host overheads, the roofline's memory side) only lengthens the step. The ceiling is
above 1 where the convention counts more FLOPs than the kernels run: at 128K tokens the causal
kernels skip half the matrix PaLM counts (tests/estimator/test_mfu_ceiling.py checks the bound
against the model's own layouts). Dimensionless.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from estimator.layout.steptime.attention import HEAD_FACTOR_MAX, score_dims
from estimator.layout.steptime.rates import rates
from estimator.model.transformer import attended_keys

if TYPE_CHECKING:
    from estimator.layout.problem import LayoutProblem

# a fused kernel's share of the 16-bit peak: its base efficiency (at most 1) times its head factor
ATTENTION_EFFICIENCY_MAX = HEAD_FACTOR_MAX


def mfu_ceiling(problem: LayoutProblem) -> float:
    """The MFU no layout of `problem` exceeds in the step-time model (module docstring; dimensionless)."""
    arch, counts = problem.arch, problem.counts
    r = rates(problem)
    lookup = counts.embedding if counts.lm_head > 0 else 0.0  # a tied table is the output layer's GEMM
    norms = counts.norms_per_layer * arch.num_hidden_layers + counts.final_norm
    linear = 6.0 * max(counts.active - lookup - norms, 0.0) / r.linear
    d_qk, d_v = score_dims(arch)
    keys = float(attended_keys(arch, problem.seq_len, causal=True))
    forward = 2.0 * keys * arch.num_attention_heads * (d_qk + d_v) * arch.num_hidden_layers
    attention = 3.0 * forward / (ATTENTION_EFFICIENCY_MAX * r.peak16)
    peak = problem.accelerator.peak_flops(problem.precision)
    return float(problem.flop_per_token / (peak * (linear + attention)))
