"""The layout search's input: the model, batch, cluster, fabric, stack and the fields the user fixed
(LayoutProblem), validated with field paths. Units: bytes, bytes/s, tokens, cards."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from estimator.catalog.entries import Accelerator
from estimator.errors import FieldError, ScenarioError
from estimator.layout.memory import (
    DEFAULT_GRAD_DTYPE,
    GRAD_BYTES,
    RECOMPUTE_CODES,
    RECOMPUTE_NAMES,
    Buffers,
    selective_saves_memory,
)
from estimator.layout.stack_profile import StackProfile
from estimator.layout.stacks import STACKS
from estimator.layout.steptime.ascend import ASCEND_MC2_EXPOSED_FRACTION, ASCEND_TRAINING_GEMM_FRACTION
from estimator.layout.steptime.attention import TRITON_UNEVEN_HEAD_BACKWARD_FACTOR
from estimator.layout.steptime.constants import (
    EXPERT_GEMM_OVERHEAD_S,
    EXPERT_HOST_S,
    LINK_EFFICIENCY,
    TRAINING_GEMM_FRACTION,
)
from estimator.layout.steptime.moe_core06 import MCORE06_EXPERT_TIME_FACTOR
from estimator.model.transformer import Architecture, ParamCounts, flops_per_token

_INT_FIELDS = ("tp", "pp", "dp", "ep", "cp", "expert_tp", "micro_batch_size", "virtual_stages", "top_n")
_LAYER_FIELDS = ("first_stage_layers", "last_stage_layers")  # may be 0 (a device with the embedding only)
_BOOL_FIELDS = ("sequence_parallel", "distributed_optimizer")
FIXABLE = (*_INT_FIELDS, *_BOOL_FIELDS, "zero_stage", "recompute", *_LAYER_FIELDS)


@dataclass(frozen=True)
class LayoutProblem:
    """Everything the layout search needs. Units: bytes, bytes/s, tokens, cards.

    nic_bytes_per_s_per_card: scale-out bandwidth per card per direction (400 Gb/s = 50e9).
    cross_leaf_bandwidth_factor: >= 1; cross-leaf bandwidth per card = NIC / factor
    (the fabric's oversubscription). nodes_per_leaf_group: nodes whose NICs share a leaf / rail
    group (DP traffic among them does not cross the oversubscribed tier); math.inf if all do.
    scaleup_domain_cards: None = the accelerator's. stack: the software stack's mechanisms
    (estimator.layout.stacks: overlaps, attention kernel, CUDA graphs, FP8 recipe, MoE dispatch).
    moe_imbalance: max/mean routed tokens per EP rank (1.0 = force-balanced, as NVIDIA benchmarks).
    model_flop_per_token: FLOPs per token for predicted_mfu; None = models.flops_per_token
    (6·N_active + 12·L·s·d_attn, the compute section's convention).
    link_efficiency, gemm_fraction, expert_gemm_overhead_s, expert_host_s: the physical constants of
    estimator.layout.steptime (override for what-if studies and calibration only).
    compute_factor: a pilot run's compute-efficiency factor (estimator.plan.calibration), scaling
    every compute rate of the step (GEMM, attention, HBM streaming); 1.0 = the model as published.
    mc2_exposed_fraction: share of the MC2-pipelined tensor-parallel collectives that stays exposed
    on Ascend; ascend_gemm_fraction: gemm_fraction's Ascend counterpart (both
    estimator.layout.steptime.ascend; override for calibration only). core06_expert_factor: the
    expert block's time factor under Megatron-Core 0.6's MoE layer (steptime.moe_core06).
    triton_uneven_backward: the Triton FlashAttention backward's factor at a head dimension below
    its power-of-two block (steptime.attention.backward_slowdown; override for calibration only).
    host_time_factor: host (CPU) time per eager operator relative to the x86 server hosts that
    HOST_OP_S and EXPERT_HOST_S stand for; scales the MoE host floor and the operators issued after
    the dispatcher's sync. Always 1.0 in plans: the Grace check of docs/steptime.md
    (estimator.validation.host_cpu) finds no evidence for another value (what-if studies only).
    """

    arch: Architecture
    counts: ParamCounts
    seq_len: int
    global_batch_tokens: float
    cards: int
    accelerator: Accelerator
    precision: str = "bf16"
    cards_per_node: int = 8
    scaleup_domain_cards: int | None = None
    nic_bytes_per_s_per_card: float = 50e9
    cross_leaf_bandwidth_factor: float = 1.0
    nodes_per_leaf_group: float = math.inf
    grad_dtype: str = DEFAULT_GRAD_DTYPE
    stack: StackProfile = STACKS["megatron-core-2025"]
    moe_imbalance: float = 1.0
    buffers: Buffers = field(default_factory=Buffers)
    fixed: Mapping[str, Any] = field(default_factory=dict)
    top_n: int = 5
    link_efficiency: float = LINK_EFFICIENCY
    gemm_fraction: float = TRAINING_GEMM_FRACTION
    expert_gemm_overhead_s: float = EXPERT_GEMM_OVERHEAD_S
    model_flop_per_token: float | None = None
    compute_factor: float = 1.0
    expert_host_s: float = EXPERT_HOST_S
    mc2_exposed_fraction: float = ASCEND_MC2_EXPOSED_FRACTION
    ascend_gemm_fraction: float = ASCEND_TRAINING_GEMM_FRACTION
    core06_expert_factor: float = MCORE06_EXPERT_TIME_FACTOR
    triton_uneven_backward: float = TRITON_UNEVEN_HEAD_BACKWARD_FACTOR
    host_time_factor: float = 1.0

    def __post_init__(self) -> None:
        errors = []
        if not (isinstance(self.cards, int | np.integer) and self.cards >= 1):
            errors.append(FieldError("cluster.cards", "cards must be a positive integer"))
        if not self.seq_len >= 1:
            errors.append(FieldError("training.seq_len", "seq_len must be at least 1"))
        elif not self.global_batch_tokens >= self.seq_len:
            errors.append(
                FieldError("training.global_batch_tokens", "the global batch must hold at least one sequence")
            )
        if self.grad_dtype not in GRAD_BYTES:
            errors.append(
                FieldError("training.grad_dtype", f"grad_dtype must be one of {sorted(GRAD_BYTES)}")
            )
        if not self.cross_leaf_bandwidth_factor >= 1.0:
            errors.append(FieldError("network.oversubscription", "cross-leaf bandwidth factor must be >= 1"))
        if not self.nic_bytes_per_s_per_card > 0:
            errors.append(FieldError("network.nic_gbps", "NIC bandwidth must be positive"))
        if not self.moe_imbalance >= 1.0:
            errors.append(
                FieldError("training.moe_imbalance", "imbalance (max/mean tokens per rank) must be >= 1")
            )
        if not self.nodes_per_leaf_group >= 1:
            errors.append(FieldError("network", "nodes_per_leaf_group must be >= 1"))
        errors.extend(_check_fixed(self.fixed))
        if errors:
            raise ScenarioError(errors)

    def resized(
        self, cards: int, cross_leaf_bandwidth_factor: float, nodes_per_leaf_group: int
    ) -> LayoutProblem:
        """This problem at another cluster size (what the size decides: the cards and the fabric's
        two factors), validated as a new one is: dataclasses.replace's result, built by copying the
        fields (replace walks the field list and calls __init__: about 6x the cost, and a deadline
        scan builds some forty sizes per plan)."""
        out = object.__new__(LayoutProblem)
        fields = out.__dict__
        fields.update(self.__dict__)
        fields.update(
            cards=cards,
            cross_leaf_bandwidth_factor=cross_leaf_bandwidth_factor,
            nodes_per_leaf_group=nodes_per_leaf_group,
        )
        out.__post_init__()
        return out

    @property
    def flash_attention(self) -> bool:
        return self.stack.flash_attention

    @property
    def sharded_with_pp(self) -> bool:
        return self.stack.sharded_with_pp

    @property
    def max_zero_stage(self) -> int:
        return self.stack.max_zero_stage

    @property
    def moe_tp_needs_sp(self) -> bool:
        return self.stack.moe_tp_needs_sp

    @property
    def sequence_parallel_with_tp(self) -> bool:
        """SEQUENCE_PARALLEL_WITH_TP (layout.enumeration.sp_off_not_searched): a free
        sequence-parallel switch is searched on only wherever tp > 1, on a stack with fused attention
        kernels (with unfused attention partial recompute stores like selective recompute and both
        are searched)."""
        return self.stack.flash_attention

    @property
    def cp_load_balance(self) -> bool:
        """The stack splits the sequence into 2·cp chunks for the causal load balance
        (layout.enumeration.cp_not_dividing_sequence)."""
        return self.stack.cp_load_balance

    @property
    def selective_saves_memory(self) -> bool:
        return selective_saves_memory(self.arch, self.stack.selective_recompute, self.flash_attention)

    @property
    def domain_cards(self) -> int:
        return int(self.scaleup_domain_cards or self.accelerator.scaleup_domain_cards)

    @property
    def global_batch_seqs(self) -> int:
        """Sequences per step: global_batch_tokens / seq_len rounded to the nearest integer."""
        return max(1, round(self.global_batch_tokens / self.seq_len))

    @property
    def stage_split(self) -> tuple[int | None, int | None]:
        """(first, last) pipeline-device layer counts the user fixed (None: automatic)."""
        first, last = self.fixed.get("first_stage_layers"), self.fixed.get("last_stage_layers")
        return (None if first is None else int(first), None if last is None else int(last))

    @property
    def fixed_normalized(self) -> dict[str, Any]:
        out = dict(self.fixed)
        if "recompute" in out and isinstance(out["recompute"], str):
            out["recompute"] = RECOMPUTE_CODES[out["recompute"]]
        return out

    @property
    def flop_per_token(self) -> float:
        if self.model_flop_per_token is not None:
            return float(self.model_flop_per_token)
        return float(flops_per_token(self.arch, self.seq_len, True, self.counts))


def _check_fixed(fixed: Mapping[str, Any]) -> list[FieldError]:
    errors = []
    for key, value in fixed.items():
        path = f"parallelism.{key}"
        if key not in FIXABLE:
            errors.append(FieldError(path, f"unknown parallelism field; use one of {', '.join(FIXABLE)}"))
        elif key in _INT_FIELDS:
            if (
                isinstance(value, bool)
                or not isinstance(value, int | np.integer)
                or value < (0 if key == "top_n" else 1)
            ):
                errors.append(FieldError(path, f"{key} must be a positive integer"))
        elif key in _LAYER_FIELDS:
            if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 0:
                errors.append(FieldError(path, f"{key} must be a whole number of layers (0 or more)"))
        elif key in _BOOL_FIELDS:
            if not isinstance(value, bool | np.bool_):
                errors.append(FieldError(path, f"{key} must be true or false"))
        elif key == "zero_stage":
            if isinstance(value, bool) or value not in (0, 1, 2, 3):
                errors.append(FieldError(path, "zero_stage must be 0, 1, 2 or 3"))
        elif key == "recompute" and value not in RECOMPUTE_CODES and value not in RECOMPUTE_NAMES:
            errors.append(FieldError(path, "recompute must be none, selective, full or partial"))
    if (
        "zero_stage" in fixed
        and "distributed_optimizer" in fixed
        and fixed["zero_stage"] == 0
        and fixed["distributed_optimizer"]
    ):
        errors.append(
            FieldError(
                "parallelism.distributed_optimizer",
                "the distributed optimizer shards optimizer state (ZeRO-1): zero_stage 0 contradicts it",
            )
        )
    return errors
