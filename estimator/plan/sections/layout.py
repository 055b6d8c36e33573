"""result.parallelism, result.memory and result.layout: the layout the search chose (layout.search;
when none fits, the closest, with `fits` false), its memory per card, the ZeRO-2 what-if of a ZeRO-3
layout, and the search's counts, runners-up and reason for the choice (layout.choice)."""

from __future__ import annotations

from estimator.contract.resolve import Resolved
from estimator.layout.choice import choice_reason
from estimator.layout.search import LayoutEval, LayoutProblem, evaluate_layout
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
        parallelism = ParallelismSection(
            layout=shown,
            # the batch is rounded to whole micro-batches per DP rank (tokens)
            global_batch_tokens=shown.micro_batches * shown.dp * shown.micro_batch_size * r.seq_len,
        )
        memory = MemorySection(
            layout=shown,
            fits=bool(best is not None and shown.memory_dict().get("fits", True)),
            fits_with_zero2=fits_with_zero2(problem, shown),
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


def fits_with_zero2(problem: LayoutProblem, shown: LayoutEval) -> bool | None:
    """For a ZeRO-3 layout: would the same layout fit with stage 2 (no weight sharding)?"""
    if shown.zero_stage != 3:
        return None
    alt = evaluate_layout(
        problem,
        tp=shown.tp,
        pp=shown.pp,
        ep=shown.ep,
        cp=shown.cp,
        micro_batch_size=shown.micro_batch_size,
        virtual_stages=shown.virtual_stages,
        sequence_parallel=shown.sequence_parallel,
        zero_stage=2,
        recompute=shown.recompute,
    )
    return bool(alt.fits)
