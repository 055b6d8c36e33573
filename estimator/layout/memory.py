"""Per-card memory of a training layout: weights, gradients, optimizer state, activations, buffers.

Every function is numpy-vectorized over layouts: tp, pp, dp, ... may be arrays of candidates and
broadcast together. All results are bytes. The parts live in their own modules: model states by
ZeRO stage (`model_state`), activations per layer (`activations`), layers per pipeline device
(`stages`); this module assembles them per pipeline stage and takes the fullest.

- Model states: `model_state` (ZeRO, Rajbhandari et al. 2019; PyTorch FSDP's fp32 shards).
- Activations: `activations` (Korthikanti et al. 2022). Pipeline (1F1B, Narayanan et al. 2021):
  the first stage holds activations of min(p, m) micro-batches in flight, the i-th stage p - i, the
  last stage one; the interleaved schedule with v chunks multiplies the first stage's activations by
  1 + (p-1)/(p·v) (Korthikanti 2022, 4.2.3), but no device stores more than its m micro-batches:
  with m close to p the interleaved warm-up runs every forward chunk before the first backward
  (Megatron's and torch.distributed.pipelining's warm-up of (v-1)·p + 2·(p-1-rank) chunks, capped
  at v·m), which is all of them and no more. The last stage also keeps the logits of one
  micro-batch, s·b·V·4 bytes (fp32 for the cross-entropy) divided by t (vocabulary-parallel output
  layer). The card's memory is the maximum over stages.
- MoE: expert weights are divided by EP and by the expert tensor-parallel size (MoE parallel
  folding, Megatron-Core --expert-tensor-parallel-size; = TP in the classic Megatron-LM layout),
  their optimizer states and ZeRO shards over the expert-data-parallel group tp·cp·dp/(ep·etp).
- Gathered weights (`gathered_bytes`): ZeRO-3 prefetches about two layers' full (unsharded) 16-bit
  weights; PyTorch FSDP under pipeline parallelism (torch.distributed.pipelining,
  stage.backward_maybe_with_nosync) neither reshards after the backward nor reduces the gradients
  before the step's last micro-batch, so the stage's gathered 16-bit weights (2 B per parameter) and
  its unsharded gradients, upcast to the reduce dtype and accumulated (FSDP2
  FSDPParam.to_accumulated_grad_if_needed: grad_dtype bytes), stay on the card for the whole step;
  without PP the same holds for the weights with reshard_after_forward "never".
- Buffers (`Buffers`): a collective-communication buffer (256 MB: the source article's HCCL
  measurement, 256 MB beat 64 MB by ~15% on 8-card DP, more gave nothing), a framework / cuBLAS
  workspace plus CUDA/CANN context (1 GiB) and a fragmentation reserve (5% of everything else,
  PyTorch caching-allocator fragmentation); `other` is their sum (plus ZeRO-3 prefetch buffers).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from estimator.arrays import FloatArray, Num, arr
from estimator.layout.activations import (
    LOGITS_BYTES,
    RECOMPUTE_CODES,
    RECOMPUTE_NAMES,
    LayerCoefficients,
    LayerTokens,
    Storage,
    gpt_layer_coefficients,
    korthikanti_layer_bytes,
    layer_activation_bytes,
    layer_coefficients,
    layer_tokens,
    recompute_code,
    selective_saves_memory,
    stored_activation_bytes,
)
from estimator.layout.model_state import (
    DEFAULT_GRAD_DTYPE,
    GRAD_BYTES,
    OPTIMIZER_BYTES,
    WEIGHT_BYTES,
    grad_bytes,
    model_state_bytes,
    weight_replicas,
)
from estimator.layout.stack_profile import StackProfile
from estimator.layout.stages import StageLayers, stage_layers
from estimator.model.transformer import Architecture, ParamCounts, stage_param_counts

__all__ = [
    "DEFAULT_GRAD_DTYPE",
    "GIB",
    "GRAD_BYTES",
    "LOGITS_BYTES",
    "OPTIMIZER_BYTES",
    "RECOMPUTE_CODES",
    "RECOMPUTE_NAMES",
    "WEIGHT_BYTES",
    "Buffers",
    "CardLayout",
    "LayerCoefficients",
    "MemoryBreakdown",
    "MemoryPolicy",
    "StageLayers",
    "Storage",
    "gathered_bytes",
    "gpt_layer_coefficients",
    "grad_bytes",
    "korthikanti_layer_bytes",
    "layer_activation_bytes",
    "layer_coefficients",
    "model_state_bytes",
    "per_card_memory",
    "per_card_memory_codes",
    "recompute_code",
    "selective_saves_memory",
    "stack_memory",
    "stage_layers",
    "weight_replicas",
]

GIB = 2.0**30
Pair = tuple[FloatArray, FloatArray]  # (dense, expert) parameters of one card
Stages = tuple[FloatArray, FloatArray, FloatArray]  # (first, middle, last) pipeline device


@dataclass(frozen=True)
class Buffers:
    """Fixed per-card allowances outside model state and activations (bytes / fraction)."""

    comm_buffer_bytes: float = 256e6  # HCCL_BUFFER_SIZE / NCCL buffers (source article section 4.3)
    workspace_bytes: float = GIB  # cuBLAS/CANN workspace + framework context
    fragmentation_fraction: float = 0.05  # allocator reserve, fraction of all other memory


@dataclass(frozen=True)
class CardLayout:
    """The layout a card runs (numbers or arrays of candidate layouts, broadcast together).

    tp, pp, dp, ep, cp: parallel sizes; zero_stage 0-3; micro_batch_size: sequences per micro-batch;
    recompute: code 0 none / 1 selective / 2 full (or the names); sequence_parallel;
    virtual_stages: interleaved chunks per device; distributed_optimizer: Megatron's (= ZeRO-1);
    micro_batches: per step and DP rank (m), None = "many" (>= pp); expert_tp: the routed experts'
    tensor-parallel size (MoE parallel folding), None = tp; stage_split: fixed (first, last) device
    layer counts (stages.stage_layers).
    """

    tp: npt.ArrayLike
    pp: npt.ArrayLike
    dp: npt.ArrayLike
    ep: npt.ArrayLike = 1
    cp: npt.ArrayLike = 1
    zero_stage: npt.ArrayLike = 0
    micro_batch_size: npt.ArrayLike = 1
    recompute: npt.ArrayLike = 0
    sequence_parallel: npt.ArrayLike = False
    virtual_stages: npt.ArrayLike = 1
    distributed_optimizer: npt.ArrayLike = False
    micro_batches: npt.ArrayLike | None = None
    expert_tp: npt.ArrayLike | None = None
    stage_split: tuple[int | None, int | None] = (None, None)

    def zero_effective(self) -> npt.NDArray[np.int64]:
        """The ZeRO stage with the distributed optimizer counted as stage 1."""
        do = np.where(np.asarray(self.distributed_optimizer), 1, 0)
        return np.maximum(np.asarray(self.zero_stage, dtype=np.int64), do)


@dataclass(frozen=True)
class MemoryPolicy:
    """How the stack stores what the layout leaves on a card.

    grad_dtype: "fp32" or "bf16" gradients; flash_attention: scores never stored; buffers: fixed
    allowances; fp8: linear-layer inputs saved as FP8 (activations.layer_coefficients); selective:
    the modules selective recompute re-runs; fsdp_fp32_shards: PyTorch FSDP (the shard is the fp32
    master weight; under PP the gathered weights and unsharded gradients stay for the step);
    reshard_after_forward: the stack's ZeRO-3 policy (stacks.StackProfile); logits_bytes: bytes per
    logit the cross-entropy keeps; storage: activations.Storage; optimizer_bytes: K, optimizer
    bytes per parameter (fp32 master + Adam moments); dualpipe: DualPipe's placement and schedule;
    moe_imbalance: max/mean routed tokens per EP rank (the busiest rank's routed activations).
    """

    grad_dtype: str = DEFAULT_GRAD_DTYPE
    flash_attention: bool = True
    buffers: Buffers = field(default_factory=Buffers)
    fp8: bool = False
    selective: tuple[str, ...] = ("core_attn",)
    fsdp_fp32_shards: bool = False
    reshard_after_forward: str = "always"
    logits_bytes: float = LOGITS_BYTES
    storage: Storage = field(default_factory=Storage)
    optimizer_bytes: float = OPTIMIZER_BYTES
    dualpipe: bool = False
    moe_imbalance: float = 1.0


def stack_memory(policy: MemoryPolicy, stack: StackProfile) -> MemoryPolicy:
    """`policy` with the fields a stack profile sets: the cross-entropy's logits (4 bytes fp32, 2
    bytes bf16), the activation storage, K = 4 (fp32 master) + 8 (fp32 Adam moments) or + 4 (bf16
    moments, DeepSeek-V3 section 3.3.3) bytes per parameter, DualPipe."""
    return dataclasses.replace(
        policy,
        logits_bytes=2.0 if stack.logits_dtype == "bf16" else LOGITS_BYTES,
        storage=Storage(stack.always_recompute, stack.low_precision_cache, stack.moe_probs_in_activation),
        optimizer_bytes=4.0 + (4.0 if stack.adam_moments == "bf16" else 8.0),
        dualpipe=stack.dualpipe,
    )


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


def _stage_params(
    arch: Architecture, counts: ParamCounts, st: StageLayers, lay: CardLayout, policy: MemoryPolicy
) -> tuple[Pair, Pair, Pair]:
    """(dense, expert) parameters per card of the first, a middle and the last pipeline device.

    The device with the output head also holds the MTP modules (`_mtp_params`). DualPipe (pp > 1)
    places stage i and stage pp-1-i on one rank (deepseek-ai/DualPipe README: 2x parameters): the
    first and last ranks hold the first and the last stage, a middle rank two middle stages."""
    tp = np.asarray(lay.tp, dtype=float)
    ep = np.asarray(lay.ep, dtype=float)
    etp = tp if lay.expert_tp is None else np.asarray(lay.expert_tp, dtype=float)
    untied = 1.0 if counts.lm_head > 0 else 0.0  # tied + single stage: the embedding is the head
    single = st.single
    first = stage_param_counts(
        counts, st.first, st.dense_first, 1.0, np.where(single, untied, 0.0), tp, ep, etp
    )
    mid = stage_param_counts(counts, st.full, st.dense_mid, 0.0, 0.0, tp, ep, etp)
    last = stage_param_counts(counts, st.last, st.dense_last, 0.0, 1.0, tp, ep, etp)
    mtp = _mtp_params(arch, counts, lay, policy.dualpipe, (tp, ep, etp))
    first = (first[0] + np.where(single, mtp[0], 0.0), first[1] + np.where(single, mtp[1], 0.0))
    last = (last[0] + mtp[0], last[1] + mtp[1])
    if not policy.dualpipe:
        return first, mid, last
    pair = ~single
    ends = tuple(np.where(pair, f + la, f) for f, la in zip(first, last, strict=True))
    middle = tuple(np.where(pair, 2.0 * m, m) for m in mid)
    return (ends[0], ends[1]), (middle[0], middle[1]), (ends[0], ends[1])


def _mtp_params(
    arch: Architecture, counts: ParamCounts, lay: CardLayout, dualpipe: bool, split: tuple[FloatArray, ...]
) -> Pair:
    """(dense, expert) parameters per card of the D MTP modules on the head's device: per depth the
    projection 2h x h over TP, one block of the last layer's kind and its two norms (DeepSeek-V3
    section 2.2, model.mtp). The output head is shared; the embedding too when it is on the same
    device (pp = 1, or DualPipe: section 3.2.3), otherwise the MTP stage keeps its own copy
    (Megatron-Core GPTModel: an embedding "if self.pre_process or self.mtp_process")."""
    depth = float(arch.num_nextn_predict_layers)
    if depth == 0.0:
        return arr(0.0), arr(0.0)
    tp, ep, etp = split
    h = float(arch.hidden_size)
    dense, expert = stage_param_counts(counts, 1.0, 0.0 if arch.is_moe else 1.0, 0.0, 0.0, tp, ep, etp)
    copy = 0.0 if dualpipe else np.where(np.asarray(lay.pp) > 1, counts.embedding / tp, 0.0)
    return arr(depth * (dense + 2.0 * h * h / tp + 2.0 * h) + copy), arr(depth * expert)


def gathered_bytes(
    counts: ParamCounts, params: Pair, lay: CardLayout, policy: MemoryPolicy
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """(16-bit weights, gradients, prefetch) bytes ZeRO-2/3 gathers beyond the shards of `params`.

    PyTorch FSDP under PP (pp > 1, ZeRO >= 2; torch.distributed.pipelining's no-sync backward) or
    with reshard_after_forward "never" (ZeRO-3): the stage's gathered weights, 2 B per parameter;
    under PP also the unsharded gradients accumulated in grad_dtype until the step's last micro-batch.
    Otherwise ZeRO-3 prefetches about two layers' 16-bit weights (`prefetch`, counted in `other`).
    """
    zero, pipelined, held = _gather_rules(lay, policy)
    total = params[0] + params[1]
    weights = np.where(held, total * WEIGHT_BYTES, 0.0)
    grads = np.where(pipelined, total * grad_bytes(policy.grad_dtype), 0.0)
    return arr(weights), arr(grads), _prefetch_bytes(counts, lay, zero, held)


def _gather_rules(lay: CardLayout, policy: MemoryPolicy) -> tuple[npt.NDArray[Any], Any, Any]:
    """(effective ZeRO stage, FSDP under PP, weights held gathered) of gathered_bytes' rules."""
    zero = lay.zero_effective()
    pipelined = policy.fsdp_fp32_shards & (np.asarray(lay.pp) > 1) & (zero >= 2)
    held = (zero >= 3) & (pipelined | (policy.fsdp_fp32_shards and policy.reshard_after_forward == "never"))
    return zero, pipelined, held


def _prefetch_bytes(counts: ParamCounts, lay: CardLayout, zero: npt.NDArray[Any], held: Any) -> FloatArray:
    """ZeRO-3's prefetch of about two layers' 16-bit weights where not held gathered (bytes)."""
    tp = np.asarray(lay.tp, dtype=float)
    etp = tp if lay.expert_tp is None else np.asarray(lay.expert_tp, dtype=float)
    dense_layer = counts.attention_per_layer + counts.dense_mlp_per_layer
    moe_nonrouted = counts.attention_per_layer + counts.moe_shared_per_layer
    max_layer = max(dense_layer, moe_nonrouted) / tp + counts.moe_routed_per_layer / (
        np.asarray(lay.ep) * etp
    )
    return arr(np.where((zero >= 3) & ~held, 2.0 * max_layer * WEIGHT_BYTES, 0.0))


def _stage_states(
    counts: ParamCounts, params: Pair, lay: CardLayout, policy: MemoryPolicy
) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray]:
    """(weights, gradients, optimizer, prefetch) bytes of one device holding `params` (dense, expert)."""
    return _StageStates(counts, lay, policy).of(params)


