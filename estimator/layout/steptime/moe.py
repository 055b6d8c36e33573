"""Mixture-of-Experts terms of one MoE layer on one card, per micro-batch.

- Routed experts as a grouped GEMM (Megatron-Core --moe-grouped-gemm): each of the E/ep local
  experts receives M = ep·T·k·imbalance/E token rows (balanced routing gives every EP rank T·k
  copies; `imbalance` is max/mean tokens per rank, 1.0 for NVIDIA's force-balanced benchmarks).
  Rows are padded to whole 128-row tiles; the time is a roofline of the padded FLOPs against the
  streamed expert weights (few tokens per expert: weight-bound). Expert FFNs are split by the
  expert tensor-parallel size etp (MoE parallel folding, Megatron-Core --expert-tensor-parallel-size;
  the caller passes the etp group's pooled tokens T·etp/tp).
- Routing: router logits, softmax and top-k in fp32 (12 bytes per token and expert) and the
  permutation / unpermutation of k token copies (~4·k·h elements), memory-bound.
- Dispatch and combine all-to-all (forward 2, backward 2, 2 more per recomputed forward) over the
  EP group that folding forms out of the stage's tp·cp·dp ranks: each card sends its T/t tokens' k copies of h values (1 byte in FP8 with a hierarchical dispatcher,
  else 2), (ep-1)/ep of them off-card. Peers inside the scale-up domain are reached over NVLink/
  HCCS, the others over the NIC (at the cross-leaf factor for the share beyond a leaf group).
  A hierarchical dispatcher (DeepEP, HybridEP) sends a token once per distinct remote node:
  E[distinct nodes among k uniform picks over n nodes] = n(1-(1-1/n)^k), minus the own node, capped
  by node-limited routing (DeepSeek-V3: at most 4 nodes). Achieved bandwidth = nominal x
  LINK_EFFICIENCY (DeepEP on H800: 153-158 GB/s of ~200 over NVLink).
Units: tokens, FLOP, bytes, seconds.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from estimator.arrays import FloatArray, Num, arr
from estimator.layout.steptime.collectives import Fabric, clip_from_one, group_bandwidth, latency_s
from estimator.layout.steptime.constants import (
    ALPHA_NIC_S,
    ALPHA_SCALEUP_S,
    GROUPED_GEMM_TILE_ROWS,
    HOST_OP_S,
    KERNELS_PER_LAYER_PASS,
    KERNELS_PER_MOE_PASS,
    PERMUTE_ELEMENTS_PER_COPY,
    ROUTER_BYTES_PER_EXPERT,
    WEIGHT_BYTES,
)
from estimator.layout.steptime.gemm import linear_elements, linear_time_s
from estimator.model.transformer import Architecture


def tokens_per_local_expert(
    tokens: Num, ep: Num, top_k: float, experts: float, imbalance: float
) -> FloatArray:
    """Token rows of the busiest EP rank's local expert: ep·T·k·imbalance/E."""
    return arr(arr(ep) * tokens * top_k * imbalance / experts)


@dataclass(frozen=True)
class ExpertGemm:
    """What the grouped GEMM of one MoE layer's local routed experts runs on (one micro-batch).

    tokens: the expert-TP group's pooled tokens (T·etp/tp under parallel folding); etp: the expert
    tensor-parallel size that splits each expert's width; ep: the expert-parallel size; n_mat: weight
    matrices of an expert (3 gated, 2 plain); passes: forward-equivalent passes (forward, recomputed
    forward, backward = 2); rate, hbm_rate: the GEMM FLOP/s and streaming bytes/s; fp8, recipe: the
    scaling of FP8 GEMMs; imbalance: max/mean routed tokens per EP rank; per_gemm_s: the fixed time of
    each per-expert GEMM where the stack launches one per local expert (0 for one grouped kernel);
    weight_casts: FP8 casts of each expert weight per micro-batch (layer_compute.weight_casts)."""

    tokens: Num
    etp: Num
    ep: Num
    n_mat: float
    passes: Num
    rate: float
    hbm_rate: float
    fp8: bool
    recipe: str
    imbalance: float = 1.0
    per_gemm_s: float = 0.0
    weight_casts: Num = 1.0


def local_experts(arch: Architecture, ep: Num) -> FloatArray:
    """Routed experts held by one card: E/ep, at least one."""
    return arr(np.maximum(float(arch.num_experts) / arr(ep), 1.0))


