"""Per-card memory of a training layout: weights, gradients, optimizer state, activations, buffers.

Every function is numpy-vectorized over layouts: tp, pp, dp, ... may be arrays of candidates and
broadcast together. All results are bytes.

Sources and conventions:
- Mixed-precision Adam keeps 2 bytes of 16-bit weights, the gradients, and K = 12 bytes of fp32
  master weights + Adam m + v per parameter (Rajbhandari et al. 2019, "ZeRO", section 3.1).
  ZeRO stage 1 shards the optimizer state over the data-parallel group, stage 2 also the gradients,
  stage 3 also the weights (ZeRO, figure 1: 7.5B on 64 cards -> 120 / 31.4 / 16.6 / 1.9 GB).
- Gradient dtype (`grad_dtype`): "fp32" is Megatron-LM's fp32 `main_grad` (4 bytes: 2 + 4 + 12 =
  18 bytes/param, or 6 + 12/dp with the distributed optimizer); "bf16" is DeepSpeed's 2-byte
  gradients (2 + 2 + 12 = 16, the ZeRO paper's count). DEFAULT_GRAD_DTYPE = "fp32": Megatron-LM and
  its Ascend port MindSpeed, the stacks this product sizes for, keep fp32 main gradients by default;
  it is the conservative choice (2 more bytes per parameter).
- The distributed optimizer (Megatron) shards the optimizer state over DP, i.e. it is ZeRO-1;
  `distributed_optimizer=True` raises the effective stage to at least 1.
- Activations per transformer layer (Korthikanti et al. 2022, "Reducing Activation Recomputation
  in Large Transformer Models", section 4 and table 2), 16-bit activations:
  s·b·h·(34 + 5·a·s/h) without parallelism; s·b·h·(10 + 24/t + 5·a·s/(h·t)) with tensor parallel;
  all of it divided by t with sequence parallel; selective recompute drops the 5·a·s/h term
  (Megatron's core_attn module) and what its other recompute modules re-run (layer_coefficients);
  full recompute keeps only the layer input 2·s·b·h (divided by t with sequence parallel).
  Flash attention (Dao et al. 2022) never stores the s x s scores: the 5·a·s/h term goes.
  `layer_coefficients` generalises the 34 to the architecture (grouped-query attention, gated MLP,
  MoE) and reduces exactly to Korthikanti's numbers for a GPT layer (MHA, ffn = 4h, GeLU).
- Pipeline (1F1B, Narayanan et al. 2021): the first stage holds activations of min(p, m)
  micro-batches in flight, the i-th stage p - i, the last stage one; the interleaved schedule with v
  chunks multiplies the first stage's activations by 1 + (p-1)/(p·v) (Korthikanti 2022, 4.2.3).
  The last stage also keeps the logits of one micro-batch, s·b·V·4 bytes (fp32 for the
  cross-entropy) divided by t (vocabulary-parallel output layer). The card's memory is the
  maximum over stages.
- MoE: expert weights are divided by EP and by the expert tensor-parallel size (MoE parallel
  folding, Megatron-Core --expert-tensor-parallel-size; = TP in the classic Megatron-LM layout),
  their optimizer states and ZeRO shards over the expert-data-parallel group tp·cp·dp/(ep·etp). A routed MoE MLP stores, per token and per chosen expert (top-k), the
  dispatched token copy (2h), the expert's gated fc1 output (4·f_e), its activation output (2·f_e)
  and the expert output kept for the combine (2h); shared experts count as a dense gated MLP of
  width n_shared·f_e; with balanced routing each EP rank processes s·b·k token copies.
- Buffers (`Buffers`): a collective-communication buffer (256 MB: the source article's HCCL
  measurement, 256 MB beat 64 MB by ~15% on 8-card DP, more gave nothing), a framework / cuBLAS
  workspace plus CUDA/CANN context (1 GiB) and a fragmentation reserve (5% of everything else,
  PyTorch caching-allocator fragmentation); `other` is their sum (plus ZeRO-3 prefetch buffers).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from estimator.arrays import FloatArray, Num, arr
from estimator.errors import ScenarioError
from estimator.layout.stacks import recomputes_scores
from estimator.model.transformer import Architecture, ParamCounts, is_gated_mlp, stage_param_counts

GIB = 2.0**30
WEIGHT_BYTES = 2.0  # bf16 / fp16 weights
OPTIMIZER_BYTES = 12.0  # K: fp32 master weights + Adam m + v (ZeRO's K = 12)
GRAD_BYTES = {"fp32": 4.0, "bf16": 2.0, "fp16": 2.0}
DEFAULT_GRAD_DTYPE = "fp32"
LOGITS_BYTES = 4.0  # fp32 logits for the cross-entropy
# partial: Megatron-LM's block recompute (--recompute-method block --recompute-num-layers k): the first
# k layers of each stage recompute fully, the rest keep everything; layout.evaluate picks the smallest k
# that fits in HBM and interpolates this module's none/full results (memory is linear in k).
RECOMPUTE_CODES = {"none": 0, "selective": 1, "full": 2, "partial": 3}
RECOMPUTE_NAMES = {v: k for k, v in RECOMPUTE_CODES.items()}


@dataclass(frozen=True)
class Buffers:
    """Fixed per-card allowances outside model state and activations (bytes / fraction)."""

    comm_buffer_bytes: float = 256e6  # HCCL_BUFFER_SIZE / NCCL buffers (source article section 4.3)
    workspace_bytes: float = GIB  # cuBLAS/CANN workspace + framework context
    fragmentation_fraction: float = 0.05  # allocator reserve, fraction of all other memory


@dataclass(frozen=True)
class MemoryBreakdown:
    """Per-card bytes (arrays broadcast over layouts)."""

    weights: np.ndarray
    gradients: np.ndarray
    optimizer: np.ndarray
    activations: np.ndarray
    other: np.ndarray
    total: np.ndarray

    def at(self, i: int | tuple[()]) -> dict[str, float]:
        """Plain-float dict of candidate i (or of a 0-d result when i is ())."""
        return {
            k: float(np.asarray(getattr(self, k))[i])
            for k in ("weights", "gradients", "optimizer", "activations", "other", "total")
        }


def grad_bytes(grad_dtype: str) -> float:
    """Bytes per gradient element for `grad_dtype` ("fp32" or "bf16")."""
    try:
        return GRAD_BYTES[grad_dtype]
    except KeyError:
        raise ScenarioError(
            f"grad_dtype must be one of {sorted(GRAD_BYTES)}, not {grad_dtype!r}", field="training.grad_dtype"
        ) from None


def recompute_code(value: npt.ArrayLike) -> npt.NDArray[np.int64]:
    """Map "none"/"selective"/"full" (or codes 0/1/2, or arrays of either) to integer codes."""
    if isinstance(value, str):
        if value not in RECOMPUTE_CODES:
            raise ScenarioError(
                f"recompute must be one of {list(RECOMPUTE_CODES)}, not {value!r}",
                field="parallelism.recompute",
            )
        return np.asarray(RECOMPUTE_CODES[value], dtype=np.int64)
    return np.asarray(value, dtype=np.int64)


# --------------------------------------------------------------------------- model state
def weight_replicas(
    dp: Num, cp: Num, ep: Num, tp: Num | None = None, expert_tp: Num | None = None
) -> tuple[FloatArray, FloatArray]:
    """(dense, expert) number of cards that hold the same weights and reduce their gradients together:
    the group ZeRO and the distributed optimizer shard over (dimensionless).

    Context-parallel ranks hold the same weights as data-parallel ones and sum their gradients with
    them (Megatron-Core's data-parallel group "with context parallel", torchtitan's dp_shard_cp mesh,
    DeepSpeed-Ulysses' sequence-data-parallel group): dense dp·cp. Experts: MoE parallel folding
    (Megatron-Core) regroups the tp·cp·dp ranks of a stage into expert-TP x EP x expert-DP, so the
    expert-data-parallel group is tp·cp·dp/(ep·expert_tp); with expert_tp = tp (the default, the
    classic layout with EP carved out of DP) that is dp·cp/ep.
    """
    dense = arr(np.asarray(dp, dtype=float) * np.asarray(cp, dtype=float))
    if tp is None or expert_tp is None:
        return dense, arr(dense / np.asarray(ep, dtype=float))
    fold = np.asarray(tp, dtype=float) / np.asarray(expert_tp, dtype=float)
    return dense, arr(dense * fold / np.asarray(ep, dtype=float))


def model_state_bytes(
    params: npt.ArrayLike,
    dp: npt.ArrayLike,
    zero_stage: npt.ArrayLike,
    grad_dtype: str = DEFAULT_GRAD_DTYPE,
    distributed_optimizer: npt.ArrayLike = False,
    optimizer_bytes: float = OPTIMIZER_BYTES,
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """(weights, gradients, optimizer) bytes per card for `params` parameters held by the card.

    params: parameters on this card after TP/PP/EP splitting; dp: the group over which ZeRO shards
    (`weight_replicas`); zero_stage: 0-3; grad_dtype "fp32" (4 B) or "bf16" (2 B);
    distributed_optimizer: Megatron's optimizer sharding (= ZeRO-1). Rajbhandari et al. 2019.
    """
    params = np.asarray(params, dtype=float)
    dp = np.asarray(dp, dtype=float)
    stage = np.maximum(np.asarray(zero_stage), np.where(np.asarray(distributed_optimizer), 1, 0))
    g = grad_bytes(grad_dtype)
    weights = params * WEIGHT_BYTES / np.where(stage >= 3, dp, 1.0)
    grads = params * g / np.where(stage >= 2, dp, 1.0)
    optimizer = params * optimizer_bytes / np.where(stage >= 1, dp, 1.0)
    return weights, grads, optimizer


# --------------------------------------------------------------------------- activations
@dataclass(frozen=True)
class LayerCoefficients:
    """Activation bytes per token of one layer, split by how they shard (Korthikanti 2022).

    replicated: bytes per token kept whole on every TP rank unless sequence parallel (10·h);
    split: bytes per token divided by TP (24·h for a GPT layer);
    score_per_key: bytes per token per attended key position of the attention scores (5·a),
    absent with flash attention or selective recompute.
    """

    replicated: float
    split: float
    score_per_key: float
    input_bytes: float  # the layer input kept under full recompute (2·h)
    # bytes per token that selective recompute does not store (by the stack's recompute modules)
    selective_replicated: float = 0.0
    selective_split: float = 0.0
    selective_scores: bool = True  # selective recompute re-runs the attention scores (core_attn)


def gpt_layer_coefficients(hidden: int, heads: int) -> LayerCoefficients:
    """Korthikanti's GPT layer: 34·h = 10·h replicated + 24·h split, scores 5·a."""
    return LayerCoefficients(10.0 * hidden, 24.0 * hidden, 5.0 * heads, 2.0 * hidden)


def layer_coefficients(
    arch: Architecture, fp8: bool = False, selective: tuple[str, ...] = ("core_attn",)
) -> tuple[LayerCoefficients, LayerCoefficients]:
    """(dense layer, MoE layer) activation coefficients for an architecture.

    selective: the recompute modules of "selective" recomputation (stacks.RECOMPUTE_MODULES) and
    what each leaves unstored: core_attn the attention scores (only an unfused kernel stores them);
    layernorm the MoE layer's pre-MLP norm output, 2h (Transformer Engine fuses the other norms into
    the following linear, which keeps its input); moe_act the routed experts' activation output,
    k·f_e elements; mlp a dense layer's MLP (fc1 and activation outputs); shared_experts the shared
    experts' (Megatron-Core TransformerConfig.recompute_modules).

    fp8: Transformer Engine (and torchao) save the FP8-cast input of every linear layer for the
    backward pass instead of the 16-bit tensor: the two normalised layer inputs (QKV and fc1
    inputs, 2h of the replicated 8h), the attention context (out-projection input, o) and the
    activation output (fc2 input, f; k·f_e for routed experts) take 1 byte instead of 2.

    Generalises Korthikanti's 34·h: replicated = LayerNorm inputs 4h + attention and MLP inputs 4h
    + two 1-byte dropout masks 2h = 10h (8h for a model trained without dropout: no masks); split = Q, K, V and the attention context (2 bytes each per
    element: 2·(q + k + v + o)) + the MLP (plain: fc1 output and activation output, 4·f; gated:
    fc1 output 2f wide and activation output, 6·f). For MHA with f = 4h this is 8h + 16h = 24h.
    """
    h = arch.hidden_size
    a = arch.num_attention_heads
    if arch.is_mla:
        qk = (arch.qk_nope_head_dim or 0) + (arch.qk_rope_head_dim or 0)
        v = arch.v_head_dim or arch.head_dim
        q_dim, k_dim, v_dim, o_dim = a * qk, a * qk, a * v, a * v
    else:
        q_dim = o_dim = a * arch.head_dim
        k_dim = v_dim = arch.num_key_value_heads * arch.head_dim
    gated = is_gated_mlp(arch.hidden_act)
    mlp_coeff = 6.0 if gated else 4.0
    attn_split = 2.0 * (q_dim + k_dim + v_dim + o_dim) - (o_dim if fp8 else 0.0)
    replicated = (10.0 if arch.hidden_dropout > 0 else 8.0) * h - (2.0 * h if fp8 else 0.0)
    fc2_saving = 1.0 if fp8 else 0.0  # the activation output saved as FP8: 1 byte less per element
    scores = (5.0 if arch.attention_dropout > 0 else 4.0) * a  # scores 2 + softmax 2 (+ dropout mask 1)
    mlp = (mlp_coeff - fc2_saving) * arch.intermediate_size
    redo_scores = recomputes_scores(selective)
    dense = LayerCoefficients(
        replicated, attn_split + mlp, scores, 2.0 * h, 0.0, mlp if "mlp" in selective else 0.0, redo_scores
    )
    if not arch.is_moe:
        return dense, dense
    fe = arch.moe_intermediate_size
    k = arch.num_experts_per_tok
    act_out = 2.0 - fc2_saving  # bytes per element of the activation output (fc2's saved input)
    routed = k * (4.0 * h + (mlp_coeff - fc2_saving) * fe)
    shared = (mlp_coeff - fc2_saving) * arch.n_shared_experts * fe
    router = 4.0 * arch.num_experts  # fp32 router logits
    moe = LayerCoefficients(
        replicated,
        attn_split + routed + shared + router,
        scores,
        2.0 * h,
        2.0 * h if "layernorm" in selective else 0.0,
        (act_out * k * fe if "moe_act" in selective else 0.0)
        + (shared if "shared_experts" in selective else 0.0),
        redo_scores,
    )
    return dense, moe


def selective_saves_memory(arch: Architecture, selective: tuple[str, ...], flash_attention: bool) -> bool:
    """Whether selective recompute stores less than no recompute: the scores of an unfused kernel,
    or any activation the recompute modules leave unstored (else the layout search skips it)."""
    dense, moe = layer_coefficients(arch, False, selective)
    unstored = dense.selective_split + moe.selective_split + moe.selective_replicated
    return (not flash_attention and dense.selective_scores) or unstored > 0


def layer_activation_bytes(
    coeffs: LayerCoefficients,
    seq_len: npt.ArrayLike,
    micro_batch_size: npt.ArrayLike,
    tp: npt.ArrayLike = 1,
    cp: npt.ArrayLike = 1,
    sequence_parallel: npt.ArrayLike = False,
    recompute: npt.ArrayLike = 0,
    flash_attention: bool = True,
) -> FloatArray:
    """Stored activation bytes of one layer for one micro-batch on one card (Korthikanti 2022).

    seq_len: tokens per sequence (s); micro_batch_size: sequences (b); tp: tensor-parallel size t;
    cp: context-parallel size (each rank keeps s/cp tokens, attending to all s keys);
    recompute: code 0 none / 1 selective / 2 full (or the names).
    """
    rc = recompute_code(recompute)
    tp = np.asarray(tp, dtype=float)
    sp = np.asarray(sequence_parallel, dtype=bool)
    tokens = (
        np.asarray(seq_len, dtype=float)
        / np.asarray(cp, dtype=float)
        * np.asarray(micro_batch_size, dtype=float)
    )
    rep_div = np.where(sp, tp, 1.0)
    keep_scores = ((rc == 0) | ((rc == 1) & (not coeffs.selective_scores))) & (not flash_attention)
    scores = np.where(keep_scores, coeffs.score_per_key * np.asarray(seq_len, dtype=float), 0.0)
    sel = (rc == 1).astype(float)
    replicated = coeffs.replicated - sel * coeffs.selective_replicated
    split = coeffs.split - sel * coeffs.selective_split
    stored = tokens * (replicated / rep_div + (split + scores) / tp)
    full = tokens * coeffs.input_bytes / rep_div
    return arr(np.where(rc == 2, full, stored))


def korthikanti_layer_bytes(
    seq_len: npt.ArrayLike,
    micro_batch_size: npt.ArrayLike,
    hidden: int,
    heads: int,
    tp: npt.ArrayLike = 1,
    sequence_parallel: npt.ArrayLike = False,
    recompute: npt.ArrayLike = "none",
    flash_attention: bool = False,
) -> FloatArray:
    """Activation bytes per GPT layer exactly as in Korthikanti et al. 2022, table 2."""
    return layer_activation_bytes(
        gpt_layer_coefficients(hidden, heads),
        seq_len,
        micro_batch_size,
        tp,
        1,
        sequence_parallel,
        recompute,
        flash_attention,
    )


# --------------------------------------------------------------------------- pipeline stages
@dataclass(frozen=True)
class StageLayers:
    """Layers on the first, a middle and the last pipeline device (arrays over layouts).

    Uneven splits, automatic: with c = pp·v chunks of ceil(L/c) layers the deficit c·ceil(L/c) - L
    is taken from the first device (one layer) and the last device (one more), as Llama 3 did (126
    layers on 16 stages); the remaining deficit, if any, comes off middle devices, so a middle
    device (pp >= 3) still holds the full v·ceil(L/c). Fixed (`split`, the scenario's
    parallelism.first_stage_layers / last_stage_layers, Megatron's --decoder-first/last-pipeline-
    num-layers): the first and/or last device hold what is fixed and the other devices the rest in
    equal shares (enumeration.stage_split_fails refuses what does not divide), e.g. DeepSeek-V3's
    61 layers on 16 devices as 4 + 14 x 4 + 1 (Megatron-Bridge's recipe). Dense leading layers
    (`first_k_dense_replace`) are placed from the first device on.
    """

    full: np.ndarray  # layers on a middle device (a full one in the automatic split)
    first: np.ndarray
    last: np.ndarray
    dense_first: np.ndarray
    dense_mid: np.ndarray
    dense_last: np.ndarray
    has_mid: np.ndarray  # pp >= 3
    single: np.ndarray  # pp == 1: the first device is also the last

    @property
    def most(self) -> np.ndarray:
        """Layers on the device holding the most (the partial-recompute count refers to it)."""
        return np.asarray(np.maximum(np.maximum(self.first, self.full), self.last))


def stage_layers(
    num_layers: int,
    n_dense: int,
    pp: npt.ArrayLike,
    virtual_stages: npt.ArrayLike = 1,
    split: tuple[int | None, int | None] = (None, None),
) -> StageLayers:
    pp = np.asarray(pp, dtype=np.int64)
    v = np.asarray(virtual_stages, dtype=np.int64)
    single = pp == 1
    if split == (None, None):
        chunks = pp * v
        lpc = -(-num_layers // chunks)
        full = lpc * v
        deficit = chunks * lpc - num_layers
        first = np.where(single, num_layers, full - (deficit >= 1))
        last = np.where(single, num_layers, full - (deficit >= 2))
    else:
        fixed_first, fixed_last = split
        others = np.maximum(pp - (fixed_first is not None) - (fixed_last is not None), 1)
        full = np.maximum((num_layers - (fixed_first or 0) - (fixed_last or 0)) // others, 0)
        first = np.where(single, num_layers, full if fixed_first is None else fixed_first)
        last = np.where(single, num_layers, full if fixed_last is None else fixed_last)
        full = np.broadcast_to(full, pp.shape)
    dense_first = np.minimum(n_dense, first)
    dense_mid = np.clip(n_dense - first, 0, full)
    dense_last = np.clip(n_dense - (num_layers - last), 0, last)
    return StageLayers(full, first, last, dense_first, dense_mid, dense_last, pp >= 3, single)


# --------------------------------------------------------------------------- per-card total
def per_card_memory(
    arch: Architecture,
    counts: ParamCounts,
    seq_len: npt.ArrayLike,
    tp: npt.ArrayLike,
    pp: npt.ArrayLike,
    dp: npt.ArrayLike,
    ep: npt.ArrayLike = 1,
    cp: npt.ArrayLike = 1,
    zero_stage: npt.ArrayLike = 0,
    micro_batch_size: npt.ArrayLike = 1,
    recompute: npt.ArrayLike = 0,
    sequence_parallel: npt.ArrayLike = False,
    virtual_stages: npt.ArrayLike = 1,
    distributed_optimizer: npt.ArrayLike = False,
    micro_batches: npt.ArrayLike | None = None,
    grad_dtype: str = DEFAULT_GRAD_DTYPE,
    flash_attention: bool = True,
    buffers: Buffers | None = None,
    fp8: bool = False,
    selective: tuple[str, ...] = ("core_attn",),
    expert_tp: npt.ArrayLike | None = None,
    stage_split: tuple[int | None, int | None] = (None, None),
) -> MemoryBreakdown:
    """Peak per-card memory of a layout (arrays of layouts broadcast), max over pipeline stages.

    micro_batches: micro-batches per step per DP rank (m); None means "many" (>= pp).
    fp8: linear-layer inputs are saved as FP8 (see layer_coefficients).
    selective: the recompute modules of selective recomputation (see layer_coefficients).
    expert_tp: the routed experts' tensor-parallel size (MoE parallel folding); None = tp (classic).
    stage_split: fixed (first, last) device layer counts (see stage_layers).
    Returns a MemoryBreakdown of the stage with the largest total.
    """
    buffers = buffers or Buffers()
    tp_f = np.asarray(tp, dtype=float)
    pp_i = np.asarray(pp, dtype=np.int64)
    pp_f = pp_i.astype(float)
    dp_f = np.asarray(dp, dtype=float)
    ep_f = np.asarray(ep, dtype=float)
    v_f = np.asarray(virtual_stages, dtype=float)
    rc = recompute_code(recompute)
    st = stage_layers(arch.num_hidden_layers, counts.n_dense_layers, pp_i, virtual_stages, stage_split)
    etp_f = tp_f if expert_tp is None else np.asarray(expert_tp, dtype=float)

    # ---- parameters per card, dense (sharded over dp·cp) and expert (over tp·cp·dp/(ep·etp)) parts
    dense_layer = counts.attention_per_layer + counts.dense_mlp_per_layer
    moe_nonrouted = counts.attention_per_layer + counts.moe_shared_per_layer
    single = st.single
    untied = 1.0 if counts.lm_head > 0 else 0.0  # tied + single stage: the embedding is the head
    first_params = stage_param_counts(
        counts, st.first, st.dense_first, 1.0, np.where(single, untied, 0.0), tp_f, ep_f, etp_f
    )
    mid_params = stage_param_counts(counts, st.full, st.dense_mid, 0.0, 0.0, tp_f, ep_f, etp_f)
    last_params = stage_param_counts(counts, st.last, st.dense_last, 0.0, 1.0, tp_f, ep_f, etp_f)

    dense_n, expert_n = weight_replicas(dp_f, np.asarray(cp, dtype=float), ep_f, tp_f, etp_f)

    def states(p: tuple[FloatArray, FloatArray]) -> tuple[FloatArray, FloatArray, FloatArray]:
        dense, expert = p
        w1, g1, o1 = model_state_bytes(dense, dense_n, zero_stage, grad_dtype, distributed_optimizer)
        w2, g2, o2 = model_state_bytes(expert, expert_n, zero_stage, grad_dtype, distributed_optimizer)
        return w1 + w2, g1 + g2, o1 + o2

    # ---- activations
    c_dense, c_moe = layer_coefficients(arch, fp8, selective)
    act_args = (seq_len, micro_batch_size, tp, cp, sequence_parallel)
    a_dense = layer_activation_bytes(c_dense, *act_args, rc, flash_attention)
    a_moe = layer_activation_bytes(c_moe, *act_args, rc, flash_attention)
    # full recompute re-materialises one layer's activations during its backward
    transient = np.where(
        rc == 2,
        np.maximum(
            layer_activation_bytes(c_dense, *act_args, 0, flash_attention),
            layer_activation_bytes(c_moe, *act_args, 0, flash_attention) if arch.is_moe else 0.0,
        ),
        0.0,
    )
    m = pp_f if micro_batches is None else np.asarray(micro_batches, dtype=float)
    inflight_first = np.minimum(pp_f, m)
    inflight_mid = np.minimum(np.maximum(pp_f - 1.0, 1.0), m)
    interleave = np.where(v_f > 1, 1.0 + (pp_f - 1.0) / (pp_f * v_f), 1.0)
    tokens = (
        np.asarray(seq_len, dtype=float)
        / np.asarray(cp, dtype=float)
        * np.asarray(micro_batch_size, dtype=float)
    )
    logits = tokens * arch.vocab_size * LOGITS_BYTES / tp_f

    def stage_act(
        n_layers: Num,
        n_dense: Num,
        inflight: Num,
        factor: Num,
        head: Num,
    ) -> FloatArray:
        per_mb = n_dense * a_dense + (n_layers - n_dense) * a_moe
        return arr(per_mb * inflight * factor + transient + head * logits)

    first_act = stage_act(st.first, st.dense_first, inflight_first, interleave, np.where(single, 1.0, 0.0))
    mid_act = stage_act(st.full, st.dense_mid, inflight_mid, interleave, 0.0)
    last_act = stage_act(st.last, st.dense_last, 1.0, 1.0, 1.0)

    # ---- buffers: ZeRO-3 prefetches about two layers' full (unsharded) weights
    stage_eff = np.maximum(np.asarray(zero_stage), np.where(np.asarray(distributed_optimizer), 1, 0))
    max_layer = max(dense_layer, moe_nonrouted) / tp_f + (counts.moe_routed_per_layer / (ep_f * etp_f))
    prefetch = np.where(stage_eff >= 3, 2.0 * max_layer * WEIGHT_BYTES, 0.0)
    fixed = buffers.comm_buffer_bytes + buffers.workspace_bytes + prefetch

    def assemble(params: tuple[FloatArray, FloatArray], act: FloatArray) -> tuple[FloatArray, ...]:
        w, g, o = states(params)
        rest = w + g + o + act + fixed
        other = fixed + buffers.fragmentation_fraction * rest
        return w, g, o, act, other, rest + buffers.fragmentation_fraction * rest

    first = assemble(first_params, first_act)
    mid = assemble(mid_params, mid_act)
    last = assemble(last_params, last_act)
    has_mid = st.has_mid
    has_last = ~single
    t_first, t_mid, t_last = first[5], np.where(has_mid, mid[5], -1.0), np.where(has_last, last[5], -1.0)
    pick_mid = (t_mid > t_first) & (t_mid >= t_last)
    pick_last = (t_last > t_first) & (t_last > t_mid)
    out = []
    for i in range(6):
        out.append(np.where(pick_last, last[i], np.where(pick_mid, mid[i], first[i])))
    return MemoryBreakdown(*out)
