"""Per-step work of the weights' replica group: data-parallel communication and the optimizer update.

- dp_comm: gradient all-reduce (ZeRO-0), reduce-scatter + weight all-gather (ZeRO-1, the
  distributed optimizer), per-micro-batch reduce-scatter (ZeRO-2) or per-layer all-gathers and
  reduce-scatters (ZeRO-3) over the dense and the expert replica groups (memory.weight_replicas:
  dp·cp, tp·cp·dp/(ep·etp)), hierarchical over the fabric (`collectives`); overlapped with the last backward
  (overlap_grad_reduce; the last DP_BUCKET_PARAMS bucket stays exposed; Megatron-LM DDP), the first
  forward (overlap_param_gather) or the layer compute (ZeRO-3 prefetch). Rajbhandari et al. 2019.
- optimizer: Adam reads and writes ADAM_BYTES of state per local parameter plus the gradient,
  memory-bound; the distributed optimizer (ZeRO >= 1) updates only the card's shard.
Units: seconds, parameters, bytes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from estimator.arrays import FloatArray, arr
from estimator.layout.memory import StageLayers, grad_bytes
from estimator.layout.stacks import holds_gathered_weights
from estimator.layout.steptime.candidates import Candidates
from estimator.layout.steptime.collectives import Fabric, allreduce_geometry, allreduce_with, latency_with
from estimator.layout.steptime.constants import ADAM_BYTES, DP_BUCKET_PARAMS, WEIGHT_BYTES

if TYPE_CHECKING:
    from estimator.layout.problem import LayoutProblem

Pair = tuple[FloatArray, FloatArray]  # (dense, expert)


def data_parallel_s(
    problem: LayoutProblem,
    c: Candidates,
    fab: Fabric,
    st: StageLayers,
    params: Pair,
    replicas: Pair,
    comp_mb: FloatArray,
) -> Pair:
    """(exposed, hidden) data-parallel communication per step (s) of the busiest device's `params`
    (dense, expert) over their `replicas` groups; comp_mb is its compute per micro-batch (s)."""
    stack = problem.stack
    g = grad_bytes(problem.grad_dtype)
    dense_p, expert_p = params
    # the dense group's members sit tp apart (Megatron's tp-cp-dp rank order); the expert-data-parallel
    # group's ep·etp apart (the MoE layers' own etp-ep-edp order under parallel folding)
    groups = [(dense_p, replicas[0], c.tp), (expert_p, replicas[1], c.etp * c.ep)]
    if not problem.arch.is_moe:  # no expert parameters: that group's terms are all exactly 0.0
        groups = groups[:1]
    # what depends on the group alone, computed once for the collectives below
    geometry = [allreduce_geometry(n, stride, fab) for _, n, stride in groups]
    # collectives.latency_s from the geometry's n_in (the same floats, computed once per group)
    latency = {
        (i, kind): latency_with(geometry[i][0], np.asarray(n, dtype=float) / geometry[i][0], kind)
        for i, (_, n, _) in enumerate(groups)
        for kind in ("ar", "half")
    }
    buckets = [np.ceil(p / DP_BUCKET_PARAMS) for p, _, _ in groups]
    layer_calls = [np.where(p > 0, 1.0, 0.0) * st.full for p, _, _ in groups]

    # each group's all-reduce time per bytes per parameter, computed once: the collectives below
    # read it two to four times each (the same array: the same floats)
    allreduce: dict[tuple[int, float], FloatArray] = {}

    def coll(bytes_per_param: float, kind: str, per_layer: bool = False) -> FloatArray:
        total = arr(0.0)
        for i, (p, _, _) in enumerate(groups):
            if (i, bytes_per_param) not in allreduce:  # hierarchical_allreduce_s
                allreduce[i, bytes_per_param] = allreduce_with(geometry[i], p * bytes_per_param, fab)
            bw = allreduce[i, bytes_per_param]
            if kind == "half":  # reduce-scatter or all-gather: half an all-reduce's traffic
                bw = 0.5 * bw
            calls = layer_calls[i] if per_layer else buckets[i]
            total = total + bw + calls * latency[i, kind]
        return total

    z = c.zero
    grads_ar = coll(g, "ar")
    grads_rs = coll(g, "half")
    weights_ag = coll(WEIGHT_BYTES, "half")
    backward_window = comp_mb * 2.0 / c.passes
    forward_window = comp_mb * 1.0 / c.passes
    tail = np.minimum(1.0, DP_BUCKET_PARAMS / np.maximum(dense_p + expert_p, 1.0))

    def overlapped(raw: FloatArray, window: FloatArray, on: bool) -> FloatArray:
        return np.maximum(raw - window, raw * tail) if on else raw

    reduce_raw = np.where(z == 0, grads_ar, np.where(z == 1, grads_rs, 0.0))
    reduce_exp = overlapped(reduce_raw, backward_window, stack.overlap_grad_reduce)
    gather_raw = np.where((z == 1) | (z == 2), weights_ag, 0.0)
    gather_exp = overlapped(gather_raw, forward_window, stack.overlap_param_gather)
    exposed, raw = reduce_exp + gather_exp, reduce_raw + gather_raw
    # a ZeRO stage no candidate uses adds its np.where's +0.0 to the non-negative sums: left out
    top = float(z.max()) if z.size else 3.0  # (the method: no np.max wrapper)
    if top >= 2:
        exposed = exposed + np.where(
            z == 2, c.m * overlapped(grads_rs, backward_window, stack.overlap_grad_reduce), 0.0
        )
        raw = raw + np.where(z == 2, c.m * grads_rs, 0.0)
    if top >= 3:
        z3_mb = 2.0 * coll(WEIGHT_BYTES, "half", per_layer=True) + coll(g, "half", per_layer=True)
        exposed = exposed + np.where(z == 3, c.m * np.maximum(z3_mb - comp_mb, 0.0), 0.0)  # per layer
        raw = raw + np.where(z == 3, c.m * z3_mb, 0.0)
    if stack.sharded_with_pp:
        gathers = coll(WEIGHT_BYTES, "half", per_layer=True)
        fsdp_exp, fsdp_raw = pipelined_fsdp_s(problem, c, coll(g, "half", per_layer=True), gathers, comp_mb)
        pipelined = (c.pp > 1) & (z >= 2)
        exposed = np.where(pipelined, fsdp_exp, exposed)
        raw = np.where(pipelined, fsdp_raw, raw)
    return arr(exposed), arr(raw - exposed)


def pipelined_fsdp_s(
    problem: LayoutProblem, c: Candidates, scatter: FloatArray, gather: FloatArray, comp_mb: FloatArray
) -> Pair:
    """(exposed, raw) seconds per step of PyTorch FSDP's collectives under pipeline parallelism
    (module docstring): `scatter` is one reduce-scatter of the device's gradients, `gather` one
    all-gather of its 16-bit weights (s), comp_mb its compute per micro-batch (s)."""
    v = np.maximum(c.v, 1.0)
    chunk_backward = comp_mb * 2.0 / c.passes / v
    rs_exp = scatter / v + np.maximum(scatter * (v - 1.0) / v - chunk_backward, 0.0)
    held = holds_gathered_weights(problem.stack, c.pp)
    gathers = np.where(held, 1.0, c.m)
    window = np.where(held, comp_mb * 1.0 / c.passes, comp_mb)
    ag_raw = np.where(c.zero >= 3, gathers * gather, 0.0)
    ag_exp = np.where(c.zero >= 3, gathers * np.maximum(gather - window, 0.0), 0.0)
    return arr(rs_exp + ag_exp), arr(scatter + ag_raw)


def optimizer_s(c: Candidates, params: Pair, replicas: Pair, grad_dtype: str, hbm: float) -> FloatArray:
    """Adam's memory-bound update per step (s) of the card's (dense, expert) parameters, sharded over
    their replica groups with the distributed optimizer (ZeRO >= 1); hbm in bytes/s."""
    dense_p, expert_p = params
    sharded = c.zero >= 1
    local = np.where(sharded, dense_p / replicas[0] + expert_p / replicas[1], dense_p + expert_p)
    return arr(local * (ADAM_BYTES + grad_bytes(grad_dtype)) / hbm)
