"""result.calibration typed (estimator.plan.pilot.section builds it; docs/calibration.md): the pilot,
the fitted factors, the plan before and after calibration, what the extrapolation grows, and the
band. Field names carry their unit as in estimator.plan.result; the contract's JSON keys, where
they differ, are in the fields' metadata (`json_key`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from estimator.result_fields import json_key


@dataclass(frozen=True, slots=True, kw_only=True)
class PilotSummary:
    """The measured pilot run and what the uncalibrated and calibrated models say of it."""

    model: str
    accelerator: str
    cards: int | None
    layout: Mapping[str, int]  # the pilot's degrees by name (tp, pp, dp, ep, cp, micro_batch_size)
    measured_step_time_s: float | None
    measured_tokens_per_s_per_card: float
    predicted_tokens_per_s_per_card: float
    measured_comm_wait_share: float | None
    predicted_comm_wait_share: float
    calibrated_comm_wait_share: float


@dataclass(frozen=True, slots=True, kw_only=True)
class CalibrationFactor:
    """One fitted factor (a multiplier) and what it scales."""

    name: str  # "compute" or "communication"
    value: float
    scales: str


@dataclass(frozen=True, slots=True, kw_only=True)
class PlanFigures:
    """One plan's speed: cards, tokens/s, step time, MFU and compute days (tokens / tokens/s)."""

    cards: int
    tokens_per_s: float
    tokens_per_s_per_card: float
    step_time_s: float
    predicted_mfu: float
    training_days: float


@dataclass(frozen=True, slots=True, kw_only=True)
class Change:
    """What differs from pilot to target; the values are in the unit `code` names (cards, parameters,
    nodes, a parallel degree)."""

    code: str
    pilot_value: float | None = json_key("pilot")  # None: the pilot named no cards
    target_value: float = json_key("target")


@dataclass(frozen=True, slots=True, kw_only=True)
class GrowingTerm:
    """A step-time term whose share of the step grows from the calibrated pilot to the target."""

    term: str
    pilot_share: float
    target_share: float


@dataclass(frozen=True, slots=True, kw_only=True)
class Extrapolation:
    """How far the target is from the pilot."""

    changes: tuple[Change, ...]
    growing_terms: tuple[GrowingTerm, ...]
    new_mechanisms: tuple[str, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class CalibrationBand:
    """The band around the calibrated plan (docs/calibration.md#band)."""

    half_width_fraction: float = json_key("relative_half_width")
    low_tokens_per_s: float = json_key("tokens_per_s_low")
    high_tokens_per_s: float = json_key("tokens_per_s_high")
    low_training_days: float = json_key("training_days_low")
    high_training_days: float = json_key("training_days_high")
    rule: str


@dataclass(frozen=True, slots=True, kw_only=True)
class CalibrationSection:
    """result.calibration: the pilot, its factors, the plan before and after, extrapolation, band."""

    pilot: PilotSummary
    factors: tuple[CalibrationFactor, ...]
    carried_across_chips: bool
    target_accelerator: str
    before: PlanFigures | None  # None when no layout planned before calibration
    after: PlanFigures | None
    extrapolation: Extrapolation
    band: CalibrationBand
