"""Uncertainty of the run's duration and cost: seeded, vectorized Monte Carlo over triangular ranges.

A range is `(low, likely, high)` (a triangular distribution, the usual three-point estimate; a plain
number is a fixed value). One call draws every uncertain input at once (`draws` x inputs uniform
numbers from `numpy.random.default_rng(seed)`, turned into triangular draws by the inverse CDF), so
the same seed gives the same result and 10,000 draws cost one array operation.

Model per draw (the same formulas as compute/cost; docs/architecture.md#formulas):

    days        = training FLOP / (cards x peak FLOP/s x MFU) / 86,400 s
    card-hours  = cards x days x 24
    cloud cost  = card-hours x cloud price (USD per card-hour; on demand and, if given, reserved)
    owned cost  = card-hours x owned USD per card-hour (estimator.money.cost.owned_usd_per_card_hour:
                  capex / depreciation hours + facility power x electricity price + colo)

Reported: P10/P50/P90 (numpy percentiles, so P10 <= P50 <= P90) of days and of both costs, and
which input drives the spread: Spearman rank correlation of every uncertain input with the output
(rank-based, so it handles the 1/MFU non-linearity), and a share = rho^2 / sum(rho^2). Inputs are
drawn independently, so the shares approximate each input's share of the output variance (the
standardized-regression view of sensitivity; Saltelli et al., "Global Sensitivity Analysis: The
Primer", 2008, ch. 1). The main driver is the input with the largest |rho|.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from estimator import limits
from estimator.arrays import percentiles
from estimator.errors import ScenarioError
from estimator.money.budget import triangular_ppf
from estimator.money.cost import (
    DEFAULT_DEPRECIATION_YEARS,
    DEFAULT_ELECTRICITY_USD_PER_KWH,
    exchange_rate,
    owned_usd_per_card_hour,
)

Range = float | tuple[float, float, float]
DEFAULT_DRAWS = 10_000
DEFAULT_SEED = 0
SECONDS_PER_DAY = 86_400.0


def as_range(value: Range, field: str) -> tuple[float, float, float]:
    """A number or (low, likely, high) -> validated (low, likely, high); field names the error."""
    if isinstance(value, (int, float)):
        v = float(value)
        return v, v, v
    if isinstance(value, (str, bytes)):
        raise ScenarioError("Give a number or a [low, likely, high] triple.", field)
    try:
        low, likely, high = (float(x) for x in value)
    except (TypeError, ValueError) as exc:
        raise ScenarioError("Give a number or a [low, likely, high] triple.", field) from exc
    if not low <= likely <= high:
        raise ScenarioError("A range must satisfy low <= likely <= high.", field)
    return low, likely, high


def triangle_from_quantiles(p10: float, mode: float, p90: float) -> tuple[float, float, float]:
    """(low, mode, high) of the triangular distribution whose 10th and 90th percentiles are `p10` and
    `p90` (same unit as the inputs; the mode is clamped into [p10, p90]).

    With L = mode - low and R = high - mode, the triangular CDF gives for P10 and P90 on either side of
    the mode (Johnson, Kotz & Balakrishnan, "Continuous Univariate Distributions", vol. 2, ch. 26):
        mode - p10 = L - sqrt(0.1 L (L + R)),    p90 - mode = R - sqrt(0.1 R (L + R)),
    solved by fixed-point iteration (a contraction: each square-root term moves by at most ~0.5 of a
    step in L or R). At mode = p10 the solution has F(mode) = 0.1 exactly, so the equations hold there."""
    if not p10 <= p90:
        raise ValueError("p10 must not exceed p90")
    c = min(max(mode, p10), p90)
    if p90 == p10:
        return p10, c, p90
    left, right = c - p10, p90 - c
    L, R = 2.0 * left + 1e-12, 2.0 * right + 1e-12
    for _ in range(200):
        L_new = left + math.sqrt(0.1 * L * (L + R))
        R_new = right + math.sqrt(0.1 * R * (L + R))
        if abs(L_new - L) + abs(R_new - R) < 1e-12 * (L + R):
            L, R = L_new, R_new
            break
        L, R = L_new, R_new
    return c - L, c, c + R


def _ranks(x: np.ndarray) -> np.ndarray:
    """Ranks 0..n-1 of a 1-d sample, ties in order of position (a stable sort). Without ties the
    order is unique, so numpy's faster unstable sort gives the same ranks; the stable sort runs only
    when two draws are equal."""
    order = np.argsort(x)
    xs = x[order]
    if np.any(xs[1:] == xs[:-1]) or (xs.size and np.isnan(xs[-1])):  # ties (NaNs sort last)
        order = np.argsort(x, kind="stable")
    r = np.empty(x.shape[-1])
    r[order] = np.arange(x.shape[-1])
    return r


def spearman(x: np.ndarray, y: np.ndarray) -> float:
    """Spearman rank correlation of two 1-d samples; 0 when either is constant."""
    return _rank_correlation(x, y, _ranks(x), _ranks(y))


def _rank_correlation(x: np.ndarray, y: np.ndarray, rx: np.ndarray, ry: np.ndarray) -> float:
    """spearman(x, y) from the ranks rx, ry of x and y (computed once per sample by the caller)."""
    if np.ptp(x) == 0 or np.ptp(y) == 0:
        return 0.0
    return float(np.corrcoef(rx, ry)[0, 1])


def _percentiles(x: np.ndarray) -> dict[str, float]:
    p10, p50, p90 = percentiles(x, [10, 50, 90])  # np.percentile's numbers, without numpy.ma
    return {"p10": float(p10), "p50": float(p50), "p90": float(p90), "mean": float(x.mean())}


@dataclass(frozen=True)
class Uncertainty:
    """Monte Carlo summary. Days in days; money in `currency` (converted from USD)."""

    seed: int
    draws: int
    currency: str
    days: dict[str, float]
    cost_owned: dict[str, float] | None
    cost_cloud: dict[str, float] | None
    cost_cloud_reserved: dict[str, float] | None
    drivers: dict[str, dict[str, dict[str, float]]]  # output -> input -> {rank_correlation, share}
    main_driver: dict[str, str | None]  # output -> input name (None when nothing varies)
    inputs: dict[str, tuple[float, float, float]]

    def to_dict(self) -> dict[str, Any]:
        return {
            "seed": self.seed,
            "draws": self.draws,
            "currency": self.currency,
            "days": dict(self.days),
            "cost_owned": None if self.cost_owned is None else dict(self.cost_owned),
            "cost_cloud": None if self.cost_cloud is None else dict(self.cost_cloud),
            "cost_cloud_reserved": None
            if self.cost_cloud_reserved is None
            else dict(self.cost_cloud_reserved),
            "drivers": {o: {i: dict(v) for i, v in d.items()} for o, d in self.drivers.items()},
            "main_driver": dict(self.main_driver),
            "inputs": {k: list(v) for k, v in self.inputs.items()},
        }


# the inputs priced in USD inside (per card-hour, the capex, per kWh, per IT kW-month): the section
# states them in its currency, as its costs
MONEY_INPUTS = frozenset(
    {"cloud_price_per_card_hour", "cloud_reserved_price_per_card_hour", "capex", "electricity_per_kwh",
     "colo_per_kw_month"}
)  # fmt: skip


def _stated(
    ranges: dict[str, tuple[float, float, float]], rate: float
) -> dict[str, tuple[float, float, float]]:
    """The triangles as the section states them: money inputs x `rate` (currency units per USD),
    the MFU and the facility power (W) as they are."""
    scale = {k: rate if k in MONEY_INPUTS else 1.0 for k in ranges}
    return {k: (lo * scale[k], mode * scale[k], hi * scale[k]) for k, (lo, mode, hi) in ranges.items()}


# which inputs each output depends on (others would only show sampling noise)
_INPUTS_OF = {
    "days": {"mfu"},
    "cost_cloud": {"mfu", "cloud_price_per_card_hour"},
    "cost_cloud_reserved": {"mfu", "cloud_reserved_price_per_card_hour"},
    "cost_owned": {"mfu", "capex", "facility_w", "electricity_per_kwh", "colo_per_kw_month"},
}


def _drivers(
    samples: dict[str, NDArray[np.float64]],
    output: NDArray[np.float64],
    ranks: dict[str, NDArray[np.float64]] | None = None,
) -> tuple[dict[str, dict[str, float]], str | None]:
    """Each varying input's Spearman correlation with the output and its share of their squares,
    and the input of largest |correlation|. `ranks`: the inputs' ranks computed so far (filled in:
    the outputs share their inputs)."""
    ranks = {} if ranks is None else ranks
    varying = [k for k, v in samples.items() if np.ptp(v) > 0]
    r_out = _ranks(output) if varying else output
    for k in varying:
        if k not in ranks:
            ranks[k] = _ranks(samples[k])
    rho = {k: _rank_correlation(samples[k], output, ranks[k], r_out) for k in varying}
    total = sum(r * r for r in rho.values())
    table = {
        k: {"rank_correlation": r, "share": (r * r / total) if total > 0 else 0.0} for k, r in rho.items()
    }
    main = max(rho, key=lambda k: abs(rho[k])) if rho and total > 0 else None
    return table, main


@dataclass(frozen=True)
class UncertainPrices:
    """The cost side of the Monte Carlo: ranges (Range: a value or a (low, mode, high) triangle) of
    the cloud prices (USD per card-hour; None = no cloud cost), the capex (USD; None = no owned
    cost), the facility power (W), electricity (USD/kWh) and colo (USD per IT kW-month), the fixed
    depreciation (years), utilization (0-1] and IT power (W), and the reporting currency."""

    cloud_usd_per_card_hour: Range | None = None
    cloud_reserved_usd_per_card_hour: Range | None = None
    capex_total_usd: Range | None = None
    facility_w: Range = 0.0
    electricity_usd_per_kwh: Range = DEFAULT_ELECTRICITY_USD_PER_KWH
    depreciation_years: float = DEFAULT_DEPRECIATION_YEARS
    utilization: float = 1.0
    it_w: float = 0.0
    colo_usd_per_kw_month: Range = 0.0
    currency: str = "USD"
    usd_to_cny: float | None = None


NO_PRICES = UncertainPrices()


def _ranges(
    mfu: Range, p: UncertainPrices, mfu_ceiling: float = 1.0
) -> dict[str, tuple[float, float, float]]:
    """The triangles drawn, by input name, in the fixed order of the draws; validated (the MFU in
    (0, mfu_ceiling]: plan.mfu_range.mfu_ceiling)."""
    ranges: dict[str, tuple[float, float, float]] = {"mfu": as_range(mfu, "efficiency.mfu")}
    if not (ranges["mfu"][0] > 0 and ranges["mfu"][2] <= mfu_ceiling):
        raise ScenarioError(f"MFU must lie in (0, {mfu_ceiling:g}].", "efficiency.mfu")
    if p.cloud_usd_per_card_hour is not None:
        ranges["cloud_price_per_card_hour"] = as_range(
            p.cloud_usd_per_card_hour, "cost.cloud_price_per_card_hour"
        )
    if p.cloud_reserved_usd_per_card_hour is not None:
        ranges["cloud_reserved_price_per_card_hour"] = as_range(
            p.cloud_reserved_usd_per_card_hour, "cost.cloud_reserved_price_per_card_hour"
        )
    if p.capex_total_usd is not None:
        ranges["capex"] = as_range(p.capex_total_usd, "cost.capex")
        ranges["facility_w"] = as_range(p.facility_w, "power.facility_w")
        ranges["electricity_per_kwh"] = as_range(p.electricity_usd_per_kwh, "cost.electricity_per_kwh")
        ranges["colo_per_kw_month"] = as_range(p.colo_usd_per_kw_month, "cost.colo_per_kw_month")
    if any(r[0] < 0 for r in ranges.values()):
        raise ScenarioError("Ranges must not be negative.", "uncertainty")
    return ranges


def _costs(
    samples: dict[str, np.ndarray], card_hours: np.ndarray, cards: float, p: UncertainPrices, rate: float
) -> dict[str, np.ndarray]:
    """The run's cloud and owned cost per draw (in the currency), where their prices were given."""
    outputs: dict[str, np.ndarray] = {}
    if "cloud_price_per_card_hour" in samples:
        outputs["cost_cloud"] = card_hours * samples["cloud_price_per_card_hour"] * rate
    if "cloud_reserved_price_per_card_hour" in samples:
        outputs["cost_cloud_reserved"] = card_hours * samples["cloud_reserved_price_per_card_hour"] * rate
    if "capex" in samples:
        per_card_hour = owned_usd_per_card_hour(
            samples["capex"],
            cards,
            samples["facility_w"],
            samples["electricity_per_kwh"],
            p.depreciation_years,
            p.utilization,
            p.it_w,
            samples["colo_per_kw_month"],
        )
        outputs["cost_owned"] = card_hours * per_card_hour * rate
    return outputs


