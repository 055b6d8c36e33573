"""Transformer architecture -> parameter counts (total, active) and FLOPs per token.

Field names follow Hugging Face `config.json` so a pasted config maps one to one
(`estimator.model.config_json` reads one).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray


@dataclass(frozen=True)
class Architecture:
    """A transformer's shape, in config.json's names (counts and widths; estimator.model.config_json)."""

    num_hidden_layers: int
    hidden_size: int
    num_attention_heads: int
    num_key_value_heads: int
    head_dim: int
    intermediate_size: int  # dense MLP width (used by dense layers)
    vocab_size: int
    tie_word_embeddings: bool = False
    hidden_act: str = "silu"  # see is_gated_mlp: silu/swish -> gated 3-matrix MLP, others 2-matrix
    # MoE (0 = dense model)
    num_experts: int = 0  # routed experts per MoE layer
    num_experts_per_tok: int = 0  # top-k
    n_shared_experts: int = 0
    moe_intermediate_size: int = 0
    first_k_dense_replace: int = 0  # leading dense layers before the MoE layers
    # MLA (DeepSeek); None = ordinary multi-head / grouped-query attention
    q_lora_rank: int | None = None
    kv_lora_rank: int | None = None
    qk_nope_head_dim: int | None = None
    qk_rope_head_dim: int | None = None
    v_head_dim: int | None = None
    max_position_embeddings: int = 4096
    # Dropout probabilities (config.json names): non-zero dropout stores 1-byte masks per activation
    # (Korthikanti 2022); Llama, Qwen and DeepSeek train without it, GPT-3-era models with 0.1.
    hidden_dropout: float = 0.0
    attention_dropout: float = 0.0
    # Sliding-window (local) attention: `sliding_window_layers` of the layers attend to at most the
    # `sliding_window` previous tokens (Mistral: all layers; Gemma 2 and GPT-OSS: every other layer;
    # Gemma 3: five of six); the others attend to the whole sequence.
    sliding_window: int | None = None
    sliding_window_layers: int = 0
    # Multi-token prediction (DeepSeek-V3 report section 2.2; config.json `num_nextn_predict_layers`):
    # D sequential modules, each a projection of [RMSNorm(h); RMSNorm(emb)] (2h -> h), one transformer
    # block of the model's last-layer kind, and the shared output head with its own cross-entropy.
    num_nextn_predict_layers: int = 0
    # Rotary scaling (config.json `rope_scaling.rope_type`, "default" without one; GPT-OSS and
    # DeepSeek-V3 "yarn") and linear biases in the routed experts (GPT-OSS: its modeling code always
    # has gate_up_proj_bias and down_proj_bias; config.json carries no flag): both only select which
    # element-wise kernels a stack runs unfused (steptime.unfused).
    rope_type: str = "default"
    expert_bias: bool = False

    @property
    def is_moe(self) -> bool:
        return self.num_experts > 0

    @property
    def is_mla(self) -> bool:
        return self.kv_lora_rank is not None


@dataclass(frozen=True)
class ParamCounts:
    """Parameter counts (number of parameters, not bytes)."""

    total: float
    active: float  # per token (MoE: shared + top-k routed experts)
    embedding: float  # input embedding table, vocab x hidden
    lm_head: float  # output projection; 0 when tied to the embedding
    attention_per_layer: float
    dense_mlp_per_layer: float  # MLP of a dense layer
    moe_shared_per_layer: float  # shared experts + router of one MoE layer (replicated across EP)
    moe_routed_per_layer: float  # all routed experts of one MoE layer (sharded by EP)
    moe_active_routed_per_layer: float  # top-k routed experts a token passes through
    norms_per_layer: float
    n_dense_layers: int
    n_moe_layers: int
    final_norm: float = 0.0

    @property
    def non_embedding(self) -> float:
        return self.total - self.embedding - self.lm_head


# ---- Parameter counts --------------------------------------------------------------------------

#: Every activation name of Hugging Face transformers' `ACT2FN` table (transformers/activations.py,
#: `ACT2CLS`, 24 names in v4.57; see docs/sources.md#hf-transformers), plus "swiglu", the name
#: Megatron-LM and some configs use for the gated SiLU MLP.
HF_ACTIVATIONS: frozenset[str] = frozenset(
    {
        "gelu",
        "gelu_10",
        "gelu_fast",
        "gelu_new",
        "gelu_python",
        "gelu_pytorch_tanh",
        "gelu_python_tanh",
        "gelu_accurate",
        "hardswish",
        "laplace",
        "leaky_relu",
        "linear",
        "mish",
        "quick_gelu",
        "relu",
        "relu2",
        "relu6",
        "sigmoid",
        "silu",
        "sqrtsoftplus",
        "swish",
        "tanh",
        "prelu",
        "xielu",
    }
)
#: Activations whose MLP is gated (gate, up and down matrices): SiLU/Swish, i.e. SwiGLU.
GATED_ACTIVATIONS: frozenset[str] = frozenset({"silu", "swish", "swiglu"})
KNOWN_ACTIVATIONS: frozenset[str] = HF_ACTIVATIONS | GATED_ACTIVATIONS


def is_gated_mlp(hidden_act: str) -> bool:
    """Whether a model with this `hidden_act` has a gated MLP (the one rule; memory, step time and
    parameter counts all ask here).

    Gated (3 matrices: gate, up, down; Shazeer 2020, "GLU Variants Improve Transformer"): "silu",
    "swish" and "swiglu", the SwiGLU MLP of Llama, Qwen, Mistral and DeepSeek. Every other name in
    Hugging Face's ACT2FN (GELU variants, ReLU variants, tanh, ...) is the plain 2-matrix MLP of
    GPT-2/3, BLOOM, MPT, OPT and Falcon. Case-insensitive. Limitation: the name alone cannot tell
    Gemma's gated GeGLU MLP (hidden_activation "gelu_pytorch_tanh") from GPT-2's plain one; such a
    model is counted as plain. Raises ValueError for a name outside `KNOWN_ACTIVATIONS`.
    Sources: docs/sources.md#hf-transformers, docs/sources.md#shazeer-2020.
    """
    act = hidden_act.lower()
    if act in GATED_ACTIVATIONS:
        return True
    if act in HF_ACTIVATIONS:
        return False
    raise ValueError(
        f"hidden_act {hidden_act!r} is not supported; use 'silu' (gated 3-matrix MLP) "
        "or a Hugging Face activation such as 'gelu', 'gelu_new', 'relu' (2-matrix MLP)"
    )


def mlp_matrices(hidden_act: str) -> int:
    """Weight matrices in one MLP (or one expert): 3 when `is_gated_mlp(hidden_act)` (gate, up,
    down: Llama, Qwen, DeepSeek), else 2 (fc1, fc2: GPT-3, BLOOM, MPT). A count, no unit."""
    return 3 if is_gated_mlp(hidden_act) else 2


def _attention_params(a: Architecture) -> float:
    """Attention weights of one layer (number of parameters).

    GQA/MHA: q h*H*d, k and v h*KV*d each, o H*d*h. MLA (DeepSeek-V2/V3 modeling code): q_a h*q_lora,
    q_b q_lora*H*(nope+rope) (or q h*H*(nope+rope) when q_lora_rank is None), kv_a h*(kv_lora+rope),
    kv_b kv_lora*H*(nope+v), o H*v*h, plus the q_a and kv_a RMSNorm weights.
    """
    h, heads = a.hidden_size, a.num_attention_heads
    if not a.is_mla:
        d = a.head_dim
        return h * heads * d + 2 * h * a.num_key_value_heads * d + heads * d * h
    nope, rope = a.qk_nope_head_dim or 0, a.qk_rope_head_dim or 0
    v = a.v_head_dim or 0
    kv_lora = a.kv_lora_rank or 0
    if a.q_lora_rank:
        q = h * a.q_lora_rank + a.q_lora_rank + a.q_lora_rank * heads * (nope + rope)
    else:
        q = h * heads * (nope + rope)
    kv = h * (kv_lora + rope) + kv_lora + kv_lora * heads * (nope + v)
    return q + kv + heads * v * h


def param_counts(arch: Architecture) -> ParamCounts:
    """Count the parameters of a decoder-only transformer (number of parameters, not bytes).

    Per layer: attention (see `_attention_params`), two norm weight vectors of size h (RMSNorm or
    LayerNorm scale), and an MLP: dense layers m*h*ffn with m = `mlp_matrices(hidden_act)`; MoE
    layers `num_experts` routed experts and `n_shared_experts` shared experts of m*h*moe_ffn each,
    plus the router h*num_experts. The first `first_k_dense_replace` layers of an MoE model are dense
    (DeepSeek-V3: 3 of 61). Embedding V*h; lm_head V*h unless tied (then 0); final norm h.

    Ignored: linear and LayerNorm biases of GPT-style models (about 13h per layer against 12h^2:
    below 0.1% for every preset, 0.05% at h=2304, 0.01% at h=12288), Qwen3's per-head q/k RMSNorm
    (2*head_dim per layer), learned position embeddings (s*h: 0.3% for the 1.7B Megatron GPT, 0.01%
    for GPT-3) and multi-token-prediction modules (DeepSeek-V3's MTP adds 14B on top of the 671B; not used for
    next-token training cost). Sources: Hugging Face modeling code of Llama, Qwen3(-MoE) and
    DeepSeek-V3; Narayanan et al. 2021, eq. for P.
    """
    h, V, L = arch.hidden_size, arch.vocab_size, arch.num_hidden_layers
    m = mlp_matrices(arch.hidden_act)
    embedding = float(V * h)
    lm_head = 0.0 if arch.tie_word_embeddings else float(V * h)
    attention = float(_attention_params(arch))
    norms = float(2 * h)
    dense_mlp = float(m * h * arch.intermediate_size)
    if arch.is_moe:
        n_moe = L - min(arch.first_k_dense_replace, L)
        expert = m * h * arch.moe_intermediate_size
        routed = float(arch.num_experts * expert)
        shared = float(arch.n_shared_experts * expert + h * arch.num_experts)
        active_routed = float(arch.num_experts_per_tok * expert)
    else:
        n_moe, routed, shared, active_routed = 0, 0.0, 0.0, 0.0
    n_dense = L - n_moe
    final_norm = float(h)
    total = (
        embedding
        + lm_head
        + L * (attention + norms)
        + n_dense * dense_mlp
        + n_moe * (shared + routed)
        + final_norm
    )
    active = total - n_moe * (routed - active_routed)
    return ParamCounts(
        total=total,
        active=active,
        embedding=embedding,
        lm_head=lm_head,
        attention_per_layer=attention,
        dense_mlp_per_layer=dense_mlp if n_dense else 0.0,
        moe_shared_per_layer=shared,
        moe_routed_per_layer=routed,
        moe_active_routed_per_layer=active_routed,
        norms_per_layer=norms,
        n_dense_layers=n_dense,
        n_moe_layers=n_moe,
        final_norm=final_norm,
    )


def scale_counts(counts: ParamCounts, n_total: float) -> ParamCounts:
    """Scale every part of `counts` by n_total / counts.total so that `.total` is exactly n_total.

    Used for a model known only by size (`{"params": N}`): the shape from `depth_for_params`
    is within a layer of N, and this keeps the reported parameter count equal to what the user typed
    while memory and FLOPs still split into embedding / attention / MLP in the shape's proportions.
    """
    if counts.total <= 0:
        raise ValueError("cannot scale a parameter count of zero")
    f = n_total / counts.total
    return ParamCounts(
        total=float(n_total),
        active=counts.active * f,
        embedding=counts.embedding * f,
        lm_head=counts.lm_head * f,
        attention_per_layer=counts.attention_per_layer * f,
        dense_mlp_per_layer=counts.dense_mlp_per_layer * f,
        moe_shared_per_layer=counts.moe_shared_per_layer * f,
        moe_routed_per_layer=counts.moe_routed_per_layer * f,
        moe_active_routed_per_layer=counts.moe_active_routed_per_layer * f,
        norms_per_layer=counts.norms_per_layer * f,
        n_dense_layers=counts.n_dense_layers,
        n_moe_layers=counts.n_moe_layers,
        final_norm=counts.final_norm * f,
    )


def stage_param_counts(
    counts: ParamCounts,
    n_layers: ArrayLike,
    n_dense: ArrayLike,
    embedding: ArrayLike,
    head: ArrayLike,
    tp: ArrayLike = 1,
    ep: ArrayLike = 1,
    expert_tp: ArrayLike | None = None,
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Parameters one card of a pipeline stage holds, as (dense, expert) (numbers of parameters).

    The stage has `n_layers` transformer layers, `n_dense` of them dense and the rest MoE;
    `embedding` and `head` (0 or 1, arrays allowed) say whether it holds the input embedding and the
    output layer with the final norm (with tied embeddings a last stage other than the first keeps
    its own copy of the embedding matrix as the head, as Megatron-LM does). Dense weights (attention,
    dense MLP, shared experts and router, embedding, head and final norm) are split over `tp`; the
    per-layer norm weights are replicated on every TP rank; routed experts are split over
    `ep`·`expert_tp` (MoE parallel folding, Megatron-Core --expert-tensor-parallel-size; None = `tp`,
    the classic layout). Sources: docs/sources.md#narayanan-2021 (the model-parallel split),
    docs/sources.md#megatron-core-moe (expert parallelism). Broadcasts over numpy arrays.
    """
    layers = np.asarray(n_layers, dtype=np.float64)
    dense_layers = np.asarray(n_dense, dtype=np.float64)
    moe_layers = layers - dense_layers
    tp_f, ep_f = np.asarray(tp, dtype=np.float64), np.asarray(ep, dtype=np.float64)
    head_matrix = counts.lm_head if counts.lm_head > 0 else counts.embedding
    sharded = (
        dense_layers * (counts.attention_per_layer + counts.dense_mlp_per_layer)
        + moe_layers * (counts.attention_per_layer + counts.moe_shared_per_layer)
        + np.asarray(embedding, dtype=np.float64) * counts.embedding
        + np.asarray(head, dtype=np.float64) * (head_matrix + counts.final_norm)
    )
    dense = sharded / tp_f + layers * counts.norms_per_layer
    etp_f = tp_f if expert_tp is None else np.asarray(expert_tp, dtype=np.float64)
    expert = moe_layers * counts.moe_routed_per_layer / (ep_f * etp_f)
    return np.asarray(dense, dtype=np.float64), np.asarray(expert, dtype=np.float64)


