"""Typed candidate layouts: the arrays the step-time and memory models broadcast over."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Candidates:
    """Parallel layouts as broadcastable arrays (one element per candidate, or scalars).

    tp, pp, dp, ep, cp: tensor, pipeline, data, expert and context parallel degrees; mbs: micro-batch
    size (sequences); v: virtual pipeline chunks per device; m: micro-batches per step per DP rank;
    sp: sequence parallel; zero: ZeRO stage 0-3; rc: recompute code (memory.RECOMPUTE_CODES);
    rf: share of layers whose forward is recomputed (1 full, k/L_stage partial, 0 otherwise).
    """

    tp: np.ndarray
    pp: np.ndarray
    dp: np.ndarray
    ep: np.ndarray
    cp: np.ndarray
    mbs: np.ndarray
    v: np.ndarray
    m: np.ndarray
    sp: np.ndarray
    zero: np.ndarray
    rc: np.ndarray
    rf: np.ndarray

    @classmethod
    def from_mapping(cls, c: Mapping[str, object]) -> Candidates:
        """From the layout search's dict of arrays (keys tp, pp, dp, ep, cp, mbs, v, m, sp, zero, rc[, rf])."""
        f = {k: np.asarray(c[k], dtype=float) for k in ("tp", "pp", "dp", "ep", "cp", "mbs", "v", "m")}
        rc = np.asarray(c["rc"])
        rf = np.asarray(c["rf"], dtype=float) if "rf" in c else (rc == 2).astype(float)
        return cls(
            **f,
            sp=np.asarray(c["sp"], dtype=bool),
            zero=np.asarray(c["zero"]),
            rc=rc,
            rf=rf,
        )

    @property
    def passes(self) -> np.ndarray:
        """Forward-pass equivalents per layer and micro-batch: forward 1 + backward 2 (+ recomputed forward)."""
        return 3.0 + self.rf

    @property
    def forward_passes(self) -> np.ndarray:
        """Forward passes per layer and micro-batch: 1 (+ the recomputed one)."""
        return 1.0 + self.rf
