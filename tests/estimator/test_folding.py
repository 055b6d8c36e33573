"""MoE parallel folding (parallelism.expert_tp) and uneven pipeline splits (first/last_stage_layers).

Every expected value is worked out by hand from the rule or formula named in the test; the two
published layouts are Megatron-Bridge's (docs/sources.md#megatron-bridge).
"""

import math

import numpy as np
import pytest

from estimator.errors import ScenarioError
from estimator.layout.enumeration import ep_not_folding, stage_split_fails
from estimator.layout.memory import stage_layers, weight_replicas
from estimator.layout.steptime import Fabric
from estimator.layout.steptime.moe import all_to_all_s
from estimator.model.transformer import Architecture, ParamCounts, stage_param_counts
from estimator.plan.compose import estimate


def test_folding_rule_lets_ep_span_tp_and_dp():
    # Qwen3-235B on 256 GPUs, TP2 PP8: dp = 256/16 = 16. EP32 with expert-TP 1 tiles the
    # 2·1·16 = 32 ranks of a stage (expert-DP 1); the classic rule (EP out of DP) refused it.
    assert not ep_not_folding(np.array(2), np.array(1), np.array(16), np.array(32), np.array(1))
    assert 16 % 32 != 0
    # expert-TP 2 would need 64 ranks: refused
    assert ep_not_folding(np.array(2), np.array(1), np.array(16), np.array(32), np.array(2))
    # the classic layout is the special case etp = tp: EP must then divide dp
    assert not ep_not_folding(np.array(8), np.array(1), np.array(16), np.array(16), np.array(8))
    assert ep_not_folding(np.array(8), np.array(1), np.array(16), np.array(32), np.array(8))


def test_expert_data_parallel_group_under_folding():
    # tp2 cp1 dp16, EP32, ETP1: experts reduce over 2·16/32 = 1 card, dense weights over 16
    dense, expert = weight_replicas(16, 1, 32, 2, 1)
    assert float(dense) == 16 and float(expert) == 1
    # classic (ETP = TP = 2, EP8): dp·cp/ep = 16/8 = 2
    assert float(weight_replicas(16, 1, 8, 2, 2)[1]) == 2
    assert float(weight_replicas(16, 1, 8)[1]) == 2


def test_expert_weights_split_by_ep_times_expert_tp():
    counts = ParamCounts(
        total=0,
        active=0,
        embedding=0,
        lm_head=0,
        final_norm=0,
        attention_per_layer=100,
        dense_mlp_per_layer=0,
        moe_shared_per_layer=0,
        moe_routed_per_layer=6400,
        moe_active_routed_per_layer=800,
        norms_per_layer=0,
        n_dense_layers=0,
        n_moe_layers=2,
    )
    # 2 MoE layers of 6,400 routed parameters over EP32: etp 1 leaves 2·6400/32 = 400 per card,
    # etp 2 half of it; the attention (2·100) is split by tp = 2 either way
    dense, expert = stage_param_counts(counts, 2, 0, 0, 0, tp=2, ep=32, expert_tp=1)
    assert float(dense) == 100 and float(expert) == 400
    assert float(stage_param_counts(counts, 2, 0, 0, 0, tp=2, ep=32, expert_tp=2)[1]) == 200
    assert float(stage_param_counts(counts, 2, 0, 0, 0, tp=2, ep=32)[1]) == 200  # default: etp = tp


