"""The Triton FlashAttention backward at a head dimension below its power-of-two block
(estimator.layout.steptime.attention.backward_slowdown) and its one fitted factor."""

from __future__ import annotations

import dataclasses

import pytest

from estimator.layout.problem import LayoutProblem
from estimator.layout.search import search
from estimator.layout.steptime.attention import TRITON_UNEVEN_HEAD_BACKWARD_FACTOR, backward_slowdown
from estimator.validation.factor_fit import fit_problems
from estimator.validation.triton_head import FIT_TAG, calibrate_triton_backward


def test_only_the_triton_kernel_at_an_uneven_head_dimension_is_slowed() -> None:
    # MPT-30B: 7168 / 64 = 112 runs in a 128 block (EVEN_HEADDIM False); 128 and 64 are even
    assert backward_slowdown("fa-triton", 112.0, 2.0) == pytest.approx(2.0)
    assert backward_slowdown("fa-triton", 128.0, 2.0) == pytest.approx(1.0)
    assert backward_slowdown("fa-triton", 64.0, 2.0) == pytest.approx(1.0)
    assert backward_slowdown("fa2", 112.0, 2.0) == pytest.approx(1.0)
    assert backward_slowdown("fa3", 112.0, 2.0) == pytest.approx(1.0)


def _attention_s(problem: LayoutProblem, factor: float) -> float:
    found = search(dataclasses.replace(problem, triton_uneven_backward=factor))
    shown = found.best or found.closest
    assert shown is not None
    return shown.compute_detail_s["attention"]


def test_the_factor_scales_the_backward_share_of_the_attention_core() -> None:
    # full recompute: two forward passes and a backward of 2.5 forwards; a backward at 2x its
    # priced time makes the core (2 + 2.5 x 2) / (2 + 2.5) = 7 / 4.5 of its time at 1x
    problem = fit_problems(FIT_TAG)[0][0]
    assert problem.arch.head_dim == 112
    assert _attention_s(problem, 2.0) / _attention_s(problem, 1.0) == pytest.approx(7.0 / 4.5, rel=1e-6)


def test_the_fit_uses_the_eleven_mpt30b_rows_and_reproduces_the_constant() -> None:
    # every MPT-30B row of llm-foundry's H100 80GB BF16 and A100 80GB tables: 6 on H100, 5 on A100
    assert len(fit_problems(FIT_TAG)) == 11
    factor, mean_error = calibrate_triton_backward()
    assert factor == pytest.approx(TRITON_UNEVEN_HEAD_BACKWARD_FACTOR)
    assert mean_error < 11.0
