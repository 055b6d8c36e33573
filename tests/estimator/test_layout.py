"""estimator.layout.search / steptime / layout_enum: hand-computed step times, search rules, vectorization."""

import dataclasses
import itertools
import math

import numpy as np
import pytest

from estimator.catalog.entries import Accelerator
from estimator.errors import ScenarioError
from estimator.layout.enumeration import REASONS, enumerate_candidates, structural_failures
from estimator.layout.evaluation import evaluate
from estimator.layout.search import BREAKDOWN_KEYS, LayoutProblem, evaluate_layout, search
from estimator.layout.stacks import STACKS
from estimator.layout.steptime import ALPHA_NIC_S, ALPHA_SCALEUP_S, Fabric, hierarchical_allreduce_s
from estimator.model.transformer import Architecture, param_counts

ACC = Accelerator(
    id="test-gpu",
    name="Test GPU",
    vendor="test",
    peak_flops_bf16=100e12,
    peak_flops_fp8=None,
    peak_flops_fp32=None,
    hbm_bytes=80e9,
    hbm_bandwidth_bytes_per_s=2e12,
    scaleup_link="NVLink",
    scaleup_bandwidth_bytes_per_s=100e9,
    scaleup_domain_cards=8,
    tdp_w=400,
    price_usd=1,
    cloud_price_usd_per_card_hour=1,
    cloud_reserved_usd_per_card_hour=1,
    matmul_efficiency=1.0,
    default_server="none",
    chip_family="hopper",
)
# infinitely fast HBM: element-wise kernels and the optimizer take no time (for hand computations)
IDEAL = dataclasses.replace(ACC, hbm_bandwidth_bytes_per_s=1e30)
# Megatron-LM 2021 (unfused attention at GEMM speed, nothing overlapped) with CUDA graphs, so that no
# per-kernel launch gap enters the hand computations
HAND = dataclasses.replace(STACKS["megatron-lm-2021"], cuda_graphs=True)


def gpt(layers=2, hidden=1024, heads=8, vocab=1024):
    return Architecture(
        num_hidden_layers=layers,
        hidden_size=hidden,
        num_attention_heads=heads,
        num_key_value_heads=heads,
        head_dim=hidden // heads,
        intermediate_size=4 * hidden,
        vocab_size=vocab,
        tie_word_embeddings=True,
        hidden_act="gelu",
    )


def problem(arch=None, acc=ACC, **kw):
    arch = arch or gpt()
    base = {
        "arch": arch,
        "counts": param_counts(arch),
        "seq_len": 1024,
        "global_batch_tokens": 1024,
        "cards": 2,
        "accelerator": acc,
        "link_efficiency": 1.0,
        "gemm_fraction": 1.0,
        "stack": HAND,
    }
    base.update(kw)
    return LayoutProblem(**base)


def test_tiny_layout_step_time_by_hand():
    h, s, V = 1024, 1024, 1024
    p = problem(acc=IDEAL)
    e = evaluate_layout(p, tp=2, pp=1, micro_batch_size=1, recompute="none")
    layer_fwd_per_token = 24 * h * h + 4 * s * h  # 2·12h² matmul + 4·s·h attention scores
    compute = s / 2 * (2 * layer_fwd_per_token * 3 + 2 * V * h * 3) / 100e12
    tp_comm = 2 * 4 * (2 * (2 - 1) / 2 * (s * h * 2) / 100e9 + 2 * (2 - 1) * ALPHA_SCALEUP_S)
    assert e.breakdown_s["compute"] == pytest.approx(compute, rel=1e-9)
    assert e.breakdown_s["tp_comm"] == pytest.approx(tp_comm, rel=1e-9)
    assert e.breakdown_s["dp_comm"] == 0 and e.breakdown_s["bubble"] == 0 and e.breakdown_s["pp_comm"] == 0
    assert e.step_time_s == pytest.approx(compute + tp_comm, rel=1e-9)
    assert e.dp == 1 and e.micro_batches == 1
    # without recomputation the hardware executes the model's FLOPs: HFU = MFU
    assert e.predicted_hfu == pytest.approx(e.predicted_mfu, rel=1e-12)


def test_hfu_adds_the_recomputed_forward_to_mfu():
    """Korthikanti et al. 2022 sec. 6: HFU = (model FLOPs + recomputed FLOPs) / (time x peak)."""
    h, s = 1024, 1024
    p = problem(acc=IDEAL)
    full = evaluate_layout(p, tp=2, recompute="full")
    # one sequence of s tokens split over tp = 2 cards; each of the 2 layers repeats its forward:
    # linears 2 x 12h^2 and the unfused attention scores and context 4·s·h per token
    recomputed = s / 2 * 2 * (24 * h * h + 4 * s * h)
    assert full.predicted_hfu - full.predicted_mfu == pytest.approx(
        recomputed / (full.step_time_s * 100e12), rel=1e-9
    )
    assert full.predicted_hfu > full.predicted_mfu


