"""estimator.plan.peak_step: the step time with the kernels at peak, computed by hand."""

import dataclasses

import pytest

from estimator import catalog
from estimator.errors import ScenarioError
from estimator.plan.compose import estimate
from estimator.plan.diagnose import diagnose
from estimator.plan.peak_step import step_time_at_peak_s
from tests.estimator.test_layout import ACC, problem


def _problem(doc: dict):
    from estimator.contract.resolve import resolve
    from estimator.contract.scenario import validate_shape
    from estimator.plan.problem import problem_at

    r = resolve(validate_shape(doc), None)
    return problem_at(r, r.scenario.cluster.cards)


LLAMA_8B_8K = {
    "model": {"preset": "llama-3.1-8b"},
    "training": {"tokens": 1e12, "seq_len": 8192, "global_batch_tokens": 64 * 8192},
    "hardware": {"accelerator": "h100-sxm", "server": "dgx-h100"},
    "cluster": {"cards": 8},
}
# Llama 3.1 8B at 8K: 6·N = 6 x 8,030,261,248 = 48,181,567,488 FLOP a token, and the causal half of
# PaLM's attention 12·L·s·d = 12 x 32 x 8,192 x 4,096 = 12,884,901,888: 6,442,450,944; together
# 54,624,018,432 FLOP the kernels compute per token
LLAMA_8B_8K_COMPUTED = 6 * 8_030_261_248 + 12 * 32 * 8192 * 4096 // 2


def test_a_batch_at_peak_takes_the_flops_the_kernels_compute_over_the_cards_peak():
    """64 sequences of 8,192 tokens (524,288) x 54,624,018,432 FLOP over 8 H100 at 989.4e12 FLOP/s
    BF16: 3.6182 s (PaLM's model FLOPs, 6.1066e10 a token, would say 4.045 s: they count the
    whole attention matrix, twice what causal kernels run)."""
    assert catalog.accelerator("h100-sxm").peak_flops_bf16 == 989.4e12
    assert LLAMA_8B_8K_COMPUTED == 54_624_018_432
    expected = 524_288 * LLAMA_8B_8K_COMPUTED / (8 * 989.4e12)
    assert step_time_at_peak_s(_problem(LLAMA_8B_8K)) == pytest.approx(expected, rel=1e-12)
    assert expected == pytest.approx(3.6182, abs=1e-4)


def test_at_128k_the_bound_is_the_causal_kernels_not_the_model_flops():
    """DeepSeek-V3 at 128K: 6·N = 6 x 37,552,282,624 = 225,313,695,744 FLOP a token; PaLM's
    attention 12 x 61 layers x 131,072 x 24,576 (128 heads x 192) = 2,357,937,045,504, half of it
    computed: 1,404,282,218,496 a token. 32 sequences (4,194,304 tokens) on 768 Ascend 910C at
    752e12 FLOP/s: 10.198 s with the kernels at peak (model FLOPs at MFU 1 would be 18.76 s, which
    the model's own DualPipe plan beats)."""
    doc = {
        "model": {"preset": "deepseek-v3"},
        "training": {"tokens": 1e12, "seq_len": 131_072, "global_batch_tokens": 4_194_304},
        "hardware": {"accelerator": "ascend-910c"},
        "cluster": {"cards": 768},
    }
    computed = 6 * 37_552_282_624 + 12 * 61 * 131_072 * 24_576 // 2
    expected = 4_194_304 * computed / (768 * 752e12)
    assert step_time_at_peak_s(_problem(doc)) == pytest.approx(expected, rel=1e-12)
    assert expected == pytest.approx(10.198, abs=1e-3)


def test_the_peak_is_the_one_of_the_problems_precision():
    """The same batch in FP8 on a card of 200e12 FLOP/s FP8 against 100e12 BF16: half the time."""
    fp8 = dataclasses.replace(ACC, peak_flops_fp8=200e12)
    bf16 = problem(seq_len=4096, global_batch_tokens=4_194_304, cards=64)
    assert step_time_at_peak_s(dataclasses.replace(bf16, accelerator=fp8, precision="fp8")) == pytest.approx(
        step_time_at_peak_s(bf16) * ACC.peak_flops_bf16 / 200e12, rel=1e-12
    )


def test_without_a_peak_there_is_no_bound():
    p = problem(acc=dataclasses.replace(ACC, peak_flops_bf16=0.0), model_flop_per_token=4.2e10)
    assert step_time_at_peak_s(p) == 0.0


def test_the_pilot_and_the_diagnosis_refuse_the_same_step_below_it():
    """Llama 3.1 8B at 8K on 8 H100, 64 sequences: 3.6182 s with the kernels at peak (above); a
    measured 3.5 s is refused by both checks, each with its own code."""
    run = LLAMA_8B_8K
    with pytest.raises(ScenarioError) as measured:
        diagnose({**run, "measured": {"step_time_s": 3.5}})
    (err,) = measured.value.errors
    assert err.code == "measured-step-above-peak"
    assert err.params["model_s"] == pytest.approx(524_288 * LLAMA_8B_8K_COMPUTED / (8 * 989.4e12), rel=1e-9)
    pilot = {"cards": 8, "seq_len": 8192, "global_batch_tokens": 64 * 8192, "measured_step_time_s": 3.5}
    target = {**run, "cluster": {"cards": 64}, "calibration": {"pilot": pilot}}
    with pytest.raises(ScenarioError) as calibrated:
        estimate(target)
    assert [e.code for e in calibrated.value.errors] == ["pilot-above-peak"]


def test_a_long_context_step_faster_than_model_flops_at_peak_is_diagnosed():
    """DeepSeek-V3 at 128K on 768 910C (TP 8 x CP 4 x EP 32, DualPipe): a measured 13.5 s step is
    above the kernels' 10.198 s at peak, so it is diagnosed; engine 2.69.0 refused it as 'above
    peak' against the model FLOPs' 18.76 s."""
    run = {
        "model": {"preset": "deepseek-v3"},
        "training": {"seq_len": 131_072, "global_batch_tokens": 4_194_304, "stack": "deepseek-dualpipe"},
        "hardware": {"accelerator": "ascend-910c"},
        "cluster": {"cards": 768},
        "parallelism": {"tp": 8, "cp": 4, "ep": 32, "pp": 1},
    }
    report = diagnose({**run, "measured": {"step_time_s": 13.5}})
    assert report["run"]["measured"]["step_time_s"] == 13.5
    with pytest.raises(ScenarioError) as below:
        diagnose({**run, "measured": {"step_time_s": 10.0}})
    assert below.value.errors[0].params["model_s"] == pytest.approx(10.198, abs=1e-3)
