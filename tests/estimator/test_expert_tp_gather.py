"""The expert-TP gather of Megatron-Core's alltoall token dispatcher (StackProfile.moe_expert_tp_gather,
steptime.moe.expert_tp_gather_s): each card gathers the k routed copies the all-to-all brought over the
expert-TP group and reduce-scatters the experts' output before the combine (main megatron/core/
transformer/moe/token_dispatcher.py:741-751 and :824-834), on the compute stream inside the MoE layer,
so exposed and priced in ep_comm, not in the TP term the TP overlap hides; against a hand computation,
one layer and micro-batch on one card."""

import dataclasses

import numpy as np
import pytest

from estimator import catalog
from estimator.layout.search import LayoutProblem
from estimator.layout.stacks import STACKS
from estimator.layout.steptime import Fabric, evaluate_step
from estimator.layout.steptime.candidates import Candidates
from estimator.layout.steptime.layer_comm import mlp_tp_collectives_s
from estimator.layout.steptime.moe import expert_tp_gather_s
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
# other 3 ranks' over 4: 3 x 8,192 x 2,048 x 2 B = 100,663,296 B for the 16-bit gather; the
# reduce-scatter in the fp32 router's dtype twice that, 201,326,592 B: 301,989,888 B per pair, at
# 360 GB/s 838.9 us, plus 2 x 3 ring steps of 2 us = 850.9 us. In 16 bit (core_r0.8.0) 201.3 MB:
# 559.2 us + 12 us = 571.2 us. A dense MLP's collective (T·etp/tp = 4,096 tokens): 25.2 MB, 69.9 us + 12 us.
GATHER_PAIR_S = 3 * 8 * 1024 * 2048 * (2 + 4) / BW + 2 * 3 * 2e-6
GATHER_PAIR_16BIT_S = 3 * 8 * 1024 * 2048 * (2 + 2) / BW + 2 * 3 * 2e-6
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


def test_the_gather_pair_by_hand():
    one = expert_tp_gather_s(T, 4.0, 4.0, QWEN3, 1.0, NVLINK, 1.0, 4.0)
    assert float(one) == pytest.approx(GATHER_PAIR_S, rel=1e-9)
    assert abs(GATHER_PAIR_S - 850.9e-6) < 0.1e-6
    sixteen = expert_tp_gather_s(T, 4.0, 4.0, QWEN3, 1.0, NVLINK, 1.0, 2.0)
    assert abs(float(sixteen) - 571.2e-6) < 0.1e-6
    # forward + backward pairs, and the busiest EP rank's 1.1x copies scale the bytes, not the latency
    two = expert_tp_gather_s(T, 4.0, 4.0, QWEN3, 2.0, NVLINK, 1.1, 4.0)
    assert float(two) == pytest.approx(2 * (1.1 * (GATHER_PAIR_S - 12e-6) + 12e-6), rel=1e-9)
    # across nodes (ETP 16 over 8-card domains): the NIC's 40 GB/s, 8 + 7 steps of latency per collective
    wide = expert_tp_gather_s(T * 4, 16.0, 16.0, QWEN3, 1.0, NVLINK, 1.0, 2.0)
    by_hand = 15 * 8 * 1024 * 2048 * 4 / 40e9 + 2 * (7 * 2e-6 + 1 * 5e-6)
    assert float(wide) == pytest.approx(by_hand, rel=1e-9)
    assert float(expert_tp_gather_s(T, 4.0, 1.0, QWEN3, 2.0, NVLINK, 1.0, 4.0)) == 0.0


def test_the_alltoall_dispatcher_leaves_only_the_shared_experts_in_the_tp_term():
    p = _problem("megatron-core-2025")
    assert float(mlp_tp_collectives_s(p, _layout(4, 4), T, 1.0, NVLINK, True)) == 0.0
    # with a shared expert (DeepSeek-V3's layout) the shared experts' T·h collective over TP 4:
    # 3/4 x 2 x 4,096 x 2,048 x 2 B = 25.2 MB, 69.9 us + 6 x 2 us
    shared = _problem("megatron-core-2025", dataclasses.replace(QWEN3, n_shared_experts=1))
    for etp in (4, 1):
        got = mlp_tp_collectives_s(shared, _layout(4, etp), T, 1.0, NVLINK, True)
        assert float(got) == pytest.approx(DENSE_PAIR_S, rel=1e-9)


def test_stacks_without_that_gather_keep_the_dense_collective():
    """The flex dispatcher (DeepEP over the tp x ep ranks), MindSpeed's and Megatron-Core 0.6's
    allgather dispatcher (moe_core06, the MindSpeed GPU-reference rows)."""
    for stack in ("megatron-core-moe-2025", "mindspeed-2025"):
        got = mlp_tp_collectives_s(_problem(stack), _layout(4, 4), T, 1.0, NVLINK, True)
        assert float(got) == pytest.approx(DENSE_PAIR_S, rel=1e-9), stack
    assert abs(DENSE_PAIR_S - 81.9e-6) < 0.1e-6
    core06 = _problem("megatron-core-2024", moe_core06=True)
    assert float(mlp_tp_collectives_s(core06, _layout(4, 4), T, 1.0, NVLINK, True)) == pytest.approx(
        DENSE_PAIR_S
    )
    assert STACKS["megatron-core-2024"].moe_expert_tp_combine_bytes == 2.0  # core_r0.8.0: no upcast
    assert STACKS["megatron-core-2025"].moe_expert_tp_combine_bytes == 4.0


def test_the_gather_is_exposed_in_ep_comm_despite_the_tp_overlap():
    """The whole step on 64 H100 (TP = ETP = 4, EP 8, 8 micro-batches of one 4K sequence, 48 layers,
    no pipeline): the stack with the gather against the same stack without it (the routed experts'
    collective then a dense MLP's in tp_comm, hidden behind the GEMMs by TE's TP overlap). ep_comm
    grows by 8 x 48 x 2 pairs x (T/tp = 1,024 tokens per card: GATHER_PAIR_S) = 0.653 s."""
    cand = _layout(4, 4)
    with_gather = evaluate_step(_problem("megatron-core-2025"), cand)
    without = evaluate_step(_problem("megatron-core-2025", moe_expert_tp_gather=False), cand)
    extra = float(np.asarray(with_gather["ep_comm"]).ravel()[0] - np.asarray(without["ep_comm"]).ravel()[0])
    assert extra == pytest.approx(8 * 48 * 2 * GATHER_PAIR_S, rel=1e-6)
    assert abs(extra - 0.6535) < 0.001
