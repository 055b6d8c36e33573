"""Megatron-Core trains a MoE model with TP > 1 only under sequence parallelism
(StackProfile.moe_tp_needs_sp; enumeration's rule moe-tp-without-sequence-parallel): core_v0.6.0
megatron/training/arguments.py:495-499 asserts it (any EP; MindSpeed-LLM 1.0.RC3's base),
model_parallel_config.py:286-290 raises for EP > 1, and MoELayer.forward raises in training from
core_r0.8.0 (moe_layer.py:96-104) to main (moe_layer.py:636). Where sequence parallelism cannot split
the sequence (seq_len % (cp·tp) != 0, sp_splits_sequence) such a stack has no layout at that TP."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from estimator.contract.resolve import resolve
from estimator.contract.scenario import validate_shape
from estimator.errors import ScenarioError
from estimator.layout.batch_enumeration import enumerate_layouts
from estimator.layout.batch_search import best_layouts
from estimator.layout.enumeration import moe_tp_without_sp
from estimator.layout.stacks import STACKS
from estimator.plan.compose import estimate
from estimator.plan.problem import fabric_for, layout_problem

# DeepSeek-V3 at 100,000 tokens on 768 Ascend 910C (MindSpeed): 100,000 = 2^5 · 5^5, so CP 8 leaves
# 12,500 tokens a rank, which TP 8 cannot split (1,562.5): through 2.73.0 TP 8 x CP 16 (781.25 a rank) was planned
# with sequence parallelism off, a layout MindSpeed (Megatron's MoE check) refuses to train.
DEEPSEEK_100K = {
    "model": {"preset": "deepseek-v3"},
    "training": {"tokens": 1e12, "seq_len": 100_000},
    "hardware": {"accelerator": "ascend-910c"},
    "cluster": {"cards": 768},
}


def test_the_rule_refuses_tp_above_1_without_sequence_parallelism_only():
    tp, sp = np.array([1, 1, 2, 8, 8]), np.array([False, True, False, False, True])
    assert moe_tp_without_sp(tp, sp, True).tolist() == [False, False, True, True, False]
    assert moe_tp_without_sp(tp, sp, False).tolist() == [False] * 5  # a dense model or another stack


def test_the_megatron_core_stacks_and_mindspeed_carry_the_check_and_the_others_not():
    needs = {s for s, p in STACKS.items() if p.moe_tp_needs_sp}
    assert needs == {"megatron-core-2025", "megatron-core-moe-2025", "megatron-core-2024", "mindspeed-2025"}


def test_a_fixed_tp_8_cp_8_moe_layout_without_sequence_parallelism_is_refused_with_the_rule():
    with pytest.raises(ScenarioError) as info:
        estimate({**DEEPSEEK_100K, "parallelism": {"tp": 8, "cp": 8, "sequence_parallel": False}})
    (err,) = info.value.errors
    assert err.params["reasons"] == ["moe-tp-without-sequence-parallel"]
    assert err.params["suggestions"]
    for s in err.params["suggestions"]:  # whole sequence-parallel splits, or TP 1
        assert s["tp"] == 1 or 100_000 % (s["tp"] * s["cp"]) == 0


def test_the_plan_and_the_batched_search_take_no_tp_without_sequence_parallelism():
    p = estimate(DEEPSEEK_100K)["result"]["parallelism"]
    assert p["tp"] == 1 or p["sequence_parallel"]
    r = resolve(validate_shape(DEEPSEEK_100K), None)
    problem = layout_problem(r, 768, fabric_for(r, 768))
    c = enumerate_layouts([problem])
    off = (c["tp"] > 1) & ~c["sp"]
    assert not off.any()
    best = best_layouts([problem])[0]
    assert best is not None and (best.tp == 1 or best.sequence_parallel)
    # the same problem on a stack without the check keeps TP 8 x CP 8 without it (EP > 1 among them)
    other = dataclasses.replace(problem, stack=STACKS["deepseek-dualpipe"])
    o = enumerate_layouts([other])
    kept = (o["tp"] == 8) & (o["cp"] == 8) & ~o["sp"]
    assert kept.any() and (o["ep"][kept] > 1).any()
