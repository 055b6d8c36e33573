"""Context parallelism (estimator/layout/steptime/context_parallel.py) against hand computations:
ring and all-gather exchange with their overlap limits, causal load balance, kernel lengths,
partial-result merges; and the stack's choice of CP comm type."""

import numpy as np
import pytest

from estimator.errors import ScenarioError
from estimator.layout.stacks import STACKS, resolve_stack
from estimator.layout.steptime import Fabric
from estimator.layout.steptime import context_parallel as cpx
from estimator.layout.steptime.constants import ALPHA_NIC_S, ALPHA_SCALEUP_S
from estimator.plan.compose import estimate
from estimator.validation.published_runs import published_runs

MODELS, _ = published_runs()

# 1 GB/s links, efficiency 1, 8 cards per domain: transfer times are bytes / 1e9
FAB = Fabric(domain=8.0, bw_up=1e9, nic=1e8, cross=1.0, leaf_cards=64.0, eta=1.0)


def _shape(cp: float, t_fwd: float, t_bwd: float, tp: float = 1.0, ring: float | None = None) -> cpx.CpShape:
    # 1,000 tokens x 1,000 K/V elements = 1e6 elements per chunk; 2 MB in 16 bit
    return cpx.CpShape(
        cp=np.array(cp),
        tp=np.array(tp),
        tokens=np.array(1000.0),
        kv_elems=1000.0,
        q_elems=4000.0,
        t_fwd=np.array(t_fwd),
        t_bwd=np.array(t_bwd),
        ring=np.array(cp if ring is None else ring),
    )


def test_load_balance_factor_zigzag_and_sequential():
    # sequential chunks: the last of 8 ranks computes 7.5 chunk blocks against a mean of 4
    assert float(cpx.load_balance_factor(8, balanced=False)) == pytest.approx(15 / 8)
    assert float(cpx.load_balance_factor(2, balanced=False)) == pytest.approx(1.5)
    assert float(cpx.load_balance_factor(8, balanced=True)) == 1.0


def test_kernel_lengths_of_a_balanced_ring():
    """256K tokens on CP8: the first step over the rank's 32K keys (1/8 of its work), the seven
    later steps over 16K half chunks; without balance every step over 32K."""
    (w0, l0, c0), (w1, l1, c1) = cpx.kernel_lengths(262144.0, np.array(8.0), balanced=True)
    assert (float(w0), float(l0), float(w1), float(l1)) == (0.125, 32768.0, 0.875, 16384.0)
    assert (c0, c1) == (True, False)  # the later steps' key chunks lie wholly before the queries
    (_, l0, _), (_, l1, _) = cpx.kernel_lengths(262144.0, np.array(8.0), balanced=False)
    assert float(l1) == 32768.0
    (w0, l0, _), (w1, _, _) = cpx.kernel_lengths(8192.0, np.array(1.0), balanced=True)
    assert (float(w0), float(l0), float(w1)) == (1.0, 8192.0, 0.0)


def test_non_causal_calls_lose_less_at_short_lengths_fa3_paper_sweeps():
    """FA3 paper, H100 SXM5, head dimension 128, forward: FA2 non-causal 309 TFLOP/s at 512 tokens
    against 370 at 16K (0.84); causal 191 against 335 (0.57). The model's ratios within 5 points."""
    from estimator.layout.steptime import attention as att

    def ratio(causal: bool) -> float:
        short = att.kernel_efficiency("fa2", "hopper", 512.0, 128.0, 0.7, causal)
        long = att.kernel_efficiency("fa2", "hopper", 16384.0, 128.0, 0.7, causal)
        return float(short / long)

    assert ratio(False) == pytest.approx(309 / 370, abs=0.05)
    assert ratio(True) == pytest.approx(191 / 335, abs=0.05)


def test_p2p_ring_exposes_only_what_a_step_cannot_hide():
    x = 2e6 / 1e9 + ALPHA_SCALEUP_S  # one K/V chunk, 16 bit; dKV the same in TE ("fused")
    # no compute: forward 3 transfers, backward 3 x (K/V + dKV) and the last dKV, all exposed
    raw, exposed = cpx.exchange_s(_shape(4, 0.0, 0.0), FAB, "p2p", "fused", 1.0)
    assert float(raw) == pytest.approx(3 * x + 6 * x + x)
    assert float(exposed) == float(raw)
    # each step computes 1 s: only the last dKV transfer stays exposed
    raw, exposed = cpx.exchange_s(_shape(4, 4.0, 10.0), FAB, "p2p", "fused", 1.0)
    assert float(exposed) == pytest.approx(x)
    # a recomputed forward repeats the forward ring
    raw2, _ = cpx.exchange_s(_shape(4, 4.0, 10.0), FAB, "p2p", "fused", 2.0)
    assert float(raw2 - raw) == pytest.approx(3 * x)


