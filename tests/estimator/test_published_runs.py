"""The step-time model against published MoE, FP8 and long-context runs (estimator/reference_data/
throughput_runs.toml; sources in docs/sources.md). The published figures are the sources' own;
nothing in the model is fitted to these rows (TRAINING_GEMM_FRACTION is fitted on Narayanan 2021)."""

import pytest

from estimator.errors import ScenarioError
from estimator.plan.compose import estimate
from estimator.validation.published_runs import predicted_tokens_per_s_per_gpu, published_runs, run_scenario

MODELS, RUNS = published_runs()
BY_ID = {r["id"]: r for r in RUNS}


def predicted(run_id: str, **training: object) -> float:
    return predicted_tokens_per_s_per_gpu(run_scenario(BY_ID[run_id], MODELS, **training))


def test_mixtral_8x7b_on_64_h100_within_15_percent_of_468_tflops():
    # 468 TFLOP/s in Megatron's full-attention count = 5,643 tokens/s per GPU
    assert predicted("mixtral-8x7b-64xh100") == pytest.approx(5643, rel=0.15)


def test_gpt_oss_120b_on_64_h100_within_15_percent_of_5900_tokens():
    """Megatron-Bridge 26.02-26.04 (5,810-5,993 tokens/s per GPU): TP1 PP4 EP8, GBS 1280, BF16, 4K."""
    assert predicted("gpt-oss-120b-64xh100") == pytest.approx(5900, rel=0.15)


def test_llama3_8b_fsdp_bf16_within_25_percent_and_fp8_speedup_in_published_band():
    bf16 = predicted("llama3-8b-8xh100-fsdp2-bf16")
    fp8 = predicted("llama3-8b-8xh100-fsdp2-fp8")
    assert bf16 == pytest.approx(6150, rel=0.25)
    assert 1.05 <= fp8 / bf16 <= 1.45  # published 1.25x (tensorwise)


def test_fp8_speedup_shrinks_as_sequences_grow_mpt():
    # llm-foundry: MPT-1B 1.35x at 512 tokens; MPT-3B 1.15x at 8K and 1.00x at 32K
    def speedup(model: str, seq: int, mbs: int, gbs: int, recompute: str) -> float:
        run = {**BY_ID["mpt-3b-8xh100-32k-bf16"], "model": model, "seq_len": seq, "global_batch_seqs": gbs}
        run["layout"] = {**run["layout"], "micro_batch_size": mbs, "recompute": recompute}
        bf16 = predicted_tokens_per_s_per_gpu(run_scenario(run, MODELS, precision="bf16"))
        fp8 = predicted_tokens_per_s_per_gpu(
            run_scenario(run, MODELS, precision="fp8", stack_overrides={"fp8_recipe": "delayed"})
        )
        return fp8 / bf16

    short = speedup("mpt-1b", 512, 56, 1792, "none")
    mid = speedup("mpt-3b", 8192, 3, 144, "full")
    long = speedup("mpt-3b", 32768, 3, 144, "full")
    assert short > mid > long >= 1.0
    assert 1.15 <= short <= 1.6


@pytest.mark.parametrize(
    ("run_id", "published"),
    [
        ("mpt-3b-8xh100-32k-bf16", 5873),
        ("mpt-7b-8xh100-32k-bf16", 3318),
        ("mpt-7b-8xh100-64k-bf16", 1956),
        ("mpt-13b-8xh100-32k-bf16", 1976),
    ],
)
def test_llm_foundry_long_sequences_within_10_percent(run_id, published):
    """llm-foundry's H100 BF16 table at 32K-64K tokens, where MPT's Triton FlashAttention (ALiBi)
    dominates the step: its efficiency is FA2's / 1.9 from the FlashAttention-2 paper, not fitted."""
    assert predicted(run_id) == pytest.approx(published, rel=0.10)


@pytest.mark.parametrize(
    "run_id",
    [
        "qwen3-235b-a22b-256xgb200-mxfp8",
        "qwen3-235b-a22b-256xb200-mxfp8",
        "qwen3-30b-a3b-8xgb200-mxfp8",
        "llama3-70b-64xgb200-mxfp8",
        "llama3-405b-256xgb200-fp8",
    ],
)
def test_blackwell_runs_within_12_percent(run_id):
    """Megatron-Bridge 26.02 on GB200 NVL72 and B200. Since engine 2.22.0 the two per-expert GEMM costs
    are fitted on the moe, blackwell and blackwell-releases suites together (expert_costs), so the
    MoE rows here are no longer held out; the dense ones are. GPT-OSS is the known miss
    (docs/steptime.md)."""
    assert predicted(run_id) == pytest.approx(float(BY_ID[run_id]["tokens_per_s_per_gpu"]), rel=0.12)


