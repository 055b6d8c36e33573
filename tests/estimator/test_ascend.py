"""Ascend mechanisms (estimator.layout.steptime.ascend): MC2's exposed share, MoE layers without MC2."""

from __future__ import annotations

import dataclasses

import pytest

from estimator.catalog import accelerator
from estimator.contract.resolve import resolve
from estimator.contract.scenario import validate_shape
from estimator.errors import ScenarioError
from estimator.layout.stacks import STACKS, resolve_stack
from estimator.layout.steptime.ascend import ASCEND_MC2_EXPOSED_FRACTION as F
from estimator.layout.steptime.ascend import (
    ASCEND_TRAINING_GEMM_FRACTION,
    ascend_score_dims,
    is_ascend,
    mc2_tp_exposed_s,
    mesh_links,
    mla_layout_bytes_per_head,
    mla_layout_s,
)
from estimator.layout.steptime.collectives import Fabric, group_bandwidth
from estimator.layout.steptime.constants import HBM_EFFICIENCY, LINK_EFFICIENCY
from estimator.layout.steptime.layer_comm import tp_collectives_s
from estimator.model.transformer import Architecture
from estimator.validation.ascend import calibrate_ascend
from estimator.validation.published_runs import (
    predicted_tokens_per_s_per_gpu,
    published_layout,
    published_runs,
    run_scenario,
)


def test_mc2_exposes_its_share_of_what_the_gemms_cover() -> None:
    # 4 ms attention + 6 ms MLP collectives under 20 ms of GEMMs, 30% stays exposed:
    # hidden = 10 x 0.7 = 7 ms, exposed = 3 ms
    exposed, hidden = mc2_tp_exposed_s(4e-3, 6e-3, 20e-3, moe_layer=False, mc2_fraction=0.3)
    assert float(exposed) == pytest.approx(3e-3)
    assert float(hidden) == pytest.approx(7e-3)


def test_mc2_cannot_hide_more_than_the_gemms_last() -> None:
    # 10 ms of collectives, 4 ms of GEMMs, nothing exposed of what they cover:
    # hidden = 4 ms, exposed = 10 - 4 = 6 ms
    exposed, hidden = mc2_tp_exposed_s(5e-3, 5e-3, 4e-3, moe_layer=False, mc2_fraction=0.0)
    assert float(exposed) == pytest.approx(6e-3)
    assert float(hidden) == pytest.approx(4e-3)


def test_moe_layer_dispatcher_collectives_are_not_fused() -> None:
    # MindSpeed: MoE models get no MC2; the attention's 4 ms still pipeline (half exposed),
    # the MoE MLP's 6 ms of all-gather / reduce-scatter are exposed in full: 2 + 6 = 8 ms
    exposed, hidden = mc2_tp_exposed_s(4e-3, 6e-3, 20e-3, moe_layer=True, mc2_fraction=0.5)
    assert float(exposed) == pytest.approx(8e-3)
    assert float(hidden) == pytest.approx(2e-3)


def test_total_is_conserved() -> None:
    exposed, hidden = mc2_tp_exposed_s(3e-3, 2e-3, 1e-3, moe_layer=False, mc2_fraction=0.85)
    assert float(exposed) + float(hidden) == pytest.approx(5e-3)


def test_ascend_families() -> None:
    assert is_ascend("ascend-910b") and is_ascend("ascend-910c")
    assert not is_ascend("hopper")


def test_ascend_constants_are_the_best_on_their_grid() -> None:
    """ASCEND_TRAINING_GEMM_FRACTION and ASCEND_MC2_EXPOSED_FRACTION are fitted once on the eight
    dense MindSpeed-LLM rows together: the calibration grid's steps around them do no better."""
    g = ASCEND_TRAINING_GEMM_FRACTION
    best_g, best_f, mae = calibrate_ascend([g - 0.01, g, g + 0.01], [F - 0.05, F, F + 0.05])
    assert (best_g, best_f) == (g, F)
    assert mae <= 10.0


def test_the_910b_gemm_rate_is_the_measured_mamf() -> None:
    # mamf-finder on an Ascend910B2C: 322.5 of 354 TFLOP/s BF16
    assert accelerator("ascend-910b2").matmul_efficiency == pytest.approx(322.5 / 354, abs=0.005)


