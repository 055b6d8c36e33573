"""One training step as a sum of named physical terms, vectorized over candidate layouts.

    step = m·t_stage + bubble + dp_exposed + optimizer + overlap_slowdown
    t_stage = compute + host_overhead + tp_exposed + cp_exposed + ep_exposed + pp_comm

for the busiest pipeline device (first, middle or last stage) and one micro-batch (Narayanan et al.
2021 for the schedule). compute = linear GEMMs (gemm) + attention core (attention) + memory-bound
element-wise kernels (elementwise) + routed experts (moe_experts) + routing and permutation
(moe_routing). Each communication is priced by `collectives`/`moe`/`pipeline` and then split into
an exposed part (on the critical path) and a hidden part (overlapped with compute, which it slows
by COMM_SM_FRACTION for as long as they overlap): the stack profile says which overlaps exist.

Terms (per card; seconds; sources in the docstrings of the modules named):
- gemm: linears of attention, dense MLP, shared experts, router, output layer (`gemm`), FP8 when
  the scenario trains in FP8 except the router and output layer (Transformer Engine keeps them in
  16 bit), with the cast cost of the recipe.
- attention: `attention` (causal fused kernels, backward 2.5x, efficiency by kernel, sequence and
  head size); an unfused kernel runs its batched matmuls at GEMM efficiency plus a memory-bound
  softmax.
- elementwise: norms, residual/bias/dropout, activation function (22·h + 4 or 6·f bytes per token
  per layer and pass; divided by t with sequence parallel) and the fp32 cross-entropy over the
  vocabulary (LOGIT_BYTES per logit, pass by pass below).
- moe_experts, moe_routing, ep_comm: `moe` (with EXPERT_GEMM_OVERHEAD_S per expert GEMM where the
  stack launches one GEMM per local expert).
- tp_comm: Megatron TP does 2 all-reduces per layer forward and 2 backward (with sequence parallel
  the same bytes as all-gathers and reduce-scatters; Korthikanti et al. 2022), 2 more per recomputed
  forward; each moves 2(t-1)/t of the T·h 16-bit activation. Hidden behind the layer's GEMMs when
  the stack pipelines them (tp_comm_overlap).
- cp_comm: `context_parallel`: the K/V ring, all-gather or all-to-all of the stack's cp_comm_type,
  each ring step hidden only behind that step's attention compute; the attention term adds the
  merge of the ring's partial outputs, runs the kernel at the chunk lengths of the ring's calls and
  pays the causal load imbalance where the stack does not balance the chunks.
- ep_comm: hidden behind the other micro-batch's layer compute with ep_comm_overlap or DualPipe.
- pp_comm: `pipeline`; hidden behind the stage's compute with the interleaved schedule and
  overlap_p2p_comm, or DualPipe.
- host_overhead: KERNEL_GAP_S per kernel launched (none with CUDA graphs) and, for the dropless
  dispatcher's host synchronisation, MOE_OPS_AFTER_SYNC·HOST_OP_S per MoE layer forward; behind
  that sync a MoE layer lasts at least the host's issue time (`moe.host_issue_s`, _host_floor).
- dp_comm, optimizer: `data_parallel` (the replica group's collectives by ZeRO stage and their
  overlap; Adam's memory-bound update of the card's shard).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from estimator.arrays import FloatArray, Num, arr
from estimator.layout.memory import StageLayers, stage_layers, weight_replicas
from estimator.layout.stacks import SAC_MATMUL_HALF, StackProfile, recomputes_scores
from estimator.layout.steptime import attention as att
from estimator.layout.steptime import context_parallel as cpx
from estimator.layout.steptime.ascend import (
    ascend_score_dims,
    is_ascend,
    mc2_tp_exposed_s,
    mesh_links,
    mla_layout_s,
    training_gemm_fraction,
)
from estimator.layout.steptime.candidates import Candidates
from estimator.layout.steptime.collectives import Fabric, group_bandwidth
from estimator.layout.steptime.constants import (
    COMM_SM_FRACTION,
    ELEMENTWISE_H_BYTES,
    HBM_EFFICIENCY,
    HOST_OP_S,
    KERNEL_GAP_S,
    KERNELS_PER_LAYER_PASS,
    KERNELS_PER_MOE_PASS,
    MOE_OPS_AFTER_SYNC,
    SOFTMAX_SCORE_BYTES,
)
from estimator.layout.steptime.data_parallel import data_parallel_s, optimizer_s
from estimator.layout.steptime.dualpipe import dualpipe_ranks
from estimator.layout.steptime.gemm import gemm_rate, linear_elements, linear_time_s
from estimator.layout.steptime.moe import (
    ExpertGemm,
    all_to_all_s,
    expert_time_s,
    host_issue_s,
    routing_time_s,
)
from estimator.layout.steptime.moe_core06 import core06_experts_s
from estimator.layout.steptime.mtp import mtp_hidden, with_mtp
from estimator.layout.steptime.pipeline import bubble_s, p2p_s, p2p_window_s
from estimator.model.transformer import mlp_matrices, stage_param_counts

if TYPE_CHECKING:
    from estimator.layout.problem import LayoutProblem

# HBM bytes per logit of the fp32 cross-entropy, counted kernel by kernel in Megatron-Core's
# fused_vocab_parallel_cross_entropy (docs/sources.md#megatron-core): forward upcast + row max
# (read 2, write 4), exp in place (read 4, write 4), row sum (read 4), normalise in place (read 4,
# write 4); backward scale in place (read 4, write 4) and cast back to the logits' 16-bit dtype
# (read 4, write 2). PyTorch's F.cross_entropy on upcast logits (torchtitan, llm-foundry) moves the
# same 40: upcast 6, log-softmax 12 (two reads, one write), its backward 12 plus the one-hot
# gradient 4, downcast 6.
LOGIT_BYTES = 40.0
COMPUTE_TERMS = ("gemm", "attention", "elementwise", "moe_experts", "moe_routing")
STAGE_TERMS = (*COMPUTE_TERMS, "host_overhead", "tp_comm", "cp_comm", "ep_comm")
BREAKDOWN_KEYS = (
    "compute",
    "host_overhead",
    "bubble",
    "tp_comm",
    "pp_comm",
    "dp_comm",
    "ep_comm",
    "cp_comm",
    "overlap_slowdown",
    "optimizer",
)


@dataclass(frozen=True)
class _Rates:
    linear: float  # FLOP/s of the transformer linears (FP8 when trained in FP8)
    bf16: float  # FLOP/s of 16-bit GEMMs (router, output layer, unfused attention)
    hbm: float  # bytes/s of streaming kernels
    peak16: float  # 16-bit peak FLOP/s (fused attention efficiency refers to it)
    fp8: bool
    recipe: str


def _rates(problem: LayoutProblem) -> _Rates:
    acc = problem.accelerator
    fp8 = problem.precision == "fp8" and bool(acc.peak_flops_fp8)
    peak16 = acc.peak_flops("fp32") if problem.precision == "fp32" else acc.peak_flops_bf16
    eff = acc.matmul_efficiency
    g = training_gemm_fraction(acc.chip_family, problem.gemm_fraction, problem.ascend_gemm_fraction)
    # a pilot run's calibration (estimator.plan.calibration) scales every compute rate alike; the
    # fused-attention efficiency reads the ratio bf16 / peak16, which it leaves unchanged
    k = problem.compute_factor
    return _Rates(
        linear=gemm_rate(peak16, acc.peak_flops_fp8, eff, g, fp8) * k,
        bf16=peak16 * eff * g * k,
        hbm=acc.hbm_bandwidth_bytes_per_s * HBM_EFFICIENCY * k,
        peak16=peak16 * k,
        fp8=fp8,
        recipe=problem.stack.fp8_recipe,
    )


def _fabric(problem: LayoutProblem) -> Fabric:
    return Fabric(
        domain=float(problem.domain_cards),
        bw_up=problem.accelerator.scaleup_bandwidth_bytes_per_s,
        nic=problem.nic_bytes_per_s_per_card,
        cross=problem.cross_leaf_bandwidth_factor,
        leaf_cards=problem.nodes_per_leaf_group * problem.cards_per_node,
        eta=problem.link_efficiency,
        mesh_links=mesh_links(problem.accelerator.chip_family, float(problem.domain_cards)),
    )


def _attention_passes(problem: LayoutProblem, c: Candidates) -> tuple[FloatArray, FloatArray]:
    """(forward passes, backward-to-forward ratio) of the attention core per layer and micro-batch:
    the forward, the recomputed forward (full recompute, or selective where the stack's modules
    re-run the core) and the backward."""
    stack = problem.stack
    if stack.flash_attention:
        again = (c.rc == 1) * ("core_attn" in stack.selective_recompute)
        return arr(c.forward_passes + again), arr(att.backward_ratio(True) + 0.0 * c.tp)
    again = (c.rc == 1).astype(float) * recomputes_scores(stack.selective_recompute)
    return arr(c.forward_passes + again), arr(att.backward_ratio(False) + 0.0 * c.tp)


def _ascend_fa(problem: LayoutProblem) -> bool:
    """The stack runs CANN FlashAttention on an Ascend chip."""
    return problem.stack.attention_kernel == "ascend-fa" and is_ascend(problem.accelerator.chip_family)


def _attention_core(problem: LayoutProblem, c: Candidates, tokens: Num, r: _Rates) -> FloatArray:
    """Time of the attention core of one layer and micro-batch on one card (s).

    Under context parallelism a fused kernel runs on the chunk lengths of the ring's steps
    (context_parallel.kernel_lengths) and the busiest rank's causal work is the load-balance factor
    of the mean."""
    arch, s, stack = problem.arch, float(problem.seq_len), problem.stack
    fwd = att.forward_flop_per_token(arch, s, stack.flash_attention) * tokens / c.tp
    n_fwd, bwd = _attention_passes(problem, c)
    if stack.flash_attention:
        passes = n_fwd + bwd
        ring = cpx.ring_size(c.cp, stack.cp_comm_type, float(problem.domain_cards), c.tp)
        balance = cpx.load_balance_factor(ring, stack.cp_load_balance)
        dims = att.score_dims(arch)
        if _ascend_fa(problem):
            dims = ascend_score_dims(*dims)  # MLA: the value padded to the query's head size
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


def _cp_terms(
    problem: LayoutProblem, c: Candidates, tokens: Num, t_att: FloatArray, fab: Fabric, r: _Rates
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """(raw, exposed, merge) seconds of one layer's context-parallel exchange and partial-result
    merge per micro-batch on one card (steptime.context_parallel)."""
    arch, stack = problem.arch, problem.stack
    d_qk, d_v = att.score_dims(arch)
    if arch.is_mla:
        kv_elems = arch.num_attention_heads * (d_qk + d_v)
    else:
        kv_heads = arch.num_attention_heads if stack.cp_repeat_kv else arch.num_key_value_heads
        kv_elems = 2.0 * kv_heads * arch.head_dim
    n_fwd, bwd = _attention_passes(problem, c)
    per_pass = t_att / (n_fwd + bwd)
    shape = cpx.CpShape(
        cp=c.cp,
        tp=c.tp,
        tokens=arr(tokens / c.tp),  # TP splits the heads: each card exchanges its heads' share
        kv_elems=float(kv_elems),
        q_elems=float(arch.num_attention_heads * d_v),
        t_fwd=per_pass,
        t_bwd=arr(per_pass * bwd),
        ring=cpx.ring_size(c.cp, stack.cp_comm_type, fab.domain, c.tp),
    )
    raw, exposed = cpx.exchange_s(shape, fab, stack.cp_comm_type, stack.cp_merge, n_fwd, stack.cp_overlap)
    merge = cpx.merge_s(shape, stack.cp_merge, n_fwd, r.hbm)
    on = c.cp > 1
    return arr(np.where(on, raw, 0.0)), arr(np.where(on, exposed, 0.0)), arr(np.where(on, merge, 0.0))


def _weight_casts(c: Candidates, stack: StackProfile, passes: Num) -> FloatArray:
    """FP8 casts of each weight per micro-batch: once per forward (and recomputed forward), or once
    per step shared by the m micro-batches where the stack caches the FP8 weights."""
    return arr(1.0 / c.m if stack.fp8_weight_cache else arr(passes) - 2.0)


def _selective_extras(
    problem: LayoutProblem, c: Candidates, r: _Rates, moe: bool, tokens: Num, act_coeff: float
) -> tuple[FloatArray, FloatArray]:
    """(linear, element-wise) seconds that selective recompute adds to one layer and micro-batch for
    the stack's recompute modules beyond the attention core (Megatron-Core recompute_modules; what
    each leaves unstored is in memory.layer_coefficients): one more forward of
    - layernorm (MoE layers): the pre-MLP norm, read 2h and write 2h bytes per token;
    - moe_act (MoE layers): the routed experts' activation, act_coeff·k·f_e bytes per token;
    - mlp (dense layers): the MLP's linears and activation;
    - shared_experts (MoE layers): the shared experts' linears and activation.
    Recomputed linears cast their inputs to FP8 again, and their weights unless the stack caches them."""
    arch, counts, stack = problem.arch, problem.counts, problem.stack
    mods = stack.selective_recompute
    h, fe = float(arch.hidden_size), float(arch.moe_intermediate_size)
    rep = np.where(c.sp, c.tp, 1.0)
    params, width, elem = 0.0, 0.0, arr(0.0 * c.tp)
    if moe:
        if "layernorm" in mods:
            elem = elem + 4.0 * h / rep
        if "moe_act" in mods:
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


def _layer_terms(
    problem: LayoutProblem, c: Candidates, r: _Rates, fab: Fabric, moe: bool
) -> tuple[dict[str, Num], dict[str, Num]]:
    """Per-layer terms (exposed) and hidden communication of one dense or MoE layer, one micro-batch:
    the compute (_compute_terms), the MoE experts and the host (_moe_and_host_terms), then the
    communication split into exposed and hidden parts (_comm_terms)."""
    tokens = float(problem.seq_len) / c.cp * c.mbs
    n_mat = float(mlp_matrices(problem.arch.hidden_act))
    terms, t_gemm, t_att, t_elem = _compute_terms(problem, c, r, moe, tokens, n_mat)
    _moe_and_host_terms(problem, c, r, moe, tokens, n_mat, terms)
    hidden = _comm_terms(problem, c, r, fab, moe, tokens, (t_gemm, t_att, t_elem), terms)
    return terms, hidden


def _compute_terms(
    problem: LayoutProblem, c: Candidates, r: _Rates, moe: bool, tokens: Num, n_mat: float
) -> tuple[dict[str, Num], FloatArray, FloatArray, Num]:
    """gemm, attention (core, before the context-parallel merge) and elementwise terms of one layer
    and micro-batch (s), with the linears' time t_gemm, the attention core t_att and the element-wise
    time t_elem without selective recompute (the overlap windows). Sources: the module docstring."""
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
    # in _attention_core, the rest in _selective_extras), PyTorch per-op SAC every other forward matmul
    selective = (c.rc == 1).astype(float)
    sac = SAC_MATMUL_HALF in stack.selective_recompute
    lin_passes = c.passes + (0.5 * selective if sac else 0.0)
    lin_flop = 2.0 * tokens * params / c.tp * lin_passes
    per_pass = linear_elements(tokens, params, n_lin, h, c.tp)
    weights = params / c.tp
    casts = (per_pass - weights) * (lin_passes - 2.0) + weights * _weight_casts(c, stack, lin_passes)
    t_gemm = linear_time_s(lin_flop, per_pass * lin_passes, r.linear, r.hbm, r.fp8, r.recipe, casts)
    t_att = _attention_core(problem, c, tokens, r)
    act_coeff = 6.0 if n_mat == 3 else 4.0  # activation: read 2f (gated) or f, write f; 2 bytes
    rep = np.where(c.sp, c.tp, 1.0)
    t_elem = tokens * (ELEMENTWISE_H_BYTES * h / rep + act_coeff * ffn / c.tp) * c.passes / r.hbm
    t_elem = t_elem + mla_layout_s(arch, _ascend_fa(problem), tokens, c.tp, c.passes, r.hbm)
    gemm_again, elem_again = _selective_extras(problem, c, r, moe, tokens, act_coeff)
    terms: dict[str, Num] = {
        "gemm": t_gemm + selective * gemm_again,
        "attention": t_att,
        "elementwise": arr(t_elem + selective * elem_again),
    }
    return terms, t_gemm, t_att, t_elem


def _moe_and_host_terms(
    problem: LayoutProblem,
    c: Candidates,
    r: _Rates,
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
            weight_casts=_weight_casts(c, stack, c.passes),
        )
        terms["moe_experts"] = core06_experts_s(
            expert_time_s(gemm, arch), stack.moe_core06, problem.core06_expert_factor
        )
        terms["moe_routing"] = routing_time_s(tokens, c.tp, arch, c.passes, r.hbm, imb)
        if stack.moe_host_sync and not stack.cuda_graphs:
            host = host + MOE_OPS_AFTER_SYNC * HOST_OP_S * c.forward_passes
    else:
        terms["moe_experts"] = terms["moe_routing"] = 0.0
    terms["host_overhead"] = host + 0.0 * c.tp


def _comm_terms(
    problem: LayoutProblem,
    c: Candidates,
    r: _Rates,
    fab: Fabric,
    moe: bool,
    tokens: Num,
    compute: tuple[FloatArray, FloatArray, Num],
    terms: dict[str, Num],
) -> dict[str, Num]:
    """Adds the exposed tp_comm, cp_comm, ep_comm and host_floor to terms (and the context-parallel
    merge to attention); returns the hidden communication (s per layer and micro-batch).
    compute: (t_gemm, t_att, t_elem) of _compute_terms, the overlap windows."""
    arch, stack = problem.arch, problem.stack
    t_gemm, t_att, t_elem = compute
    h = float(arch.hidden_size)
    # tensor parallel: half of the collectives belong to the attention, half to the MLP; a MoE
    # layer's MLP gathers over the expert-TP group (parallel folding) unless shared experts need TP
    n_coll = 4.0 + 2.0 * c.rf
    mlp_group = c.etp if moe and not arch.n_shared_experts else c.tp
    raw_tp_attention = 0.5 * _tp_collectives_s(c.tp, tokens, h, n_coll, fab)
    raw_tp_mlp = 0.5 * _tp_collectives_s(mlp_group, tokens * mlp_group / c.tp, h, n_coll, fab)
    raw_tp = raw_tp_attention + raw_tp_mlp
    tp_window = t_gemm if stack.tp_comm_overlap else 0.0
    # context parallel: the K/V ring or gather, each step hidden behind that step's attention compute
    raw_cp, exposed_cp, t_merge = _cp_terms(problem, c, tokens, t_att, fab, r)
    terms["attention"] = t_att + t_merge
    raw_ep, ep_window = _ep_comm(problem, c, fab, moe, tokens, r, terms, (t_att, t_elem))
    hidden: dict[str, Num] = {}
    for name, raw, window in (
        ("tp_comm", raw_tp, tp_window),
        ("cp_comm", raw_cp, raw_cp - exposed_cp),
        ("ep_comm", raw_ep, ep_window),
    ):
        exposed = arr(np.maximum(raw - window, 0.0))
        terms[name] = exposed
        hidden[name] = arr(raw - exposed)
    if stack.tp_comm_overlap and is_ascend(problem.accelerator.chip_family):  # MC2
        terms["tp_comm"], hidden["tp_comm"] = mc2_tp_exposed_s(
            raw_tp_attention, raw_tp_mlp, t_gemm, moe, problem.mc2_exposed_fraction
        )
    floor_on = moe and stack.moe_host_sync and not stack.cuda_graphs
    terms["host_floor"] = _host_floor(problem, c, terms) if floor_on else 0.0 * c.tp
    return hidden


def _ep_comm(
    problem: LayoutProblem,
    c: Candidates,
    fab: Fabric,
    moe: bool,
    tokens: Num,
    r: _Rates,
    terms: dict[str, Num],
    att_elem: tuple[FloatArray, Num],
) -> tuple[Num, Num]:
    """(raw expert-parallel all-to-all time, the part of it hidden) of one layer and micro-batch (s);
    att_elem: the layer's attention core and element-wise time (without selective recompute)."""
    arch, stack = problem.arch, problem.stack
    # expert parallel all-to-all, hidden behind the other micro-batch's compute of this layer
    if moe:
        raw_ep = all_to_all_s(
            tokens,
            c.tp,
            c.etp,
            c.ep,
            arch,
            4.0 + 2.0 * c.rf,
            fab,
            stack.moe_dispatch_dedup,
            stack.moe_max_nodes,
            r.fp8 and stack.moe_dispatch_dedup,
            problem.moe_imbalance,
        )
    else:
        raw_ep = 0.0 * c.tp
    # EP overlap (DeepSeek-V3 section 3.2.1, Megatron-Core 1F1B A2A overlap): a forward chunk of one
    # micro-batch runs beside a backward chunk of another; each all-to-all hides behind one compute
    # segment of the other direction: combine_b | attention_f, dispatch_f | experts_b,
    # dispatch_b | experts_f, combine_f | attention_b.
    if not (stack.ep_comm_overlap or stack.dualpipe):
        return raw_ep, 0.0
    dense_part = terms["gemm"] + att_elem[0] + att_elem[1]
    expert_part = terms["moe_experts"] + terms["moe_routing"]
    one = raw_ep / (4.0 + 2.0 * c.rf)
    fwd_share = c.forward_passes / c.passes
    bwd_share = 2.0 / c.passes
    hidden_ep = (
        np.minimum(one, dense_part * fwd_share)
        + np.minimum(one, expert_part * bwd_share)
        + np.minimum(one, expert_part * fwd_share)
        + np.minimum(one, dense_part * bwd_share)
    )
    return raw_ep, np.minimum(hidden_ep, raw_ep)


