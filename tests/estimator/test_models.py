"""Parameter counts and FLOPs against published figures and hand-worked examples.

Expected values are published numbers (model cards, papers) or arithmetic done by hand in the
comments, never output of the code under test.
"""

from __future__ import annotations

import numpy as np
import pytest

from estimator import catalog
from estimator.model.config_json import architecture_from_config
from estimator.model.transformer import (
    Architecture,
    depth_for_params,
    flops_per_token,
    flops_per_token_terms,
    param_counts,
    scale_counts,
)


def counts_of(preset_id: str):
    return param_counts(catalog.preset(preset_id).architecture)


def rel(a: float, b: float) -> float:
    return abs(a - b) / b


# --- published totals ------------------------------------------------------------------------


def test_qwen3_8b_total_and_non_embedding():
    c = counts_of("qwen3-8b")
    assert rel(c.total, 8.2e9) < 0.01  # model card: 8.2B (8.19B in the safetensors index)
    assert rel(c.non_embedding, 6.95e9) < 0.01  # model card: 6.95B non-embedding
    assert c.active == c.total


@pytest.mark.parametrize(
    ("preset_id", "total", "active"),
    [
        ("qwen3-235b-a22b", 235e9, 22e9),  # Qwen3 model card
        ("qwen3-30b-a3b", 30.5e9, 3.3e9),  # Qwen3 model card
        ("deepseek-v3", 671e9, 37e9),  # DeepSeek-V3 report, without the 14B MTP module
    ],
)
def test_moe_total_and_active(preset_id, total, active):
    c = counts_of(preset_id)
    assert rel(c.total, total) < 0.02
    assert rel(c.active, active) < 0.02


@pytest.mark.parametrize(
    ("preset_id", "total", "tol"),
    [
        ("llama-3.1-8b", 8.03e9, 0.005),  # Llama 3.1 model card
        ("llama-3.1-70b", 70.6e9, 0.005),
        ("llama-3.1-405b", 405e9, 0.005),  # Llama 3 paper
        ("gpt3-175b", 175e9, 0.01),  # GPT-3 paper table 2.1
        ("mt-nlg-530b", 530e9, 0.01),  # MT-NLG paper
        ("bloom-176b", 176.247e9, 0.001),  # BLOOM paper: 176,247M
        ("nemotron-4-340b", 340e9, 0.01),  # Nemotron-4 340B report
        ("pangu-ultra-moe-718b", 718e9, 0.01),  # openPangu Ultra MoE model card
        # Pangu Ultra report (arXiv 2504.07866) section 2: "135 billion parameters". By hand: 94 x
        # (327,155,712 attention + 1,056,964,608 SwiGLU + 24,576 norms) + 2 x 153,376 x 12,288 untied
        # embedding and head + 12,288 = 133.88e9, 0.8% under the rounded 135B
        ("pangu-ultra-135b", 135e9, 0.01),
    ],
)
def test_dense_and_other_totals(preset_id, total, tol):
    assert rel(counts_of(preset_id).total, total) < tol


def test_pangu_active_matches_published_without_input_embedding():
    # Published 39B activated; the 153600 x 7680 = 1.18B input embedding is a lookup, not a matmul.
    c = counts_of("pangu-ultra-moe-718b")
    assert rel(c.active - c.embedding, 39e9) < 0.02


def test_deepseek_v3_moe_layout():
    c = counts_of("deepseek-v3")
    assert (c.n_dense_layers, c.n_moe_layers) == (3, 58)
    # routed experts of one layer: 256 x 3 x 7168 x 2048; active: 8 of them
    assert c.moe_routed_per_layer == 256 * 3 * 7168 * 2048
    assert c.moe_active_routed_per_layer == 8 * 3 * 7168 * 2048


# Narayanan et al. 2021, table 1: (params_b, heads, hidden, layers)
MEGATRON_TABLE = [
    (1.7, 24, 2304, 24),
    (3.6, 32, 3072, 30),
    (7.5, 32, 4096, 36),
    (18.4, 48, 6144, 40),
    (39.1, 64, 8192, 48),
    (76.1, 80, 10240, 60),
    (145.6, 96, 12288, 80),
    (310.1, 128, 16384, 96),
    (529.6, 128, 20480, 105),
    (1008.0, 160, 25600, 128),
]
MEGATRON_IDS = ["1.7b", "3.6b", "7.5b", "18.4b", "39.1b", "76.1b", "145.6b", "310.1b", "529.6b", "1t"]


