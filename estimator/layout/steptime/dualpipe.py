"""DualPipe's placement: a pipeline rank holds two chunks, stage i of one direction and stage
pp-1-i of the other (deepseek-ai/DualPipe README: 2x parameters per device; DeepSeek-V3 report,
arXiv 2412.19437, section 3.2.1: the shallowest layers with the embedding and the deepest layers
with the output head and the MTP modules sit on the same rank).

Half of a step's micro-batches run each direction, so a rank's work per micro-batch is the mean of
its two stages: the first and last stages' work is shared by ranks 0 and pp-1, a middle rank pairs
two middle stages. Units: seconds per micro-batch.
"""

from __future__ import annotations

import numpy as np

from estimator.arrays import FloatArray


def dualpipe_ranks(
    stages: list[dict[str, FloatArray]], single: np.ndarray, dualpipe: bool
) -> list[dict[str, FloatArray]]:
    """Per-micro-batch terms of the (first, middle, last) pipeline ranks.

    stages: the terms of the first, a middle and the last stage (s per micro-batch); single: pp == 1
    per layout (the first stage is also the last: nothing to pair). Unchanged unless `dualpipe`."""
    if not dualpipe:
        return stages
    first, middle, last = stages
    ends = {k: np.where(single, first[k], 0.5 * (first[k] + last[k])) for k in first}
    return [ends, middle, ends]
