"""result.uncertainty: the seeded Monte Carlo of days and money (plan.uncertainty) over the MFU's
range (plan.mfu_range: the scenario's own, +-25 % of a given MFU, or the evidence band of the plan's
class, widened by the release spread of its stack and the rows of a documented gap its layout lies
in) and the prices' spread."""

from __future__ import annotations

from collections.abc import Mapping

from estimator.contract.resolve import Resolved
from estimator.layout.stack_profile import StackProfile
from estimator.plan.chosen import ClusterChoice, Roll
from estimator.plan.mfu_range import (
    band_triangle,
    calibration_width,
    class_band,
    given_triangle,
    layout_band,
    mfu_ceiling,
    ratio_triangle,
)
from estimator.plan.result import MfuBand, UncertaintySection
from estimator.plan.uncertainty import UncertainPrices, monte_carlo


def mfu_band(
    r: Resolved, choice: ClusterChoice, peak: float, stack: StackProfile
) -> tuple[tuple[float, float, float], MfuBand]:
    """The Monte Carlo's MFU triangle (low, mode, high) and where it comes from: the scenario's own
    range, +-25 % of a given MFU (an assumption), or for a predicted MFU the evidence band of the
    plan's class and layout (plan.mfu_range), its P10-P90 matched by the triangle."""
    s, mfu = r.scenario, choice.mfu
    if s.efficiency.mfu_range is not None or choice.mfu_source != "predicted":
        triangle, source = given_triangle(r, mfu)
        return triangle, MfuBand(source=source)
    width = calibration_width(r, choice.layouts.best, choice.cards)
    if width is not None:  # calibrated on a pilot: the pilot's band, not the uncalibrated model's
        return ratio_triangle(mfu, 1.0 - width, 1.0 + width, mfu_ceiling(r)), MfuBand(
            source="calibration", half_width_fraction=width
        )
    band = layout_band(class_band(r, peak, stack), r, choice.layouts.best, stack)
    shown = MfuBand(source="evidence", evidence=band, release=stack.release)
    return band_triangle(mfu, band, mfu_ceiling(r)), shown


def _spread(x: float, spread: float) -> tuple[float, float, float]:
    """(low, mode, high) of a price +-`spread` (a fraction)."""
    return (x * (1 - spread), x, x * (1 + spread))


def uncertainty_section(
    r: Resolved,
    training_flop: float,
    peak: float,
    choice: ClusterChoice,
    roll: Roll,
    pr: Mapping[str, float],
    stack: StackProfile,
) -> UncertaintySection:
    """The Monte Carlo of the plan: `training_flop` (FLOP), `peak` (FLOP/s per card), the roll-up's
    cards, capex (USD), power (W) and held time (the costs are paid for it, failures counted), the
    prices `pr` (USD) with the scenario's spread."""
    s, u = r.scenario, r.scenario.uncertainty
    mfu_triangle, band = mfu_band(r, choice, peak, stack)
    spread = u.price_spread
    result = monte_carlo(
        training_flop=training_flop,
        cards=int(roll["compute.cards"]),
        peak_flops=peak,
        mfu=mfu_triangle,
        prices=UncertainPrices(
            cloud_usd_per_card_hour=_spread(pr["cloud_usd_per_card_hour"], spread),
            capex_total_usd=_spread(float(roll["_cost"].capex_total_usd), spread),
            facility_w=float(roll["power.facility_w"]),
            electricity_usd_per_kwh=_spread(pr["electricity_usd_per_kwh"], spread),
            depreciation_years=pr["depreciation_years"],
            utilization=pr["utilization"],
            it_w=float(roll["power.it_w"]),
            currency=s.cost.currency,
            usd_to_cny=r.usd_to_currency if s.cost.currency == "CNY" else None,
        ),
        draws=u.samples,
        seed=u.seed,
        held=float(roll["_held"]),
        mfu_ceiling=mfu_ceiling(r),
    )
    return UncertaintySection(monte_carlo=result, mfu_band=band)
