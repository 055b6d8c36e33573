"""result.model and result.compute: the model's size and FLOPs per token (model.transformer via
money.pricing.model_flops), and the run's cards, MFU and time (money.rollup); the deadline's
verdict and its miss probability under the Monte Carlo's MFU range and, with failures, the
interruption count's spread (money.budget)."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

from estimator.contract.resolve import Resolved
from estimator.model.compute import SECONDS_PER_DAY
from estimator.plan.chosen import ClusterChoice, Roll
from estimator.plan.deadline_risk import MISS_SLACK, Risk, miss_probability
from estimator.plan.result import ComputeSection, ModelSection, UncertaintySection
from estimator.plan.result_goodput import GoodputSection

DEADLINE_SLACK = 1e-9  # relative: a plan that meets its target to rounding meets it


def model_section(r: Resolved, flops: Mapping[str, float]) -> ModelSection:
    """The model: parameters (counts), its architecture and FLOPs per token (FLOP/token)."""
    return ModelSection(
        name=r.model_name,
        total_params=r.counts.total,
        active_params=r.counts.active,
        embedding_params=r.counts.embedding + r.counts.lm_head,
        exact_architecture=r.exact_architecture,
        architecture=r.arch,
        ignored_fields=tuple(r.scenario.ignored_model_fields),
        assumed_shape=r.assumed_shape,
        seq_len_tokens=r.seq_len,
        hidden_size=r.arch.hidden_size,
        flop_per_token=flops["flop_per_token"],
        six_n_flop_per_token=flops["flop_per_token_6n"],
        attention_flop_per_token=flops["flop_per_token_attention"],
    )


def compute_section(
    r: Resolved,
    flops: Mapping[str, float],
    peak: float,
    choice: ClusterChoice,
    roll: Roll,
    goodput_days: float | None = None,
) -> ComputeSection:
    """Cards, MFU and time (days, card-hours, tokens/s); for a deadline whether the plan meets it,
    judged on `goodput_days` (the wall-clock days with failures) when there are failures."""
    s = r.scenario
    days = float(roll["compute.wall_clock_days"])
    target = s.cluster.target_days
    judged = goodput_days if goodput_days is not None else days
    return ComputeSection(
        flop_per_token=flops["flop_per_token"],
        six_n_flop_per_token=flops["flop_per_token_6n"],
        attention_flop_per_token=flops["flop_per_token_attention"],
        training_flop=flops["training_flop"],
        # 6·N·D (Kaplan 2020) beside the count with attention, as the headline shows both
        training_6n_flop=flops["flop_per_token_6n"] * s.training.tokens,
        training_tokens=s.training.tokens,
        peak_flop_per_s_per_card=peak,
        cards=int(roll["compute.cards"]),
        nodes=int(roll["compute.nodes"]),
        cards_per_node=r.cards_per_node,
        scaleup_domain_cards=r.scaleup_domain_cards,
        vendor=r.accelerator.vendor,
        chip_family=r.accelerator.chip_family,
        accelerator=r.accelerator.name,
        mfu=choice.mfu,
        mfu_source=choice.mfu_source,
        wall_clock_days=days,
        accelerator_hours=float(roll["compute.accelerator_hours"]),
        tokens_per_s=float(roll["compute.tokens_per_s"]),
        target_days=target,
        meets_target=None if target is None else judged <= target * (1 + DEADLINE_SLACK),
    )


def with_deadline_risk(
    compute: ComputeSection,
    uncertainty: UncertaintySection,
    goodput: GoodputSection | None,
    shape: float | None = None,
    confidence: float | None = None,
) -> ComputeSection:
    """compute.deadline_miss_probability: P(days > target) under the Monte Carlo's MFU range; when
    failures are counted, of the wall-clock days with failures, counting both the MFU range and the
    spread of the interruption count (Gamma rate `shape`, plan.goodput_section.count_shape) behind
    goodput's P10-P90 (money.budget.deadline_miss_probability_with_failures); else of the days at
    the MFU (money.budget.deadline_miss_probability); plan.deadline_risk.miss_probability, the rule
    the sizing judges by. With cluster.deadline_confidence `confidence` the verdict (meets_target)
    is that chance at most 1 - confidence, as the sizing decided."""
    mfu = uncertainty.mfu_triangle
    if compute.target_days is None or mfu is None:
        return compute
    both = goodput is not None and goodput.failures_counted and shape is not None
    if both:
        assert goodput is not None and shape is not None
        lost = goodput.lost_days
        risk = Risk(
            base_days=goodput.compute_days + lost.checkpoints_days + lost.planned_days,
            unexpected=goodput.expected_unexpected_interruptions_count,
            per_days=(goodput.rework_s_per_interruption + goodput.restart_s) / SECONDS_PER_DAY,
            shape=shape,
        )
    else:
        risk = Risk(base_days=goodput.wall_clock_days if goodput is not None else compute.wall_clock_days)
    p = miss_probability(compute.target_days, risk, mfu)
    if confidence is not None:  # the verdict is the sizing's: a chance of missing of at most 1 - q
        met = p <= (1.0 - confidence) * (1 + MISS_SLACK)
        compute = dataclasses.replace(
            compute, meets_target=met, deadline_confidence_probability=float(confidence)
        )
    return dataclasses.replace(compute, deadline_miss_probability=p, deadline_miss_counts_failures=both)
