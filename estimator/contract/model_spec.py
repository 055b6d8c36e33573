"""The scenario's `model` section (docs/architecture.md#scenario-contract): a catalog preset, a
dense model known by its size, or a Hugging Face config.json; which config.json names the
estimator reads (`split_model`, READ_MODEL_KEYS) and the range checks of their aliases.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model

from estimator import limits
from estimator.contract.fields import Int, Num, _code, _message
from estimator.errors import FieldError
from estimator.model.config_json import CONFIG_ALIASES


class ModelSpec(BaseModel):
    """A catalog `preset`, a dense model known only by `params`, or an architecture with
    Hugging Face config.json names; preset fields may be overridden one by one. Besides these
    fields, the config.json aliases in CONFIG_EXTRA_KEYS are accepted (with the same ranges as the
    field they stand for); any other key is refused."""

    model_config = ConfigDict(extra="allow", frozen=True, allow_inf_nan=False, defer_build=True)

    preset: str | None = Field(None, max_length=100)
    params: Num | None = Field(None, gt=0, le=1e14, description="Total parameters of a dense model")
    num_hidden_layers: Int | None = Field(None, ge=1, le=limits.MAX_LAYERS)
    hidden_size: Int | None = Field(None, ge=1, le=1_000_000)
    num_attention_heads: Int | None = Field(None, ge=1, le=100_000)
    num_key_value_heads: Int | None = Field(None, ge=1, le=100_000)
    head_dim: Int | None = Field(None, ge=1, le=100_000)
    intermediate_size: Int | None = Field(None, ge=1, le=10_000_000)
    vocab_size: Int | None = Field(None, ge=1, le=100_000_000)
    tie_word_embeddings: bool | None = None
    hidden_act: str | None = Field(None, max_length=40)
    num_experts: Int | None = Field(None, ge=0, le=limits.MAX_EXPERTS)
    n_routed_experts: Int | None = Field(None, ge=0, le=limits.MAX_EXPERTS)
    num_experts_per_tok: Int | None = Field(None, ge=0, le=limits.MAX_EXPERTS)
    n_shared_experts: Int | None = Field(None, ge=0, le=limits.MAX_EXPERTS)
    moe_intermediate_size: Int | None = Field(None, ge=0, le=10_000_000)
    first_k_dense_replace: Int | None = Field(None, ge=0, le=limits.MAX_LAYERS)
    q_lora_rank: Int | None = Field(None, ge=0, le=1_000_000)
    kv_lora_rank: Int | None = Field(None, ge=0, le=1_000_000)
    qk_nope_head_dim: Int | None = Field(None, ge=0, le=100_000)
    qk_rope_head_dim: Int | None = Field(None, ge=0, le=100_000)
    v_head_dim: Int | None = Field(None, ge=0, le=100_000)
    max_position_embeddings: Int | None = Field(None, ge=1, le=100_000_000)
    hidden_dropout: Num | None = Field(None, ge=0, lt=1)
    attention_dropout: Num | None = Field(None, ge=0, lt=1)
    sliding_window: Int | None = Field(
        None, ge=1, le=100_000_000, description="Local attention window (tokens)"
    )
    sliding_window_layers: Int | None = Field(
        None, ge=0, le=limits.MAX_LAYERS, description="Layers with the window; default all (or layer_types)"
    )
    use_sliding_window: bool | None = None
    num_nextn_predict_layers: Int | None = Field(
        None, ge=0, le=limits.MAX_LAYERS, description="Multi-token-prediction modules (DeepSeek-V3: 1)"
    )
    sliding_window_pattern: Int | None = Field(None, ge=1, le=limits.MAX_LAYERS)
    layer_types: list[Literal["sliding_attention", "full_attention"]] | None = Field(
        None, max_length=limits.MAX_LAYERS
    )
    # the object as config.json ships it (names, factors, flags, Phi-3's longrope lists, Qwen2-VL's
    # mrope_section); only its rope_type is read and checked (config_json._rope_type)
    rope_scaling: dict[str, Any] | None = Field(
        None, max_length=40, description="config.json rope_scaling; its rope_type is read"
    )
    expert_bias: bool | None = Field(None, description="The routed experts carry linear biases (GPT-OSS)")


# config.json names the core also reads (estimator.model.config_json.architecture_from_config): each alias is
# range-checked like the field it stands for; `model_type` and Qwen2-MoE's shared-expert width too.
CONFIG_EXTRA_KEYS: dict[str, str] = {
    alias: field for field, aliases in CONFIG_ALIASES.items() for alias in aliases
}
_AliasCheck = create_model(  # type: ignore[call-overload]
    "_AliasCheck",
    __config__=ConfigDict(extra="forbid", allow_inf_nan=False, defer_build=True),
    model_type=(str | None, Field(None, max_length=60)),
    shared_expert_intermediate_size=(Int | None, Field(None, ge=0, le=10_000_000)),
    **{
        alias: (ModelSpec.model_fields[field].annotation, ModelSpec.model_fields[field])
        for alias, field in CONFIG_EXTRA_KEYS.items()
    },
)


# Every name of `model` the estimator reads: the ModelSpec fields, the config.json aliases, and
# `model_type` and Qwen2-MoE's `shared_expert_intermediate_size`; the rest of a config.json is ignored.
READ_MODEL_KEYS = frozenset(
    {*ModelSpec.model_fields, *CONFIG_EXTRA_KEYS, "model_type", "shared_expert_intermediate_size"}
)


def split_model(model: Any) -> tuple[Any, list[str]]:
    """A complete Hugging Face config.json -> (the names the estimator reads, the ignored names
    sorted). A multimodal config keeps its language model under `text_config` (Qwen2-VL, Llama 4,
    Gemma 3): without a top-level hidden_size that part is read, and the rest is ignored."""
    if not isinstance(model, dict):
        return model, []
    ignored: list[str] = []
    if "hidden_size" not in model and isinstance(model.get("text_config"), dict):
        ignored = [k for k in model if k != "text_config"]
        model = model["text_config"]
    ignored += [k for k in model if k not in READ_MODEL_KEYS]
    return {k: v for k, v in model.items() if k in READ_MODEL_KEYS}, sorted(ignored)


def _model_extras(model: Any) -> list[FieldError]:
    """Errors of the keys of `model` that are not ModelSpec fields: config.json aliases out of
    range, and unknown keys (refused rather than stored and echoed)."""
    if not isinstance(model, dict):
        return []
    extras = {k: v for k, v in model.items() if k not in ModelSpec.model_fields}
    if not extras:
        return []
    try:
        _AliasCheck.model_validate(extras)
    except ValidationError as exc:
        out = []
        for err in exc.errors():
            key = str(err["loc"][0]) if err["loc"] else ""
            if err.get("type") == "extra_forbidden":
                message = "is not a model field or a config.json name the estimator reads; remove it"
                code: tuple[str, dict[str, Any]] = ("not-a-model-field", {})
            else:
                message = _message(err)
                code = _code(err, message)
            out.append(FieldError(f"model.{key}" if key else "model", message, *code))
        return out
    return []


def _pilot_model_extras(calibration: Any) -> list[FieldError]:
    """_model_extras of calibration.pilot.model, with its path."""
    pilot = calibration.get("pilot") if isinstance(calibration, dict) else None
    model = pilot.get("model") if isinstance(pilot, dict) else None
    return [dataclasses.replace(e, field="calibration.pilot." + e.field) for e in _model_extras(model)]
