"""Budget sizing (cluster.budget), the budget block and the probability of missing a deadline."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from estimator.contract.resolve import resolve
from estimator.contract.scenario import validate_shape
from estimator.errors import ScenarioError
from estimator.money.budget import (
    MFU_STRATA,
    capex_by_size,
    cards_for_budget,
    deadline_miss_probability,
    deadline_miss_probability_with_failures,
    largest_within,
    status,
    triangular_cdf,
    triangular_ppf,
)
from estimator.plan.compose import estimate

# The source article's example (errata applied), priced in CNY with a 50 M CNY budget (issue 11).
ARTICLE = {
    "model": {"preset": "llama-3.1-70b"},
    "training": {"tokens": 5e11},
    "hardware": {"accelerator": "ascend-910b2"},
    "cost": {"currency": "CNY"},
}
BUDGET = 50e6


def test_largest_within_takes_the_largest_affordable_size():
    sizes = np.array([8, 16, 24, 32])
    assert largest_within(sizes, np.array([1.0, 2.0, 3.0, 4.0]), 3.0) == 2  # 3.0 <= 3.0 fits
    assert largest_within(sizes, np.array([1.0, 2.0, 3.0, 4.0]), 2.99) == 1
    assert largest_within(sizes, np.array([5.0, 6.0, 7.0, 8.0]), 4.0) is None


def test_status_over_and_within():
    assert status(87.0, 50.0) == {
        "budget": 50.0,
        "capex": 87.0,
        "within": False,
        "over_by": 37.0,
        "headroom": 0.0,
        "share": 87.0 / 50.0,
    }
    assert status(40.0, 50.0)["within"] and status(40.0, 50.0)["headroom"] == 10.0


def test_triangular_cdf_by_hand():
    # Triangular(0, 0.5, 1): F(0.25) = 0.25^2 / (1 x 0.5) = 0.125; F(mode) = 0.5; F(0.75) = 1 - 0.125
    assert triangular_cdf([0.0, 0.25, 0.5, 0.75, 1.0], 0, 0.5, 1) == pytest.approx([0, 0.125, 0.5, 0.875, 1])


def test_deadline_on_the_likely_mfu_is_an_even_chance():
    """Issue 11: '80% likely between 26.3 and 34.7 days' for a 30-day deadline is about an even
    chance of missing it. With MFU +-25% around the likely value and the plan at 30.0 days at the
    likely MFU, the run is late when MFU < likely: F(mode) = 0.25 / 0.5 = 0.5."""
    assert deadline_miss_probability(30.0, 30.0, 0.39, 0.52, 0.65) == pytest.approx(0.5)
    # 24 days at the likely MFU: late only when MFU < 0.8 x likely = 0.416; (0.026^2) / (0.26 x 0.13)
    assert deadline_miss_probability(24.0, 30.0, 0.39, 0.52, 0.65) == pytest.approx(0.026**2 / (0.26 * 0.13))
    assert deadline_miss_probability(10.0, 30.0, 0.39, 0.52, 0.65) == 0.0


def test_triangular_ppf_inverts_the_cdf():
    # Triangular(0, 0.5, 1): u = 0.125 at 0.25 (above), 0.5 at the mode, 0.875 at 0.75
    assert triangular_ppf([0.0, 0.125, 0.5, 0.875, 1.0], 0, 0.5, 1) == pytest.approx([0, 0.25, 0.5, 0.75, 1])
    assert triangular_ppf([0.1, 0.9], 0.4, 0.4, 0.4) == pytest.approx([0.4, 0.4])


# 50 days of computing, checkpoints and planned stops at the likely MFU, 100 unexpected interruptions
# expected at 0.05 day (72 min) each, rate shape 4: variance 100 + 100^2 / 4 = 2,600, a = 100^2 / 2,600,
# theta = 26; the Wilson-Hilferty count quantiles a theta (1 - 1/(9a) + z / (3 sqrt a))^3
BASE, MEAN, PER, SHAPE = 50.0, 100.0, 0.05, 4.0


def _wh_days(z: float) -> float:
    a, theta = MEAN**2 / (MEAN + MEAN**2 / SHAPE), (MEAN + MEAN**2 / SHAPE) / MEAN
    return BASE + PER * a * theta * (1 - 1 / (9 * a) + z / (3 * math.sqrt(a))) ** 3


def test_deadline_risk_at_a_known_mfu_is_the_failure_spread():
    """A degenerate MFU range: the chance of missing a deadline at the shown P50 is one half, at
    the P90 one in ten, at the P10 nine in ten (the days the goodput section shows)."""
    known = (0.4, 0.4, 0.4)
    p = [
        deadline_miss_probability_with_failures(_wh_days(z), BASE, MEAN, PER, SHAPE, known)
        for z in (-1.2815515655446004, 0.0, 1.2815515655446004)
    ]
    assert p == pytest.approx([0.9, 0.5, 0.1], abs=2e-7)
    assert p[1] == pytest.approx(0.5, abs=1e-12)  # normal_sf(0) is 1/2 exactly


def test_deadline_risk_without_failures_is_the_mfu_triangle():
    # no interruption expected: late exactly when MFU < likely x days / target, the triangle's CDF
    # (the midpoint rule of MFU_STRATA equal-probability strata: within 1 / (2 K))
    for target in (40.0, 50.0, 55.0, 70.0):
        p = deadline_miss_probability_with_failures(target, BASE, 0.0, PER, SHAPE, (0.3, 0.4, 0.45))
        assert p == pytest.approx(
            deadline_miss_probability(BASE, target, 0.3, 0.4, 0.45), abs=0.5 / MFU_STRATA
        )
    # and with failures the triangle alone at the mean days is not the answer: the spread moves it
    mean_days = BASE + MEAN * PER
    both = deadline_miss_probability_with_failures(mean_days, BASE, MEAN, PER, SHAPE, (0.3, 0.4, 0.45))
    assert both != pytest.approx(deadline_miss_probability(mean_days, mean_days, 0.3, 0.4, 0.45), abs=0.01)


def test_deadline_risk_two_strata_by_hand():
    """Two strata of Triangular(0.3, 0.4, 0.5) at u = 1/4 and 3/4: MFU 0.3 + sqrt(0.005) and
    0.5 - sqrt(0.005); the solve time, the base and the mean count scale by s = 0.4 / MFU; a Poisson
    count (shape inf: a = mean, theta = 1) and P(late) = P(Z > 3 sqrt a ((x/a)^(1/3) - 1 + 1/(9a)))."""
    target, base, mean, per = 56.0, 50.0, 100.0, 0.05
    p = []
    for m in (0.3 + math.sqrt(0.005), 0.5 - math.sqrt(0.005)):
        s = 0.4 / m
        a, x = s * mean, (target - s * base) / per
        z = 3 * math.sqrt(a) * ((x / a) ** (1 / 3) - 1 + 1 / (9 * a))
        p.append(math.erfc(z / math.sqrt(2)) / 2)
    got = deadline_miss_probability_with_failures(
        target, base, mean, per, math.inf, (0.3, 0.4, 0.5), strata=2
    )
    assert got == pytest.approx(sum(p) / 2, rel=3e-7)


@given(st.floats(30.0, 90.0), st.floats(0.0, 20.0), st.floats(0.0, 500.0), st.floats(0.5, 1e3))
@settings(max_examples=60, deadline=None)
def test_deadline_risk_falls_as_the_deadline_moves_out(
    target: float, later: float, mean: float, shape: float
):
    mfu = (0.25, 0.4, 0.45)
    near = deadline_miss_probability_with_failures(target, BASE, mean, PER, shape, mfu)
    far = deadline_miss_probability_with_failures(target + later, BASE, mean, PER, shape, mfu)
    assert 0.0 <= far <= near <= 1.0


def _plan_at(doc: dict, cards: int) -> dict | None:
    """The reference: the scenario planned on `cards` cards given (None where no layout fits)."""
    try:
        return estimate({**doc, "cluster": {"cards": cards}})["result"]
    except ScenarioError:
        return None


def test_the_budget_buys_the_most_cards_whose_capex_fits():
    # 33 Atlas 800T A2 servers at ~1.49 M CNY each with their network and storage: 49.3 M <= 50 M,
    # one more server breaks the budget
    r = resolve(validate_shape({**ARTICLE, "cluster": {"budget": BUDGET}}))
    assert cards_for_budget(r, 8, None) == 264
    assert capex_by_size(r, np.array([264]), None)[0] <= BUDGET < capex_by_size(r, np.array([272]), None)[0]


def test_the_budget_plans_the_fastest_of_the_sizes_it_buys():
    """The most the budget buys, 264 cards (33 servers, 49.3 M CNY), train slower than 256 (32
    servers, the round size below: 2^5; 43.9 M CNY), whose layouts split the batch better: the plan
    takes 256 and says the budget buys up to 264. Reference: the plans with the cards given, on the
    most and on every round size from half of it up (16 to 32 servers)."""
    out = estimate({**ARTICLE, "cluster": {"budget": BUDGET}})["result"]
    cards = out["compute"]["cards"]
    assert cards == 256 and out["cost"]["capex"]["total"] <= BUDGET
    assert out["budget"]["within"] and out["budget"]["sized_by_budget"]
    days = out["goodput"]["wall_clock_days"]
    for nodes in (16, 18, 20, 24, 25, 27, 30, 33):
        other = _plan_at(ARTICLE, nodes * 8)
        assert other is None or other["goodput"]["wall_clock_days"] > days
    fewer = [w for w in out["warnings"] if w["code"] == "budget-fastest-not-most"]
    assert fewer and fewer[0]["params"] == {"most_cards": 264, "cards": 256}
    assert out["budget"]["affords"]["most_cards"] == 264
    # its days: the same work at its own cards and MFU (card-hours / 24 / cards)
    assert out["compute"]["wall_clock_days"] == pytest.approx(
        out["compute"]["accelerator_hours"] / 24 / cards
    )


def test_a_budget_whose_most_cards_hold_no_layout_buys_the_fastest_round_size_that_does():
    """400M USD buys at most 14,568 MI300X (1,821 servers) with its network and storage: 8·3·607
    cards, and a global batch of 4M tokens at 32K is 128 sequences, so DP is at most 128 and TP·PP·CP
    at least 114, a multiple of 607 past every degree: no layout. Of the round sizes below, 10,240
    cards (1,280 servers, DP 128 x 80) train fastest: more cards only add model parallelism to an 8B
    model. Reference: the plans with the cards given on the round sizes from 900 to 1,800 servers."""
    doc = {
        "model": {"preset": "llama-3.1-8b"},
        "training": {"tokens": 1e12, "seq_len": 32768},
        "hardware": {"accelerator": "mi300x"},
        "cluster": {"budget": 4e8},
    }
    assert _plan_at(doc, 14568) is None
    out = estimate(doc)["result"]
    assert out["compute"]["cards"] == 10240
    assert out["cost"]["capex"]["total"] <= 4e8
    r = resolve(validate_shape(doc))
    assert cards_for_budget(r, 8, None) == 14568  # the most the budget buys
    assert capex_by_size(r, np.array([14568 + 8]), None)[0] > 4e8
    days = out["goodput"]["wall_clock_days"]
    for nodes in (900, 960, 1000, 1024, 1080, 1152, 1200, 1296, 1350, 1440, 1500, 1536, 1600, 1728, 1800):
        other = _plan_at({k: v for k, v in doc.items() if k != "cluster"}, nodes * 8)
        assert other is None or other["goodput"]["wall_clock_days"] > days


def test_a_budget_with_an_mfu_given_plans_the_most_it_buys():
    # the same throughput per card on every size: more cards train faster (interruptions aside at
    # this scale), so the plan is the most the budget buys and no warning says otherwise
    doc = {**ARTICLE, "efficiency": {"mfu": 0.4}, "cluster": {"budget": BUDGET}}
    out = estimate(doc)["result"]
    assert out["compute"]["cards"] == 264
    assert "budget-fastest-not-most" not in [w["code"] for w in out["warnings"]]
    assert "most_cards" not in out["budget"]["affords"]


def test_over_budget_plan_says_by_how_much_and_what_the_budget_buys():
    out = estimate({**ARTICLE, "cost": {"currency": "CNY", "budget": BUDGET}, "cluster": {"target_days": 30}})
    r = out["result"]
    b = r["budget"]
    assert not b["within"]
    assert b["over_by"] == pytest.approx(r["cost"]["capex"]["total"] - BUDGET)
    by_budget = estimate({**ARTICLE, "cluster": {"budget": BUDGET}})["result"]
    assert b["affords"]["capex"] <= BUDGET
    # one number per question: what the budget buys is the budget-sized plan, cards, capex and days
    # (its days with failures counted; compute_days without them)
    assert b["affords"]["cards"] == by_budget["compute"]["cards"]
    assert b["affords"]["capex"] == by_budget["cost"]["capex"]["total"]
    assert b["affords"]["days"] == by_budget["goodput"]["wall_clock_days"]
    assert b["affords"]["compute_days"] == by_budget["compute"]["wall_clock_days"]
    # sized with the fewest cards that meet the deadline with failures counted (29.3 of 30 days with
    # engine 2.16.0); the chance of missing it counts the MFU range and the failure spread: close to
    # the triangle's CDF at likely x mean days / target (the MFU range is the wider), not equal to it
    days = r["goodput"]["wall_clock_days"]
    assert r["compute"]["wall_clock_days"] < days <= 30.0
    lo, likely, hi = r["uncertainty"]["inputs"]["mfu"]
    cdf = _triangle_cdf_by_hand(likely * days / 30.0, lo, likely, hi)
    miss = r["compute"]["deadline_miss_probability"]
    assert miss == pytest.approx(cdf, abs=0.05) and miss != pytest.approx(cdf, abs=1e-4)
    assert 0.2 < miss < 0.7  # one sizing step of slack: the miss is far from unlikely


def _triangle_cdf_by_hand(x: float, lo: float, likely: float, hi: float) -> float:
    if x <= likely:
        return (x - lo) ** 2 / ((hi - lo) * (likely - lo))
    return 1 - (hi - x) ** 2 / ((hi - lo) * (hi - likely))


def test_deadline_risk_without_failures_counted_is_the_triangle_at_the_days():
    """reliability.failures false: the run is late when MFU < likely x days / target, the triangle's
    CDF there (the formula of engine 2.45.0 and before, unchanged)."""
    out = estimate({**ARTICLE, "cluster": {"target_days": 30}, "reliability": {"failures": False}})["result"]
    days = out["compute"]["wall_clock_days"]
    lo, likely, hi = out["uncertainty"]["inputs"]["mfu"]
    cdf = _triangle_cdf_by_hand(likely * days / 30.0, lo, likely, hi)
    assert out["compute"]["deadline_miss_probability"] == pytest.approx(cdf, rel=1e-9)


def test_budget_too_small_and_two_sizings_are_rejected():
    with pytest.raises(ScenarioError) as exc:
        estimate({**ARTICLE, "cluster": {"budget": 1000}})
    assert exc.value.errors[0].field == "cluster.budget"
    with pytest.raises(ScenarioError) as exc:
        estimate({**ARTICLE, "cluster": {"budget": BUDGET, "cards": 64}})
    assert exc.value.errors[0].field == "cluster"


@pytest.mark.parametrize("sizing", [{"target_days": 30}, {"target_days": 5}, {"budget": BUDGET}])
def test_what_50m_cny_buys_is_one_figure_in_every_report(sizing):
    """Issue 20: the article's 70B example with a 50 M CNY budget said 54.8 days (30-day plan's
    block), 64.9 (5-day plan's block) and 57.5 (the budget-sized plan). Now each block is the
    budget-sized plan: 256 cards (32 Atlas 800T A2, 43.9 M CNY: the fastest of the sizes the budget
    buys, test_the_budget_plans_the_fastest_of_the_sizes_it_buys), and the same days everywhere."""
    cost = {"currency": "CNY", "budget": BUDGET}
    by_budget = estimate({**ARTICLE, "cost": cost, "cluster": {"budget": BUDGET}})["result"]
    out = estimate({**ARTICLE, "cost": cost, "cluster": sizing})["result"]
    affords = out["budget"]["affords"]
    assert affords["cards"] == 256 and affords["nodes"] == 32
    # the budget-sized plan's days with failures counted; its compute days are its own work on its
    # own cards
    assert affords["days"] == by_budget["goodput"]["wall_clock_days"]
    assert affords["compute_days"] == by_budget["compute"]["wall_clock_days"]
    assert affords["compute_days"] == pytest.approx(by_budget["compute"]["accelerator_hours"] / 24 / 256)
