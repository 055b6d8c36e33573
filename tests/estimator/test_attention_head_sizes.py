"""Fused attention kernels that take one head size for Q, K and V (attention.kernel_score_dims):
FlashAttention-2 (flash_api.cpp mha_fwd: CHECK_SHAPE(v, ..., head_size_og)), the Triton
FlashAttention (assert v.shape == (batch, seqlen_k, nheads, d)) and CANN's FlashAttentionScore get
MLA's narrower value padded to the query/key head size; cuDNN / FlashAttention-3 take both sizes."""

from __future__ import annotations

import pytest

from estimator.contract.resolve import resolve
from estimator.contract.scenario import validate_shape
from estimator.layout.steptime.attention import kernel_score_dims
from estimator.validation.published_runs import published_layout, published_runs, run_scenario

GPU_REFERENCE_ROW = "deepseek-v2-60b-32xa100-8k-mindspeed-gpu-reference"


def test_one_head_size_kernels_pad_the_value_to_the_query_head() -> None:
    # DeepSeek-V2 / V3 MLA: d_qk = 128 + 64 = 192, d_v = 128
    assert kernel_score_dims("fa2", 192.0, 128.0) == (192.0, 192.0)
    assert kernel_score_dims("fa-triton", 192.0, 128.0) == (192.0, 192.0)
    assert kernel_score_dims("ascend-fa", 192.0, 128.0) == (192.0, 192.0)
    # cuDNN fused attention / FlashAttention-3 and the unfused path compute the two sizes as given
    assert kernel_score_dims("fa3", 192.0, 128.0) == (192.0, 128.0)
    assert kernel_score_dims("unfused", 192.0, 128.0) == (192.0, 128.0)
    # equal sizes are unchanged on every kernel
    assert kernel_score_dims("fa2", 128.0, 128.0) == (128.0, 128.0)


def _attention_s(kernel: str) -> float:
    """Attention-core seconds per step of the DeepSeek-V2 60B GPU reference row on `kernel`."""
    models, runs = published_runs()
    run = dict(next(r for r in runs if r["id"] == GPU_REFERENCE_ROW))
    run["stack_overrides"] = {**run.get("stack_overrides", {}), "attention_kernel": kernel}
    shown = published_layout(resolve(validate_shape(run_scenario(run, models))))
    return float(shown.compute_detail_s["attention"])


def test_fa2_computes_mla_with_the_padded_value_on_a100() -> None:
    # On Ampere FA2 and the cuDNN/FA3 class share the efficiency (0.60 of peak, the FA2 curve by head
    # size at arch.head_dim 128, the same causal half-length), so only the FLOPs differ: per head and
    # key 192 + 192 = 384 with the padded value against 192 + 128 = 320 as given: 384 / 320 = 1.2
    assert _attention_s("fa2") == pytest.approx(1.2 * _attention_s("fa3"), rel=1e-9)
