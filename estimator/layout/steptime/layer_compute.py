"""Compute terms of one transformer layer and micro-batch on one card (s), vectorized over candidate
layouts: the linears (gemm), the attention core (attention), the memory-bound element-wise kernels
(elementwise, with the element-wise chains the stack leaves unfused: `unfused`), the routed experts
and routing (moe_experts, moe_routing) and the host's launch cost (host_overhead), with what selective
recompute (selective_extras) and the stack's always_recompute (always_extras) run again. The
composition and the sources are in `step`'s docstring."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from estimator.arrays import FloatArray, Num, arr
from estimator.layout.stack_profile import SAC_MATMUL_HALF, StackProfile
from estimator.layout.stacks import recomputes_scores
from estimator.layout.steptime import attention as att
from estimator.layout.steptime import context_parallel as cpx
from estimator.layout.steptime.ascend import (
    ascend_score_dims,
    is_ascend,
    mla_layout_s,
)
from estimator.layout.steptime.candidates import Candidates
from estimator.layout.steptime.constants import (
    ELEMENTWISE_H_BYTES,
    HOST_OP_S,
    KERNEL_GAP_S,
    KERNELS_PER_LAYER_PASS,
    KERNELS_PER_MOE_PASS,
    MOE_OPS_AFTER_SYNC,
    SOFTMAX_SCORE_BYTES,
)
from estimator.layout.steptime.gemm import linear_elements, linear_time_s
from estimator.layout.steptime.moe import (
    ExpertGemm,
    expert_time_s,
    routing_time_s,
)
from estimator.layout.steptime.moe_core06 import core06_experts_s
from estimator.layout.steptime.rates import Rates
from estimator.layout.steptime.unfused import unfused_expert_bias_s, unfused_rope_s, unfused_s
from estimator.model.transformer import Architecture, mlp_matrices

if TYPE_CHECKING:
    from estimator.layout.problem import LayoutProblem


def attention_passes(problem: LayoutProblem, c: Candidates) -> tuple[FloatArray, FloatArray]:
    """(forward passes, backward-to-forward ratio) of the attention core per layer and micro-batch:
    the forward, the recomputed forward (full recompute, or selective where the stack's modules
    re-run the core) and the backward."""
    stack = problem.stack
    if stack.flash_attention:
        again = (c.rc == 1) * ("core_attn" in stack.selective_recompute)
        return arr(c.forward_passes + again), arr(att.backward_ratio(True) + 0.0 * c.tp)
    again = (c.rc == 1).astype(float) * recomputes_scores(stack.selective_recompute)
    return arr(c.forward_passes + again), arr(att.backward_ratio(False) + 0.0 * c.tp)


def backward_slowdown(problem: LayoutProblem) -> float:
    """The fused attention backward's time over its priced rate (attention.backward_slowdown)."""
    arch, stack = problem.arch, problem.stack
    return att.backward_slowdown(stack.attention_kernel, float(arch.head_dim), problem.triton_uneven_backward)


def ascend_fa(problem: LayoutProblem) -> bool:
    """The stack runs CANN FlashAttention on an Ascend chip."""
    return problem.stack.attention_kernel == "ascend-fa" and is_ascend(problem.accelerator.chip_family)


def attention_core(problem: LayoutProblem, c: Candidates, tokens: Num, r: Rates) -> FloatArray:
    """Time of the attention core of one layer and micro-batch on one card (s).

    Under context parallelism a fused kernel runs on the chunk lengths of the ring's steps
    (context_parallel.kernel_lengths) and the busiest rank's causal work is the load-balance factor
    of the mean."""
    arch, s, stack = problem.arch, float(problem.seq_len), problem.stack
    fwd = att.forward_flop_per_token(arch, s, stack.flash_attention) * tokens / c.tp
    n_fwd, bwd = attention_passes(problem, c)
    if stack.flash_attention:
        passes = n_fwd + bwd * backward_slowdown(problem)
        ring = cpx.ring_size(c.cp, stack.cp_comm_type, float(problem.domain_cards), c.tp)
        balance = cpx.load_balance_factor(ring, stack.cp_load_balance)
        # MLA: the value padded to the query's head size where the kernel takes one head size
        d_qk, d_v = att.score_dims(arch)
        if ascend_fa(problem):
            dims = ascend_score_dims(d_qk, d_v)
        else:
            dims = att.kernel_score_dims(stack.attention_kernel, d_qk, d_v)
        # each kind of layer (full, sliding window) at its kernel's efficiency for the keys it spans
        total = arr(0.0)
        for share, span, keys in att.layer_kinds(arch, s):
            inverse = arr(0.0)
            for work, length, causal in cpx.kernel_lengths(s, ring, stack.cp_load_balance):
                eff = att.kernel_efficiency(
                    stack.attention_kernel,
                    problem.accelerator.chip_family,
                    np.minimum(length, span),
                    arch.head_dim,
                    r.bf16 / r.peak16,
                    causal,
                )
                inverse = inverse + work / eff
            flop = 2.0 * keys * arch.num_attention_heads * sum(dims) * tokens / c.tp
            total = total + share * flop * passes * balance * inverse / r.peak16
        return total
    flop = fwd * (n_fwd + bwd)
    softmax = tokens * SOFTMAX_SCORE_BYTES * arch.num_attention_heads * s / c.tp
    selective = n_fwd - c.forward_passes
    return arr(flop / r.bf16 + softmax * (c.passes + selective) / r.hbm)


