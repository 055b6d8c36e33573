"""The rates one step runs at (FLOP/s of the linears and 16-bit GEMMs, streaming HBM bytes/s, the
16-bit peak) and the two-level fabric of a layout problem, read once per evaluation.

Sources: the catalog figures of the accelerator (estimator/catalog), the training GEMM fraction
(`constants`, `ascend`) and the pilot calibration's compute factor (estimator.plan.calibration)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from estimator.layout.steptime.ascend import (
    mesh_links,
    training_gemm_fraction,
)
from estimator.layout.steptime.collectives import Fabric
from estimator.layout.steptime.constants import (
    HBM_EFFICIENCY,
)
from estimator.layout.steptime.gemm import gemm_rate

if TYPE_CHECKING:
    from estimator.layout.problem import LayoutProblem


@dataclass(frozen=True)
class Rates:
    """The rates a step's kernels run at on one card: FLOP/s per precision, HBM bytes/s, the recipe."""

    linear: float  # FLOP/s of the transformer linears (FP8 when trained in FP8)
    bf16: float  # FLOP/s of 16-bit GEMMs (router, output layer, unfused attention)
    hbm: float  # bytes/s of streaming kernels
    peak16: float  # 16-bit peak FLOP/s (fused attention efficiency refers to it)
    fp8: bool
    recipe: str


def rates(problem: LayoutProblem) -> Rates:
    acc = problem.accelerator
    fp8 = problem.precision == "fp8" and bool(acc.peak_flops_fp8)
    peak16 = acc.peak_flops("fp32") if problem.precision == "fp32" else acc.peak_flops_bf16
    eff = acc.matmul_efficiency
    g = training_gemm_fraction(acc.chip_family, problem.gemm_fraction, problem.ascend_gemm_fraction)
    # a pilot run's calibration (estimator.plan.calibration) scales every compute rate alike; the
    # fused-attention efficiency reads the ratio bf16 / peak16, which it leaves unchanged
    k = problem.compute_factor
    return Rates(
        linear=gemm_rate(peak16, acc.peak_flops_fp8, eff, g, fp8) * k,
        bf16=peak16 * eff * g * k,
        hbm=acc.hbm_bandwidth_bytes_per_s * HBM_EFFICIENCY * k,
        peak16=peak16 * k,
        fp8=fp8,
        recipe=problem.stack.fp8_recipe,
    )


def fabric(problem: LayoutProblem) -> Fabric:
    return Fabric(
        domain=float(problem.domain_cards),
        bw_up=problem.accelerator.scaleup_bandwidth_bytes_per_s,
        nic=problem.nic_bytes_per_s_per_card,
        cross=problem.cross_leaf_bandwidth_factor,
        leaf_cards=problem.nodes_per_leaf_group * problem.cards_per_node,
        eta=problem.link_efficiency,
        mesh_links=mesh_links(problem.accelerator.chip_family, float(problem.domain_cards)),
    )
