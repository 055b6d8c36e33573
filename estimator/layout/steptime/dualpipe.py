"""DualPipe's placement: a pipeline rank holds two chunks, stage i of one direction and stage
pp-1-i of the other (deepseek-ai/DualPipe README: 2x parameters per device; DeepSeek-V3 report,
arXiv 2412.19437, section 3.2.1: the shallowest layers with the embedding and the deepest layers
with the output head and the MTP modules sit on the same rank).

Half of a step's micro-batches run each direction, so a rank's work per micro-batch is the mean of
its two stages: the first and last stages' work is shared by ranks 0 and pp-1, a middle rank pairs
two middle stages. Units: seconds per micro-batch.
"""

from __future__ import annotations

from typing import TypeVar

import numpy as np

from estimator.arrays import FloatArray

Stages = TypeVar("Stages", dict[str, FloatArray], FloatArray)


def dualpipe_ranks(stages: list[Stages], single: np.ndarray, dualpipe: bool) -> list[Stages]:
    """Per-micro-batch terms of the (first, middle, last) pipeline ranks.

    stages: the terms of the first, a middle and the last stage (s per micro-batch), as dicts by
    term or as stacked arrays (term first, step._stages); single: pp == 1 per layout (the first
    stage is also the last: nothing to pair). Unchanged unless `dualpipe`."""
    if not dualpipe:
        return stages
    first, middle, last = stages
    if isinstance(first, dict):
        ends = {k: _paired(first[k], last[k], single) for k in first}
        return [ends, middle, ends]
    paired = _paired(first, last, single)
    return [paired, middle, paired]


def _paired(first: FloatArray, last: FloatArray, single: np.ndarray) -> FloatArray:
    """Ranks 0 and pp-1 each run half the micro-batches on the first and half on the last stage."""
    return np.where(single, first, 0.5 * (first + last))