def _host_floor(problem: LayoutProblem, c: Candidates, terms: dict[str, Num]) -> FloatArray:
    """The host time of a MoE layer that its GPU time does not cover (s per micro-batch).

    Behind the dropless dispatcher's per-layer host synchronisation the host cannot queue work
    beyond the layer, so the layer lasts max(GPU time, host issue time) (moe.host_issue_s): small
    micro-batches of many small experts on a fast GPU wait for the host."""
    per_expert = problem.expert_host_s if problem.stack.per_expert_gemms else 0.0
    host = host_issue_s(problem.arch, c.ep, c.passes, per_expert)
    gpu = sum(arr(v) for v in terms.values())
    return arr(np.maximum(host - gpu, 0.0))


def _tp_collectives_s(group: Num, tokens: Num, h: float, n_coll: Num, fab: Fabric) -> FloatArray:
    """n_coll ring all-reduces (or all-gather + reduce-scatter pairs) of tokens·h 16-bit values over a
    tensor-parallel group, 2(g-1)/g of the bytes per card, plus 2 us per ring step (s)."""
    g = arr(group)
    bw = np.where(g <= fab.domain, group_bandwidth(fab, g), fab.nic) * fab.eta
    raw = n_coll * (2.0 * (g - 1.0) / g * tokens * h * 2.0 / bw) + n_coll * 2.0 * (g - 1.0) * 2e-6
    return arr(np.where(g > 1, raw, 0.0))