@pytest.mark.parametrize(("row", "suffix"), list(zip(MEGATRON_TABLE, MEGATRON_IDS, strict=True)))
def test_megatron_family(row, suffix):
    params_b, heads, hidden, layers = row
    p = catalog.preset(f"megatron-gpt-{suffix}")
    a = p.architecture
    assert (a.num_attention_heads, a.hidden_size, a.num_hidden_layers) == (heads, hidden, layers)
    assert (a.vocab_size, a.intermediate_size, a.hidden_act, a.tie_word_embeddings) == (
        51200,
        4 * hidden,
        "gelu",
        True,
    )
    total = param_counts(a).total
    # the paper's formula: P = 12 l h^2 (1 + 13/(12h) + (V + s)/(12 l h)), V = 51200, s = 2048
    n_l, h = layers, hidden
    paper_p = 12 * n_l * h**2 * (1 + 13 / (12 * h) + (51200 + 2048) / (12 * n_l * h))
    assert rel(total, paper_p) < 0.005  # we omit learned positions and biases (s*h + 13*l*h)
    # the table prints P rounded to 2-4 significant digits: 1.7 stands for P = 1.652B
    tolerance = 0.02 if params_b >= 3 else 0.035
    assert rel(total, params_b * 1e9) < tolerance


# --- hand-worked tiny architectures ----------------------------------------------------------

TINY = Architecture(
    num_hidden_layers=2,
    hidden_size=8,
    num_attention_heads=2,
    num_key_value_heads=1,
    head_dim=4,
    intermediate_size=16,
    vocab_size=10,
)


def test_tiny_dense_by_hand():
    c = param_counts(TINY)
    # q 8*2*4=64, k 8*1*4=32, v 32, o 2*4*8=64 -> 192; SwiGLU 3*8*16 = 384; norms 2*8 = 16
    assert c.attention_per_layer == 192
    assert c.dense_mlp_per_layer == 384
    assert c.norms_per_layer == 16
    # 2 layers x 592 + embedding 80 + lm_head 80 + final norm 8
    assert c.total == 1352
    assert c.active == 1352
    assert c.non_embedding == 1352 - 160


def test_tied_gelu_by_hand():
    gpt = Architecture(
        num_hidden_layers=1,
        hidden_size=8,
        num_attention_heads=2,
        num_key_value_heads=2,
        head_dim=4,
        intermediate_size=32,
        vocab_size=10,
        tie_word_embeddings=True,
        hidden_act="gelu",
    )
    c = param_counts(gpt)
    # attention 4*8*8 = 256; 2-matrix MLP 2*8*32 = 512; norms 16; embedding 80; no lm_head; final 8
    assert c.lm_head == 0
    assert c.total == 256 + 512 + 16 + 80 + 8


def test_tiny_moe_by_hand():
    moe = Architecture(
        num_hidden_layers=3,
        hidden_size=8,
        num_attention_heads=2,
        num_key_value_heads=1,
        head_dim=4,
        intermediate_size=16,
        vocab_size=10,
        num_experts=4,
        num_experts_per_tok=2,
        n_shared_experts=1,
        moe_intermediate_size=4,
        first_k_dense_replace=1,
    )
    c = param_counts(moe)
    # one expert 3*8*4 = 96: routed 4*96 = 384; shared 96 + router 8*4 = 128; active routed 2*96 = 192
    assert (c.n_dense_layers, c.n_moe_layers) == (1, 2)
    assert (c.moe_routed_per_layer, c.moe_shared_per_layer, c.moe_active_routed_per_layer) == (384, 128, 192)
    # 3*(192+16) + 384 (dense MLP) + 2*(128+384) + 80 + 80 + 8 = 624 + 384 + 1024 + 168
    assert c.total == 2200
    assert c.active == 2200 - 2 * (384 - 192)