class _StageStates:
    """_stage_states of one layout (array) for several devices' params: what depends on the layout
    alone (replica groups, ZeRO divisors, gathering rules, ZeRO-3 prefetch) computed once; per device
    the same operations as model_state_bytes and gathered_bytes, in the same order (the same floats)."""

    def __init__(self, counts: ParamCounts, lay: CardLayout, policy: MemoryPolicy):
        tp = np.asarray(lay.tp, dtype=float)
        etp = tp if lay.expert_tp is None else np.asarray(lay.expert_tp, dtype=float)
        groups = weight_replicas(
            np.asarray(lay.dp, dtype=float),
            np.asarray(lay.cp, dtype=float),
            np.asarray(lay.ep, dtype=float),
            tp,
            etp,
        )
        # model_state_bytes(params, dp, zero_stage, grad_dtype, distributed_optimizer, K, fsdp)
        self.k = policy.optimizer_bytes
        stage = np.maximum(np.asarray(lay.zero_stage), np.where(np.asarray(lay.distributed_optimizer), 1, 0))
        self.g = grad_bytes(policy.grad_dtype)
        self.no_weights = (stage >= 3) & policy.fsdp_fp32_shards
        self.divisors = [
            tuple(np.where(stage >= k, np.asarray(dp, dtype=float), 1.0) for k in (3, 2, 1)) for dp in groups
        ]
        # gathered_bytes
        zero, self.pipelined, self.held = _gather_rules(lay, policy)
        self.prefetch = _prefetch_bytes(counts, lay, zero, self.held)
        self.any_no_weights = bool(np.asarray(self.no_weights).any())  # the method: no np.any wrapper
        self.any_held, self.any_pipelined = (
            bool(np.asarray(self.held).any()),
            bool(np.asarray(self.pipelined).any()),
        )

    def of(self, params: Pair) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray]:
        """(weights, gradients, optimizer, prefetch) bytes of the device holding `params`. Where no
        layout of the array drops its weights, gathers them or accumulates unsharded gradients, the
        np.where of those rules are left out: they would pick the shards' own floats, and adding
        their +0.0 to the non-negative byte counts leaves them as they are."""
        states = []
        for p, (d_w, d_g, d_o) in zip(params, self.divisors, strict=True):
            p = np.asarray(p, dtype=float)
            weights = p * WEIGHT_BYTES / d_w
            if self.any_no_weights:
                weights = np.where(self.no_weights, 0.0, weights)
            states.append((weights, p * self.g / d_g, p * self.k / d_o))
        (w1, g1, o1), (w2, g2, o2) = states
        weights, grads = w1 + w2, g1 + g2
        if self.any_held or self.any_pipelined:
            total = params[0] + params[1]
            weights = weights + np.where(self.held, total * WEIGHT_BYTES, 0.0)
            gg = np.where(self.pipelined, total * self.g, 0.0)
            # unsharded gradients accumulated across micro-batches replace the shards during the step
            grads = np.where(gg > 0, gg, grads)
        return arr(weights), arr(grads), arr(o1 + o2), self.prefetch