def _stage_pick(
    problem: LayoutProblem,
    c: Candidates,
    per_layer: tuple[dict[str, Num], dict[str, Num], dict[str, Num]],
    hidden: tuple[dict[str, Num], dict[str, Num]],
) -> tuple[StageLayers, dict[str, FloatArray], dict[str, FloatArray]]:
    """Per-micro-batch terms of the busiest pipeline device (first / middle / last stage, by the sum
    of its exposed terms), and the hidden communication of that same device.

    per_layer: (dense layer, MoE layer, output head) terms; hidden: (dense, MoE) hidden communication.
    """
    arch, counts = problem.arch, problem.counts
    st = stage_layers(
        arch.num_hidden_layers, counts.n_dense_layers, c.pp.astype(int), c.v.astype(int), problem.stage_split
    )
    single = st.single.astype(float)
    shapes = ((st.first, st.dense_first, single), (st.full, st.dense_mid, 0.0), (st.last, st.dense_last, 1.0))
    moe_shapes = [(n_layers - n_dense, n_dense, with_head) for n_layers, n_dense, with_head in shapes]

    def stages(
        dense: dict[str, Num], moe: dict[str, Num], head: dict[str, Num]
    ) -> list[dict[str, FloatArray]]:
        return [
            {
                k: arr(n_dense * arr(dense[k]) + n_moe * arr(moe[k]) + with_head * arr(head.get(k, 0.0)))
                for k in dense
            }
            for n_moe, n_dense, with_head in moe_shapes
        ]

    dense_t, moe_t, head_t = per_layer
    head_t = with_mtp(arch, problem.seq_len, c, _rates(problem).linear, head_t, moe_t)  # steptime.mtp
    exposed = dualpipe_ranks(stages(dense_t, moe_t, head_t), st.single, problem.stack.dualpipe)
    valid = [np.ones_like(single, dtype=bool), st.has_mid, ~st.single]
    totals = [np.where(ok, sum(d.values()), -1.0) for d, ok in zip(exposed, valid, strict=True)]
    best = np.argmax(np.stack(np.broadcast_arrays(*totals)), axis=0)

    first, mid = best == 0, best == 1

    def pick(per_stage: list[dict[str, FloatArray]]) -> dict[str, FloatArray]:
        # np.choose(best, ...) as two np.where (the same elements; choose broadcasts slowly)
        return {
            k: np.where(first, per_stage[0][k], np.where(mid, per_stage[1][k], per_stage[2][k]))
            for k in per_stage[0]
        }

    return (
        st,
        pick(exposed),
        pick(dualpipe_ranks(stages(*hidden, mtp_hidden(arch, hidden[1])), st.single, problem.stack.dualpipe)),
    )


