"""result.parallelism, result.memory and result.layout: the layout the search chose (layout.search;
when none fits, the closest, with `fits` false), its memory per card, the ZeRO-2 what-if of a ZeRO-3
layout, and the search's counts, runners-up and reason for the choice (layout.choice)."""

from __future__ import annotations

import numpy as np

from estimator.contract.resolve import Resolved
from estimator.layout.activations import RECOMPUTE_CODES
from estimator.layout.choice import choice_reason
from estimator.layout.evaluation import evaluate
from estimator.layout.search import LayoutEval, LayoutProblem
from estimator.plan.chosen import ClusterChoice
from estimator.plan.result import LayoutSection, MemorySection, ParallelismSection


def layout_sections(
    r: Resolved, choice: ClusterChoice, problem: LayoutProblem
) -> tuple[ParallelismSection | None, MemorySection | None, LayoutSection]:
    """(parallelism, memory, layout) of the plan; the first two None when the search showed none."""
    found = choice.layouts
    best = found.best
    shown: LayoutEval | None = best if best is not None else found.closest
    parallelism = memory = None
    if shown is not None:
        fits_z2, z2_speed = zero2_twin(problem, shown)
        parallelism = ParallelismSection(
            layout=shown,
            global_batch_tokens=planned_batch_tokens(r, shown),
        )
        memory = MemorySection(
            layout=shown,
            fits=bool(best is not None and shown.memory_dict().get("fits", True)),
            fits_with_zero2=fits_z2,
            zero2_speed_factor=z2_speed,
        )
    layout = LayoutSection(
        feasible=found.feasible,
        evaluated=found.evaluated,
        rejected=dict(found.rejected),
        runners_up=tuple(found.runners_up),
        fixed=r.scenario.parallelism.fixed(),
        # fastest, or preferred within the 2 % tie band (and why)
        choice=choice_reason(best, found.runners_up) if best is not None else None,
    )
    return parallelism, memory, layout


def planned_batch_tokens(r: Resolved, layout: LayoutEval) -> int:
    """The global batch a layout trains with (tokens): whole micro-batches per DP rank, as the
    enumeration rounds training.global_batch_tokens to the DP size (layout.enumeration.candidate_grid,
    within its BATCH_TOLERANCE) — result.parallelism.global_batch_tokens."""
    return layout.micro_batches * layout.dp * layout.micro_batch_size * r.seq_len


def zero2_twin(problem: LayoutProblem, shown: LayoutEval) -> tuple[bool | None, float | None]:
    """For a ZeRO-3 layout, the same layout with stage 2 (no weight sharding; the same micro-batches,
    so the same global batch; partial recompute refits its layer count, layout.evaluation): (memory.fits_with_zero2, whether it fits; memory.zero2_speed_factor, its
    tokens/s over the shown layout's where it fits) (dimensionless; < 1: stage 2 is slower, as when
    the weights stage 3 shards leave room for less recomputation or a larger micro-batch). Both None
    for a layout that is not ZeRO-3."""
    if shown.zero_stage != 3:
        return None, None
    c = {
        "tp": shown.tp,
        "pp": shown.pp,
        "cp": shown.cp,
        "ep": shown.ep,
        "etp": shown.expert_tp,
        "mbs": shown.micro_batch_size,
        "v": shown.virtual_stages,
        "sp": shown.sequence_parallel,
        "zero": 2,
        "rc": RECOMPUTE_CODES[shown.recompute],
        "dp": shown.dp,
        "m": shown.micro_batches,  # the same global batch as the shown layout's
    }
    mem, t = evaluate(problem, {k: np.asarray(v) for k, v in c.items()})
    fits = bool(float(mem.total) <= float(problem.accelerator.hbm_bytes))
    return fits, float(t["tokens_per_s"]) / float(shown.tokens_per_s) if fits else None
