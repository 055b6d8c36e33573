"""The MFU range of a plan: the triangle (low, mode, high) the Monte Carlo and the deadline risk draw
the MFU from. A given MFU takes the scenario's own range or +-ASSUMED_MFU_SPREAD (an assumption,
said so); a predicted MFU the evidence band of the plan's class (plan.evidence: P10-P90 of
published/predicted throughput), widened by the peak's published range, the release spread of its
stack and the rows of a documented gap its layout lies in, the triangle matched to that P10-P90
(plan.uncertainty.triangle_from_quantiles). A plan calibrated on a pilot takes the pilot's band
instead (calibration_width). Dimensionless (shares of peak, ratios)."""

from __future__ import annotations

from estimator.contract.resolve import Resolved
from estimator.layout.search import LayoutEval
from estimator.layout.stack_profile import StackProfile
from estimator.layout.steptime.context_parallel import known_gap
from estimator.money.pricing import causal_share, model_flops
from estimator.plan import evidence
from estimator.plan.uncertainty import triangle_from_quantiles

ASSUMED_MFU_SPREAD = 0.25  # +-25 % around a given MFU without a range: an assumption, said so
Triangle = tuple[float, float, float]

# the catalog field whose sources state the peak a precision runs at (Accelerator.peak_flops)
_PEAK_FIELD = {"fp8": "peak_flops_fp8", "fp32": "peak_flops_fp32"}


def given_triangle(r: Resolved, mfu: float) -> tuple[Triangle, str]:
    """(low, mode, high) of a given MFU: the scenario's efficiency.mfu_range ("given-range") or
    +-ASSUMED_MFU_SPREAD of it, capped at 1 ("assumed"); the mode is the MFU itself."""
    given = r.scenario.efficiency.mfu_range
    lo, hi = given or (mfu * (1 - ASSUMED_MFU_SPREAD), min(1.0, mfu * (1 + ASSUMED_MFU_SPREAD)))
    return (min(lo, mfu), mfu, max(hi, mfu)), "given-range" if given is not None else "assumed"


def class_band(r: Resolved, peak: float, stack: StackProfile) -> evidence.Band:
    """The evidence band of the plan's class (chip family, workload, stack) widened by the peak's
    published range and the stack's release spread: what every layout of the scenario shares."""
    workload = evidence.workload_family(r.arch.num_experts, r.seq_len)
    band = evidence.band_for(evidence.class_key(r.accelerator.chip_family, workload, stack.id))
    peak_source = r.accelerator.sources.get(_PEAK_FIELD.get(r.scenario.training.precision, "peak_flops_bf16"))
    band = evidence.widen_for_peak_range(band, peak, peak_source.range if peak_source is not None else None)
    return evidence.widen_for_release_spread(band, stack.spread_for(r.accelerator.chip_family, workload))


def layout_band(
    band: evidence.Band, r: Resolved, best: LayoutEval | None, stack: StackProfile
) -> evidence.Band:
    """`band` (class_band) widened by the ratios of the validation rows of the documented gap the
    layout `best` lies in (context_parallel.known_gap; as it is without a layout or outside every gap)."""
    if best is None:
        return band
    gap = known_gap(stack.cp_overlap, stack.cp_comm_type, best.cp, best.tp, r.scaleup_domain_cards)
    return evidence.widen_for_known_gap(band, evidence.gap_observations().get(gap, []) if gap else [])


def widest_band(band: evidence.Band) -> evidence.Band:
    """`band` widened by the rows of every documented gap: no layout's band reaches past it (a bound
    for sizes whose layout is not known yet)."""
    ratios = [x for rows in evidence.gap_observations().values() for x in rows]
    return evidence.widen_for_known_gap(band, ratios)


def mfu_ceiling(r: Resolved) -> float:
    """The highest MFU a plan of `r` can reach: the one at which the FLOPs the kernels compute run at
    peak. The MFU counts PaLM's whole attention matrix (money.pricing.model_flops) while causal
    kernels compute half of it (money.pricing.causal_share), so the ceiling is 1 / causal_share:
    1 where attention is not counted, about 1.84 for DeepSeek-V3 at 128K tokens (a predicted MFU of
    109 % there runs the kernels at 59 % of peak). Dimensionless (a share of peak)."""
    flops = model_flops(r)
    return 1.0 / causal_share(flops["flop_per_token_6n"], flops["flop_per_token_attention"])


def band_triangle(mfu: float, band: evidence.Band, ceiling: float = 1.0) -> Triangle:
    """(low, mode, high) of a predicted MFU `mfu` whose P10 and P90 are mfu x the band's ratios,
    high capped at `ceiling` (mfu_ceiling)."""
    return ratio_triangle(mfu, band.p10_ratio, band.p90_ratio, ceiling)


def ratio_triangle(mfu: float, p10_ratio: float, p90_ratio: float, ceiling: float = 1.0) -> Triangle:
    """(low, mode, high) of a predicted MFU `mfu` whose P10 and P90 are mfu x these ratios, low
    floored at 1e-6 and high capped at `ceiling` (mfu_ceiling: the kernels' FLOPs at peak; never
    below the MFU itself)."""
    low, mode, high = triangle_from_quantiles(mfu * p10_ratio, mfu, mfu * p90_ratio)
    return max(low, 1e-6), mode, min(high, max(ceiling, mode))


def calibration_width(r: Resolved, best: LayoutEval | None, cards: int) -> float | None:
    """The relative half-width of the pilot's band (plan.pilot_section.band_half_width,
    docs/calibration.md#band) at `cards` whose best layout is `best`: a calibrated plan's MFU range
    is that band, its ends the P10 and P90 (the 80 % band the report shows), not the evidence band
    of the uncalibrated model. None without a pilot or a layout."""
    if r.pilot_fit is None or best is None:
        return None
    from estimator.plan.pilot_section import band_half_width  # a plan without a pilot never needs it

    return band_half_width(r.pilot_fit, best, r, cards)[0]
