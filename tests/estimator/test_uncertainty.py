"""Seeded Monte Carlo over triangular ranges (estimator/plan/uncertainty.py)."""

import numpy as np
import pytest

from estimator.errors import ScenarioError
from estimator.money.budget import triangular_ppf
from estimator.plan.uncertainty import UncertainPrices, spearman
from estimator.plan.uncertainty import monte_carlo as simulate

# The article's section 6 example with the errata applied: 6 x 70e9 x 5e11 = 2.1e23 FLOP on
# 320 TFLOPS cards at 50 % MFU -> ~507 cards for 30 days.
BASE = {"training_flop": 2.1e23, "cards": 507, "peak_flops": 320e12}
PRICE_FIELDS = set(UncertainPrices.__dataclass_fields__)


def monte_carlo(**kw):
    """monte_carlo with the price fields given flat, as the tests below read."""
    prices = UncertainPrices(**{k: v for k, v in kw.items() if k in PRICE_FIELDS})
    return simulate(prices=prices, **{k: v for k, v in kw.items() if k not in PRICE_FIELDS})


def test_point_mfu_reproduces_the_article_errata():
    u = monte_carlo(mfu=0.5, draws=100, **BASE)
    assert u.days["p10"] == u.days["p50"] == u.days["p90"]
    assert u.days["p50"] == pytest.approx(2.1e23 / (507 * 320e12 * 0.5) / 86400)
    assert u.days["p50"] == pytest.approx(29.97, abs=0.01)
    assert u.main_driver["days"] is None  # nothing varies


def test_same_seed_same_result_and_ordered_percentiles():
    kw = dict(
        mfu=(0.35, 0.45, 0.55),
        cloud_usd_per_card_hour=(1.5, 2.5, 4.0),
        capex_total_usd=(20e6, 25e6, 32e6),
        facility_w=(380e3, 400e3, 420e3),
        electricity_usd_per_kwh=(0.06, 0.08, 0.14),
        **BASE,
    )
    kw["cloud_reserved_usd_per_card_hour"] = (1.2, 1.6, 2.0)
    a, b = monte_carlo(seed=7, **kw), monte_carlo(seed=7, **kw)
    c = monte_carlo(seed=8, **kw)
    assert a.to_dict() == b.to_dict()
    assert a.days != c.days
    for part in (a.days, a.cost_owned, a.cost_cloud, a.cost_cloud_reserved):
        assert part["p10"] <= part["p50"] <= part["p90"]
    assert a.draws == 10_000 and a.seed == 7


def test_days_spread_follows_mfu():
    u = monte_carlo(mfu=(0.4, 0.5, 0.6), draws=20_000, **BASE)
    # days = k / mfu: percentiles map through the inverse of the triangular MFU quantiles
    k = 2.1e23 / (507 * 320e12) / 86400
    assert u.days["p50"] == pytest.approx(k / 0.5, rel=0.01)
    assert u.days["p10"] < k / 0.5 < u.days["p90"]
    assert u.main_driver["days"] == "mfu"


def test_main_driver_is_the_widest_input():
    wide_mfu = monte_carlo(mfu=(0.3, 0.45, 0.6), cloud_usd_per_card_hour=(2.45, 2.5, 2.55), **BASE)
    wide_price = monte_carlo(mfu=(0.49, 0.5, 0.51), cloud_usd_per_card_hour=(1.0, 2.5, 5.0), **BASE)
    assert wide_mfu.main_driver["cost_cloud"] == "mfu"
    assert wide_price.main_driver["cost_cloud"] == "cloud_price_per_card_hour"
    shares = wide_price.drivers["cost_cloud"]
    assert sum(v["share"] for v in shares.values()) == pytest.approx(1.0)
    assert shares["cloud_price_per_card_hour"]["rank_correlation"] > 0.9


def test_owned_cost_driven_by_electricity_when_it_dominates():
    u = monte_carlo(
        mfu=(0.499, 0.5, 0.501),
        capex_total_usd=1e6,
        facility_w=400e3,
        electricity_usd_per_kwh=(0.05, 0.15, 0.40),
        **BASE,
    )
    assert u.main_driver["cost_owned"] == "electricity_per_kwh"
    assert u.cost_cloud is None and u.cost_owned["p10"] < u.cost_owned["p90"]


def test_triangular_inverse_cdf():
    u = np.random.default_rng(0).random(200_000)
    x = triangular_ppf(u, 1.0, 2.0, 6.0)
    assert x.min() >= 1.0 and x.max() <= 6.0
    assert x.mean() == pytest.approx(3.0, rel=0.01)  # (a + c + b) / 3
    assert np.all(triangular_ppf(u[:5], 2.0, 2.0, 2.0) == 2.0)
    assert spearman(np.arange(10.0), np.arange(10.0) ** 3) == pytest.approx(1.0)


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"mfu": (0.5, 0.4, 0.6)}, "efficiency.mfu"),
        ({"mfu": (0.5, 0.6, 1.2)}, "efficiency.mfu"),
        ({"mfu": "high"}, "efficiency.mfu"),
        ({"mfu": 0.5, "cloud_usd_per_card_hour": (3, 2, 1)}, "cost.cloud_price_per_card_hour"),
        ({"mfu": 0.5, "draws": 0}, "uncertainty.samples"),  # the scenario field that sets draws
        ({"mfu": 0.5, "draws": 1_000_000}, "uncertainty.samples"),
    ],
)
def test_invalid_ranges_name_the_field(kwargs, field):
    with pytest.raises(ScenarioError) as e:
        monte_carlo(**BASE, **kwargs)
    assert e.value.errors[0].field == field


def test_ranks_break_ties_by_position():
    """Ranks 0..n-1; equal draws (and NaNs, sorted last) ranked in the order they were drawn, as a
    stable sort ranks them: x = [3, 1, 3, 2] sorts as x[1], x[3], x[0], x[2]."""
    from estimator.plan.uncertainty import _ranks

    assert _ranks(np.array([3.0, 1.0, 3.0, 2.0])).tolist() == [2.0, 0.0, 3.0, 1.0]
    assert _ranks(np.array([np.nan, 2.0, np.nan, 1.0])).tolist() == [2.0, 1.0, 3.0, 0.0]
    assert _ranks(np.array([0.5, 0.1, 0.9])).tolist() == [1.0, 0.0, 2.0]
    # Spearman of x with its own ties against a strictly increasing y: ranks (1, 2, 0) vs (0, 1, 2)
    # correlate (0·1 + 1·2 + 2·0 - 3·1·1) / 2 = -0.5
    assert spearman(np.array([2.0, 2.0, 1.0]), np.array([1.0, 2.0, 3.0])) == pytest.approx(-0.5)


def test_the_costs_are_paid_for_the_held_time_and_the_days_stay_the_computing():
    """held = 1/ETTR multiplies every cost draw (card-hours x price) and leaves the days: at a point
    MFU of 0.5 and $2 per card-hour, 507 cards x 29.97 days x 24 h x 2 USD x 1.25."""
    kw = dict(mfu=0.5, cloud_usd_per_card_hour=2.0, draws=100, **BASE)
    once, held = monte_carlo(**kw), monte_carlo(held=1.25, **kw)
    assert held.days == once.days
    hours = 507 * 2.1e23 / (507 * 320e12 * 0.5) / 3600
    assert held.cost_cloud["p50"] == pytest.approx(hours * 2.0 * 1.25, rel=1e-12)
    assert once.cost_cloud["p50"] == pytest.approx(hours * 2.0, rel=1e-12)
