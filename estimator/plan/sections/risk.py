"""result.uncertainty: the seeded Monte Carlo of days and money (plan.uncertainty) over the MFU's
range (the scenario's own, +-25 % of a given MFU, or the evidence band of the plan's class,
plan.evidence, widened by the release spread of its stack and the rows of a documented gap its
layout lies in) and the prices' spread."""

from __future__ import annotations

from collections.abc import Mapping

from estimator.contract.resolve import Resolved
from estimator.layout.stack_profile import StackProfile
from estimator.layout.steptime.context_parallel import known_gap
from estimator.plan import evidence
from estimator.plan.chosen import ClusterChoice, Roll
from estimator.plan.result import MfuBand, UncertaintySection
from estimator.plan.uncertainty import UncertainPrices, monte_carlo, triangle_from_quantiles

ASSUMED_MFU_SPREAD = 0.25  # +-25 % around a given MFU without a range: an assumption, said so

# the catalog field whose sources state the peak a precision runs at (Accelerator.peak_flops)
_PEAK_FIELD = {"fp8": "peak_flops_fp8", "fp32": "peak_flops_fp32"}


def mfu_band(
    r: Resolved, choice: ClusterChoice, peak: float, stack: StackProfile
) -> tuple[tuple[float, float, float], MfuBand]:
    """The Monte Carlo's MFU triangle (low, mode, high) and where it comes from: the scenario's own
    range, +-25 % of a given MFU (an assumption), or for a predicted MFU the evidence band of the
    plan's class (estimator.plan.evidence), its P10-P90 matched by the triangle."""
    s, mfu = r.scenario, choice.mfu
    if s.efficiency.mfu_range is not None or choice.mfu_source != "predicted":
        lo, hi = s.efficiency.mfu_range or (
            mfu * (1 - ASSUMED_MFU_SPREAD),
            min(1.0, mfu * (1 + ASSUMED_MFU_SPREAD)),
        )
        source = "given-range" if s.efficiency.mfu_range is not None else "assumed"
        return (min(lo, mfu), mfu, max(hi, mfu)), MfuBand(source=source)
    key = evidence.class_key(
        r.accelerator.chip_family, evidence.workload_family(r.arch.num_experts, r.seq_len), stack.id
    )
    band = evidence.band_for(key)
    peak_source = r.accelerator.sources.get(_PEAK_FIELD.get(s.training.precision, "peak_flops_bf16"))
    peak_range = peak_source.range if peak_source is not None else None
    band = evidence.widen_for_peak_range(band, peak, peak_range)
    workload = evidence.workload_family(r.arch.num_experts, r.seq_len)
    band = evidence.widen_for_release_spread(band, stack.spread_for(r.accelerator.chip_family, workload))
    band = evidence.widen_for_known_gap(band, _known_gap_ratios(r, choice, stack))
    low, mode, high = triangle_from_quantiles(mfu * band.p10_ratio, mfu, mfu * band.p90_ratio)
    shown = MfuBand(source="evidence", evidence=band, release=stack.release)
    return (max(low, 1e-6), mode, min(high, 1.0)), shown


def _known_gap_ratios(r: Resolved, choice: ClusterChoice, stack: StackProfile) -> list[float]:
    """Ratios of the validation rows in the documented gap the plan's chosen layout lies in
    (context_parallel.known_gap; none without a layout or outside every gap)."""
    best = choice.layouts.best
    if best is None:
        return []
    gap = known_gap(stack.cp_overlap, stack.cp_comm_type, best.cp, best.tp, r.scaleup_domain_cards)
    return evidence.gap_observations().get(gap, []) if gap else []


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
    )
    return UncertaintySection(monte_carlo=result, mfu_band=band)
