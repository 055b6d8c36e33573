"""Element-wise kernels a stack runs unfused (a stack profile's `unfused_kernels`): what the eager
PyTorch ops move in HBM beyond the one fused kernel they replace, per layer and micro-batch on one card.

The model prices every fused element-wise kernel with the layer's other memory-bound traffic
(`layer_compute.compute_terms`: the norms in ELEMENTWISE_H_BYTES, the gated activation's read 2f +
write f; the fused RoPE kernel's one read and write of Q and K is not priced, as before). Where a
script runs a kernel unfused, each eager op reads its inputs and writes its output in HBM; the excess
over the fused kernel is priced here, bytes counted op by op from the code the rows run (MindSpeed-LLM
1.0.RC3 on Megatron-Core 0.6; docs/sources.md#mindspeed), 16-bit activations, at the streaming HBM
rate (`Rates.hbm`), as every other element-wise kernel of the model. Bytes per element of the
tensor the op transforms, (forward, backward):

- rope, per query and key element (modellink/core/models/common/embeddings/rotary_pos_embedding.py
  apply_rotary_pos_emb_bshd without --use-fused-rotary-pos-emb: t·cos + _rotate_half(t)·sin).
  Forward: t·cos (read 2, write 2), -x2 of the half (1 + 1 per element of t), cat(-x2, x1) (2 + 2),
  ·sin (2 + 2), the add (4 + 2): 20 B, against npu_rotary_mul's read 2 + write 2: 16 B more.
  Backward: grad·sin (2 + 2), the negated half (1 + 1), chunk's backward joining the halves
  (2 + 2), grad·cos (2 + 2), the two gradients of t added (4 + 2): 20 B against 4: 16 B more.
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
"""

from __future__ import annotations

import numpy as np

from estimator.arrays import FloatArray, Num, arr
from estimator.layout.steptime.candidates import Candidates
from estimator.model.transformer import Architecture, mlp_matrices

# excess HBM bytes per element of the transformed tensor over the fused kernel: (forward, backward)
UNFUSED_BYTES: dict[str, tuple[float, float]] = {
    "rope": (16.0, 16.0),
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
    for kernel in kernels:
        fwd, bwd = UNFUSED_BYTES[kernel]
        total = total + elements[kernel]() * (fwd * c.forward_passes + bwd)
    return arr(arr(tokens) * total / hbm)