def weight_casts(c: Candidates, stack: StackProfile, passes: Num) -> FloatArray:
    """FP8 casts of each weight per micro-batch: once per forward (and recomputed forward), or once
    per step shared by the m micro-batches where the stack caches the FP8 weights."""
    return arr(1.0 / c.m if stack.fp8_weight_cache else arr(passes) - 2.0)


def selective_extras(
    problem: LayoutProblem, c: Candidates, r: Rates, moe: bool, tokens: Num, act_coeff: float
) -> tuple[FloatArray, FloatArray]:
    """(linear, element-wise) seconds that selective recompute adds to one layer and micro-batch for
    the stack's recompute modules beyond the attention core (Megatron-Core recompute_modules; what
    each leaves unstored is in memory.layer_coefficients): one more forward of
    - layernorm (MoE layers): the pre-MLP norm, read 2h and write 2h bytes per token;
    - moe_act (MoE layers): the routed experts' activation, act_coeff·k·f_e bytes per token;
    - mlp (dense layers): the MLP's linears and activation;
    - shared_experts (MoE layers): the shared experts' linears and activation.
    Recomputed linears cast their inputs to FP8 again, and their weights unless the stack caches them.
    A module the stack always recomputes (always_extras: "norms" covers layernorm) is not counted twice."""
    arch, counts, stack = problem.arch, problem.counts, problem.stack
    mods = stack.selective_recompute
    always = stack.always_recompute
    h, fe = float(arch.hidden_size), float(arch.moe_intermediate_size)
    rep = np.where(c.sp, c.tp, 1.0)
    params, width, elem = 0.0, 0.0, arr(0.0 * c.tp)
    if moe:
        if "layernorm" in mods and "norms" not in always:
            elem = elem + 4.0 * h / rep
        if "moe_act" in mods and "moe_act" not in always:
            elem = elem + act_coeff * arch.num_experts_per_tok * fe / c.tp
        if "shared_experts" in mods and arch.n_shared_experts:
            params, width = float(counts.moe_shared_per_layer), arch.n_shared_experts * fe
    elif "mlp" in mods:
        params, width = float(counts.dense_mlp_per_layer), float(arch.intermediate_size)
    elem = elem + act_coeff * width / c.tp
    n_mat = float(mlp_matrices(arch.hidden_act))
    per_pass = linear_elements(tokens, params, n_mat, h, c.tp)
    weights = params / c.tp
    casts = per_pass - (weights if stack.fp8_weight_cache else 0.0)
    gemm = linear_time_s(2.0 * tokens * weights, per_pass, r.linear, r.hbm, r.fp8, r.recipe, casts)
    return arr(np.where(params > 0, gemm, 0.0)), arr(tokens * elem / r.hbm)


def mla_up_projection(arch: Architecture) -> tuple[float, float, float]:
    """(parameters, input width, output width) of MLA's up-projections in one layer (elements):
    q_lora_rank -> heads·(qk_nope + qk_rope) where the model has a query latent (without one, Q is
    projected from h and stored: not an up-projection) and kv_lora_rank -> heads·(qk_nope + v)
    (DeepSeek-V2/V3 modeling code q_b_proj and kv_b_proj, as counted in transformer._attention_params);
    zeros without MLA."""
    if not arch.is_mla:
        return 0.0, 0.0, 0.0
    heads = float(arch.num_attention_heads)
    nope, rope, v = (float(d or 0) for d in (arch.qk_nope_head_dim, arch.qk_rope_head_dim, arch.v_head_dim))
    q_in, kv_in = float(arch.q_lora_rank or 0), float(arch.kv_lora_rank or 0)
    q_out = heads * (nope + rope) if q_in else 0.0
    kv_out = heads * (nope + v)
    return q_in * q_out + kv_in * kv_out, q_in + kv_in, q_out + kv_out


