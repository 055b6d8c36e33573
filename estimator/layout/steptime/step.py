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
  vocabulary (LOGIT_BYTES per logit by the stack's cross-entropy kernels, pass by pass below).
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
- ep_comm: hidden behind the other micro-batch's layer compute with ep_comm_overlap or DualPipe;
  the alltoall dispatcher's expert-TP gather and reduce-scatter (`moe.expert_tp_gather_s`) never.
- pp_comm: `pipeline`; hidden behind the stage's compute with the interleaved schedule and
  overlap_p2p_comm, or DualPipe.
- host_overhead: KERNEL_GAP_S per kernel launched (none with CUDA graphs) and, for the dropless
  dispatcher's host synchronisation, MOE_OPS_AFTER_SYNC·HOST_OP_S per MoE layer forward; behind
  that sync a MoE layer lasts at least the host's issue time (`moe.host_issue_s`, host_floor).
- dp_comm, optimizer: `data_parallel` (the replica group's collectives by ZeRO stage and their
  overlap; Adam's memory-bound update of the card's shard).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from estimator.arrays import FloatArray, Num, arr
from estimator.layout.memory import StageLayers, stage_layers, weight_replicas
from estimator.layout.stack_profile import SAC_MATMUL_HALF
from estimator.layout.stacks import recomputes_scores
from estimator.layout.steptime import attention as att
from estimator.layout.steptime.candidates import Candidates
from estimator.layout.steptime.collectives import Fabric
from estimator.layout.steptime.constants import (
    COMM_SM_FRACTION,
)
from estimator.layout.steptime.data_parallel import data_parallel_s, optimizer_s
from estimator.layout.steptime.dualpipe import dualpipe_ranks
from estimator.layout.steptime.layer_comm import comm_terms
from estimator.layout.steptime.layer_compute import compute_terms, mla_up_projection, moe_and_host_terms
from estimator.layout.steptime.mtp import mtp_hidden, with_mtp
from estimator.layout.steptime.pipeline import bubble_s, p2p_s, p2p_window_s
from estimator.layout.steptime.rates import Rates, fabric, rates
from estimator.model.transformer import mlp_matrices, stage_param_counts

if TYPE_CHECKING:
    from estimator.layout.problem import LayoutProblem

# HBM bytes per logit of the fp32 cross-entropy, counted kernel by kernel in Megatron-Core's
# fused_vocab_parallel_cross_entropy (docs/sources.md#megatron-core): forward upcast + row max
# (read 2, write 4), exp in place (read 4, write 4), row sum (read 4), normalise in place (read 4,
# write 4); backward scale in place (read 4, write 4) and cast back to the logits' 16-bit dtype
# (read 4, write 2). PyTorch's F.cross_entropy on upcast logits (torchtitan, llm-foundry) moves the
# same 40: upcast 6, log-softmax 12 (two reads, one write), its backward 12 plus the one-hot
# gradient 4, downcast 6. Megatron-Core 0.6 (MindSpeed-LLM 1.0.RC3: LanguageModule.
# compute_language_model_loss calls vocab_parallel_cross_entropy(logits.float(), labels), whose
# forward MindSpeed replaces by mindspeed/core/tensor_parallel/cross_entropy.py with the same kernels;
# docs/sources.md#mindspeed) moves 52: upcast (read 2, write 4), row max (read 4), the max subtracted
# out of place (read 4, write 4), exp in place (read 4, write 4), row sum (read 4), normalise in
# place (read 4, write 4); backward scale in place (read 4, write 4) and the cast back (read 4,
# write 2). Keyed by the stack's `cross_entropy`.
LOGIT_BYTES = {"fused": 40.0, "mcore06": 52.0}
# A sliced output layer (the stack's `output_layer_sliced`: MindSpeed-LLM --output-layer-slice-num,
# modellink/core/tensor_parallel/layers.py at v1.0.RC3.0) concatenates the N GEMMs' 16-bit logits
# (torch.cat: read 2, write 2) and its backward hands each GEMM a strided slice of the logits'
# gradient, which Megatron-Core 0.6's linear backward makes contiguous (read 2, write 2).
SLICED_LOGIT_BYTES = 8.0
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


def _layer_terms(
    problem: LayoutProblem, c: Candidates, r: Rates, fab: Fabric, moe: bool
) -> tuple[dict[str, Num], dict[str, Num]]:
    """Per-layer terms (exposed) and hidden communication of one dense or MoE layer, one micro-batch:
    the compute (compute_terms), the MoE experts and the host (moe_and_host_terms), then the
    communication split into exposed and hidden parts (comm_terms)."""
    tokens = float(problem.seq_len) / c.cp * c.mbs
    n_mat = float(mlp_matrices(problem.arch.hidden_act))
    terms, t_gemm, t_att, t_elem = compute_terms(problem, c, r, moe, tokens, n_mat)
    moe_and_host_terms(problem, c, r, moe, tokens, n_mat, terms)
    hidden = comm_terms(problem, c, r, fab, moe, tokens, (t_gemm, t_att, t_elem), terms)
    return terms, hidden


def _stage_pick(
    problem: LayoutProblem,
    c: Candidates,
    per_layer: tuple[dict[str, Num], dict[str, Num], dict[str, Num]],
    hidden: tuple[dict[str, Num], dict[str, Num]],
) -> tuple[StageLayers, dict[str, FloatArray], dict[str, FloatArray]]:
    """Per-micro-batch terms of the busiest pipeline device (first / middle / last stage, by the sum
    of its exposed terms), and the hidden communication of that same device.

    per_layer: (dense layer, MoE layer, output head) terms; hidden: (dense, MoE) hidden communication.
    The terms are stacked into one (term, candidate...) array per kind, so composing the three stages
    and picking the busiest are a few numpy calls, not a few per term (the model's fixed cost per call
    is what a plan's dozen step-time calls pay; the element-wise arithmetic is the same).
    """
    arch, counts = problem.arch, problem.counts
    st = stage_layers(
        arch.num_hidden_layers, counts.n_dense_layers, c.pp.astype(int), c.v.astype(int), problem.stage_split
    )
    single = st.single.astype(float)
    shapes = ((st.first, st.dense_first, single), (st.full, st.dense_mid, 0.0), (st.last, st.dense_last, 1.0))
    layer_counts = [(n_layers - n_dense, n_dense, with_head) for n_layers, n_dense, with_head in shapes]
    dense_t, moe_t, head_t = per_layer
    head_t = with_mtp(arch, problem.seq_len, c, rates(problem).linear, head_t, moe_t)  # steptime.mtp
    keys = tuple(dense_t)
    exposed = dualpipe_ranks(
        _stages(keys, (dense_t, moe_t, head_t), layer_counts), st.single, problem.stack.dualpipe
    )
    valid = [np.ones_like(single, dtype=bool), st.has_mid, ~st.single]
    totals = [np.where(ok, _row_sum(d), -1.0) for d, ok in zip(exposed, valid, strict=True)]
    best = np.argmax(np.stack(np.broadcast_arrays(*totals)), axis=0)
    first, mid = best == 0, best == 1

    def pick(per_stage: list[FloatArray], names: tuple[str, ...]) -> dict[str, FloatArray]:
        # np.choose(best, ...) as two np.where (the same elements; choose broadcasts slowly)
        picked = np.where(first, per_stage[0], np.where(mid, per_stage[1], per_stage[2]))
        return dict(zip(names, picked, strict=True))

    hidden_keys = tuple(hidden[0])
    # no MTP block: no hidden head term (mtp_hidden's 0·terms would add zeros)
    head_hidden = mtp_hidden(arch, hidden[1]) if arch.num_nextn_predict_layers else {}
    hidden_stages = _stages(hidden_keys, (*hidden, head_hidden), layer_counts)
    return (
        st,
        pick(exposed, keys),
        pick(dualpipe_ranks(hidden_stages, st.single, problem.stack.dualpipe), hidden_keys),
    )


def _stages(
    keys: tuple[str, ...],
    terms: tuple[dict[str, Num], dict[str, Num], dict[str, Num]],
    layer_counts: Sequence[tuple[Num, Num, Num]],
) -> list[FloatArray]:
    """The (first, middle, last) stages' terms, each a (term, candidate...) array: per stage
    n_dense·dense + n_moe·moe + with_head·head term by term (the keys of `dense`; a term the head
    lacks counts 0).

    A dense model (its MoE terms are the dense ones, the same dict): (n_dense + n_moe)·dense, one
    product per stage; its n_moe is 0 on every stage that can be picked (n_dense_layers = all
    layers), so the sum is n_dense·dense + 0.0, the same floats. A stage without the head (the
    middle one, with_head the constant 0.0) or a head without terms (an empty dict: the hidden
    communication without MTP) adds no head term: x + 0.0·head is x (finite terms)."""
    dense = _stacked(keys, terms[0], layer_counts)
    head = _stacked(keys, terms[2], layer_counts) if terms[2] else None
    if terms[1] is terms[0]:
        return [
            _with_head((n_moe + n_dense) * dense, with_head, head)
            for n_moe, n_dense, with_head in layer_counts
        ]
    moe = _stacked(keys, terms[1], layer_counts)
    return [
        _with_head(n_dense * dense + n_moe * moe, with_head, head)
        for n_moe, n_dense, with_head in layer_counts
    ]


def _with_head(layers: FloatArray, with_head: Num, head: FloatArray | None) -> FloatArray:
    """A stage's terms: its layers' plus with_head·head (none where with_head is the constant 0.0
    or the head has no terms: None)."""
    if head is None or (isinstance(with_head, float) and with_head == 0.0):
        return layers
    return layers + with_head * head


def _stacked(
    keys: tuple[str, ...], terms: dict[str, Num], layer_counts: Sequence[tuple[Num, Num, Num]]
) -> FloatArray:
    """The terms `keys` of one layer kind as one float array (term first), broadcast to the shape
    all terms and stage counts share (assignment broadcasts in C: cheaper than broadcast_arrays)."""
    values = [terms.get(k, 0.0) for k in keys]
    out = np.empty((len(keys), *_common_shape([*values, *(x for t in layer_counts for x in t)])))
    for i, v in enumerate(values):
        out[i] = v
    return out


def _common_shape(values: list[Num]) -> tuple[int, ...]:
    """The broadcast shape of `values` (np.broadcast: one C call per 32 of them; np.broadcast_shapes
    costs several times more)."""
    shape: tuple[int, ...] = ()
    for start in range(0, len(values), 32):
        shape = tuple(np.broadcast(np.empty(shape), *values[start : start + 32]).shape)
    return shape


def _row_sum(stacked: FloatArray) -> FloatArray:
    """The sum of the terms of a stacked array, added in key order as sum(dict.values()) adds them
    (the same floats; numpy's reduce may pair them differently)."""
    total = stacked[0].copy()
    for row in stacked[1:]:
        total += row
    return arr(total)


def head_terms(problem: LayoutProblem, c: Candidates, r: Rates) -> dict[str, Num]:
    """The output head's terms of one micro-batch on one device (s): "gemm", the output layer's 16-bit
    GEMM forward + backward (2·tokens·params FLOP forward, 3x with backward, over TP, at the bf16
    rate), and "elementwise", the cross-entropy's logits read and written (LOGIT_BYTES per logit of
    the stack's loss, plus SLICED_LOGIT_BYTES when the output layer is sliced, at HBM bandwidth).
    Public: steptime.bounds adds them to its floor as the model does."""
    counts, arch = problem.counts, problem.arch
    tokens = float(problem.seq_len) / c.cp * c.mbs
    head_params = counts.lm_head if counts.lm_head > 0 else counts.embedding
    t_head = tokens / c.tp * 2.0 * head_params * 3.0 / r.bf16
    logit_bytes = (
        LOGIT_BYTES[problem.stack.cross_entropy] + SLICED_LOGIT_BYTES * problem.stack.output_layer_sliced
    )
    t_loss = tokens / c.tp * arch.vocab_size * logit_bytes / r.hbm
    return {"gemm": t_head, "elementwise": t_loss}


def busiest_stage_params(
    problem: LayoutProblem, c: Candidates, st: StageLayers
) -> tuple[FloatArray, FloatArray]:
    """(dense, expert) parameters (counts) held by the pipeline device that holds the most, after
    TP/EP/ETP sharding (model.transformer.stage_param_counts per stage: the first with the
    embedding, the middle ones, the last with the output head; the largest valid stage picked).
    Public: steptime.bounds sizes its DP and optimizer floor with them as the model does."""
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
    r = rates(problem)
    fab = fabric(problem)
    dense, dense_hidden = _layer_terms(problem, c, r, fab, moe=False)
    if problem.arch.is_moe:
        moe, moe_hidden = _layer_terms(problem, c, r, fab, moe=True)
    else:
        moe, moe_hidden = dense, dense_hidden
    st, mb, hid = _stage_pick(problem, c, (dense, moe, head_terms(problem, c, r)), (dense_hidden, moe_hidden))
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
    dense_p, expert_p = busiest_stage_params(problem, c, st)
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
    shape = np.shape(step)
    return {k: _full(v, shape) for k, v in out.items()}


def _full(v: Num, shape: tuple[int, ...]) -> FloatArray:
    """v as a float array of the step's shape: itself when it is one already (most terms are),
    else filled to it (np.full: the same numbers; np.broadcast_to's view costs several times more
    per call, a dozen times per step-time call)."""
    if isinstance(v, np.ndarray) and v.shape == shape and v.dtype == np.float64:
        return v
    return np.full(shape, v, dtype=float)


def _recomputed_flop(problem: LayoutProblem, c: Candidates) -> FloatArray:
    """FLOPs one card repeats per step on average because activations were recomputed (FLOP).

    Hardware FLOPs utilization counts the model's FLOPs plus these (Korthikanti et al. 2022,
    section 6: HFU includes the recomputed forward; PaLM appendix B), so HFU >= MFU always.
    Full or partial recompute repeats the forward of its share `rf` of the layers (linears 2 FLOP
    per parameter and token, and the attention core's forward). Selective recompute repeats what the
    step time above re-runs for the stack's modules: the attention core (attention_core), every other
    forward matmul under PyTorch's per-op SAC, the dense MLP or the shared experts (selective_extras).
    The stack's always_recompute "mla_up_proj" repeats MLA's up-projections (2 FLOP per parameter and
    token, layer_compute.mla_up_projection) in every layer not recomputed in full (always_extras);
    its norms and SwiGLU are memory-bound and count no FLOPs, as in MFU."""
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
    up_proj = mla_up_projection(arch)[0] if "mla_up_proj" in stack.always_recompute else 0.0
    always = arch.num_hidden_layers * up_proj * (1.0 - c.rf)
    scores = ("core_attn" in mods) if fused else recomputes_scores(mods)
    att_fwd = att.forward_flop_per_token(arch, s, fused)
    per_token = 2.0 * (lin * c.rf + extra * selective + always) + arch.num_hidden_layers * att_fwd * (
        c.rf + selective * scores
    )
    return arr(per_token * c.m * c.dp * c.mbs * s / problem.cards)
