"""The software stack as a visible input: which profile the plan assumed and how much the choice
moves its answer (the result's `stack` section).

`stack_section` re-runs the layout search of the chosen cluster size once per profile that runs on
the accelerator (`estimator.layout.stacks.profiles_for`), with the same fixed fields (the batched
search, layout.batch_search.best_in: the best layout only, the profiles sharing one enumeration
and the memory that does not depend on the stack where they can), and scales the
plan's wall-clock days by the throughput ratio: days(p) = days · tokens_per_s(chosen) /
tokens_per_s(p). The ratio keeps whatever the roll-up adds to the step time (the same for every
stack) and makes the chosen profile's entry equal the plan's days exactly. A profile whose
fields that the model reads (StackProfile.plans_alike_key) are the chosen stack's plans alike: it
takes the chosen best layout's ratio without a search of its own (a dense model under the MoE profile
of the same release). A profile under which no
layout fits gets None. The profiles share SENSITIVITY_SECONDS and those left when it runs out get
None too (`timed_out`).
Units: days; tokens/s.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from estimator.layout.batch_search import best_in
from estimator.layout.search import LayoutEval, LayoutProblem
from estimator.layout.stack_profile import StackProfile
from estimator.layout.stacks import profiles_for
from estimator.result_fields import json_key

SENSITIVITY_SECONDS = 3.0  # wall clock all the profiles' searches of one plan may take together


@dataclass(frozen=True, slots=True, kw_only=True)
class StackSection:
    """result.stack: the profile the plan assumed and the plan's wall-clock days under each profile
    that runs on the accelerator (None: no layout fits, or the time ran out)."""

    id: str  # the chosen profile (layout.stacks)
    name: str
    release: str  # the stack release the profile stands for (StackProfile.release)
    default: bool  # the scenario named no stack: the vendor's default was assumed
    sensitivity_days: Mapping[str, float | None] = json_key("sensitivity")  # profile id -> days
    timed_out: bool  # SENSITIVITY_SECONDS ran out before every profile was searched


def stack_section(
    problem: LayoutProblem, best: LayoutEval | None, days: float, vendor: str, chosen_id: str, default: bool
) -> StackSection:
    """result.stack (StackSection: id, name, release, default, days per profile, timed_out) for the plan whose
    layout problem is `problem` (its stack is the chosen profile with any overrides) and whose best
    layout `best` takes `days` of wall clock."""
    started = time.monotonic()
    fp8_hardware = bool(problem.accelerator.peak_flops_fp8)
    sensitivity: dict[str, float | None] = {}
    moe = problem.arch.is_moe
    seen: dict[tuple[Any, ...], float | None] = {}  # the answer per plans_alike_key
    if best is not None:  # a profile that plans alike with the chosen stack: the same best layout
        seen[problem.stack.plans_alike_key(moe)] = _scaled(days, best, best)
    timed_out = False
    families: dict[tuple[Any, ...], Any] = {}  # the profiles' shared enumerations (best_layouts)
    for profile in profiles_for(vendor, fp8_hardware):
        if profile.id == chosen_id:
            sensitivity[profile.id] = days if best is not None else None
            continue
        key = profile.plans_alike_key(moe)
        if key in seen:
            sensitivity[profile.id] = seen[key]
            continue
        if time.monotonic() - started > SENSITIVITY_SECONDS:
            timed_out = True
            sensitivity[profile.id] = None
            continue
        sensitivity[profile.id] = seen[key] = _days_under(problem, profile, best, days, families)
    return StackSection(
        id=chosen_id,
        name=problem.stack.name,
        release=problem.stack.release,
        default=default,
        sensitivity_days=sensitivity,
        timed_out=timed_out,
    )


def _days_under(
    problem: LayoutProblem,
    profile: StackProfile,
    best: LayoutEval | None,
    days: float,
    families: dict[tuple[Any, ...], Any],
) -> float | None:
    """Wall-clock days of the plan under `profile` (its defaults, no overrides), None if no layout
    fits. The profile's best layout is layout.search's (batch_search.best_layouts of the one size,
    which times only what can win); `families` keeps the enumeration the profiles share."""
    if best is None:
        return None
    other = best_in(dataclasses.replace(problem, stack=profile), families)
    if other is None:
        return None
    return _scaled(days, best, other)


def _scaled(days: float, best: LayoutEval, other: LayoutEval) -> float:
    """The plan's days under the profile whose best layout is `other` (the throughput ratio)."""
    return days * best.tokens_per_s / other.tokens_per_s