# ---- FLOPs per token ---------------------------------------------------------------------------


def attention_dim(arch: Architecture) -> int:
    """d_attn = heads * q/k head dim (MLA: qk_nope_head_dim + qk_rope_head_dim), in elements."""
    if arch.is_mla:
        return arch.num_attention_heads * ((arch.qk_nope_head_dim or 0) + (arch.qk_rope_head_dim or 0))
    return arch.num_attention_heads * arch.head_dim


def causal_window_keys(seq_len: ArrayLike, window: float) -> NDArray[np.float64]:
    """Mean keys per query of a causal layer attending to at most `window` previous tokens over a
    sequence of s: w - w^2/(2s) for w < s, else s/2 (tokens)."""
    s = np.asarray(seq_len, dtype=np.float64)
    return np.asarray(np.where(window < s, window - window * window / (2.0 * np.maximum(s, 1.0)), 0.5 * s))


def attended_keys(arch: Architecture, seq_len: ArrayLike, causal: bool) -> NDArray[np.float64]:
    """Keys each query token attends to, averaged over the positions of a sequence and the layers.

    A full-attention layer: s keys (the whole-matrix convention) or s/2 (causal). A sliding-window
    layer of w < s tokens, causal: position i attends to min(i, w) keys, mean w - w^2/(2s); in the
    whole-matrix convention twice that, 2w - w^2/s (equal to s at w = s, so the two conventions keep
    their factor 2). Mistral 7B paper, section 2 (docs/sources.md#mistral-7b). Tokens.
    """
    s = np.asarray(seq_len, dtype=np.float64)
    full = 0.5 * s if causal else s
    w = arch.sliding_window
    if not w or not arch.sliding_window_layers:
        return np.asarray(full)
    local_causal = causal_window_keys(s, w)
    local = local_causal if causal else 2.0 * local_causal
    share = arch.sliding_window_layers / arch.num_hidden_layers
    return np.asarray((1.0 - share) * full + share * local)


