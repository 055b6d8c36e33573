"""Ascend mechanisms (estimator.layout.steptime.ascend): MC2's exposed share, MoE layers without MC2."""

from __future__ import annotations

import pytest

from estimator.catalog import accelerator
from estimator.layout.steptime.ascend import ASCEND_MC2_EXPOSED_FRACTION as F
from estimator.layout.steptime.ascend import is_ascend, mc2_tp_exposed_s
from estimator.validation.ascend import calibrate_ascend
from estimator.validation.published_runs import predicted_tokens_per_s_per_gpu, published_runs, run_scenario


def test_mc2_exposes_its_share_of_what_the_gemms_cover() -> None:
    # 4 ms attention + 6 ms MLP collectives under 20 ms of GEMMs, 30% stays exposed:
    # hidden = 10 x 0.7 = 7 ms, exposed = 3 ms
    exposed, hidden = mc2_tp_exposed_s(4e-3, 6e-3, 20e-3, moe_layer=False, mc2_fraction=0.3)
    assert float(exposed) == pytest.approx(3e-3)
    assert float(hidden) == pytest.approx(7e-3)


def test_mc2_cannot_hide_more_than_the_gemms_last() -> None:
    # 10 ms of collectives, 4 ms of GEMMs, nothing exposed of what they cover:
    # hidden = 4 ms, exposed = 10 - 4 = 6 ms
    exposed, hidden = mc2_tp_exposed_s(5e-3, 5e-3, 4e-3, moe_layer=False, mc2_fraction=0.0)
    assert float(exposed) == pytest.approx(6e-3)
    assert float(hidden) == pytest.approx(4e-3)


def test_moe_layer_dispatcher_collectives_are_not_fused() -> None:
    # MindSpeed: MoE models get no MC2; the attention's 4 ms still pipeline (half exposed),
    # the MoE MLP's 6 ms of all-gather / reduce-scatter are exposed in full: 2 + 6 = 8 ms
    exposed, hidden = mc2_tp_exposed_s(4e-3, 6e-3, 20e-3, moe_layer=True, mc2_fraction=0.5)
    assert float(exposed) == pytest.approx(8e-3)
    assert float(hidden) == pytest.approx(2e-3)


def test_total_is_conserved() -> None:
    exposed, hidden = mc2_tp_exposed_s(3e-3, 2e-3, 1e-3, moe_layer=False, mc2_fraction=0.85)
    assert float(exposed) + float(hidden) == pytest.approx(5e-3)


def test_ascend_families() -> None:
    assert is_ascend("ascend-910b") and is_ascend("ascend-910c")
    assert not is_ascend("hopper")


def test_ascend_constants_are_the_best_on_their_grid() -> None:
    """matmul_efficiency (910B) and ASCEND_MC2_EXPOSED_FRACTION are fitted once on the eight dense
    MindSpeed-LLM rows together: the calibration grid's steps around them do no better."""
    eff = accelerator("ascend-910b2").matmul_efficiency
    best_e, best_f, mae = calibrate_ascend([eff - 0.01, eff, eff + 0.01], [F - 0.05, F, F + 0.05])
    assert (best_e, best_f) == (eff, F)
    assert mae <= 10.0


@pytest.mark.parametrize(
    ("run_id", "band"),
    [
        ("llama3-70b-32x910b-8k-mindspeed", 10.0),  # no MC2 in its script: TP fully exposed
        ("llama31-70b-32x910b-8k-mindspeed", 15.0),
        ("llama2-34b-16x910b-4k-mindspeed", 10.0),
    ],
)
def test_dense_ascend_hold_outs(run_id: str, band: float) -> None:
    """Rows the Ascend constants were not fitted on (MindSpeed-LLM 1.0.RC3 README, their scripts)."""
    models, runs = published_runs()
    run = next(r for r in runs if r["id"] == run_id)
    assert "fit" not in run
    predicted = predicted_tokens_per_s_per_gpu(run_scenario(run, models))
    published = float(run["tokens_per_s_per_gpu"])
    assert abs(predicted - published) / published <= band / 100.0
