"""The article's rules as checks (estimator/plan/advice.py): each rule fires once and stays quiet once."""

import copy

import pytest

from estimator.dotted import set_path
from estimator.plan.advice import RULES, advise
from estimator.plan.starting_config import starting_configuration

SCENARIO = {
    "hardware": {"accelerator": "h100-sxm", "cards_per_node": 8},
    "training": {"precision": "bf16", "seq_len": 4096},
    "network": {"oversubscription": 1.0},
    "efficiency": {"mfu": 0.45},
}
RESULT = {
    "compute": {"cards": 512, "nodes": 64},
    "parallelism": {
        "tp": 8,
        "pp": 4,
        "dp": 16,
        "ep": 1,
        "zero_stage": 1,
        "recompute": "selective",
        "micro_batch_size": 1,
        "micro_batches": 32,
        "bubble_fraction": 3 / 35,
        "step_time_s": 10.0,
        "breakdown_s": {
            "compute": 8.0,
            "bubble": 0.9,
            "tp_comm": 0.5,
            "pp_comm": 0.1,
            "dp_comm": 0.3,
            "ep_comm": 0.0,
            "optimizer": 0.2,
        },
    },
    "memory": {"per_card_bytes": {"total": 50e9}, "hbm_bytes": 80e9, "fits": True, "fits_with_zero2": True},
    "network": {
        "tiers": 2,
        "leaf_switches": 16,
        "spine_switches": 8,
        "oversubscription": 1.0,
        "endpoints": 512,
    },
}


_BRIEF = {"domain_cards": 384, "step_time_s": 1.5, "tp": 2, "ep": 64, "pp": 1, "sequences_per_step": 24}
VERSUS = {
    "supernode": _BRIEF,
    "nodes": {
        **_BRIEF,
        "domain_cards": 8,
        "step_time_s": 2.4,
        "tp": 8,
        "ep": 1,
        "pp": 16,
        "sequences_per_step": 32,
    },
    "speedup": 2.4 / 1.5,
    "capex_ratio": 1.34,
    "power_ratio": 1.3,
    "energy_per_token_ratio": 1.3 / 1.6,
    "pays": True,
}
VERSUS_DEAR = {**VERSUS, "capex_ratio": 1.7, "pays": False}
SUPERNODE = {
    "unit": {"supernode_id": "cloudmatrix-384", "name": "CloudMatrix 384", "cards": 384, "degenerate": False},
    "supernodes": 6,
    "idle_cards": 0,
    "versus_nodes": VERSUS,
}


def _plan(**changes):
    """Copy of the healthy plan with 's.<path>' / 'r.<path>' set (double underscore for dots)."""
    s, r = copy.deepcopy(SCENARIO), copy.deepcopy(RESULT)
    for key, value in changes.items():
        where, path = key.split("_", 1)
        set_path(s if where == "s" else r, path.replace("__", "."), value)
    return s, r


def codes(s, r):
    return [a.code for a in advise(s, r)]


def test_healthy_plan_has_no_advice():
    assert advise(SCENARIO, RESULT) == []


