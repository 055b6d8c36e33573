"""estimator.plan.count_curve: the report's cards chart plans every count it shows.

Hand-checkable properties: the point at the plan's own count is the plan (deadline, cards and
budget sizing); the work is fixed, so compute days · cards · MFU · peak is the training FLOP at
every count while the days with failures are not (more cards, more interruptions); a count below
the memory floor and one past what the network connects are refused with their codes; the counts
are round (whole servers, whole supernodes) and bounded."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import numpy as np
import pytest

from estimator.errors import ScenarioError
from estimator.plan.compose import estimate
from estimator.plan.count_curve import (
    NO_FABRIC,
    NO_LAYOUT,
    RATIOS,
    counts_around,
    fixed_cards_scenario,
    plan_counts,
)

LLAMA_405B = {
    "model": {"preset": "llama-3.1-405b"},
    "training": {"tokens": 1e12, "seq_len": 8192, "global_batch_tokens": 16 * 1024 * 1024},
    "hardware": {"accelerator": "h100-sxm", "server": "dgx-h100"},
    "cluster": {"cards": 256},
}
LLAMA_405B_60_DAYS = {  # bench/scenarios.py's deadline plan (about 34,560 cards)
    **LLAMA_405B,
    "training": {"tokens": 15e12, "seq_len": 8192, "global_batch_tokens": 16 * 1024 * 1024},
    "cluster": {"target_days": 60},
}
LLAMA_70B_BUDGET = {
    "model": {"preset": "llama-3.1-70b"},
    "training": {"tokens": 2e12},
    "hardware": {"accelerator": "h100-sxm"},
    "cluster": {"budget": 3e8},
}


def test_counts_around_picks_the_nearest_round_size_on_a_log_scale():
    # sizes of 8-card servers; 64 cards x RATIOS = 16, 22.4, 32, 44.8, 89.6, 128, 179.2, 256.
    # 22.4 is nearer 24 (ln 24/22.4 = 0.069) than 16 (ln 22.4/16 = 0.336); 44.8 -> 48, 89.6 -> 96,
    # 179.2 -> 192 alike; the others are sizes themselves.
    sizes = np.array([8, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384])
    assert counts_around(sizes, 64) == [16, 24, 32, 48, 64, 96, 128, 192, 256]
    # a count that is no round size (a budget's 14,568) is kept as it is, beside the round ones
    assert 72 in counts_around(sizes, 72) and len(counts_around(sizes, 72)) <= len(RATIOS) + 1
    # below the smallest size every low ratio lands on it: no repeats
    assert counts_around(sizes, 8) == [8, 16, 24, 32]  # 8 x 1.4 = 11.2 -> 8; 2 -> 16; 2.8 -> 24; 4 -> 32


def test_fixed_cards_scenario_drops_the_sizing():
    doc = fixed_cards_scenario(
        {**LLAMA_405B_60_DAYS, "cluster": {"target_days": 60, "deadline_confidence": 0.9}}, 512
    )
    assert doc["cluster"] == {"cards": 512}
    assert LLAMA_405B_60_DAYS["cluster"] == {"target_days": 60}  # the input is not changed


def _own(points, cards):
    (own,) = [p for p in points if p.cards == cards]
    return own


@pytest.mark.parametrize(
    "scenario", [LLAMA_405B, LLAMA_405B_60_DAYS, LLAMA_70B_BUDGET], ids=["cards", "deadline", "budget"]
)
def test_the_point_at_the_plans_count_is_the_plan(scenario):
    res = estimate(copy.deepcopy(scenario))["result"]
    cards = res["compute"]["cards"]
    own = _own(plan_counts(scenario, cards), cards)
    assert own.planned
    assert own.wall_clock_days == res["goodput"]["wall_clock_days_p50"]  # the headline's days with failures
    assert own.compute_days == res["compute"]["wall_clock_days"]
    assert own.mfu == res["compute"]["mfu"]
    assert own.capex_in_currency == res["cost"]["capex"]["total"]


GOLDEN = json.loads((Path(__file__).parents[1] / "golden" / "scenarios.json").read_text())


@pytest.mark.parametrize("name", sorted(GOLDEN))
def test_the_point_at_the_plans_count_is_the_plan_for_every_golden_scenario(name):
    """Supernodes, MoE, a chance of meeting the deadline, serving and a budget, a pilot: the same."""
    res = estimate(copy.deepcopy(GOLDEN[name]))["result"]
    cards = res["compute"]["cards"]
    own = _own(plan_counts(GOLDEN[name], cards), cards)
    assert (own.wall_clock_days, own.mfu, own.capex_in_currency) == (
        res["goodput"]["wall_clock_days_p50"],
        res["compute"]["mfu"],
        res["cost"]["capex"]["total"],
    )


def test_the_work_is_fixed_but_failures_grow_with_the_cards():
    res = estimate(copy.deepcopy(LLAMA_405B))["result"]
    flop, peak = res["compute"]["training_flop"], res["compute"]["peak_flops_per_card"]
    planned = [p for p in plan_counts(LLAMA_405B, 256) if p.planned]
    assert len(planned) >= 5
    for p in planned:
        # days = FLOP / (cards · peak · MFU · 86,400 s): the same FLOP at every count
        assert p.compute_days * 86_400 * p.cards * peak * p.mfu == pytest.approx(flop, rel=1e-9)
    # the MFU is each count's own layout's, not the plan's carried over
    assert len({round(p.mfu, 6) for p in planned}) > 1
    # failures counted: days with failures / days of computing = 1 / ETTR, above 1 and rising with
    # the cards (interruptions scale with the cards, each costs the whole cluster)
    stretch = [p.wall_clock_days / p.compute_days for p in planned]
    assert all(s > 1 for s in stretch)
    assert stretch == sorted(stretch) and stretch[0] < stretch[-1]
    # so days · cards is not constant (as a linear extrapolation would have it)
    card_days = [p.wall_clock_days * p.cards for p in planned]
    assert max(card_days) / min(card_days) > 1.05


def test_without_failures_the_days_are_the_days_of_computing():
    scenario = {**LLAMA_405B, "reliability": {"failures": False}}
    for p in plan_counts(scenario, 256):
        assert not p.planned or p.wall_clock_days == p.compute_days


def test_a_count_below_the_memory_floor_is_refused_with_its_reason():
    # 405B parameters x 16 bytes (BF16 weights and gradients, FP32 Adam state and master weights)
    # = 6.48 TB; 64 H100 hold 64 x 80 GB = 5.12 TB: no layout fits, however sharded
    points = plan_counts(LLAMA_405B, 256)
    low = _own(points, 64)  # 256 x 0.25
    assert not low.planned and low.refusal_code == NO_LAYOUT and low.refusal_params == {"cards": 64}
    assert low.wall_clock_days is None and low.mfu is None and low.capex_in_currency is None


def test_a_count_the_network_cannot_connect_is_refused():
    # a 3-tier fat-tree of 64-port switches connects 64^3 / 4 = 65,536 ports at most
    res = estimate(copy.deepcopy(LLAMA_405B_60_DAYS))["result"]
    cards = res["compute"]["cards"]
    points = plan_counts(LLAMA_405B_60_DAYS, cards)
    past = [p for p in points if p.cards > 65_536]
    assert past and all(p.refusal_code == NO_FABRIC and p.wall_clock_days is None for p in past)
    assert "65536" in past[0].refusal_message
    assert all(p.planned for p in points if p.cards <= cards)


def test_counts_are_whole_servers_and_bounded():
    points = plan_counts(LLAMA_405B, 256)
    assert len(points) <= len(RATIOS) + 1
    assert all(p.cards % 8 == 0 for p in points)  # DGX H100: 8 cards a server
    assert [p.cards for p in points] == sorted({p.cards for p in points})


def test_supernode_counts_are_whole_supernodes():
    scenario = {
        "model": {"preset": "llama-3.1-70b"},
        "training": {"tokens": 2e12},
        "hardware": {"accelerator": "ascend-910c"},
        "cluster": {"cards": 2304},
    }
    points = plan_counts(scenario, 2304)
    assert all(p.cards % 384 == 0 for p in points)  # CloudMatrix 384: 384 cards a supernode
    assert min(p.cards for p in points) < 2304 < max(p.cards for p in points)


def test_a_count_over_the_work_budget_is_refused_not_searched(monkeypatch):
    from estimator import limits
    from estimator.contract.resolve import resolve
    from estimator.contract.scenario import validate_shape
    from estimator.plan.count_curve import OVER_WORK_BUDGET
    from estimator.plan.work_budget import layout_candidates

    r = resolve(validate_shape(LLAMA_405B))
    own = layout_candidates(r, 256)
    monkeypatch.setattr(limits, "MAX_LAYOUT_CANDIDATES", own)  # the plan's own count is just within
    points = plan_counts(LLAMA_405B, 256)
    over = [p for p in points if layout_candidates(r, p.cards) > own]
    assert over  # more cards, more ways to split them
    assert all(p.refusal_code == OVER_WORK_BUDGET and p.refusal_params["limit"] == own for p in over)
    assert _own(points, 256).planned


def test_a_refused_pilot_refuses_the_scenario_not_each_count():
    """Found by tests/estimator/test_surfaces_agree.py: a pilot measured at 0.06x the model's
    prediction for it (3,000 against 54,330 tokens/s per card; validated runs stay above 0.65x) makes
    the plan refuse the scenario (pilot-far-below-model). The chart's counts were each refused as
    count-not-planned ("the fixed layout does not divide the cards"), a reason about the count that is
    not why; the scenario itself is refused, with the plan's code."""
    doc = {
        "model": {"preset": "llama-3.2-1b"},
        "training": {"tokens": 2e10},
        "hardware": {"accelerator": "h100-sxm"},
        "cluster": {"cards": 8},
        "calibration": {
            "pilot": {
                "cards": 8,
                "seq_len": 4096,
                "global_batch_tokens": 1048576,
                "measured_tokens_per_s_per_card": 3000.0,
            }
        },
    }
    with pytest.raises(ScenarioError) as planned:
        estimate(copy.deepcopy(doc))
    with pytest.raises(ScenarioError) as counted:
        plan_counts(doc, 8)
    assert [e.code for e in counted.value.errors] == [e.code for e in planned.value.errors]
    assert [e.code for e in planned.value.errors] == ["pilot-far-below-model"]