@pytest.mark.parametrize(
    ("run_id", "band"),
    [
        ("llama3-70b-64x910b-8k-mindspeed", 10.0),  # no MC2 in its script: TP fully exposed
        ("llama31-70b-32x910b-8k-mindspeed", 15.0),
        ("llama2-34b-16x910b-4k-mindspeed", 10.0),
    ],
)
def test_dense_ascend_hold_outs(run_id: str, band: float) -> None:
    """Rows the Ascend constants were not fitted on (MindSpeed-LLM 1.0.RC3 README, their scripts)."""
    models, runs = published_runs()
    run = next(r for r in runs if r["id"] == run_id)
    assert "fit" not in run
    predicted = predicted_tokens_per_s_per_gpu(run_scenario(run, models))
    published = float(run["tokens_per_s_per_gpu"])
    assert abs(predicted - published) / published <= band / 100.0


def test_mla_value_padded_to_the_query_head_on_cann_fa() -> None:
    # DeepSeek-V2: d_qk = 128 + 64 = 192, d_v = 128; BNSD pads v to 192 (384 vs 320: 1.2x the FLOPs),
    # other layouts pad both to 256
    assert ascend_score_dims(192.0, 128.0) == (192.0, 192.0)
    assert ascend_score_dims(192.0, 128.0, "SBH") == (256.0, 256.0)
    assert ascend_score_dims(128.0, 128.0) == (128.0, 128.0)


def test_full_mesh_group_uses_its_own_links_only() -> None:
    # 910B HCCS: 7 links per NPU, 196 GB/s per direction in all: a TP-4 group reaches its 3 peers
    # over 3 links (84 GB/s), TP 8 over all 7, a point-to-point send over one (28 GB/s)
    mesh = Fabric(domain=8.0, bw_up=196e9, nic=25e9, cross=1.0, leaf_cards=64.0, eta=1.0, mesh_links=7.0)
    assert float(group_bandwidth(mesh, 4.0)) == pytest.approx(84e9)
    assert float(group_bandwidth(mesh, 8.0)) == pytest.approx(196e9)
    assert float(group_bandwidth(mesh, 2.0)) == pytest.approx(28e9)
    switched = dataclasses.replace(mesh, mesh_links=0.0)
    assert float(group_bandwidth(switched, 2.0)) == pytest.approx(196e9)


def test_only_the_910b_node_is_a_mesh() -> None:
    assert mesh_links("ascend-910b", 8.0) == 7.0
    assert mesh_links("ascend-910c", 384.0) == 0.0
    assert mesh_links("hopper", 8.0) == 0.0


def test_mesh_bandwidth_matches_the_measured_910b_all_gather() -> None:
    """limulidae (github.com/gameofdimension/limulidae) measures all-gather bus bandwidth on one 910B
    node: 64 GB/s over 4 NPUs, 149 GB/s over 8. The catalog's 196 GB/s per NPU over 7 links at the
    model's link efficiency gives 3/7 and 7/7 of 157 GB/s: 67 and 157, within 6%."""
    acc = accelerator("ascend-910b2")
    mesh = Fabric(
        domain=8.0,
        bw_up=acc.scaleup_bandwidth_bytes_per_s,
        nic=25e9,
        cross=1.0,
        leaf_cards=64.0,
        eta=LINK_EFFICIENCY,
        mesh_links=mesh_links(acc.chip_family, 8.0),
    )
    for peers, measured in ((4.0, 64e9), (8.0, 149e9)):
        assert float(group_bandwidth(mesh, peers)) * mesh.eta == pytest.approx(measured, rel=0.06)


def test_tp_collectives_on_the_mesh_follow_hccls_mesh_cost() -> None:
    """HCCL's Mesh algorithm, the intra-server algorithm of an Atlas A2 node (hicann/hccl
    docs/en/user_guide/coll_algo_intro/Mesh.md): AllGather alpha + n·beta/p, ReduceScatter alpha +
    n·beta/p + (p-1)/p·n·gamma, beta the time per byte of one link. On 910B the reduction is SDMA
    inline reduce (BF16 sum supported, device_capacity.cc IsSupportSDMAReduce), gamma = 0 beside
    the transfer. TP 8, 16,384 tokens x 4,096 x 2 B = 128 MiB per card: one all-gather +
    reduce-scatter pair is 2 x n/8 x beta = 2 x 16 MiB / (28 GB/s x 0.8) = 1.498 ms, plus the model's
    2 x 7 ring steps of 2 us: 1.526 ms."""
    mesh = Fabric(domain=8.0, bw_up=196e9, nic=25e9, cross=1.0, leaf_cards=64.0, eta=0.8, mesh_links=7.0)
    n = 16384 * 4096 * 2.0
    by_hand = 2.0 * (n / 8.0) / (28e9 * 0.8) + 2.0 * 7.0 * 2e-6
    assert float(tp_collectives_s(8.0, 16384.0, 4096.0, 1.0, mesh)) == pytest.approx(by_hand, rel=1e-9)
    assert by_hand == pytest.approx(1.526e-3, rel=1e-3)


