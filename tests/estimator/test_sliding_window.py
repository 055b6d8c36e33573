"""Sliding-window (local) attention: the keys a query attends to, the FLOPs, the step time's attention
term and the config.json forms (GPT-OSS layer_types, Gemma 3 pattern, Gemma 2, Mistral, Qwen)."""

import dataclasses

import pytest

from estimator.errors import ScenarioError
from estimator.layout.steptime import attention as att
from estimator.model.config_json import architecture_from_config
from estimator.model.transformer import Architecture, attended_keys, flops_per_token_terms
from estimator.plan.compose import estimate

BASE = Architecture(
    num_hidden_layers=4,
    hidden_size=1024,
    num_attention_heads=8,
    num_key_value_heads=8,
    head_dim=128,
    intermediate_size=4096,
    vocab_size=32000,
)
HALF_LOCAL = dataclasses.replace(BASE, sliding_window=1024, sliding_window_layers=2)


def test_attended_keys_by_hand():
    # s = 4096, w = 1024: full causal 2048, local causal 1024 - 1024^2/8192 = 896; mean of 2 + 2 layers
    assert float(attended_keys(HALF_LOCAL, 4096, causal=True)) == pytest.approx((2048 + 896) / 2)
    # whole-matrix convention: 4096 and 2 x 896
    assert float(attended_keys(HALF_LOCAL, 4096, causal=False)) == pytest.approx((4096 + 1792) / 2)
    # a window no shorter than the sequence changes nothing
    assert float(attended_keys(HALF_LOCAL, 1024, causal=True)) == pytest.approx(512)
    assert float(attended_keys(BASE, 4096, causal=False)) == 4096


def test_training_flops_attention_term_uses_the_window():
    _, full = flops_per_token_terms(BASE, 4096)
    _, local = flops_per_token_terms(HALF_LOCAL, 4096)
    assert full == pytest.approx(12 * 4 * 4096 * 1024)  # PaLM 12·L·s·d_attn
    assert local == pytest.approx(12 * 4 * 2944 * 1024)


def test_fused_attention_flops_skip_what_lies_outside_the_window():
    d = 2 * 8 * (128 + 128)  # 2 FLOPs x heads x (d_qk + d_v) per key
    assert att.forward_flop_per_token(HALF_LOCAL, 4096, fused=True) == pytest.approx(1472 * d)
    # an unfused kernel computes the whole matrix and masks it
    assert att.forward_flop_per_token(HALF_LOCAL, 4096, fused=False) == pytest.approx(4096 * d)


def _attention_s(model: dict, seq: int) -> float:
    out = estimate(
        {
            "model": model,
            "training": {"tokens": 1e10, "seq_len": seq, "global_batch_tokens": 8 * seq},
            "hardware": {"accelerator": "h100-sxm"},
            "cluster": {"cards": 8},
            "parallelism": {"tp": 1, "pp": 1, "dp": 8, "micro_batch_size": 1},
        }
    )
    return out["result"]["parallelism"]["compute_detail_s"]["attention"]


def test_step_time_attention_term_by_hand():
    """Every layer local, s = 8192, w = 1024: keys 1024 - 1024^2/16384 = 960 against 4096, at the
    kernel's efficiency for a 1024-key span: s/(s + 384) gives (1024/1408)/(8192/8576)."""
    model = {
        "num_hidden_layers": 4,
        "hidden_size": 1024,
        "num_attention_heads": 8,
        "head_dim": 128,
        "intermediate_size": 4096,
        "vocab_size": 32000,
    }
    full = _attention_s(model, 8192)
    local = _attention_s({**model, "sliding_window": 1024}, 8192)
    expected = (960 / 4096) / ((1024 / 1408) / (8192 / 8576))
    assert local / full == pytest.approx(expected, rel=1e-6)


GPT_OSS = {
    "num_hidden_layers": 36,
    "hidden_size": 2880,
    "num_attention_heads": 64,
    "num_key_value_heads": 8,
    "head_dim": 64,
    "intermediate_size": 2880,
    "num_local_experts": 128,
    "num_experts_per_tok": 4,
    "vocab_size": 201088,
    "sliding_window": 128,
    "layer_types": ["sliding_attention", "full_attention"] * 18,
}


@pytest.mark.parametrize(
    ("extra", "window", "layers"),
    [
        ({}, 128, 18),  # GPT-OSS: layer_types, alternating
        ({"layer_types": None, "sliding_window_pattern": 6}, 128, 30),  # Gemma 3: every 6th global
        ({"layer_types": None, "model_type": "gemma2"}, 128, 18),  # Gemma 2: every other layer
        ({"layer_types": None}, 128, 36),  # Mistral: every layer
        ({"layer_types": None, "sliding_window_layers": 12}, 128, 12),  # stated outright
        ({"use_sliding_window": False}, None, 0),  # Qwen2/3 ship a window they do not use
        ({"sliding_window": None, "layer_types": None}, None, 0),
    ],
)
def test_config_forms_of_the_window(extra, window, layers):
    cfg = {k: v for k, v in {**GPT_OSS, **extra}.items() if v is not None}
    arch = architecture_from_config(cfg)
    assert (arch.sliding_window, arch.sliding_window_layers) == (window, layers)


def test_layer_types_of_the_wrong_length_is_refused():
    with pytest.raises(ValueError, match="layer_types"):
        architecture_from_config({**GPT_OSS, "layer_types": ["sliding_attention"] * 3})


def test_scenario_refuses_an_unknown_layer_type_with_its_field_path():
    with pytest.raises(ScenarioError) as err:
        estimate(
            {
                "model": {**GPT_OSS, "layer_types": ["local"] * 36},
                "training": {"tokens": 1e10},
                "cluster": {"cards": 8},
            }
        )
    assert any(e.field.startswith("model.layer_types") for e in err.value.errors)
