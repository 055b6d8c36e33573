"""Lower bounds of the step time (steptime.step.evaluate_step) that cost less than the model: what
the layout search's pruning (layout.prune) compares against the best throughput found.

`layer_floor` is one layer's per-micro-batch total, exposed communication included: the model's
own per-layer terms (layer_compute.compute_terms, moe_and_host_terms, layer_comm.comm_terms,
called as step._layer_terms calls them), so it is exactly what the model adds per layer. It reads
of the candidate only tp, cp, ep, etp, mbs, sp, rc and rf (and m where the stack caches FP8
weights: layer_compute.weight_casts) and of the cluster size only its fabric factors, which lets a
caller compute it once per distinct layer shape (tests/estimator/test_layout_bounds.py).

`step_floor` composes layer floors the way step.evaluate_step composes the layers, keeping only
terms that are >= 0 and dropping the rest (module docstring of step for the composition):

    step >= m·t + bubble_s(pp, v, t) + dp_exposed(busy) + optimizer,
    t = max over the valid pipeline devices of their totals + the point-to-point time not hidden
        behind `busy`, busy = max over the valid devices of their compute and host floor,

because t_stage is the busiest device's sum of its exposed terms (its layers', the output head's
and the MTP modules' on the last device; DualPipe's ranks pair devices as dualpipe_ranks does),
>= that of any valid device, plus its exposed point-to-point time; the busiest device's compute
and host floor (the windows behind which the point-to-point and data-parallel traffic hide) are at
most `busy`, and each exposure max(raw - window, ...) only falls as its window grows; the bubble
is a non-negative multiple of t_stage; the optimizer is the model's; the overlap slowdown is >= 0.
Without data_parallel the data-parallel exposure and the optimizer are left out (>= 0: a looser
floor that reads no ZeRO stage).
Units: seconds.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from estimator.arrays import FloatArray, Num, arr
from estimator.layout.memory import StageLayers, stage_layers, weight_replicas
from estimator.layout.steptime.candidates import Candidates
from estimator.layout.steptime.data_parallel import data_parallel_s, optimizer_s
from estimator.layout.steptime.dualpipe import dualpipe_ranks
from estimator.layout.steptime.layer_comm import comm_terms
from estimator.layout.steptime.layer_compute import compute_terms, moe_and_host_terms
from estimator.layout.steptime.mtp import with_mtp
from estimator.layout.steptime.pipeline import bubble_s, p2p_s, p2p_window_s
from estimator.layout.steptime.rates import fabric, rates
from estimator.layout.steptime.step import COMPUTE_TERMS, busiest_stage_params, head_terms
from estimator.model.transformer import mlp_matrices

if TYPE_CHECKING:
    from estimator.layout.problem import LayoutProblem

LAYER_FIELDS = ("tp", "cp", "ep", "etp", "mbs", "sp", "rc", "rf")  # what layer_floor reads


class LayerFloor(NamedTuple):
    """A layer's per-micro-batch total of exposed terms (s) and its busy part: the compute terms
    and the host floor (step: the windows that hide communication)."""

    total: FloatArray
    busy: FloatArray


def layer_reads_m(problem: LayoutProblem) -> bool:
    """layer_floor also reads the micro-batch count m (layer_compute.weight_casts: the FP8 weight
    cache casts each weight once per step, a share 1/m of one per micro-batch)."""
    return bool(problem.stack.fp8_weight_cache)


def layer_floor(problem: LayoutProblem, c: Candidates) -> tuple[LayerFloor, LayerFloor]:
    """(dense layer, MoE layer) per-micro-batch terms (s): the model's exposed per-layer terms
    (compute, host, host floor, exposed TP, CP and EP communication) summed, and their busy part
    (the dense layer's twice for a dense model)."""
    r, fab = rates(problem), fabric(problem)
    tokens = float(problem.seq_len) / c.cp * c.mbs
    n_mat = float(mlp_matrices(problem.arch.hidden_act))

    def layer(moe: bool) -> LayerFloor:
        terms, t_gemm, t_att, t_elem = compute_terms(problem, c, r, moe, tokens, n_mat)
        moe_and_host_terms(problem, c, r, moe, tokens, n_mat, terms)
        comm_terms(problem, c, r, fab, moe, tokens, (t_gemm, t_att, t_elem), terms)
        busy = arr(sum(arr(terms[k]) for k in (*COMPUTE_TERMS, "host_floor")))
        return LayerFloor(arr(sum(arr(v) for v in terms.values())), busy)

    dense = layer(False)
    return dense, layer(True) if problem.arch.is_moe else dense


def stage_layers_of(problem: LayoutProblem, c: Candidates) -> StageLayers:
    """The layers per pipeline device of the candidates, as the step time splits them."""
    arch = problem.arch
    return stage_layers(
        arch.num_hidden_layers,
        problem.counts.n_dense_layers,
        c.pp.astype(int),
        c.v.astype(int),
        problem.stage_split,
    )


def step_floor(
    problem: LayoutProblem,
    c: Candidates,
    dense: LayerFloor,
    moe: LayerFloor,
    data_parallel: bool = True,
    st: StageLayers | None = None,
) -> FloatArray:
    """A lower bound of evaluate_step(problem, c)["step_time_s"] (s) from the layer floors
    (layer_floor's, one per candidate or broadcast): module docstring. data_parallel: with the
    data-parallel exposure and the optimizer (without: a looser bound that reads no ZeRO stage);
    st: stage_layers_of(problem, c) where the caller has it."""
    arch, stack = problem.arch, problem.stack
    st = stage_layers_of(problem, c) if st is None else st
    head_t = head_terms(problem, c, rates(problem))
    head_sum = arr(sum(arr(v) for v in head_t.values()))  # a GEMM and the loss: compute, busy
    head = with_mtp(
        arch, problem.seq_len, c, rates(problem).linear, {"total": head_sum, "busy": head_sum}, moe._asdict()
    )
    projection = arr(head.get("gemm", 0.0))  # with_mtp's projections (compute)
    head_total, head_busy = arr(head["total"]) + projection, arr(head["busy"]) + projection
    single = st.single.astype(float)
    shapes = ((st.first, st.dense_first, single), (st.full, st.dense_mid, 0.0), (st.last, st.dense_last, 1.0))
    one_kind = moe is dense  # a dense model's layers (layer_floor returns the one floor twice)
    stages = [
        {
            "total": arr(_layers(n, n_dense, dense.total, moe.total, one_kind) + with_head * head_total),
            "busy": arr(_layers(n, n_dense, dense.busy, moe.busy, one_kind) + with_head * head_busy),
        }
        for n, n_dense, with_head in shapes
    ]
    first, mid, last = dualpipe_ranks(stages, st.single, stack.dualpipe)
    total, busy = (
        np.maximum(first[k], np.maximum(np.where(st.has_mid, mid[k], 0.0), np.where(st.single, 0.0, last[k])))
        for k in ("total", "busy")
    )
    # the model's busy device is the one of the largest total: its busy time is at most the largest
    # busy time, so its windows are at most those below and what they leave exposed at least
    fab = fabric(problem)
    pp_mb = p2p_s(
        float(problem.seq_len) / c.cp * c.mbs, float(arch.hidden_size), c.tp, c.cp, c.dp, c.pp, c.v, fab
    )
    pp_floor = np.maximum(pp_mb - p2p_window_s(c.v, busy, stack.overlap_p2p_comm, stack.dualpipe), 0.0)
    t_stage = arr(total + pp_floor)
    pipeline = arr(c.m * t_stage + bubble_s(c.pp, c.v, t_stage, stack.dualpipe))
    if not data_parallel:
        return pipeline
    params = busiest_stage_params(problem, c, st)
    replicas = weight_replicas(c.dp, c.cp, c.ep, c.tp, c.etp)
    dp_floor = data_parallel_s(problem, c, fab, st, params, replicas, arr(busy))[0]
    t_opt = optimizer_s(c, params, replicas, problem.grad_dtype, rates(problem).hbm)
    return arr(pipeline + dp_floor + t_opt)


def _layers(n: Num, n_dense: Num, dense: Num, moe: Num, one_kind: bool) -> FloatArray:
    """The sum over a device's n layers, n_dense of them dense, of a per-layer figure."""
    return arr(n * dense) if one_kind else arr(n_dense * dense + (n - n_dense) * moe)


def step_time_floor(problem: LayoutProblem, c: Candidates) -> FloatArray:
    """step_floor of the candidates' own layer floors (s)."""
    return step_floor(problem, c, *layer_floor(problem, c))
