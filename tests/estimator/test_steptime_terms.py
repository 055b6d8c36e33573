"""The step-time model's terms one by one, against hand computations and published micro-benchmarks."""

import math

import numpy as np
import pytest

from estimator import catalog
from estimator.errors import ScenarioError
from estimator.layout.stacks import STACKS, default_stack_id, resolve_stack
from estimator.layout.steptime import Fabric
from estimator.layout.steptime import attention as att
from estimator.layout.steptime.constants import CAST_BYTES_PER_ELEMENT, FP8_TO_BF16_EFFICIENCY, HBM_EFFICIENCY
from estimator.layout.steptime.gemm import gemm_rate, linear_time_s
from estimator.layout.steptime.moe import all_to_all_s, expert_time_s, tokens_per_local_expert
from estimator.layout.steptime.pipeline import bubble_s
from estimator.model.transformer import Architecture
from estimator.plan.compose import estimate

H100 = catalog.accelerator("h100-sxm")


def _linear_fwd_bwd_s(m: int, k: int, n: int, fp8: bool) -> float:
    """One linear layer, forward + backward (3 GEMMs of 2·M·K·N), as the model prices it (G = 1)."""
    rate = gemm_rate(H100.peak_flops_bf16, H100.peak_flops_fp8, H100.matmul_efficiency, 1.0, fp8)
    hbm = H100.hbm_bandwidth_bytes_per_s * HBM_EFFICIENCY
    elements = m * k + k * n + m * n
    return float(linear_time_s(3 * 2 * m * k * n, 3 * elements, rate, hbm, fp8, "tensorwise", elements))


def test_fp8_linear_speedup_matches_torchao_microbenchmarks():
    """torchao float8 README (H100, tensorwise, fwd+bwd with casts): 0.80x at M,K,N = 1024,2048,1024 and
    1.39x at 4096,8192,16384. The model: FP8 GEMMs at 0.86 of BF16's fraction of a 2x peak, plus the casts."""
    small = _linear_fwd_bwd_s(1024, 2048, 1024, False) / _linear_fwd_bwd_s(1024, 2048, 1024, True)
    large = _linear_fwd_bwd_s(4096, 8192, 16384, False) / _linear_fwd_bwd_s(4096, 8192, 16384, True)
    # small shapes: FP8 is slower than BF16 (the casts dominate); without per-kernel tails the model
    # errs low here (0.67 against 0.80)
    assert small < 1.0 and small == pytest.approx(0.80, rel=0.2)
    assert large == pytest.approx(1.39, rel=0.10)


def test_gemm_roofline_small_m_is_weight_bound():
    """M = 64 tokens: 2·64·N·K FLOPs against N·K weights: intensity ~64 FLOP/byte, under H100's ridge."""
    rate = gemm_rate(H100.peak_flops_bf16, None, H100.matmul_efficiency, 1.0, False)
    hbm = H100.hbm_bandwidth_bytes_per_s * HBM_EFFICIENCY
    n = k = 8192
    t = float(linear_time_s(2 * 64 * n * k, 64 * k + k * n + 64 * n, rate, hbm, False, "delayed"))
    assert t == pytest.approx((64 * k + k * n + 64 * n) * 2 / hbm)
    assert pytest.approx(1358 / 1979 / 0.80, rel=0.01) == FP8_TO_BF16_EFFICIENCY  # DeepGEMM / MAMF
    assert CAST_BYTES_PER_ELEMENT["delayed"] == 2 * (2 + 1)


def test_attention_flops_causal_fused_half_and_backward_two_and_a_half():
    arch = Architecture(
        num_hidden_layers=1,
        hidden_size=4096,
        num_attention_heads=32,
        num_key_value_heads=8,
        head_dim=128,
        intermediate_size=1,
        vocab_size=1,
    )
    s = 8192
    assert att.forward_flop_per_token(arch, s, fused=False) == 2 * s * 32 * 256
    assert att.forward_flop_per_token(arch, s, fused=True) == s * 32 * 256
    assert att.backward_ratio(True) == 2.5 and att.backward_ratio(False) == 2.0