def test_all_to_all_spans_the_link_the_ep_group_reaches():
    arch = Architecture(
        num_hidden_layers=1,
        hidden_size=2048,
        num_attention_heads=16,
        num_key_value_heads=16,
        head_dim=128,
        intermediate_size=1,
        vocab_size=1,
        num_experts=64,
        num_experts_per_tok=8,
        moe_intermediate_size=768,
    )
    fab = Fabric(domain=8.0, bw_up=400e9, nic=50e9, cross=1.0, leaf_cards=math.inf, eta=1.0)
    tokens, h = 4096.0, 2048.0
    # TP2 with EP8 folded at etp 1: the EP members are 1 rank apart, all 8 in the 8-card node; each
    # card dispatches its 4096/2 tokens' 8 copies, 7/8 of them to peers, over NVLink only
    folded = float(all_to_all_s(tokens, 2.0, 1.0, 8.0, arch, 4.0, fab, False, None, False, 1.0))
    assert folded == pytest.approx(4 * (2048 * 8 * 7 / 8 * h * 2 / 400e9 + 7 * 2e-6), rel=1e-9)
    # classic (etp = tp = 2): members 2 apart, 4 per node, the group spans 2 nodes: 8·4/8 copies cross the NIC
    classic = float(all_to_all_s(tokens, 2.0, 2.0, 8.0, arch, 4.0, fab, False, None, False, 1.0))
    nic = 2048 * 8 * 4 / 8 * h * 2 / 50e9
    assert classic == pytest.approx(4 * (nic + 3 * 2e-6 + 5e-6), rel=1e-9)


def test_stage_layers_fixed_first_and_last():
    # DeepSeek-V3's 61 layers on 16 devices as Megatron-Bridge's recipe: embedding + 4, 14 x 4, 1 + loss
    st = stage_layers(61, 3, np.array(16), 1, (4, 1))
    assert (int(st.first), int(st.full), int(st.last)) == (4, 4, 1)
    assert (int(st.dense_first), int(st.dense_mid), int(st.dense_last)) == (3, 0, 0)
    # the same 16 virtual stages as PP4 x VP4: devices hold chunks d, d+4, d+8, d+12 ->
    # 4+4+4+4 = 16 on the first, 4+4+4+1 = 13 on the last, the two middle ones (61-29)/2 = 16
    st = stage_layers(61, 3, np.array(4), 4, (16, 13))
    assert (int(st.first), int(st.full), int(st.last), int(st.most)) == (16, 16, 13, 16)
    # only the last fixed: the 15 other devices share 60 layers, 4 each
    st = stage_layers(61, 0, np.array(16), 1, (None, 1))
    assert (int(st.first), int(st.full), int(st.last)) == (4, 4, 1)


def test_stage_split_rule():
    pp = np.array([1, 2, 8, 16])
    # (4, 1): pp 16 leaves 56 for 14 devices (4 each); pp 8 leaves 56 for 6 (not whole); pp 2 leaves 56
    # for none; pp 1 cannot hold a first of 4 and a last of 1
    assert stage_split_fails(61, pp, (4, 1)).tolist() == [True, True, True, False]
    assert stage_split_fails(61, pp, (None, None)).tolist() == [False] * 4
    assert stage_split_fails(61, np.array([2]), (30, 31)).tolist() == [False]


QWEN_BRIDGE = {
    "model": {"preset": "qwen3-235b-a22b"},
    "training": {"tokens": 1e12, "seq_len": 4096, "global_batch_tokens": 8192 * 4096, "precision": "fp8"},
    "hardware": {"accelerator": "h100-sxm"},
    "cluster": {"cards": 256},
    "parallelism": {"tp": 2, "pp": 8, "virtual_stages": 4, "ep": 32, "micro_batch_size": 1},
}


def test_qwen3_235b_bridge_layout_plans_folded():
    """Megatron-Bridge's Qwen3-235B-A22B on 256 H100: TP2 PP8 VP4 EP32 (archive, 26.02). dp = 16 does
    not hold EP32; folded over TP x DP at expert-TP 1 it does (expert-DP 2·16/32 = 1)."""
    result = estimate(QWEN_BRIDGE)["result"]
    par = result["parallelism"]
    assert (par["tp"], par["pp"], par["dp"], par["ep"], par["virtual_stages"]) == (2, 8, 16, 32, 4)
    assert (par["expert_tp"], par["expert_dp"]) == (1, 1)
    # 94 layers on 32 chunks of 3: the first and last device give up one layer each (12 - 1)
    assert (par["first_stage_layers"], par["last_stage_layers"]) == (11, 11)
    assert sum(par["breakdown_s"].values()) == pytest.approx(par["step_time_s"], rel=1e-9)
    assert par["breakdown_s"]["ep_comm"] > 0


