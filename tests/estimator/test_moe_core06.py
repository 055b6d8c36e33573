"""Megatron-Core 0.6's MoE path (estimator.layout.steptime.moe_core06) and its one fitted factor."""

from __future__ import annotations

import copy

import pytest

from estimator.layout.stacks import STACKS
from estimator.layout.steptime.moe_core06 import MCORE06_EXPERT_TIME_FACTOR, core06_experts_s
from estimator.validation.moe_core06 import calibrate_core06_expert_factor, fit_problems
from estimator.validation.published_runs import predicted_tokens_per_s_per_gpu, published_runs, run_scenario


def test_the_factor_scales_the_expert_block_only_on_the_core06_path() -> None:
    # 12 ms of priced expert GEMMs: 12 x 1.5 = 18 ms under core 0.6's MoE layer, 12 ms elsewhere
    assert float(core06_experts_s(12e-3, True, 1.5)) == pytest.approx(18e-3)
    assert float(core06_experts_s(12e-3, False, 1.5)) == pytest.approx(12e-3)


def test_only_the_mindspeed_llm_rc3_profile_runs_the_core06_moe_layer() -> None:
    assert STACKS["mindspeed-2025"].moe_core06
    assert "1.0.RC3" in STACKS["mindspeed-2025"].release
    assert not any(p.moe_core06 for sid, p in STACKS.items() if sid != "mindspeed-2025")


def test_the_fit_uses_the_four_gpu_reference_rows_and_reproduces_the_constant() -> None:
    assert len(fit_problems()) == 4
    factor, mean_error = calibrate_core06_expert_factor()
    assert factor == pytest.approx(MCORE06_EXPERT_TIME_FACTOR)
    assert mean_error < 15.0


def test_the_factor_slows_an_ascend_moe_row_and_leaves_its_dense_rows() -> None:
    models, runs = published_runs()
    by_id = {r["id"]: r for r in runs}
    for rid, moves in (
        ("mixtral-8x7b-64x910b-32k-mindspeed", True),
        ("llama2-7b-8x910b-4k-mindspeed", False),
    ):
        run = by_id[rid]
        off = copy.deepcopy(run)
        off["stack_overrides"] = {**run.get("stack_overrides", {}), "moe_core06": False}
        on_tps = predicted_tokens_per_s_per_gpu(run_scenario(run, models))
        off_tps = predicted_tokens_per_s_per_gpu(run_scenario(off, models))
        assert (on_tps < 0.9 * off_tps) if moves else on_tps == pytest.approx(off_tps)
