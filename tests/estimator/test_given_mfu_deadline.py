"""A deadline with its MFU given and failures counted is sized to the fewest whole nodes whose mean
wall clock, interruptions counted, fits it (plan.goodput.cards_for_deadline_with_failures), also
where the fixed point ETTR -> cards converges slowly; where no count up to the largest cluster the
network builds does, the plan takes the count of the shortest wall clock and says it misses
(deadline-missed, as the sizing without an MFU keeps its fastest size; refused as
deadline-unmet-with-failures before 2.59.0), in estimate() and in a sweep's rows alike.

The reference is the plan of the same scenario with its cards given: the goodput section's mean wall
clock at those cards, an evaluation that involves no sizing."""

from __future__ import annotations

import copy

import numpy as np
import pytest

from estimator.contract.resolve import resolve
from estimator.contract.scenario import validate_shape
from estimator.plan.batch import evaluate_columns
from estimator.plan.compose import estimate
from estimator.plan.goodput import at_cards_of

NODE = 8
# Llama 3.1 405B, 15T tokens, MFU 40% given, on H100 servers, failures counted (the default)
BASE = {
    "model": {"preset": "llama-3.1-405b"},
    "training": {"tokens": 15e12, "seq_len": 8192, "global_batch_tokens": 16 * 1024 * 1024},
    "hardware": {"accelerator": "h100-sxm", "server": "dgx-h100"},
    "efficiency": {"mfu": 0.4},
    "cluster": {"target_days": 60},
}


def _deadline(days: float) -> dict:
    doc = copy.deepcopy(BASE)
    doc["cluster"] = {"target_days": days}
    return doc


def _wall_days_at(cards: int) -> float:
    """The reference: the mean wall clock, failures counted, of the plan on `cards` cards."""
    doc = copy.deepcopy(BASE)
    doc["cluster"] = {"cards": cards}
    return float(estimate(doc)["result"]["goodput"]["wall_clock_days"])


def _wall_days_without_a_layout(cards: int) -> float:
    """The mean wall clock at a count no layout splits (the goodput the plan's section reports,
    plan.goodput.at_cards_of, at the MFU given): the one node fewer than a plan."""
    r = resolve(validate_shape(_deadline(60.0)))
    return float(at_cards_of(r, spread=False)(np.array([cards]), np.array([0.4]))["wall_s"][0]) / 86_400


# 55 days: the fixed point's last rounds move by a few nodes each; before 2.49.0 its 12 rounds
# stopped at 39,880 cards, which take 55.01 days. 51.5 days lies near the fastest the interruptions
# allow (about 51.5 days around 54,000 cards, the scan below).
@pytest.mark.parametrize("days", [55.0, 51.5])
def test_the_plan_is_the_fewest_nodes_that_meet(days):
    out = estimate(_deadline(days))["result"]
    cards = int(out["compute"]["cards"])
    assert out["compute"]["meets_target"] is True
    assert _wall_days_at(cards) <= days
    assert _wall_days_without_a_layout(cards) == pytest.approx(_wall_days_at(cards), rel=1e-9)
    assert _wall_days_without_a_layout(cards - NODE) > days  # one node fewer misses


def test_a_deadline_no_count_meets_plans_the_fastest_count_and_says_it_misses():
    # the reference scan: every 2,048 cards from 32,768 to 65,536 (the most a 64-port fabric holds)
    # takes more than 51.1 days (51.2 at the fastest since 2.82.0's faster reload, 51.4 before), so 50
    # and 45 days are out of reach
    walls = [_wall_days_at(c) for c in range(32_768, 65_537, 2_048)]
    assert min(walls) > 51.1
    plans = [estimate(_deadline(days))["result"] for days in (50.0, 45.0)]
    for res in plans:
        cards, wall = int(res["compute"]["cards"]), float(res["goodput"]["wall_clock_days"])
        assert res["compute"]["meets_target"] is False and cards <= 65_536
        assert "deadline-missed" in [w["code"] for w in res["warnings"]]
        assert wall <= min(walls)  # no count of the reference scan is faster
        for other in (cards - NODE, cards + NODE):  # nor one node more or fewer
            assert _wall_days_without_a_layout(other) >= wall * (1 - 1e-12)
    assert plans[0]["compute"]["cards"] == plans[1]["compute"]["cards"]  # the fastest, whatever the deadline
    # with the MFU given more cards never lower it, so the advice names no global batch
    (missed,) = [w for w in plans[0]["warnings"] if w["code"] == "deadline-missed"]
    assert missed["message_code"] == "deadline-missed.mfu-given" and "global batch" not in missed["message"]


def test_a_sweep_sizes_its_rows_as_estimate_does():
    days = np.array([60.0, 55.0, 51.5, 50.0])
    out = evaluate_columns(BASE, {"cluster.target_days": days})
    assert out["ok"].tolist() == [True, True, True, True]
    for i in range(4):
        planned = estimate(_deadline(float(days[i])))["result"]["compute"]["cards"]
        assert int(out["compute.cards"][i]) == planned


def test_a_row_past_the_network_keeps_its_reason_and_the_other_rows_their_plans():
    # before 2.49.0 the -1 counts of the row the network cannot build (money.pricing marks them so)
    # reached the power roll-up, which refused the whole group: every row failed with its message
    # half a day needs about 5 million cards even without interruptions: estimate()'s
    # deadline-needs-too-many-cards
    from estimator.plan.batch_reasons import TOO_LARGE

    out = evaluate_columns(BASE, {"cluster.target_days": np.array([60.0, 0.5])})
    assert out["ok"].tolist() == [True, False]
    assert out["reason_code"][1] == TOO_LARGE
    assert np.isnan(out["goodput.wall_clock_days"][1]) and np.isnan(out["compute.cards"][1])
    small = {
        "model": {"preset": "llama-3.1-8b"},
        "training": {"tokens": 1e12},
        "hardware": {"accelerator": "h100-sxm"},
        "efficiency": {"mfu": 0.4},
        "cluster": {"cards": 64},
    }
    out = evaluate_columns(small, {"cluster.cards": np.array([1024.0, 1_000_000.0])})
    assert out["ok"].tolist() == [True, False]
    assert out["error"][1].startswith("no plan: the fixed layout does not divide the cards, or the fabric")
    assert np.isnan(out["goodput.wall_clock_days"][1])