def test_attention_kernel_efficiency_by_generation_sequence_and_head():
    long_fa3 = att.kernel_efficiency("fa3", "hopper", 1e9, 128, 0.6)
    long_fa2 = att.kernel_efficiency("fa2", "hopper", 1e9, 128, 0.6)
    assert long_fa3 == pytest.approx(0.58, rel=1e-6) and long_fa2 == pytest.approx(0.35, rel=1e-6)
    # FA2 on Ampere is the FA2 paper's ~60%
    assert att.kernel_efficiency("fa2", "ampere", 1e9, 128, 0.6) == pytest.approx(0.60, rel=1e-6)
    # short sequences: s/(s + 384)
    assert att.kernel_efficiency("fa3", "hopper", 384, 128, 0.6) == pytest.approx(0.29, rel=1e-6)
    # FA2-era kernels: head dim 64 runs at (64/96)/(128/160) = 0.833 of 128
    assert att.kernel_efficiency("fa2", "hopper", 1e9, 64, 0.6) == pytest.approx(0.35 * 0.8333, rel=1e-3)
    # Hopper kernels (FA3 paper, H100 16-bit forward at 4K-16K): head dim 64 at the mean of cuDNN's
    # 408/609 .. 413/595 and FA3's 476/638 .. 497/648; 256 at the mean of 483/609 .. 509/595 and
    # 612/638 .. 642/648; 96 half-way in log2 between 64 and 128
    cudnn_64 = (408 / 609 + 412 / 600 + 413 / 595) / 3
    fa3_64 = (476 / 638 + 496 / 646 + 497 / 648) / 3
    assert att.kernel_efficiency("fa3", "hopper", 1e9, 64, 0.6) == pytest.approx(
        0.58 * (cudnn_64 + fa3_64) / 2, rel=0.01
    )
    cudnn_256 = (483 / 609 + 497 / 600 + 509 / 595) / 3
    fa3_256 = (612 / 638 + 628 / 646 + 642 / 648) / 3
    assert att.head_factor("fa3", "hopper", 256) == pytest.approx((cudnn_256 + fa3_256) / 2, rel=0.02)
    assert att.head_factor("fa3", "hopper", 128) == 1.0
    assert att.head_factor("fa3", "hopper", 96) == pytest.approx(0.72 + (1.0 - 0.72) * math.log2(1.5))
    # kernels compiled for fixed head sizes compute the padding: MPT-30B's 112 runs as 128 in the
    # Triton kernel (next power of two) and in FA2 (next multiple of 32); 80 runs as 128 / 96
    assert att.padded_head_dim("fa-triton", 112) == 128 and att.padded_head_dim("fa2", 112) == 128
    assert att.padded_head_dim("fa-triton", 80) == 128 and att.padded_head_dim("fa2", 80) == 96
    assert att.padded_head_dim("fa2", 160) == 192 and att.padded_head_dim("fa3", 112) == 112
    assert att.kernel_efficiency("fa2", "hopper", 1e9, 112, 0.6) == pytest.approx(
        0.35 * (112 / 144) / (128 / 160) * 112 / 128
    )
    # Ascend: the GEMM rate of the chip (no published kernel measurement)
    assert att.kernel_efficiency("ascend-fa", "ascend-910b", 1e9, 128, 0.57) == pytest.approx(0.57, rel=1e-6)
    # MPT's Triton FlashAttention: FA2 paper, FA2 is 1.3-2.5x faster; the middle, 1.9
    assert att.kernel_efficiency("fa-triton", "hopper", 1e9, 128, 0.6) == pytest.approx(0.35 / 1.9, rel=1e-6)
    assert att.kernel_efficiency("fa-triton", "ampere", 1e9, 128, 0.6) == pytest.approx(0.60 / 1.9, rel=1e-6)


def _moe_arch(experts=64, top_k=8, hidden=2048):
    return Architecture(
        num_hidden_layers=1,
        hidden_size=hidden,
        num_attention_heads=16,
        num_key_value_heads=16,
        head_dim=128,
        intermediate_size=1,
        vocab_size=1,
        num_experts=experts,
        num_experts_per_tok=top_k,
        moe_intermediate_size=768,
    )


