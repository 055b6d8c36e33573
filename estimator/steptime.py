"""Step-time model of a training layout, vectorized over arrays of candidate layouts.

One training step = m micro-batches through a pipeline of p stages (1F1B, Narayanan et al. 2021,
"Efficient Large-Scale Language Model Training on GPU Clusters Using Megatron-LM"):

    step = m·t_stage + (p-1)/v·t_stage + dp_exposed + optimizer

t_stage is the time the busiest pipeline device needs for one micro-batch (forward + backward,
all its v interleaved chunks): compute + tensor/context/expert-parallel collectives + pipeline
point-to-point. (p-1)/v·t_stage is the pipeline bubble: (p-1)/(m+p-1) of the step for 1F1B and
(p-1)/(v·m) of the ideal time with v interleaved chunks (Narayanan 2021, section 2.2).

Components (all per card; seconds):
- compute: matmul FLOPs / (peak · matmul_efficiency · TRAINING_GEMM_FRACTION) (for routed MoE
  experts a roofline: max of that and the expert weights streamed from HBM per pass, since experts
  holding few tokens are memory-bound and EP raises their tokens per expert) plus memory-bound
  element-wise work
  (LayerNorm, bias-dropout-add, activation function, softmax without flash attention) / (HBM
  bandwidth · HBM_EFFICIENCY). The element-wise traffic scales with s·b·h per layer (not divided by
  t without sequence parallel) while the matmul FLOPs scale with s·b·h²/t, so small matrices under
  large TP run relatively slower: this is the physical size-dependent efficiency, no fitted curve.
  Executed FLOPs: forward 1 + backward 2 (Kaplan 2020); full recompute adds a forward of every
  layer (not of the output layer); selective recompute (without flash attention) adds the attention
  score forward (Korthikanti et al. 2022). Attention FLOPs use the non-causal count of PaLM /
  Megatron (4·s·d per token per layer forward); flash attention runs them at matmul efficiency.
- tp_comm: Megatron TP does 2 all-reduces per layer forward and 2 backward (with sequence parallel
  2 all-gathers + 2 reduce-scatters, the same bytes: Korthikanti 2022), 2 more with full recompute;
  each moves 2·(t-1)/t of the b·s·h 16-bit activation over the scale-up links. Not overlapped
  (on the critical path in Megatron-LM's default schedule).
- cp_comm: ring/all-gather context parallel moves (cp-1)/cp of the K and V of the whole sequence
  per layer forward, twice in backward (K/V again + their gradients), once more with full
  recompute; overlapped with the attention-score compute of the same layer, the rest exposed.
- ep_comm: MoE dispatch + combine all-to-alls, 2 forward and 2 backward per MoE layer (2 more with
  full recompute), each card sending its s·b/(cp·t) tokens' top-k copies of h 16-bit values,
  (n-1)/n of them off-card; the part addressed to peers outside the scale-up domain goes over the
  NIC. Not overlapped (DeepSeek's DualPipe would hide it; not modelled).
- pp_comm: each stage sends one b·s·h activation forward and one gradient backward per micro-batch
  and chunk (2·v messages), scattered over the t TP ranks (Narayanan 2021, scatter/gather
  optimisation), over the NIC unless both stages share a scale-up domain. On the critical path.
- dp_comm: gradient all-reduce (or ZeRO reduce-scatter + all-gather, the same bytes) of the card's
  gradients (grad_dtype bytes), hierarchical: 2·(n_in-1)/n_in inside the scale-up domain, then
  2·(n-1)/n across leaf groups of nodes over the NIC and, where the group spans several leaf groups,
  a cross-leaf step at NIC/cross_leaf_bandwidth_factor. With overlap_grad_reduce (Megatron
  --overlap-grad-reduce, DeepSpeed's default) buckets reduce during the backward of the last
  micro-batch; the exposed part is max(t_dp - that backward, the last bucket of DP_BUCKET_PARAMS).
  ZeRO-3 also all-gathers the weights twice per micro-batch (prefetched: overlapped with compute).
- optimizer: Adam is memory-bound: reads 12 bytes of fp32 state + the gradient, writes 12 + the
  2-byte weights per local parameter, at HBM bandwidth · HBM_EFFICIENCY.

Physical parameters: the accelerator's `matmul_efficiency` (catalog, best-case GEMM fraction of
peak), TRAINING_GEMM_FRACTION (the part of it a training step's GEMMs achieve; the only constant
calibrated, on all rows of the Megatron 2021 table at once), LINK_EFFICIENCY (achieved bus
bandwidth / nominal per-direction link bandwidth of NCCL/HCCL ring collectives, ~0.8 on NVLink and
InfiniBand in nccl-tests; set a priori), HBM_EFFICIENCY (STREAM-like fraction of nominal HBM
bandwidth; a priori). Nothing is fitted per published row.
"""

