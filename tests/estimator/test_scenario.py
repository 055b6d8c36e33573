"""The scenario contract: defaults filled, every rejection names the field path."""

import math

import pytest

from estimator.contract.resolve import parse_scenario
from estimator.contract.scenario import scenario_json_schema
from estimator.dotted import set_path
from estimator.errors import ScenarioError

BASE = {
    "model": {"preset": "llama-3.1-70b"},
    "training": {"tokens": 5e11, "seq_len": 4096},
    "hardware": {"accelerator": "ascend-910b2"},
    "cluster": {"target_days": 30},
}


def with_(path, value, base=BASE):
    import copy

    data = copy.deepcopy(base)
    set_path(data, path, value)
    return data


def fields_of(data):
    with pytest.raises(ScenarioError) as info:
        parse_scenario(data)
    return {e.field: e.message for e in info.value.errors}


def test_defaults_are_filled_and_normalized_is_a_fixpoint():
    s = parse_scenario(BASE)
    norm = s.normalized()
    assert norm["training"]["precision"] == "bf16"
    assert norm["training"]["global_batch_tokens"] == 4_194_304
    assert norm["network"]["oversubscription"] == 1.0
    assert norm["storage"]["checkpoint_write_s"] == 120
    assert parse_scenario(norm).normalized() == norm


@pytest.mark.parametrize(
    ("path", "value", "field"),
    [
        ("training.tokens", -5, "training.tokens"),
        ("training.tokens", 0, "training.tokens"),
        ("training.tokens", "5e11", "training.tokens"),
        ("training.tokens", 1e30, "training.tokens"),
        ("training.tokens", math.nan, "training.tokens"),
        ("training.tokens", math.inf, "training.tokens"),
        ("training.precision", "int3", "training.precision"),
        ("training.seq_len", 4096.5, "training.seq_len"),
        ("model.preset", "gpt-99", "model.preset"),
        ("hardware.accelerator", "tpu-v9", "hardware.accelerator"),
        ("hardware.accelerator", 7, "hardware.accelerator"),
        ("hardware.server", "no-such-server", "hardware.server"),
        ("hardware.overrides", {"hbm_bytes": -1}, "hardware.overrides.hbm_bytes"),
        ("hardware.overrides", {"name": 3}, "hardware.overrides.name"),
        ("parallelism.tp", 3, "parallelism.tp"),
        ("parallelism.zero_stage", 4, "parallelism.zero_stage"),
        ("parallelism.recompute", "some", "parallelism.recompute"),
        ("parallelism.ep", 2, "parallelism.ep"),
        ("efficiency.mfu", 1.5, "efficiency.mfu"),
        ("network.oversubscription", 0.5, "network.oversubscription"),
        ("cost.currency", "EUR", "cost.currency"),
        ("unknown_section", {}, "unknown_section"),
        ("training.tokenz", 5, "training.tokenz"),
    ],
)
def test_bad_values_name_their_field(path, value, field):
    errors = fields_of(with_(path, value))
    assert field in errors, errors
    assert (
        (errors[field] and errors[field][0].islower())
        or errors[field][0].isdigit()
        or errors[field][0] == "'"
    )


def test_both_cards_and_target_days_is_rejected():
    errors = fields_of(with_("cluster.cards", 512))
    assert "cluster" in errors and "exactly one" in errors["cluster"]


def test_neither_cards_nor_target_days_is_rejected():
    data = with_("cluster", {})
    assert "exactly one" in fields_of(data)["cluster"]


def test_missing_sections_are_reported_together():
    errors = fields_of({"model": {"preset": "qwen3-8b"}})
    assert {"training", "cluster"} <= set(errors)


def test_tp_must_divide_heads_of_the_preset():
    # Llama-3.1-70B: 64 heads, 8 KV heads; 48 divides neither
    assert "parallelism.tp" in fields_of(with_("parallelism.tp", 48))


def test_fixed_layout_must_divide_the_cards():
    data = with_("cluster", {"cards": 100})
    data["parallelism"] = {"tp": 8, "pp": 4}
    assert "parallelism" in fields_of(data)


def test_params_with_a_preset_is_rejected():
    assert "model.params" in fields_of(with_("model", {"preset": "qwen3-8b", "params": 8e9}))


def test_moe_expert_parallel_must_divide_experts():
    data = with_("model", {"preset": "qwen3-30b-a3b"})
    data["parallelism"] = {"ep": 3}
    assert "parallelism.ep" in fields_of(data)


def test_scenario_not_an_object():
    assert "" in fields_of([1, 2, 3])


def test_inline_accelerator_is_accepted_and_checked():
    ok = with_(
        "hardware.accelerator",
        {
            "peak_flops_bf16": 500e12,
            "hbm_bytes": 96e9,
            "hbm_bandwidth_bytes_per_s": 2e12,
            "chip_family": "hopper",
        },
    )
    parse_scenario(ok)
    bad = with_(
        "hardware.accelerator", {"peak_flops_bf16": -1, "hbm_bytes": 96e9, "hbm_bandwidth_bytes_per_s": 2e12}
    )
    assert "hardware.accelerator.peak_flops_bf16" in fields_of(bad)


@pytest.mark.parametrize("family", [None, "volta", "Hopper"])
def test_inline_accelerator_needs_a_known_chip_family(family):
    """No guess from the id: an inline chip names its generation (catalog.entries.CHIP_FAMILIES)."""
    acc = {
        "id": "h100-lookalike",
        "peak_flops_bf16": 500e12,
        "hbm_bytes": 96e9,
        "hbm_bandwidth_bytes_per_s": 2e12,
    }
    if family is not None:
        acc["chip_family"] = family
    assert list(fields_of(with_("hardware.accelerator", acc))) == ["hardware.accelerator.chip_family"]


def test_json_schema_names_the_contract_sections():
    schema = scenario_json_schema()
    assert {"model", "training", "hardware", "cluster", "parallelism", "network", "storage", "cost"} <= set(
        schema["properties"]
    )
    assert set(schema["required"]) == {"model", "training", "cluster"}


def test_estimate_shows_catalog_defaults_and_reparses_to_the_same_plan():
    from estimator.plan.compose import estimate

    first = estimate({**BASE, "efficiency": {"mfu": 0.4}})
    norm = first["scenario"]
    assert norm["training"]["seq_len"] == 4096
    assert norm["hardware"]["server"] == "atlas-800t-a2" and norm["hardware"]["cards_per_node"] == 8
    assert norm["network"]["nic_gbps"] == 200 and norm["cost"]["pue"] == 1.3
    again = estimate(norm)
    assert again["scenario"] == norm
    assert again["result"]["compute"] == first["result"]["compute"]
    assert again["result"]["cost"]["capex"] == first["result"]["cost"]["capex"]


def test_tp_must_divide_the_kv_heads_too():
    # Llama-3.1-70B: 64 heads, 8 KV heads; TP 16 divides the heads but not the KV heads
    assert "KV heads" in fields_of(with_("parallelism.tp", 16))["parallelism.tp"]