def _mla_arch() -> Architecture:
    return Architecture(
        num_hidden_layers=2, hidden_size=5120, num_attention_heads=128, num_key_value_heads=128,
        head_dim=128, intermediate_size=12288, vocab_size=102400, q_lora_rank=1536, kv_lora_rank=512,
        qk_nope_head_dim=128, qk_rope_head_dim=64, v_head_dim=128,
    )  # fmt: skip


def test_mla_layout_copies_move_6400_bytes_per_head_and_token() -> None:
    # DeepSeek-V2 heads (d_n 128, d_r 64, d_v 128; d_q 192), elements: interleave + rope 4·64 = 256,
    # two concatenations 2·(128 + 64 + 192) = 768, rope key repeat 64, value pad 128 + 192 = 320,
    # three BNSD transposes 6·192 = 1152, output back 2·192 = 384 and sliced 2·128 = 256:
    # 3,200 elements = 6,400 bytes
    assert mla_layout_bytes_per_head(128.0, 64.0, 128.0) == pytest.approx(6400.0)


def test_mla_layout_time_counts_forward_and_backward_once_each() -> None:
    arch = _mla_arch()
    # 8,192 tokens x 128 heads (TP 1) x 6,400 B x (forward + backward) at 1e12 B/s = 13.42 ms
    t = mla_layout_s(arch, True, 8192.0, 1.0, 3.0, 1e12)
    assert float(t) == pytest.approx(8192 * 128 * 6400 * 2 / 1e12)
    assert float(mla_layout_s(arch, False, 8192.0, 1.0, 3.0, 1e12)) == 0.0


def _qwen2_1p5b_elementwise_s(overrides: dict[str, object]) -> float:
    """Element-wise seconds per step of the Qwen2 1.5B row (TP 1, PP 1) with stack overrides added."""
    models, runs = published_runs()
    run = dict(next(r for r in runs if r["id"] == "qwen2-1.5b-8x910b-4k-mindspeed"))
    run["stack_overrides"] = {**run.get("stack_overrides", {}), **overrides}
    shown = published_layout(resolve(validate_shape(run_scenario(run, models))))
    return float(shown.compute_detail_s["elementwise"])


def test_core06_cross_entropy_moves_twelve_more_bytes_per_logit() -> None:
    """Megatron-Core 0.6's vocab_parallel_cross_entropy on logits.float() (MindSpeed-LLM 1.0.RC3):
    row max (read 4) and the max subtracted out of place (read 4, write 4) beyond the fused kernels'
    40 bytes per logit, 52 in all. Qwen2 1.5B on 8 x 910B: 64 sequences of 4,096 over 8 data-parallel
    ranks in micro-batches of 2 = 4 micro-batches of 8,192 tokens, 151,936 logits per token (TP 1):
    4 x 8,192 x 151,936 x 12 bytes more per step at the 910B2's streaming rate."""
    assert STACKS["mindspeed-2025"].cross_entropy == "mcore06"
    extra_bytes = 4 * 8192 * 151936 * 12.0
    rate = accelerator("ascend-910b2").hbm_bandwidth_bytes_per_s * HBM_EFFICIENCY
    core06 = _qwen2_1p5b_elementwise_s({})
    fused = _qwen2_1p5b_elementwise_s({"cross_entropy": "fused"})
    assert core06 - fused == pytest.approx(extra_bytes / rate, rel=1e-6)


def test_only_the_mindspeed_profile_runs_the_core06_cross_entropy() -> None:
    assert not any(p.cross_entropy != "fused" for sid, p in STACKS.items() if sid != "mindspeed-2025")
    with pytest.raises(ScenarioError):
        resolve_stack("mindspeed-2025", "Huawei", {"cross_entropy": "unfused"})
