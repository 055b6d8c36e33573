"""result.stack: the software stack a plan assumed and the wall-clock days under every profile that
runs on the accelerator (estimator.plan.stack_sensitivity)."""

import dataclasses

import numpy as np
import pytest

from estimator.contract.resolve import parse_scenario, resolve
from estimator.layout.search import search
from estimator.layout.stacks import STACKS
from estimator.plan.compose import estimate, fabric_for, layout_problem

DSV3_H800 = {
    "model": {"preset": "deepseek-v3"},
    "training": {"tokens": 14.8e12, "seq_len": 4096, "global_batch_tokens": 15360 * 4096, "precision": "fp8"},
    "hardware": {"accelerator": "h800-sxm"},
    "cluster": {"cards": 2048},
}


@pytest.fixture(scope="module")
def dsv3():
    return estimate(DSV3_H800)["result"]


def test_deepseek_v3_on_2048_h800_names_its_stack_and_the_days_under_each(dsv3):
    stack = dsv3["stack"]
    # MoE on Hopper without a stack chosen: what current Megatron-Core MoE recipes run
    assert stack["id"] == "megatron-core-moe-2025" and stack["default"] is True
    # every NVIDIA profile runs on the H800 (it has FP8 tensor cores); MindSpeed is Ascend-only
    assert set(stack["sensitivity"]) == set(STACKS) - {"mindspeed-2025"}
    assert stack["sensitivity"]["megatron-core-moe-2025"] == dsv3["compute"]["wall_clock_days"]
    days = stack["sensitivity"]
    # DualPipe hides the all-to-all that the Megatron-Core schedule leaves exposed; the flex
    # dispatcher sends a token once per node (fewer NIC bytes than the plain all-to-all)
    assert days["deepseek-dualpipe"] < days["megatron-core-moe-2025"] < days["megatron-core-2025"]
    # the 2021 Megatron-LM (no overlap, no flash attention) is the slowest of all
    assert days["megatron-lm-2021"] == max(d for d in days.values() if d is not None)


def test_days_scale_with_the_inverse_throughput_of_each_profile(dsv3):
    """days(p) = days · tokens_per_s(chosen) / tokens_per_s(p): the same search at the chosen size."""
    r = resolve(parse_scenario(DSV3_H800))
    cards = dsv3["compute"]["cards"]
    problem = layout_problem(r, cards, fabric_for(r, cards))
    other = search(dataclasses.replace(problem, stack=STACKS["deepseek-dualpipe"])).best
    chosen = dsv3["parallelism"]["tokens_per_s"]
    expected = dsv3["compute"]["wall_clock_days"] * chosen / other.tokens_per_s
    assert dsv3["stack"]["sensitivity"]["deepseek-dualpipe"] == pytest.approx(expected, rel=1e-12)


def test_only_the_profiles_that_run_on_the_hardware():
    ascend = estimate(
        {
            "model": {"preset": "qwen3-30b-a3b"},
            "training": {"tokens": 1e11},
            "hardware": {"accelerator": "ascend-910b2"},
            "cluster": {"cards": 64},
        }
    )["result"]["stack"]
    assert ascend["id"] == "mindspeed-2025" and list(ascend["sensitivity"]) == ["mindspeed-2025"]
    a100 = estimate(
        {
            "model": {"preset": "qwen3-30b-a3b"},
            "training": {"tokens": 1e11, "stack": "megatron-core-2024"},
            "hardware": {"accelerator": "a100-sxm-80gb"},
            "cluster": {"cards": 64},
        }
    )["result"]["stack"]
    # no FP8 tensor cores: neither DeepEP profile; a chosen stack is not the default
    assert a100["id"] == "megatron-core-2024" and a100["default"] is False
    assert "megatron-core-moe-2025" not in a100["sensitivity"]
    assert "deepseek-dualpipe" not in a100["sensitivity"]
    assert "megatron-core-2025" in a100["sensitivity"]


def test_sweep_rows_carry_the_stack_they_assumed():
    from estimator.plan.batch import STACK_FIELD, evaluate_columns

    base = {
        "model": {"preset": "qwen3-30b-a3b"},
        "training": {"tokens": 1e11},
        "hardware": {"accelerator": "h100-sxm"},
        "cluster": {"cards": 64},
        "efficiency": {"mfu": 0.3},
    }
    stacks = np.array([None, "deepseek-dualpipe", "pytorch-fsdp2"], dtype=object)
    out = evaluate_columns(base, {"training.stack": stacks})
    # no stack chosen: the MoE default on Hopper; otherwise the one the row names
    assert out[STACK_FIELD].tolist() == ["megatron-core-moe-2025", "deepseek-dualpipe", "pytorch-fsdp2"]


def test_a_dense_model_plans_alike_under_profiles_that_differ_only_in_moe_mechanisms():
    stack = estimate(
        {
            "model": {"preset": "llama-3.1-8b"},
            "training": {"tokens": 1e11},
            "hardware": {"accelerator": "h100-sxm"},
            "cluster": {"cards": 64},
        }
    )["result"]["stack"]
    assert stack["id"] == "megatron-core-2025"  # the dense default: no MoE dispatcher to choose
    # megatron-core-moe-2025 differs from megatron-core-2025 only in the MoE token dispatch
    assert stack["sensitivity"]["megatron-core-moe-2025"] == pytest.approx(
        stack["sensitivity"]["megatron-core-2025"], rel=1e-12
    )


def test_profiles_sharing_one_enumeration_find_what_each_finds_alone():
    """best_in with one families dict for all the profiles (they share the enumerated layouts where
    only the memory or the step time differs) answers what a search of each profile alone answers."""
    from estimator.layout import batch_search
    from estimator.layout.stacks import profiles_for

    r = resolve(
        parse_scenario({**DSV3_H800, "model": {"preset": "llama-3.1-70b"}, "cluster": {"cards": 1024}})
    )
    problem = layout_problem(r, 1024, fabric_for(r, 1024))
    families: dict = {}
    batch_search.clear_caches()  # cold, once: the enumerations the profiles share stay remembered
    for profile in profiles_for("nvidia", True):
        p = dataclasses.replace(problem, stack=profile)
        batch_search.answers.clear()  # each profile's answer searched, not recalled
        shared = batch_search.best_in(p, families)
        assert shared == search(p).best, profile.id
    layouts = {id(f.layouts) for f in families.values()}
    assert len(layouts) < len(families)  # some profiles did share their enumeration


@pytest.mark.parametrize("preset", ["llama-3.1-70b", "qwen3-30b-a3b"])
def test_profiles_alike_with_the_chosen_stack_take_its_answer_unsearched(preset):
    """stack_section seeds the chosen stack's relevant mechanisms with the plan's own best layout:
    every entry equals a search of that profile at the chosen size (the same floats)."""
    from estimator.layout import batch_search
    from estimator.plan.stack_sensitivity import _scaled, stack_section

    doc = {"model": {"preset": preset}, "training": {"tokens": 1e12}, "hardware": {"accelerator": "h100-sxm"}}
    r = resolve(parse_scenario({**doc, "cluster": {"cards": 512}}))
    problem = layout_problem(r, 512, fabric_for(r, 512))
    best = search(problem).best
    batch_search.clear_caches()
    section = stack_section(problem, best, 30.0, "nvidia", problem.stack.id, True)
    for profile_id, days in section.sensitivity_days.items():
        if profile_id == problem.stack.id:
            continue
        other = search(dataclasses.replace(problem, stack=STACKS[profile_id])).best
        assert days == (None if other is None else _scaled(30.0, best, other)), profile_id
