"""The shape assumed for a dense model known only by its size (`model: {"params": N}`).

Rule (documented, not fitted): the published dense model of the Llama 3 family whose parameter
count is nearest N in ratio (|log(N / total)|) lends its width: hidden size, attention heads, KV
heads (GQA, 8 in every member), head dimension, FFN (SwiGLU) width, vocabulary and embedding tying;
the number of layers is set so that the parameter count is nearest N, and the counts are then
scaled to exactly N (transformer.scale_counts). Family: Llama 3.2 1B and 3B, Llama 3.1 8B, 70B
and 405B (catalog presets; Dubey et al. 2024, table 3, and the Llama 3.2 config.json files),
whose depth and width grow together (hidden 2048 -> 16384, layers 16 -> 126, heads / KV heads
32/8 -> 128/8). The sequence length defaults to the member's pre-training length. Attention
FLOPs and GQA are then counted as for the preset (12·L·s·d_attn; KV heads of the member).

So `{"params": 7e10}` is Llama 3.1 70B's width (8192 hidden, 64 heads, 8 KV heads, FFN 28672)
with 79 layers (80 would be 70.55B), not the 70-head no-GQA shape an aspect-ratio search gives.
The result names the shape (`model.assumed_shape`: code `assumed-shape`, the basis and the fields)
and the report shows it.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from estimator import catalog
from estimator.catalog import Preset
from estimator.model.transformer import Architecture, depth_for_params

SIZE_ONLY_FAMILY = ("llama-3.2-1b", "llama-3.2-3b", "llama-3.1-8b", "llama-3.1-70b", "llama-3.1-405b")
SHAPE_FIELDS = (
    "num_hidden_layers",
    "hidden_size",
    "num_attention_heads",
    "num_key_value_heads",
    "head_dim",
    "intermediate_size",
    "vocab_size",
    "tie_word_embeddings",
)


def basis_for(n_params: float) -> Preset:
    """The family member nearest `n_params` in ratio (parameters)."""
    members = [catalog.preset(p) for p in SIZE_ONLY_FAMILY]
    return min(members, key=lambda m: abs(np.log(float(n_params) / m.published_total_params)))


def assumed_architecture(n_params: float) -> tuple[Architecture, Preset]:
    """(the assumed shape, the member lending its width) for a dense model of `n_params` parameters."""
    basis = basis_for(n_params)
    return depth_for_params(n_params, basis.architecture), basis


def assumed_shape(arch: Architecture, basis: Preset, n_params: float) -> dict[str, Any]:
    """The result's `model.assumed_shape`: code, parameters and an English default message."""
    shape = {k: getattr(arch, k) for k in SHAPE_FIELDS}
    params = {"params": float(n_params), "basis": basis.id, "basis_name": basis.name, **shape}
    message = (
        f"Known only by its size ({n_params / 1e9:g}B parameters), the model is assumed to have "
        f"{basis.name}'s width: {arch.num_hidden_layers} layers, hidden {arch.hidden_size}, "
        f"{arch.num_attention_heads} heads, {arch.num_key_value_heads} KV heads, FFN {arch.intermediate_size}, "
        f"vocabulary {arch.vocab_size}; the counts are scaled to exactly {n_params / 1e9:g}B."
    )
    return {**shape, "basis": basis.id, "code": "assumed-shape", "params": params, "message": message}