def _head_terms(problem: LayoutProblem, c: Candidates, r: _Rates) -> dict[str, Num]:
    """Output layer (16-bit GEMM, forward + backward) and the fp32 cross-entropy, one micro-batch."""
    counts, arch = problem.counts, problem.arch
    tokens = float(problem.seq_len) / c.cp * c.mbs
    head_params = counts.lm_head if counts.lm_head > 0 else counts.embedding
    t_head = tokens / c.tp * 2.0 * head_params * 3.0 / r.bf16
    t_loss = tokens / c.tp * arch.vocab_size * LOGIT_BYTES / r.hbm
    return {"gemm": t_head, "elementwise": t_loss}


def _stage_params(problem: LayoutProblem, c: Candidates, st: StageLayers) -> tuple[FloatArray, FloatArray]:
    """(dense, expert) parameters held by the busiest-in-parameters pipeline device after TP/EP."""
    counts = problem.counts
    single = st.single.astype(float)
    untied = 1.0 if counts.lm_head > 0 else 0.0

    def params(n_layers: Num, n_dense: Num, emb: float, head: Num) -> tuple[FloatArray, FloatArray]:
        return stage_param_counts(counts, n_layers, n_dense, emb, head, c.tp, c.ep, c.etp)

    cand = [
        params(st.first, st.dense_first, 1.0, single * untied),
        params(st.full, st.dense_mid, 0.0, 0.0),
        params(st.last, st.dense_last, 0.0, 1.0),
    ]
    valid = [np.ones_like(single, dtype=bool), st.has_mid, ~st.single]
    sizes = [np.where(ok, d + e, -1.0) for (d, e), ok in zip(cand, valid, strict=True)]
    which = np.argmax(np.stack(np.broadcast_arrays(*sizes)), axis=0)
    first, mid = which == 0, which == 1
    dense = np.where(first, cand[0][0], np.where(mid, cand[1][0], cand[2][0]))
    expert = np.where(first, cand[0][1], np.where(mid, cand[1][1], cand[2][1]))
    return arr(dense), arr(expert)


