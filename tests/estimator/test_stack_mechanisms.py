"""Every StackProfile field is either a mechanism a user sees and overrides (MECHANISMS) or listed as
not one with the reason (NOT_MECHANISMS); and the stack sensitivity's judgement that two profiles plan
alike (StackProfile.plans_alike_key) reads every field the model reads."""

import dataclasses
import os

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from estimator.contract.resolve import parse_scenario, resolve
from estimator.errors import ScenarioError
from estimator.layout import batch_search
from estimator.layout.search import search
from estimator.layout.stack_profile import MECHANISMS, MOE_ONLY, NOT_MECHANISMS, UNPRICED, StackProfile
from estimator.layout.stacks import STACKS, resolve_stack
from estimator.plan.compose import estimate, fabric_for, layout_problem

FIELDS = [f.name for f in dataclasses.fields(StackProfile)]


def test_every_field_is_a_mechanism_or_says_why_it_is_not():
    neither = [f for f in FIELDS if f not in MECHANISMS and f not in NOT_MECHANISMS]
    both = [f for f in FIELDS if f in MECHANISMS and f in NOT_MECHANISMS]
    assert neither == [] and both == []
    assert set(MECHANISMS) | set(NOT_MECHANISMS) == set(FIELDS)  # no stale name in either list
    assert all(len(why) > 10 for why in NOT_MECHANISMS.values())
    assert set(UNPRICED) <= set(NOT_MECHANISMS)  # a switch a user sets is read by the model
    assert set(MOE_ONLY) <= set(FIELDS)


def test_expert_tp_overrides_are_checked_and_applied():
    flex = resolve_stack("megatron-core-2025", "nvidia", {"moe_expert_tp_gather": False}, True, True)
    assert flex.moe_expert_tp_gather is False
    bf16 = resolve_stack("megatron-core-2025", "nvidia", {"moe_expert_tp_combine_bytes": 2}, True, True)
    assert bf16.moe_expert_tp_combine_bytes == 2 and isinstance(
        bf16.moe_expert_tp_combine_bytes, int
    )  # a switch, never a factor
    for bad in ({"moe_expert_tp_combine_bytes": 3}, {"moe_expert_tp_combine_bytes": True}):
        with pytest.raises(ScenarioError):
            resolve_stack("megatron-core-2025", "nvidia", bad, True, True)
    with pytest.raises(ScenarioError):
        resolve_stack("megatron-core-2025", "nvidia", {"moe_expert_tp_gather": "yes"}, True, True)


def test_moe_profiles_that_differ_only_in_the_expert_tp_gather_do_not_plan_alike():
    """The finding of engine 2.76.0: the fields were outside MECHANISMS, so the key that judged two
    profiles identical ignored them."""
    core = STACKS["megatron-core-2025"]
    no_gather = dataclasses.replace(core, moe_expert_tp_gather=False)
    bf16 = dataclasses.replace(core, moe_expert_tp_combine_bytes=2)
    assert core.plans_alike_key(True) != no_gather.plans_alike_key(True)
    assert core.plans_alike_key(True) != bf16.plans_alike_key(True)
    # a dense model has no routed copies to gather
    assert core.plans_alike_key(False) == no_gather.plans_alike_key(False) == bf16.plans_alike_key(False)
    # every field the model reads: a new field is in the key unless it is listed as unread
    key = dict(core.plans_alike_key(True))
    assert set(key) == set(FIELDS) - set(UNPRICED)


def _problem(preset: str, cards: int):
    doc = {
        "model": {"preset": preset},
        "training": {"tokens": 1e11, "stack": "megatron-core-2025"},
        "hardware": {"accelerator": "h100-sxm"},
        "cluster": {"cards": cards},
    }
    r = resolve(parse_scenario(doc))
    return layout_problem(r, cards, fabric_for(r, cards))


def _best(problem, stack):
    batch_search.clear_caches()  # searched, not recalled from a cache keyed on fewer fields
    return search(dataclasses.replace(problem, stack=stack)).best


UNPRICED_OTHERS = {
    "id": "other",
    "name": "other",
    "source": "other",
    "as_of": "1999-01",
    "summary": "other",
    "release": "other",
    "release_spread": (("*/moe", 0.5, 2.0), ("*/dense", 0.5, 2.0)),
    "release_spread_source": "other",
    "vendors": ("AMD",),
    "needs_fp8_hardware": True,
    "cp_comm_types": ("a2a",),
}


@pytest.mark.parametrize(("preset", "cards"), [("llama-3.1-8b", 64), ("qwen3-30b-a3b", 64)])
def test_the_fields_the_key_leaves_out_never_move_the_search(preset, cards):
    """UNPRICED is what plans_alike_key may skip: changing all of it at once leaves the best layout
    and its throughput exactly as they were."""
    assert set(UNPRICED_OTHERS) == set(UNPRICED)
    problem = _problem(preset, cards)
    other = dataclasses.replace(problem.stack, **UNPRICED_OTHERS)
    assert _best(problem, other) == _best(problem, problem.stack)