# code -> (changes that trigger it, changes that are close but must not)
CASES = {
    "memory-does-not-fit": ({"r_memory__fits": False}, {"r_memory__fits": True, "r_memory__hbm_bytes": 51e9}),
    "tp-crosses-node": ({"r_parallelism__tp": 16, "r_parallelism__dp": 8}, {"r_parallelism__tp": 8}),
    "bubble-over-20pct": (
        {"r_parallelism__bubble_fraction": 0.43, "r_parallelism__micro_batches": 4},
        {"r_parallelism__bubble_fraction": 0.19},
    ),
    "comm-wait-over-30pct": (
        {"r_parallelism__breakdown_s__dp_comm": 3.0},
        {"r_parallelism__breakdown_s__dp_comm": 2.3},
    ),
    "oversubscribed-fabric-dp": (
        {"r_network__oversubscription": 2.0},
        {"r_network__oversubscription": 2.0, "r_parallelism__dp": 1},
    ),
    "flat-network-too-large": (
        {"r_network__tiers": 1, "r_network__leaf_switches": 1, "r_compute__nodes": 20},
        {"r_network__tiers": 1, "r_network__leaf_switches": 1, "r_compute__nodes": 8},
    ),
    "zero3-unneeded": (
        # stage 2 fits and trains 1 % slower: inside the search's 2 % tie band
        {"r_parallelism__zero_stage": 3, "r_memory__zero2_speed_factor": 0.99},
        # stage 2 fits but trains 9 % slower: the search chose stage 3 for its speed
        {"r_parallelism__zero_stage": 3, "r_memory__zero2_speed_factor": 0.91},
    ),
    "fp32-precision": ({"s_training__precision": "fp32"}, {"s_training__precision": "bf16"}),
    "hccl-buffer": (
        {"s_hardware__accelerator": "ascend-910b2", "r_compute__chip_family": "ascend-910b"},
        {
            "s_hardware__accelerator": "ascend-910b2",
            "r_compute__chip_family": "ascend-910b",
            "s_network__hccl_buffsize_mb": 256,
        },
    ),
    "ep-crosses-node": ({"r_parallelism__ep": 8}, {"r_parallelism__ep": 8, "r_parallelism__tp": 1}),
    "mfu-optimistic": ({"s_efficiency__mfu": 0.7}, {"s_efficiency__mfu": 0.55}),
    # supernodes: step 1.5 s on the 384-card domain against 2.4 s as 8-card nodes = 1.6x, for a
    # capex ratio of 1.34 (pays) or 1.7 (does not pay); a 2,000-card plan idles 304 of 6 x 384
    "supernode-pays": ({"r_scaleup": SUPERNODE}, {"r_scaleup": {**SUPERNODE, "versus_nodes": VERSUS_DEAR}}),
    "supernode-does-not-pay": (
        {"r_scaleup": {**SUPERNODE, "versus_nodes": VERSUS_DEAR}},
        {"r_scaleup": SUPERNODE},
    ),
    "supernode-partly-used": (
        {"r_scaleup": {**SUPERNODE, "idle_cards": 304}},
        {"r_scaleup": {**SUPERNODE, "idle_cards": 0}},
    ),
}


def test_every_rule_has_a_case():
    assert set(CASES) == set(RULES)


@pytest.mark.parametrize("code", sorted(CASES))
def test_rule_triggers(code):
    s, r = _plan(**CASES[code][0])
    found = [a for a in advise(s, r) if a.code == code]
    assert len(found) == 1
    a = found[0]
    assert a.severity in ("error", "warning", "info")
    assert a.message and a.suggestion


@pytest.mark.parametrize("code", sorted(CASES))
def test_rule_stays_quiet(code):
    s, r = _plan(**CASES[code][1])
    assert code not in codes(s, r)


def test_bubble_suggests_four_to_eight_times_pp():
    s, r = _plan(r_parallelism__bubble_fraction=0.43, r_parallelism__micro_batches=4)
    a = next(a for a in advise(s, r) if a.code == "bubble-over-20pct")
    assert "16-32 micro-batches" in a.suggestion
    s, r = _plan(r_parallelism__bubble_fraction=0.25, r_parallelism__micro_batches=32)
    a = next(a for a in advise(s, r) if a.code == "bubble-over-20pct")
    assert "virtual_stages" in a.suggestion


def test_hccl_buffer_mentions_256_and_flags_the_erratum_value():
    s, r = _plan(
        s_hardware__accelerator="ascend-910b2",
        r_compute__chip_family="ascend-910b",
        s_network__hccl_buffsize_mb=8000,
    )
    a = next(a for a in advise(s, r) if a.code == "hccl-buffer")
    assert "HCCL_BUFFSIZE=256" in a.suggestion and "erratum" in a.message
    assert "hccl-buffer" not in codes(SCENARIO, RESULT)  # NVIDIA plan


def test_hccl_buffer_inline_ascend_accelerator():
    """The chip family decides, not the id or the vendor's name."""
    s, r = _plan(s_hardware__accelerator={"id": "my-910", "vendor": "Huawei", "chip_family": "ascend-910c"})
    r["compute"].pop("chip_family", None)
    assert "hccl-buffer" in codes(s, r)
    s, r = _plan(
        s_hardware__accelerator={"id": "ascend-lookalike", "vendor": "Huawei", "chip_family": "hopper"}
    )
    r["compute"].pop("chip_family", None)
    assert "hccl-buffer" not in codes(s, r)


def test_tp_inside_a_large_scaleup_domain_is_fine():
    s, r = _plan(r_parallelism__tp=16, r_compute__scaleup_domain_cards=384)
    assert "tp-crosses-node" not in codes(s, r)


