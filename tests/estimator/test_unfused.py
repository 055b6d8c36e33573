"""The element-wise chains Megatron-Core runs unfused for GPT-OSS (estimator.layout.steptime.unfused):
YaRN RoPE on Q and K and the routed experts' probability-scaled output bias, each by hand.

The model, by hand: 2 layers, both MoE, h 1024, 16 query heads and 4 key-value heads of 64 (Q and K
(16 + 4)·64 = 1,280 elements per token), 8 routed experts, top-2, f_e 512, YaRN and expert biases as
GPT-OSS has them. One micro-batch of 4,096 tokens on each of 8 H100 with EP 8, TP 1, PP 1, 4
micro-batches, no recompute, on megatron-core-2025 (Megatron-Core 0.15-0.16 code)."""

import pytest

from estimator import catalog
from estimator.layout.stacks import STACKS
from estimator.layout.steptime.constants import HBM_EFFICIENCY
from estimator.layout.steptime.unfused import (
    EXPERT_BIAS_BWD_BYTES,
    EXPERT_BIAS_FWD_BYTES,
    ROPE_BWD_BYTES,
    ROPE_FWD_BYTES,
)
from estimator.model.config_json import architecture_from_config
from estimator.plan.compose import estimate

HBM = catalog.accelerator("h100-sxm").hbm_bandwidth_bytes_per_s * HBM_EFFICIENCY
TOKENS, LAYERS = 4096, 2
MODEL = {
    "num_hidden_layers": LAYERS,
    "hidden_size": 1024,
    "num_attention_heads": 16,
    "num_key_value_heads": 4,
    "head_dim": 64,
    "intermediate_size": 512,
    "vocab_size": 32000,
    "hidden_act": "silu",
    "num_experts": 8,
    "num_experts_per_tok": 2,
    "moe_intermediate_size": 512,
}
YARN = {"rope_scaling": {"rope_type": "yarn", "factor": 32.0}}


def _detail(model: dict, stack: str = "megatron-core-2025", recompute: str = "none") -> tuple[dict, int]:
    out = estimate(
        {
            "model": model,
            "training": {
                "tokens": 1e10,
                "seq_len": TOKENS,
                "global_batch_tokens": 8 * TOKENS * 4,
                "precision": "bf16",
                "stack": stack,
            },
            "hardware": {"accelerator": "h100-sxm"},
            "cluster": {"cards": 8},
            "parallelism": {"tp": 1, "pp": 1, "ep": 8, "micro_batch_size": 1, "recompute": recompute},
        }
    )["result"]["parallelism"]
    return out["compute_detail_s"], out["micro_batches"]


def test_op_by_op_byte_counts():
    """RoPE: forward 4 + 2 + 4 + 4 + 6 + 4, backward 4 + 4 + 2 + 4 + 6 + 6 bytes per element; the
    expert bias: forward 2 + 6 + 4, backward 6 + 6 + 4 (the module docstring's ops)."""
    assert ROPE_FWD_BYTES == 4 + 2 + 4 + 4 + 6 + 4 == 24
    assert ROPE_BWD_BYTES == 4 + 4 + 2 + 4 + 6 + 6 == 26
    assert EXPERT_BIAS_FWD_BYTES == 2 + 6 + 4 == 12
    assert EXPERT_BIAS_BWD_BYTES == 6 + 6 + 4 == 16


def test_yarn_rope_runs_unfused_on_q_and_k():
    """50 bytes per element of Q and K, 1,280 elements per token, per layer and micro-batch."""
    plain, m = _detail(MODEL)
    yarn, _ = _detail({**MODEL, **YARN})
    assert m == 4
    assert yarn["elementwise"] - plain["elementwise"] == pytest.approx(
        m * LAYERS * TOKENS * 1280 * 50 / HBM, rel=1e-9
    )
    assert yarn["gemm"] == plain["gemm"] and yarn["attention"] == plain["attention"]


def test_full_recompute_runs_the_forward_chain_twice():
    """Full recompute: 2 x 24 forward + 26 backward = 74 bytes per element."""
    plain, m = _detail(MODEL, recompute="full")
    yarn, _ = _detail({**MODEL, **YARN}, recompute="full")
    assert yarn["elementwise"] - plain["elementwise"] == pytest.approx(
        m * LAYERS * TOKENS * 1280 * 74 / HBM, rel=1e-9
    )


def test_expert_bias_is_scaled_per_routed_copy():
    """28 bytes per element of the experts' h-wide output, k = 2 copies per token, on the busiest
    card: the plan's default token imbalance 1.1 (as the experts' GEMMs)."""
    plain, m = _detail(MODEL)
    bias, _ = _detail({**MODEL, "expert_bias": True})
    assert bias["elementwise"] - plain["elementwise"] == pytest.approx(
        m * LAYERS * TOKENS * 2 * 1.1 * 1024 * 28 / HBM, rel=1e-9
    )
    assert bias["moe_experts"] == plain["moe_experts"]


def test_stacks_that_fuse_or_apply_the_probabilities_after_the_combine_pay_nothing():
    """megatron-core-2024 (Megatron-Core 0.5-0.9) has neither mechanism: probabilities applied in the
    combine, no YaRN entry among its unfused rope types."""
    assert not STACKS["megatron-core-2024"].unfused_rope_types
    plain, _ = _detail(MODEL, stack="megatron-core-2024")
    both, _ = _detail({**MODEL, **YARN, "expert_bias": True}, stack="megatron-core-2024")
    assert both["elementwise"] == pytest.approx(plain["elementwise"], rel=1e-12)


def test_config_json_reads_rope_type_and_gpt_oss_biases():
    arch = architecture_from_config({**MODEL, **YARN})
    assert arch.rope_type == "yarn" and not arch.expert_bias
    assert architecture_from_config({**MODEL, "rope_scaling": {"type": "YaRN"}}).rope_type == "yarn"
    assert architecture_from_config({**MODEL, "model_type": "gpt_oss"}).expert_bias
    assert architecture_from_config(MODEL).rope_type == "default"
    with pytest.raises(ValueError, match="rope_scaling"):
        architecture_from_config({**MODEL, "rope_scaling": "yarn"})


def test_rope_scaling_as_config_json_ships_it_plans():
    """Lists inside rope_scaling (Phi-3's longrope factors, Qwen2-VL's mrope_section) are accepted,
    and a rope type no stack runs unfused costs nothing."""
    plain, _ = _detail(MODEL)
    longrope = {"rope_type": "longrope", "long_factor": [1.0, 1.5], "short_factor": [1.0, 1.0]}
    mrope = {"type": "mrope", "mrope_section": [16, 24, 24]}
    for scaling in (longrope, mrope):
        detail, _ = _detail({**MODEL, "rope_scaling": scaling})
        assert detail["elementwise"] == pytest.approx(plain["elementwise"], rel=1e-12)
