"""Layers per pipeline device (first, middle, last), automatic or fixed split.

Dimensionless counts; numpy-vectorized over layouts (pp, virtual stages arrays).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt


@dataclass(frozen=True)
class StageLayers:
    """Layers on the first, a middle and the last pipeline device (arrays over layouts).

    Uneven splits, automatic: with c = pp·v chunks of ceil(L/c) layers the deficit c·ceil(L/c) - L
    is taken from the first device (one layer) and the last device (one more), as Llama 3 did (126
    layers on 16 stages); the remaining deficit, if any, comes off middle devices, so a middle
    device (pp >= 3) still holds the full v·ceil(L/c). Fixed (`split`, the scenario's
    parallelism.first_stage_layers / last_stage_layers, Megatron's --decoder-first/last-pipeline-
    num-layers): the first and/or last device hold what is fixed and the other devices the rest in
    equal shares (enumeration.stage_split_fails refuses what does not divide), e.g. DeepSeek-V3's
    61 layers on 16 devices as 4 + 14 x 4 + 1 (Megatron-Bridge's recipe). Dense leading layers
    (`first_k_dense_replace`) are placed from the first device on.
    """

    full: np.ndarray  # layers on a middle device (a full one in the automatic split)
    first: np.ndarray
    last: np.ndarray
    dense_first: np.ndarray
    dense_mid: np.ndarray
    dense_last: np.ndarray
    has_mid: np.ndarray  # pp >= 3
    single: np.ndarray  # pp == 1: the first device is also the last

    @property
    def most(self) -> np.ndarray:
        """Layers on the device holding the most (the partial-recompute count refers to it)."""
        return np.asarray(np.maximum(np.maximum(self.first, self.full), self.last))


def stage_layers(
    num_layers: int,
    n_dense: int,
    pp: npt.ArrayLike,
    virtual_stages: npt.ArrayLike = 1,
    split: tuple[int | None, int | None] = (None, None),
) -> StageLayers:
    pp = np.asarray(pp, dtype=np.int64)
    v = np.asarray(virtual_stages, dtype=np.int64)
    single = pp == 1
    if split == (None, None):
        chunks = pp * v
        lpc = -(-num_layers // chunks)
        full = lpc * v
        deficit = chunks * lpc - num_layers
        first = np.where(single, num_layers, full - (deficit >= 1))
        last = np.where(single, num_layers, full - (deficit >= 2))
    else:
        fixed_first, fixed_last = split
        others = np.maximum(pp - (fixed_first is not None) - (fixed_last is not None), 1)
        full = np.maximum((num_layers - (fixed_first or 0) - (fixed_last or 0)) // others, 0)
        first = np.where(single, num_layers, full if fixed_first is None else fixed_first)
        last = np.where(single, num_layers, full if fixed_last is None else fixed_last)
        full = np.broadcast_to(full, pp.shape)
    dense_first = np.minimum(n_dense, first)
    # np.clip(x, 0, hi) as maximum then minimum: the same integers without clip's Python wrapper
    dense_mid = np.minimum(np.maximum(n_dense - first, 0), full)
    dense_last = np.minimum(np.maximum(n_dense - (num_layers - last), 0), last)
    return StageLayers(full, first, last, dense_first, dense_mid, dense_last, pp >= 3, single)
