"""result.goodput typed (estimator.plan.goodput_section.section builds it): the interruptions, checkpoints and
restarts of a plan, the wall-clock days with them, the hot spares and the levers; and the failure
figures it adds to result.assumptions. Field names carry their unit as in estimator.plan.result
(`_count` for an expected count, not whole); the contract's JSON keys, where they differ, are in
the fields' metadata (`json_key`). The field order is the JSON order."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from estimator.result_fields import json_key, omitted


@dataclass(frozen=True, slots=True, kw_only=True)
class LostDays:
    """result.goodput.lost_days: the wall-clock days lost by kind (days)."""

    checkpoints_days: float = json_key("checkpoints")  # checkpoint stalls
    rework_days: float = json_key("rework")  # work re-done since the last checkpoint
    restarts_days: float = json_key("restarts")  # detection, rescheduling and reload
    planned_days: float = json_key("planned")  # planned stops (maintenance)


@dataclass(frozen=True, slots=True, kw_only=True)
class Spares:
    """result.goodput.spares: the hot standby nodes, the share of node failures they cover and the
    count that would cover 95% of them (plan.goodput_section.suggested_spares)."""

    nodes: int
    coverage_probability: float = json_key("coverage")  # P(a node failure finds a spare)
    mean_nodes_down_count: float = json_key("nodes_down_mean")  # nodes under repair on average
    suggested: int
    capex_in_currency: float = json_key("capex")  # the spares' servers, in the report's currency


@dataclass(frozen=True, slots=True, kw_only=True)
class Lever:
    """One row of result.goodput.levers: what a change would save against the plan, and its cost
    (None: a setting, no hardware)."""

    lever: str  # plan.goodput.LEVER_NAMES' code
    saved_days: float = json_key("days_saved")
    wall_clock_days: float  # the plan's wall clock with the lever
    cost_in_currency: float | None = json_key("cost")
    value_of_saved_days_in_currency: float = json_key("value_of_days_saved")  # at the owned cost per day
    pays: bool  # no cost, or the days saved are worth more than it
    factor: int | None = omitted()  # faster-hot-tier: how many times faster
    nodes: int | None = omitted()  # spare-nodes: the suggested hot standbys


@dataclass(frozen=True, slots=True, kw_only=True)
class GoodputSection:
    """result.goodput: named fields with their units, where the time goes, and the levers (only when
    failures are counted)."""

    failures_counted: bool
    checkpoint_mode: str
    expected_interruptions_count: float = json_key("expected_interruptions")
    expected_unexpected_interruptions_count: float = json_key("expected_unexpected_interruptions")
    expected_planned_interruptions_count: float = json_key("expected_planned_interruptions")
    interruptions_by_cause: Mapping[str, float]  # cause -> expected interruptions (a count)
    mean_time_between_interruptions_h: float
    checkpoint_interval_s: float
    checkpoint_interval_rule: str  # "given" or "daly-2006"
    checkpoint_write_s: float
    checkpoint_stall_s: float
    checkpoint_durable_after_s: float
    restart_s: float
    detection_s: float
    rescheduling_s: float
    reload_s: float
    rework_s_per_interruption: float = json_key("rework_per_interruption_s")
    compute_days: float
    lost_days: LostDays
    # wall-clock days with failures counted: the mean (what the deadline's verdict, the levers and
    # the sizing count) and the P10, P50 (median: "how many days will it take") and P90 of the same
    # interruption-count distribution at the planned MFU (plan.goodput.evaluate,
    # reliability.count_quantiles; the deadline risk counts it with the MFU range); days
    wall_clock_days: float
    wall_clock_p10_days: float = json_key("wall_clock_days_p10")
    wall_clock_p50_days: float = json_key("wall_clock_days_p50")
    wall_clock_p90_days: float = json_key("wall_clock_days_p90")
    effective_training_time_share: float = json_key("effective_training_time_ratio")  # ETTR
    spares: Spares
    rate_scale_factor: float = json_key("rate_scale")  # the vendor's multiplier of the fleet's rates
    rates_per_unit_hour: Mapping[str, float]  # cause -> interruptions per unit-hour
    rates_scale_with: Mapping[str, str]  # cause -> the unit its rate counts (card, node, switch)
    source: str
    levers: tuple[Lever, ...] | None = omitted()  # most days saved first


@dataclass(frozen=True, slots=True, kw_only=True)
class FailureAssumption:
    """A row plan.goodput adds to result.assumptions (a failure rate, a restart figure), in the key
    order the contract has always had for them."""

    name: str
    code: str
    params: Mapping[str, Any]  # a rendering's parameters
    value: float
    unit: str
    source: str
