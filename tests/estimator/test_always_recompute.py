"""What a stack always recomputes (StackProfile.always_recompute, DeepSeek-V3 report section 3.2.3 and
3.3) is paid in the step time and counted in HFU: each term by hand on a small MLA + MoE model.

The model, by hand: 4 layers (1 dense, 3 MoE), h 1024, 16 heads with qk_nope 64, qk_rope 32, v 64;
q_lora_rank 256, kv_lora_rank 128; 16 routed experts, top-2, f_e 512, 1 shared expert. MLA's
up-projections: q 256 x 16·(64 + 32) = 393,216 and kv 128 x 16·(64 + 64) = 262,144 parameters per
layer, 655,360 together. One micro-batch is 4,096 tokens; 8 H100 with EP 8, TP 1, PP 1, 4 micro-batches."""

import pytest

from estimator import catalog
from estimator.layout.steptime.constants import (
    CAST_BYTES_PER_ELEMENT,
    FP8_TO_BF16_EFFICIENCY,
    HBM_EFFICIENCY,
    TRAINING_GEMM_FRACTION,
)
from estimator.plan.compose import estimate

H100 = catalog.accelerator("h100-sxm")
HBM = H100.hbm_bandwidth_bytes_per_s * HBM_EFFICIENCY
TOKENS = 4096
LAYERS, MOE_LAYERS = 4, 3
UP_PROJ = 256 * 16 * (64 + 32) + 128 * 16 * (64 + 64)
MODEL = {
    "num_hidden_layers": LAYERS,
    "hidden_size": 1024,
    "num_attention_heads": 16,
    "num_key_value_heads": 16,
    "head_dim": 96,
    "intermediate_size": 4096,
    "vocab_size": 32000,
    "hidden_act": "silu",
    "num_experts": 16,
    "num_experts_per_tok": 2,
    "n_shared_experts": 1,
    "moe_intermediate_size": 512,
    "first_k_dense_replace": 1,
    "q_lora_rank": 256,
    "kv_lora_rank": 128,
    "qk_nope_head_dim": 64,
    "qk_rope_head_dim": 32,
    "v_head_dim": 64,
}


def _plan_parallelism(overrides: dict, precision: str = "bf16", recompute: str = "none") -> dict:
    """The plan's parallelism section of the model on 8 H100 (EP 8) on the deepseek-dualpipe stack
    with the stack `overrides`."""
    return estimate(
        {
            "model": MODEL,
            "training": {
                "tokens": 1e10,
                "seq_len": TOKENS,
                "global_batch_tokens": 8 * TOKENS * 4,
                "precision": precision,
                "stack": "deepseek-dualpipe",
                "stack_overrides": overrides,
            },
            "hardware": {"accelerator": "h100-sxm"},
            "cluster": {"cards": 8},
            "parallelism": {"tp": 1, "pp": 1, "ep": 8, "micro_batch_size": 1, "recompute": recompute},
        }
    )["result"]["parallelism"]


def _parallelism(always: list[str], precision: str = "bf16", recompute: str = "none") -> dict:
    """The plan's parallelism section on the deepseek-dualpipe stack with `always` recomputed."""
    return _plan_parallelism({"always_recompute": always}, precision, recompute)


def _detail(always: list[str], precision: str = "bf16", recompute: str = "none") -> tuple[dict, int]:
    out = _parallelism(always, precision, recompute)
    return out["compute_detail_s"], out["micro_batches"]


def test_recomputed_norms_read_and_write_every_rmsnorm_again():
    """norms: per layer the two h-wide RMSNorms and MLA's q and kv latent norms run once more, each
    read 2 + write 2 bytes per element: 4·(2·1024 + 256 + 128) = 9,728 bytes per token and layer."""
    none, m = _detail([])
    norms, _ = _detail(["norms"])
    assert m == 4
    assert norms["elementwise"] - none["elementwise"] == pytest.approx(
        m * LAYERS * TOKENS * 4 * (2 * 1024 + 256 + 128) / HBM, rel=1e-9
    )
    assert norms["gemm"] == none["gemm"] and norms["moe_experts"] == none["moe_experts"]


def test_recomputed_swiglu_reads_its_input_and_writes_its_output_per_routed_copy():
    """moe_act: each MoE layer's routed SwiGLU again, read 2·f_e and write f_e 16-bit values per
    routed token copy: 6·2·512 = 6,144 bytes per token and MoE layer (the dense layer pays none)."""
    none, m = _detail([])
    act, _ = _detail(["moe_act"])
    assert act["elementwise"] - none["elementwise"] == pytest.approx(
        m * MOE_LAYERS * TOKENS * 6 * 2 * 512 / HBM, rel=1e-9
    )


