"""Hugging Face `config.json` -> `Architecture`: field names, their aliases, defaults and checks."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from estimator.model.transformer import Architecture, mlp_matrices

# canonical field -> accepted aliases (first match wins; the canonical name is tried first)
CONFIG_ALIASES: dict[str, tuple[str, ...]] = {
    "num_hidden_layers": ("n_layer", "num_layers"),
    "hidden_size": ("n_embd", "d_model"),
    "num_attention_heads": ("n_head",),
    "num_key_value_heads": ("num_kv_heads",),
    "intermediate_size": ("n_inner", "ffn_hidden_size"),
    "hidden_act": ("activation_function", "hidden_activation"),
    "num_experts": ("n_routed_experts", "num_routed_experts", "num_local_experts"),
    "n_shared_experts": ("num_shared_experts",),
    "first_k_dense_replace": ("num_dense_layers",),
    "num_nextn_predict_layers": ("mtp_num_layers",),
    "q_lora_rank": ("attention_q_lora_dim",),
    "kv_lora_rank": ("attention_kv_lora_dim",),
    "qk_nope_head_dim": ("attention_qk_dim",),
    "qk_rope_head_dim": ("attention_qk_rope_dim",),
    "v_head_dim": ("attention_v_dim",),
    "hidden_dropout": ("resid_pdrop", "hidden_dropout_prob", "dropout"),
    "attention_dropout": ("attn_pdrop", "attention_probs_dropout_prob"),
    "max_position_embeddings": ("n_positions", "seq_length"),
}
_REQUIRED = ("num_hidden_layers", "hidden_size", "num_attention_heads", "vocab_size")


def _int_field(name: str, value: Any, minimum: int = 0) -> int:
    if isinstance(value, bool) or not isinstance(value, int | float) or value != int(value):
        raise ValueError(f"{name} must be a whole number, got {value!r}")
    if int(value) < minimum:
        raise ValueError(f"{name} must be at least {minimum}, got {value!r}")
    return int(value)


class MissingFieldsError(ValueError):
    """config.json lacks fields the architecture needs; `fields` names them (the web layer words
    the refusal from them, code config-missing-fields)."""

    def __init__(self, fields: list[str]):
        self.fields = fields
        noun = "field" if len(fields) == 1 else "fields"
        super().__init__(f"model config is missing the required {noun} {', '.join(fields)}")


def architecture_from_config(mapping: Mapping[str, Any], base: Architecture | None = None) -> Architecture:
    """Build an Architecture from a Hugging Face `config.json` dict (or any mapping of its names).

    Accepted aliases: n_routed_experts / num_routed_experts / num_local_experts (Mixtral) ->
    num_experts; num_shared_experts -> n_shared_experts; shared_expert_intermediate_size (Qwen2-MoE)
    -> n_shared_experts = round(shared_width / moe_intermediate_size); num_dense_layers (openPangu) ->
    first_k_dense_replace; GPT-2 names n_layer, n_embd, n_head, n_inner, activation_function; the
    openPangu attention_* MLA names. Defaults: head_dim = hidden/heads (MLA: qk_nope + qk_rope),
    num_key_value_heads = heads, intermediate_size = 4*hidden for 2-matrix MLPs, moe_intermediate_size
    = intermediate_size (Mixtral convention). Ignored (noted): Qwen3-MoE `mlp_only_layers` and
    `decoder_sparse_step` (all released Qwen3-MoE use [] and 1: every layer is MoE), DeepSeek
    `moe_layer_freq`, the linear biases of the attention and dense layers. Read for the element-wise
    kernels (steptime.unfused): `rope_scaling.rope_type` and `expert_bias` (default: model_type
    gpt_oss, whose experts always carry biases). `base` (e.g. a preset's architecture) supplies fields the
    mapping leaves out, so a preset can be overridden field by field.
    Raises ValueError naming the missing or malformed field.
    """
    if not hasattr(mapping, "get"):
        raise ValueError("model config must be a JSON object of config.json fields")
    base_fields: dict[str, Any] = base.__dict__ if base is not None else {}

    def get(name: str, default: Any = None) -> Any:
        for key in (name, *CONFIG_ALIASES.get(name, ())):
            if mapping.get(key) is not None:
                return mapping[key]
        return base_fields.get(name, default) if base_fields.get(name) is not None else default

    missing = [f for f in _REQUIRED if get(f) is None]
    if missing:
        raise MissingFieldsError(missing)
    layers = _int_field("num_hidden_layers", get("num_hidden_layers"), 1)
    hidden = _int_field("hidden_size", get("hidden_size"), 1)
    heads = _int_field("num_attention_heads", get("num_attention_heads"), 1)
    vocab = _int_field("vocab_size", get("vocab_size"), 1)
    kv_heads = _int_field("num_key_value_heads", get("num_key_value_heads", heads), 1)
    act = str(get("hidden_act", "silu")).lower()
    matrices = mlp_matrices(act)  # validates hidden_act

    moe = _moe_fields(mapping, get, hidden, matrices)
    head_dim, mla = _attention_fields(get, hidden, heads)
    tie = get("tie_word_embeddings", mapping.get("model_type") == "gpt2")
    window, window_layers = _sliding_window(mapping, get, layers)
    return Architecture(
        num_hidden_layers=layers,
        hidden_size=hidden,
        num_attention_heads=heads,
        num_key_value_heads=kv_heads,
        head_dim=head_dim,
        intermediate_size=moe["ffn"],
        vocab_size=vocab,
        tie_word_embeddings=bool(tie),
        hidden_act=act,
        num_experts=moe["experts"],
        num_experts_per_tok=moe["top_k"] if moe["experts"] else 0,
        n_shared_experts=moe["shared"] if moe["experts"] else 0,
        moe_intermediate_size=moe["moe_ffn"] if moe["experts"] else 0,
        first_k_dense_replace=min(moe["first_dense"], layers) if moe["experts"] else 0,
        max_position_embeddings=_int_field(
            "max_position_embeddings", get("max_position_embeddings", 4096), 1
        ),
        hidden_dropout=_probability("hidden_dropout", get("hidden_dropout", 0.0)),
        attention_dropout=_probability("attention_dropout", get("attention_dropout", 0.0)),
        sliding_window=window,
        sliding_window_layers=window_layers,
        num_nextn_predict_layers=_int_field(
            "num_nextn_predict_layers", get("num_nextn_predict_layers", 0), 0
        ),
        rope_type=_rope_type(mapping, base_fields),
        expert_bias=bool(get("expert_bias", mapping.get("model_type") == "gpt_oss")),
        **mla,
    )


def _rope_type(mapping: Mapping[str, Any], base_fields: Mapping[str, Any]) -> str:
    """config.json `rope_scaling.rope_type` (older configs: `type`), lower case; a preset's own
    value, else "default" (plain RoPE) without a `rope_scaling` object."""
    scaling = mapping.get("rope_scaling")
    if scaling is None:
        return str(base_fields.get("rope_type") or "default")
    if not isinstance(scaling, Mapping):
        raise ValueError("rope_scaling must be an object of config.json fields")
    kind = scaling.get("rope_type", scaling.get("type", "default"))
    if not isinstance(kind, str) or not kind:
        raise ValueError(f"rope_scaling.rope_type must be a name, got {kind!r}")
    return kind.lower()


Getter = Callable[..., Any]  # a config.json field by name (aliases, then `base`), with a default


def _moe_fields(mapping: Mapping[str, Any], get: Getter, hidden: int, matrices: int) -> dict[str, int]:
    """The MLP widths and the mixture of experts: experts, top_k, dense and expert widths, shared
    experts (Qwen2-MoE's shared width / expert width), first dense layers; validated."""
    experts = _int_field("num_experts", get("num_experts", 0))
    top_k = _int_field("num_experts_per_tok", get("num_experts_per_tok", 0))
    default_ffn = 4 * hidden if matrices == 2 else None
    ffn_raw = get("intermediate_size", default_ffn)
    moe_ffn_raw = get("moe_intermediate_size", ffn_raw if experts else 0)
    if experts:
        if not top_k:
            raise ValueError("num_experts_per_tok is required for a mixture-of-experts model")
        if top_k > experts:
            raise ValueError(f"num_experts_per_tok ({top_k}) exceeds num_experts ({experts})")
        if moe_ffn_raw is None:
            raise ValueError("moe_intermediate_size is required for a mixture-of-experts model")
    moe_ffn = _int_field("moe_intermediate_size", moe_ffn_raw or 0)
    first_dense = _int_field("first_k_dense_replace", get("first_k_dense_replace", 0))
    if ffn_raw is None:
        if not experts or first_dense:
            raise ValueError("model config is missing required field: intermediate_size")
        ffn_raw = 0  # every layer is MoE; the dense width is unused
    ffn = _int_field("intermediate_size", ffn_raw)
    shared = get("n_shared_experts")
    if shared is None and mapping.get("shared_expert_intermediate_size") and moe_ffn:
        shared = round(mapping["shared_expert_intermediate_size"] / moe_ffn)
    shared = _int_field("n_shared_experts", shared or 0)

    return {
        "experts": experts,
        "top_k": top_k,
        "moe_ffn": moe_ffn,
        "first_dense": first_dense,
        "ffn": ffn,
        "shared": shared,
    }


def _attention_fields(get: Getter, hidden: int, heads: int) -> tuple[int, dict[str, Any]]:
    """(head_dim, the MLA fields): MLA's head dim is qk_nope + qk_rope, else hidden / heads."""
    kv_lora = get("kv_lora_rank")
    mla: dict[str, Any] = {}
    if kv_lora is not None:
        for f in ("qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim"):
            if get(f) is None:
                raise ValueError(f"model config has kv_lora_rank (MLA) but is missing {f}")
            mla[f] = _int_field(f, get(f), 0)
        mla["kv_lora_rank"] = _int_field("kv_lora_rank", kv_lora, 1)
        q_lora = get("q_lora_rank")
        mla["q_lora_rank"] = None if q_lora is None else _int_field("q_lora_rank", q_lora, 1)
        default_head_dim = _int_field("qk_nope_head_dim", get("qk_nope_head_dim"), 0) + _int_field(
            "qk_rope_head_dim", get("qk_rope_head_dim"), 0
        )
    else:
        if hidden % heads and get("head_dim") is None:
            raise ValueError("head_dim is required when hidden_size is not a multiple of the heads")
        default_head_dim = hidden // heads
    head_dim = _int_field("head_dim", get("head_dim", default_head_dim), 1)
    return head_dim, mla


def _sliding_window(mapping: Mapping[str, Any], get: Any, layers: int) -> tuple[int | None, int]:
    """(window, layers that use it) from config.json: `sliding_window` unless `use_sliding_window`
    is false (Qwen2/Qwen3 ship a window they do not use); the windowed layers from `layer_types`
    ("sliding_attention"), else Gemma 3's `sliding_window_pattern` (every p-th layer is global), else
    Gemma 2's alternation (model_type gemma2), else every layer (Mistral)."""
    raw = get("sliding_window")
    if raw is None or mapping.get("use_sliding_window") is False:
        return None, 0
    window = _int_field("sliding_window", raw, 1)
    types = mapping.get("layer_types")
    pattern = mapping.get("sliding_window_pattern")
    if types is not None:
        if not isinstance(types, list) or len(types) != layers:
            raise ValueError(f"layer_types must list one attention type per layer ({layers})")
        count = sum(1 for t in types if t == "sliding_attention")
    elif pattern is not None:
        p = _int_field("sliding_window_pattern", pattern, 1)
        count = layers - layers // p
    elif mapping.get("model_type") == "gemma2":
        count = (layers + 1) // 2
    elif mapping.get("sliding_window_layers") is not None:
        count = _int_field("sliding_window_layers", mapping["sliding_window_layers"], 0)
    else:  # a preset's own count, else every layer
        count = int(get("sliding_window_layers", 0)) or layers
    return window, min(count, layers)


def _probability(name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0.0 <= float(value) < 1.0:
        raise ValueError(f"{name} must be a probability in [0, 1), got {value!r}")
    return float(value)