def evaluate_step(problem: LayoutProblem, cand: Candidates) -> dict[str, FloatArray]:
    """Step time and its named terms for candidate layouts (seconds per step, per card).

    Returns arrays: step_time_s, the BREAKDOWN_KEYS (additive: they sum to step_time_s), the
    COMPUTE_TERMS (parts of compute), bubble_fraction and recomputed_flop_per_card.
    """
    c = cand
    r = _rates(problem)
    fab = _fabric(problem)
    dense, dense_hidden = _layer_terms(problem, c, r, fab, moe=False)
    if problem.arch.is_moe:
        moe, moe_hidden = _layer_terms(problem, c, r, fab, moe=True)
    else:
        moe, moe_hidden = dense, dense_hidden
    st, mb, hid = _stage_pick(
        problem, c, (dense, moe, _head_terms(problem, c, r)), (dense_hidden, moe_hidden)
    )
    compute_mb = arr(sum(mb[k] for k in COMPUTE_TERMS))
    # a host-bound MoE layer lasts its issue time: the GPU idles, and communication on its own stream
    # runs on, so the overlap windows are the compute plus that wait
    busy_mb = compute_mb + mb["host_floor"]
    host_mb = mb["host_overhead"] + mb["host_floor"]
    pp_mb = p2p_s(
        float(problem.seq_len) / c.cp * c.mbs,
        float(problem.arch.hidden_size),
        c.tp,
        c.cp,
        c.dp,
        c.pp,
        c.v,
        fab,
    )
    stack = problem.stack
    pp_window = p2p_window_s(c.v, busy_mb, stack.overlap_p2p_comm, stack.dualpipe)
    pp_exposed = arr(np.maximum(pp_mb - pp_window, 0.0))
    t_stage = compute_mb + host_mb + mb["tp_comm"] + mb["cp_comm"] + mb["ep_comm"] + pp_exposed
    bubble = bubble_s(c.pp, c.v, t_stage, stack.dualpipe)
    dense_p, expert_p = _stage_params(problem, c, st)
    replicas = weight_replicas(c.dp, c.cp, c.ep, c.tp, c.etp)
    dp_exposed, dp_hidden = data_parallel_s(problem, c, fab, st, (dense_p, expert_p), replicas, busy_mb)
    hidden_total = c.m * (sum(hid.values()) + pp_mb - pp_exposed) + dp_hidden
    slowdown = COMM_SM_FRACTION * np.minimum(hidden_total, c.m * compute_mb)
    t_opt = optimizer_s(c, (dense_p, expert_p), replicas, problem.grad_dtype, r.hbm)
    step = c.m * t_stage + bubble + dp_exposed + t_opt + slowdown
    out = {k: c.m * mb[k] for k in COMPUTE_TERMS}
    out.update(
        step_time_s=step,
        compute=c.m * compute_mb,
        host_overhead=c.m * host_mb,
        bubble=bubble,
        tp_comm=c.m * mb["tp_comm"],
        pp_comm=c.m * pp_exposed,
        dp_comm=dp_exposed,
        ep_comm=c.m * mb["ep_comm"],
        cp_comm=c.m * mb["cp_comm"],
        overlap_slowdown=slowdown,
        optimizer=t_opt,
        bubble_fraction=bubble / step,
        recomputed_flop_per_card=_recomputed_flop(problem, c),
    )
    return {k: np.broadcast_to(np.asarray(v, dtype=float), np.shape(step)) for k, v in out.items()}