def test_fixed_expert_tp_that_cannot_fold_is_refused():
    # EP32 x expert-TP 2 = 64 ranks do not tile the 2 x 16 = 32 of a stage
    doc = {**QWEN_BRIDGE, "parallelism": {**QWEN_BRIDGE["parallelism"], "expert_tp": 2}}
    with pytest.raises(ScenarioError) as err:
        estimate(doc)
    assert err.value.errors[0].params["reasons"] == ["ep-not-folding-into-tp-cp-dp"]


DSV3_GB200 = {
    "model": {"preset": "deepseek-v3"},
    "training": {"tokens": 1e12, "seq_len": 4096, "global_batch_tokens": 4096 * 4096},
    "hardware": {"accelerator": "gb200", "server": "gb200-nvl72-tray"},
    "cluster": {"cards": 256},
    "parallelism": {"tp": 1, "pp": 4, "virtual_stages": 4, "ep": 64, "micro_batch_size": 1},
}


def test_deepseek_v3_vp4_over_61_layers_needs_the_published_split():
    # 16 chunks of ceil(61/16) = 4 layers overshoot by 3: more than the automatic split's two
    with pytest.raises(ScenarioError) as err:
        estimate(DSV3_GB200)
    assert "virtual-stages-not-dividing-layers" in err.value.errors[0].params["reasons"]
    doc = {
        **DSV3_GB200,
        "parallelism": {**DSV3_GB200["parallelism"], "first_stage_layers": 16, "last_stage_layers": 13},
    }
    par = estimate(doc)["result"]["parallelism"]
    assert (par["pp"], par["virtual_stages"], par["ep"]) == (4, 4, 64)
    assert (par["first_stage_layers"], par["last_stage_layers"]) == (16, 13)


def test_bad_stage_layers_and_expert_tp_name_the_field():
    doc = {**DSV3_GB200, "parallelism": {"first_stage_layers": 40, "last_stage_layers": 30}}
    with pytest.raises(ScenarioError) as err:
        estimate(doc)
    assert [e.field for e in err.value.errors] == ["parallelism.last_stage_layers"]
    dense = {
        "model": {"preset": "llama-3.1-8b"},
        "training": {"tokens": 1e11},
        "hardware": {"accelerator": "h100-sxm"},
        "cluster": {"cards": 8},
        "parallelism": {"expert_tp": 2},
    }
    with pytest.raises(ScenarioError) as err:
        estimate(dense)
    assert [e.field for e in err.value.errors] == ["parallelism.expert_tp"]


def test_a_free_expert_tp_is_searched_over_1_and_tp():
    from estimator.contract.resolve import parse_scenario, resolve
    from estimator.layout.enumeration import candidate_count, enumerate_candidates
    from estimator.plan.compose import fabric_for, layout_problem

    doc = {
        "model": {"preset": "qwen3-30b-a3b"},
        "training": {"tokens": 1e11},
        "hardware": {"accelerator": "h100-sxm"},
        "cluster": {"cards": 64},
        "parallelism": {"tp": 4, "pp": 1, "micro_batch_size": 1},
    }
    r = resolve(parse_scenario(doc))
    problem = layout_problem(r, 64, fabric_for(r, 64))
    c = enumerate_candidates(problem)
    pairs = set(zip(c["ep"].tolist(), c["etp"].tolist(), strict=True))
    # ep 1: the experts split like the dense layers (etp = tp = 4); ep > 1: expert-TP 1 or 4
    assert {etp for ep, etp in pairs if ep == 1} == {4}
    assert {etp for ep, etp in pairs if ep == 8} == {1, 4}
    assert candidate_count(problem) == c["tp"].size
