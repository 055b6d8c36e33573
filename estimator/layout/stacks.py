"""Software stacks: which physical mechanisms a training framework switches on.

A stack profile never carries a speed factor. It only says which mechanisms exist (which
communications overlap computation, which attention kernel runs, whether CUDA graphs remove the
per-kernel host overhead, how FP8 is scaled, how MoE tokens are dispatched); the step-time model
(`estimator.layout.steptime`) prices each mechanism from physical quantities. Every profile names the
public source that documents its defaults (docs/sources.md lists them).

The scenario chooses a profile with `training.stack` and may override single mechanisms with
`training.stack_overrides` (for example `{"ep_comm_overlap": true}`); without a choice the
default is the stack a new user most likely runs on the accelerator (`default_stack_id`). The
profile's fields and the names each may take are in estimator.layout.stack_profile.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

import numpy as np
import numpy.typing as npt

from estimator.errors import FieldError, ScenarioError
from estimator.layout.stack_profile import (
    _CHOICES,
    _NAME_LISTS,
    ATTENTION_KERNELS,
    CHECKPOINT_MODES,
    EXPERT_TP_COMBINE_BYTES,
    FP8_RECIPES,
    MECHANISMS,
    MEGATRON_BRIDGE_RELEASE_SPREAD,
    RECOMPUTE_MODULES,
    RESHARD_POLICIES,
    SAC_MATMUL_HALF,
    StackProfile,
)

STACKS: dict[str, StackProfile] = {
    p.id: p
    for p in (
        StackProfile(
            id="megatron-core-2025",
            name="Megatron-Core 0.12+ with Transformer Engine (NeMo / Megatron-Bridge recipes)",
            source="Megatron-Core MoE README and Megatron-Bridge performance recipes (docs/sources.md#megatron-core)",
            as_of="2025-10",
            attention_kernel="fa3",
            tp_comm_overlap=True,
            overlap_p2p_comm=True,
            fp8_weight_cache=True,
            moe_probs_in_activation=True,  # its releases run Megatron-Core 0.15-0.16 (Megatron-Bridge pyproject)
            unfused_rope_types=("yarn",),
            moe_expert_tp_gather=True,  # the alltoall dispatcher's expert-TP gather (StackProfile)
            moe_expert_tp_combine_bytes=4,  # its reduce-scatter in the fp32 router's dtype (StackProfile)
            moe_tp_needs_sp=True,  # Megatron-Core's MoE check (StackProfile.moe_tp_needs_sp)
            vendors=("NVIDIA", "AMD"),
            summary="Current NVIDIA recipes for dense models: FA3/cuDNN attention, TP and pipeline overlap, "
            "MoE tokens sent by the plain all-to-all.",
            release="Megatron-Bridge 26.02 container (NeMo 26.02)",
            release_spread=MEGATRON_BRIDGE_RELEASE_SPREAD,
            release_spread_source="the Megatron-Bridge performance summary archive (performance-summary-archive.md in its docs), releases 25.11-26.06 on the layouts of 26.02 (docs/sources.md#megatron-bridge): Qwen3-30B-A3B on 8 GB200 MXFP8 (micro-batch 4, EP8) 23,766 (25.11) to 40,706 (26.06) against 26,084; Llama 3.1 405B on 256 GB200 FP8 793-864; GPT-OSS-120B on 64 H100 5,810-5,993; Qwen3-235B-A22B on 256 H100 1,611-1,712; Llama 3.1 405B on 1,024 H100 311-328",
        ),
        StackProfile(
            id="megatron-core-moe-2025",
            name="Megatron-Core 0.13+ MoE recipes: flex dispatcher with DeepEP / HybridEP",
            source="Megatron-Bridge performance recipes (flex dispatcher with DeepEP on H100, HybridEP on "
            "GB200) and Megatron-LM moe/README.md (docs/sources.md#megatron-core-moe)",
            as_of="2025-11",
            attention_kernel="fa3",
            tp_comm_overlap=True,
            overlap_p2p_comm=True,
            fp8_weight_cache=True,
            moe_probs_in_activation=True,  # its releases run Megatron-Core 0.15-0.16 (Megatron-Bridge pyproject)
            unfused_rope_types=("yarn",),
            moe_tp_needs_sp=True,  # Megatron-Core's MoE check (StackProfile.moe_tp_needs_sp)
            moe_dispatch_dedup=True,
            needs_fp8_hardware=True,
            summary="Current NVIDIA MoE recipes (Hopper and newer): as Megatron-Core, and a token crosses "
            "the network once per node it is routed to (DeepEP, HybridEP).",
            release="Megatron-Bridge 25.11-26.02 MoE recipes (flex dispatcher)",
            release_spread=MEGATRON_BRIDGE_RELEASE_SPREAD,
            release_spread_source="as megatron-core-2025 (the same recipes' releases; the MoE layouts run the flex dispatcher there), docs/sources.md#megatron-bridge",
        ),
        StackProfile(
            id="megatron-core-2024",
            name="Megatron-Core 0.5-0.9 with Transformer Engine 1.x (NeMo 24.x): FlashAttention-2 kernels",
            source="NVIDIA/NeMo performance docs (NeMo 24.03-24.09) and TE 1.x attention backends (docs/sources.md#nemo-long-context)",
            as_of="2024-09",
            attention_kernel="fa2",
            tp_comm_overlap=True,
            overlap_p2p_comm=True,
            fp8_weight_cache=True,
            sp_regather="gemm-input",
            moe_expert_tp_gather=True,  # the alltoall dispatcher's expert-TP gather (StackProfile)
            moe_tp_needs_sp=True,  # Megatron-Core's MoE check (StackProfile.moe_tp_needs_sp)
            summary="NeMo 24.x: FlashAttention-2 kernels, TP and pipeline overlap; the 2024 releases.",
            release="NeMo 24.07-24.09 containers (Megatron-Core 0.8-0.9, TE 1.x)",
        ),
        StackProfile(
            id="megatron-lm-2021",
            name="Megatron-LM as in Narayanan et al. 2021 (no flash attention, no overlaps)",
            source="Narayanan et al. 2021 (docs/sources.md#narayanan-2021)",
            as_of="2021-04",
            attention_kernel="unfused",
            overlap_grad_reduce=False,
            overlap_param_gather=False,
            summary="The 2021 paper's Megatron-LM: attention scores stored, no communication overlapped.",
            release="Megatron-LM as of Narayanan et al. 2021 (2021-04)",
        ),
        StackProfile(
            id="megatron-deepspeed",
            name="Megatron-DeepSpeed (ZeRO, FlashAttention-2)",
            source="microsoft/Megatron-DeepSpeed README (docs/sources.md#megatron-deepspeed)",
            as_of="2024-06",
            attention_kernel="fa2",
            overlap_param_gather=False,
            vendors=("NVIDIA", "AMD"),
            summary="DeepSpeed ZeRO with Megatron layers: FlashAttention-2, gradients overlapped, TP not.",
            cp_comm_type="a2a",
            cp_comm_types=("a2a",),
            release="microsoft/Megatron-DeepSpeed main (2024-06)",
        ),
        StackProfile(
            id="pytorch-fsdp2",
            name="PyTorch FSDP2 + torch.compile + SDPA (torchtitan, torchao float8, llm-foundry)",
            source="pytorch/torchtitan and torchao float8 README (docs/sources.md#torchao-float8)",
            as_of="2025-06",
            attention_kernel="fa2",
            fp8_recipe="tensorwise",
            selective_recompute=(SAC_MATMUL_HALF,),
            sharded_with_pp=True,
            sp_regather="none",
            per_expert_gemms=False,
            vendors=("NVIDIA", "AMD"),
            summary="PyTorch-native FSDP2 (torchtitan): sharding combines with pipelines, no TP overlap.",
            cp_comm_type="allgather",
            cp_merge="eager-fp32",
            cp_repeat_kv=True,
            cp_comm_types=("allgather", "p2p"),
            reshard_after_forward="default",
            fsdp_fp32_shards=True,
            cp_overlap=False,
            release="torchtitan and torchao float8 (2024-10 and 2024-12 performance tables)",
        ),
        StackProfile(
            id="llm-foundry",
            name="MosaicML llm-foundry / Composer: FSDP full sharding, eager PyTorch, Triton FlashAttention (ALiBi)",
            source="mosaicml/llm-foundry MPT yamls and benchmarking README (docs/sources.md#llm-foundry)",
            as_of="2023-10",
            attention_kernel="fa-triton",
            overlap_param_gather=False,
            per_expert_gemms=False,
            vendors=("NVIDIA", "AMD"),
            summary="MosaicML Composer with full FSDP sharding and Triton FlashAttention, eager PyTorch.",
            fsdp_fp32_shards=True,
            logits_dtype="bf16",
            release="llm-foundry benchmarking tables (2023-10)",
        ),
        StackProfile(
            id="mindspeed-2025",
            name="MindSpeed / MindSpeed-LLM on CANN (Ascend)",
            source="Ascend/MindSpeed-LLM README and features (docs/sources.md#mindspeed)",
            as_of="2025-09",
            attention_kernel="ascend-fa",
            tp_comm_overlap=True,
            overlap_p2p_comm=True,
            per_expert_gemms=False,
            vendors=("Huawei",),
            max_zero_stage=1,  # the distributed optimizer only (StackProfile.max_zero_stage)
            moe_tp_needs_sp=True,  # Megatron-Core's MoE check (StackProfile.moe_tp_needs_sp)
            summary="Huawei Ascend: CANN FlashAttention, MC2 fused TP communication, one grouped expert kernel.",
            cp_comm_types=("p2p", "a2a", "a2a+p2p"),
            release="MindSpeed-LLM 1.0.RC3 with CANN 8.0.RC3",
            moe_core06=True,
            cross_entropy="mcore06",
        ),
        StackProfile(
            id="deepseek-dualpipe",
            name="DeepSeek-V3 style: DualPipe, DeepEP, node-limited routing, FP8 blockwise",
            source="DeepSeek-V3 technical report, arXiv 2412.19437, sections 3.2-3.3 (docs/sources.md#deepseek-v3)",
            as_of="2024-12",
            attention_kernel="fa3",
            ep_comm_overlap=True,
            overlap_p2p_comm=True,
            dualpipe=True,
            moe_dispatch_dedup=True,
            moe_max_nodes=4,
            moe_host_sync=False,
            per_expert_gemms=False,
            fp8_recipe="blockwise",
            needs_fp8_hardware=True,
            always_recompute=("norms", "mla_up_proj", "moe_act"),
            low_precision_cache=True,
            adam_moments="bf16",
            summary="DeepSeek's own: DualPipe hides the all-to-all, DeepEP, at most 4 nodes per token, FP8 blockwise.",
            release="DeepSeek HAI-LLM as in the DeepSeek-V3 report (2024-12)",
        ),
    )
}


def default_stack_id(vendor: str, moe: bool = False, fp8_hardware: bool = False) -> str:
    """The stack a new user most likely runs: MindSpeed on Ascend; for a MoE model on NVIDIA Hopper
    or newer what current Megatron-Core MoE recipes run (the flex dispatcher with DeepEP/HybridEP,
    docs/sources.md#megatron-core-moe); Megatron-Core elsewhere."""
    if vendor.lower() in ("huawei", "ascend"):
        return "mindspeed-2025"
    if moe and fp8_hardware and vendor.lower() == "nvidia":
        return "megatron-core-moe-2025"
    return "megatron-core-2025"


def profiles_for(vendor: str, fp8_hardware: bool) -> list[StackProfile]:
    """The profiles that run on an accelerator of `vendor` (with FP8 tensor cores or not)."""
    return [p for p in STACKS.values() if p.runs_on(vendor, fp8_hardware)]


def resolve_stack(
    stack_id: str | None,
    vendor: str,
    overrides: Mapping[str, Any] | None = None,
    moe: bool = False,
    fp8_hardware: bool = False,
) -> StackProfile:
    """The profile `stack_id` (None: the default for the vendor, model and hardware) with single
    mechanisms overridden.

    Raises ScenarioError with the field path for an unknown stack, mechanism or value.
    """
    sid = stack_id or default_stack_id(vendor, moe, fp8_hardware)
    if sid not in STACKS:
        raise ScenarioError(
            [
                FieldError(
                    "training.stack",
                    f"unknown stack {sid!r}; use one of {', '.join(STACKS)}",
                    "unknown-catalog-entry",
                    {"id": sid, "known": ", ".join(STACKS)},
                )
            ]
        )
    profile = STACKS[sid]
    changes = dict(overrides or {})
    errors = [
        FieldError(f"training.stack_overrides.{k}", _override_problem(k, v))
        for k, v in changes.items()
        if _override_problem(k, v)
    ]
    cp_type = changes.get("cp_comm_type")
    if cp_type in _CHOICES["cp_comm_type"] and cp_type not in profile.cp_comm_types:
        offered = ", ".join(profile.cp_comm_types) or "none"
        errors.append(
            FieldError(
                "training.stack_overrides.cp_comm_type", f"{profile.id} offers {offered}, not {cp_type!r}"
            )
        )
    if errors:
        raise ScenarioError(errors)
    if "selective_recompute" in changes:
        changes["selective_recompute"] = _recompute_modules(changes["selective_recompute"])
    for key in _NAME_LISTS:
        if key in changes:
            changes[key] = tuple(changes[key])
    if "moe_expert_tp_combine_bytes" in changes:
        changes["moe_expert_tp_combine_bytes"] = int(changes["moe_expert_tp_combine_bytes"])
    return dataclasses.replace(profile, **changes) if changes else profile


def holds_gathered_weights(stack: StackProfile, pp: npt.ArrayLike) -> npt.NDArray[np.bool_]:
    """Whether ZeRO-3 keeps the gathered 16-bit weights of the stage across micro-batches (arrays of
    pp broadcast): policy "never", or "default" under pipeline parallelism (torchtitan)."""
    policy = stack.reshard_after_forward
    return np.asarray(policy == "never") | ((policy == "default") & (np.asarray(pp) > 1))


def recomputes_scores(selective: tuple[str, ...]) -> bool:
    """Whether selective recompute re-runs the attention scores an unfused kernel would store:
    Megatron's core_attn module, or PyTorch's per-op checkpointing (it re-runs the scores' matmuls)."""
    return "core_attn" in selective or SAC_MATMUL_HALF in selective


def _recompute_modules(value: str | list[str] | tuple[str, ...]) -> tuple[str, ...]:
    """An override's selective recompute as a tuple of module names ("attention" = core_attn)."""
    if isinstance(value, str):
        return ("core_attn",) if value == "attention" else (value,)
    return tuple(value)


def _override_problem(key: str, value: Any) -> str:
    """Why an override is invalid ("" when it is valid)."""
    if key not in MECHANISMS:
        return f"unknown mechanism; use one of {', '.join(MECHANISMS)}"
    if key == "attention_kernel":
        return "" if value in ATTENTION_KERNELS else f"must be one of {', '.join(ATTENTION_KERNELS)}"
    if key == "selective_recompute":
        return _recompute_problem(value)
    if key in _NAME_LISTS:
        names = _NAME_LISTS[key]
        ok = isinstance(value, (list, tuple)) and all(v in names for v in value)
        return (
            ""
            if ok and len(set(value)) == len(value)
            else f"must be a list of: {', '.join(names)}, each once"
        )
    if key == "checkpoint_mode":
        return "" if value in CHECKPOINT_MODES else f"must be one of {', '.join(CHECKPOINT_MODES)}"
    if key in _CHOICES:
        return "" if value in _CHOICES[key] else f"must be one of {', '.join(_CHOICES[key])}"
    if key == "reshard_after_forward":
        return "" if value in RESHARD_POLICIES else f"must be one of {', '.join(RESHARD_POLICIES)}"
    if key == "fp8_recipe":
        return "" if value in FP8_RECIPES else f"must be one of {', '.join(FP8_RECIPES)}"
    if key == "moe_max_nodes":
        ok = value is None or (isinstance(value, int) and not isinstance(value, bool) and value >= 1)
        return "" if ok else "must be a positive integer or null"
    if key == "moe_expert_tp_combine_bytes":
        ok = not isinstance(value, bool) and value in EXPERT_TP_COMBINE_BYTES
        return "" if ok else f"must be one of {', '.join(map(str, EXPERT_TP_COMBINE_BYTES))}"
    return "" if isinstance(value, bool) else "must be true or false"


def _recompute_problem(value: Any) -> str:
    """Why a selective_recompute override is invalid ("" when it is valid)."""
    if value in ("attention", SAC_MATMUL_HALF):
        return ""
    names = ", ".join(RECOMPUTE_MODULES)
    if not isinstance(value, (list, tuple)) or not value or not all(isinstance(v, str) for v in value):
        return f'must be "attention", "matmul-half" or a non-empty list of modules: {names}'
    unknown = [v for v in value if v not in RECOMPUTE_MODULES]
    if unknown:
        return f"unknown or unmodelled module {unknown[0]!r}; use {names}"
    return "" if len(set(value)) == len(value) else "lists a module twice"
