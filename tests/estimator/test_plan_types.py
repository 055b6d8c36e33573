"""The typed plan (estimator.plan.result): frozen, written at the edge (plan.serialise) as exactly the
contract's JSON the golden files hold, and every float field named with its unit."""

from __future__ import annotations

import dataclasses
import inspect
import json
import types
import typing

import pytest

from estimator.cluster import planes
from estimator.plan import result as result_types
from estimator.plan import result_calibration, result_goodput, stack_sensitivity
from estimator.plan.compose import estimate, plan
from estimator.plan.serialise import to_json_dict
from tests import golden

SCENARIOS = json.loads(golden.SCENARIOS.read_text(encoding="utf-8"))
STORED = golden.load(golden.RESULTS)

# Units a float field's name may end with; a compound unit is `<unit>_per_<unit or count>`
# (tokens_per_s, flop_per_token, peak_flop_per_s_per_card). `in_currency`: money in the report's
# currency (cost.currency), which the plan does not fix.
UNITS = {
    "s",
    "h",
    "hours",
    "days",
    "bytes",
    "gib",
    "flop",
    "tokens",
    "params",
    "usd",
    "in_currency",
    "gbps",
    "w",
    "kw",
}
PER = UNITS | {"token", "card", "node", "hour", "kwh", "interruption"}

RESULT_CLASSES = [
    cls
    for module in (result_types, result_calibration, result_goodput, stack_sensitivity, planes)
    for _, cls in inspect.getmembers(module, inspect.isclass)
    if dataclasses.is_dataclass(cls) and cls.__module__ == module.__name__
]


def has_unit(name: str) -> bool:
    """`name` ends with a unit, or is `<...unit>_per_<unit>[_per_<unit>...]`."""
    head, *pers = name.split("_per_")
    if any(p not in PER for p in pers):
        return False
    return any(head == u or head.endswith("_" + u) for u in UNITS)


def dimensionless(name: str) -> bool:
    """`name`, or its last word, is in the documented list (mfu, predicted_mfu, pilot_share)."""
    return name in result_types.DIMENSIONLESS or name.rsplit("_", 1)[-1] in result_types.DIMENSIONLESS


def float_fields(cls: type) -> list[str]:
    """Names of the fields whose type is float or holds float (float | None, float | str)."""
    hints = typing.get_type_hints(cls)
    out = []
    for f in dataclasses.fields(cls):
        t = hints[f.name]
        args = (
            typing.get_args(t)
            if isinstance(t, types.UnionType) or typing.get_origin(t) is typing.Union
            else (t,)
        )
        if float in args:
            out.append(f.name)
    return out


@pytest.fixture(scope="module")
def plans():
    return {name: plan(data) for name, data in SCENARIOS.items()}


def test_the_unit_rule_accepts_units_and_refuses_bare_names():
    for name in (
        "wall_clock_days",
        "tokens_per_s",
        "flop_per_token",
        "peak_flop_per_s_per_card",
        "capex_in_currency",
    ):
        assert has_unit(name), name
    for name in ("speed", "capex", "tokens_per_step", "days_per_thing", "ratio"):
        assert not has_unit(name) and not dimensionless(name), name
    assert dimensionless("predicted_mfu") and not dimensionless("mfu_ratio")


def test_every_float_field_carries_its_unit_or_is_listed_as_dimensionless():
    assert len(RESULT_CLASSES) >= 10
    assert len(result_types.DIMENSIONLESS) <= 7  # a short list, each with its reason
    assert all(reason for reason in result_types.DIMENSIONLESS.values())
    bare = [
        f"{cls.__name__}.{name}"
        for cls in RESULT_CLASSES
        for name in float_fields(cls)
        if not has_unit(name) and not dimensionless(name)
    ]
    assert bare == []
    assert "wall_clock_days" in float_fields(result_types.ComputeSection)  # the check sees floats
    # the sections built outside plan.result are checked too (goodput, stack, scaleup and their parts)
    assert {
        result_goodput.GoodputSection,
        result_goodput.Lever,
        stack_sensitivity.StackSection,
        planes.ScaleupSection,
        planes.VersusNodes,
    } <= set(RESULT_CLASSES)
    assert "effective_training_time_share" in float_fields(result_goodput.GoodputSection)