def _stage_activations(
    arch: Architecture,
    seq_len: npt.ArrayLike,
    st: StageLayers,
    lay: CardLayout,
    policy: MemoryPolicy,
    whole: FloatArray | None = None,
) -> Stages:
    """Activation bytes of the first, a middle and the last pipeline device (1F1B in flight, or
    DualPipe's: `_dualpipe_stages`). The head's device adds, per micro-batch in flight there (one),
    the logits of the head and of each MTP depth and the MTP blocks (`_mtp_activations`).
    whole: _whole_layer of the layout, when the caller computed it already."""
    return _ActivationFrame(arch, seq_len, st, lay, policy, whole).stages(lay.recompute)


class _ActivationFrame:
    """_stage_activations of one layout for several recompute codes: what no code changes (the
    layer coefficients, the micro-batches in flight, full recompute's transient layer, the head's
    logits and MTP inputs) computed once; per code the same operations in the same order (the same
    floats)."""

    def __init__(
        self,
        arch: Architecture,
        seq_len: npt.ArrayLike,
        st: StageLayers,
        lay: CardLayout,
        policy: MemoryPolicy,
        whole: FloatArray | None,
    ):
        self.arch, self.st, self.policy = arch, st, policy
        self.coefficients = layer_coefficients(
            arch, policy.fp8, policy.selective, policy.storage, policy.moe_imbalance
        )
        self.layer = layer_tokens(seq_len, lay.micro_batch_size, lay.tp, lay.cp, lay.sequence_parallel)
        # full recompute re-materialises one layer's activations during its backward
        self.whole = _whole_layer(arch, seq_len, lay, policy, self.layer) if whole is None else whole
        self.pp = np.asarray(lay.pp, dtype=float)
        v = np.asarray(lay.virtual_stages, dtype=float)
        self.m = self.pp if lay.micro_batches is None else np.asarray(lay.micro_batches, dtype=float)
        self.head_parts = _mtp_parts(arch, seq_len, lay, policy)
        if not policy.dualpipe:
            self.inflight_first = np.minimum(self.pp, self.m)
            self.inflight_mid = np.minimum(np.maximum(self.pp - 1.0, 1.0), self.m)
            self.interleave = np.where(v > 1, 1.0 + (self.pp - 1.0) / (self.pp * v), 1.0)
            self.single = np.where(st.single, 1.0, 0.0)

    def stages(self, recompute: npt.ArrayLike) -> Stages:
        """The three devices' activation bytes under the recompute code(s) `recompute`."""
        arch, policy, st, m = self.arch, self.policy, self.st, self.m
        rc = recompute_code(recompute)
        c_dense, c_moe = self.coefficients
        a_dense = stored_activation_bytes(c_dense, self.layer, rc, policy.flash_attention)
        # a dense model's stages hold no MoE layer: n_layers - n_dense = 0 adds the same 0.0 either way
        a_moe: Num = (
            stored_activation_bytes(c_moe, self.layer, rc, policy.flash_attention) if arch.is_moe else 0.0
        )
        transient = np.where(rc == 2, self.whole, 0.0)
        logits, per_depth_inputs = self.head_parts
        depth = float(arch.num_nextn_predict_layers)
        block = arr(a_moe) if arch.is_moe else a_dense
        head = arr(logits + depth * (block + per_depth_inputs))  # _mtp_activations

        def per_mb(n_layers: npt.ArrayLike, n_dense: npt.ArrayLike) -> FloatArray:
            if not arch.is_moe:  # the MoE layers' 0.0 bytes add nothing (x + 0.0 = x for x >= 0)
                return arr(np.asarray(n_dense) * a_dense)
            return arr(np.asarray(n_dense) * a_dense + (np.asarray(n_layers) - np.asarray(n_dense)) * a_moe)

        if policy.dualpipe:
            return _dualpipe_stages(st, per_mb, (self.pp, m), transient, head)

        def stage(
            n_layers: npt.ArrayLike, n_dense: npt.ArrayLike, inflight: npt.ArrayLike, factor: npt.ArrayLike
        ) -> FloatArray:
            held = np.minimum(np.asarray(inflight) * np.asarray(factor), m)  # never more than all m
            return arr(per_mb(n_layers, n_dense) * held + transient)

        return (
            arr(stage(st.first, st.dense_first, self.inflight_first, self.interleave) + self.single * head),
            stage(st.full, st.dense_mid, self.inflight_mid, self.interleave),
            arr(stage(st.last, st.dense_last, 1.0, 1.0) + head),
        )