from __future__ import annotations

import numpy as np

from estimator.memory import grad_bytes, stage_layers

LINK_EFFICIENCY = 0.8  # bus bandwidth / nominal per-direction bandwidth for ring collectives
# Achieved fraction of the catalog's matmul_efficiency (best-case large-GEMM throughput, MAMF) that
# the GEMMs of a real training step reach: shapes of h/t = 1-3k (wave and tile quantisation),
# kernel-launch gaps, unfused small kernels. The one calibrated constant: fitted once to all ten
# rows of Narayanan et al. 2021 table 1 together (estimator.validation), 0.76 x 0.85 = 0.65 of
# the A100's peak on matmuls.
TRAINING_GEMM_FRACTION = 0.76
HBM_EFFICIENCY = 0.85  # achieved / nominal HBM bandwidth for streaming element-wise kernels
DP_BUCKET_PARAMS = 40e6  # Megatron-LM DDP default gradient bucket (parameters)
# Per-step latency of ring collectives (a priori: NCCL LL-protocol hop latency on NVLink ~1-2 us,
# RDMA hop + proxy ~5 us on InfiniBand/RoCE, nccl-tests small-message figures)
ALPHA_SCALEUP_S = 2e-6
ALPHA_NIC_S = 5e-6
WEIGHT_BYTES = 2.0
# bytes per token per layer of memory-bound element-wise traffic in the forward pass that is
# proportional to h: 2 LayerNorms (read 2 + write 2 bytes each) + 2 bias-dropout-adds (read 2 x 2,
# write 2, mask 1): 4 + 4 + 7 + 7 = 22
ELEMENTWISE_H_BYTES = 22.0
SOFTMAX_SCORE_BYTES = 9.0  # fused scale-mask-softmax (read 2, write 2) + dropout (read 2, write 2, mask 1)
ADAM_BYTES = 26.0  # read 12 B state, write 12 B state + 2 B weights; the gradient read is added


def attention_score_flop_per_token(arch, seq_len):
    """Forward FLOPs per token per layer of Q·K^T and scores·V (non-causal count, PaLM appendix B)."""
    a = arch.num_attention_heads
    if arch.is_mla:
        qk = (arch.qk_nope_head_dim or 0) + (arch.qk_rope_head_dim or 0)
        v = arch.v_head_dim or arch.head_dim
    else:
        qk = v = arch.head_dim
    return 2.0 * seq_len * a * (qk + v)


def _gated(arch) -> bool:
    return arch.hidden_act not in ("gelu", "gelu_new", "relu", "gelu_pytorch_tanh")


def model_flop_per_token(arch, counts, seq_len, include_attention=True):
    """Model FLOPs per token (forward + backward): 6 x matmul parameters active per token
    (layers + output layer; the embedding lookup has none) + 3 x attention-score FLOPs.
    """
    n_moe = counts.n_moe_layers
    n_dense = counts.n_dense_layers
    layer = n_dense * (counts.attention_per_layer + counts.dense_mlp_per_layer) + n_moe * (
        counts.attention_per_layer + counts.moe_shared_per_layer + counts.moe_active_routed_per_layer
    )
    head = counts.lm_head if counts.lm_head > 0 else counts.embedding
    att = (
        3.0 * (n_dense + n_moe) * attention_score_flop_per_token(arch, seq_len) if include_attention else 0.0
    )
    return 6.0 * (layer + head) + att


