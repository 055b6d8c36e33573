"""The sequence-parallel backward re-gather of the column linears' inputs (steptime.layer_comm.sp_regather_s),
against a hand computation from the formula, one layer and micro-batch on one card."""

import dataclasses

import numpy as np
import pytest

from estimator import catalog
from estimator.layout.search import LayoutProblem
from estimator.layout.stacks import STACKS
from estimator.layout.steptime import Fabric
from estimator.layout.steptime.candidates import Candidates
from estimator.layout.steptime.layer_comm import sp_regather_s
from estimator.model.transformer import Architecture, param_counts

# Llama 2 7B's layer: h 4,096, 32 heads of 128 (MHA), SwiGLU FFN 11,008
ARCH = Architecture(
    num_hidden_layers=32, hidden_size=4096, num_attention_heads=32, num_key_value_heads=32,
    head_dim=128, intermediate_size=11008, vocab_size=32000, hidden_act="silu",
)  # fmt: skip
# TP 8 inside one node of 450 GB/s NVLink per card at 0.8 link efficiency
NVLINK = Fabric(domain=8.0, bw_up=450e9, nic=50e9, cross=1.0, leaf_cards=64.0, eta=0.8)
TOKENS = 4096.0  # one micro-batch of one 4K sequence

# By hand: each column linear (QKV, fc1) all-gathers its T x h 16-bit input over the 8 ranks,
# (8-1)/8 x 4,096 x 4,096 x 2 B = 29,360,128 B per card at 360 GB/s = 81.56 us, plus 7 ring steps
# of 2 us = 95.56 us; two per layer = 191.1 us.
ONE_GATHER_S = 7.0 / 8.0 * 4096 * 4096 * 2 / (450e9 * 0.8) + 7 * 2e-6
# The windows: one pass of each column linear's GEMM. Attention 4h^2 = 67.1M parameters (QKV 3h^2
# = 50.3M column), MLP 3·h·f = 135.3M (gate + up 2·h·f = 90.2M column): 202.4M. With 0.9 ms of linear
# GEMM time over 3 passes (forward + 2 backward) that is 0.3 ms x 50.3/202.4 = 74.6 us for QKV's
# dgrad and 0.3 ms x 90.2/202.4 = 133.7 us for fc1's.
T_GEMM = 0.9e-3
PARAMS = 4 * 4096**2 + 3 * 4096 * 11008
QKV_DGRAD_S = T_GEMM / 3 * 3 * 4096**2 / PARAMS
FC1_DGRAD_S = T_GEMM / 3 * 2 * 4096 * 11008 / PARAMS


def _problem(
    stack_id: str = "megatron-core-2025", arch: Architecture = ARCH, **changes: bool
) -> LayoutProblem:
    stack = dataclasses.replace(STACKS[stack_id], **changes)
    return LayoutProblem(
        arch=arch,
        counts=param_counts(arch),
        seq_len=4096,
        global_batch_tokens=4096 * 512,
        cards=64,
        accelerator=catalog.accelerator("h100-sxm"),
        stack=stack,
    )


def _layout(sp: bool, tp: float = 8.0) -> Candidates:
    layout = {"tp": tp, "pp": 1, "dp": 8, "ep": 1, "cp": 1, "mbs": 1, "v": 1, "m": 64, "sp": sp}
    return Candidates.from_mapping({**layout, "zero": 1, "rc": 0})


def test_the_hand_figures() -> None:
    gather, qkv, fc1 = ONE_GATHER_S, QKV_DGRAD_S, FC1_DGRAD_S
    assert gather == pytest.approx(95.56e-6, rel=1e-3)
    assert qkv == pytest.approx(74.6e-6, rel=1e-3)
    assert fc1 == pytest.approx(133.7e-6, rel=1e-3)


def test_without_tp_overlap_both_gathers_are_exposed() -> None:
    hide_att, hide_mlp, exposed = sp_regather_s(
        _problem(tp_comm_overlap=False), _layout(True), TOKENS, T_GEMM, NVLINK, moe=False, fp8=False
    )
    assert float(hide_att) == 0.0 and float(hide_mlp) == 0.0
    assert float(exposed) == pytest.approx(2 * ONE_GATHER_S, rel=1e-9)  # 191.1 us


def test_under_tp_overlap_each_hides_up_to_its_own_dgrad_gemm() -> None:
    hide_att, hide_mlp, exposed = sp_regather_s(
        _problem(), _layout(True), TOKENS, T_GEMM, NVLINK, moe=False, fp8=False
    )
    assert float(hide_att) == pytest.approx(QKV_DGRAD_S, rel=1e-9)  # 74.6 of 95.6 us hidden
    assert float(hide_mlp) == pytest.approx(ONE_GATHER_S, rel=1e-9)  # fits under fc1's 133.7 us
    assert float(exposed) == pytest.approx(ONE_GATHER_S - QKV_DGRAD_S, rel=1e-9)  # 21.0 us