def test_llama2_7b_long_context_rows_within_20_percent():
    assert predicted("llama2-7b-64xh100-64k-fp8") == pytest.approx(4022, rel=0.20)
    assert predicted("llama2-7b-128xh100-128k-fp8") == pytest.approx(2258, rel=0.20)


def test_ep_overlap_on_is_faster_than_off_by_10_to_25_percent():
    off = predicted("qwen3-30b-a3b-16xh100-ep16-bf16-hybridep")
    on = predicted("qwen3-30b-a3b-16xh100-ep16-bf16-hybridep-overlap")
    assert 1.10 <= on / off <= 1.25  # published 24.71 / 20.99 s = 1.177x


def test_ep_overlap_hides_the_published_seconds():
    """The seconds per step that EP overlap saves on the HybridEP pair, step(off) - step(on), within
    25% of the measured 24.71 - 20.99 s. (The alltoall pair's 9.94 s is overestimated: docs/steptime.md.)"""
    off_id = "qwen3-30b-a3b-16xh100-ep16-bf16-hybridep"
    run = BY_ID[off_id]
    tokens = run["global_batch_seqs"] * run["seq_len"]

    def step_s(run_id: str) -> float:
        return tokens / (predicted(run_id) * run["gpus"])

    saving = step_s(off_id) - step_s(f"{off_id}-overlap")
    assert saving == pytest.approx(24.71 - 20.99, rel=0.25)


def test_fine_grained_moe_runs_within_15_percent():
    """Qwen3-30B-A3B on 16 H100 (EP16, BF16) with both dispatchers, overlap off: the runs whose
    per-expert GEMM overhead EXPERT_GEMM_OVERHEAD_S was fitted on (with the other MoE runs)."""
    assert predicted("qwen3-30b-a3b-16xh100-ep16-bf16-hybridep") == pytest.approx(10607, rel=0.15)
    assert predicted("qwen3-30b-a3b-16xh100-ep16-bf16-alltoall") == pytest.approx(6355, rel=0.15)


def test_fp8_only_speeds_up_gemms():
    """FP8 leaves attention, norms and the optimizer in 16 bit: the attention term does not move."""
    run = BY_ID["llama3-8b-8xh100-mcore-fp8"]
    parts = {}
    for precision in ("bf16", "fp8"):
        out = estimate(run_scenario(run, MODELS, precision=precision))
        parts[precision] = out["result"]["parallelism"]["compute_detail_s"]
    assert parts["fp8"]["attention"] == pytest.approx(parts["bf16"]["attention"], rel=1e-9)
    assert parts["fp8"]["gemm"] < 0.75 * parts["bf16"]["gemm"]


def test_zero0_7p5b_on_64_a100_reports_120_gb_of_model_states_and_does_not_fit():
    """ZeRO paper figure 1: 7.5B with mixed-precision Adam on 64 cards, stage 0: (2+2+12)·7.5e9 = 120 GB,
    more than the 80 GB card: the fixed layout is refused with what overflows and the nearest layout
    that fits (ZeRO-1 shards the 12 B/param of Adam: 4·7.5e9 + 12·7.5e9/64 = 31 GB)."""
    with pytest.raises(ScenarioError) as info:
        estimate(
            {
                "model": {"preset": "megatron-gpt-7.5b"},
                "training": {
                    "tokens": 1e11,
                    "seq_len": 2048,
                    "grad_dtype": "bf16",
                    "global_batch_tokens": 512 * 2048,
                },
                "hardware": {"accelerator": "a100-sxm-80gb"},
                "cluster": {"cards": 64},
                "parallelism": {
                    "tp": 1,
                    "pp": 1,
                    "zero_stage": 0,
                    "distributed_optimizer": False,
                    "recompute": "full",
                },
            }
        )
    (err,) = info.value.errors
    assert (err.field, err.code) == ("parallelism", "fixed-layout-does-not-fit")
    p = err.params
    assert p["model_states_gb"] == pytest.approx(120, rel=0.03)
    assert p["overflow_gb"] > 40 and p["largest_term"] == "optimizer"
    nearest = p["suggestions"][0]
    assert (nearest["tp"], nearest["pp"]) == (1, 1) and nearest["zero_stage"] >= 1