def test_full_recompute_adds_one_forward():
    p = problem(acc=IDEAL)
    none = evaluate_layout(p, tp=2, recompute="none")
    full = evaluate_layout(p, tp=2, recompute="full")
    h, s = 1024, 1024
    layer = 2 * (24 * h * h + 4 * s * h)
    assert full.breakdown_s["compute"] - none.breakdown_s["compute"] == pytest.approx(s / 2 * layer / 100e12)
    assert full.breakdown_s["tp_comm"] == pytest.approx(none.breakdown_s["tp_comm"] * 6 / 4)


def test_bubble_fraction_1f1b_p4_m16():
    p = problem(arch=gpt(layers=8), acc=IDEAL, cards=4, global_batch_tokens=16 * 1024)
    e = evaluate_layout(p, tp=1, pp=4, micro_batch_size=1)
    assert e.micro_batches == 16
    assert e.bubble_fraction == pytest.approx(3 / 19, rel=1e-9)


def test_interleaved_bubble_is_p_minus_1_over_v_m_of_ideal():
    p = problem(arch=gpt(layers=8), acc=IDEAL, cards=4, global_batch_tokens=16 * 1024)
    e = evaluate_layout(p, tp=1, pp=4, micro_batch_size=1, virtual_stages=2)
    ideal = e.step_time_s - e.breakdown_s["bubble"]
    assert e.breakdown_s["bubble"] / ideal == pytest.approx(3 / (2 * 16), rel=1e-9)


def test_ring_allreduce_bytes():
    links = Fabric(domain=8.0, bw_up=100e9, nic=25e9, cross=1.0, leaf_cards=math.inf, eta=1.0)
    # 8 cards in one domain: 2(n-1)/n of the message over the scale-up links
    t = hierarchical_allreduce_s(1e9, 8, 1, links)
    assert t == pytest.approx(2 * 7 / 8 * 1e9 / 100e9)
    # 32 cards, 8 per domain: 2·7/8 inside, then the 1/8 shard 2·3/4 over the NIC
    t = hierarchical_allreduce_s(1e9, 32, 1, links)
    assert t == pytest.approx(2 * 7 / 8 * 1e9 / 100e9 + 2 * 3 / 4 * 1e9 / 8 / 25e9)
    # stride 8 (TP fills the node): everything crosses the NIC
    t = hierarchical_allreduce_s(1e9, 4, 8, links)
    assert t == pytest.approx(2 * 3 / 4 * 1e9 / 25e9)
    # 2 leaf groups with a 4x slower cross-leaf tier
    links2 = dataclasses.replace(links, cross=4.0, leaf_cards=16.0)
    t = hierarchical_allreduce_s(1e9, 4, 8, links2)
    assert t == pytest.approx(2 * 1 / 2 * 1e9 / 25e9 + 2 * 1 / 2 * 0.5e9 * 4 / 25e9)


def test_dp_allreduce_over_nic_without_overlap():
    p = problem(
        acc=IDEAL,
        cards=16,
        global_batch_tokens=2 * 1024,
        grad_dtype="bf16",
        nic_bytes_per_s_per_card=25e9,
    )
    e = evaluate_layout(p, tp=8, pp=1, micro_batch_size=1, zero_stage=0)
    c = p.counts
    # TP splits the matrices; each TP rank also holds (and DP-reduces) the 2 layers' norm weights, 2h each
    params = (2 * (c.attention_per_layer + c.dense_mlp_per_layer) + c.embedding) / 8 + 2 * 2 * 1024
    expected = 2 * 1 / 2 * params * 2 / 25e9 + math.ceil(params / 40e6) * 2 * math.log2(2) * ALPHA_NIC_S
    assert e.dp == 2
    assert e.breakdown_s["dp_comm"] == pytest.approx(expected, rel=1e-9)


def test_breakdown_sums_to_step_time_and_contract_keys():
    e = search(problem(arch=gpt(layers=8), cards=8, global_batch_tokens=64 * 1024)).best
    assert sum(e.breakdown_s.values()) == pytest.approx(e.step_time_s, rel=1e-9)
    d = e.to_dict()
    for key in (
        "tp",
        "pp",
        "dp",
        "ep",
        "cp",
        "zero_stage",
        "recompute",
        "micro_batch_size",
        "micro_batches",
        "virtual_stages",
        "sequence_parallel",
        "bubble_fraction",
        "step_time_s",
        "breakdown_s",
        "predicted_mfu",
        "predicted_hfu",
        "tokens_per_s",
    ):
        assert key in d
    assert set(d["breakdown_s"]) >= {
        "compute",
        "bubble",
        "tp_comm",
        "pp_comm",
        "dp_comm",
        "ep_comm",
        "optimizer",
    }
    assert set(BREAKDOWN_KEYS) == set(d["breakdown_s"])
    m = e.memory_dict()
    assert set(m) == {"per_card_bytes", "hbm_bytes", "fits"}
    assert set(m["per_card_bytes"]) == {"weights", "gradients", "optimizer", "activations", "other", "total"}
    assert m["fits"] is True and m["per_card_bytes"]["total"] <= m["hbm_bytes"]