def always_extras(
    problem: LayoutProblem, c: Candidates, r: Rates, moe: bool, tokens: Num, act_coeff: float
) -> tuple[FloatArray, FloatArray]:
    """(linear, element-wise) seconds that the stack's always_recompute adds to one layer and
    micro-batch: what the memory model leaves unstored in every layout (activations.Storage) runs
    its forward once more in the backward (DeepSeek-V3 report section 3.2.3 for the norms and the
    MLA up-projections, section 3.3 for the MoE SwiGLU output; docs/sources.md#deepseek-v3):
    - norms: every RMSNorm of the layer, the two of width h and MLA's query and key-value latent
      norms (q_lora_rank, kv_lora_rank): read 2 and write 2 bytes per element and token, divided by t
      with sequence parallel as the norms in compute_terms (the latent norms taken to run in the same
      sequence-parallel layout: an assumption; the DeepSeek-V3 stack runs without TP);
    - mla_up_proj: MLA's up-projection GEMMs (mla_up_projection), 2 FLOP per parameter and token at
      the linears' rate (FP8 where the scenario trains in FP8), column-parallel (the latent input whole
      on every TP rank, output and weights split by t), with the FP8 cast of their latent input and of
      their weights unless the stack caches FP8 weights (fp8_weight_cache);
    - moe_act (MoE layers): the routed experts' SwiGLU, read 2·f_e and write f_e 16-bit values per
      routed token copy (act_coeff·k·f_e bytes, k·T/t copies per card as in selective_extras).
    Only the layers not recomputed in full pay it (1 - rf): a full recompute re-runs their whole
    forward (Candidates.passes). low_precision_cache adds no term (no source says its copies are made
    outside the kernels that produce or consume those tensors): the FP8 dispatched tokens are the FP8
    operand of the experts' up-projection, priced as that GEMM's cast, whose second layout is the
    backward 1x128 -> 128x1 re-quantisation the report describes (section 3.5.2,
    CAST_BYTES_PER_ELEMENT); the FP8 SwiGLU input and the E5M6 attention output are extra copies of
    tensors their kernels read or write anyway, whose backward read replaces a 16-bit one (section
    3.3, "Low-Precision Storage and Communication"; the bound is in docs/steptime.md)."""
    arch, stack = problem.arch, problem.stack
    always = stack.always_recompute
    rep = np.where(c.sp, c.tp, 1.0)
    elem = arr(0.0 * c.tp)
    if "norms" in always:
        widths = 2.0 * arch.hidden_size + float(arch.q_lora_rank or 0) + float(arch.kv_lora_rank or 0)
        elem = elem + 4.0 * widths / rep
    if moe and "moe_act" in always:
        elem = elem + act_coeff * arch.num_experts_per_tok * arch.moe_intermediate_size / c.tp
    params, width_in, width_out = mla_up_projection(arch) if "mla_up_proj" in always else (0.0, 0.0, 0.0)
    weights = params / c.tp
    elements = weights + tokens * (width_in + width_out / c.tp)
    casts = tokens * width_in + (0.0 if stack.fp8_weight_cache else weights)
    gemm = linear_time_s(2.0 * tokens * weights, elements, r.linear, r.hbm, r.fp8, r.recipe, casts)
    again = 1.0 - c.rf
    return arr(again * np.where(params > 0, gemm, 0.0)), arr(again * tokens * elem / r.hbm)


