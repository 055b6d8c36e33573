"""Communication terms of one transformer layer and micro-batch on one card (s), vectorized over
candidate layouts: tensor-parallel collectives (tp_comm), the context-parallel exchange and merge
(cp_comm), the expert-parallel all-to-all (ep_comm, with the alltoall dispatcher's expert-TP gather,
always exposed), each split into an exposed and a hidden part, and the MoE host-issue floor. The composition and the sources are in `step`'s docstring."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from estimator.arrays import FloatArray, Num, arr
from estimator.layout.steptime import attention as att
from estimator.layout.steptime import context_parallel as cpx
from estimator.layout.steptime.ascend import (
    is_ascend,
    mc2_tp_exposed_s,
)
from estimator.layout.steptime.candidates import Candidates
from estimator.layout.steptime.collectives import Fabric, group_bandwidth
from estimator.layout.steptime.layer_compute import attention_passes, backward_slowdown
from estimator.layout.steptime.moe import (
    all_to_all_s,
    expert_tp_gather_s,
    host_issue_s,
)
from estimator.layout.steptime.rates import Rates
from estimator.model.transformer import Architecture, ParamCounts, mlp_matrices

if TYPE_CHECKING:
    from estimator.layout.problem import LayoutProblem


def cp_terms(
    problem: LayoutProblem, c: Candidates, tokens: Num, t_att: FloatArray, fab: Fabric, r: Rates
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
    n_fwd, bwd = attention_passes(problem, c)
    bwd = bwd * backward_slowdown(problem) if stack.flash_attention else bwd
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


def comm_terms(
    problem: LayoutProblem,
    c: Candidates,
    r: Rates,
    fab: Fabric,
    moe: bool,
    tokens: Num,
    compute: tuple[FloatArray, FloatArray, Num],
    terms: dict[str, Num],
) -> dict[str, Num]:
    """Adds the exposed tp_comm, cp_comm, ep_comm and host_floor to terms (and the context-parallel
    merge to attention); returns the hidden communication (s per layer and micro-batch).
    compute: (t_gemm, t_att, t_elem) of compute_terms, the overlap windows."""
    arch, stack = problem.arch, problem.stack
    t_gemm, t_att, t_elem = compute
    h = float(arch.hidden_size)
    # tensor parallel: half of the collectives belong to the attention, half to the MLP; a MoE
    # layer's MLP gathers over the expert-TP group (parallel folding) unless shared experts need TP
    n_coll = 4.0 + 2.0 * c.rf
    # the sequence-parallel re-gather of the column linears' inputs: its hideable part joins the
    # collectives the stack overlaps, the rest is exposed (sp_regather_s)
    tp = tp_ring(c.tp, fab)  # the TP group's bandwidth and ring factor, once for its collectives
    rg_att, rg_mlp, rg_exposed = sp_regather_s(problem, c, tokens, t_gemm, fab, moe, r.fp8, tp)
    raw_tp_attention = 0.5 * tp_collectives_s(tp, tokens, h, n_coll, fab) + rg_att
    raw_tp_mlp = 0.5 * mlp_tp_collectives_s(problem, c, tokens, n_coll, fab, moe, tp) + rg_mlp
    raw_tp = raw_tp_attention + raw_tp_mlp
    tp_window = t_gemm if stack.tp_comm_overlap else 0.0
    # context parallel: the K/V ring or gather, each step hidden behind that step's attention compute
    raw_cp, exposed_cp, t_merge = cp_terms(problem, c, tokens, t_att, fab, r)
    terms["attention"] = t_att + t_merge
    raw_ep, ep_window = ep_comm(problem, c, fab, moe, tokens, r, terms, (t_att, t_elem))
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
    terms["tp_comm"] = arr(terms["tp_comm"] + rg_exposed)
    if moe and expert_tp_gathers(problem):  # on the compute stream: exposed (moe.expert_tp_gather_s)
        terms["ep_comm"] = arr(terms["ep_comm"] + routed_gather_s(problem, c, tokens, fab))
    floor_on = moe and stack.moe_host_sync and not stack.cuda_graphs
    terms["host_floor"] = host_floor(problem, c, terms) if floor_on else 0.0 * c.tp
    return hidden


def mlp_tp_collectives_s(
    problem: LayoutProblem,
    c: Candidates,
    tokens: Num,
    n_coll: Num,
    fab: Fabric,
    moe: bool,
    tp: TpRing | None = None,
) -> FloatArray:
    """The MLP's tensor-parallel collectives of one layer and micro-batch on one card, n_coll of them
    (s; twice the MLP's half of tp_collectives_s). A dense MLP: tokens·h over the TP group. A MoE
    layer where the dispatcher gathers the routed copies over the expert-TP group
    (expert_tp_gathers: Megatron-Core's alltoall dispatcher): only the shared experts' tokens·h over
    the TP group where there are any (the routed experts' gather is ep_comm, moe.expert_tp_gather_s).
    Elsewhere a MoE layer's MLP collective is a dense one's over the expert-TP group (parallel
    folding), or over TP where shared experts need it. tokens: the micro-batch's tokens per TP group.
    tp: tp_ring of c.tp, where the caller has it."""
    arch, h = problem.arch, float(problem.arch.hidden_size)
    tp_group: Num | TpRing = c.tp if tp is None else tp
    if moe and expert_tp_gathers(problem):
        return tp_collectives_s(tp_group, tokens, h, n_coll, fab) if arch.n_shared_experts else 0.0 * c.tp
    if moe and not arch.n_shared_experts:
        return tp_collectives_s(c.etp, arr(tokens) * c.etp / c.tp, h, n_coll, fab)
    return tp_collectives_s(tp_group, arr(tokens) * c.tp / c.tp, h, n_coll, fab)


def expert_tp_gathers(problem: LayoutProblem) -> bool:
    """Whether the stack's dispatcher gathers the routed copies over the expert-TP group
    (StackProfile.moe_expert_tp_gather; Megatron-Core 0.6's allgather dispatcher, moe_core06, does not)."""
    return problem.stack.moe_expert_tp_gather and not problem.stack.moe_core06


def routed_gather_s(problem: LayoutProblem, c: Candidates, tokens: Num, fab: Fabric) -> FloatArray:
    """The dispatcher's expert-TP gather and reduce-scatter of one MoE layer and micro-batch (s, all
    exposed; moe.expert_tp_gather_s): a pair in the forward, the backward and each recomputed forward."""
    stack = problem.stack
    return expert_tp_gather_s(
        tokens,
        c.tp,
        c.etp,
        problem.arch,
        2.0 + c.rf,
        fab,
        problem.moe_imbalance,
        stack.moe_expert_tp_combine_bytes,
    )


def ep_comm(
    problem: LayoutProblem,
    c: Candidates,
    fab: Fabric,
    moe: bool,
    tokens: Num,
    r: Rates,
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


def host_floor(problem: LayoutProblem, c: Candidates, terms: dict[str, Num]) -> FloatArray:
    """The host time of a MoE layer that its GPU time does not cover (s per micro-batch).

    Behind the dropless dispatcher's per-layer host synchronisation the host cannot queue work
    beyond the layer, so the layer lasts max(GPU time, host issue time) (moe.host_issue_s): small
    micro-batches of many small experts on a fast GPU wait for the host. The issue time is an x86
    server host's; problem.host_time_factor scales it (1.0 in plans, docs/steptime.md "The host CPU")."""
    per_expert = problem.expert_host_s if problem.stack.per_expert_gemms else 0.0
    host = host_issue_s(problem.arch, c.ep, c.passes, per_expert) * problem.host_time_factor
    gpu = sum(arr(v) for v in terms.values())
    return arr(np.maximum(host - gpu, 0.0))


def sp_regather_s(
    problem: LayoutProblem,
    c: Candidates,
    tokens: Num,
    t_gemm: Num,
    fab: Fabric,
    moe: bool,
    fp8: bool,
    tp: TpRing | None = None,
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """(attention's hideable, MLP's hideable, exposed) seconds of the sequence-parallel backward
    re-gather of one layer and micro-batch on one card.

    With sequence parallelism a column-parallel linear saves only its sequence shard of the input
    and all-gathers the tokens x h input again in the backward for its weight gradient (Megatron-Core
    core_r0.6.0 megatron/core/tensor_parallel/layers.py LinearWithGradAccumulationAndAsyncCommunication
    .backward: `_all_gather_base` launched async before the dgrad GEMM, waited for before the wgrad
    GEMM; Transformer Engine LayerNormLinear's backward; MindSpeed's MC2 ColumnSeqParallelLinear,
    whose initialize_cfg_from_args sets all_gather_recomputation, so the fused forward keeps no
    gathered copy and the backward issues the same async `_all_gather_base`; docs/sources.md
    #megatron-core, #mindspeed). One all-gather (half an all-reduce equivalent of tp_collectives_s)
    per column linear and micro-batch in the stack's `sp_regather` precision (16-bit; 1 byte where
    the stack gathers the FP8 GEMM input and the linears run in FP8, fp8), also under full
    recompute (the recomputed forward saves the shard again): the attention's QKV (MLA: its
    down-projections' gathered input) over the TP group, the dense MLP's fc1 over the TP group, a
    MoE layer's shared experts' fc1 over the TP group (the routed experts take the dispatcher's
    gathered tokens and do not gather again: Megatron-Core's explicit_expert_comm).

    It runs beside the dgrad GEMM of its own linear: under the stack's TP overlap
    (tp_comm_overlap) the part up to that GEMM's time (one pass of the column linears' GEMM time, the
    layer's t_gemm x their share of its parameters / c.passes) joins the overlapped collectives and
    the rest is exposed; without TP overlap all of it is exposed. Zero without sequence parallelism,
    at tp = 1, and where the stack's autograd keeps the gathered input (sp_regather "none").
    """
    stack = problem.stack
    if stack.sp_regather == "none":
        return _NO_REGATHER
    on = c.sp & (c.tp > 1)
    if not on.any():  # no candidate re-gathers: the zeros the general path adds
        return _NO_REGATHER
    col_att, col_mlp, params, has_mlp_gather = _column_shares(problem.arch, problem.counts, moe)
    half = 0.5 if fp8 and stack.sp_regather == "gemm-input" else 1.0  # 1-byte elements: half the bytes
    rg_att = tp_collectives_s(
        c.tp if tp is None else tp, arr(tokens) * half, float(problem.arch.hidden_size), 0.5, fab
    )
    if not on.all():
        rg_att = arr(np.where(on, rg_att, 0.0))
    rg_mlp = rg_att if has_mlp_gather else 0.0 * rg_att
    if not stack.tp_comm_overlap:  # nothing hidden: what the general path computes with overlap 0
        return _NO_REGATHER[0], _NO_REGATHER[1], arr(rg_att + rg_mlp)
    per_pass = arr(t_gemm) / (c.passes * params)
    hide_att = arr(np.minimum(rg_att, per_pass * col_att))
    hide_mlp = arr(np.minimum(rg_mlp, per_pass * col_mlp))
    return hide_att, hide_mlp, arr(rg_att + rg_mlp - hide_att - hide_mlp)


def _zero() -> FloatArray:
    """A read-only 0-d zero (s)."""
    z = arr(0.0)
    z.flags.writeable = False
    return z


# what sp_regather_s returns where no candidate re-gathers: zeros, which the callers add to their
# arrays (the same floats as adding arrays of zeros)
_NO_REGATHER: tuple[FloatArray, FloatArray, FloatArray] = (_zero(), _zero(), _zero())


@functools.cache
def _column_shares(arch: Architecture, counts: ParamCounts, moe: bool) -> tuple[float, float, float, bool]:
    """(the attention's column-linear parameters, the MLP's, the layer's linear parameters, whether
    the MLP gathers) of one layer for sp_regather_s (counts of parameters; sp_regather_s's docstring
    says which linears gather); once per model and layer kind."""
    h = float(arch.hidden_size)
    n_mat = float(mlp_matrices(arch.hidden_act))
    _, d_v = att.score_dims(arch)
    col_att = max(counts.attention_per_layer - float(arch.num_attention_heads) * d_v * h, 0.0)
    mlp = counts.moe_shared_per_layer if moe else counts.dense_mlp_per_layer
    has_mlp_gather = (not moe) or bool(arch.n_shared_experts)
    col_mlp = mlp * (n_mat - 1.0) / n_mat if has_mlp_gather else 0.0
    return col_att, col_mlp, counts.attention_per_layer + mlp, has_mlp_gather


@dataclass(frozen=True)
class TpRing:
    """What tp_collectives_s derives from the group alone (tp_ring), for several collectives over
    one group: the bandwidth per card·eta (bytes/s), the ring factor 2(g-1)/g, the g-1 ring steps,
    and where g > 1."""

    bw: FloatArray
    factor: FloatArray
    steps: FloatArray
    on: npt.NDArray[np.bool_]


def tp_ring(group: Num, fab: Fabric) -> TpRing:
    """TpRing of a tensor-parallel group of `group` cards (tp_collectives_s's arithmetic)."""
    g = arr(group)
    bw = np.where(g <= fab.domain, group_bandwidth(fab, g), fab.nic) * fab.eta
    steps = g - 1.0
    return TpRing(arr(bw), arr(2.0 * steps / g), arr(steps), np.asarray(g > 1))


def tp_collectives_s(group: Num | TpRing, tokens: Num, h: float, n_coll: Num, fab: Fabric) -> FloatArray:
    """n_coll ring all-reduces (or all-gather + reduce-scatter pairs) of tokens·h 16-bit values over a
    tensor-parallel group, 2(g-1)/g of the bytes per card, plus 2 us per ring step (s). group: its
    cards, or its TpRing (tp_ring) where the caller times several collectives over it."""
    ring = group if isinstance(group, TpRing) else tp_ring(group, fab)
    raw = n_coll * (ring.factor * tokens * h * 2.0 / ring.bw) + n_coll * 2.0 * ring.steps * 2e-6
    return arr(np.where(ring.on, raw, 0.0))