def monte_carlo(
    *,
    training_flop: float,
    cards: float,
    peak_flops: float,
    mfu: Range,
    prices: UncertainPrices = NO_PRICES,
    draws: int = DEFAULT_DRAWS,
    seed: int = DEFAULT_SEED,
    held: float = 1.0,
    mfu_ceiling: float = 1.0,
) -> Uncertainty:
    """P10/P50/P90 of run days and cost for uncertain MFU and prices (see module docstring).

    Units: `training_flop` FLOP, `peak_flops` FLOP/s per card, `mfu` fraction; `prices` in USD
    (per card-hour, per kWh, per IT kW-month), capex USD, powers W. The owned cost is computed
    only when `prices.capex_total_usd` is given, each cloud cost only when its price is.
    `held`: wall-clock time the cluster is held per unit of computing time (plan.goodput.held_ratio,
    1 / ETTR; it does not depend on the MFU, reliability.wall_time): the costs are paid for the held
    card-hours, the days are the computing days. `mfu_ceiling`: the highest MFU the triangle may
    reach (plan.mfu_range.mfu_ceiling; 1 where the FLOPs counted are the FLOPs computed).
    """
    if not (training_flop > 0 and cards > 0 and peak_flops > 0):
        raise ScenarioError("Training FLOP, cards and peak FLOP/s must be positive.", "uncertainty")
    if not 1 <= int(draws) <= limits.MAX_MC_SAMPLES:
        raise ScenarioError(f"Draws must be between 1 and {limits.MAX_MC_SAMPLES:,}.", "uncertainty.samples")
    rate = exchange_rate(prices.currency, prices.usd_to_cny)
    ranges = _ranges(mfu, prices, mfu_ceiling)

    n = int(draws)
    rng = np.random.default_rng(seed)
    u = rng.random((len(ranges), n))  # one draw for every input, in a fixed order
    samples = {name: triangular_ppf(u[i], *r) for i, (name, r) in enumerate(ranges.items())}

    seconds = training_flop / (cards * peak_flops * samples["mfu"])
    days = seconds / SECONDS_PER_DAY
    card_hours = cards * seconds / 3600.0 * held
    outputs: dict[str, np.ndarray] = {"days": days, **_costs(samples, card_hours, cards, prices, rate)}

    drivers: dict[str, dict[str, dict[str, float]]] = {}
    main: dict[str, str | None] = {}
    ranks: dict[str, NDArray[np.float64]] = {}  # each input ranked once for all the outputs
    for name, out in outputs.items():
        relevant = {k: v for k, v in samples.items() if k in _INPUTS_OF[name]}
        drivers[name], main[name] = _drivers(relevant, out, ranks)
    return Uncertainty(
        seed=int(seed),
        draws=n,
        currency=prices.currency,
        days=_percentiles(days),
        cost_owned=_percentiles(outputs["cost_owned"]) if "cost_owned" in outputs else None,
        cost_cloud=_percentiles(outputs["cost_cloud"]) if "cost_cloud" in outputs else None,
        cost_cloud_reserved=(
            _percentiles(outputs["cost_cloud_reserved"]) if "cost_cloud_reserved" in outputs else None
        ),
        drivers=drivers,
        main_driver=main,
        inputs=_stated(ranges, rate),
    )
