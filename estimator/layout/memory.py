"""Per-card memory of a training layout: weights, gradients, optimizer state, activations, buffers.

Every function is numpy-vectorized over layouts: tp, pp, dp, ... may be arrays of candidates and
broadcast together. All results are bytes. The parts live in their own modules: model states by
ZeRO stage (`model_state`), activations per layer (`activations`) and per pipeline device
(`memory_activations`), layers per pipeline device (`stages`), the layout and the stack's storage
policy it is evaluated under (`memory_inputs`); this module assembles them per pipeline stage and
takes the fullest.

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

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from estimator.arrays import FloatArray, arr
from estimator.layout.activations import (
    LOGITS_BYTES,
    RECOMPUTE_CODES,
    RECOMPUTE_NAMES,
    LayerCoefficients,
    Storage,
    gpt_layer_coefficients,
    korthikanti_layer_bytes,
    layer_activation_bytes,
    layer_coefficients,
    recompute_code,
    selective_saves_memory,
)
from estimator.layout.memory_activations import ActivationFrame
from estimator.layout.memory_inputs import GIB, Buffers, CardLayout, MemoryPolicy, stack_memory
from estimator.layout.model_state import (
    DEFAULT_GRAD_DTYPE,
    GRAD_BYTES,
    OPTIMIZER_BYTES,
    WEIGHT_BYTES,
    grad_bytes,
    model_state_bytes,
    weight_replicas,
)
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

Pair = tuple[FloatArray, FloatArray]  # (dense, expert) parameters of one card


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
    frame = ActivationFrame(arch, seq_len, st, layout, policy, None)  # the same for every code
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
