"""What a per-card memory evaluation takes besides the model (estimator.layout.memory): the layout a
card runs (`CardLayout`), how its stack stores what the layout leaves on it (`MemoryPolicy`, with
`stack_memory` reading a stack profile) and the fixed per-card allowances (`Buffers`). The sources
of each figure are in estimator.layout.memory's docstring; units bytes unless named."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from estimator.layout.activations import LOGITS_BYTES, Storage
from estimator.layout.model_state import DEFAULT_GRAD_DTYPE, OPTIMIZER_BYTES
from estimator.layout.stack_profile import StackProfile

GIB = 2.0**30


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
