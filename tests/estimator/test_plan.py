"""plan.estimate(): the contract's sections, the fabric's effect on DP time, currency, serving."""

import copy
import math

import pytest

from estimator.errors import ScenarioError
from estimator.plan.compose import estimate

BASE = {
    "model": {"preset": "llama-3.1-70b"},
    "training": {"tokens": 1e12, "seq_len": 4096},
    "hardware": {"accelerator": "h100-sxm"},
    "cluster": {"cards": 1024},
}

CONTRACT = {
    "compute": {
        "flop_per_token",
        "training_flop",
        "cards",
        "nodes",
        "mfu",
        "wall_clock_days",
        "accelerator_hours",
        "tokens_per_s",
    },
    "parallelism": {
        "tp",
        "pp",
        "dp",
        "ep",
        "zero_stage",
        "recompute",
        "micro_batch_size",
        "micro_batches",
        "bubble_fraction",
        "step_time_s",
        "breakdown_s",
        "predicted_mfu",
        "predicted_hfu",
    },
    "memory": {"per_card_bytes", "hbm_bytes", "fits"},
    "network": {
        "tiers",
        "endpoints",
        "leaf_switches",
        "spine_switches",
        "core_switches",
        "total_switches",
        "oversubscription",
        "server_links",
        "switch_links",
        "transceivers",
        "bisection_bandwidth_bps",
    },
    "storage": {"checkpoint_bytes", "dataset_bytes", "hot", "warm", "cache"},
    "power": {"it_w", "facility_w", "energy_wh"},
    "cost": {"currency", "capex", "run", "cloud_break_even_months"},
}


def with_(**sections):
    data = copy.deepcopy(BASE)
    for name, value in sections.items():
        data[name] = value
    return data


def test_every_contract_field_is_present():
    out = estimate(BASE)
    result = out["result"]
    for section, fields in CONTRACT.items():
        assert fields <= set(result[section]), (section, fields - set(result[section]))
    assert set(result["parallelism"]["breakdown_s"]) >= {
        "compute",
        "bubble",
        "tp_comm",
        "pp_comm",
        "dp_comm",
        "ep_comm",
        "optimizer",
    }
    assert set(result["memory"]["per_card_bytes"]) >= {
        "weights",
        "gradients",
        "optimizer",
        "activations",
        "other",
        "total",
    }
    assert {"capex", "run"} <= set(result["cost"]) and set(result["cost"]["capex"]) >= {
        "compute",
        "network",
        "storage",
        "total",
    }
    assert out["scenario"]["cluster"]["cards"] == 1024 and out["engine_version"] and out["catalog_version"]


def test_given_cards_time_follows_the_predicted_mfu():
    c = estimate(BASE)["result"]["compute"]
    # Time = C / (cards x peak x MFU) (docs/architecture.md#formulas), with H100's 989.4 TFLOP/s dense BF16 peak
    assert c["mfu_source"] == "predicted"
    expected_days = c["training_flop"] / (1024 * 989.4e12 * c["mfu"]) / 86400
    assert c["wall_clock_days"] == pytest.approx(expected_days, rel=1e-9)
    assert 0.2 < c["mfu"] < 0.65  # large dense training on H100 runs at 35-55 % MFU (Llama 3, MegaScale)


def test_deadline_sizing_meets_the_deadline_with_whole_nodes():
    c = estimate(with_(cluster={"target_days": 20}))["result"]["compute"]
    assert c["cards"] % 8 == 0 and c["meets_target"] and c["wall_clock_days"] <= 20


def test_fixed_layout_rounds_cards_to_whole_replicas():
    data = with_(
        cluster={"target_days": 20},
        efficiency={"mfu": 0.4},
        parallelism={"tp": 8, "pp": 5},
        reliability={"failures": False},  # the failure-free arithmetic below
    )
    c = estimate(data)["result"]["compute"]
    assert c["cards"] % 40 == 0  # lcm(8-card nodes, tp·pp = 40)
    need = c["training_flop"] / (20 * 86400 * 989.4e12 * 0.4)
    assert need <= c["cards"] < need + 40


def test_oversubscribed_fabric_slows_data_parallel_traffic():
    """The seed article's leaf example: uplinks half the downlinks (2:1) slow cross-leaf traffic."""
    fixed = {"tp": 8, "pp": 1, "zero_stage": 1, "micro_batch_size": 1, "recompute": "selective"}
    model = {"preset": "llama-3.1-8b"}
    one = estimate(
        with_(model=model, parallelism=fixed, network={"oversubscription": 1.0, "switch_ports": 64})
    )
    two = estimate(
        with_(model=model, parallelism=fixed, network={"oversubscription": 2.0, "switch_ports": 64})
    )
    p1, p2 = one["result"]["parallelism"], two["result"]["parallelism"]
    assert two["result"]["network"]["cross_leaf_bandwidth_factor"] > 1.5
    assert p2["breakdown_s"]["dp_comm"] > p1["breakdown_s"]["dp_comm"]
    assert p2["step_time_s"] >= p1["step_time_s"]


