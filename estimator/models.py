"""Transformer architecture -> parameter counts (total, active) and FLOPs per token.

Field names follow Hugging Face `config.json` so a pasted config maps one to one.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Architecture:
    num_hidden_layers: int
    hidden_size: int
    num_attention_heads: int
    num_key_value_heads: int
    head_dim: int
    intermediate_size: int  # dense MLP width (used by dense layers)
    vocab_size: int
    tie_word_embeddings: bool = False
    hidden_act: str = "silu"  # silu -> gated 3-matrix MLP; gelu/gelu_new/relu -> 2-matrix MLP
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
