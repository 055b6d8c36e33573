"""Training compute: total FLOPs, wall-clock time, cards for a deadline, card-hours, throughput.

Every function is numpy-vectorized: arguments may be Python scalars or arrays and broadcast
against each other; results are numpy floats or arrays. Units: FLOP, FLOP/s, seconds, tokens.

Sources:
- C = 6·N·D training FLOPs, N = (active) parameters, D = tokens: Kaplan et al. 2020, "Scaling Laws
  for Neural Language Models", section 2.1; Hoffmann et al. 2022 ("Chinchilla"), appendix F.
- Time = C / (cards · peak · MFU): the definition of model FLOPs utilization, Chowdhery et al. 2022
  (PaLM), appendix B.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from estimator.arrays import FloatArray, IntArray

SECONDS_PER_HOUR = 3600.0
SECONDS_PER_DAY = 86400.0
SECONDS_PER_YEAR = 365.0 * SECONDS_PER_DAY

#: Plausible model-FLOPs utilization (fraction of peak), the one pair of bounds every module uses.
#: Upper: the ceiling of the step-time model itself (GEMM fraction 0.76 x matmul efficiency 0.85 =
#: 0.65 of peak, estimator.layout.steptime) and above every published large-scale record (MegaScale 55.2 %
#: on 12,288 GPUs, docs/sources.md#megascale; Llama 3 405B 38-43 %, docs/sources.md#llama3). The plan's
#: advice flags a given MFU above it as optimistic (the deadline sizing starts its scan at what the
#: step-time model's own ceiling needs, layout.steptime.ceiling). Lower: a typical-worst large-scale
#: MFU, where the sizing scan's first pass stops (plan.deadline._scan).
MFU_PLAUSIBLE_MAX = 0.65
MFU_PLAUSIBLE_MIN = 0.15


def training_flop(flop_per_token: ArrayLike, tokens: ArrayLike) -> FloatArray:
    """Total training FLOP = flop_per_token · tokens.

    flop_per_token: model FLOP per training token, forward + backward (6·N, plus attention when
    counted); tokens: training tokens. Returns FLOP.
    """
    return np.asarray(flop_per_token, dtype=np.float64) * np.asarray(tokens, dtype=np.float64)


def training_time_s(
    training_flop: ArrayLike, cards: ArrayLike, peak_flops: ArrayLike, mfu: ArrayLike
) -> FloatArray:
    """Wall-clock seconds = training_flop / (cards · peak_flops · mfu).

    training_flop: FLOP; cards: accelerator count; peak_flops: FLOP/s per card; mfu: model FLOPs
    utilization as a fraction (0, 1]. Returns seconds.
    """
    rate = (
        np.asarray(cards, dtype=np.float64)
        * np.asarray(peak_flops, dtype=np.float64)
        * np.asarray(mfu, dtype=np.float64)
    )
    return np.asarray(training_flop, dtype=np.float64) / rate


def cards_for_deadline(
    training_flop: ArrayLike,
    seconds: ArrayLike,
    peak_flops: ArrayLike,
    mfu: ArrayLike,
    cards_per_node: ArrayLike = 1,
) -> IntArray:
    """Cards needed to finish training_flop within `seconds`, rounded up to whole nodes.

    Exact need = training_flop / (seconds · peak_flops · mfu) (a real number); the result is
    ceil(need / cards_per_node) · cards_per_node. Pass cards_per_node=1 for whole cards only.
    Returns a numpy integer (array) of cards.
    """
    need = np.asarray(training_flop, dtype=np.float64) / (
        np.asarray(seconds, dtype=np.float64)
        * np.asarray(peak_flops, dtype=np.float64)
        * np.asarray(mfu, dtype=np.float64)
    )
    per_node = np.asarray(cards_per_node, dtype=np.int64)
    # A relative tolerance keeps 512.0000000001 (float noise) from becoming another node.
    nodes = np.ceil(need / per_node * (1.0 - 1e-12))
    return (nodes * per_node).astype(np.int64)


def cards_exact(
    training_flop: ArrayLike, seconds: ArrayLike, peak_flops: ArrayLike, mfu: ArrayLike
) -> FloatArray:
    """Unrounded card count training_flop / (seconds · peak_flops · mfu) (float)."""
    return np.asarray(training_flop, dtype=np.float64) / (
        np.asarray(seconds, dtype=np.float64)
        * np.asarray(peak_flops, dtype=np.float64)
        * np.asarray(mfu, dtype=np.float64)
    )


def accelerator_hours(cards: ArrayLike, seconds: ArrayLike) -> FloatArray:
    """Card-hours = cards · seconds / 3600."""
    return np.asarray(cards, dtype=np.float64) * np.asarray(seconds, dtype=np.float64) / SECONDS_PER_HOUR


def tokens_per_s(
    cards: ArrayLike, peak_flops: ArrayLike, mfu: ArrayLike, flop_per_token: ArrayLike
) -> FloatArray:
    """Cluster training throughput in tokens/s = cards · peak_flops · mfu / flop_per_token."""
    return (
        np.asarray(cards, dtype=np.float64)
        * np.asarray(peak_flops, dtype=np.float64)
        * np.asarray(mfu, dtype=np.float64)
        / np.asarray(flop_per_token, dtype=np.float64)
    )


def mfu_from_throughput(
    tokens_per_second: ArrayLike, flop_per_token: ArrayLike, cards: ArrayLike, peak_flops: ArrayLike
) -> FloatArray:
    """Model FLOPs utilization implied by a throughput: tokens/s · flop_per_token / (cards · peak)."""
    return (
        np.asarray(tokens_per_second, dtype=np.float64)
        * np.asarray(flop_per_token, dtype=np.float64)
        / (np.asarray(cards, dtype=np.float64) * np.asarray(peak_flops, dtype=np.float64))
    )
