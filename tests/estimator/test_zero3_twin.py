"""The ZeRO-2 what-if of a chosen ZeRO-3 layout (plan.sections.layout.zero2_twin) against the same
layout planned with stage 2 fixed: where stage 3 won on speed (its freed memory buys less
recomputation), the plan must not advise stage 2 nor say that stage 2 does not fit."""

import copy

import pytest

from estimator.plan.compose import estimate

# DeepSeek-V3 at 32K tokens on 1,024 H100 (Megatron-Core MoE recipes): the search chooses ZeRO-3.
# (Through 2.72.0 this was 2,560 Ascend 910B2, whose MindSpeed stack runs ZeRO-1 at most since 2.73.0.)
SCENARIO = {
    "model": {"preset": "deepseek-v3"},
    "training": {"tokens": 2e12, "seq_len": 32768},
    "hardware": {"accelerator": "h100-sxm"},
    "cluster": {"cards": 1024},
}
LAYOUT_KEYS = (
    "tp",
    "pp",
    "cp",
    "ep",
    "expert_tp",
    "micro_batch_size",
    "virtual_stages",
    "sequence_parallel",
    "recompute",
)


@pytest.fixture(scope="module")
def plans():
    chosen = estimate(copy.deepcopy(SCENARIO), {})["result"]
    p = chosen["parallelism"]
    fixed = {k: p[k] for k in LAYOUT_KEYS} | {"dp": p["dp"], "zero_stage": 2}
    stage2 = estimate(copy.deepcopy(SCENARIO) | {"parallelism": fixed}, {})["result"]
    return chosen, stage2


def test_the_twin_is_the_same_layout_planned_with_stage_2(plans):
    chosen, stage2 = plans
    assert chosen["parallelism"]["zero_stage"] == 3
    assert stage2["memory"]["fits"] is True
    assert chosen["memory"]["fits_with_zero2"] is True
    # the reference: tokens/s of the stage-2 plan over the stage-3 plan, same layout and batch
    assert stage2["parallelism"]["global_batch_tokens"] == chosen["parallelism"]["global_batch_tokens"]
    reference = stage2["parallelism"]["tokens_per_s"] / chosen["parallelism"]["tokens_per_s"]
    assert chosen["memory"]["zero2_speed_factor"] == pytest.approx(reference, rel=1e-9)


def test_stage_3_that_won_on_speed_is_neither_unneeded_nor_forced(plans):
    chosen, stage2 = plans
    slower_by = 1 - stage2["parallelism"]["tokens_per_s"] / chosen["parallelism"]["tokens_per_s"]
    assert slower_by > 0.02  # outside the search's tie band: stage 3 is the faster choice
    assert "zero3-unneeded" not in [a["code"] for a in chosen["advice"]]
    assert "zero3-unneeded" not in [w["code"] for w in chosen["warnings"]]
    row = next(s for s in chosen["starting_configuration"] if s["setting"] == "zero_stage")
    assert (row["value"], row["code"]) == (3, "start.zero_stage.3-faster")
    assert row["params"]["slower_by"] == pytest.approx(slower_by, rel=1e-9)