def flops_per_token_terms(
    arch: Architecture, seq_len: ArrayLike, counts: ParamCounts | None = None
) -> tuple[float, float | NDArray[np.float64]]:
    """The two terms of the training FLOPs per token (forward + backward), in FLOP per token.

    Returns (dense, attention): dense = 6 * N_active (Kaplan et al. 2020, eq. 2.1: 2N forward, 4N
    backward; N_active as in `ParamCounts.active`, embeddings included, which overstates by at most
    V*h/N, a few percent for small models); attention = 12 * L * s * d_attn for the score and value
    matmuls QK^T and AV (Chowdhery et al. 2022, PaLM, appendix B), no causal-mask discount, with s
    replaced by the keys a sliding-window layer attends to (`attended_keys`). `seq_len` may be a
    number or a numpy array of sequence lengths (tokens); the attention term broadcasts.
    """
    counts = counts or param_counts(arch)
    dense = 6.0 * counts.active
    keys = attended_keys(arch, seq_len, causal=False)
    attention = 12.0 * arch.num_hidden_layers * keys * attention_dim(arch)
    return dense, (float(attention) if attention.ndim == 0 else attention)


def flops_per_token(
    arch: Architecture,
    seq_len: ArrayLike,
    include_attention: bool = True,
    counts: ParamCounts | None = None,
) -> float | NDArray[np.float64]:
    """Training FLOPs per token, forward + backward: 6*N_active + 12*L*s*d_attn (FLOP per token).

    See `flops_per_token_terms` for the sources. `include_attention=False` gives plain 6*N (the
    Chinchilla/Kaplan convention). Accepts a numpy array for `seq_len` and then returns an array.
    Pass `counts` (e.g. from `scale_counts`) to use a parameter count other than the shape's own.
    """
    dense, attention = flops_per_token_terms(arch, seq_len, counts)
    if not include_attention:
        return dense if np.ndim(attention) == 0 else np.full(np.shape(attention), dense)
    return dense + attention


# ---- A shape for a model known only by its size ------------------------------------------------


def depth_for_params(n_params: float, width: Architecture) -> Architecture:
    """`width` (a published model's hidden size, heads, KV heads, head dimension, FFN, vocabulary and
    embedding tying) with the number of layers whose parameter count is nearest `n_params`, at
    least one (number of parameters). The rule behind a model known only by its size is in
    estimator.contract.assumed_shape (which published model lends its width); to report exactly
    n_params, pass the counts through `scale_counts(counts, n_params)`."""
    n = float(n_params)
    if not np.isfinite(n) or n < 1e7:
        raise ValueError(f"params must be at least 1e7 to derive a transformer shape, got {n_params!r}")
    one = param_counts(dataclasses.replace(width, num_hidden_layers=1)).total
    two = param_counts(dataclasses.replace(width, num_hidden_layers=2)).total
    per_layer, fixed = two - one, 2 * one - two
    layers = max(1, round((n - fixed) / per_layer))
    return dataclasses.replace(width, num_hidden_layers=int(layers))
