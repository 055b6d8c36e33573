"""Stored activations per layer and micro-batch (Korthikanti et al. 2022), by recompute mode.

Bytes per card; numpy-vectorized over layouts. 16-bit activations, per transformer layer (section 4
and table 2): s·b·h·(34 + 5·a·s/h) without parallelism; s·b·h·(10 + 24/t + 5·a·s/(h·t)) with tensor
parallel; all of it divided by t with sequence parallel; selective recompute drops the 5·a·s/h term
(Megatron's core_attn module) and what its other recompute modules re-run (layer_coefficients); full
recompute keeps only the layer input 2·s·b·h (divided by t with sequence parallel). Flash attention
(Dao et al. 2022) never stores the s x s scores: the 5·a·s/h term goes. `layer_coefficients`
generalises the 34 to the architecture (grouped-query attention, gated MLP, MoE) and reduces exactly
to Korthikanti's numbers for a GPT layer (MHA, ffn = 4h, GeLU). A routed MoE MLP stores, per token
and per chosen expert (top-k), the dispatched token copy (2h), the expert's gated fc1 output (4·f_e),
its activation output (2·f_e) and the expert output kept for the combine (2h); shared experts count
as a dense gated MLP of width n_shared·f_e; with balanced routing each EP rank processes s·b·k token
copies.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from estimator.arrays import FloatArray, Num, arr
from estimator.errors import ScenarioError
from estimator.layout.stacks import recomputes_scores
from estimator.model.transformer import Architecture, is_gated_mlp

LOGITS_BYTES = 4.0  # fp32 logits for the cross-entropy
# partial: Megatron-LM's block recompute (--recompute-method block --recompute-num-layers k): the first
# k layers of each stage recompute fully, the rest keep everything; layout.evaluate picks the smallest k
# that fits in HBM and interpolates this module's none/full results (memory is linear in k).
RECOMPUTE_CODES = {"none": 0, "selective": 1, "full": 2, "partial": 3}
RECOMPUTE_NAMES = {v: k for k, v in RECOMPUTE_CODES.items()}


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


@dataclass(frozen=True)
class Storage:
    """What a stack stores for the backward beyond Korthikanti's count (stacks.StackProfile fields).

    always: modules recomputed in every layout (stacks.ALWAYS_RECOMPUTE: "norms", "mla_up_proj",
    "moe_act"); low_precision: DeepSeek-V3's FP8 / E5M6 activation cache; probs_in_activation: the
    router's weights applied inside the experts (no expert output kept for the combine).
    """

    always: tuple[str, ...] = ()
    low_precision: bool = False
    probs_in_activation: bool = False


E5M6_BYTES = 1.5  # DeepSeek-V3 section 3.3.3: 1 sign + 5 exponent + 6 mantissa bits


def _attention_split(arch: Architecture, fp8: bool, storage: Storage) -> float:
    """Bytes per token of the attention's split activations: Q, K, V and the context, 2 bytes per
    element (the context 1 byte with FP8, 1.5 with DeepSeek's E5M6 cache); with "mla_up_proj"
    always recomputed MLA keeps its latents (c_q, c_kv and the rotary key, 2 bytes, DeepSeek-V3
    section 3.2.3) instead of Q (only with a q latent) and K, V."""
    a = arch.num_attention_heads
    if arch.is_mla:
        qk = (arch.qk_nope_head_dim or 0) + (arch.qk_rope_head_dim or 0)
        v = arch.v_head_dim or arch.head_dim
        q_dim, k_dim, v_dim, o_dim = a * qk, a * qk, a * v, a * v
    else:
        q_dim = o_dim = a * arch.head_dim
        k_dim = v_dim = arch.num_key_value_heads * arch.head_dim
    context = E5M6_BYTES if storage.low_precision else (1.0 if fp8 else 2.0)
    qkv = 2.0 * (q_dim + k_dim + v_dim)
    if arch.is_mla and "mla_up_proj" in storage.always:
        q_latent = arch.q_lora_rank or 0
        qkv = 2.0 * (q_latent + (arch.kv_lora_rank or 0) + (arch.qk_rope_head_dim or 0))
        qkv += 0.0 if q_latent else 2.0 * q_dim  # no q latent: Q comes from its own projection
    return qkv + context * o_dim


def _moe_split(arch: Architecture, fp8: bool, storage: Storage, mlp_coeff: float) -> tuple[float, float]:
    """(routed, shared) bytes per token of a MoE layer's experts: per chosen expert the dispatched
    token copy (2h; h in FP8 under low_precision), the fc1 output (2 bytes per element; 1 under
    low_precision), the activation output (2, 1 with FP8; 0 with "moe_act" always recomputed) and
    the expert output kept for the combine (2h; 0 with probs_in_activation); shared experts as a
    gated MLP of width n_shared·f_e by the same rules (without dispatch and combine)."""
    h, fe, k = arch.hidden_size, arch.moe_intermediate_size, arch.num_experts_per_tok
    fc1_width = mlp_coeff / 2.0 - 1.0  # fc1 output elements per f_e: 2 gated, 1 plain
    fc1 = fc1_width * (1.0 if storage.low_precision else 2.0)
    act = 0.0 if "moe_act" in storage.always else (1.0 if fp8 else 2.0)
    dispatch = 1.0 * h if storage.low_precision else 2.0 * h
    combine = 0.0 if storage.probs_in_activation else 2.0 * h
    return k * (dispatch + combine + (fc1 + act) * fe), (fc1 + act) * arch.n_shared_experts * fe


@functools.lru_cache(maxsize=1024)  # pure, of hashable (frozen) inputs; every memory call asks it
def layer_coefficients(
    arch: Architecture,
    fp8: bool = False,
    selective: tuple[str, ...] = ("core_attn",),
    storage: Storage | None = None,
    imbalance: float = 1.0,
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

    storage: what the stack stores beyond that (`Storage`): "norms" always recomputed leaves only
    the two norm inputs (4h) of the replicated part; the attention and expert terms follow
    `_attention_split` and `_moe_split`.

    imbalance: max/mean routed tokens per EP rank (training.moe_imbalance): the busiest rank, the
    one that must fit in HBM, stores that many times the balanced share of routed token copies, as
    its experts compute them in the step time (steptime.moe.tokens_per_local_expert).

    Generalises Korthikanti's 34·h: replicated = LayerNorm inputs 4h + attention and MLP inputs 4h
    + two 1-byte dropout masks 2h = 10h (8h for a model trained without dropout: no masks); split =
    Q, K, V and the attention context (2 bytes each per element: 2·(q + k + v + o)) + the MLP
    (plain: fc1 output and activation output, 4·f; gated: fc1 output 2f wide and activation output,
    6·f). For MHA with f = 4h this is 8h + 16h = 24h.
    """
    storage = storage or Storage()
    h = arch.hidden_size
    a = arch.num_attention_heads
    mlp_coeff = 6.0 if is_gated_mlp(arch.hidden_act) else 4.0
    attn_split = _attention_split(arch, fp8, storage)
    norm_outputs = 0.0 if "norms" in storage.always else (1.0 if fp8 else 2.0) * 2.0 * h
    replicated = (6.0 if arch.hidden_dropout > 0 else 4.0) * h + norm_outputs
    fc2_saving = 1.0 if fp8 else 0.0  # the activation output saved as FP8: 1 byte less per element
    scores = (5.0 if arch.attention_dropout > 0 else 4.0) * a  # scores 2 + softmax 2 (+ dropout mask 1)
    mlp = (mlp_coeff - fc2_saving) * arch.intermediate_size
    redo_scores = recomputes_scores(selective)
    dense = LayerCoefficients(
        replicated, attn_split + mlp, scores, 2.0 * h, 0.0, mlp if "mlp" in selective else 0.0, redo_scores
    )
    if not arch.is_moe:
        return dense, dense
    act_out = 0.0 if "moe_act" in storage.always else 2.0 - fc2_saving  # the activation output (fc2 input)
    routed, shared = _moe_split(arch, fp8, storage, mlp_coeff)
    routed *= imbalance
    router = 4.0 * arch.num_experts  # fp32 router logits
    moe = LayerCoefficients(
        replicated,
        attn_split + routed + shared + router,
        scores,
        2.0 * h,
        2.0 * h if "layernorm" in selective and "norms" not in storage.always else 0.0,
        (
            act_out * arch.num_experts_per_tok * arch.moe_intermediate_size * imbalance
            if "moe_act" in selective
            else 0.0
        )
        + (shared if "shared_experts" in selective else 0.0),
        redo_scores,
    )
    return dense, moe


@functools.lru_cache(maxsize=1024)
def selective_saves_memory(arch: Architecture, selective: tuple[str, ...], flash_attention: bool) -> bool:
    """Whether selective recompute stores less than no recompute: the scores of an unfused kernel,
    or any activation the recompute modules leave unstored (else the layout search skips it).
    Remembered: a pure function of hashable inputs that every layout enumeration asks."""
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
    return stored_activation_bytes(
        coeffs, layer_tokens(seq_len, micro_batch_size, tp, cp, sequence_parallel), recompute, flash_attention
    )


LayerTokens = tuple[FloatArray, FloatArray, FloatArray, FloatArray]  # (s, tokens, tp, replication divisor)


def layer_tokens(
    seq_len: npt.ArrayLike,
    micro_batch_size: npt.ArrayLike,
    tp: npt.ArrayLike = 1,
    cp: npt.ArrayLike = 1,
    sequence_parallel: npt.ArrayLike = False,
) -> LayerTokens:
    """What layer_activation_bytes reads of the layout, for several coefficients and recompute
    codes: (s, the card's tokens s/cp·b, t, the replicated tensors' divisor: t under sequence
    parallelism, else 1)."""
    tp = np.asarray(tp, dtype=float)
    tokens = (
        np.asarray(seq_len, dtype=float)
        / np.asarray(cp, dtype=float)
        * np.asarray(micro_batch_size, dtype=float)
    )
    rep_div = np.where(np.asarray(sequence_parallel, dtype=bool), tp, 1.0)
    return np.asarray(seq_len, dtype=float), tokens, tp, rep_div


def stored_activation_bytes(
    coeffs: LayerCoefficients, layer: LayerTokens, recompute: npt.ArrayLike = 0, flash_attention: bool = True
) -> FloatArray:
    """layer_activation_bytes of the layout `layer` (layer_tokens): bytes of one layer for one
    micro-batch on one card (Korthikanti 2022)."""
    s, tokens, tp, rep_div = layer
    rc = recompute_code(recompute)
    scores: Num = 0.0  # fused kernels never store the scores (split + 0.0 = split: split >= 0)
    if not flash_attention:
        keep_scores = (rc == 0) | ((rc == 1) & (not coeffs.selective_scores))
        scores = np.where(keep_scores, coeffs.score_per_key * s, 0.0)
    sel = (rc == 1).astype(float)
    replicated = coeffs.replicated - sel * coeffs.selective_replicated
    split = coeffs.split - sel * coeffs.selective_split
    stored = tokens * (replicated / rep_div + (split + scores) / tp)
    full_rc = rc == 2
    if not np.asarray(full_rc).any():  # stored has the shape of the selection (it reads rc, tokens, tp)
        return arr(stored)
    full = tokens * coeffs.input_bytes / rep_div
    return arr(np.where(full_rc, full, stored))


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