def _recomputed_flop(problem: LayoutProblem, c: Candidates) -> FloatArray:
    """FLOPs one card repeats per step on average because activations were recomputed (FLOP).

    Hardware FLOPs utilization counts the model's FLOPs plus these (Korthikanti et al. 2022,
    section 6: HFU includes the recomputed forward; PaLM appendix B), so HFU >= MFU always.
    Full or partial recompute repeats the forward of its share `rf` of the layers (linears 2 FLOP
    per parameter and token, and the attention core's forward). Selective recompute repeats what the
    step time above re-runs for the stack's modules: the attention core (_attention_core), every other
    forward matmul under PyTorch's per-op SAC, the dense MLP or the shared experts (_selective_extras)."""
    arch, counts, stack = problem.arch, problem.counts, problem.stack
    s, mods = float(problem.seq_len), stack.selective_recompute
    fused = stack.flash_attention
    selective = (c.rc == 1).astype(float)
    n_moe = float(counts.n_moe_layers) if arch.is_moe else 0.0
    n_dense = float(arch.num_hidden_layers) - n_moe
    dense_lin = counts.attention_per_layer + counts.dense_mlp_per_layer
    moe_lin = counts.attention_per_layer + counts.moe_shared_per_layer
    lin = n_dense * dense_lin + n_moe * (moe_lin + counts.moe_active_routed_per_layer)
    extra = n_dense * counts.dense_mlp_per_layer * ("mlp" in mods)
    extra += n_moe * counts.moe_shared_per_layer * ("shared_experts" in mods and arch.n_shared_experts > 0)
    if SAC_MATMUL_HALF in mods:
        extra += 0.5 * (n_dense * dense_lin + n_moe * moe_lin)
    scores = ("core_attn" in mods) if fused else recomputes_scores(mods)
    att_fwd = att.forward_flop_per_token(arch, s, fused)
    per_token = 2.0 * (lin * c.rf + extra * selective) + arch.num_hidden_layers * att_fwd * (
        c.rf + selective * scores
    )
    return arr(per_token * c.m * c.dp * c.mbs * s / problem.cards)