def test_allgather_hides_behind_the_first_step_only():
    x = 2e6 / 1e9 + ALPHA_SCALEUP_S
    x_d = 4e6 / 1e9 + ALPHA_SCALEUP_S  # torch rotates dKV in fp32
    step_f = 4 * x / 4  # first step's compute = 4x / 4 ranks = x: hides one of the 3 gathered chunks
    raw, exposed = cpx.exchange_s(_shape(4, 4 * x, 0.0), FAB, "allgather", "eager-fp32", 1.0)
    # 4 dKV sends (torch sends one after every step and waits for the last)
    assert float(raw) == pytest.approx(3 * x + 3 * x + 4 * x_d)
    assert float(exposed) == pytest.approx((3 * x - step_f) + 3 * x + 3 * x_d + x_d)


def test_traced_ring_waits_for_every_transfer():
    """cp_overlap False (torch.compile traces the ring; each collective's wait_tensor follows it):
    the whole exchange is exposed however long the steps compute. CP4, 2 MB K/V chunks and 4 MB
    fp32 dKV chunks at 1 GB/s: forward gather 3x, backward gather 3x and 4 dKV sends."""
    x = 2e6 / 1e9 + ALPHA_SCALEUP_S
    x_d = 4e6 / 1e9 + ALPHA_SCALEUP_S
    shape = _shape(4, 100.0, 250.0)
    raw, exposed = cpx.exchange_s(shape, FAB, "allgather", "eager-fp32", 2.0, overlap=False)
    assert float(exposed) == float(raw) == pytest.approx(2 * 3 * x + 3 * x + 4 * x_d)
    _, hidden_ring = cpx.exchange_s(shape, FAB, "allgather", "eager-fp32", 2.0)
    assert float(hidden_ring) == pytest.approx(x_d)  # overlapped: only the last dKV send waits
    assert STACKS["pytorch-fsdp2"].cp_overlap is False  # torchtitan compiles every block
    assert STACKS["megatron-core-2025"].cp_overlap is True  # TE's ring runs on side streams


def test_ring_over_the_nic_when_tp_times_cp_leaves_the_domain():
    x = 2e6 / 1e8 + ALPHA_NIC_S
    _, exposed = cpx.exchange_s(_shape(4, 0.0, 0.0, tp=4.0), FAB, "p2p", "fused", 1.0)
    assert float(exposed) == pytest.approx(10 * x)


def test_a2a_moves_q_k_v_and_output_and_is_exposed():
    # (g-1)/g of (2 x 4,000 + 1,000) elements per token, 16 bit, 4 all-to-alls of 3 peers' latency
    one = 0.75 * 1000 * 9000 * 2 / 1e9 + 4 * 3 * ALPHA_SCALEUP_S
    raw, exposed = cpx.exchange_s(_shape(4, 100.0, 100.0, ring=1.0), FAB, "a2a", "fused", 1.0)
    assert float(raw) == pytest.approx(2 * one)
    assert float(exposed) == float(raw)


def test_hierarchical_cp_rings_over_the_domains():
    # TP 2, CP 16 on 8-card domains: a2a over 4 ranks inside the domain, a ring of 4 across
    assert float(cpx.ring_size(16, "a2a+p2p", 8.0, 2)) == 4.0
    assert float(cpx.ring_size(16, "p2p", 8.0, 2)) == 16.0
    assert float(cpx.ring_size(16, "a2a", 8.0, 2)) == 1.0


def test_merge_bytes_by_hand():
    # eager fp32 (torch): 3 later steps x (forward 38 B x 4e6 query + 4 B x 1e6 K/V elements,
    # backward 18 B x 4e6 + 30 B x 1e6) at 1e12 B/s
    t = cpx.merge_s(_shape(4, 1.0, 1.0), "eager-fp32", 1.0, 1e12)
    assert float(t) == pytest.approx(3 * (38 * 4e6 + 4 * 1e6 + 18 * 4e6 + 30 * 1e6) / 1e12)
    assert float(cpx.merge_s(_shape(4, 1.0, 1.0, ring=1.0), "eager-fp32", 1.0, 1e12)) == 0.0