def expert_launches(arch: Architecture, ep: Num, passes: Num) -> FloatArray:
    """Per-expert GEMMs one MoE layer launches per micro-batch where the stack runs one GEMM per local
    expert: two weight GEMMs per expert (gate/up and down) in each forward pass, the data-gradient and
    the weight-gradient pass, 2·local·passes."""
    return arr(2.0 * local_experts(arch, ep) * arr(passes))


def expert_time_s(g: ExpertGemm, arch: Architecture) -> FloatArray:
    """Grouped-GEMM time of the card's local routed experts over `g.passes` forward-equivalents (s).

    A padded-FLOP roofline against the streamed expert weights (module docstring), plus
    g.per_gemm_s for each of expert_launches() where the stack launches one GEMM per local expert.
    FP8 casts: the activations once per pass beyond the backward's two, the weights g.weight_casts
    times (one per forward pass, or a share of one where the stack caches FP8 weights)."""
    e = float(arch.num_experts)
    k = float(arch.num_experts_per_tok)
    h = float(arch.hidden_size)
    f = float(arch.moe_intermediate_size)
    local = local_experts(arch, g.ep)
    rows = tokens_per_local_expert(g.tokens, g.ep, k, e, g.imbalance)
    padded = arr(np.ceil(rows / GROUPED_GEMM_TILE_ROWS)) * GROUPED_GEMM_TILE_ROWS
    params_expert = g.n_mat * h * f
    flop = 2.0 * padded * params_expert / arr(g.etp) * local * g.passes
    per_pass = linear_elements(rows, params_expert, g.n_mat, h, g.etp) * local
    weights = params_expert / arr(g.etp) * local
    casts = (per_pass - weights) * (arr(g.passes) - 2.0) + weights * arr(g.weight_casts)
    t = linear_time_s(flop, per_pass * g.passes, g.rate, g.hbm_rate, g.fp8, g.recipe, casts)
    return arr(t + g.per_gemm_s * expert_launches(arch, g.ep, g.passes))


def host_issue_s(arch: Architecture, ep: Num, passes: Num, per_expert_host_s: float) -> FloatArray:
    """Host time to issue one MoE layer's operators for one micro-batch in eager mode (s).

    Every kernel of the layer (KERNELS_PER_LAYER_PASS + KERNELS_PER_MOE_PASS per pass) costs the host
    HOST_OP_S to issue; where the stack runs one GEMM per local expert, each of expert_launches()
    costs the host per_expert_host_s more (Transformer Engine's grouped linear in eager PyTorch splits
    the tokens, quantizes and sets up each expert's GEMM from Python; Megatron-Bridge names "small
    expert GEMMs + host overhead" as MoE's compute-efficiency wall and "increase MBS" as its fix,
    docs/sources.md#megatron-bridge). The dropless dispatcher synchronises with the host every MoE
    layer (moe_host_sync), so the host cannot queue work beyond the layer: the layer takes at least
    this long whatever its GPU time (layer_comm.host_floor)."""
    kernels = (KERNELS_PER_LAYER_PASS + KERNELS_PER_MOE_PASS) * HOST_OP_S * arr(passes)
    return arr(kernels + per_expert_host_s * expert_launches(arch, ep, passes))


def routing_time_s(
    tokens: Num, tp: Num, arch: Architecture, passes: Num, hbm_rate: float, imbalance: float
) -> FloatArray:
    """Router softmax/top-k and token (un)permutation, memory-bound (s)."""
    k = float(arch.num_experts_per_tok)
    h = float(arch.hidden_size)
    per_token = (
        ROUTER_BYTES_PER_EXPERT * arch.num_experts
        + PERMUTE_ELEMENTS_PER_COPY * k * h * WEIGHT_BYTES * imbalance
    )
    return arr(arr(tokens) / arr(tp) * per_token * arr(passes) / hbm_rate)


