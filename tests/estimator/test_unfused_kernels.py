"""Element-wise kernels run unfused (stack `unfused_kernels`, steptime.unfused), MindSpeed's unfused
ring-attention update (cp_merge "eager-npu") and the sliced output layer (`output_layer_sliced`):
bytes counted by hand from the ops MindSpeed-LLM 1.0.RC3 runs, at the 910B2's streaming rate."""

from __future__ import annotations

import numpy as np
import pytest

from estimator.catalog import accelerator
from estimator.contract.resolve import resolve
from estimator.contract.scenario import validate_shape
from estimator.errors import ScenarioError
from estimator.layout.stacks import STACKS, resolve_stack
from estimator.layout.steptime.constants import HBM_EFFICIENCY
from estimator.layout.steptime.context_parallel import CpShape, merge_s
from estimator.validation.published_runs import published_layout, published_runs, run_scenario

# Qwen2 1.5B on 8 x 910B (TP 1, PP 1, no recompute): 64 sequences of 4,096 over 8 data-parallel
# ranks in micro-batches of 2 = 4 micro-batches of 8,192 tokens per step, 28 layers, h 1,536,
# 12 query and 2 key heads of 128, gated FFN 8,960, vocabulary 151,936
TOKENS_PER_STEP = 4 * 8192
LAYERS = 28


def _rate() -> float:
    return accelerator("ascend-910b2").hbm_bandwidth_bytes_per_s * HBM_EFFICIENCY


def _elementwise_s(overrides: dict[str, object]) -> float:
    """Element-wise seconds per step of the Qwen2 1.5B row with stack overrides added."""
    models, runs = published_runs()
    run = dict(next(r for r in runs if r["id"] == "qwen2-1.5b-8x910b-4k-mindspeed"))
    run["stack_overrides"] = {**run.get("stack_overrides", {}), **overrides}
    shown = published_layout(resolve(validate_shape(run_scenario(run, models))))
    return float(shown.compute_detail_s["elementwise"])


def test_unfused_rope_moves_40_more_bytes_per_query_and_key_element() -> None:
    # (12 + 2) heads x 128 = 1,792 elements per token; t·cos + rotate_half(t)·sin moves 20 B forward
    # and 20 B backward, all of it added (the fused kernel's 4 + 4 is not priced): 40 B per element
    extra = TOKENS_PER_STEP * LAYERS * 1792 * 40.0
    delta = _elementwise_s({"unfused_kernels": ["rope"]}) - _elementwise_s({})
    assert delta == pytest.approx(extra / _rate(), rel=1e-6)


def test_unfused_swiglu_moves_20_more_bytes_per_activation_output() -> None:
    # silu(x0)·x1: 10 B forward and 26 B backward against npu_swiglu's 6 + 10: 4 + 16 more per f
    extra = TOKENS_PER_STEP * LAYERS * 8960 * 20.0
    delta = _elementwise_s({"unfused_kernels": ["swiglu"]}) - _elementwise_s({})
    assert delta == pytest.approx(extra / _rate(), rel=1e-6)


def test_unfused_rmsnorm_moves_118_more_bytes_per_normalised_element() -> None:
    # two norms of 1,536 per layer (TP 1); the fp32 ops move 36 B forward, 92 B backward against
    # npu_rms_norm's 4 + 6: 32 + 86 more
    extra = TOKENS_PER_STEP * LAYERS * 2 * 1536 * 118.0
    delta = _elementwise_s({"unfused_kernels": ["rmsnorm"]}) - _elementwise_s({})
    assert delta == pytest.approx(extra / _rate(), rel=1e-6)


def test_the_unfused_kernels_add_up() -> None:
    base = _elementwise_s({})
    parts = sum(_elementwise_s({"unfused_kernels": [k]}) - base for k in ("rope", "rmsnorm", "swiglu"))
    both = _elementwise_s({"unfused_kernels": ["rope", "rmsnorm", "swiglu"]}) - base
    assert both == pytest.approx(parts, rel=1e-9)


def test_sliced_output_layer_copies_the_logits_once_each_way() -> None:
    # torch.cat of the N slices' logits (read 2, write 2) and the strided gradient slices made
    # contiguous in the backward (read 2, write 2): 8 B per logit and token
    extra = TOKENS_PER_STEP * 151936 * 8.0
    delta = _elementwise_s({"output_layer_sliced": True}) - _elementwise_s({})
    assert delta == pytest.approx(extra / _rate(), rel=1e-6)


def test_mindspeed_unfused_ring_update_merges_at_69_bytes_per_output_element() -> None:
    # CP 4 ring: 3 merging steps; 1,000 tokens with 512 output and 256 K/V elements each; one
    # forward: 3 x (1000 x 512 x 69 + (1000 x 512 x 6 + 1000 x 256 x 6)) bytes at 1e12 B/s
    one = np.array([1.0])
    shape = CpShape(
        cp=4 * one,
        tp=one,
        tokens=1000 * one,
        kv_elems=256.0,
        q_elems=512.0,
        t_fwd=one,
        t_bwd=one,
        ring=4 * one,
    )
    expected = 3 * (1000 * 512 * 69.0 + 1000 * 512 * 6.0 + 1000 * 256 * 6.0) / 1e12
    assert float(merge_s(shape, "eager-npu", 1.0, 1e12)[0]) == pytest.approx(expected)


def test_every_profile_runs_the_fused_kernels_by_default() -> None:
    # the field is set per row from its script; no profile assumes an unfused kernel
    assert all(p.unfused_kernels == () and not p.output_layer_sliced for p in STACKS.values())


def test_unfused_kernel_overrides_are_checked() -> None:
    stack = resolve_stack("mindspeed-2025", "Huawei", {"unfused_kernels": ["rope", "swiglu"]})
    assert stack.unfused_kernels == ("rope", "swiglu")
    for bad in (["rope", "rope"], ["gelu"], "rope"):
        with pytest.raises(ScenarioError) as err:
            resolve_stack("mindspeed-2025", "Huawei", {"unfused_kernels": bad})
        assert err.value.errors[0].field == "training.stack_overrides.unfused_kernels"
    with pytest.raises(ScenarioError):
        resolve_stack("mindspeed-2025", "Huawei", {"cp_merge": "eager"})