def _latency(n, stride, p, kind):
    """Start-up latency of one collective over n cards `stride` apart (seconds).

    Ring reduce-scatter / all-gather ("half"): one step per peer, (n_in-1)·ALPHA_SCALEUP_S inside
    the scale-up domain + (n_out-1)·ALPHA_NIC_S across it (NCCL/HCCL rings). All-reduce ("ar"): NCCL
    switches to its double binary tree at scale, 2·log2 steps.
    """
    n = np.asarray(n, dtype=float)
    n_in = np.clip(np.floor(p["domain"] / np.asarray(stride, dtype=float)), 1.0, n)
    n_out = n / n_in
    if kind == "ar":
        return 2.0 * (n_in - 1.0) * ALPHA_SCALEUP_S + 2.0 * np.log2(np.maximum(n_out, 1.0)) * ALPHA_NIC_S
    return (n_in - 1.0) * ALPHA_SCALEUP_S + (n_out - 1.0) * ALPHA_NIC_S


def hierarchical_allreduce_time_s(nbytes, n, stride, p, eta):
    """Hierarchical ring all-reduce of `nbytes` per card over a group of n cards `stride` apart.

    Inside the scale-up domain (n_in peers): 2(n_in-1)/n_in · bytes / scale-up bandwidth; then
    the 1/n_in shard across domains: 2(n_l-1)/n_l over the NIC inside a leaf group and
    2(n_g-1)/n_g across n_g leaf groups at NIC / cross_leaf_bandwidth_factor.
    p: {"domain": cards per scale-up domain, "bw_up": scale-up bytes/s per card per direction,
    "nic": NIC bytes/s per card, "cross": cross-leaf factor, "leaf_cards": cards per leaf group};
    eta: link efficiency. Returns seconds (bandwidth term only; see _latency).
    """
    n = np.asarray(n, dtype=float)
    stride = np.asarray(stride, dtype=float)
    n_in = np.clip(np.floor(p["domain"] / stride), 1.0, n)
    n_out = n / n_in
    t_in = 2.0 * (n_in - 1.0) / n_in * nbytes / (p["bw_up"] * eta)
    shard = nbytes / n_in
    span = n * stride
    n_groups = np.clip(np.ceil(span / p["leaf_cards"]), 1.0, n_out)
    n_leaf = n_out / n_groups
    t_leaf = 2.0 * (n_leaf - 1.0) / n_leaf * shard / (p["nic"] * eta)
    t_cross = 2.0 * (n_groups - 1.0) / n_groups * (shard / n_leaf) * p["cross"] / (p["nic"] * eta)
    return t_in + t_leaf + t_cross