def compute_terms(
    problem: LayoutProblem, c: Candidates, r: Rates, moe: bool, tokens: Num, n_mat: float
) -> tuple[dict[str, Num], FloatArray, FloatArray, Num]:
    """gemm, attention (core, before the context-parallel merge) and elementwise terms of one layer
    and micro-batch (s), with the linears' time t_gemm, the attention core t_att and the element-wise
    time t_elem without what selective or always recompute runs again (the overlap windows). Sources: the module docstring."""
    arch, counts, stack = problem.arch, problem.counts, problem.stack
    h = float(arch.hidden_size)
    if moe:
        params = counts.attention_per_layer + counts.moe_shared_per_layer
        n_lin = 3.0 + (n_mat if arch.n_shared_experts else 0.0)
        ffn = float((arch.num_experts_per_tok + arch.n_shared_experts) * arch.moe_intermediate_size)
    else:
        params = counts.attention_per_layer + counts.dense_mlp_per_layer
        n_lin = 2.0 + n_mat
        ffn = float(arch.intermediate_size)
    # selective recompute per the stack: Megatron re-runs its recompute modules (the attention core
    # in attention_core, the rest in selective_extras), PyTorch per-op SAC every other forward matmul
    selective = (c.rc == 1).astype(float)
    sac = SAC_MATMUL_HALF in stack.selective_recompute
    lin_passes = c.passes + (0.5 * selective if sac else 0.0)
    lin_flop = 2.0 * tokens * params / c.tp * lin_passes
    per_pass = linear_elements(tokens, params, n_lin, h, c.tp)
    weights = params / c.tp
    casts = (per_pass - weights) * (lin_passes - 2.0) + weights * weight_casts(c, stack, lin_passes)
    t_gemm = linear_time_s(lin_flop, per_pass * lin_passes, r.linear, r.hbm, r.fp8, r.recipe, casts)
    t_att = attention_core(problem, c, tokens, r)
    act_coeff = 6.0 if n_mat == 3 else 4.0  # activation: read 2f (gated) or f, write f; 2 bytes
    rep = np.where(c.sp, c.tp, 1.0)
    t_elem = tokens * (ELEMENTWISE_H_BYTES * h / rep + act_coeff * ffn / c.tp) * c.passes / r.hbm
    t_elem = t_elem + mla_layout_s(arch, ascend_fa(problem), tokens, c.tp, c.passes, r.hbm)
    t_elem = t_elem + unfused_rope_s(problem, c, tokens, r.hbm)
    if moe:
        t_elem = t_elem + unfused_expert_bias_s(problem, c, tokens, r.hbm, problem.moe_imbalance)
    t_elem = t_elem + unfused_s(arch, stack.unfused_kernels, moe, c, tokens, r.hbm)
    gemm_again, elem_again = selective_extras(problem, c, r, moe, tokens, act_coeff)
    gemm_always, elem_always = always_extras(problem, c, r, moe, tokens, act_coeff)
    terms: dict[str, Num] = {
        "gemm": t_gemm + selective * gemm_again + gemm_always,
        "attention": t_att,
        "elementwise": arr(t_elem + selective * elem_again + elem_always),
    }
    return terms, t_gemm, t_att, t_elem


def moe_and_host_terms(
    problem: LayoutProblem,
    c: Candidates,
    r: Rates,
    moe: bool,
    tokens: Num,
    n_mat: float,
    terms: dict[str, Num],
) -> None:
    """Adds moe_experts, moe_routing (`moe`) and host_overhead (KERNEL_GAP_S per kernel launched,
    MOE_OPS_AFTER_SYNC·HOST_OP_S per MoE layer forward behind the dropless dispatcher's sync) to
    terms (s per layer and micro-batch)."""
    arch, stack = problem.arch, problem.stack
    kernels = KERNELS_PER_LAYER_PASS + (KERNELS_PER_MOE_PASS if moe else 0.0)
    host = 0.0 if stack.cuda_graphs else kernels * KERNEL_GAP_S * (c.forward_passes + 2.0)
    if moe:
        imb = problem.moe_imbalance
        per_gemm = problem.expert_gemm_overhead_s if stack.per_expert_gemms else 0.0
        # MoE parallel folding: each card brings its T/tp tokens (sequence parallel), the etp ranks of
        # an expert-TP group pool theirs and each runs the local experts on 1/etp of their width
        gemm = ExpertGemm(
            tokens=tokens * c.etp / c.tp,
            etp=c.etp,
            ep=c.ep,
            n_mat=n_mat,
            passes=c.passes,
            rate=r.linear,
            hbm_rate=r.hbm,
            fp8=r.fp8,
            recipe=r.recipe,
            imbalance=imb,
            per_gemm_s=per_gemm,
            weight_casts=weight_casts(c, stack, c.passes),
        )
        terms["moe_experts"] = core06_experts_s(
            expert_time_s(gemm, arch), stack.moe_core06, problem.core06_expert_factor
        )
        terms["moe_routing"] = routing_time_s(tokens, c.tp, arch, c.passes, r.hbm, imb)
        if stack.moe_host_sync and not stack.cuda_graphs:
            per_op = HOST_OP_S * problem.host_time_factor
            host = host + MOE_OPS_AFTER_SYNC * per_op * c.forward_passes
    else:
        terms["moe_experts"] = terms["moe_routing"] = 0.0
    terms["host_overhead"] = host + 0.0 * c.tp