def all_to_all_s(
    tokens: Num,
    tp: Num,
    etp: Num,
    ep: Num,
    arch: Architecture,
    n_a2a: Num,
    fab: Fabric,
    dedup: bool,
    max_nodes: int | None,
    fp8_dispatch: bool,
    imbalance: float,
) -> FloatArray:
    """Dispatch + combine all-to-all time of one MoE layer and micro-batch on the busiest card (s).

    tokens: the micro-batch's tokens per tensor-parallel group (each of the tp cards dispatches
    1/tp of them); the EP group's members sit etp ranks apart (Megatron-Core's expert rank order
    etp-ep-edp under parallel folding), so floor(domain/etp) of them share the scale-up domain."""
    ep = arr(ep)
    k = float(arch.num_experts_per_tok)
    h = float(arch.hidden_size)
    sent = arr(tokens) / arr(tp) * imbalance  # tokens this card dispatches
    stride = arr(etp)
    ep_in = clip_from_one(np.floor(fab.domain / stride), ep)
    nodes = arr(np.maximum(ep / ep_in, 1.0))
    bytes_per = 0.5 * ((1.0 if fp8_dispatch else WEIGHT_BYTES) + WEIGHT_BYTES)  # dispatch, combine
    in_copies = k * (ep_in - 1.0) / ep
    if dedup:
        distinct = nodes * (1.0 - (1.0 - 1.0 / nodes) ** k)
        remote = arr(np.maximum(distinct - (1.0 - (1.0 - 1.0 / nodes) ** k), 0.0))
        if max_nodes:
            remote = arr(np.minimum(remote, max(float(max_nodes) - 1.0, 0.0)))
    else:
        remote = k * (ep - ep_in) / ep
    cross_frac = np.clip(1.0 - fab.leaf_cards / (ep * stride), 0.0, 1.0)
    t_in = sent * in_copies * h * bytes_per / (group_bandwidth(fab, ep_in) * fab.eta)
    t_out = sent * remote * h * bytes_per / (fab.nic * fab.eta) * np.maximum(1.0, cross_frac * fab.cross)
    latency = (ep_in - 1.0) * ALPHA_SCALEUP_S + np.where(nodes > 1, ALPHA_NIC_S, 0.0)
    return arr(np.where(ep > 1, arr(n_a2a) * (np.maximum(t_in, t_out) + latency), 0.0))


def expert_tp_gather_s(
    tokens: Num,
    tp: Num,
    etp: Num,
    arch: Architecture,
    pairs: Num,
    fab: Fabric,
    imbalance: float,
    combine_bytes: int,
) -> FloatArray:
    """The expert-TP collectives of Megatron-Core's alltoall token dispatcher, one MoE layer and
    micro-batch on the busiest card (s); exposed: ep_comm, not tp_comm.

    After the EP all-to-all each card holds the k·T/tp·imbalance routed copies it received and
    all-gathers the other expert-TP ranks' copies (dispatch_postprocess:
    gather_from_sequence_parallel_region over the expt_tp group, 16-bit tokens); after the grouped
    GEMM it reduce-scatters the experts' partial outputs back (combine_preprocess:
    reduce_scatter_to_sequence_parallel_region, in the routing probabilities' dtype since Megatron-LM
    325e7c8 of 2025-04: 4 bytes under the recipes' moe_router_dtype fp32, combine_bytes); the backward
    runs the reverse pair (the gather's gradient reduce-scattered, the reduce-scatter's gathered).
    Main megatron/core/transformer/moe/token_dispatcher.py:741-751 and :824-834 (d98e8a6); core_r0.8.0
    token_dispatcher.py:515-518 and :546 gather and reduce-scatter the last dimension instead, the
    same bytes (etp = tp there, 16-bit). Ring: each collective moves (etp-1)·k·T/tp·imbalance·h
    elements per card, `pairs` gather / reduce-scatter pairs per micro-batch (forward, backward and
    each recomputed forward: 2 + recomputed forwards), plus latency_s's per-step start-up.

    Not hidden: both run on the compute stream inside MoELayer.routed_experts_compute, between the
    all-to-all and the grouped GEMM that needs their result (moe_layer.py:548, :569); Transformer
    Engine's grouped linear does no TP communication of its own (explicit_expert_comm,
    extensions/transformer_engine.py:2459), so the TP overlap's userbuffers never see them; the 1F1B
    A2A overlap (fine_grained_callables.py:190) runs routed_experts_compute as the expert node on
    the compute stream, beside the other micro-batch's all-to-all, not its compute.
    tokens: the micro-batch's tokens per TP group; units tokens, bytes, seconds."""
    g = arr(etp)
    copies = arr(tokens) / arr(tp) * float(arch.num_experts_per_tok) * imbalance
    bw = np.where(g <= fab.domain, group_bandwidth(fab, g), fab.nic) * fab.eta
    per_pair = (g - 1.0) * copies * float(arch.hidden_size) * (WEIGHT_BYTES + combine_bytes) / bw
    raw = arr(pairs) * (per_pair + 2.0 * latency_s(g, 1.0, fab, "half"))
    return arr(np.where(g > 1, raw, 0.0))
