"""GEMM time by shape and dtype: a roofline with the accelerator's achievable GEMM throughput.

A GEMM of M x K by K x N does 2·M·N·K FLOPs and moves at least (M·K + K·N + M·N) elements through
HBM. Its time is the larger of the two at the achievable rates (Williams et al. 2009, roofline):
small-M GEMMs (few tokens per expert, small micro-batches) are bound by streaming the weights,
large ones by the tensor cores. The achievable FLOP rate is peak x the catalog's best-case GEMM
efficiency (MAMF) x TRAINING_GEMM_FRACTION; FP8 GEMMs run at the FP8 peak x the same efficiency x
FP8_TO_BF16_EFFICIENCY, plus the memory-bound cast of their operands (CAST_BYTES_PER_ELEMENT).
Units: FLOP, elements, bytes, seconds.
"""

from __future__ import annotations

import numpy as np

from estimator.arrays import FloatArray, Num, arr
from estimator.layout.steptime.constants import CAST_BYTES_PER_ELEMENT, FP8_TO_BF16_EFFICIENCY, WEIGHT_BYTES


def gemm_rate(
    peak_bf16: float, peak_fp8: float | None, efficiency: float, fraction: float, fp8: bool
) -> float:
    """Achievable GEMM FLOP/s: BF16 peak·efficiency·fraction, or the FP8 equivalent when fp8 is used."""
    if fp8 and peak_fp8:
        return peak_fp8 * efficiency * FP8_TO_BF16_EFFICIENCY * fraction
    return peak_bf16 * efficiency * fraction


def linear_time_s(
    flop: Num, elements: Num, rate: float, hbm_rate: float, fp8: bool, recipe: str, cast_elements: Num = 0.0
) -> FloatArray:
    """Time of a group of linear layers: roofline of `flop` FLOPs against `elements` operand
    elements streamed (16-bit, or 1-byte FP8) plus, in FP8, the cast of `cast_elements` operand
    elements (each operand is quantised once per forward + backward, again when recomputed).

    flop and elements are totals over the passes counted; seconds.
    """
    bytes_per = 1.0 if fp8 else WEIGHT_BYTES
    t = arr(np.maximum(arr(flop) / rate, arr(elements) * bytes_per / hbm_rate))
    if fp8:
        t = t + arr(cast_elements) * CAST_BYTES_PER_ELEMENT[recipe] / hbm_rate
    return t


def linear_elements(tokens: Num, params: float, n_linears: float, hidden: float, split: Num) -> FloatArray:
    """Operand elements of the linears of one layer on one card, one pass: weights params/split plus
    activations tokens·(n_linears·hidden + params/hidden)/split, since a linear with one side of
    size h has K + N = h + P/h (dimensionless counts)."""
    return arr(params / arr(split) + arr(tokens) * (n_linears * hidden + params / hidden) / arr(split))