def test_tiny_mla_by_hand():
    mla = Architecture(
        num_hidden_layers=1,
        hidden_size=8,
        num_attention_heads=2,
        num_key_value_heads=2,
        head_dim=6,
        intermediate_size=16,
        vocab_size=10,
        q_lora_rank=4,
        kv_lora_rank=3,
        qk_nope_head_dim=4,
        qk_rope_head_dim=2,
        v_head_dim=5,
    )
    # q_a 8*4=32 + norm 4 + q_b 4*2*(4+2)=48; kv_a 8*(3+2)=40 + norm 3 + kv_b 3*2*(4+5)=54; o 2*5*8=80
    assert param_counts(mla).attention_per_layer == 32 + 4 + 48 + 40 + 3 + 54 + 80


def test_flops_per_token_by_hand():
    # 6 * 1352 = 8112 dense; attention 12 * L=2 * s=16 * d_attn=(2 heads * 4) = 3072
    dense, attention = flops_per_token_terms(TINY, 16)
    assert (dense, attention) == (8112, 3072)
    assert flops_per_token(TINY, 16) == 11184
    assert flops_per_token(TINY, 16, include_attention=False) == 8112
    np.testing.assert_allclose(flops_per_token(TINY, np.array([16, 32])), [11184, 8112 + 6144])


def test_mla_attention_flops_use_qk_head_dim():
    a = catalog.preset("deepseek-v3").architecture
    _, attention = flops_per_token_terms(a, 4096)
    assert attention == 12 * 61 * 4096 * 128 * (128 + 64)


def test_six_n_for_llama_70b():
    # 6 * 70.6e9 = 4.24e11 FLOP per token (Kaplan); attention at s=8192: 12*80*8192*8192 = 6.4e10
    a = catalog.preset("llama-3.1-70b").architecture
    dense, attention = flops_per_token_terms(a, 8192)
    assert rel(dense, 6 * 70.6e9) < 0.005
    assert attention == 12 * 80 * 8192 * 64 * 128


# --- shapes from a size ----------------------------------------------------------------------


def test_depth_for_params_keeps_the_width_and_matches_the_count():
    """Llama 3.1 70B's width: per layer 2·8192² + 2·8192·1024 (q, o; k, v with 8 KV heads of 128) +
    3·8192·28672 (SwiGLU) + 2·8192 (norms) = 855,654,400; embeddings and head 2·128256·8192 + 8192
    = 2,101,354,496. 70e9: (70e9 - 2.10e9) / 8.557e8 = 79.35 -> 79 layers."""
    width = catalog.preset("llama-3.1-70b").architecture
    a = depth_for_params(70e9, width)
    assert a.num_hidden_layers == 79
    assert (a.hidden_size, a.num_attention_heads, a.num_key_value_heads, a.intermediate_size) == (
        8192,
        64,
        8,
        28672,
    )
    assert param_counts(a).total == 2_101_354_496 + 79 * 855_654_400
    exact = scale_counts(param_counts(a), 70e9)
    assert exact.total == 70e9 and rel(exact.active, 70e9) < 1e-12
    assert depth_for_params(1e8, width).num_hidden_layers == 1  # never fewer than one layer


def test_depth_for_params_rejects_tiny():
    with pytest.raises(ValueError, match="params"):
        depth_for_params(1000, catalog.preset("llama-3.1-8b").architecture)


# --- config.json -----------------------------------------------------------------------------

DEEPSEEK_V3_CONFIG = {  # deepseek-ai/DeepSeek-V3 config.json (abridged)
    "model_type": "deepseek_v3",
    "vocab_size": 129280,
    "hidden_size": 7168,
    "intermediate_size": 18432,
    "moe_intermediate_size": 2048,
    "num_hidden_layers": 61,
    "num_nextn_predict_layers": 1,
    "num_attention_heads": 128,
    "num_key_value_heads": 128,
    "n_shared_experts": 1,
    "n_routed_experts": 256,
    "num_experts_per_tok": 8,
    "first_k_dense_replace": 3,
    "moe_layer_freq": 1,
    "q_lora_rank": 1536,
    "kv_lora_rank": 512,
    "qk_nope_head_dim": 128,
    "qk_rope_head_dim": 64,
    "v_head_dim": 128,
    "hidden_act": "silu",
    "tie_word_embeddings": False,
    "max_position_embeddings": 163840,
}