def test_tokens_per_local_expert_balanced_and_imbalanced():
    # EP8, 4096 tokens per card, top-8 of 64 experts: 8·4096·8/64 = 4096 rows per local expert
    assert tokens_per_local_expert(4096, 8, 8, 64, 1.0) == 4096
    assert tokens_per_local_expert(4096, 8, 8, 64, 1.25) == 5120


def test_per_expert_gemms_pay_a_fixed_time_per_launch():
    """128 experts over EP16 = 8 local experts, two weight GEMMs each, in the forward, data-gradient
    and weight-gradient passes (passes = 3): 48 launches of 40 us = 1.92 ms more than one grouped kernel."""
    arch = Architecture(
        num_hidden_layers=1,
        hidden_size=2048,
        num_attention_heads=32,
        num_key_value_heads=4,
        head_dim=128,
        intermediate_size=1,
        vocab_size=1,
        num_experts=128,
        num_experts_per_tok=8,
        moe_intermediate_size=768,
    )

    def t(per_gemm: float) -> float:
        return float(
            expert_time_s(4096, 1, 16, arch, 3.0, 3.0, 6e14, 2.8e12, False, "delayed", 1.0, per_gemm, 1.0)
        )

    assert t(40e-6) - t(0.0) == pytest.approx(48 * 40e-6)
    one_kernel = [sid for sid, p in STACKS.items() if not p.per_expert_gemms]
    assert sorted(one_kernel) == ["deepseek-dualpipe", "llm-foundry", "mindspeed-2025", "pytorch-fsdp2"]


def test_all_to_all_by_hand_inside_a_node_and_across_nodes():
    arch = _moe_arch()
    fab = Fabric(domain=8.0, bw_up=400e9, nic=50e9, cross=1.0, leaf_cards=math.inf, eta=1.0)
    tokens, h = 4096.0, 2048.0
    # EP8 inside one 8-card domain: k·7/8 copies of h bf16 values per token, 4 all-to-alls
    t = float(all_to_all_s(tokens, 1.0, 1.0, 8.0, arch, 4.0, fab, False, None, False, 1.0))
    expected = 4 * (tokens * 8 * 7 / 8 * h * 2 / 400e9 + 7 * 2e-6)
    assert t == pytest.approx(expected, rel=1e-9)
    # EP16 over two nodes without deduplication: k·8/16 copies per token over the NIC
    t2 = float(all_to_all_s(tokens, 1.0, 1.0, 16.0, arch, 4.0, fab, False, None, False, 1.0))
    nic = tokens * 8 * 8 / 16 * h * 2 / 50e9
    assert t2 == pytest.approx(4 * (nic + 7 * 2e-6 + 5e-6), rel=1e-9)
    # hierarchical dispatch sends a token once per distinct remote node: (2-1)(1-(1/2)^8) copies
    t3 = float(all_to_all_s(tokens, 1.0, 1.0, 16.0, arch, 4.0, fab, True, None, False, 1.0))
    dedup = tokens * (1 - 0.5**8) * h * 2 / 50e9
    assert t3 == pytest.approx(
        4 * (max(dedup, tokens * 8 * 7 / 16 * h * 2 / 400e9) + 7 * 2e-6 + 5e-6), rel=1e-9
    )
    assert t3 < t2 / 3


def test_dualpipe_bubble_against_1f1b():
    """DeepSeek-V3 table 2: 1F1B (PP-1)(F+B); DualPipe (PP/2-1)(F&B+B-3W) = (PP/2-1)·(2/3)(F+B) with W = F."""
    t_stage = np.asarray(1.0)
    assert float(bubble_s(16, 1, t_stage, False)) == 15.0
    assert float(bubble_s(16, 1, t_stage, True)) == pytest.approx(7 * 2 / 3)
    assert float(bubble_s(8, 4, t_stage, False)) == pytest.approx(7 / 4)