def test_cny_is_usd_times_the_exchange_rate():
    usd = estimate(with_(efficiency={"mfu": 0.4}))["result"]["cost"]
    cny = estimate(with_(efficiency={"mfu": 0.4}, cost={"currency": "CNY", "usd_to_cny": 7.0}))["result"][
        "cost"
    ]
    assert cny["currency"] == "CNY"
    assert cny["capex"]["total"] == pytest.approx(7.0 * usd["capex"]["total"], rel=1e-12)
    assert cny["run"]["cloud"] == pytest.approx(7.0 * usd["run"]["cloud"], rel=1e-12)


def test_price_override_in_currency():
    base = estimate(with_(efficiency={"mfu": 0.4}))["result"]
    cheap = estimate(with_(efficiency={"mfu": 0.4}, cost={"cloud_price_per_card_hour": 1.0}))["result"]
    # cloud cost = the card-hours the cluster is held (failures counted: cards x wall-clock hours
    # with them) x price
    held_hours = cheap["compute"]["cards"] * cheap["goodput"]["wall_clock_days"] * 24.0
    assert cheap["cost"]["card_hours"] == pytest.approx(held_hours, rel=1e-9)
    assert cheap["cost"]["run"]["cloud"] == pytest.approx(held_hours * 1.0, rel=1e-9)
    assert base["cost"]["run"]["cloud"] == pytest.approx(
        held_hours * base["cost"]["cloud_per_card_hour"], rel=1e-9
    )


def test_the_run_is_paid_for_the_time_the_cluster_is_held():
    """With failures counted the cloud bill, the owned cost and the energy cover the wall clock with
    them (computing / ETTR); without, the computing time alone. Capex does not depend on it."""
    scenario = with_(efficiency={"mfu": 0.4})
    held = estimate(scenario)["result"]
    free = estimate({**scenario, "reliability": {"failures": False}})["result"]
    ettr = held["goodput"]["effective_training_time_ratio"]
    assert 0.5 < ettr < 1.0  # the default failure model interrupts this run
    assert free["cost"]["card_hours"] == pytest.approx(free["compute"]["accelerator_hours"], rel=1e-12)
    assert held["cost"]["card_hours"] == pytest.approx(held["compute"]["accelerator_hours"] / ettr, rel=1e-9)
    for path in (("run", "cloud"), ("run", "owned"), ("run", "cloud_reserved")):
        a, b = held["cost"][path[0]][path[1]], free["cost"][path[0]][path[1]]
        assert a == pytest.approx(b / ettr, rel=1e-9), path
    assert held["power"]["energy_wh"] == pytest.approx(free["power"]["energy_wh"] / ettr, rel=1e-9)
    assert held["cost"]["capex"]["total"] == free["cost"]["capex"]["total"]


def test_serving_section_for_qwen3_8b_on_an_atlas_800t_a2():
    data = {
        "model": {"preset": "qwen3-8b"},
        "training": {"tokens": 1e11},
        "hardware": {"accelerator": "ascend-910b2", "server": "atlas-800t-a2"},
        "cluster": {"cards": 8},
        "serving": {"context_len": 8192},
    }
    serving = estimate(data)["result"]["serving"]
    # 2 (K and V) x 36 layers x 8 KV heads x 128 head_dim x 2 bytes (BF16) = 147,456 bytes per token
    assert serving["kv_cache_bytes_per_token"] == 147_456
    assert serving["max_concurrent_sequences"] > 0


def test_405b_checkpoint_and_hot_tier_write_bandwidth():
    data = with_(model={"preset": "llama-3.1-405b"}, cluster={"cards": 16384}, efficiency={"mfu": 0.4})
    st = estimate(data)["result"]["storage"]
    # 405B x 12 bytes (fp32 master + Adam m, v) ~ 4.9 TB; written in the default 120 s window
    assert st["checkpoint_bytes"] == pytest.approx(4.9e12, rel=0.02)
    assert st["hot"]["write_bytes_per_s"] == pytest.approx(st["checkpoint_bytes"] / 120, rel=1e-9)


def test_warnings_and_advice_have_codes():
    result = estimate(with_(parallelism={"tp": 8, "pp": 8, "micro_batch_size": 1}))["result"]
    assert all({"code", "message"} <= set(w) for w in result["warnings"])
    assert all({"code", "severity", "message", "suggestion"} <= set(a) for a in result["advice"])


def test_impossible_fixed_layout_is_a_field_error():
    with pytest.raises(ScenarioError) as info:
        estimate(with_(cluster={"cards": 1000}, parallelism={"tp": 8, "pp": 16}))
    assert info.value.errors[0].field == "parallelism"


def test_model_too_large_for_the_cards_is_refused_without_figures():
    """405B on 8 cards: 405e9 x 16 B of model states (weights, gradients, Adam) alone are 6.5 TB, more
    than 8 x 80 GB; no figure without a plan, so the answer is the reason, on the cards asked for."""
    with pytest.raises(ScenarioError) as info:
        estimate(with_(model={"preset": "llama-3.1-405b"}, cluster={"cards": 8}))
    (err,) = info.value.errors
    assert (err.field, err.code) == ("cluster.cards", "no-feasible-layout")
    assert err.params["cards"] == 8 and err.params["suggestions"] == []
    assert "fallback" not in err.message