def test_search_respects_fixed_fields():
    r = search(
        problem(
            arch=gpt(layers=8),
            cards=8,
            global_batch_tokens=64 * 1024,
            fixed={"tp": 2, "pp": 2, "recompute": "full", "micro_batch_size": 2},
        )
    )
    assert r.best is not None
    for e in [r.best, *r.runners_up]:
        assert (e.tp, e.pp, e.dp, e.recompute, e.micro_batch_size) == (2, 2, 2, "full", 2)
    assert len(r.runners_up) <= 5


def test_ranked_by_throughput():
    r = search(problem(arch=gpt(layers=8), cards=8, global_batch_tokens=64 * 1024, top_n=10))
    tps = [e.tokens_per_s for e in [r.best, *r.runners_up]]
    # ranked by throughput; within 2% a lower ZeRO stage / less recomputation may go first
    assert all(b <= a * 1.02 for a, b in itertools.pairwise(tps)) and len(r.runners_up) == 10
    assert max(tps) <= tps[0] * 1.02


def test_rejects_tp_across_scaleup_domain():
    r = search(
        problem(arch=gpt(layers=8, heads=32), cards=32, global_batch_tokens=64 * 1024, fixed={"tp": 16})
    )
    assert r.best is None and r.feasible == 0
    assert r.rejected["tp-crosses-scaleup-domain"] == r.evaluated


def test_rejects_heads_not_divisible():
    r = search(problem(arch=gpt(layers=8, heads=12, hidden=768), cards=8, fixed={"tp": 8}))
    assert r.best is None and set(r.rejected) == {"tp-not-dividing-heads"}


def test_out_of_memory_counted():
    tiny = dataclasses.replace(ACC, hbm_bytes=1e6)
    r = search(problem(arch=gpt(layers=8), acc=tiny, cards=8, global_batch_tokens=64 * 1024))
    assert r.best is None and r.feasible == 0
    assert r.rejected["out-of-memory"] > 0
    assert sum(r.rejected.values()) == r.evaluated


def test_rejection_counts_add_up():
    r = search(problem(arch=gpt(layers=8), cards=8, global_batch_tokens=64 * 1024))
    assert sum(r.rejected.values()) + r.feasible == r.evaluated
    assert set(r.rejected) <= set(REASONS)


def test_moe_rules():
    moe = Architecture(
        num_hidden_layers=4,
        hidden_size=1024,
        num_attention_heads=8,
        num_key_value_heads=8,
        head_dim=128,
        intermediate_size=4096,
        vocab_size=1024,
        num_experts=8,
        num_experts_per_tok=2,
        moe_intermediate_size=512,
    )
    r = search(problem(arch=moe, cards=16, global_batch_tokens=64 * 1024, fixed={"ep": 16, "tp": 1}))
    assert r.best is None and r.rejected.get("ep-not-dividing-experts", 0) > 0
    r = search(problem(arch=moe, cards=16, global_batch_tokens=64 * 1024, fixed={"ep": 4}))
    assert r.best is not None and r.best.ep == 4 and r.best.breakdown_s["ep_comm"] > 0
    r = search(problem(cards=8, global_batch_tokens=8 * 1024, fixed={"ep": 2}))
    assert r.best is None and "ep-without-experts" in r.rejected


@pytest.mark.parametrize(
    ("fixed", "field"),
    [
        ({"tp": 0}, "parallelism.tp"),
        ({"zero_stage": 7}, "parallelism.zero_stage"),
        ({"recompute": "sometimes"}, "parallelism.recompute"),
        ({"bogus": 1}, "parallelism.bogus"),
        ({"zero_stage": 0, "distributed_optimizer": True}, "parallelism.distributed_optimizer"),
    ],
)
def test_nonsense_fixed_values_raise(fixed, field):
    with pytest.raises(ScenarioError) as exc:
        problem(fixed=fixed)
    assert exc.value.errors[0].field == field


def test_distributed_optimizer_fixed_limits_zero_stage():
    r = search(
        problem(
            arch=gpt(layers=8),
            cards=8,
            global_batch_tokens=64 * 1024,
            fixed={"distributed_optimizer": True},
            top_n=50,
        )
    )
    assert all(e.zero_stage >= 1 and e.distributed_optimizer for e in [r.best, *r.runners_up])