def _whole_layer(
    arch: Architecture,
    seq_len: npt.ArrayLike,
    lay: CardLayout,
    policy: MemoryPolicy,
    layer: LayerTokens | None = None,
) -> FloatArray:
    """The activations of the largest layer without recompute (bytes, one micro-batch): what full
    recompute re-materialises during a layer's backward. It does not depend on the recompute code,
    so per_card_memory_codes computes it once for all its codes. layer: layer_tokens of the layout,
    when the caller has it."""
    c_dense, c_moe = layer_coefficients(
        arch, policy.fp8, policy.selective, policy.storage, policy.moe_imbalance
    )
    if layer is None:
        layer = layer_tokens(seq_len, lay.micro_batch_size, lay.tp, lay.cp, lay.sequence_parallel)
    whole_dense = stored_activation_bytes(c_dense, layer, 0, policy.flash_attention)
    whole_moe = stored_activation_bytes(c_moe, layer, 0, policy.flash_attention) if arch.is_moe else 0.0
    return arr(np.maximum(whole_dense, whole_moe))


def _dualpipe_stages(
    st: StageLayers,
    per_mb: Callable[[npt.ArrayLike, npt.ArrayLike], FloatArray],
    pp_m: tuple[np.ndarray, np.ndarray],
    transient: FloatArray,
    head: FloatArray,
) -> Stages:
    """DualPipe's activations per rank (bytes). deepseek-ai/DualPipe dualpipe.py step(): rank r
    (half_rank r' = min(r, pp-1-r)) runs (pp/2 - r' - 1)·2 forward chunks of its first stage, then
    r' + 1 pairs of both: pp - r' - 1 micro-batches of the first stage and r' + 1 of the second are
    in flight, and the main step's overlapped forward-backward pairs add one before freeing one:
    pp + 1 chunks (the README's "PP+1" against 1F1B's PP). An end rank (r' = 0) holds pp micro-
    batches of the first stage (embedding side) and one of the last (head, MTP); a middle rank
    pp + 1 of its two middle stages; never more than the step's m micro-batches."""
    pp, m = pp_m
    ends = per_mb(st.first, st.dense_first) * np.minimum(pp, m) + per_mb(st.last, st.dense_last) + head
    middle = per_mb(st.full, st.dense_mid) * np.minimum(pp + 1.0, m)
    one = per_mb(st.first, st.dense_first) * np.minimum(pp, m) + head  # pp == 1: nothing to pair
    ends = np.where(st.single, one, ends)
    return arr(ends + transient), arr(middle + transient), arr(ends + transient)