def test_cards_that_split_into_no_layout_are_refused_with_the_nearest_round_sizes_that_plan():
    """14,568 MI300X = 8·3·607 for an 8B model at 32K tokens: a batch of 4M tokens is 128 sequences,
    so DP <= 128 and TP·PP·CP >= 114 would have to divide 14,568, a multiple of 607: nothing passes
    the rules, memory aside. The refusal says so (not "fits in HBM", not "add cards") and names the
    round sizes either side that plan: 1,800 servers (14,400) and 1,875 (15,000)."""
    doc = {
        "model": {"preset": "llama-3.1-8b"},
        "training": {"tokens": 1e12, "seq_len": 32768},
        "hardware": {"accelerator": "mi300x"},
        "cluster": {"cards": 14568},
    }
    with pytest.raises(ScenarioError) as info:
        estimate(doc)
    (err,) = info.value.errors
    assert (err.field, err.code) == ("cluster.cards", "cards-split-into-no-layout")
    assert (err.params["below"], err.params["above"]) == (14400, 15000)
    assert "dp-not-integral" in err.params["reasons"] and "out-of-memory" not in err.params["reasons"]
    for cards in (14400, 15000):
        assert estimate({**doc, "cluster": {"cards": cards}})["result"]["compute"]["cards"] == cards


def test_cards_that_leave_a_server_part_used_and_split_poorly_are_compared_with_its_whole_cards():
    """1,001 H100 = 7·11·13 for Llama 3.1 70B split as TP 1 x PP 7 x DP 143; the 126 servers the plan
    pays for hold 1,008, which the plan of those cards trains much faster on, for the same capex:
    the warning gives that plan's MFU and days. Whole servers, or an MFU given, get no such warning."""
    doc = {
        "model": {"preset": "llama-3.1-70b"},
        "training": {"tokens": 1e12},
        "hardware": {"accelerator": "h100-sxm"},
        "cluster": {"cards": 1001},
    }
    result = estimate(doc)["result"]
    (w,) = [w for w in result["warnings"] if w["code"] == "partial-node-slow"]
    whole = estimate({**doc, "cluster": {"cards": 1008}})["result"]
    assert (w["params"]["whole"], w["params"]["nodes"]) == (1008, 126)
    assert w["params"]["whole_mfu"] == pytest.approx(whole["compute"]["mfu"], rel=1e-12)
    assert w["params"]["whole_days"] == pytest.approx(whole["compute"]["wall_clock_days"], rel=1e-9)
    assert whole["cost"]["capex"]["total"] == result["cost"]["capex"]["total"]
    assert w["params"]["whole_mfu"] > 1.1 * result["compute"]["mfu"]
    assert not [w for w in whole["warnings"] if w["code"] == "partial-node-slow"]
    given = estimate({**doc, "efficiency": {"mfu": 0.4}})["result"]
    assert not [w for w in given["warnings"] if w["code"] == "partial-node-slow"]


def test_refused_fixed_layout_names_its_rule_and_the_nearest_accepted_layouts():
    """Qwen3-235B (128 experts) on 256 cards at TP2 PP8 VP4 EP32 (Megatron-Bridge's published layout)
    plans since MoE folding (EP over TP x DP at expert-TP 1); with expert-TP 2 it cannot: DP = 256 /
    (2 x 8) = 16, and EP 32 x expert-TP 2 = 64 does not divide TP x DP = 32, the only rule refusing
    it. The nearest layouts the search accepts change one fixed field by one step: EP 16, expert-TP 1
    (the published layout) or PP 4 (DP 32)."""
    fixed = {"tp": 2, "pp": 8, "virtual_stages": 4, "ep": 32, "expert_tp": 2}
    with pytest.raises(ScenarioError) as info:
        estimate(
            {
                "model": {"preset": "qwen3-235b-a22b"},
                "training": {"tokens": 1e12, "seq_len": 4096},
                "hardware": {"accelerator": "h100-sxm"},
                "cluster": {"cards": 256},
                "parallelism": fixed,
            }
        )
    (err,) = info.value.errors
    assert (err.field, err.code) == ("parallelism", "no-possible-layout")
    assert err.params["reasons"] == ["ep-not-folding-into-tp-cp-dp"]
    assert (
        "EP x expert TP must divide TP x CP x DP" in err.message and "Nearest accepted layouts" in err.message
    )
    suggestions = err.params["suggestions"]
    assert any((s["ep"], s["expert_tp"], s["pp"]) == (32, 1, 8) for s in suggestions)
    for s in suggestions:  # each one step from the fixed layout, and each accepted
        steps = sum(abs(math.log2(s[k] / v)) for k, v in fixed.items())
        assert steps == 1 and (s["tp"] * s["dp"]) % (s["ep"] * s["expert_tp"]) == 0
        assert s["tp"] * s["pp"] * s["dp"] == 256
