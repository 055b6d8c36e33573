"""The software stacks in the reader's language: a short name and one line on what each implies, for
the form's choice and the report's stack table. The core's profiles (estimator.layout.stacks) carry
the English defaults; this is their translation table (tests/web/test_stack_labels.py checks that
every profile has an entry)."""

from __future__ import annotations

from django.utils.functional import Promise
from django.utils.translation import gettext_lazy as _

from estimator.layout.stacks import STACKS

from . import formatting as f

# profile id -> (short name, what choosing it implies)
STACK_LABELS: dict[str, tuple[Promise, Promise]] = {
    "megatron-core-2025": (
        _("Megatron-Core 2025"),
        _(
            "Current NVIDIA recipes for dense models: FA3/cuDNN attention, TP and pipeline overlap, "
            "MoE tokens sent by the plain all-to-all."
        ),
    ),
    "megatron-core-moe-2025": (
        _("Megatron-Core MoE 2025 (DeepEP / HybridEP)"),
        _(
            "Current NVIDIA MoE recipes (Hopper and newer): as Megatron-Core, and a token crosses the "
            "network once per node it is routed to (DeepEP, HybridEP)."
        ),
    ),
    "megatron-core-2024": (
        _("Megatron-Core 2024 (NeMo 24.x)"),
        _("NeMo 24.x: FlashAttention-2 kernels, TP and pipeline overlap; the 2024 releases."),
    ),
    "megatron-lm-2021": (
        _("Megatron-LM 2021"),
        _("The 2021 paper's Megatron-LM: attention scores stored, no communication overlapped."),
    ),
    "megatron-deepspeed": (
        _("Megatron-DeepSpeed"),
        _("DeepSpeed ZeRO with Megatron layers: FlashAttention-2, gradients overlapped, TP not."),
    ),
    "pytorch-fsdp2": (
        _("PyTorch FSDP2 (torchtitan)"),
        _("PyTorch-native FSDP2 (torchtitan): sharding combines with pipelines, no TP overlap."),
    ),
    "llm-foundry": (
        _("MosaicML llm-foundry"),
        _("MosaicML Composer with full FSDP sharding and Triton FlashAttention, eager PyTorch."),
    ),
    "mindspeed-2025": (
        _("MindSpeed (Ascend)"),
        _("Huawei Ascend: CANN FlashAttention, MC2 fused TP communication, one grouped expert kernel."),
    ),
    "deepseek-dualpipe": (
        _("DeepSeek DualPipe"),
        _("DeepSeek's own: DualPipe hides the all-to-all, DeepEP, at most 4 nodes per token, FP8 blockwise."),
    ),
}


# the stack's memory, loss and expert-TP mechanisms (estimator.layout.stacks.StackProfile), shown as the plan's
# assumptions in the stack table: what each means, and the words for its values
MECHANISM_LABELS: dict[str, Promise] = {
    "always_recompute": _("Recomputed in every layer's backward, whatever the layout"),
    "low_precision_cache": _("Low-precision activation cache (FP8 and E5M6, DeepSeek-V3)"),
    "adam_moments": _("Adam's moments stored in"),
    "logits_dtype": _("Logits kept for the loss's backward in"),
    "cross_entropy": _("Cross-entropy kernels"),
    "moe_probs_in_activation": _(
        "Routing probabilities applied in the experts' activation (Megatron-Core 0.13+)"
    ),
    "unfused_kernels": _("Element-wise kernels run as separate PyTorch ops (unfused)"),
    "unfused_rope_types": _("Rotary scalings applied without a fused kernel"),
    "output_layer_sliced": _("Output layer computed in slices (one more copy of the logits)"),
    "moe_expert_tp_gather": _(
        "MoE tokens gathered again over the expert-TP group after the all-to-all (alltoall dispatcher)"
    ),
    "moe_expert_tp_combine_bytes": _(
        "Bytes per element of that gather's combine (4: the fp32 router's dtype)"
    ),
}
MECHANISM_VALUES: dict[str, Promise] = {
    "norms": _("the norms"),
    "mla_up_proj": _("MLA's up-projections"),
    "moe_act": _("the experts' activation"),
    "fused": _("fused"),
    "mcore06": _("Megatron-Core 0.6 (unfused)"),
}
# kernel and scaling names, the same in every language
MECHANISM_NAMES = {"rope": "RoPE", "rmsnorm": "RMSNorm", "swiglu": "SwiGLU", "yarn": "YaRN"}


def mechanism_rows(result: dict) -> list[tuple[str, str]]:
    """(label, value) of the stack's memory and loss mechanisms as the plan assumed them (the
    stack assumption's detail: the profile with the scenario's training.stack_overrides applied)."""
    detail = next(
        (
            a.get("detail")
            for a in result.get("assumptions") or []
            if isinstance(a, dict) and a.get("code") in ("assumption.stack", "assumption.stack-default")
        ),
        None,
    )
    if not isinstance(detail, dict):
        return []
    return [(str(label), _mechanism_value(detail[k])) for k, label in MECHANISM_LABELS.items() if k in detail]


def _mechanism_value(value: object) -> str:
    """A mechanism's value in words: a list joined (nothing when empty), a dtype in capitals."""
    if isinstance(value, list | tuple):
        return ", ".join(_mechanism_value(v) for v in value) if value else str(_("nothing"))
    if isinstance(value, str):
        word = MECHANISM_VALUES.get(value)
        if word is not None:
            return str(word)
        return value.upper() if value in ("fp32", "bf16") else MECHANISM_NAMES.get(value, value)
    return f.auto(value)


def stack_name(stack_id: str) -> str:
    """The profile's short name in the reader's language (its id when unknown)."""
    entry = STACK_LABELS.get(stack_id)
    return str(entry[0]) if entry else stack_id


def stack_choices() -> list[tuple[str, str]]:
    """The form's choices: the default, then every profile as "name: what it implies"."""
    out = [("", str(_("default for the accelerator and model")))]
    for sid in STACKS:
        name, summary = STACK_LABELS.get(sid, (sid, ""))
        out.append((sid, f"{name}: {summary}" if summary else str(name)))
    return out


def stack_table(result: dict) -> dict | None:
    """The report's (and the workbook's) stack table: the profile the plan assumed, then the
    wall-clock days under each profile that runs on the accelerator ({key, title, rows})."""
    stack = result.get("stack") if isinstance(result, dict) else None
    if not isinstance(stack, dict) or not stack.get("id"):
        return None
    chosen = str(stack["id"])
    assumed = stack_name(chosen)
    if stack.get("default"):
        assumed = _("%(name)s (default for this accelerator and model)") % {"name": assumed}
    rows = [(str(_("Software stack")), str(assumed))]
    sensitivity = stack.get("sensitivity")
    for sid, value in (sensitivity if isinstance(sensitivity, dict) else {}).items():
        text = f.days(value) if value is not None else str(_("no layout fits"))
        if sid == chosen:
            text = _("%(days)s (this plan)") % {"days": text}
        rows.append((str(_("Days with %(stack)s") % {"stack": stack_name(sid)}), str(text)))
    rows[1:1] = mechanism_rows(result)
    return {"key": "stack", "title": str(_("Software stack and its effect")), "rows": rows}
