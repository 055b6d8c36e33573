"""Element-wise chains a stack runs as separate PyTorch ops where a model's feature has no fused
kernel in it (s per layer and micro-batch on one card, memory-bound at the HBM rate), vectorized over
candidate layouts. Bytes are counted op by op from the code of Megatron-Core at the commit
Megatron-Bridge v0.3.0 (26.02) pins (3rdparty/Megatron-LM b0cc2706, 2026-02-23;
docs/sources.md#megatron-bridge), 2-byte elements, every op reading its inputs and writing its output
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

from estimator.arrays import FloatArray, Num, arr

if TYPE_CHECKING:
    from estimator.layout.problem import LayoutProblem
    from estimator.layout.steptime.candidates import Candidates

ROPE_FWD_BYTES = 24.0  # per element of Q and K (module docstring)
ROPE_BWD_BYTES = 26.0
EXPERT_BIAS_FWD_BYTES = 12.0  # per element of the routed experts' fc2 output
EXPERT_BIAS_BWD_BYTES = 16.0


def unfused_rope_s(problem: LayoutProblem, c: Candidates, tokens: Num, hbm: Num) -> FloatArray:
    """Seconds of the unfused rotary chain on Q and K for one layer and micro-batch of `tokens` on a
    card (0 where the stack fuses the model's rope type); `hbm` in bytes/s."""
    arch, stack = problem.arch, problem.stack
    if arch.is_mla or arch.rope_type not in stack.unfused_rope_types:
        return arr(0.0 * c.tp)
    width = float((arch.num_attention_heads + arch.num_key_value_heads) * arch.head_dim)
    per_pass = ROPE_FWD_BYTES * c.forward_passes + ROPE_BWD_BYTES
    return arr(tokens * width / c.tp * per_pass / hbm)


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
