"""Pipeline-parallel bubble and point-to-point traffic.

- 1F1B with v interleaved chunks per device (Narayanan et al. 2021, section 2.2): the bubble is
  (p-1)/v micro-batch stage times, a fraction (p-1)/(v·m) of the m micro-batches' work. Checked on
  torchtitan's Llama 3.1 405B at PP 8 with its default 8 micro-batches and 2 chunks per rank
  (benchmarks/llama3_h100_202412_torchtitan.md, table 5): (8 + 7)/(8 + 3.5) = 1.30x against the
  measured 128/100 = 1.28x.
- DualPipe (DeepSeek-V3 report, table 2): (p/2-1)·(F&B + B - 3W) against 1F1B's (p-1)·(F+B).
  With B = 2F and W = F (the weight-gradient half of the backward), F&B + B - 3W = 2F =
  (2/3)·(F+B): the bubble is (p/2-1)·(2/3) stage times.
- Each stage sends one activation forward and one gradient backward per micro-batch and chunk
  (2·v messages of T·h 16-bit values scattered over the t TP ranks), over the scale-up links when
  both stages share a domain, else over the NIC.
- Overlap: with the interleaved schedule and overlap_p2p_comm (Megatron-Core's default whenever
  virtual stages > 1) each send/receive is posted asynchronously and waited for only when the next
  chunk needs it, so it runs behind that chunk's compute: up to the stage's compute per micro-batch
  hides. Without interleaving Megatron batches the p2p and blocks on it (exposed). DualPipe
  overlaps its p2p with the paired forward/backward chunks (DeepSeek-V3 report, section 3.2.1).
Units: seconds, bytes.
"""

from __future__ import annotations

import numpy as np

from estimator.arrays import FloatArray, Num, arr
from estimator.layout.steptime.collectives import Fabric, group_bandwidth


def bubble_s(pp: Num, v: Num, t_stage: Num, dualpipe: bool) -> FloatArray:
    """Pipeline bubble per step (s) for stage time `t_stage` of one micro-batch."""
    pp = np.asarray(pp, dtype=float)
    if dualpipe:
        return arr(np.maximum(pp / 2.0 - 1.0, 0.0) * (2.0 / 3.0) * t_stage)
    return arr((pp - 1.0) / arr(v) * t_stage)


def p2p_s(tokens: Num, hidden: float, tp: Num, cp: Num, dp: Num, pp: Num, v: Num, fab: Fabric) -> FloatArray:
    """Point-to-point time per micro-batch on one stage (s)."""
    msg = np.asarray(tokens) * hidden * 2.0 / np.asarray(tp)
    neighbour = np.asarray(tp) * np.asarray(cp) * np.asarray(dp)
    bw = (
        np.where(
            2.0 * neighbour <= fab.domain,
            group_bandwidth(fab, 2.0),  # one peer: a single link of a full mesh
            fab.nic / np.where(np.asarray(pp) * neighbour > fab.leaf_cards, fab.cross, 1.0),
        )
        * fab.eta
    )
    return arr(np.where(arr(pp) > 1, 2.0 * arr(v) * msg / bw, 0.0))


def p2p_window_s(v: Num, compute_mb: Num, overlap: bool, dualpipe: bool) -> FloatArray:
    """Compute per micro-batch (s) behind which a stage's point-to-point traffic can hide."""
    if dualpipe:
        return arr(compute_mb)
    return arr(np.where(overlap & (arr(v) > 1), compute_mb, 0.0))
