"""The expert-TP gather of Megatron-Core's alltoall token dispatcher (StackProfile.moe_expert_tp_gather,
steptime.layer_comm.mlp_tp_collectives_s): each card gathers the k routed copies the all-to-all brought
over the expert-TP group and reduce-scatters them before the combine (main megatron/core/transformer/
moe/token_dispatcher.py:741-751 and :826-834), 2·(etp-1)·k·T/tp·h elements per card per forward,
against a hand computation, one layer and micro-batch on one card."""

import dataclasses

import pytest

from estimator import catalog
from estimator.layout.search import LayoutProblem
from estimator.layout.stacks import STACKS
from estimator.layout.steptime import Fabric
from estimator.layout.steptime.candidates import Candidates
from estimator.layout.steptime.layer_comm import mlp_tp_collectives_s
from estimator.model.transformer import Architecture, param_counts

# Qwen3-30B-A3B's MoE layer: h 2,048, 128 experts of 768, top-8, no shared experts
QWEN3 = Architecture(
    num_hidden_layers=48, hidden_size=2048, num_attention_heads=32, num_key_value_heads=4,
    head_dim=128, intermediate_size=6144, vocab_size=151936, num_experts=128,
    num_experts_per_tok=8, moe_intermediate_size=768,
)  # fmt: skip
NVLINK = Fabric(domain=8.0, bw_up=450e9, nic=50e9, cross=1.0, leaf_cards=64.0, eta=0.8)
T = 4096.0  # one micro-batch of one 4K sequence, per TP group
BW = 450e9 * 0.8  # B/s per card inside the node

# By hand, TP = ETP = 4: each card holds k·T/tp = 8 x 1,024 = 8,192 routed copies and gathers the
# other 3 ranks' over 4: 3 x 8,192 x 2,048 x 2 B = 100,663,296 B for the gather, the same for the
# reduce-scatter: 201.3 MB per forward (the collective pair of tp_collectives_s: 2·(g-1)/g x
# 32,768 tokens x h x 2 B), at 360 GB/s 559.2 us, plus 2 x 3 ring steps of 2 us = 571.2 us.
# Priced as a dense MLP's collective (T·etp/tp = 4,096 tokens): 25.2 MB, 69.9 us + 12 us.
GATHER_PAIR_S = 2 * 3 * 8 * 1024 * 2048 * 2 / BW + 2 * 3 * 2e-6
DENSE_PAIR_S = 2 * 3 * 1024 * 2048 * 2 / BW + 2 * 3 * 2e-6


def _problem(stack_id: str, arch: Architecture = QWEN3, **changes: bool) -> LayoutProblem:
    return LayoutProblem(
        arch=arch,
        counts=param_counts(arch),
        seq_len=4096,
        global_batch_tokens=4096 * 512,
        cards=64,
        accelerator=catalog.accelerator("h100-sxm"),
        stack=dataclasses.replace(STACKS[stack_id], **changes),
    )


def _layout(tp: float, etp: float) -> Candidates:
    layout = {"tp": tp, "pp": 1, "dp": 64 / tp, "ep": 8, "cp": 1, "mbs": 1, "v": 1, "m": 8, "sp": True}
    return Candidates.from_mapping({**layout, "etp": etp, "zero": 1, "rc": 0})


def test_the_alltoall_dispatcher_gathers_the_k_routed_copies_over_expert_tp():
    got = mlp_tp_collectives_s(_problem("megatron-core-2025"), _layout(4, 4), T, 1.0, NVLINK, True)
    assert float(got) == pytest.approx(GATHER_PAIR_S, rel=1e-9)
    assert abs(GATHER_PAIR_S - 571.2e-6) < 0.1e-6


def test_stacks_without_that_gather_keep_the_dense_collective():
    """The flex dispatcher (DeepEP over the tp x ep ranks) and MindSpeed's allgather dispatcher."""
    for stack in ("megatron-core-moe-2025", "mindspeed-2025"):
        got = mlp_tp_collectives_s(_problem(stack), _layout(4, 4), T, 1.0, NVLINK, True)
        assert float(got) == pytest.approx(DENSE_PAIR_S, rel=1e-9), stack
    assert abs(DENSE_PAIR_S - 81.9e-6) < 0.1e-6
    # megatron-core-2024 gathers (core_r0.8.0's alltoall dispatcher), not under Megatron-Core 0.6's
    # allgather dispatcher (moe_core06, the MindSpeed GPU-reference rows)
    core08 = mlp_tp_collectives_s(_problem("megatron-core-2024"), _layout(4, 4), T, 1.0, NVLINK, True)
    assert float(core08) == pytest.approx(GATHER_PAIR_S, rel=1e-9)
    core06 = _problem("megatron-core-2024", moe_core06=True)
    assert float(mlp_tp_collectives_s(core06, _layout(4, 4), T, 1.0, NVLINK, True)) == pytest.approx(
        DENSE_PAIR_S
    )


def test_expert_tp_1_gathers_nothing_and_shared_experts_add_their_tp_collective():
    p = _problem("megatron-core-2025")
    assert float(mlp_tp_collectives_s(p, _layout(4, 1), T, 1.0, NVLINK, True)) == 0.0
    # with a shared expert (DeepSeek-V3's layout) the routed gather is priced beside the shared
    # experts' T·h collective over TP 4: 3/4 x 2 x 4,096 x 2,048 x 2 B = 25.2 MB, 69.9 us + 6 x 2 us
    shared = _problem("megatron-core-2025", dataclasses.replace(QWEN3, n_shared_experts=1))
    got = mlp_tp_collectives_s(shared, _layout(4, 4), T, 1.0, NVLINK, True)
    assert float(got) == pytest.approx(GATHER_PAIR_S + DENSE_PAIR_S, rel=1e-9)
    only_shared = mlp_tp_collectives_s(shared, _layout(4, 1), T, 1.0, NVLINK, True)
    assert float(only_shared) == pytest.approx(DENSE_PAIR_S, rel=1e-9)