def step_time_lower_bound(problem: LayoutProblem, cand: Candidates) -> FloatArray:
    """A lower bound of evaluate_step(problem, cand)["step_time_s"] from the layers' compute alone
    (s): the search drops, before the full model, candidates that cannot reach the top throughput bin.

    Why it bounds: every term of a stage's per-micro-batch total is >= 0 (compute, host, and exposed
    communication, each max(raw - window, 0)); the busiest device is the valid stage of the largest
    total, so t_stage >= the gemm + attention core + elementwise + expert + host terms of any valid
    stage (the context-parallel merge, the output head and all communication left out); the step is
    m·t_stage + bubble + terms >= 0, and the bubble is a non-negative multiple of t_stage
    (pipeline.bubble_s). The same per-layer expressions as _layer_terms, so the bound is the model's
    own arithmetic up to rounding (the caller keeps a margin)."""
    c = cand
    r = _rates(problem)
    n_mat = float(mlp_matrices(problem.arch.hidden_act))
    tokens = float(problem.seq_len) / c.cp * c.mbs

    def layer(moe: bool) -> FloatArray:
        terms = _compute_terms(problem, c, r, moe, tokens, n_mat)[0]
        _moe_and_host_terms(problem, c, r, moe, tokens, n_mat, terms)
        return arr(sum(arr(v) for v in terms.values()))

    dense = layer(False)
    moe = layer(True) if problem.arch.is_moe else dense
    arch, counts = problem.arch, problem.counts
    st = stage_layers(
        arch.num_hidden_layers, counts.n_dense_layers, c.pp.astype(int), c.v.astype(int), problem.stage_split
    )
    per_stage = [
        n_dense * dense + (n_layers - n_dense) * moe
        for n_layers, n_dense in (
            (st.first, st.dense_first),
            (st.full, st.dense_mid),
            (st.last, st.dense_last),
        )
    ]
    stage_lb = np.maximum(
        per_stage[0],
        np.maximum(np.where(st.has_mid, per_stage[1], 0.0), np.where(~st.single, per_stage[2], 0.0)),
    )
    pp = np.asarray(c.pp, dtype=float)
    if problem.stack.dualpipe:
        bubble_per_stage = np.maximum(pp / 2.0 - 1.0, 0.0) * (2.0 / 3.0)
    else:
        bubble_per_stage = (pp - 1.0) / arr(c.v)
    return arr((c.m + bubble_per_stage) * stage_lb)
