"""Memory and step time of candidate arrays: what the layout search (layout.search), the batched
search (layout.batch_search) and the nearest layouts (layout.nearest) evaluate, one numpy pass per
call (memory: estimator.layout.memory, step time: estimator.layout.steptime), with block
recomputation's layer count (partial_recompute). Units: bytes, seconds, tokens/s, FLOP.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from estimator.arrays import FloatArray, Num
from estimator.layout.memory import (
    RECOMPUTE_CODES,
    CardLayout,
    MemoryBreakdown,
    MemoryPolicy,
    per_card_memory_codes,
    stack_memory,
    stage_layers,
)
from estimator.layout.problem import LayoutProblem
from estimator.layout.steptime import Candidates, evaluate_step


def evaluate(problem: LayoutProblem, c: Mapping[str, Any]) -> tuple[MemoryBreakdown, dict[str, np.ndarray]]:
    """Memory and step time of candidate arrays c (keys tp, pp, dp, ep, cp, mbs, v, sp, zero, rc, m).

    Scalars work too (0-d results). Adds tokens_per_s, predicted_mfu, predicted_hfu to the times.
    """
    mem, rf = evaluate_memory(problem, c)
    return mem, evaluate_time(problem, c, rf)


def evaluate_memory(problem: LayoutProblem, c: Mapping[str, Any]) -> tuple[MemoryBreakdown, FloatArray]:
    """Per-card memory of candidate arrays c and the share of layers recomputed (rf; partial
    recompute takes the fewest layers that fit, see partial_recompute). Bytes; rf dimensionless.
    The cheap half of `evaluate`: the search drops what does not fit before `evaluate_time`."""

    rc = np.asarray(c["rc"])
    rf = (rc == RECOMPUTE_CODES["full"]).astype(float)
    partial = rc == RECOMPUTE_CODES["partial"]
    if not np.any(partial):
        return card_memory(problem, c, rc), rf
    # with the full-recompute memory of the partial ones: one call, what recompute does not change once
    mem, full = card_memories(problem, c, [rc, np.where(partial, RECOMPUTE_CODES["full"], rc)])
    return partial_recompute(problem, c, partial, mem, full, rf)


def card_memory(problem: LayoutProblem, c: Mapping[str, Any], rc: Num) -> MemoryBreakdown:
    """memory.per_card_memory of candidate arrays c with recompute codes rc (partial as stored by
    the layers it does not recompute). Bytes."""
    return card_memories(problem, c, [rc])[0]


def card_memories(
    problem: LayoutProblem, c: Mapping[str, Any], codes: Sequence[Num]
) -> list[MemoryBreakdown]:
    """card_memory of candidate arrays c with each of the recompute codes `codes` (one
    memory.per_card_memory_codes call: what recompute does not change is computed once). Bytes."""
    layout = CardLayout(
        c["tp"],
        c["pp"],
        c["dp"],
        c["ep"],
        c["cp"],
        c["zero"],
        c["mbs"],
        codes[0],
        c["sp"],
        c["v"],
        False,
        c["m"],
        c["etp"],
        problem.stage_split,
    )
    policy = stack_memory(
        MemoryPolicy(
            problem.grad_dtype,
            problem.flash_attention,
            problem.buffers,
            fp8_activations(problem),
            problem.stack.selective_recompute,
            problem.stack.fsdp_fp32_shards,
            problem.stack.reshard_after_forward,
            moe_imbalance=problem.moe_imbalance,
        ),
        problem.stack,
    )
    return per_card_memory_codes(problem.arch, problem.counts, problem.seq_len, layout, codes, policy)


def fp8_activations(problem: LayoutProblem) -> bool:
    """Whether linear-layer inputs are saved as FP8 (training in FP8 on a card with FP8 GEMMs)."""
    return problem.precision == "fp8" and bool(problem.accelerator.peak_flops_fp8)


def evaluate_time(problem: LayoutProblem, c: Mapping[str, Any], rf: Num) -> dict[str, FloatArray]:
    """Step time (estimator.layout.steptime) of candidate arrays c with recompute shares rf, plus
    tokens_per_s (tokens/s), predicted_mfu = tokens/s · FLOP/token / (cards · peak) and
    predicted_hfu = MFU + recomputed FLOP per card / (step time · peak): the model's FLOPs plus what
    recomputation repeats, on the same convention (steptime.step._recomputed_flop), so HFU >= MFU."""
    c = {**c, "rf": rf}
    t = evaluate_step(problem, Candidates.from_mapping(c))
    t["recompute_fraction"] = np.full(np.shape(t["step_time_s"]), rf)  # cheaper than a broadcast view
    step_tokens = np.asarray(c["m"], dtype=float) * c["dp"] * c["mbs"] * problem.seq_len
    peak = problem.accelerator.peak_flops(problem.precision)
    t["tokens_per_s"] = step_tokens / t["step_time_s"]
    t["predicted_mfu"] = t["tokens_per_s"] * problem.flop_per_token / (problem.cards * peak)
    t["predicted_hfu"] = t["predicted_mfu"] + t["recomputed_flop_per_card"] / (t["step_time_s"] * peak)
    return t


MEMORY_KEYS = ("weights", "gradients", "optimizer", "activations", "other", "total")


def partial_recompute(
    problem: LayoutProblem,
    c: Mapping[str, Any],
    partial: Num,
    none: MemoryBreakdown,
    full: MemoryBreakdown,
    rf: Num,
) -> tuple[MemoryBreakdown, FloatArray]:
    """Block recompute: the fewest whole layers per stage k that bring the card under its HBM.

    Memory falls linearly from no recompute (k = 0) to full recompute (k = all L_stage layers of
    the fullest device), so k = ceil(L_stage · (none - HBM) / (none - full)); the step then pays
    k/L_stage of a recomputed forward (steptime's fractional `full`). Megatron-LM --recompute-method
    block --recompute-num-layers k. Bytes; fraction dimensionless.
    """
    hbm = float(problem.accelerator.hbm_bytes)
    layers = stage_layers(
        problem.arch.num_hidden_layers, problem.counts.n_dense_layers, c["pp"], c["v"], problem.stage_split
    ).most
    span = none.total - full.total
    need = np.clip((none.total - hbm) / np.where(span > 0, span, 1.0), 0.0, 1.0)
    k = np.ceil(need * layers - 1e-9)
    f = np.where(partial, np.clip(k / np.maximum(layers, 1), 0.0, 1.0), rf)
    mixed = {
        key: getattr(none, key) + f * (getattr(full, key) - getattr(none, key))
        for key in ("weights", "gradients", "optimizer", "activations", "other", "total")
    }
    mem = MemoryBreakdown(**{key: np.where(partial, mixed[key], getattr(none, key)) for key in mixed})
    return mem, f


def take_memory(mem: MemoryBreakdown, idx: Any) -> MemoryBreakdown:
    """The candidates `idx` of a MemoryBreakdown (every field indexed alike). Bytes."""
    return MemoryBreakdown(**{k: np.asarray(getattr(mem, k))[idx] for k in MEMORY_KEYS})
