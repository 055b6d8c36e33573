"""Multi-token prediction (MTP) modules: their parameters, per depth (number of parameters).

DeepSeek-V3 report (arXiv 2412.19437) section 2.2: depth k of D sequential modules takes the
previous depth's hidden state and the embedding of token i+k, normalises both (RMSNorm), projects
their concatenation with M_k (2h -> h, 2h^2 parameters), runs one transformer block TRM_k and
predicts with the output head it shares with the main model (the embedding is shared too), with its
own cross-entropy over the vocabulary. The released weights (deepseek-ai/DeepSeek-V3
README_WEIGHTS.md) hold D = 1 module: `model.layers.61` (attention and MoE, "structure identical to
the Main Model hidden layers"), `eh_proj`, `enorm`/`hnorm`; 11.5B unique parameters (excluding the
shared embedding and head), 1.5B activated per token including the 0.9B head.

The block is of the kind of the model's last layer (a MoE layer for an MoE model). The MTP modules
are not part of the published parameter counts (671B / 37B) and not of the model FLOPs per token
(`transformer.flops_per_token`, 6N): they cost training time (steptime.mtp), not model FLOPs.
"""

from __future__ import annotations

from dataclasses import dataclass

from estimator.model.transformer import Architecture, ParamCounts


@dataclass(frozen=True)
class MtpParams:
    """Parameters of one MTP depth (number of parameters)."""

    projection: float  # M_k: 2h x h
    block_total: float  # the transformer block: attention, norms, MLP or all experts + router
    block_active: float  # the block's parameters a token passes through (top-k routed experts)
    norms: float  # enorm and hnorm (h each)
    head: float  # the output head it shares with the main model (counted once, in the main model)

    @property
    def unique(self) -> float:
        """Parameters the module adds to the model (the head and embedding are shared)."""
        return self.projection + self.block_total + self.norms

    @property
    def active(self) -> float:
        """Parameters a token passes through in the module, the shared head included."""
        return self.projection + self.block_active + self.norms + self.head


def mtp_params(arch: Architecture, counts: ParamCounts) -> MtpParams:
    """One MTP depth's parameters from the main model's per-layer counts (DeepSeek-V3 section 2.2)."""
    h = float(arch.hidden_size)
    layer = counts.attention_per_layer + counts.norms_per_layer
    if arch.is_moe:
        block_total = layer + counts.moe_shared_per_layer + counts.moe_routed_per_layer
        block_active = layer + counts.moe_shared_per_layer + counts.moe_active_routed_per_layer
    else:
        block_total = block_active = layer + counts.dense_mlp_per_layer
    head = counts.lm_head if counts.lm_head > 0 else counts.embedding
    return MtpParams(2.0 * h * h, block_total, block_active, 2.0 * h, head)