def _mtp_activations(
    arch: Architecture, seq_len: npt.ArrayLike, lay: CardLayout, policy: MemoryPolicy, block: FloatArray
) -> FloatArray:
    """Bytes the output head's device keeps per micro-batch for the head and the MTP modules: the
    logits s·b·V·logits_bytes / t of the head and of each of the D depths (each has its own
    cross-entropy, DeepSeek-V3 section 2.2), and per depth one block of the last layer's kind
    (`block`, one micro-batch), the two RMSNorm inputs (the hidden state and the next token's
    embedding, 2h each) and the projection's input (the two normalised vectors, 2h elements at 2
    bytes, 1 in FP8; none when the stack recomputes its norms)."""
    logits, inputs = _mtp_parts(arch, seq_len, lay, policy)
    return arr(logits + float(arch.num_nextn_predict_layers) * (block + inputs))


def _mtp_parts(
    arch: Architecture, seq_len: npt.ArrayLike, lay: CardLayout, policy: MemoryPolicy
) -> tuple[FloatArray, FloatArray]:
    """_mtp_activations' terms that no recompute code changes: (1 + D) logits and, per depth, the
    norm and projection inputs (bytes per micro-batch)."""
    tokens = (
        np.asarray(seq_len, dtype=float)
        / np.asarray(lay.cp, dtype=float)
        * np.asarray(lay.micro_batch_size, dtype=float)
    )
    tp = np.asarray(lay.tp, dtype=float)
    depth = float(arch.num_nextn_predict_layers)
    logits = tokens * arch.vocab_size * policy.logits_bytes / tp
    h = float(arch.hidden_size)
    projection_in = 0.0 if "norms" in policy.storage.always else 2.0 * h * (1.0 if policy.fp8 else 2.0)
    rep_div = np.where(np.asarray(lay.sequence_parallel, dtype=bool), tp, 1.0)
    return arr((1.0 + depth) * logits), arr(tokens * (4.0 * h + projection_in) / rep_div)


