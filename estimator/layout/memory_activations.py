"""Activation bytes of the first, a middle and the last pipeline device of a layout (1F1B in flight,
or DualPipe's), for one or several recompute codes: estimator.layout.memory's activations part. The
per-layer bytes are estimator.layout.activations'; units bytes. Sources in the docstrings."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import numpy.typing as npt

from estimator.arrays import FloatArray, Num, arr
from estimator.layout.activations import (
    LayerTokens,
    layer_coefficients,
    layer_tokens,
    recompute_code,
    stored_activation_bytes,
)
from estimator.layout.memory_inputs import CardLayout, MemoryPolicy
from estimator.layout.stages import StageLayers
from estimator.model.transformer import Architecture

Stages = tuple[FloatArray, FloatArray, FloatArray]  # (first, middle, last) pipeline device


def stage_activations(
    arch: Architecture,
    seq_len: npt.ArrayLike,
    st: StageLayers,
    lay: CardLayout,
    policy: MemoryPolicy,
    whole: FloatArray | None = None,
) -> Stages:
    """Activation bytes of the first, a middle and the last pipeline device (1F1B in flight, or
    DualPipe's: `_dualpipe_stages`). The head's device adds, per micro-batch in flight there (one),
    the logits of the head and of each MTP depth and the MTP blocks (`_mtp_parts`).
    whole: whole_layer of the layout, when the caller computed it already."""
    return ActivationFrame(arch, seq_len, st, lay, policy, whole).stages(lay.recompute)


class ActivationFrame:
    """stage_activations of one layout for several recompute codes: what no code changes (the
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
        self.whole = whole_layer(arch, seq_len, lay, policy, self.layer) if whole is None else whole
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
        head = arr(logits + depth * (block + per_depth_inputs))  # _mtp_parts + D blocks

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


def whole_layer(
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


def _mtp_parts(
    arch: Architecture, seq_len: npt.ArrayLike, lay: CardLayout, policy: MemoryPolicy
) -> tuple[FloatArray, FloatArray]:
    """What the output head's device keeps per micro-batch for the head and the MTP modules, but the
    blocks (bytes per micro-batch; no recompute code changes them): the logits s·b·V·logits_bytes / t
    of the head and of each of the D depths (each has its own cross-entropy, DeepSeek-V3 section 2.2),
    (1 + D) of them, and per depth the two RMSNorm inputs (the hidden state and the next token's
    embedding, 2h each) and the projection's input (the two normalised vectors, 2h elements at 2
    bytes, 1 in FP8; none when the stack recomputes its norms). ActivationFrame.stages adds per depth
    one block of the last layer's kind."""
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