def test_stacks_switch_mechanisms_only_and_name_their_source():
    for profile in STACKS.values():
        assert profile.source and profile.as_of
        for value in profile.mechanisms().values():  # switches and names, never a speed factor
            names = isinstance(value, tuple) and all(isinstance(v, str) for v in value)
            assert value is None or isinstance(value, bool | int | str) or names
            assert not isinstance(value, float)
    assert default_stack_id("Huawei") == "mindspeed-2025"
    assert default_stack_id("NVIDIA") == "megatron-core-2025"
    # MoE: current Megatron-Core MoE recipes run the flex dispatcher (DeepEP/HybridEP) on Hopper and
    # newer; DeepEP does not run on A100 (no FP8) nor on AMD, where the plain all-to-all stays
    assert default_stack_id("NVIDIA", moe=True, fp8_hardware=True) == "megatron-core-moe-2025"
    assert default_stack_id("NVIDIA", moe=True, fp8_hardware=False) == "megatron-core-2025"
    assert default_stack_id("AMD", moe=True, fp8_hardware=True) == "megatron-core-2025"
    assert default_stack_id("Huawei", moe=True, fp8_hardware=False) == "mindspeed-2025"
    assert resolve_stack(None, "NVIDIA", {"ep_comm_overlap": True}).ep_comm_overlap is True


def test_bad_stack_input_names_the_field():
    with pytest.raises(ScenarioError) as err:
        resolve_stack("megatron-9000", "NVIDIA")
    assert err.value.errors[0].field == "training.stack"
    with pytest.raises(ScenarioError) as err:
        resolve_stack(None, "NVIDIA", {"warp_drive": True, "cuda_graphs": "yes"})
    fields = {e.field for e in err.value.errors}
    assert fields == {"training.stack_overrides.warp_drive", "training.stack_overrides.cuda_graphs"}


def test_cuda_graphs_remove_the_host_overhead_and_the_report_names_the_stack():
    base = {
        "model": {"preset": "qwen3-30b-a3b"},
        "training": {"tokens": 1e11, "seq_len": 4096},
        "hardware": {"accelerator": "h100-sxm"},
        "cluster": {"cards": 16},
        "parallelism": {"tp": 1, "pp": 1, "ep": 16, "micro_batch_size": 1},
    }
    plain = estimate(base)["result"]
    graphs = estimate({**base, "training": {**base["training"], "stack_overrides": {"cuda_graphs": True}}})[
        "result"
    ]
    assert plain["parallelism"]["breakdown_s"]["host_overhead"] > 0
    assert graphs["parallelism"]["breakdown_s"]["host_overhead"] == 0
    assert graphs["parallelism"]["step_time_s"] < plain["parallelism"]["step_time_s"]
    stack = next(a for a in plain["assumptions"] if a["name"].startswith("software stack"))
    assert stack["value"] == "megatron-core-moe-2025" and stack["detail"]["cuda_graphs"] is False
    assert plain["stack"]["id"] == "megatron-core-moe-2025" and plain["stack"]["default"] is True


def test_cross_entropy_moves_40_bytes_per_logit_through_hbm():
    """Megatron-Core's fused cross-entropy, kernel by kernel: forward 6 + 8 + 4 + 8, backward 8 + 6
    bytes per logit. Two models that differ only in vocabulary (untied, so the output layer is a
    separate GEMM term): the element-wise time differs by m·s·ΔV·40 bytes at the streaming rate."""

    def elementwise_s(vocab: int) -> tuple[float, int]:
        out = estimate(
            {
                "model": {
                    "num_hidden_layers": 8,
                    "hidden_size": 2048,
                    "num_attention_heads": 16,
                    "intermediate_size": 8192,
                    "vocab_size": vocab,
                    "tie_word_embeddings": False,
                },
                "training": {"tokens": 1e10, "seq_len": 4096, "global_batch_tokens": 8 * 4096 * 4},
                "hardware": {"accelerator": "h100-sxm"},
                "cluster": {"cards": 8},
                "parallelism": {"tp": 1, "pp": 1, "dp": 8, "micro_batch_size": 1},
            }
        )["result"]["parallelism"]
        return out["compute_detail_s"]["elementwise"], out["micro_batches"]

    small, m = elementwise_s(32_000)
    large, _ = elementwise_s(232_000)
    hbm = H100.hbm_bandwidth_bytes_per_s * HBM_EFFICIENCY
    assert m == 4
    assert large - small == pytest.approx(m * 4096 * 200_000 * 40 / hbm, rel=1e-9)


