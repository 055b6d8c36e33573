"""Typed candidate layouts: the arrays the step-time and memory models broadcast over."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from estimator.arrays import FloatArray, arr


@dataclass(frozen=True)
class Candidates:
    """Parallel layouts as broadcastable arrays (one element per candidate, or scalars).

    tp, pp, dp, ep, cp: tensor, pipeline, data, expert and context parallel degrees; etp: the routed
    experts' tensor-parallel size (MoE parallel folding; = tp in the classic layout); mbs: micro-batch
    size (sequences); v: virtual pipeline chunks per device; m: micro-batches per step per DP rank;
    sp: sequence parallel; zero: ZeRO stage 0-3; rc: recompute code (memory.RECOMPUTE_CODES);
    rf: share of layers whose forward is recomputed (1 full, k/L_stage partial, 0 otherwise).
    """

    tp: FloatArray
    pp: FloatArray
    dp: FloatArray
    ep: FloatArray
    cp: FloatArray
    mbs: FloatArray
    v: FloatArray
    m: FloatArray
    sp: npt.NDArray[np.bool_]
    zero: npt.NDArray[np.int64]
    rc: npt.NDArray[np.int64]
    rf: FloatArray
    etp: FloatArray

    @classmethod
    def from_mapping(cls, c: Mapping[str, npt.ArrayLike]) -> Candidates:
        """From the layout search's dict of arrays (keys tp, pp, dp, ep, cp, mbs, v, m, sp, zero, rc[, rf,
        etp]; etp absent = tp)."""
        f = {k: arr(c[k]) for k in ("tp", "pp", "dp", "ep", "cp", "mbs", "v", "m")}
        rc = np.asarray(c["rc"], dtype=np.int64)
        rf = arr(c["rf"]) if "rf" in c else arr(rc == 2)
        return cls(
            **f,
            sp=np.asarray(c["sp"], dtype=bool),
            zero=np.asarray(c["zero"], dtype=np.int64),
            rc=rc,
            rf=rf,
            etp=arr(c["etp"]) if "etp" in c else f["tp"],
        )

    @property
    def passes(self) -> FloatArray:
        """Forward-pass equivalents per layer and micro-batch: forward 1 + backward 2 (+ recomputed forward)."""
        return arr(3.0 + self.rf)

    @property
    def forward_passes(self) -> FloatArray:
        """Forward passes per layer and micro-batch: 1 (+ the recomputed one)."""
        return arr(1.0 + self.rf)
