"""One number per question, whatever path computes it: hypothesis property tests over scenarios drawn
from the catalog's presets and accelerators (Ascend 910B/910C, MoE), the three ways a cluster is sized
(cards given, a deadline with or without a chance of meeting it, a budget) and MFU given or predicted.

For each drawn scenario:
- the single plan (estimator.plan.compose.estimate, what the CLI prints as JSON) and the sweep's batch
  path on a one-row sweep of that scenario (plan.batch.evaluate_columns) give the same cards, days,
  cost, MFU and goodput (every SUMMARY_FIELDS and GOODPUT_FIELDS column, rel 1e-9), or both refuse it
  with the same codes (a row's reason_code, or a refused group's reason_errors: plan.batch_reasons);
- every row of a sweep over a numeric axis (rows sharing a group's search) or over chips, stacks,
  models or precisions (groups sharing enumerations) is its own scenario's plan;
- the cards-vs-days chart's point at the plan's card count (plan.count_curve.plan_counts) is the plan
  (its days, days of computing, MFU and capex); at cards the plan refuses, it is refused alike; and
  every other point is the scenario's plan at that count.
The API's JSON and the stored report's chart: tests/web/test_surfaces_agree.py.
Bounded: 25 examples each, no deadline, derandomized (about 15 s); AGREE_EXAMPLES=300 hunts with
random draws. Marked fuzz, as the project's other property tests over the API and the pages.
"""

from __future__ import annotations

import copy
import json
import math
import os
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from estimator.errors import ScenarioError
from estimator.plan import batch_reasons, count_curve
from estimator.plan.batch import GOODPUT_FIELDS, SUMMARY_FIELDS, evaluate_columns
from estimator.plan.compose import estimate
from estimator.plan.count_curve import plan_counts

pytestmark = pytest.mark.fuzz