def test_stacks_choose_the_cp_comm_type_and_scenarios_override_it():
    assert STACKS["pytorch-fsdp2"].cp_comm_type == "allgather"  # torch's default rotate method
    assert STACKS["megatron-core-2025"].cp_comm_type == "p2p"  # Megatron-Core's cp_comm_type default
    assert resolve_stack("megatron-core-2025", "NVIDIA", {"cp_comm_type": "a2a"}).cp_comm_type == "a2a"
    with pytest.raises(ScenarioError) as err:
        resolve_stack("megatron-core-2025", "NVIDIA", {"cp_comm_type": "ring"})
    assert "training.stack_overrides.cp_comm_type" in str(err.value.errors[0].field)
    # torch's context_parallel rotates by all-gather or all-to-all (p2p), it has no Ulysses a2a
    assert resolve_stack("pytorch-fsdp2", "NVIDIA", {"cp_comm_type": "p2p"}).cp_comm_type == "p2p"
    with pytest.raises(ScenarioError) as err:
        resolve_stack("pytorch-fsdp2", "NVIDIA", {"cp_comm_type": "a2a"})
    assert "offers allgather, p2p" in str(err.value.errors[0].message)
    assert STACKS["megatron-deepspeed"].cp_comm_type == "a2a"  # DeepSpeed-Ulysses


