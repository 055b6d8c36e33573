"""Partial (block) recompute: the fewest whole layers per stage recompute so the card fits in HBM."""

import math

import pytest

from estimator import catalog
from estimator.layout.memory import stage_layers
from estimator.layout.search import LayoutProblem, evaluate_layout, search
from estimator.model.transformer import param_counts

LAYOUT = {
    "tp": 8,
    "pp": 16,
    "cp": 1,
    "micro_batch_size": 1,
    "virtual_stages": 1,
    "sequence_parallel": True,
    "zero_stage": 1,
}


def problem(**fixed):
    arch = catalog.preset("llama-3.1-405b").architecture
    return LayoutProblem(
        arch=arch,
        counts=param_counts(arch),
        seq_len=8192,
        global_batch_tokens=16 * 2**20,
        cards=8192,
        accelerator=catalog.accelerator("h100-sxm"),
        fixed=fixed,
    )


def test_partial_recomputes_the_fewest_layers_that_fit():
    p = problem()
    none = evaluate_layout(p, recompute="none", **LAYOUT)
    full = evaluate_layout(p, recompute="full", **LAYOUT)
    part = evaluate_layout(p, recompute="partial", **LAYOUT)
    hbm = p.accelerator.hbm_bytes
    assert none.per_card_bytes["total"] > hbm > full.per_card_bytes["total"]  # the case partial is for
    # memory falls linearly with the recomputed layers: k = ceil(L_stage x (none - HBM) / (none - full))
    layers = int(stage_layers(126, 0, 16, 1).full)
    none_b, full_b = none.per_card_bytes["total"], full.per_card_bytes["total"]
    k = math.ceil(layers * (none_b - hbm) / (none_b - full_b))
    assert 0 < k < layers
    assert part.recompute_fraction == pytest.approx(k / layers)
    assert part.per_card_bytes["total"] == pytest.approx(none_b + k / layers * (full_b - none_b))
    assert part.per_card_bytes["total"] <= hbm
    # it pays k/L of a recomputed forward: between no recompute and full recompute
    assert none.step_time_s < part.step_time_s < full.step_time_s


def test_search_prefers_partial_over_full_when_it_fits():
    found = search(problem(**{k: v for k, v in LAYOUT.items() if k != "virtual_stages"}))
    assert found.best.recompute == "partial"
    assert 0 < found.best.recompute_fraction < 1


def test_partial_is_not_offered_when_no_recompute_fits():
    arch = catalog.preset("llama-3.1-8b").architecture
    p = LayoutProblem(
        arch=arch,
        counts=param_counts(arch),
        seq_len=4096,
        global_batch_tokens=4 * 2**20,
        cards=64,
        accelerator=catalog.accelerator("h100-sxm"),
        fixed={"tp": 1, "pp": 1},
    )
    found = search(p)
    assert found.best.recompute == "none"
    assert found.rejected.get("partial-recompute-redundant", 0) > 0
    assert all(e.recompute != "partial" or 0 < e.recompute_fraction < 1 for e in found.runners_up)