def test_interleaved_pipeline_p2p_hides_behind_compute_with_overlap_p2p_comm():
    """Megatron-Core posts the interleaved schedule's sends/receives asynchronously
    (overlap_p2p_comm, on whenever virtual stages > 1): the p2p leaves the critical path. Without
    the overlap it is m·2·v messages of s·h 16-bit values over NVLink at LINK_EFFICIENCY."""
    from estimator.layout.steptime.constants import LINK_EFFICIENCY

    def parallelism(overlap: bool | None, v: int) -> dict:
        training = {"tokens": 1e10, "seq_len": 4096, "global_batch_tokens": 2 * 8 * 4096}
        if overlap is not None:
            training["stack_overrides"] = {"overlap_p2p_comm": overlap}
        return estimate(
            {
                "model": {"preset": "llama-3.1-8b"},
                "training": training,
                "hardware": {"accelerator": "h100-sxm"},
                "cluster": {"cards": 8},
                "parallelism": {"tp": 1, "pp": 4, "dp": 2, "virtual_stages": v, "micro_batch_size": 1},
            }
        )["result"]["parallelism"]

    off = parallelism(False, 2)
    on = parallelism(None, 2)
    one_chunk = parallelism(None, 1)
    m = off["micro_batches"]
    message = 4096 * 4096 * 2  # s·h 16-bit values, tp = 1
    link = H100.scaleup_bandwidth_bytes_per_s * LINK_EFFICIENCY  # stages 2 cards apart share the node
    assert m == 8
    assert off["breakdown_s"]["pp_comm"] == pytest.approx(m * 2 * 2 * message / link, rel=1e-9)
    assert on["breakdown_s"]["pp_comm"] == 0.0
    assert on["step_time_s"] < off["step_time_s"]
    # without interleaving Megatron batches the p2p and waits for it
    assert one_chunk["breakdown_s"]["pp_comm"] == pytest.approx(m * 2 * message / link, rel=1e-9)


def test_fp8_weight_cache_casts_the_weights_once_per_step():
    """Transformer Engine's FP8 weight caching (is_first_microbatch, which Megatron-Core passes):
    the weights are cast on the first of m micro-batches and reused. Llama 3.1 8B layer weights by
    hand: Q and O 4096², K and V 4096 x 1024, gated MLP 3 x 4096 x 14336 = 218,103,808. Without the
    cache every micro-batch casts them again: (m - 1) more casts of 6 bytes per element (delayed
    scaling: read 2, write 1 in both layouts) per layer."""

    def gemm_s(cache: bool) -> tuple[float, int]:
        out = estimate(
            {
                "model": {"preset": "llama-3.1-8b"},
                "training": {
                    "tokens": 1e10,
                    "seq_len": 4096,
                    "global_batch_tokens": 8 * 4096 * 4,
                    "precision": "fp8",
                    "stack_overrides": {"fp8_weight_cache": cache, "fp8_recipe": "delayed"},
                },
                "hardware": {"accelerator": "h100-sxm"},
                "cluster": {"cards": 8},
                "parallelism": {"tp": 1, "pp": 1, "dp": 8, "micro_batch_size": 1},
            }
        )["result"]["parallelism"]
        return out["compute_detail_s"]["gemm"], out["micro_batches"]

    cached, m = gemm_s(True)
    uncached, _ = gemm_s(False)
    weights = 2 * 4096 * 4096 + 2 * 4096 * 1024 + 3 * 4096 * 14336
    hbm = H100.hbm_bandwidth_bytes_per_s * HBM_EFFICIENCY
    assert m == 4 and weights == 218_103_808
    assert uncached - cached == pytest.approx(32 * (m - 1) * weights * 6 / hbm, rel=1e-9)