def test_every_result_class_is_frozen_slotted_and_keyword_only():
    for cls in RESULT_CLASSES:
        params = cls.__dataclass_params__  # type: ignore[attr-defined]
        assert params.frozen, cls.__name__
        assert "__slots__" in cls.__dict__, cls.__name__
        assert all(f.kw_only for f in dataclasses.fields(cls)), cls.__name__


def test_the_typed_plan_is_frozen(plans):
    p = plans["serving-and-budget"]
    with pytest.raises(dataclasses.FrozenInstanceError):
        p.result = p.result  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        p.result.compute.cards = 1  # type: ignore[misc]
    assert p.result.budget is not None
    with pytest.raises(dataclasses.FrozenInstanceError):
        p.result.budget.within = True  # type: ignore[misc]


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_the_serialised_plan_is_the_golden_result(plans, name):
    assert golden.flatten(to_json_dict(plans[name])["result"]) == STORED[name]


def test_estimate_is_the_serialised_plan_key_order_included(plans):
    data = SCENARIOS["serving-and-budget"]
    typed, plain = to_json_dict(plans["serving-and-budget"]), estimate(data)
    assert json.dumps(typed) == json.dumps(plain)  # same keys in the same order, same values
    sections = list(plain["result"])
    assert sections[:5] == ["model", "compute", "parallelism", "memory", "layout"]
    assert sections[-4:] == ["advice", "starting_configuration", "warnings", "assumptions"]


def test_contract_names_differ_from_field_names_only_where_declared(plans):
    p = plans["dense-deadline-mfu-given"]
    compute = to_json_dict(p)["result"]["compute"]
    c = p.result.compute
    assert (
        compute["peak_flops_per_card"] == c.peak_flop_per_s_per_card == 312e12
    )  # A100 dense BF16, datasheet
    assert compute["flop_per_token_6n"] == c.six_n_flop_per_token == 6 * 13e9  # 6·N, N = 13e9 given
    assert compute["tokens"] == c.training_tokens
    assert compute["target_days"] == c.target_days and "deadline_miss_probability" in compute
    given_cards = to_json_dict(plans["dense-cards-mfu-given"])["result"]["compute"]
    assert "target_days" not in given_cards and "meets_target" not in given_cards  # omitted when None


def test_the_typed_calibration_is_written_under_the_contract_s_keys():
    """A pilot of 8 H100 at 8 s per step of 64 x 8192 tokens (65,536 tokens/s, 8,192 per card)."""
    pilot = {"cards": 8, "seq_len": 8192, "global_batch_tokens": 64 * 8192, "measured_step_time_s": 8.0}
    scenario = {
        "model": {"preset": "llama-3.1-8b"},
        "training": {"tokens": 1e12, "seq_len": 8192, "global_batch_tokens": 512 * 8192},
        "hardware": {"accelerator": "h100-sxm", "server": "dgx-h100"},
        "cluster": {"cards": 64},
        "calibration": {"pilot": pilot},
    }
    p = plan(scenario)
    typed = p.result.calibration
    assert typed is not None
    section = to_json_dict(p)["result"]["calibration"]
    assert list(section) == [
        "pilot",
        "factors",
        "carried_across_chips",
        "target_accelerator",
        "before",
        "after",
        "extrapolation",
        "band",
    ]
    assert section["pilot"]["measured_tokens_per_s_per_card"] == pytest.approx(
        64 * 8192 / 8.0 / 8
    )  # tokens per step / s / cards
    band, w = section["band"], typed.band.half_width_fraction
    assert list(band)[:5] == [
        "relative_half_width",
        "tokens_per_s_low",
        "tokens_per_s_high",
        "training_days_low",
        "training_days_high",
    ]
    tps = section["after"]["tokens_per_s"]
    assert band["tokens_per_s_low"] == pytest.approx(tps * (1 - w)) and band["relative_half_width"] == w
    assert band["training_days_high"] == pytest.approx(1e12 / (tps * (1 - w)) / 86400)
    change = {c["code"]: (c["pilot"], c["target"]) for c in section["extrapolation"]["changes"]}
    assert change["cards"] == (8, 64)