def per_card_memory(
    arch: Architecture,
    counts: ParamCounts,
    seq_len: npt.ArrayLike,
    layout: CardLayout,
    policy: MemoryPolicy | None = None,
) -> MemoryBreakdown:
    """Peak per-card memory of a layout (arrays of layouts broadcast), max over pipeline stages.

    Returns a MemoryBreakdown of the stage with the largest total (bytes).
    """
    return per_card_memory_codes(arch, counts, seq_len, layout, [layout.recompute], policy)[0]


def per_card_memory_codes(
    arch: Architecture,
    counts: ParamCounts,
    seq_len: npt.ArrayLike,
    layout: CardLayout,
    recompute: Sequence[npt.ArrayLike],
    policy: MemoryPolicy | None = None,
) -> list[MemoryBreakdown]:
    """per_card_memory of `layout` with each recompute setting of `recompute` in its place: the
    stages, parameters and model states (which recompute does not change) computed once, the
    activations per setting; the same operations as one per_card_memory call each (same floats)."""
    policy = policy or MemoryPolicy()
    buffers = policy.buffers
    st = stage_layers(
        arch.num_hidden_layers, counts.n_dense_layers, layout.pp, layout.virtual_stages, layout.stage_split
    )
    states = _StageStates(counts, layout, policy)
    held = [states.of(params) for params in _stage_params(arch, counts, st, layout, policy)]
    # per device what no code changes: the model states' sum (the left of the total's sum) and buffers
    fixed_parts = [
        (w + g + o, buffers.comm_buffer_bytes + buffers.workspace_bytes + prefetch)
        for w, g, o, prefetch in held
    ]
    out = []
    frame = _ActivationFrame(arch, seq_len, st, layout, policy, None)  # the same for every code
    for rc in recompute:
        acts = frame.stages(rc)
        parts = []
        for (w, g, o, _), (states_sum, fixed), act in zip(held, fixed_parts, acts, strict=True):
            rest = states_sum + act + fixed
            frag = buffers.fragmentation_fraction * rest
            parts.append((w, g, o, act, fixed + frag, rest + frag))
        first, mid, last = parts
        t_first = first[5]
        t_mid = np.where(st.has_mid, mid[5], -1.0)
        t_last = np.where(~st.single, last[5], -1.0)
        pick_mid = (t_mid > t_first) & (t_mid >= t_last)
        pick_last = (t_last > t_first) & (t_last > t_mid)
        out.append(
            MemoryBreakdown(
                *[np.where(pick_last, last[i], np.where(pick_mid, mid[i], first[i])) for i in range(6)]
            )
        )
    return out