def test_recompute_modules_rerun_the_norm_and_the_expert_activation():
    """Megatron-Core recompute_modules ["layernorm", "moe_act"] (GPT-OSS's recipes): each MoE layer
    re-runs its pre-MLP norm (read 2h, write 2h bytes per token) and the routed experts' gated
    activation (read 2·k·f_e, write k·f_e 16-bit values) once more per micro-batch. Qwen3-30B-A3B by
    hand: 48 MoE layers, h 2048, k 8, f_e 768; PP1, 4 micro-batches of 4,096 tokens."""

    def elementwise_s(modules: list[str]) -> tuple[float, int]:
        out = estimate(
            {
                "model": {"preset": "qwen3-30b-a3b"},
                "training": {
                    "tokens": 1e10,
                    "seq_len": 4096,
                    "global_batch_tokens": 16 * 4096 * 4,
                    "stack_overrides": {"selective_recompute": modules},
                },
                "hardware": {"accelerator": "h100-sxm"},
                "cluster": {"cards": 16},
                "parallelism": {"tp": 1, "pp": 1, "ep": 16, "micro_batch_size": 1, "recompute": "selective"},
            }
        )["result"]["parallelism"]
        return out["compute_detail_s"]["elementwise"], out["micro_batches"]

    attention_only, m = elementwise_s(["core_attn"])
    with_modules, _ = elementwise_s(["core_attn", "layernorm", "moe_act"])
    hbm = H100.hbm_bandwidth_bytes_per_s * HBM_EFFICIENCY
    per_token = 4 * 2048 + 6 * 8 * 768
    assert m == 4
    assert with_modules - attention_only == pytest.approx(m * 48 * 4096 * per_token / hbm, rel=1e-9)


def test_recompute_module_overrides_are_checked():
    vendor = "nvidia"
    assert resolve_stack(None, vendor, {"selective_recompute": "attention"}).selective_recompute == (
        "core_attn",
    )
    assert resolve_stack(
        None, vendor, {"selective_recompute": ["layernorm", "moe_act"]}
    ).selective_recompute == (
        "layernorm",
        "moe_act",
    )
    for bad in (["mla_up_proj"], [], ["moe_act", "moe_act"], ["matmul-half", "layernorm"], 3):
        with pytest.raises(ScenarioError) as err:
            resolve_stack(None, vendor, {"selective_recompute": bad})
        assert [e.field for e in err.value.errors] == ["training.stack_overrides.selective_recompute"]


def test_fsdp_with_pipeline_parallelism_only_where_the_stack_does_it():
    """torchtitan runs FSDP (ZeRO-3) with pipeline parallelism; DeepSpeed and the Megatron-Core
    stacks do not shard gradients or weights under PP. A fixed FSDP + PP layout plans on the
    pytorch-fsdp2 stack and is refused on megatron-core-2025 with the reason named. Under PP the
    stage's weights stay gathered for the step (torch.distributed.pipelining reshards only after the
    last backward; torchtitan does not reshard after forward under PP): 2 B per stage parameter, not
    2 B / 4, and its unsharded fp32 gradients 4 B; the fp32 shards (4 + 12 B) / 4 as ZeRO-3."""

    def plan(stack: str) -> dict:
        return estimate(
            {
                "model": {"preset": "llama-3.1-8b"},
                "training": {
                    "tokens": 1e10,
                    "seq_len": 4096,
                    "global_batch_tokens": 4 * 8 * 4096,
                    "stack": stack,
                },
                "hardware": {"accelerator": "h100-sxm"},
                "cluster": {"cards": 8},
                "parallelism": {"tp": 1, "pp": 2, "dp": 4, "zero_stage": 3, "micro_batch_size": 1},
            }
        )["result"]

    fsdp = plan("pytorch-fsdp2")
    assert fsdp["parallelism"]["zero_stage"] == 3 and fsdp["parallelism"]["pp"] == 2
    weights = 2 * 4096 * 4096 + 2 * 4096 * 1024 + 3 * 4096 * 14336  # one layer, by hand
    stage = 16 * weights + 128256 * 4096  # 16 layers and one embedding (or head) matrix per stage
    assert fsdp["memory"]["per_card_bytes"]["weights"] == pytest.approx(2 * stage, rel=0.01)
    assert fsdp["memory"]["per_card_bytes"]["gradients"] == pytest.approx(4 * stage, rel=0.01)
    assert fsdp["memory"]["per_card_bytes"]["optimizer"] == pytest.approx(12 * stage / 4, rel=0.01)
    # nothing reached the memory check: the refusal names the rule, not HBM
    with pytest.raises(ScenarioError) as info:
        plan("megatron-core-2025")
    (error,) = info.value.errors
    assert error.code == "no-possible-layout" and error.field == "parallelism"
    assert "zero-stage-incompatible-with-pp" in error.params["reasons"]
    assert "ZeRO-2/3 does not combine with pipeline parallelism" in error.message
