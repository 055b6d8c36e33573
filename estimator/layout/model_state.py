"""Model states per card: 16-bit weights, gradients and optimizer state, sharded by ZeRO stage.

Bytes; numpy-vectorized over layouts (arrays broadcast).
- Mixed-precision Adam keeps 2 bytes of 16-bit weights, the gradients, and K = 12 bytes of fp32
  master weights + Adam m + v per parameter (Rajbhandari et al. 2019, "ZeRO", section 3.1).
  ZeRO stage 1 shards the optimizer state over the data-parallel group, stage 2 also the gradients,
  stage 3 also the weights (ZeRO, figure 1: 7.5B on 64 cards -> 120 / 31.4 / 16.6 / 1.9 GB).
- Gradient dtype (`grad_dtype`): "fp32" is Megatron-LM's fp32 `main_grad` (4 bytes: 2 + 4 + 12 =
  18 bytes/param, or 6 + 12/dp with the distributed optimizer); "bf16" is DeepSpeed's 2-byte
  gradients (2 + 2 + 12 = 16, the ZeRO paper's count). DEFAULT_GRAD_DTYPE = "fp32": Megatron-LM and
  its Ascend port MindSpeed, the stacks this product sizes for, keep fp32 main gradients by default;
  it is the conservative choice (2 more bytes per parameter).
- The distributed optimizer (Megatron) shards the optimizer state over DP, i.e. it is ZeRO-1;
  `distributed_optimizer=True` raises the effective stage to at least 1.
- PyTorch FSDP (`fsdp_state_bytes`): with a mixed-precision policy the sharded parameter is the fp32
  master weight (FSDP2 fully_shard MixedPrecisionPolicy, FSDP1 FlatParameter; Composer
  mixed_precision DEFAULT/PURE): sharded fp32 weights + fp32 gradients (reduce_dtype) + Adam m, v =
  4 + 4 + 8 = 16 bytes per parameter over the group, and no sharded 16-bit copy; the 16-bit weights
  exist only gathered (memory.gathered_bytes).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from estimator.arrays import FloatArray, Num, arr
from estimator.errors import ScenarioError

WEIGHT_BYTES = 2.0  # bf16 / fp16 weights
OPTIMIZER_BYTES = 12.0  # K: fp32 master weights + Adam m + v (ZeRO's K = 12)
GRAD_BYTES = {"fp32": 4.0, "bf16": 2.0, "fp16": 2.0}
DEFAULT_GRAD_DTYPE = "fp32"


def grad_bytes(grad_dtype: str) -> float:
    """Bytes per gradient element for `grad_dtype` ("fp32" or "bf16")."""
    try:
        return GRAD_BYTES[grad_dtype]
    except KeyError:
        raise ScenarioError(
            f"grad_dtype must be one of {sorted(GRAD_BYTES)}, not {grad_dtype!r}", field="training.grad_dtype"
        ) from None


def weight_replicas(
    dp: Num, cp: Num, ep: Num, tp: Num | None = None, expert_tp: Num | None = None
) -> tuple[FloatArray, FloatArray]:
    """(dense, expert) number of cards that hold the same weights and reduce their gradients together:
    the group ZeRO and the distributed optimizer shard over (dimensionless).

    Context-parallel ranks hold the same weights as data-parallel ones and sum their gradients with
    them (Megatron-Core's data-parallel group "with context parallel", torchtitan's dp_shard_cp mesh,
    DeepSpeed-Ulysses' sequence-data-parallel group): dense dp·cp. Experts: MoE parallel folding
    (Megatron-Core) regroups the tp·cp·dp ranks of a stage into expert-TP x EP x expert-DP, so the
    expert-data-parallel group is tp·cp·dp/(ep·expert_tp); with expert_tp = tp (the default, the
    classic layout with EP carved out of DP) that is dp·cp/ep.
    """
    dense = arr(np.asarray(dp, dtype=float) * np.asarray(cp, dtype=float))
    if tp is None or expert_tp is None:
        return dense, arr(dense / np.asarray(ep, dtype=float))
    fold = np.asarray(tp, dtype=float) / np.asarray(expert_tp, dtype=float)
    return dense, arr(dense * fold / np.asarray(ep, dtype=float))


def model_state_bytes(
    params: npt.ArrayLike,
    dp: npt.ArrayLike,
    zero_stage: npt.ArrayLike,
    grad_dtype: str = DEFAULT_GRAD_DTYPE,
    distributed_optimizer: npt.ArrayLike = False,
    optimizer_bytes: float = OPTIMIZER_BYTES,
    fsdp_fp32_shards: bool = False,
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """(weights, gradients, optimizer) bytes per card for `params` parameters held by the card.

    params: parameters on this card after TP/PP/EP splitting; dp: the group over which ZeRO shards
    (`weight_replicas`); zero_stage: 0-3; grad_dtype "fp32" (4 B) or "bf16" (2 B);
    distributed_optimizer: Megatron's optimizer sharding (= ZeRO-1). Rajbhandari et al. 2019.
    fsdp_fp32_shards: PyTorch FSDP at stage 3, whose shard is the fp32 master weight (already in the
    optimizer's K = 12): no sharded 16-bit copy, weights 0 here (the gathered 16-bit copies are
    memory.gathered_bytes').
    """
    params = np.asarray(params, dtype=float)
    dp = np.asarray(dp, dtype=float)
    stage = np.maximum(np.asarray(zero_stage), np.where(np.asarray(distributed_optimizer), 1, 0))
    g = grad_bytes(grad_dtype)
    weights = np.where(
        (stage >= 3) & fsdp_fp32_shards, 0.0, params * WEIGHT_BYTES / np.where(stage >= 3, dp, 1.0)
    )
    grads = params * g / np.where(stage >= 2, dp, 1.0)
    optimizer = params * optimizer_bytes / np.where(stage >= 1, dp, 1.0)
    return weights, grads, optimizer
