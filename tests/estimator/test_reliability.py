"""Failures, checkpoints and restarts: the formulas by hand (Young 1974, Daly 2006) and the catalog rates."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from estimator.catalog.failures import failures
from estimator.cluster import reliability as rel


def test_young_interval_by_hand() -> None:
    # delta = 100 s, M = 20,000 s: sqrt(2 x 100 x 20,000) = sqrt(4e6) = 2,000 s
    assert float(rel.young_interval(100.0, 20_000.0)) == pytest.approx(2000.0)


def test_daly_interval_by_hand() -> None:
    # x = delta / 2M = 100 / 40,000 = 0.0025, sqrt(x) = 0.05:
    # 2,000 x (1 + 0.05/3 + 0.0025/9) - 100 = 2,000 x 1.0169444 - 100 = 1,933.889 s
    assert float(rel.daly_interval(100.0, 20_000.0)) == pytest.approx(1933.889, rel=1e-6)
    # delta >= 2M: checkpoint once per mean time between interruptions
    assert float(rel.daly_interval(50_000.0, 20_000.0)) == pytest.approx(20_000.0)


def test_daly_wall_time_by_hand() -> None:
    # T_s = 1e6 s, tau = 2,000, delta = 100, R = 600, M = 20,000:
    # 20,000 x e^0.03 x (e^0.105 - 1) x 500 = 1e7 x 1.0304545 x 0.1107106 = 1,140,820 s
    assert float(rel.daly_wall_time(1e6, 2000.0, 100.0, 600.0, 20_000.0)) == pytest.approx(
        1.14082e6, rel=1e-5
    )


def test_first_order_wall_time_by_hand_and_near_daly() -> None:
    # lost per interruption = (2,000 + 100) / 2 + 600 = 1,650 s; T_w = 1e6 x 1.05 / (1 - 1,650 / 20,000)
    # = 1,050,000 / 0.9175 = 1,144,414 s; checkpoints 1e6 x 100 / 2,000 = 50,000 s
    lost = float(rel.rework_s("sync", 2000.0, 100.0, 0.0)) + 600.0
    assert lost == pytest.approx(1650.0)
    w = rel.wall_time(1e6, 2000.0, 100.0, 1 / 20_000, lost, 0.0, 0.0)
    assert float(w["wall"]) == pytest.approx(1_144_414.2, rel=1e-6)
    assert float(w["checkpoints"]) == pytest.approx(50_000.0)
    assert float(w["interruptions"]) == pytest.approx(1_144_414.2 * 1650 / 20_000, rel=1e-6)
    # the first-order model stays within 0.5 % of Daly's complete one at these overheads
    assert float(w["wall"]) / 1.14082e6 == pytest.approx(1.0, abs=0.005)


def test_never_finishing_run_is_infinite() -> None:
    # an interruption every 1,000 s that costs 1,650 s: no progress
    w = rel.wall_time(1e6, 2000.0, 100.0, 1 / 1000, 1650.0, 0.0, 0.0)
    assert math.isinf(float(w["wall"]))


def test_background_checkpoint_rework_by_hand() -> None:
    # a failure during the 100 s background write falls back one more interval:
    # (1/2000)[2000 x 100 + 100^2/2 + 2000^2/2 - 100^2/2] = 100 + 1,000; plus half the 1 s stall
    assert float(rel.rework_s("async", 2000.0, 1.0, 100.0)) == pytest.approx(1100.5)


def test_checkpoint_times_by_mode() -> None:
    # 1 TB at 10 GB/s write, 20 GB/s read; 1,000 cards copy 1 GB each at 20 GB/s; 125 nodes at 25 GB/s
    args = (1e12, 1000, 125, 10e9, 20e9, 20e9, 25e9)
    sync, asyn, mem = (rel.checkpoint_times(m, *args) for m in ("sync", "async", "in-memory"))
    assert (float(sync["stall"]), float(sync["lag"]), float(sync["reload"])) == pytest.approx(
        (100.0, 0.0, 50.0)
    )
    assert (float(asyn["stall"]), float(asyn["lag"])) == pytest.approx((0.05, 100.0))
    # one node's 8 GB shard to a peer at 25 GB/s
    assert (float(mem["lag"]), float(mem["reload"])) == pytest.approx((0.32, 0.32))
    with pytest.raises(ValueError, match="checkpoint mode"):
        rel.checkpoint_times("tape", *args)


def test_count_quantiles_poisson_limit() -> None:
    # mean 100, rate known exactly (shape inf): Gamma(100, 1); Wilson-Hilferty
    # 100 (1 - 1/900 +/- 1.28155/30)^3 = 100 x 1.041607^3 = 113.01 and 100 x 0.956171^3 = 87.42
    # (Poisson P10/P90 of mean 100: 87 and 113)
    p10, p50, p90 = rel.count_quantiles(100.0, math.inf)
    assert float(p90) == pytest.approx(113.01, abs=0.05)
    assert float(p10) == pytest.approx(87.42, abs=0.05)
    # the median: 100 (1 - 1/900)^3 = 99.667; the Gamma(100) median's expansion 100 - 1/3 + 8/40500
    assert float(p50) == pytest.approx(99.6669, abs=5e-4)


def test_a_skewed_count_has_its_median_below_the_mean() -> None:
    # mean 10, shape 2: variance 10 + 100/2 = 60, Gamma a = 100/60 = 5/3, theta = 6;
    # median 10 (1 - 1/15)^3 = 10 x 0.81304 = 8.130 (the mean - theta/3 = 8 to first order)
    _p10, p50, _p90 = rel.count_quantiles(10.0, 2.0)
    assert float(p50) == pytest.approx(8.1304, abs=5e-4)


def test_normal_sf_against_the_error_function() -> None:
    # P(Z > z) = erfc(z / sqrt 2) / 2 (math.erfc); Numerical Recipes' fit: fractional error < 1.2e-7
    z = np.linspace(-8.0, 8.0, 161)
    exact = np.array([math.erfc(v / math.sqrt(2.0)) / 2.0 for v in z])
    assert rel.normal_sf(z) == pytest.approx(exact, rel=2e-7)
    # the P90 quantile z = 1.28155: 0.1; z = 0: 0.5
    assert float(rel.normal_sf(rel.Z_P90)) == pytest.approx(0.1, abs=1e-7)
    assert float(rel.normal_sf(0.0)) == pytest.approx(0.5, abs=1e-7)


def test_horner_sums_the_polynomial_elementwise() -> None:
    # 1 + 2t + 3t^2 at t = 0, 2, -1: 1, 17, 2; a scalar stays a scalar
    assert rel._horner(np.array([0.0, 2.0, -1.0]), (1.0, 2.0, 3.0)).tolist() == [1.0, 17.0, 2.0]
    assert float(rel._horner(np.float64(0.5), (-1.0, 0.0, 4.0))) == 0.0


def test_count_exceedance_inverts_the_wilson_hilferty_quantiles() -> None:
    # mean 10, shape 2: a = 5/3, theta = 6 (above); WH quantiles by hand:
    # P50 = 10 (1 - 1/15)^3 = 8.1304, P90 = 10 (1 - 1/15 + 1.28155 / (3 sqrt(5/3)))^3
    a, theta = 5.0 / 3.0, 6.0
    p50 = a * theta * (1 - 1 / (9 * a)) ** 3
    p90 = a * theta * (1 - 1 / (9 * a) + rel.Z_P90 / (3 * math.sqrt(a))) ** 3
    p10 = a * theta * (1 - 1 / (9 * a) - rel.Z_P90 / (3 * math.sqrt(a))) ** 3
    tail = rel.count_exceedance([p10, p50, p90], 10.0, 2.0)
    assert tail == pytest.approx([0.9, 0.5, 0.1], abs=2e-7)
    # below 0 the count always exceeds; no interruptions expected: never above 0
    assert rel.count_exceedance([-1.0, 0.0, 3.0], 0.0, 2.0) == pytest.approx([1.0, 0.0, 0.0])
    assert float(rel.count_exceedance(-0.5, 10.0, 2.0)) == 1.0


@given(
    st.floats(0.01, 1e5),
    st.floats(0.1, 1e4),
    st.floats(0.0, 3.0),
    st.floats(0.0, 3.0),
)
@settings(max_examples=200, deadline=None)
def test_count_exceedance_falls_as_the_count_allowed_grows(
    mean: float, shape: float, x: float, dx: float
) -> None:
    lo, hi = rel.count_exceedance([x * mean, (x + dx) * mean], mean, shape)
    assert 0.0 <= hi <= lo <= 1.0


def test_spare_coverage_by_hand() -> None:
    # nodes down ~ Poisson(0.5): P(0) = e^-0.5 = 0.6065; P(<2) = 1.5 e^-0.5 = 0.9098
    assert float(rel.spare_coverage(1, 0.5)) == pytest.approx(0.60653, rel=1e-4)
    assert float(rel.spare_coverage(2, 0.5)) == pytest.approx(0.90980, rel=1e-4)
    assert float(rel.spare_coverage(0, 0.5)) == 0.0
    # no spare: nothing covered, in the shape of the means (and of a spares array mixing 0 and 1)
    none = rel.spare_coverage(0, np.array([0.5, 2.0, 0.0]))
    assert none.shape == (3,) and none.tolist() == [0.0, 0.0, 0.0]
    mixed = rel.spare_coverage(np.array([0, 1]), np.array([[0.5], [2.0]]))
    assert mixed.shape == (2, 2) and mixed[:, 0].tolist() == [0.0, 0.0]
    assert mixed[:, 1] == pytest.approx([math.exp(-0.5), math.exp(-2.0)])


def test_llama3_rates_are_table5_per_unit_hour() -> None:
    fleet = failures().fleets["llama3-405b-h100"]
    assert sum(fleet.counts.values()) == 419  # Table 5's unexpected interruptions
    # 196 accelerator interruptions on 16,384 cards over 54 x 24 = 1,296 h
    assert fleet.rate_per_unit_hour("accelerator") == pytest.approx(196 / (16384 * 1296))
    assert fleet.rate_per_unit_hour("host") == pytest.approx(21 / (2048 * 1296))
    assert fleet.planned_per_hour == pytest.approx(47 / 1296)


def test_rates_scale_with_the_cluster() -> None:
    fleet = failures().fleets["llama3-405b-h100"]
    rates = {c: fleet.rate_per_unit_hour(c) for c in fleet.counts}
    half = rel.interruption_rate_per_s({"card": 8192, "node": 1024, "switch": 640}, rates, fleet.per)
    full = rel.interruption_rate_per_s({"card": 16384, "node": 2048, "switch": 1280}, rates, fleet.per)
    # the whole Llama 3 cluster over 1,296 h gives back the table's 419; half of it half as many
    assert sum(float(v) for v in full.values()) * 1296 * 3600 == pytest.approx(419)
    assert sum(float(v) for v in half.values()) * 1296 * 3600 == pytest.approx(209.5)


@settings(max_examples=200, deadline=None)
@given(
    delta=st.floats(1.0, 600.0),
    mtbi=st.floats(3600.0, 1e7),
    restart=st.floats(0.0, 3600.0),
    mode=st.sampled_from(rel.CHECKPOINT_MODES),
    lag=st.floats(0.0, 300.0),
)
def test_wall_time_invariants(delta: float, mtbi: float, restart: float, mode: str, lag: float) -> None:
    tau = max(float(rel.daly_interval(delta, mtbi)), lag)
    assert 0 < tau <= mtbi
    lost = float(rel.rework_s(mode, tau, delta, lag)) + restart
    w = rel.wall_time(1e6, tau, delta, 1 / mtbi, lost, 0.0, 0.0)
    wall = float(w["wall"])
    if float(w["progress"]) > rel.MIN_PROGRESS:
        # never faster than computing, and the parts add up to the whole
        assert wall >= 1e6
        assert wall == pytest.approx(1e6 + float(w["checkpoints"]) + float(w["interruptions"]), rel=1e-9)
        p10, p50, p90 = rel.count_quantiles(wall / mtbi, 50.0)
        assert float(p10) <= float(p50) <= wall / mtbi <= float(p90) + 1e-9
    else:
        assert math.isinf(wall)