def test_config_deepseek_v3_aliases():
    a = architecture_from_config(DEEPSEEK_V3_CONFIG)
    assert a.num_experts == 256 and a.is_mla and a.head_dim == 192
    c = param_counts(a)
    assert rel(c.total, 671e9) < 0.02 and rel(c.active, 37e9) < 0.02


def test_config_mixtral_uses_intermediate_size_for_experts():
    mixtral = {  # mistralai/Mixtral-8x7B-v0.1 config.json; published 46.7B total, 12.9B active
        "hidden_size": 4096,
        "intermediate_size": 14336,
        "num_attention_heads": 32,
        "num_hidden_layers": 32,
        "num_key_value_heads": 8,
        "num_local_experts": 8,
        "num_experts_per_tok": 2,
        "vocab_size": 32000,
        "hidden_act": "silu",
        "tie_word_embeddings": False,
    }
    c = param_counts(architecture_from_config(mixtral))
    assert rel(c.total, 46.7e9) < 0.01 and rel(c.active, 12.9e9) < 0.01


def test_config_qwen2_moe_shared_expert_width():
    cfg = {  # Qwen1.5-MoE-A2.7B: 60 experts of 1408, shared expert 5632 = 4 x 1408
        "hidden_size": 2048,
        "num_hidden_layers": 24,
        "num_attention_heads": 16,
        "vocab_size": 151936,
        "intermediate_size": 5632,
        "moe_intermediate_size": 1408,
        "shared_expert_intermediate_size": 5632,
        "num_experts": 60,
        "num_experts_per_tok": 4,
    }
    a = architecture_from_config(cfg)
    assert a.n_shared_experts == 4 and a.head_dim == 128 and a.num_key_value_heads == 16


def test_config_defaults_and_overrides():
    base = catalog.preset("qwen3-8b").architecture
    a = architecture_from_config({"num_hidden_layers": 40}, base=base)
    assert a.num_hidden_layers == 40 and a.hidden_size == 4096 and a.head_dim == 128
    gpt2 = architecture_from_config(
        {
            "model_type": "gpt2",
            "n_layer": 12,
            "n_embd": 768,
            "n_head": 12,
            "vocab_size": 50257,
            "activation_function": "gelu_new",
        }
    )
    # GPT-2 small: 124M parameters (OpenAI); we omit 1024 x 768 learned positions and biases
    assert gpt2.intermediate_size == 3072 and gpt2.tie_word_embeddings
    assert rel(param_counts(gpt2).total, 124.4e6) < 0.01


@pytest.mark.parametrize(
    ("cfg", "message"),
    [
        ({"hidden_size": 8, "num_attention_heads": 2, "vocab_size": 10}, "num_hidden_layers"),
        (
            {"num_hidden_layers": 2, "hidden_size": 8, "num_attention_heads": 2, "vocab_size": 10},
            "intermediate_size",
        ),
        (
            {
                "num_hidden_layers": 2,
                "hidden_size": 8,
                "num_attention_heads": 2,
                "vocab_size": 10,
                "intermediate_size": 16,
                "hidden_act": "not_an_activation",
            },
            "hidden_act",
        ),
        (
            {
                "num_hidden_layers": 2.5,
                "hidden_size": 8,
                "num_attention_heads": 2,
                "vocab_size": 10,
                "intermediate_size": 16,
            },
            "num_hidden_layers",
        ),
        (
            {
                "num_hidden_layers": 2,
                "hidden_size": 8,
                "num_attention_heads": 2,
                "vocab_size": 10,
                "intermediate_size": 16,
                "num_experts": 4,
            },
            "num_experts_per_tok",
        ),
        (
            {
                "num_hidden_layers": 2,
                "hidden_size": 8,
                "num_attention_heads": 2,
                "vocab_size": 10,
                "intermediate_size": 16,
                "kv_lora_rank": 4,
            },
            "qk_nope_head_dim",
        ),
        ("not a mapping", "JSON object"),
    ],
)
def test_config_errors(cfg, message):
    with pytest.raises(ValueError, match=message):
        architecture_from_config(cfg)