def evaluate_step(problem, c) -> dict[str, np.ndarray]:
    """Step time and its breakdown for candidate arrays `c` (keys tp, pp, dp, ep, cp, mbs, v, sp,
    zero, rc, m; broadcastable arrays or scalars). `problem` is a LayoutProblem.

    Returns arrays: step_time_s, compute, bubble, tp_comm, pp_comm, dp_comm, ep_comm, cp_comm,
    optimizer, bubble_fraction, executed_flop_per_card (per step).
    """
    arch, counts = problem.arch, problem.counts
    acc = problem.accelerator
    eta = problem.link_efficiency
    peak = acc.peak_flops(problem.precision)
    mm_rate = peak * acc.matmul_efficiency * problem.gemm_fraction
    hbm_rate = acc.hbm_bandwidth_bytes_per_s * HBM_EFFICIENCY
    domain = float(problem.domain_cards)
    p = {
        "domain": domain,
        "bw_up": acc.scaleup_bandwidth_bytes_per_s,
        "nic": problem.nic_bytes_per_s_per_card,
        "cross": problem.cross_leaf_bandwidth_factor,
        "leaf_cards": problem.nodes_per_leaf_group * problem.cards_per_node,
    }
    f = {k: np.asarray(c[k], dtype=float) for k in ("tp", "pp", "dp", "ep", "cp", "mbs", "v", "m")}
    tp, pp, dp, ep, cp, mbs, v, m = (f[k] for k in ("tp", "pp", "dp", "ep", "cp", "mbs", "v", "m"))
    sp = np.asarray(c["sp"], dtype=bool)
    zero = np.asarray(c["zero"])
    rc = np.asarray(c["rc"])
    # share of layers recomputed: 1 for full, k/L_stage for partial (block) recompute, else 0
    full = np.asarray(c["rf"], dtype=float) if "rf" in c else (rc == 2).astype(float)
    selective = (rc == 1).astype(float)
    flash = bool(problem.flash_attention)
    s = float(problem.seq_len)
    h = float(arch.hidden_size)
    a = float(arch.num_attention_heads)
    tokens = s / cp * mbs  # tokens of one micro-batch on one card's sequence shard

    # ---------------- per-layer compute (per micro-batch, per card)
    att_fwd = attention_score_flop_per_token(arch, s)
    dense_fwd = 2.0 * (counts.attention_per_layer + counts.dense_mlp_per_layer)
    moe_fwd = 2.0 * (
        counts.attention_per_layer + counts.moe_shared_per_layer + counts.moe_active_routed_per_layer
    )
    passes = 3.0 + full  # forward + backward (+ recomputed forward)
    att_extra = np.where(flash, 0.0, selective)  # selective recompute re-runs the attention scores

    def layer_flops(fwd):
        return tokens / tp * ((fwd + att_fwd) * passes + att_fwd * att_extra)

    f_dense = float(arch.intermediate_size)
    f_moe = (
        float((arch.num_experts_per_tok + arch.n_shared_experts) * arch.moe_intermediate_size)
        if arch.is_moe
        else 0.0
    )
    act_coeff = 6.0 if _gated(arch) else 4.0  # activation function: read 2f (gated) or f, write f; 2 B
    rep_div = np.where(sp, tp, 1.0)
    score_bytes = 0.0 if flash else SOFTMAX_SCORE_BYTES * a * s  # per token, forward

    def layer_elementwise_bytes(ff):
        base = tokens * (ELEMENTWISE_H_BYTES * h / rep_div + act_coeff * ff / tp)
        scores = tokens * score_bytes / tp
        return base * passes + scores * (passes + selective)  # backward counted as 2 forward passes

    # time of one layer (matmuls + element-wise)
    # routed experts: a roofline on their weights. Every pass over a micro-batch streams the card's
    # expert weights from HBM; experts that see few tokens are memory-bound (EP raises their tokens
    # per expert). Attention and dense MLPs see all tokens of the micro-batch: compute-bound.
    routed_fwd = 2.0 * counts.moe_active_routed_per_layer
    routed_flops = tokens / tp * routed_fwd * passes
    routed_bytes = counts.moe_routed_per_layer / (ep * tp) * WEIGHT_BYTES * passes
    t_dense = layer_flops(dense_fwd) / mm_rate + layer_elementwise_bytes(f_dense) / hbm_rate
    t_moe = (
        layer_flops(moe_fwd - routed_fwd) / mm_rate
        + np.maximum(routed_flops / mm_rate, routed_bytes / hbm_rate)
        + layer_elementwise_bytes(f_moe) / hbm_rate
    )
    t_att_core = tokens / tp * att_fwd * passes / mm_rate  # what context-parallel comm can hide

    # ---------------- collectives per layer
    act_msg = tokens * h * 2.0  # b·s·h in 16 bit
    n_coll = 4.0 + 2.0 * full
    t_tp = np.where(
        tp > 1,
        n_coll * (2.0 * (tp - 1.0) / tp * act_msg / (p["bw_up"] * eta) + 2.0 * (tp - 1.0) * ALPHA_SCALEUP_S),
        0.0,
    )

    if arch.is_mla:
        kv_dim = a * ((arch.qk_nope_head_dim or 0) + (arch.qk_rope_head_dim or 0) + (arch.v_head_dim or 0))
    else:
        kv_dim = 2.0 * arch.num_key_value_heads * arch.head_dim
    cp_bytes = (cp - 1.0) / cp * s * mbs * kv_dim * 2.0 / tp * (3.0 + full)
    cp_bw = np.where(tp * cp <= domain, p["bw_up"], p["nic"]) * eta
    t_cp = np.maximum(np.where(cp > 1, cp_bytes / cp_bw, 0.0) - t_att_core, 0.0)

    k = float(arch.num_experts_per_tok) if arch.is_moe else 0.0
    a2a_bytes = tokens / tp * k * h * 2.0 * (4.0 + 2.0 * full)
    ep_stride = tp * cp
    ep_in = np.clip(np.floor(domain / ep_stride), 1.0, ep)
    in_bytes = a2a_bytes * (ep_in - 1.0) / ep
    out_bytes = a2a_bytes * (ep - ep_in) / ep
    ep_span = ep * ep_stride
    cross_frac = np.clip(1.0 - p["leaf_cards"] / ep_span, 0.0, 1.0)
    t_out = out_bytes / (p["nic"] * eta) * np.maximum(1.0, cross_frac * p["cross"])
    t_ep = np.where(ep > 1, np.maximum(in_bytes / (p["bw_up"] * eta), t_out), 0.0)

    # ---------------- per-stage totals for one micro-batch
    st = stage_layers(arch.num_hidden_layers, counts.n_dense_layers, np.asarray(c["pp"]), np.asarray(c["v"]))
    head_params = counts.lm_head if counts.lm_head > 0 else counts.embedding
    t_head = tokens / tp * 2.0 * head_params * 3.0 / mm_rate

    def stage(n_layers, n_dense, head):
        n_moe = n_layers - n_dense
        comp = n_dense * t_dense + n_moe * t_moe + head * t_head
        return comp, n_layers * t_tp, n_layers * t_cp, n_moe * t_ep

    single = st.single.astype(float)
    stages = [
        stage(st.first, st.dense_first, single),
        stage(st.full, st.dense_mid, 0.0),
        stage(st.last, st.dense_last, 1.0),
    ]
    valid = [np.ones_like(single, dtype=bool), st.has_mid, ~st.single]
    totals = [np.where(ok, sum(parts), -1.0) for parts, ok in zip(stages, valid, strict=True)]
    best = np.argmax(np.stack(np.broadcast_arrays(*totals)), axis=0)
    pick = [np.choose(best, [stages[0][i], stages[1][i], stages[2][i]]) for i in range(4)]
    comp_mb, tp_mb, cp_mb, ep_mb = (np.broadcast_to(x, best.shape) for x in pick)

    pp_msg = tokens * h * 2.0 / tp
    neighbour = tp * cp * dp
    pp_bw = (
        np.where(
            2.0 * neighbour <= domain,
            p["bw_up"],
            p["nic"] / np.where(pp * neighbour > p["leaf_cards"], p["cross"], 1.0),
        )
        * eta
    )
    pp_mb = np.where(pp > 1, 2.0 * v * pp_msg / pp_bw, 0.0)

    t_stage = comp_mb + tp_mb + cp_mb + ep_mb + pp_mb
    bubble = (pp - 1.0) / v * t_stage

    # ---------------- data parallel
    g = grad_bytes(problem.grad_dtype)
    dense_layer = counts.attention_per_layer + counts.dense_mlp_per_layer
    nonrouted = counts.attention_per_layer + counts.moe_shared_per_layer

    # parameters of the largest pipeline stage (first / middle / last device)
    def stage_params(n_layers, n_dense, emb, head):
        n_moe = n_layers - n_dense
        dense = (n_dense * dense_layer + n_moe * nonrouted + emb * counts.embedding + head * head_params) / tp
        return dense, n_moe * counts.moe_routed_per_layer / (ep * tp)

    untied = 1.0 if counts.lm_head > 0 else 0.0  # tied: one matrix when the first stage is also the last
    cand = [
        stage_params(st.first, st.dense_first, 1.0, single * untied),
        stage_params(st.full, st.dense_mid, 0.0, 0.0),
        stage_params(st.last, st.dense_last, 0.0, 1.0),
    ]
    sizes = [np.where(ok, d + e, -1.0) for (d, e), ok in zip(cand, valid, strict=True)]
    which = np.argmax(np.stack(np.broadcast_arrays(*sizes)), axis=0)
    dense_params = np.choose(which, [np.broadcast_to(x[0], which.shape) for x in cand])
    expert_params = np.choose(which, [np.broadcast_to(x[1], which.shape) for x in cand])
    params_card = dense_params + expert_params
    groups = ((dense_params, dp, tp * cp), (expert_params, dp / ep, tp * cp * ep))

    def allreduce(bytes_per_param, kind, per_layer=False):
        """Bandwidth + latency of the DP collective over dense and expert groups (kind "ar" or "half")."""
        total = 0.0
        for params, n, stride in groups:
            bw = hierarchical_allreduce_time_s(params * bytes_per_param, n, stride, p, eta)
            if kind == "half":  # reduce-scatter or all-gather: half the traffic of an all-reduce
                bw = 0.5 * bw
            calls = (
                np.where(params > 0, 1.0, 0.0) * st.full if per_layer else np.ceil(params / DP_BUCKET_PARAMS)
            )
            total = total + bw + calls * _latency(n, stride, p, kind)
        return total

    # ZeRO 0: all-reduce once per step; 1 (distributed optimizer): reduce-scatter the gradients and
    # all-gather the 16-bit weights once per step; 2: reduce-scatter every micro-batch (DeepSpeed
    # partitions the accumulated gradients), all-gather once per step; 3: per micro-batch and per
    # layer, all-gather the weights for forward and backward and reduce-scatter the gradients.
    z = np.asarray(zero)
    step_level = np.where(
        z == 0,
        allreduce(g, "ar"),
        np.where(z == 1, allreduce(g, "half") + allreduce(WEIGHT_BYTES, "half"), 0.0),
    )
    rs_mb = allreduce(g, "half")
    z2_step = allreduce(WEIGHT_BYTES, "half")
    z3_mb = 2.0 * allreduce(WEIGHT_BYTES, "half", per_layer=True) + allreduce(g, "half", per_layer=True)
    backward_window = comp_mb * 2.0 / (3.0 + full)
    if problem.overlap_grad_reduce:
        tail = np.minimum(1.0, DP_BUCKET_PARAMS / np.maximum(params_card, 1.0))
        step_exposed = np.maximum(step_level - backward_window, step_level * tail)
        z2_mb_exposed = np.maximum(rs_mb - backward_window, rs_mb * tail)
    else:
        step_exposed, z2_mb_exposed = step_level, rs_mb
    # ZeRO-3 prefetches the next layer's weights: its traffic hides behind the compute
    z3_mb_exposed = np.maximum(z3_mb - comp_mb, 0.0)
    dp_exposed = (
        step_exposed
        + np.where(z == 2, m * z2_mb_exposed + z2_step, 0.0)
        + np.where(z == 3, m * z3_mb_exposed, 0.0)
    )

    # ---------------- optimizer
    sharded = zero >= 1  # distributed optimizer / ZeRO: each rank updates its 1/dp shard
    local = np.where(sharded, dense_params / dp + expert_params / (dp / ep), params_card)
    t_opt = local * (ADAM_BYTES + g) / hbm_rate

    step = m * t_stage + bubble + dp_exposed + t_opt
    n_layers_total = float(arch.num_hidden_layers)
    n_moe_total = float(counts.n_moe_layers) if arch.is_moe else 0.0
    per_token = (
        (n_layers_total - n_moe_total) * ((dense_fwd + att_fwd) * passes + att_fwd * att_extra)
        + n_moe_total * ((moe_fwd + att_fwd) * passes + att_fwd * att_extra)
        + 6.0 * head_params
    )
    executed = per_token * m * dp * mbs * s / problem.cards
    return {
        "step_time_s": step,
        "compute": m * comp_mb,
        "bubble": bubble,
        "tp_comm": m * tp_mb,
        "pp_comm": m * pp_mb,
        "dp_comm": dp_exposed,
        "ep_comm": m * ep_mb,
        "cp_comm": m * cp_mb,
        "optimizer": t_opt,
        "bubble_fraction": bubble / step,
        "executed_flop_per_card": executed,
    }