def test_vectorized_evaluation_equals_scalar_reevaluation():
    p = problem(
        arch=gpt(layers=8),
        cards=16,
        global_batch_tokens=128 * 1024,
        cross_leaf_bandwidth_factor=2.0,
        nodes_per_leaf_group=1,
    )
    c = enumerate_candidates(p)
    bad = np.zeros(c["tp"].size, dtype=bool)
    for _, failing in structural_failures(p, c):
        bad |= np.asarray(failing, dtype=bool)
    ok = np.flatnonzero(~bad)
    sub = {k: v[ok] for k, v in c.items()}
    mem, t = evaluate(p, sub)
    rng = np.random.default_rng(0)
    for i in rng.choice(ok.size, size=25, replace=False):
        one = {k: v[i] for k, v in sub.items()}  # numpy scalars
        mem1, t1 = evaluate(p, one)
        for key in ("step_time_s", *BREAKDOWN_KEYS, "predicted_mfu", "predicted_hfu"):
            assert float(t1[key]) == pytest.approx(float(t[key][i]), rel=1e-12), key
        assert float(mem1.total) == pytest.approx(float(mem.total[i]), rel=1e-12)


def test_405b_search_is_fast():
    arch = Architecture(
        num_hidden_layers=126,
        hidden_size=16384,
        num_attention_heads=128,
        num_key_value_heads=8,
        head_dim=128,
        intermediate_size=53248,
        vocab_size=128256,
    )
    h100 = dataclasses.replace(
        ACC,
        peak_flops_bf16=989e12,
        hbm_bandwidth_bytes_per_s=3.35e12,
        scaleup_bandwidth_bytes_per_s=450e9,
        matmul_efficiency=0.8,
    )
    p = LayoutProblem(
        arch=arch,
        counts=param_counts(arch),
        seq_len=8192,
        global_batch_tokens=16 * 2**20,
        cards=16384,
        accelerator=h100,
        nic_bytes_per_s_per_card=50e9,
    )
    r = search(p)  # its time is bench/layout_search.py's figure, not a test
    assert r.best is not None and r.best.tp == 8 and r.evaluated > 10_000
    assert 0.3 < r.best.predicted_mfu < 0.6


def test_first_failure_is_the_first_rule_failed_in_reasons_order_over_the_whole_product():
    """A 2 x 3 product: rule A (the earlier reason) fails where the first axis is 1, rule B where the
    second axis is 0. (0, 0) fails B only, (1, j) fails A first (and (1, 0) B too), the rest none."""
    from estimator.layout.enumeration import REASONS, first_failure

    a, b = "tp-crosses-scaleup-domain", "pp-not-dividing-layers"
    rules = [(a, np.array([[False], [True]])), (b, np.array([[True, False, False]]))]
    got = first_failure(rules, (2, 3))
    ia, ib = REASONS.index(a), REASONS.index(b)
    assert got.tolist() == [[ib, -1, -1], [ia, ia, ia]]
    assert first_failure([], (2, 2)).tolist() == [[-1, -1], [-1, -1]]


def _refusals_over_the_whole_product(p):
    """Per reason, how many entries of the expanded product the search considers fail it first:
    every rule's mask broadcast to the whole product, the first failing one taken entry by entry."""
    from estimator.layout.enumeration import candidate_grid, searched_grid

    grid = candidate_grid(p)
    shape = searched_grid(p, grid).shape
    keep = searched_grid(p, grid).ravel()
    rules = structural_failures(p, grid)
    masks = np.stack([np.broadcast_to(m, shape).ravel() for _, m in rules])
    counts = dict.fromkeys(REASONS, 0)
    for entry in np.flatnonzero(keep):
        failed = np.flatnonzero(masks[:, entry])
        if failed.size:
            counts[rules[int(failed[0])][0]] += 1
    return {k: v for k, v in counts.items() if v}, int(keep.sum())


@pytest.mark.parametrize("cards", [2, 8, 12])
@pytest.mark.parametrize("moe", [False, True])
def test_refusals_are_counted_as_on_the_whole_product(cards, moe):
    """search's structural counts (without materializing the product's reasons) equal a count over
    the expanded product, entry by entry, for dense and MoE models, free and fixed axes."""
    from estimator.layout.search import _structurally_valid

    arch = gpt(layers=6)
    if moe:
        arch = dataclasses.replace(arch, num_experts=8, num_experts_per_tok=2, moe_intermediate_size=512)
    for fixed in ({}, {"tp": 2}, {"dp": 2, "recompute": "full"}):
        p = problem(arch=arch, cards=cards, global_batch_tokens=32 * 1024, fixed=fixed)
        _, counts, considered = _structurally_valid(p)
        got = {name: int(k) for name, k in zip(REASONS, counts, strict=True) if k}
        assert (got, considered) == _refusals_over_the_whole_product(p)