SETTINGS = settings(
    max_examples=int(os.environ.get("AGREE_EXAMPLES", "25")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
    derandomize=not os.environ.get("AGREE_EXAMPLES"),
)
REL = 1e-9

DENSE = ["llama-3.2-1b", "llama-3.1-8b", "qwen3-8b", "llama-3.1-70b", "megatron-gpt-7.5b"]
MOE = ["qwen3-30b-a3b", "deepseek-v3", "qwen3-235b-a22b", "pangu-ultra-moe-718b"]
CHIPS = [
    "h100-sxm",
    "a100-sxm-80gb",
    "h800-sxm",
    "b200",
    "mi300x",
    "ascend-910b2",
    "ascend-910b3",
    "ascend-910c",
]

# the figures the plan and its sweep row must agree on (paths in the plan's result = batch columns)
FIGURES = (*SUMMARY_FIELDS, *GOODPUT_FIELDS)


# a single plan's refusal codes that answer a row's question more precisely (plan.batch_reasons)
# (plan.refusal: why no layout holds the cards; the batch does not search for why)
FINER = {
    "no-feasible-layout": {
        "cards-split-into-no-layout",
        "budget-cards-hold-no-layout",
        "no-possible-layout",
        "fixed-layout-does-not-fit",
    },
    # the fixed layout does not divide the row's cards (the contract's), or the fabric is too large
    # (design_fabric's refusal, which has no code): the batch does not tell the two apart
    "layout-or-fabric-refuses-cards": {"fixed-layout-cards", ""},
}


def row_codes(row: dict[str, Any]) -> list[str]:
    """The row's reason codes (plan.batch_reasons): a group the core refused as a whole keeps its
    FieldErrors (reason_errors), a row of a planned group its one reason_code."""
    if row.get(batch_reasons.REASON_ERRORS_FIELD):
        return sorted(e.get("code", "") for e in json.loads(row[batch_reasons.REASON_ERRORS_FIELD]))
    return [str(row[batch_reasons.REASON_CODE_FIELD])]


def same_refusal(row: dict[str, Any], refusal: ScenarioError) -> bool:
    """The row refuses what the plan refuses, with its codes (or the coarser code of FINER)."""
    got, want = row_codes(row), sorted(e.code for e in refusal.errors)
    return got == want or (len(got) == len(want) == 1 and want[0] in FINER.get(got[0], ()))


def _plan_code(refusal: ScenarioError) -> str:
    codes = {e.code for e in refusal.errors}
    return codes.pop() if len(codes) == 1 else f"(several: {sorted(codes)})"


# what else a scenario may say (each a merge into its sections)
EXTRAS: list[dict[str, dict[str, Any]]] = [
    {},
    {},
    {"reliability": {"failures": False}},
    {"reliability": {"spare_nodes": 2, "rate_scale": 3.0}},
    {"reliability": {"rate_scale": 100.0, "detection_s": 3000.0}},
    {"reliability": {"checkpoint_interval_s": 600.0}},
    {"training": {"stack_overrides": {"checkpoint_mode": "async"}}},
    {"training": {"global_batch_tokens": 16 * 1048576, "grad_dtype": "bf16"}},
    {"training": {"moe_imbalance": 1.5, "flash_attention": False}},
    {"efficiency": {"mfu_range": (0.2, 0.5)}},
    {"cost": {"budget": 3e7, "utilization": 0.6, "depreciation_years": 3}},
    {"cost": {"electricity_per_kwh": 0.2, "pue": 1.5, "cloud_price_per_card_hour": 4.0}},
    {"serving": {"context_len": 8192}},
    {"hardware": {"cards_per_node": 16}},
    {"uncertainty": {"samples": 500, "seed": 7}},
    {"cost": {"usd_to_cny": 7.9, "cloud_reserved_price_per_card_hour": 1.2}},
    {
        "calibration": {
            "pilot": {
                "cards": 8,
                "seq_len": 4096,
                "global_batch_tokens": 1048576,
                "measured_tokens_per_s_per_card": 3000.0,
            }
        }
    },
    {
        "calibration": {
            "pilot": {
                "cards": 16,
                "seq_len": 4096,
                "global_batch_tokens": 2097152,
                "measured_step_time_s": 4.0,
                "measured_comm_wait_share": 0.2,
            }
        }
    },
]


MODES = ("cards", "deadline", "confidence", "budget")


@st.composite
def scenarios(draw: st.DrawFn, modes: tuple[str, ...] = MODES) -> dict[str, Any]:
    preset = draw(st.sampled_from(DENSE + MOE + ["13b-params"]))
    chip = draw(st.sampled_from(CHIPS))
    tokens = draw(st.sampled_from([2e10, 1e11, 1e12, 1e13, 1e14]))
    seq_len = draw(st.sampled_from([2048, 4096, 32768]))
    precision = draw(st.sampled_from(["bf16", "fp8"]))
    mode = draw(st.sampled_from(modes))
    cluster: dict[str, Any]
    if mode == "cards":
        cluster = {"cards": draw(st.sampled_from([8, 16, 64, 256, 1024, 8192]))}
    elif mode == "deadline":
        cluster = {"target_days": draw(st.sampled_from([0.5, 7, 30, 90]))}
    elif mode == "confidence":
        confidence = draw(st.sampled_from([0.5, 0.9, 0.99]))
        cluster = {"target_days": draw(st.sampled_from([0.5, 7, 30, 90])), "deadline_confidence": confidence}
    else:
        cluster = {"budget": draw(st.sampled_from([2e6, 2e7, 2e8]))}
    doc: dict[str, Any] = {
        "model": {"params": 13e9} if preset == "13b-params" else {"preset": preset},
        "training": {"tokens": tokens, "seq_len": seq_len, "precision": precision},
        "hardware": {"accelerator": chip},
        "cluster": cluster,
    }
    if draw(st.booleans()):
        doc["efficiency"] = {"mfu": draw(st.sampled_from([0.25, 0.4]))}
    if draw(st.booleans()):
        doc["cost"] = {"currency": draw(st.sampled_from(["CNY", "USD"]))}
    if chip == "ascend-910c" and draw(st.booleans()):
        doc["hardware"]["server"] = "atlas-900-a3-node"  # the CloudMatrix supernode
    doc["network"] = draw(
        st.sampled_from([{}, {"oversubscription": 2, "rail_optimized": False}, {"storage_network": True}])
    )
    fixed = draw(st.sampled_from([{}, {}, {"tp": 2}, {"tp": 8, "pp": 2}, {"ep": 8}]))
    if fixed:
        doc["parallelism"] = fixed
    for section, values in draw(st.sampled_from(EXTRAS)).items():
        doc.setdefault(section, {}).update(copy.deepcopy(values))
    stack = draw(
        st.sampled_from([None, "megatron-core-2024", "pytorch-fsdp2", "deepseek-dualpipe", "mindspeed-2025"])
    )
    if stack is not None:
        doc["training"]["stack"] = stack
    event(f"{mode}, mfu {'given' if 'efficiency' in doc else 'predicted'}")
    return doc


def _get(result: dict[str, Any], path: str) -> Any:
    value: Any = result
    for key in path.split("."):
        value = value.get(key) if isinstance(value, dict) else None
    return value


def planned(doc: dict[str, Any]) -> tuple[dict[str, Any] | None, ScenarioError | None]:
    try:
        return estimate(copy.deepcopy(doc))["result"], None
    except ScenarioError as exc:
        return None, exc


def one_row(doc: dict[str, Any]) -> dict[str, Any]:
    """The sweep's batch path on a one-row sweep of `doc` (its tokens as the one axis)."""
    out = evaluate_columns(copy.deepcopy(doc), {"training.tokens": np.array([doc["training"]["tokens"]])})
    return {k: (v[0] if len(v) else None) for k, v in out.items()}


def _close(a: Any, b: Any) -> bool:
    a = math.inf if a is None else float(a)
    b = math.inf if b is None else float(b)
    return a == b or math.isclose(a, b, rel_tol=REL)


@SETTINGS
@given(scenarios())
def test_the_plan_and_its_one_row_sweep_agree(doc):
    result, refusal = planned(doc)
    row = one_row(doc)
    if result is None:
        event(f"refused: {_plan_code(refusal)}")
        assert not row["ok"], (doc, str(refusal))
        assert same_refusal(row, refusal), (doc, row_codes(row), str(refusal))
        return
    event("planned")
    assert row["ok"], (doc, row["error"])
    moved = {f: (_get(result, f), row[f]) for f in FIGURES if not _close(_get(result, f), row[f])}
    assert moved == {}, doc


@SETTINGS
@given(scenarios())
def test_the_charts_point_at_the_plans_count_is_the_plan(doc):
    result, _ = planned(doc)
    if result is None:
        event("refused")
        return
    cards = result["compute"]["cards"]
    (own,) = [p for p in plan_counts(copy.deepcopy(doc), cards) if p.cards == cards]
    assert own.planned, (doc, own)
    got = (own.wall_clock_days, own.compute_days, own.mfu, own.capex_in_currency)
    want = (
        result["goodput"]["wall_clock_days_p50"],
        result["compute"]["wall_clock_days"],
        result["compute"]["mfu"],
        result["cost"]["capex"]["total"],
    )
    assert all(_close(a, b) for a, b in zip(got, want, strict=True)), (doc, got, want)


# a single plan's refusal of its given cards -> the chart's code for a point at those cards
# (plan.count_curve: the batch's reason, by its sentence)
COUNT_CODES = {
    **dict.fromkeys(FINER["no-feasible-layout"] | {"no-feasible-layout"}, count_curve.NO_LAYOUT),
    "run-never-finishes": count_curve.NEVER_FINISHES,
    "fixed-layout-cards": count_curve.NOT_PLANNED,
    "": count_curve.NO_FABRIC,  # design_fabric's refusal has no code of its own
}


def _counts(doc: dict[str, Any], cards: int) -> tuple[list[count_curve.CountPoint], ScenarioError | None]:
    try:
        return plan_counts(copy.deepcopy(doc), cards), None
    except ScenarioError as exc:
        return [], exc


@SETTINGS
@given(scenarios(modes=("cards",)))
def test_the_charts_point_at_cards_the_plan_refuses_is_refused_alike(doc):
    _, refusal = planned(doc)
    if refusal is None:
        event("planned")
        return
    cards = doc["cluster"]["cards"]
    points, whole = _counts(doc, cards)
    if whole is not None:  # the scenario itself is refused: the same refusal
        event(f"both refuse the scenario: {_plan_code(whole)}")
        assert sorted(e.code for e in whole.errors) == sorted(e.code for e in refusal.errors), doc
        return
    (own,) = [p for p in points if p.cards == cards]
    event(f"refused point: {own.refusal_code}")
    assert own.refusal_code == COUNT_CODES.get(_plan_code(refusal), "?"), (doc, own, str(refusal))


# numeric sweep axes (plan.batch.NUMERIC_FIELDS: evaluated as arrays within one group) and values
AXES = {
    "training.tokens": [2e10, 3e11, 5e12],
    "efficiency.mfu": [0.2, 0.35, 0.5],
    "cost.electricity_per_kwh": [0.03, 0.1, 0.3],
    "cost.utilization": [0.5, 0.9],
    "cost.server_price": [150000.0, 400000.0],
    "cluster.cards": [16, 64, 512],
    "cluster.target_days": [3, 20, 60],
}
# the sizing field a row's value replaces (plan.batch: a row's cards drop the base's deadline and back)
REPLACES = {"cluster.cards": "target_days", "cluster.target_days": "cards"}


@SETTINGS
@given(scenarios(), st.sampled_from(sorted(AXES)), st.data())
def test_every_row_of_a_sweep_is_the_plan_of_its_scenario(doc, axis, data):
    """Rows of one group share its search and sizes: each must still be its own scenario's plan."""
    values = data.draw(st.lists(st.sampled_from(AXES[axis]), min_size=2, max_size=3, unique=True))
    out = evaluate_columns(copy.deepcopy(doc), {axis: np.array(values)})
    for i, value in enumerate(values):
        row_doc = copy.deepcopy(doc)
        section, key = axis.split(".")
        row_doc.setdefault(section, {})[key] = value
        row_doc[section].pop(REPLACES.get(axis, ""), None)
        result, refusal = planned(row_doc)
        row = {k: v[i] for k, v in out.items()}
        if result is None:
            assert not row["ok"], (row_doc, str(refusal))
            assert same_refusal(row, refusal), (row_doc, row_codes(row), str(refusal))
            continue
        assert row["ok"], (row_doc, row["error"])
        moved = {f: (_get(result, f), row[f]) for f in FIGURES if not _close(_get(result, f), row[f])}
        assert moved == {}, (json.dumps(row_doc), axis, values)


# structural sweep axes (each value a group of its own; groups of one model share enumerations)
STRUCTURAL = {
    "hardware.accelerator": CHIPS,
    "training.stack": ["megatron-core-2025", "megatron-core-2024", "pytorch-fsdp2", "mindspeed-2025"],
    "model.preset": DENSE + MOE,
    "training.precision": ["bf16", "fp8"],
}


@SETTINGS
@given(scenarios(), st.sampled_from(sorted(STRUCTURAL)), st.data())
def test_every_row_of_a_sweep_over_groups_is_the_plan_of_its_scenario(doc, axis, data):
    """Groups that share an enumeration or memory across chips, stacks or models: each row is still its
    own scenario's plan, or refused with its codes."""
    values = data.draw(st.lists(st.sampled_from(STRUCTURAL[axis]), min_size=2, max_size=3, unique=True))
    out = evaluate_columns(copy.deepcopy(doc), {axis: np.array(values, dtype=object)})
    for i, value in enumerate(values):
        row_doc = copy.deepcopy(doc)
        section, key = axis.split(".")
        row_doc.setdefault(section, {})[key] = value
        result, refusal = planned(row_doc)
        row = {k: v[i] for k, v in out.items()}
        if result is None:
            assert not row["ok"], (row_doc, str(refusal))
            assert same_refusal(row, refusal), (row_doc, row_codes(row), str(refusal))
            continue
        assert row["ok"], (row_doc, row["error"])
        moved = {f: (_get(result, f), row[f]) for f in FIGURES if not _close(_get(result, f), row[f])}
        assert moved == {}, (json.dumps(row_doc), axis, values)


@SETTINGS
@given(scenarios())
def test_every_point_of_the_chart_is_the_plan_at_its_count(doc):
    """Not only the plan's own count: each point is the scenario planned at that count (cluster.cards
    set, no deadline or budget: count_curve.fixed_cards_scenario), or refused where that plan is."""
    result, _ = planned(doc)
    if result is None:
        return
    points, whole = _counts(doc, result["compute"]["cards"])
    assert whole is None, (doc, str(whole))
    for p in points:
        if p.refusal_code == count_curve.OVER_WORK_BUDGET:
            continue  # not searched (the CLI's and the API's work budget refuses it too)
        at, refusal = planned(count_curve.fixed_cards_scenario(doc, p.cards))
        if at is None:
            assert not p.planned, (doc, p.cards, str(refusal))
            assert p.refusal_code == COUNT_CODES.get(_plan_code(refusal), "?"), (doc, p, str(refusal))
            continue
        assert p.planned, (doc, p)
        got = (p.wall_clock_days, p.compute_days, p.mfu, p.capex_in_currency)
        want = (
            at["goodput"]["wall_clock_days_p50"],
            at["compute"]["wall_clock_days"],
            at["compute"]["mfu"],
            at["cost"]["capex"]["total"],
        )
        assert all(_close(a, b) for a, b in zip(got, want, strict=True)), (doc, p.cards, got, want)