def test_no_regather_without_sequence_parallelism_at_tp1_or_where_autograd_keeps_the_gathered_input() -> None:
    for problem, layout in (
        (_problem(), _layout(False)),  # Megatron-LM 2021: all-reduces, the full input is saved
        (_problem(), _layout(True, tp=1.0)),
        (_problem("pytorch-fsdp2"), _layout(True)),  # DTensor ColwiseParallel saves the gathered input
    ):
        parts = sp_regather_s(problem, layout, TOKENS, T_GEMM, NVLINK, moe=False, fp8=False)
        assert all(float(p) == 0.0 for p in parts)


def test_transformer_engine_1x_gathers_the_fp8_input_in_fp8() -> None:
    """TE 1.x LayerNormLinear writes ln_out as FP8 under an FP8 recipe and saves it for the backward
    gather (megatron-core-2024, sp_regather "gemm-input"): 7/8 x 4,096 x 4,096 x 1 B at 360 GB/s =
    40.78 us + 14 us of ring steps = 54.78 us per gather; the 2025 profiles keep 16-bit (95.56 us)."""
    one_fp8 = 7.0 / 8.0 * 4096 * 4096 * 1 / (450e9 * 0.8) + 7 * 2e-6
    assert one_fp8 == pytest.approx(54.78e-6, rel=1e-3)
    te1 = _problem("megatron-core-2024", tp_comm_overlap=False)
    *_, exposed = sp_regather_s(te1, _layout(True), TOKENS, T_GEMM, NVLINK, moe=False, fp8=True)
    assert float(exposed) == pytest.approx(2 * one_fp8, rel=1e-9)
    te2 = _problem(tp_comm_overlap=False)
    *_, exposed = sp_regather_s(te2, _layout(True), TOKENS, T_GEMM, NVLINK, moe=False, fp8=True)
    assert float(exposed) == pytest.approx(2 * ONE_GATHER_S, rel=1e-9)


def _moe_problem(shared: int) -> LayoutProblem:
    arch = dataclasses.replace(
        ARCH, num_experts=8, num_experts_per_tok=2, n_shared_experts=shared, moe_intermediate_size=2048
    )
    return _problem(arch=arch, tp_comm_overlap=False)


def test_a_moe_layer_regathers_for_its_shared_experts_only() -> None:
    """The routed experts take the dispatcher's gathered tokens (Megatron-Core explicit_expert_comm:
    their linears run with sequence_parallel False): only the attention's QKV gathers, 95.56 us;
    with a shared expert its fc1 gathers T x h too: 191.1 us (no TP overlap: all exposed)."""
    for shared, gathers in ((0, 1), (1, 2)):
        *_, exposed = sp_regather_s(
            _moe_problem(shared), _layout(True), TOKENS, T_GEMM, NVLINK, moe=True, fp8=False
        )
        assert float(exposed) == pytest.approx(gathers * ONE_GATHER_S, rel=1e-9)


def test_a_batch_gives_each_candidate_its_own_figures() -> None:
    """One call over (sp, tp 8), (no sp, tp 8), (sp, tp 1), (sp, tp 2): each row is what the layout
    alone gives (the shortcuts for batches where no candidate, or every one, re-gathers change no
    row): the hand figures for the first, zeros for the second and third; under TP overlap and
    without it. At TP 2 one gather is 1/2 x 4,096 x 4,096 x 2 B at 360 GB/s + 2 us = 48.6 us."""
    one_tp2 = 0.5 * 4096 * 4096 * 2 / (450e9 * 0.8) + 2e-6
    assert one_tp2 == pytest.approx(48.6e-6, rel=1e-3)
    rows = [(True, 8.0), (False, 8.0), (True, 1.0), (True, 2.0)]
    layout = {"pp": 1, "dp": 8, "ep": 1, "cp": 1, "mbs": 1, "v": 1, "m": 64, "zero": 1, "rc": 0}
    batch = Candidates.from_mapping({**layout, "sp": [sp for sp, _ in rows], "tp": [tp for _, tp in rows]})
    for overlap in (True, False):
        problem = _problem(tp_comm_overlap=overlap)
        got = sp_regather_s(problem, batch, TOKENS, T_GEMM, NVLINK, moe=False, fp8=False)
        for i, (sp, tp) in enumerate(rows):
            alone = sp_regather_s(problem, _layout(sp, tp), TOKENS, T_GEMM, NVLINK, moe=False, fp8=False)
            assert [float(np.broadcast_to(g, (4,))[i]) for g in got] == [float(a) for a in alone]
        exposed = np.broadcast_to(got[2], (4,))
        first = ONE_GATHER_S - QKV_DGRAD_S if overlap else 2 * ONE_GATHER_S
        assert exposed.tolist()[:3] == pytest.approx([first, 0.0, 0.0], rel=1e-9)
        assert exposed[3] == pytest.approx(0.0 if overlap else 2 * one_tp2, rel=1e-9, abs=1e-15)
