"""The MFU counts PaLM's whole attention matrix while causal kernels compute half of it, so at long
context a predicted MFU above 1 is the kernels below peak, not a plan past it; the MFU range is
capped at the MFU of the kernels at peak (plan.mfu_range.mfu_ceiling), not at 1."""

import pytest

from estimator.contract.resolve import resolve
from estimator.contract.scenario import validate_shape
from estimator.plan.compose import estimate
from estimator.plan.mfu_range import mfu_ceiling, ratio_triangle


def _resolved(**training):
    doc = {
        "model": {"preset": "llama-3.1-8b"},
        "training": {"tokens": 1e12, "seq_len": 131_072, **training},
        "hardware": {"accelerator": "ascend-910c"},
        "cluster": {"cards": 64},
    }
    return resolve(validate_shape(doc), None)


def test_the_ceiling_is_the_mfu_of_the_causal_kernels_at_peak():
    # Llama 3.1 8B at 128K: 6·N = 6 x 8,030,261,248 = 48,181,567,488 FLOP a token; PaLM's attention
    # 12·L·s·d = 12 x 32 x 131,072 x 4,096 = 206,158,430,208; causal kernels compute half of it, so
    # the kernels are at peak at MFU (48,181,567,488 + 206,158,430,208) / (48,181,567,488 +
    # 103,079,215,104) = 254,339,997,696 / 151,260,782,592 = 1.68147
    assert mfu_ceiling(_resolved()) == pytest.approx(254_339_997_696 / 151_260_782_592, rel=1e-12)
    assert mfu_ceiling(_resolved()) == pytest.approx(1.68147, abs=1e-5)
    assert mfu_ceiling(_resolved(attention_flops=False)) == 1.0  # FLOPs counted = FLOPs computed


def test_the_range_reaches_the_ceiling_and_never_falls_below_the_mfu():
    low, mode, high = ratio_triangle(1.09, 0.7, 1.1, ceiling=1.84)
    assert 0 < low < mode == 1.09 and 1.09 * 1.1 < high <= 1.84
    assert ratio_triangle(1.09, 0.7, 1.1, ceiling=1.0)[2] == 1.09  # the mode, not a high below it
    assert ratio_triangle(0.5, 0.7, 1.1)[2] < 1.0  # as before where the cap is not reached


def test_a_long_context_plan_whose_mfu_passes_1_is_planned():
    # DeepSeek-V3 at 128K on 768 Ascend 910C with the DualPipe stack: predicted MFU 1.09 (59.5 % on
    # what causal kernels compute). Engine 2.65.0 refused it: "efficiency.mfu: A range must satisfy
    # low <= likely <= high" (the range capped at 1 below its mode), a field the scenario never gave.
    doc = {
        "model": {"preset": "deepseek-v3"},
        "training": {"tokens": 1e12, "seq_len": 131_072, "stack": "deepseek-dualpipe"},
        "hardware": {"accelerator": "ascend-910c"},
        "cluster": {"cards": 768},
    }
    result = estimate(doc)["result"]
    mfu = result["compute"]["mfu"]
    low, mode, high = result["uncertainty"]["inputs"]["mfu"]
    ceiling = mfu_ceiling(resolve(validate_shape(doc), None))
    assert mfu > 1.0 and mode == mfu
    assert low < mode < high <= ceiling
    assert mfu / ceiling < 1.0  # the causal kernels below peak