def _flipped(value):
    if isinstance(value, bool):
        return not value
    if value is None:
        return 1
    return {2.0: 4.0, 4.0: 2.0}.get(value, value + 1)


@pytest.mark.parametrize("field", MOE_ONLY)
def test_the_moe_only_fields_never_move_a_dense_search(field):
    problem = _problem("llama-3.1-8b", 64)
    stack = problem.stack
    other = dataclasses.replace(stack, **{field: _flipped(getattr(stack, field))})
    assert getattr(other, field) != getattr(stack, field)
    assert _best(problem, other) == _best(problem, stack)


def test_a_moe_plan_under_an_override_does_not_lend_its_days_to_a_profile_that_gathers():
    """megatron-core-moe-2025 with the plain all-to-all (moe_dispatch_dedup false) equals
    megatron-core-2025 in every MECHANISMS entry of 2.76.0 but the gather: Qwen3-30B-A3B's
    sensitivity entry for megatron-core-2025 is that profile's own search, not the plan's days."""
    from estimator.plan.stack_sensitivity import _scaled

    doc = {
        "model": {"preset": "qwen3-30b-a3b"},
        "training": {
            "tokens": 1e11,
            "stack": "megatron-core-moe-2025",
            "stack_overrides": {"moe_dispatch_dedup": False},
        },
        "hardware": {"accelerator": "h100-sxm"},
        "cluster": {"cards": 256},
        "parallelism": {"tp": 4, "expert_tp": 4, "ep": 8},
    }
    result = estimate(doc)["result"]
    days = result["compute"]["wall_clock_days"]
    r = resolve(parse_scenario(doc))
    problem = layout_problem(r, 256, fabric_for(r, 256))
    chosen = search(problem).best
    core = search(dataclasses.replace(problem, stack=STACKS["megatron-core-2025"])).best
    assert core.tokens_per_s < chosen.tokens_per_s  # the gather costs time at expert TP 4
    assert result["stack"]["sensitivity"]["megatron-core-2025"] == pytest.approx(
        _scaled(days, chosen, core), rel=1e-12
    )


# overrides a scenario may give the chosen stack (each a valid training.stack_overrides entry)
OVERRIDES = [
    {},
    {"moe_dispatch_dedup": False},
    {"moe_dispatch_dedup": True},
    {"moe_expert_tp_gather": False},
    {"moe_expert_tp_combine_bytes": 2},
    {"ep_comm_overlap": True},
    {"tp_comm_overlap": False},
    {"per_expert_gemms": False, "moe_host_sync": False},
]


@settings(
    max_examples=int(os.environ.get("AGREE_EXAMPLES", "12")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    derandomize=not os.environ.get("AGREE_EXAMPLES"),
)
@given(
    preset=st.sampled_from(["llama-3.1-8b", "qwen3-30b-a3b", "deepseek-v3", "qwen3-235b-a22b"]),
    chip=st.sampled_from(["h100-sxm", "a100-sxm-80gb", "ascend-910b2", "ascend-910c"]),
    cards=st.sampled_from([64, 256]),
    stack=st.sampled_from([None, "megatron-core-2025", "megatron-core-moe-2025", "megatron-core-2024"]),
    overrides=st.sampled_from(OVERRIDES),
)
def test_every_sensitivity_entry_is_that_profiles_own_search(preset, chip, cards, stack, overrides):
    """Whichever profile lends its answer to another (plans_alike_key), the entry is what a search of
    that profile at the plan's size gives: the plan's days scaled by the throughput ratio."""
    from estimator.plan.stack_sensitivity import _scaled, stack_section

    training: dict = {"tokens": 1e11, "stack_overrides": overrides}
    if stack is not None:
        training["stack"] = stack
    doc = {"model": {"preset": preset}, "training": training, "hardware": {"accelerator": chip}}
    try:
        r = resolve(parse_scenario({**doc, "cluster": {"cards": cards}}))
    except ScenarioError:
        event("refused")
        return  # a stack that does not run on the chip, or needs what it lacks
    problem = layout_problem(r, cards, fabric_for(r, cards))
    best = search(problem).best
    if best is None:
        event("no layout")
        return
    event(f"searched, moe {problem.arch.is_moe}")
    batch_search.clear_caches()
    section = stack_section(problem, best, 30.0, r.accelerator.vendor, problem.stack.id, stack is None)
    for profile_id, days in section.sensitivity_days.items():
        if profile_id == problem.stack.id or days is None:  # the plan itself; None: time ran out
            continue
        other = search(dataclasses.replace(problem, stack=STACKS[profile_id])).best
        assert days == (None if other is None else _scaled(30.0, best, other)), profile_id