def test_gpt_13b_fp8_speedup_between_1p2_and_1p6():
    """Megatron-LM issue #396: a 13B GPT on one H100 node, 0.34 -> 0.24 s/step with TE FP8 (1.42x).
    The issue gives no layout; GPT-3 13B (40 layers, h 5120) on 8 H100 at TP2, ZeRO-1, seq 2048."""
    arch = {
        "num_hidden_layers": 40,
        "hidden_size": 5120,
        "num_attention_heads": 40,
        "num_key_value_heads": 40,
        "head_dim": 128,
        "intermediate_size": 20480,
        "vocab_size": 50257,
        "tie_word_embeddings": True,
        "hidden_act": "gelu",
    }

    def tokens_per_s(precision: str) -> float:
        out = estimate(
            {
                "model": arch,
                "training": {
                    "tokens": 1e11,
                    "seq_len": 2048,
                    "global_batch_tokens": 128 * 2048,
                    "precision": precision,
                    "stack": "megatron-core-2024",
                },
                "hardware": {"accelerator": "h100-sxm"},
                "cluster": {"cards": 8},
                "parallelism": {
                    "tp": 2,
                    "pp": 1,
                    "zero_stage": 1,
                    "micro_batch_size": 2,
                    "recompute": "none",
                },
            }
        )
        return out["result"]["parallelism"]["tokens_per_s"]

    assert 1.2 <= tokens_per_s("fp8") / tokens_per_s("bf16") <= 1.6


@pytest.mark.parametrize(
    ("run_id", "first", "last"),
    [("qwen3-235b-a22b-256xh100-tp2-ep32-fp8", 11, 11), ("deepseek-v3-256xgb200-pp4-vp4-ep64-bf16", 16, 13)],
)
def test_published_moe_layouts_plan_as_published_within_10_percent(run_id, first, last):
    """Megatron-Bridge's Qwen3-235B-A22B on 256 H100 (TP2 PP8 VP4 EP32: EP folded over TP x DP at
    expert-TP 1) and DeepSeek-V3 on 256 GB200 (PP4 VP4 EP64: 61 layers as 16 + 16 + 16 + 13, the
    recipe's layout), both refused before engine 2.17.0; held out (nothing fitted on them)."""
    run = BY_ID[run_id]
    result = estimate(run_scenario(run, MODELS))["result"]
    par = result["parallelism"]
    assert (par["tp"], par["pp"], par["ep"], par["virtual_stages"]) == tuple(
        run["layout"][k] for k in ("tp", "pp", "ep", "virtual_stages")
    )
    assert (par["first_stage_layers"], par["last_stage_layers"]) == (first, last)
    per_gpu = par["tokens_per_s"] / result["compute"]["cards"]
    assert per_gpu == pytest.approx(float(run["tokens_per_s_per_gpu"]), rel=0.10)


def test_pangu_ultra_row_is_the_reports_mfu_in_palm_flops():
    # Pangu Ultra report (arXiv 2504.07866) section 4: over 52% MFU, MFU as PaLM (its reference [14],
    # appendix B): 6N + 12·L·H·Q·T FLOP per token, N = 135e9, L = 94, H = 96, Q = 128, T = 4,096;
    # the report states no peak: 354e12 per 910B [U], the catalog's ascend-910b2
    flop_per_token = 6 * 135e9 + 12 * 94 * 96 * 128 * 4096
    run = BY_ID["pangu-ultra-135b-8192x910b-4k-mindspeed"]
    assert run["tokens_per_s_per_gpu"] == pytest.approx(0.52 * 354e12 / flop_per_token, abs=0.05)
    assert "fit" not in run  # held out: nothing is fitted on Huawei's own runs


def test_pangu_ultra_layout_gives_the_reports_bubble_ratios():
    # Section 4.2: 1F1B bubble (p-1)/(p-1+n) = 30.45% at p = 8 and 6.8% with 6 virtual stages, 128-way
    # DP: n = 16 micro-batches per DP rank, the row's 2,048 sequences at micro-batch 1
    run = BY_ID["pangu-ultra-135b-8192x910b-4k-mindspeed"]
    lay = run["layout"]
    dp = run["gpus"] // (lay["tp"] * lay["pp"] * lay["cp"])
    n = run["global_batch_seqs"] // (dp * lay["micro_batch_size"])
    p, v = lay["pp"], lay["virtual_stages"]
    assert (dp, n) == (128, 16)
    assert (p - 1) / (p - 1 + n) == pytest.approx(0.3045, abs=0.0005)
    assert (p - 1) / (v * n + p - 1) == pytest.approx(0.068, abs=0.0005)