@pytest.mark.parametrize(
    ("scenario", "result"),
    [
        ({}, {}),
        (None, None),
        ({"hardware": "x"}, {"parallelism": {"tp": "eight", "bubble_fraction": None, "step_time_s": 0}}),
        ({"training": {"precision": 32}}, {"memory": [], "network": {"tiers": "1"}}),
    ],
)
def test_missing_or_malformed_keys_skip_rules(scenario, result):
    assert advise(scenario, result) == []
    assert starting_configuration(scenario, result)  # still gives the article's defaults


def _settings(s, r):
    return {row.setting: row.value for row in starting_configuration(s, r)}


def test_starting_configuration_for_a_pipelined_nvidia_plan():
    cfg = _settings(SCENARIO, RESULT)
    assert cfg["precision"] == "bf16"
    assert cfg["recompute"] == "selective"
    assert cfg["micro_batches"] == 32  # the chosen layout's 32 lies in 4-8 x PP = 16-32
    assert cfg["layout"] == "TP 8 x PP 4 x DP 16, micro-batch 1"
    assert cfg["zero_stage"] == 1  # DeepSpeed allows only stage 1 with pipeline parallelism
    assert cfg["gradient_compression"] == "bf16 gradients"
    assert "HCCL_BUFFSIZE" not in cfg and cfg["CUDA_DEVICE_MAX_CONNECTIONS"] == 1
    assert all(row.reason for row in starting_configuration(SCENARIO, RESULT))


def test_starting_configuration_repeats_the_interleaved_layout_it_relies_on():
    """Issue 20: the plan relied on 4 virtual stages the starting configuration left out."""
    s, r = _plan(r_parallelism__virtual_stages=4, r_parallelism__ep=8, r_parallelism__sequence_parallel=True)
    row = next(x for x in starting_configuration(s, r) if x.setting == "layout")
    assert row.value == (
        "TP 8 x PP 4 (4 virtual stages per rank, interleaved 1F1B) x DP 16, EP 8, micro-batch 1, sequence parallel"
    )
    assert {k: row.params[k] for k in ("tp", "pp", "virtual_stages", "dp", "ep")} == {
        "tp": 8,
        "pp": 4,
        "virtual_stages": 4,
        "dp": 16,
        "ep": 8,
    }


def test_zero3_stays_quiet_where_stage_2_does_not_fit():
    s, r = _plan(r_parallelism__zero_stage=3, r_memory__fits_with_zero2=False)
    assert "zero3-unneeded" not in codes(s, r)


def test_starting_configuration_says_why_zero3_beat_a_fitting_stage_2():
    """A ZeRO-3 layout whose stage-2 twin fits but trains 9 % slower: the row keeps stage 3 and says
    it was faster, not that stage 2 does not fit (the report once said both that and, in the advice,
    'use stage 2')."""
    s, r = _plan(r_parallelism__pp=1, r_parallelism__zero_stage=3, r_memory__zero2_speed_factor=0.91)
    row = {row.setting: row for row in starting_configuration(s, r)}["zero_stage"]
    assert (row.value, row.code) == (3, "start.zero_stage.3-faster")
    assert row.params["slower_by"] == pytest.approx(0.09)
    assert "9% slower" in row.reason
    # as fast within the tie band: the advice's stage 2, not a false "does not fit"
    s, r = _plan(r_parallelism__pp=1, r_parallelism__zero_stage=3, r_memory__zero2_speed_factor=0.99)
    row = {row.setting: row for row in starting_configuration(s, r)}["zero_stage"]
    assert (row.value, row.code) == (2, "start.zero_stage.2")


def test_starting_configuration_zero_stage_follows_memory():
    s, r = _plan(r_parallelism__pp=1, r_parallelism__zero_stage=2)
    assert _settings(s, r)["zero_stage"] == 2
    s, r = _plan(r_parallelism__pp=1, r_memory__fits_with_zero2=False)
    assert _settings(s, r)["zero_stage"] == 3
    s, r = _plan(r_parallelism__pp=1)
    del r["parallelism"]["zero_stage"]  # no layout: the article's default, stage 2
    assert _settings(s, r)["zero_stage"] == 2


