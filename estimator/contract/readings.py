"""Figures read out of the contract's dicts (the normalized scenario and the result sections), for
the article's rules (estimator.plan.advice) and its starting configuration (estimator.plan.starting_config).
A missing or malformed key reads as None."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from estimator.catalog.entries import ASCEND_FAMILIES
from estimator.dotted import get_path


def number_at(d: Any, path: str) -> float | None:
    """Number at a dotted path (bools and non-numbers -> None)."""
    v = get_path(d, path)
    if isinstance(v, bool) or not isinstance(v, (int, float)) or math.isnan(v):
        return None
    return float(v)


def first_of(*values: float | None) -> float | None:
    """The first value that is not None."""
    return next((v for v in values if v is not None), None)


def cards_per_node(s: Mapping[str, Any], r: Mapping[str, Any]) -> float | None:
    """Cards per node: the scenario's, else the plan's."""
    return first_of(number_at(s, "hardware.cards_per_node"), number_at(r, "compute.cards_per_node"))


def scaleup_domain(s: Mapping[str, Any], r: Mapping[str, Any]) -> float | None:
    """Cards in one HCCS/NVLink domain (384 on CloudMatrix), else cards per node."""
    return first_of(
        number_at(r, "compute.scaleup_domain_cards"),
        number_at(s, "hardware.scaleup_domain_cards"),
        cards_per_node(s, r),
    )


def is_ascend(s: Mapping[str, Any], r: Mapping[str, Any]) -> bool:
    """Whether the plan runs on Huawei Ascend: the accelerator's catalog `chip_family` (the plan's
    compute.chip_family, else an inline accelerator's own), never a guess from its id."""
    family = get_path(r, "compute.chip_family")
    if family is None:
        acc = get_path(s, "hardware.accelerator")
        family = acc.get("chip_family") if isinstance(acc, dict) else None
    return str(family or "") in ASCEND_FAMILIES


def bubble_fraction(pp: float, m: float) -> float:
    """1F1B pipeline bubble as a share of the step: (p-1)/(m+p-1) (Narayanan et al. 2021)."""
    return (pp - 1) / (m + pp - 1)


def given_mfu_step_s(r: Mapping[str, Any]) -> float | None:
    """The step a plan at a given MFU runs, in seconds: its global batch (tokens a step) over its
    throughput (compute.tokens_per_s, the given MFU's, which the days count); the layout's
    parallelism.step_time_s is the layout model's prediction, which only ranks the layouts. None
    for a predicted MFU (the two are one) or a result without the figures."""
    if get_path(r, "compute.mfu_source") != "given":
        return None
    batch, rate = number_at(r, "parallelism.global_batch_tokens"), number_at(r, "compute.tokens_per_s")
    return batch / rate if batch is not None and rate is not None and rate > 0 else None
