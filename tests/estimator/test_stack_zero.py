"""A stack plans only the ZeRO stages it runs (StackProfile.max_zero_stage; enumeration's rule
zero-stage-not-run-by-stack): MindSpeed-LLM 1.0.RC3 on Megatron-Core 0.6 shards with the
distributed optimizer (ZeRO-1) only (docs/sources.md#mindspeed)."""

from __future__ import annotations

import dataclasses

import pytest

from estimator.contract.resolve import resolve
from estimator.contract.scenario import validate_shape
from estimator.errors import ScenarioError
from estimator.layout.batch_enumeration import enumerate_layouts
from estimator.layout.batch_search import best_layouts
from estimator.layout.stacks import STACKS
from estimator.plan.compose import estimate
from estimator.plan.problem import fabric_for, layout_problem

# DeepSeek-V3 on 256 Ascend 910B2 (MindSpeed, the Ascend default): through 2.72.0 the search took
# TP 8 x DP 32 x EP 32 with ZeRO-3, a layout MindSpeed-LLM cannot run.
DEEPSEEK_910B2 = {
    "model": {"preset": "deepseek-v3"},
    "training": {"tokens": 1e12},
    "hardware": {"accelerator": "ascend-910b2"},
    "cluster": {"cards": 256},
}


def test_mindspeed_runs_the_distributed_optimizer_at_most_and_the_others_zero_3():
    assert STACKS["mindspeed-2025"].max_zero_stage == 1
    assert STACKS["pytorch-fsdp2"].max_zero_stage == 3 and STACKS["megatron-deepspeed"].max_zero_stage == 3


def test_a_moe_plan_on_mindspeed_takes_no_zero_2_or_3():
    result = estimate(DEEPSEEK_910B2)["result"]
    assert result["parallelism"]["zero_stage"] <= 1
    assert "zero-stage-not-run-by-stack" in result["layout"]["rejected"]


def test_a_fixed_zero_3_on_mindspeed_is_refused_with_the_stack_rule():
    with pytest.raises(ScenarioError) as info:
        estimate({**DEEPSEEK_910B2, "parallelism": {"zero_stage": 3}})
    (err,) = info.value.errors
    assert (err.field, err.code) == ("parallelism.zero_stage", "no-possible-layout")
    assert err.params["reasons"] == ["zero-stage-not-run-by-stack"]
    assert err.params["suggestions"] and all(s["zero_stage"] <= 1 for s in err.params["suggestions"])


def test_the_batched_search_follows_the_stack_rule():
    """The batched enumeration (sweeps, sizing) keeps stages 0 and 1 only under MindSpeed, and 0-3
    under FSDP2 (on the same model, pp = 1 rows: no pipeline rule involved)."""
    r = resolve(validate_shape(DEEPSEEK_910B2), None)
    problem = layout_problem(r, 256, fabric_for(r, 256))
    zero = enumerate_layouts([problem])["zero"]
    assert set(zero.tolist()) == {0, 1}
    best = best_layouts([problem])[0]
    assert best is not None and best.zero_stage <= 1
    fsdp = dataclasses.replace(problem, stack=STACKS["pytorch-fsdp2"])
    assert set(enumerate_layouts([fsdp])["zero"].tolist()) == {0, 1, 2, 3}
