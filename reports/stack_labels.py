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
    return {"key": "stack", "title": str(_("Software stack and its effect")), "rows": rows}