def test_recomputed_mla_up_projections_run_at_the_linears_roofline():
    """mla_up_proj in BF16: 2·4,096·655,360 FLOP per layer and micro-batch against the operands
    streamed (weights 655,360 + 4,096·(384 + 16·96 + 16·128) latent inputs and outputs, 2 bytes).
    With inner dimensions of 256 and 128 these GEMMs do ~159 FLOP per byte, under the H100's ridge
    (601.6 TFLOP/s of BF16 GEMM over 2.85 TB/s = 211): they are memory-bound, and the roofline
    prices the streaming."""
    none, m = _detail([])
    up, _ = _detail(["mla_up_proj"])
    flop = 2 * TOKENS * UP_PROJ
    rate = H100.peak_flops_bf16 * H100.matmul_efficiency * TRAINING_GEMM_FRACTION
    stream = (UP_PROJ + TOKENS * (384 + 16 * 96 + 16 * 128)) * 2 / HBM
    assert UP_PROJ == 655_360
    assert stream > flop / rate
    assert up["gemm"] - none["gemm"] == pytest.approx(m * LAYERS * stream, rel=1e-9)
    assert up["elementwise"] == none["elementwise"]


def test_recomputed_mla_up_projections_in_fp8_pay_the_cast_of_latents_and_weights():
    """In FP8 (blockwise, no FP8 weight cache on this stack) the recomputed GEMMs run at the FP8 rate
    and cast their latent inputs (4,096 x 384 elements) and their weights (655,360) again, 6 bytes
    per element (read 2, write 1, in both layouts)."""
    none, m = _detail([], "fp8")
    up, _ = _detail(["mla_up_proj"], "fp8")
    rate = H100.peak_flops_fp8 * H100.matmul_efficiency * FP8_TO_BF16_EFFICIENCY * TRAINING_GEMM_FRACTION
    stream = (UP_PROJ + TOKENS * (384 + 16 * 96 + 16 * 128)) / HBM
    gemm = max(2 * TOKENS * UP_PROJ / rate, stream)
    cast = (TOKENS * 384 + UP_PROJ) * CAST_BYTES_PER_ELEMENT["blockwise"] / HBM
    assert up["gemm"] - none["gemm"] == pytest.approx(m * LAYERS * (gemm + cast), rel=1e-9)


def test_full_recompute_already_reruns_what_is_always_recomputed():
    """Under full recompute the whole forward runs again: the always-recomputed modules add nothing."""
    every = ["norms", "mla_up_proj", "moe_act"]
    none, _ = _detail([], recompute="full")
    always, _ = _detail(every, recompute="full")
    assert always == pytest.approx(none, rel=1e-12)


def test_hfu_counts_the_recomputed_up_projections():
    """HFU = MFU + recomputed FLOP / (step x peak): 2·655,360 FLOP per token and layer for the up-
    projections (norms and SwiGLU are not matmuls), 4 x 4 x 4,096 tokens per card and step. Without
    the up-projections HFU equals MFU (no recompute)."""
    plain = _parallelism(["norms", "moe_act"])
    up = _parallelism(["norms", "moe_act", "mla_up_proj"])
    assert plain["predicted_hfu"] == pytest.approx(plain["predicted_mfu"], rel=1e-12)
    assert up["predicted_hfu"] > up["predicted_mfu"]
    step_tokens_per_card = up["micro_batches"] * 8 * TOKENS / 8
    recomputed = 2 * UP_PROJ * LAYERS * step_tokens_per_card
    hfu_minus_mfu = recomputed / (up["step_time_s"] * H100.peak_flops_bf16)
    assert up["predicted_hfu"] - up["predicted_mfu"] == pytest.approx(hfu_minus_mfu, rel=1e-9)


def test_selective_modules_already_always_recomputed_are_not_paid_twice():
    """Selective recompute's layernorm and moe_act modules re-run what "norms" and "moe_act" already
    re-run on this stack: the memory model saves them once (activations.layer_coefficients), and the
    step time pays them once."""

    def elementwise_s(modules: list[str]) -> float:
        detail = _plan_parallelism({"selective_recompute": modules}, recompute="selective")[
            "compute_detail_s"
        ]
        return detail["elementwise"]

    assert elementwise_s(["core_attn", "layernorm", "moe_act"]) == pytest.approx(
        elementwise_s(["core_attn"]), rel=1e-12
    )
