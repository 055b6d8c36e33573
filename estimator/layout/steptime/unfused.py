"""Element-wise kernels a stack runs as separate eager PyTorch ops (s per layer and micro-batch on
one card, memory-bound at the HBM rate), vectorized over candidate layouts. Two cases, each counted
op by op from the code the rows run:

1. Kernels a stack never fuses (a stack profile's `unfused_kernels`; MindSpeed-LLM 1.0.RC3):

The model prices every fused element-wise kernel with the layer's other memory-bound traffic
(`layer_compute.compute_terms`: the norms in ELEMENTWISE_H_BYTES, the gated activation's read 2f +
write f; the fused RoPE kernel's one read and write of Q and K is not priced). Where a script runs a
kernel unfused, each eager op reads its inputs and writes its output in HBM; what that adds to the
priced traffic is counted here (the whole chain for RoPE, whose fused kernel is not priced; the excess
over the fused kernel for the norms and the activation), bytes counted op by op from the code the rows run (MindSpeed-LLM
1.0.RC3 on Megatron-Core 0.6; docs/sources.md#mindspeed), 16-bit activations, at the streaming HBM
rate (`Rates.hbm`), as every other element-wise kernel of the model. Bytes per element of the
tensor the op transforms, (forward, backward):

- rope, per query and key element (modellink/core/models/common/embeddings/rotary_pos_embedding.py
  apply_rotary_pos_emb_bshd without --use-fused-rotary-pos-emb: t·cos + _rotate_half(t)·sin).
  Forward: t·cos (read 2, write 2), -x2 of the half (1 + 1 per element of t), cat(-x2, x1) (2 + 2),
  ·sin (2 + 2), the add (4 + 2): 20 B (npu_rotary_mul's read 2 + write 2 is not priced, so all 20).
  Backward: grad·sin (2 + 2), the negated half (1 + 1), chunk's backward joining the halves
  (2 + 2), grad·cos (2 + 2), the two gradients of t added (4 + 2): 20 B.
  cos / sin are one row per token shared by the heads (not counted). Elements per token: the
  query and key heads on the card times the rotary width (head_dim; MLA: qk_rope_head_dim on
  every query head and the one shared key).
- rmsnorm, per element of the normalised width (Megatron's RMSNorm, megatron/legacy/model/
  rms_norm.py, without --use-fused-rmsnorm: x.float(), pow(2), mean, ·rsqrt, type_as, ·weight).
  Forward 6 + 8 + 4 + 8 + 6 + 4 = 36 B against npu_rms_norm's 4: 32 B more. Backward: ·weight
  (4) and its weight gradient (8), the float cast (6), ·rsqrt (8) and the rsqrt gradient's
  product and sum (16), mean's expanded gradient (4), pow's gradient (self^1, x2, x grad: 28),
  the two gradients of x added (12), the cast back (6): 92 B against the fused backward's read
  dy, x and write dx (6): 86 B more. Widths: the layer's two norms of h (divided by t under
  sequence parallel) and MLA's latent norms (q_lora_rank, kv_lora_rank).
- swiglu, per element of the activation's output f (Megatron-Core 0.6 MLP glu: chunk, silu(x0)·x1;
  MindSpeed's experts the same). Forward silu (2 + 2) and the product (4 + 2): 10 B against
  npu_swiglu's read 4 + write 2: 4 B more. Backward: the two products' gradients (6 + 6), silu's
  backward (6), chunk's backward joining the halves (8): 26 B against the fused backward's read 2 +
  4, write 4: 16 B more. Width: the dense MLP's f, or a MoE layer's routed k·f_e and shared
  experts' n_s·f_e per token, divided by t; gated MLPs only.

The forward bytes are paid once per forward pass (and the recomputed forward), the backward bytes
once. Units: seconds.

2. Features of a model for which a stack has no fused kernel (Megatron-Core 0.15-0.16, the commit
Megatron-Bridge v0.3.0 pins, 3rdparty/Megatron-LM b0cc2706, 2026-02-23;
docs/sources.md#megatron-bridge): 2-byte elements, every op reading its inputs and writing its output
once (no cache reuse):

- YaRN rotary embedding (`stack.unfused_rope_types`), rope_utils._apply_rotary_pos_emb_bshd on Q
  and K: forward t·cos (4 B per element), the rotate-half negation of one half (2) and its cat (4),
  ·sin (4), the sum (6) and the final cat with the empty pass-through part (4): 24 B; backward the
  two products' gradients (4 + 4), the negation (2), chunk's cat (4), the sum of the two gradient
  paths (6) and the full-width slice's zero-filled copy (6): 26 B. On (heads + kv_heads)·head_dim
  elements per token, split by TP; recomputed with a full-recompute forward (selective recompute's
  core_attn starts after it). MLA is excluded (its YaRN runs under position_embedding_type "rope",
  fused).
- The routed experts' output bias scaled by the routing probability (Megatron-Core 0.15-0.16
  TEGroupedMLP._apply_bias, used where the probabilities are applied inside the activation,
  `stack.moe_probs_in_activation`, and the experts have biases, `arch.expert_bias`: fc2 is built
  with skip_bias_add, and per local expert `t + b * p` over torch.split views, then torch.cat):
  forward b·p (write 2), the add (read 4, write 2), the cat (4): 12 B; backward the two product-sum
  reductions for the bias and probability gradients (6 + 6) and split's cat of the output gradient
  (4): 16 B. On k·h elements per routed token copy (the card's T·k copies, as ExpertGemm).

Nothing is calibrated.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from estimator.arrays import FloatArray, Num, arr
from estimator.layout.steptime.candidates import Candidates
from estimator.model.transformer import Architecture, mlp_matrices

if TYPE_CHECKING:
    from estimator.layout.problem import LayoutProblem

# HBM bytes per element of the transformed tensor added to the priced traffic: (forward, backward)
UNFUSED_BYTES: dict[str, tuple[float, float]] = {
    "rope": (20.0, 20.0),
    "rmsnorm": (32.0, 86.0),
    "swiglu": (4.0, 16.0),
}


def rope_elements(arch: Architecture, tp: Num) -> FloatArray:
    """Query and key elements per token the rotary embedding transforms on one card."""
    if arch.is_mla:
        rope = float(arch.qk_rope_head_dim or 0)
        return arr(arch.num_attention_heads * rope / arr(tp) + rope)
    return arr((arch.num_attention_heads + arch.num_key_value_heads) * float(arch.head_dim) / arr(tp))


def rmsnorm_elements(arch: Architecture, tp: Num, sp: Num) -> FloatArray:
    """Elements per token the layer's RMSNorms normalise on one card (sp: sequence parallel)."""
    latent = float(arch.q_lora_rank or 0) + float(arch.kv_lora_rank or 0)
    return arr(2.0 * arch.hidden_size / np.where(sp, tp, 1.0) + latent)


