"""estimator.plan.peak_step: the step time at MFU 1, computed by hand."""

import dataclasses

import pytest

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