def _cp_breakdown(seq_len: int, cp: int, tp: int, cards: int, **overrides: object) -> dict:
    training = {"tokens": 1e10, "seq_len": seq_len, "global_batch_tokens": seq_len * cards // (cp * tp)}
    training["stack"] = "megatron-core-2025"
    training["stack_overrides"] = dict(overrides)
    return estimate(
        {
            "model": dict(MODELS["llama-2-7b"]),  # 32 K/V heads
            "training": training,
            "hardware": {"accelerator": "h100-sxm"},
            "cluster": {"cards": cards},
            "parallelism": {"tp": tp, "cp": cp, "pp": 1, "dp": cards // (cp * tp), "micro_batch_size": 1},
        }
    )["result"]["parallelism"]


def test_short_chunks_across_nodes_expose_the_ring_and_unbalanced_chunks_cost_more():
    """Llama 2 7B (32 K/V heads) on CP16 x TP2 across nodes: a step's transfer grows with the chunk
    (s/cp tokens) and its attention compute with the chunk squared. At 128K an 8K-token chunk's K/V
    (67 MB over a 40 GB/s NIC share: 1.7 ms) outlasts its step (about 1 ms of FA3): the ring is
    exposed; at 512K (4x the transfer, 16x the compute) only the last dKV transfer remains."""
    short = _cp_breakdown(131072, 16, 2, 32)
    long = _cp_breakdown(524288, 16, 2, 32)
    assert short["breakdown_s"]["cp_comm"] > 0.3 * short["step_time_s"]
    assert long["breakdown_s"]["cp_comm"] < 0.03 * long["step_time_s"]
    seq = _cp_breakdown(131072, 8, 1, 8, cp_load_balance=False)
    zig = _cp_breakdown(131072, 8, 1, 8)
    ratio = seq["compute_detail_s"]["attention"] / zig["compute_detail_s"]["attention"]
    assert 1.7 < ratio < 15 / 8 + 0.05  # (2cp-1)/cp, less the merges both pay


def test_hierarchical_exchange_a2a_inside_then_a_shorter_ring():
    """CP16 on TP2 with 8-card domains: a2a over the g = 4 ranks of a domain on the scale-up link
    (once per forward and once in the backward), then a ring of 4 across domains on the NIC whose
    chunk carries the same K/V bytes."""
    shape = _shape(16, 0.0, 0.0, tp=2.0, ring=4.0)
    x = 2e6 / 1e8 + ALPHA_NIC_S  # tp·cp = 32 leaves the domain: the ring on the NIC
    a2a = 0.75 * 1000 * 9000 * 2 / 1e9 + 4 * 3 * ALPHA_SCALEUP_S
    raw, exposed = cpx.exchange_s(shape, FAB, "a2a+p2p", "fused", 1.0)
    assert float(raw) == pytest.approx(3 * x + a2a + 7 * x + a2a)
    assert float(exposed) == float(raw)


def test_blackwell_fused_attention_from_the_fa4_paper():
    """cuDNN 9.13 forward on B200 = 1,605 / 1.3 TFLOP/s of 2.25 PF (FA4 paper), backward at Hopper's
    backward/forward ratio 0.55/0.75, combined forward : backward = 1 : 2.5."""
    from estimator.layout.steptime import attention as att

    fwd = 1605e12 / 1.3 / 2.25e15
    bwd = fwd * 0.55 / 0.75
    combined = 3.5 / (1 / fwd + 2.5 / bwd)
    long = att.kernel_efficiency("fa3", "blackwell", 1e9, 128.0, 0.7)
    assert float(long) == pytest.approx(combined, abs=0.01)


def test_stack_choices_match_the_mechanism_module():
    from estimator.layout.stack_profile import _CHOICES

    assert _CHOICES["cp_comm_type"] == cpx.CP_COMM_TYPES
    assert _CHOICES["cp_merge"] == cpx.CP_MERGES
    assert all(set(p.cp_comm_types) <= set(cpx.CP_COMM_TYPES) for p in STACKS.values())
    assert all(p.cp_comm_type in p.cp_comm_types for p in STACKS.values())


def test_torchtitan_cp8_exchange_exposed_whole_by_hand():
    """Llama 3.1 8B at 256K on 8 H100 (torchtitan: CP8, full AC, K/V repeated to 32 heads): per layer
    a 32K-token chunk of K and V is 32,768 x 32 x 128 x 2 x 2 B = 537 MB (x at 450 GB/s x 0.8), its
    fp32 gradient twice that (x_d). Forward gather 7x, twice (recomputed forward); backward gather
    7x and 8 dKV sends: 21x + 8x_d per layer, all exposed under torch.compile; 32 layers."""
    chunk = 32768 * 32 * 128 * 2
    bw = 450e9 * 0.8
    x, x_d = chunk * 2 / bw + ALPHA_SCALEUP_S, chunk * 4 / bw + ALPHA_SCALEUP_S
    layout = {"tp": 1, "cp": 8, "pp": 1, "dp": 1, "micro_batch_size": 1, "zero_stage": 3, "recompute": "full"}

    def cp_comm(**overrides: object) -> float:
        training = {"tokens": 1e10, "seq_len": 262144, "global_batch_tokens": 262144, "precision": "fp8"}
        training["stack"] = "pytorch-fsdp2"
        training["stack_overrides"] = dict(overrides)
        scenario = {
            "model": dict(MODELS["llama-3-8b"]),
            "training": training,
            "hardware": {"accelerator": "h100-sxm-96gb-500w"},
            "cluster": {"cards": 8},
            "parallelism": layout,
        }
        return float(estimate(scenario)["result"]["parallelism"]["breakdown_s"]["cp_comm"])

    assert cp_comm() == pytest.approx(32 * (21 * x + 8 * x_d), rel=0.01)
    # eager torch (no compile): only the last dKV send of each layer waits
    assert cp_comm(cp_overlap=True) == pytest.approx(32 * x_d, rel=0.01)


def test_known_gap_is_the_compiled_ring_inside_the_domain_from_cp4():
    gap = cpx.KNOWN_GAP_ID
    # torchtitan (cp_overlap false, all-gather) on one 8-card node: CP2 is outside, CP4 and CP8 inside
    assert cpx.known_gap(False, "allgather", 2, 1, 8.0) == ""
    assert cpx.known_gap(False, "allgather", 4, 1, 8.0) == gap
    assert cpx.known_gap(False, "p2p", 8, 1, 8.0) == gap
    # the 405B rows: TP8 x CP8 = 64 cards leave the 8-card domain, the ring crosses the NIC
    assert cpx.known_gap(False, "allgather", 8, 8, 8.0) == ""
    # an overlapped ring (Megatron-Core / TE) and Ulysses a2a are not in it
    assert cpx.known_gap(True, "p2p", 8, 1, 8.0) == ""
    assert cpx.known_gap(False, "a2a", 8, 1, 8.0) == ""


def test_a_plan_like_the_torchtitan_8b_cp8_row_holds_it_in_its_band():
    from estimator.validation.published_runs import predicted_tokens_per_s_per_gpu, run_scenario

    _, runs = published_runs()
    run = next(x for x in runs if x["id"] == "llama31-8b-8xh100-torchtitan-cp8-256k-fp8")
    scenario = run_scenario(run, MODELS)
    band = estimate(scenario)["result"]["uncertainty"]["mfu_band"]
    assert "known-gap" in band["widened_by"]
    # published 548 tokens/s per GPU (torchtitan table 2) over the engine's prediction: inside the band
    ratio = 548.0 / predicted_tokens_per_s_per_gpu(scenario)
    assert band["p10_ratio"] <= ratio + 1e-4 and ratio < 0.75
