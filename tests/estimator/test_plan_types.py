"""The typed plan (estimator.plan.result): frozen, written at the edge (plan.serialise) as exactly the
contract's JSON the golden files hold, and every float field named with its unit."""

from __future__ import annotations

import dataclasses
import inspect
import json
import types
import typing

import pytest

from estimator.plan import result as result_types
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
    "w",
    "kw",
}
PER = UNITS | {"token", "card", "node", "hour", "kwh"}

RESULT_CLASSES = [
    cls
    for _, cls in inspect.getmembers(result_types, inspect.isclass)
    if dataclasses.is_dataclass(cls) and cls.__module__ == result_types.__name__
]


def has_unit(name: str) -> bool:
    """`name` ends with a unit, or is `<...unit>_per_<unit>[_per_<unit>...]`."""
    head, *pers = name.split("_per_")
    if any(p not in PER for p in pers):
        return False
    return any(head == u or head.endswith("_" + u) for u in UNITS)


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
        assert not has_unit(name), name


def test_every_float_field_carries_its_unit_or_is_listed_as_dimensionless():
    assert len(RESULT_CLASSES) >= 10
    assert len(result_types.DIMENSIONLESS) <= 6  # a short list, each with its reason
    bare = [
        f"{cls.__name__}.{name}"
        for cls in RESULT_CLASSES
        for name in float_fields(cls)
        if not has_unit(name) and name not in result_types.DIMENSIONLESS
    ]
    assert bare == []
    assert "wall_clock_days" in float_fields(result_types.ComputeSection)  # the check sees floats


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
