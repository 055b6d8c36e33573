"""MoE host-issue floor (estimator/layout/steptime/moe.host_issue_s, layer_comm.host_floor) and the stack
profiles' releases and release spread (estimator/layout/stacks.py, estimator/plan/evidence.py).
Expected values computed by hand or taken from Megatron-Bridge's published performance archive."""

from __future__ import annotations

import pytest

from estimator.contract.resolve import resolve
from estimator.contract.scenario import validate_shape
from estimator.layout.stacks import STACKS
from estimator.layout.steptime.constants import EXPERT_HOST_S, HOST_OP_S
from estimator.layout.steptime.moe import expert_launches, host_issue_s
from estimator.model.transformer import Architecture
from estimator.plan import evidence
from estimator.validation.published_runs import published_layout, published_runs, run_scenario


def _qwen3_30b_like() -> Architecture:
    return Architecture(
        num_hidden_layers=48,
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


def test_host_issue_time_by_hand():
    arch = _qwen3_30b_like()
    # EP8: 16 local experts, 2 GEMMs each, 3 passes (forward, data and weight gradient): 96 GEMMs
    assert float(expert_launches(arch, 8.0, 3.0)) == 96.0
    # 24 kernels per pass x 10 us x 3 passes = 0.72 ms, plus 96 x 85 us = 8.16 ms
    t = float(host_issue_s(arch, 8.0, 3.0, 85e-6))
    assert HOST_OP_S == 10e-6
    assert t == pytest.approx(0.72e-3 + 8.16e-3)
    # one grouped kernel: only the layer's kernels
    assert float(host_issue_s(arch, 8.0, 3.0, 0.0)) == pytest.approx(0.72e-3)


def _row(run_id: str, **overrides: object) -> tuple[float, int]:
    models, runs = published_runs()
    run = next(r for r in runs if r["id"] == run_id)
    scenario = run_scenario(run, models)
    scenario["training"]["stack_overrides"].update(overrides)
    shown = published_layout(resolve(validate_shape(scenario)))
    return shown.step_time_s, shown.micro_batches


def test_b200_micro_batch_1_row_waits_for_the_host_and_cuda_graphs_remove_it():
    # Qwen3-30B-A3B on 8 B200 at micro-batch 1 (Megatron-Bridge 26.02: 9,691 tokens/s per GPU, i.e.
    # 512 x 4096 / 8 / 9691 = 27.05 s per step, 27.05 / (64 x 48) = 8.8 ms per MoE layer and
    # micro-batch): every one of its 48 MoE layers lasts at least the host's issue time
    arch = _qwen3_30b_like()
    floor = float(host_issue_s(arch, 8.0, 3.0, EXPERT_HOST_S))
    step, m = _row("qwen3-30b-a3b-8xb200-mxfp8")
    assert m == 64
    assert step / (m * 48) >= floor
    graphs, _ = _row("qwen3-30b-a3b-8xb200-mxfp8", cuda_graphs=True)
    assert graphs / (m * 48) < floor  # graphs replay without the host: the floor goes


def test_every_profile_names_its_release():
    for profile in STACKS.values():
        assert profile.release, profile.id
        for family in ("hopper", "blackwell", "ascend-910b"):
            for workload in ("dense", "moe", "long-context"):
                low, high = profile.spread_for(family, workload)
                assert 0.0 < low <= 1.0 <= high


def test_megatron_bridge_moe_release_spread_is_the_published_one():
    # Qwen3-30B-A3B on 8 GB200 (MXFP8, micro-batch 4, EP8): 26,084 tokens/s per GPU in 26.02,
    # 23,766 in 25.11 and 40,706 in 26.06 (performance-summary-archive.md): 0.911 and 1.561
    core = STACKS["megatron-core-2025"]
    low, high = core.spread_for("blackwell", "moe")
    assert low == pytest.approx(0.911, abs=1e-3)
    assert high == pytest.approx(1.561, abs=1e-3)
    # Llama 3.1 405B on 256 GB200 (FP8): 793 in 26.02, 864 in 26.04.01
    assert core.spread_for("blackwell", "dense") == pytest.approx((1.0, 1.0895), abs=1e-3)
    # on H100 the same recipes' releases agree within 5%: GPT-OSS-120B 5,810-5,993 against 5,993
    # (0.969), Qwen3-235B-A22B 1,712 against 1,633 (1.048)
    assert core.spread_for("hopper", "moe") == pytest.approx((0.969, 1.048), abs=1e-3)
    # nothing known: no spread
    assert core.spread_for("ascend-910b", "moe") == (1.0, 1.0)
    assert STACKS["mindspeed-2025"].spread_for("ascend-910b", "moe") == (1.0, 1.0)


def test_release_spread_widens_only_beyond_the_band():
    band = evidence.Band("k", "k", 5, 5, 0.8, 1.2)
    wide = evidence.widen_for_release_spread(band, (0.911, 1.561))
    assert wide.p10_ratio == pytest.approx(0.8 * 0.911)
    assert wide.p90_ratio == pytest.approx(1.2 * 1.561)
    assert wide.widened_by == ("release-spread",)
    assert evidence.widen_for_release_spread(band, (1.0, 1.063)) is band


def test_ep64_all_to_all_stays_on_nvlink_inside_nvl72_and_crosses_nics_on_8_gpu_nodes():
    import math

    from estimator.layout.steptime import Fabric
    from estimator.layout.steptime.moe import all_to_all_s

    arch = Architecture(
        num_hidden_layers=1,
        hidden_size=2880,
        num_attention_heads=64,
        num_key_value_heads=8,
        head_dim=64,
        intermediate_size=1,
        vocab_size=1,
        num_experts=128,
        num_experts_per_tok=4,
        moe_intermediate_size=2880,
    )
    tokens, h = 16384.0, 2880.0
    nvl72 = Fabric(domain=72.0, bw_up=900e9, nic=50e9, cross=1.0, leaf_cards=math.inf, eta=1.0)
    t = float(all_to_all_s(tokens, 1.0, 1.0, 64.0, arch, 4.0, nvl72, False, None, False, 1.0))
    # all 64 ranks in the domain: 4·63/64 copies of h bf16 values over NVLink, 63 hops of 2 us
    assert t == pytest.approx(4 * (tokens * 4 * 63 / 64 * h * 2 / 900e9 + 63 * 2e-6))
    dgx = Fabric(domain=8.0, bw_up=900e9, nic=50e9, cross=1.0, leaf_cards=math.inf, eta=1.0)
    t8 = float(all_to_all_s(tokens, 1.0, 1.0, 64.0, arch, 4.0, dgx, False, None, False, 1.0))
    # 8 nodes: 4·56/64 = 3.5 copies leave the node over the 50 GB/s NIC (slower than NVLink's 4·7/64)
    assert t8 == pytest.approx(4 * (tokens * 3.5 * h * 2 / 50e9 + 7 * 2e-6 + 5e-6))
