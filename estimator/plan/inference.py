"""Serving sizing: KV cache per token, weights, concurrency on a server, decode-throughput bound.

The source article (section 4.4) serves Qwen3-8B on one Atlas A2 server and warns that the KV cache
grows with concurrency; KV-cache quantization gave it ~50 % more concurrency. This module puts
numbers on that. Units: bytes, bytes/s, tokens, tokens/s.

KV cache per token (all layers, one copy):
- MHA / GQA: 2 (K and V) x layers x KV heads x head_dim x bytes per element
  (Qwen3-8B in BF16: 2 x 36 x 8 x 128 x 2 = 147,456 B).
- MLA (DeepSeek-V2 paper, arXiv 2405.04434, section 2.1.4; used by DeepSeek-V3): the cache holds the
  compressed latent and the decoupled RoPE key only: layers x (kv_lora_rank + qk_rope_head_dim) x bytes
  (DeepSeek-V3 in BF16: 61 x (512 + 64) x 2 = 70,272 B).

KV bytes per element: bf16/fp16 2, fp8/int8 1 (halves the cache; scales are ignored), int4 0.5.

Tensor parallelism shards GQA KV heads across ranks; when TP > KV heads each head is replicated on
TP / KV-heads ranks (vLLM `DeepseekAttention`/Llama attention: "Number of KV heads is less than TP
size, so we replicate the KV heads"). The MLA latent has no head dimension and cannot be sharded, so
every TP rank stores the full latent (Ray Serve LLM docs, "Data parallel attention"): factor = TP.

Concurrency on `cards` cards served as `cards / tp` replicas of TP `tp`:
    usable per replica = tp x HBM x (1 - reserve_fraction) - weights
    sequences          = replicas x floor(usable / (KV per token x replication x context_len))
`reserve_fraction` (default 0.10) is the HBM left for activations, workspace, the runtime and
fragmentation: vLLM's default `gpu_memory_utilization` = 0.9 (vllm-ascend uses the same default).

Decode throughput bound (memory-bound decoding: Pope et al. 2022, "Efficiently Scaling Transformer
Inference"; roofline analysis in Yuan et al. 2024, "LLM Inference Unveiled: Survey and Roofline Model
Insights"): every decode step streams the weights once (active parameters for MoE: a lower bound on
the bytes, so an upper bound on tokens/s) plus the KV cache of every sequence in the batch, and emits
one token per sequence:
    tokens/s <= B / ((weights_active + B x ctx x KV per token x replication) / (HBM BW x tp x eff))
per replica, times replicas. `bandwidth_efficiency` (default 0.8) is the achievable fraction of peak
HBM bandwidth in streaming kernels: an assumption [U]; STREAM-like measurements on HBM parts
typically reach 80-90 % of the data-sheet figure.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from estimator.cluster.power import plain
from estimator.errors import ScenarioError
from estimator.model.transformer import Architecture

DTYPE_BYTES: dict[str, float] = {
    "fp32": 4.0,
    "float32": 4.0,
    "bf16": 2.0,
    "bfloat16": 2.0,
    "fp16": 2.0,
    "float16": 2.0,
    "fp8": 1.0,
    "int8": 1.0,
    "int4": 0.5,
    "fp4": 0.5,
}
DEFAULT_RESERVE_FRACTION = 0.10  # vLLM gpu_memory_utilization default 0.9
DEFAULT_BANDWIDTH_EFFICIENCY = 0.8  # [U] achievable / peak HBM bandwidth


def dtype_bytes(dtype: str, field: str = "serving.kv_dtype") -> float:
    """Bytes per element for a dtype name ("bf16", "fp8", "int8", ...)."""
    try:
        return DTYPE_BYTES[dtype.lower()]
    except (KeyError, AttributeError):
        raise ScenarioError(f"Unknown dtype {dtype!r}; use one of {', '.join(DTYPE_BYTES)}.", field) from None


def kv_cache_bytes_per_token(arch: Architecture, kv_dtype: str = "bf16") -> float:
    """KV-cache bytes per token over all layers, one copy (MHA/GQA or MLA; module docstring)."""
    b = dtype_bytes(kv_dtype)
    if arch.is_mla:
        return arch.num_hidden_layers * ((arch.kv_lora_rank or 0) + (arch.qk_rope_head_dim or 0)) * b
    return 2.0 * arch.num_hidden_layers * arch.num_key_value_heads * arch.head_dim * b


def kv_replication(arch: Architecture, tp: int) -> float:
    """How many copies of each token's KV the `tp` ranks of one replica store (1 = fully sharded)."""
    if tp < 1:
        raise ScenarioError("Tensor parallel size must be at least 1.", "serving.tp")
    if arch.is_mla:
        return float(tp)
    kv = arch.num_key_value_heads
    return tp * -(-kv // tp) / kv  # each rank holds ceil(kv / tp) heads


def weights_bytes(params: ArrayLike, dtype: str = "bf16") -> np.ndarray:
    """Weight bytes = parameters x bytes per element (quantization scales ignored)."""
    return np.asarray(params, dtype=np.float64) * dtype_bytes(dtype, "serving.weights_dtype")


def max_concurrent_sequences(
    hbm_bytes_per_card: ArrayLike,
    cards: ArrayLike,
    weights_bytes: ArrayLike,
    kv_bytes_per_token: ArrayLike,
    context_len: ArrayLike,
    tp: ArrayLike | None = None,
    kv_replication: ArrayLike = 1.0,
    reserve_fraction: ArrayLike = DEFAULT_RESERVE_FRACTION,
) -> np.ndarray:
    """Whole sequences of `context_len` tokens whose KV cache fits (0 when the weights do not fit).

    `tp` defaults to `cards` (one replica over all cards); replicas = cards // tp. Broadcasts.
    """
    cards_a = np.asarray(cards, dtype=np.float64)
    tp_a = cards_a if tp is None else np.asarray(tp, dtype=np.float64)
    replicas = np.floor(cards_a / tp_a)
    usable = (
        tp_a
        * np.asarray(hbm_bytes_per_card, dtype=np.float64)
        * (1.0 - np.asarray(reserve_fraction, dtype=np.float64))
    )
    free = usable - np.asarray(weights_bytes, dtype=np.float64)
    per_seq = (
        np.asarray(kv_bytes_per_token, dtype=np.float64)
        * np.asarray(kv_replication, dtype=np.float64)
        * np.asarray(context_len, dtype=np.float64)
    )
    return replicas * np.floor(np.maximum(free, 0.0) / per_seq)


def decode_tokens_per_s_bound(
    batch: ArrayLike,
    weights_streamed_bytes: ArrayLike,
    kv_bytes_per_token: ArrayLike,
    context_len: ArrayLike,
    hbm_bandwidth_bytes_per_s: ArrayLike,
    cards: ArrayLike,
    tp: ArrayLike | None = None,
    kv_replication: ArrayLike = 1.0,
    bandwidth_efficiency: ArrayLike = DEFAULT_BANDWIDTH_EFFICIENCY,
) -> np.ndarray:
    """HBM-bandwidth upper bound on aggregate decode tokens/s for `batch` concurrent sequences.

    `batch` is the total over all replicas (split evenly); `weights_streamed_bytes` is one replica's
    weights read per step (active parameters for MoE). Broadcasts over arrays.
    """
    cards_a = np.asarray(cards, dtype=np.float64)
    tp_a = cards_a if tp is None else np.asarray(tp, dtype=np.float64)
    replicas = np.floor(cards_a / tp_a)
    b = np.asarray(batch, dtype=np.float64) / replicas
    bytes_per_step = np.asarray(weights_streamed_bytes, dtype=np.float64) + b * np.asarray(
        kv_bytes_per_token, dtype=np.float64
    ) * np.asarray(kv_replication, dtype=np.float64) * np.asarray(context_len, dtype=np.float64)
    bw = (
        np.asarray(hbm_bandwidth_bytes_per_s, dtype=np.float64)
        * tp_a
        * np.asarray(bandwidth_efficiency, dtype=np.float64)
    )
    return replicas * b * bw / bytes_per_step


@dataclass(frozen=True)
class Serving:
    """Serving sizing for one model on `cards` cards. Bytes, tokens, tokens/s."""

    kv_cache_bytes_per_token: float
    kv_dtype: str
    weights_bytes: float
    weights_dtype: str
    weights_streamed_bytes_per_step: float
    context_len: int
    cards: int
    tp: int
    replicas: int
    kv_replication: float
    reserve_fraction: float
    bandwidth_efficiency: float
    weights_fit: bool
    kv_cache_capacity_tokens: float
    max_concurrent_sequences: int
    batch: int
    concurrency_fits: bool | None
    decode_tokens_per_s_bound: float
    decode_tokens_per_s_per_sequence_bound: float
    decode_tokens_per_s_compute_bound: float | None

    def to_dict(self) -> dict[str, Any]:
        """The contract's `serving` section plus the assumptions behind it."""
        return {
            "kv_cache_bytes_per_token": plain(self.kv_cache_bytes_per_token),
            "kv_dtype": self.kv_dtype,
            "weights_bytes": plain(self.weights_bytes),
            "weights_dtype": self.weights_dtype,
            "weights_streamed_bytes_per_step": plain(self.weights_streamed_bytes_per_step),
            "context_len": self.context_len,
            "cards": self.cards,
            "tp": self.tp,
            "replicas": self.replicas,
            "kv_replication": self.kv_replication,
            "reserve_fraction": self.reserve_fraction,
            "bandwidth_efficiency": self.bandwidth_efficiency,
            "weights_fit": self.weights_fit,
            "kv_cache_capacity_tokens": plain(self.kv_cache_capacity_tokens),
            "max_concurrent_sequences": self.max_concurrent_sequences,
            "batch": self.batch,
            "concurrency_fits": self.concurrency_fits,
            "decode_tokens_per_s_bound": plain(self.decode_tokens_per_s_bound),
            "decode_tokens_per_s_per_sequence_bound": plain(self.decode_tokens_per_s_per_sequence_bound),
            "decode_tokens_per_s_compute_bound": plain(self.decode_tokens_per_s_compute_bound),
        }


@dataclass(frozen=True)
class Deployment:
    """How the model is served: `cards` cards in replicas of `tp` (None: one replica on all cards),
    `context_len` tokens per sequence, `concurrency` sequences per replica for the throughput bound
    (None: the most that fit), the KV-cache and weights dtypes, the HBM fraction reserved for
    activations and runtime, and the fraction of HBM bandwidth a decode step reaches (module
    docstring). The scenario's `serving` section."""

    cards: int
    context_len: int
    concurrency: int | None = None
    kv_dtype: str = "bf16"
    weights_dtype: str = "bf16"
    tp: int | None = None
    reserve_fraction: float = DEFAULT_RESERVE_FRACTION
    bandwidth_efficiency: float = DEFAULT_BANDWIDTH_EFFICIENCY

    def check(self) -> int:
        """The tensor-parallel size, after refusing what cannot be served (ScenarioError on `serving.*`)."""
        tp_ = int(self.cards if self.tp is None else self.tp)
        if self.cards < 1 or tp_ < 1 or self.cards % tp_:
            raise ScenarioError(
                "Cards must be a positive multiple of the tensor-parallel size.", "serving.tp"
            )
        if self.context_len < 1:
            raise ScenarioError("Context length must be at least one token.", "serving.context_len")
        if not 0 <= self.reserve_fraction < 1:
            raise ScenarioError("The reserve fraction must be in [0, 1).", "serving.reserve_fraction")
        if not 0 < self.bandwidth_efficiency <= 1:
            raise ScenarioError("Bandwidth efficiency must be in (0, 1].", "serving.bandwidth_efficiency")
        if self.concurrency is not None and self.concurrency < 1:
            raise ScenarioError("Concurrency must be at least 1.", "serving.concurrency")
        return tp_


def serving(
    arch: Architecture,
    deployment: Deployment,
    *,
    params_total: float,
    hbm_bytes_per_card: float,
    hbm_bandwidth_bytes_per_s: float,
    params_active: float | None = None,
    peak_flops: float | None = None,
) -> Serving:
    """Size serving of `arch` as `deployment` says (module docstring for every formula).

    `params_total`/`params_active` come from `estimator.model.transformer` (parameters, not bytes);
    `deployment.concurrency` is the batch for the throughput bound (default: the maximum that fits;
    the bound is 0 when the weights do not fit);
    `peak_flops` (FLOP/s per card at the weights dtype), when given, adds the compute bound
    cards x peak / (2 x active parameters) tokens/s (attention FLOPs ignored).
    """
    tp_ = deployment.check()
    dp = deployment
    cards, context_len, concurrency = dp.cards, dp.context_len, dp.concurrency
    kv_dtype, weights_dtype = dp.kv_dtype, dp.weights_dtype
    reserve_fraction, bandwidth_efficiency = dp.reserve_fraction, dp.bandwidth_efficiency
    replicas = cards // tp_
    kv = kv_cache_bytes_per_token(arch, kv_dtype)
    repl = kv_replication(arch, tp_)
    w = float(weights_bytes(params_total, weights_dtype))
    w_stream = float(weights_bytes(params_total if params_active is None else params_active, weights_dtype))
    free = tp_ * hbm_bytes_per_card * (1.0 - reserve_fraction) - w
    capacity_tokens = replicas * max(free, 0.0) / (kv * repl)
    max_seq = int(
        max_concurrent_sequences(hbm_bytes_per_card, cards, w, kv, context_len, tp_, repl, reserve_fraction)
    )
    batch = int(concurrency) if concurrency is not None else max(max_seq, 1)
    bound = (
        float(
            decode_tokens_per_s_bound(
                batch,
                w_stream,
                kv,
                context_len,
                hbm_bandwidth_bytes_per_s,
                cards,
                tp_,
                repl,
                bandwidth_efficiency,
            )
        )
        if free > 0
        else 0.0
    )
    compute_bound = None
    if peak_flops:
        n_active = params_total if params_active is None else params_active
        compute_bound = cards * peak_flops / (2.0 * n_active)
    return Serving(
        kv_cache_bytes_per_token=kv,
        kv_dtype=kv_dtype,
        weights_bytes=w,
        weights_dtype=weights_dtype,
        weights_streamed_bytes_per_step=w_stream,
        context_len=int(context_len),
        cards=int(cards),
        tp=tp_,
        replicas=replicas,
        kv_replication=repl,
        reserve_fraction=reserve_fraction,
        bandwidth_efficiency=bandwidth_efficiency,
        weights_fit=free > 0,
        kv_cache_capacity_tokens=capacity_tokens,
        max_concurrent_sequences=max_seq,
        batch=batch,
        concurrency_fits=None if concurrency is None else concurrency <= max_seq,
        decode_tokens_per_s_bound=bound,
        decode_tokens_per_s_per_sequence_bound=bound / batch,
        decode_tokens_per_s_compute_bound=compute_bound,
    )
