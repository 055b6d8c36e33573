"""estimator.plan.peak_step: the step time at MFU 1, computed by hand."""

import dataclasses

import pytest

from estimator import catalog
from estimator.errors import ScenarioError
from estimator.plan.compose import estimate
from estimator.plan.diagnose import diagnose
from estimator.plan.peak_step import step_time_at_peak_s
from tests.estimator.test_layout import ACC, problem


def test_a_7b_batch_at_peak_takes_its_flops_over_the_cards_peak():
    """A 7B dense model at 6 N = 6 x 7e9 = 4.2e10 FLOP per token, 1,024 sequences of 4,096 tokens
    (4,194,304 tokens) on 64 cards of 100e12 FLOP/s: 4,194,304 x 4.2e10 = 1.76160768e17 FLOP over
    64 x 100e12 = 6.4e15 FLOP/s = 27.52512 s."""
    p = problem(seq_len=4096, global_batch_tokens=4_194_304, cards=64, model_flop_per_token=4.2e10)
    assert step_time_at_peak_s(p) == pytest.approx(27.52512, rel=1e-12)


def test_the_peak_is_the_one_of_the_problems_precision():
    """The same batch in FP8 on a card of 200e12 FLOP/s FP8: half the time, 13.76256 s."""
    fp8 = dataclasses.replace(ACC, peak_flops_fp8=200e12)
    p = problem(
        acc=fp8,
        precision="fp8",
        seq_len=4096,
        global_batch_tokens=4_194_304,
        cards=64,
        model_flop_per_token=4.2e10,
    )
    assert step_time_at_peak_s(p) == pytest.approx(13.76256, rel=1e-12)


def test_without_a_peak_there_is_no_bound():
    p = problem(acc=dataclasses.replace(ACC, peak_flops_bf16=0.0), model_flop_per_token=4.2e10)
    assert step_time_at_peak_s(p) == 0.0


def test_the_pilot_and_the_diagnosis_refuse_the_same_step_below_it():
    """Llama 3.1 8B (6 x 8.03e9 + 12 x 32 x 8192 x 4096 = 6.1065e10 FLOP per token) on 8 H100
    (989.4e12 FLOP/s BF16) with 64 sequences of 8,192 tokens: 524,288 x 6.1065e10 / (8 x 989.4e12)
    = 4.045 s at MFU 1; a measured 4.0 s is refused by both checks, each with its own code."""
    assert catalog.accelerator("h100-sxm").peak_flops_bf16 == 989.4e12
    run = {
        "model": {"preset": "llama-3.1-8b"},
        "training": {"tokens": 1e12, "seq_len": 8192, "global_batch_tokens": 64 * 8192},
        "hardware": {"accelerator": "h100-sxm", "server": "dgx-h100"},
        "cluster": {"cards": 8},
    }
    with pytest.raises(ScenarioError) as measured:
        diagnose({**run, "measured": {"step_time_s": 4.0}})
    (err,) = measured.value.errors
    assert err.code == "measured-step-above-peak"
    assert err.params["model_s"] == pytest.approx(524_288 * 6.1065e10 / (8 * 989.4e12), rel=1e-3)
    pilot = {"cards": 8, "seq_len": 8192, "global_batch_tokens": 64 * 8192, "measured_step_time_s": 4.0}
    target = {**run, "cluster": {"cards": 64}, "calibration": {"pilot": pilot}}
    with pytest.raises(ScenarioError) as calibrated:
        estimate(target)
    assert [e.code for e in calibrated.value.errors] == ["pilot-above-peak"]