@pytest.mark.parametrize("chosen", ["none", "selective", "partial", "full"])
def test_starting_configuration_tells_the_layouts_story(chosen):
    """One story: the starting configuration recomputes exactly as the chosen layout does (the
    report once said 'recompute none' in the layout and 'selective' below it), and runs its ZeRO stage."""
    s, r = _plan(r_parallelism__recompute=chosen, r_parallelism__zero_stage=1)
    rows = {row.setting: row for row in starting_configuration(s, r)}
    assert rows["recompute"].value == chosen
    assert rows["recompute"].code == f"start.recompute.{chosen}"
    assert rows["zero_stage"].value == 1


def test_every_item_carries_a_code_and_params():
    s, r = _plan(r_memory__fits=False, r_parallelism__bubble_fraction=0.43, r_parallelism__micro_batches=4)
    items = advise(s, r)
    assert {a.code for a in items} >= {"memory-does-not-fit", "bubble-over-20pct"}
    for a in items:
        assert isinstance(a.params, dict) and a.suggestion_code.startswith(a.code)
    bubble = next(a for a in items if a.code == "bubble-over-20pct")
    # PP=4, 4 micro-batches (< 4 x PP): suggest 16-32, bubble (P-1)/(M+P-1) = 3/19 and 3/35
    assert bubble.suggestion_code == "bubble-over-20pct.micro-batches"
    assert bubble.params["low"] == 16 and bubble.params["high"] == 32
    assert bubble.params["bubble_low"] == pytest.approx(3 / 19)
    assert bubble.params["bubble_high"] == pytest.approx(3 / 35)
    for row in starting_configuration(s, r):
        assert row.code.startswith("start.") and isinstance(row.params, dict)


def test_starting_configuration_for_ascend():
    s, r = _plan(
        s_hardware__accelerator="ascend-910b2", r_compute__chip_family="ascend-910b", r_memory__fits=False
    )
    cfg = _settings(s, r)
    assert cfg["HCCL_BUFFSIZE"] == 256
    assert cfg["HCCL_CONNECT_TIMEOUT"] == 1200  # 64 nodes
    assert cfg["HCCL_DETERMINISTIC"] == "false"
    assert cfg["recompute"] == "full"  # it does not fit


def test_the_supernode_advice_gives_each_step_its_batch():
    """Each domain's layout rounds the global batch to its own DP: the step times compare only with
    their batches (here 24 sequences on the supernode against 32 as nodes), the speed-up is the
    tokens/s ratio."""
    s, r = _plan(r_scaleup=SUPERNODE)
    (item,) = [a for a in advise(s, r) if a.code == "supernode-pays"]
    assert "a step of 24 sequences in 1.50 s against 32 in 2.40 s" in item.message
    assert (item.params["sequences"], item.params["node_sequences"]) == (24, 32)


def test_bubble_names_the_global_batch_where_it_fixes_the_micro_batches():
    """Llama 3.1 405B at 4M tokens a step (512 sequences of 8,192) on PP 64 x DP 16 at micro-batch 1:
    32 micro-batches, all the batch gives; 4-8 x PP = 256-512 need 256 x 16 x 8,192 = 33,554,432 and
    512 x 16 x 8,192 = 67,108,864 tokens a step (by hand); Llama 3 used at most 16M (section 3.4.1)."""
    fixed = {
        "s_training__seq_len": 8192,
        "r_parallelism__bubble_fraction": 0.64,
        "r_parallelism__pp": 64,
        "r_parallelism__dp": 16,
        "r_parallelism__micro_batch_size": 1,
        "r_parallelism__micro_batches": 32,
        "r_parallelism__global_batch_tokens": 4 * 2**20,
    }
    s, r = _plan(**fixed)
    a = next(a for a in advise(s, r) if a.code == "bubble-over-20pct")
    assert a.suggestion_code == "bubble-over-20pct.global-batch"
    assert a.params["batch_low_tokens"] == 33_554_432 and a.params["batch_high_tokens"] == 67_108_864
    assert a.params["reference_batch_tokens"] == 16 * 2**20
    assert "32M-64M tokens a step" in a.suggestion and "training.global_batch_tokens" in a.suggestion
    # micro-batch 2: halving it doubles the micro-batches within the same batch, the old advice holds
    s, r = _plan(**{**fixed, "r_parallelism__micro_batch_size": 2, "r_parallelism__micro_batches": 16})
    a = next(a for a in advise(s, r) if a.code == "bubble-over-20pct")
    assert a.suggestion_code == "bubble-over-20pct.micro-batches"