def swiglu_elements(arch: Architecture, moe: bool, tp: Num) -> FloatArray:
    """Activation outputs per token of the layer's gated MLP on one card (0 for a non-gated MLP)."""
    if mlp_matrices(arch.hidden_act) != 3:
        return arr(0.0 * arr(tp))
    if moe:
        width = float((arch.num_experts_per_tok + arch.n_shared_experts) * arch.moe_intermediate_size)
    else:
        width = float(arch.intermediate_size)
    return arr(width / arr(tp))


def unfused_s(
    arch: Architecture, kernels: tuple[str, ...], moe: bool, c: Candidates, tokens: Num, hbm: float
) -> FloatArray:
    """Seconds the stack's unfused kernels add to one layer and micro-batch on one card (tokens: the
    card's tokens of the micro-batch; hbm: streaming HBM bytes/s)."""
    elements = {
        "rope": lambda: rope_elements(arch, c.tp),
        "rmsnorm": lambda: rmsnorm_elements(arch, c.tp, c.sp),
        "swiglu": lambda: swiglu_elements(arch, moe, c.tp),
    }
    total = arr(0.0 * c.tp)
    if not kernels:  # every profile's default: nothing to price (the step-time model's hot path)
        return total
    for kernel in kernels:
        fwd, bwd = UNFUSED_BYTES[kernel]
        total = total + elements[kernel]() * (fwd * c.forward_passes + bwd)
    return arr(arr(tokens) * total / hbm)


# Megatron-Core 0.15-0.16's unfused chains (module docstring, case 2)
ROPE_FWD_BYTES = 24.0  # per element of Q and K (module docstring)
ROPE_BWD_BYTES = 26.0
EXPERT_BIAS_FWD_BYTES = 12.0  # per element of the routed experts' fc2 output
EXPERT_BIAS_BWD_BYTES = 16.0


def unfused_rope_s(problem: LayoutProblem, c: Candidates, tokens: Num, hbm: Num) -> FloatArray:
    """Seconds of the unfused rotary chain on Q and K for one layer and micro-batch of `tokens` on a
    card (0 where the stack fuses the model's rope type); `hbm` in bytes/s."""
    arch, stack = problem.arch, problem.stack
    # a stack that never fuses RoPE ("rope" in unfused_kernels) pays it in unfused_s already
    never_fused = "rope" in stack.unfused_kernels
    if arch.is_mla or never_fused or arch.rope_type not in stack.unfused_rope_types:
        return arr(0.0 * c.tp)
    per_pass = ROPE_FWD_BYTES * c.forward_passes + ROPE_BWD_BYTES
    return arr(tokens * rope_elements(arch, c.tp) * per_pass / hbm)


def unfused_expert_bias_s(
    problem: LayoutProblem, c: Candidates, tokens: Num, hbm: Num, imbalance: float
) -> FloatArray:
    """Seconds of the per-expert `t + b * p` of the experts' output bias for one MoE layer and
    micro-batch (0 without expert biases or where the probabilities are applied after the combine)."""
    arch, stack = problem.arch, problem.stack
    if not (arch.expert_bias and stack.moe_probs_in_activation):
        return arr(0.0 * c.tp)
    copies = tokens * c.etp / c.tp * arch.num_experts_per_tok * imbalance
    per_pass = EXPERT_BIAS_FWD_BYTES * c.forward_passes + EXPERT_BIAS_BWD_BYTES
    return arr(copies * float(arch.hidden_size) * per_pass / hbm)
