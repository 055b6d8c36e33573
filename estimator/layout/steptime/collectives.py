"""Collective communication times on a two-level fabric (scale-up domain, then scale-out NICs).

`Fabric` parameters: domain (cards per NVLink/HCCS domain), bw_up (scale-up bytes/s per card and
direction), nic (scale-out bytes/s per card), cross (cross-leaf oversubscription factor >= 1),
leaf_cards (cards whose NICs share a leaf or rail group). Ring algorithms (NCCL/HCCL): an
all-reduce moves 2(n-1)/n of the buffer per card, a reduce-scatter or all-gather half that
(Patarasuk & Yuan 2009; nccl-tests' bus-bandwidth convention). Seconds, bytes.

mesh_links: the scale-up domain is a full mesh of point-to-point links instead of a switch (Ascend
910B's HCCS: 8 NPUs, 7 links each; estimator.layout.steptime.ascend.mesh_links); 0 = switched. In a
full mesh a card reaches its g-1 peers over g-1 dedicated links, each 1/mesh_links of its scale-up
bandwidth (`group_bandwidth`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from estimator.arrays import FloatArray, Num, arr
from estimator.layout.steptime.constants import ALPHA_NIC_S, ALPHA_SCALEUP_S


@dataclass(frozen=True)
class Fabric:
    """A two-level fabric's parameters for the collective times (the module docstring gives each). Bytes/s, cards."""

    domain: float
    bw_up: float
    nic: float
    cross: float
    leaf_cards: float
    eta: float
    mesh_links: float = 0.0


def group_bandwidth(fab: Fabric, peers: Num) -> FloatArray:
    """Scale-up bytes/s per card and direction for a collective among `peers` cards of one domain
    (nominal, before link efficiency): all of bw_up behind a switch; in a full mesh of mesh_links
    links per card, min(peers - 1, mesh_links) of them (HCCL's mesh algorithms send to every peer
    at once over its own link; a ring or a point-to-point send uses one)."""
    if fab.mesh_links <= 0:
        return arr(fab.bw_up + 0.0 * arr(peers))
    used = np.minimum(np.maximum(arr(peers) - 1.0, 1.0), fab.mesh_links)  # clip(_, 1, mesh_links)
    return arr(fab.bw_up * used / fab.mesh_links)


def clip_from_one(x: Num, hi: Num) -> FloatArray:
    """np.clip(x, 1.0, hi) as np.minimum(np.maximum(x, 1.0), hi): the same floats (numpy's clip is
    that composition; no signed zero can arise at the lower bound 1.0) without clip's Python
    wrapper (several times the cost of the two ufuncs on the step-time model's small arrays)."""
    return arr(np.minimum(np.maximum(x, 1.0), hi))


def latency_s(n: Num, stride: Num, fab: Fabric, kind: str) -> FloatArray:
    """Start-up latency of one collective over n cards `stride` apart (seconds).

    Ring reduce-scatter / all-gather ("half"): one step per peer, (n_in-1)·ALPHA_SCALEUP_S inside the
    scale-up domain + (n_out-1)·ALPHA_NIC_S across it. All-reduce ("ar"): NCCL switches to its
    double binary tree at scale, 2·log2 steps across domains.
    """
    n = np.asarray(n, dtype=float)
    n_in = clip_from_one(np.floor(fab.domain / np.asarray(stride, dtype=float)), n)
    return latency_with(n_in, n / n_in, kind)


def latency_with(n_in: FloatArray, n_out: FloatArray, kind: str) -> FloatArray:
    """latency_s of a group of n_in cards per scale-up domain times n_out domains (as latency_s
    computes them: allreduce_geometry's n_in and n / n_in are the same floats); seconds."""
    if kind == "ar":
        return arr(2.0 * (n_in - 1.0) * ALPHA_SCALEUP_S + 2.0 * np.log2(np.maximum(n_out, 1.0)) * ALPHA_NIC_S)
    return arr((n_in - 1.0) * ALPHA_SCALEUP_S + (n_out - 1.0) * ALPHA_NIC_S)


def hierarchical_allreduce_s(nbytes: Num, n: Num, stride: Num, fab: Fabric) -> FloatArray:
    """Bandwidth time of a hierarchical ring all-reduce of `nbytes` per card over n cards `stride` apart.

    Inside the scale-up domain (n_in peers): 2(n_in-1)/n_in · bytes / scale-up bandwidth; then the
    1/n_in shard across domains: 2(n_l-1)/n_l over the NIC inside a leaf group and 2(n_g-1)/n_g
    across n_g leaf groups at NIC / cross-leaf factor.
    """
    return allreduce_with(allreduce_geometry(n, stride, fab), nbytes, fab)


AllreduceGeometry = tuple[FloatArray, FloatArray, FloatArray, FloatArray, FloatArray, FloatArray, float]


def allreduce_geometry(n: Num, stride: Num, fab: Fabric) -> AllreduceGeometry:
    """What hierarchical_allreduce_s computes from the group alone (n cards `stride` apart), for
    several buffers over one group: (n_in, n_leaf, in-domain ring factor 2(n_in-1)/n_in, its
    bandwidth·eta, leaf ring factor 2(n_l-1)/n_l, cross-leaf ring factor 2(n_g-1)/n_g, NIC·eta)."""
    n = np.asarray(n, dtype=float)
    stride = np.asarray(stride, dtype=float)
    n_in = clip_from_one(np.floor(fab.domain / stride), n)
    n_out = n / n_in
    n_groups = clip_from_one(np.ceil(n * stride / fab.leaf_cards), n_out)
    n_leaf = n_out / n_groups
    return (
        n_in,
        n_leaf,
        2.0 * (n_in - 1.0) / n_in,
        group_bandwidth(fab, n_in) * fab.eta,
        2.0 * (n_leaf - 1.0) / n_leaf,
        2.0 * (n_groups - 1.0) / n_groups,
        fab.nic * fab.eta,
    )


def allreduce_with(geo: AllreduceGeometry, nbytes: Num, fab: Fabric) -> FloatArray:
    """hierarchical_allreduce_s of `nbytes` per card over the group of `geo` (allreduce_geometry);
    the same operations in the same order, so the same floats."""
    n_in, n_leaf, ring_in, bw_in, ring_leaf, ring_cross, nic = geo
    t_in = ring_in * nbytes / bw_in
    shard = nbytes / n_in
    t_leaf = ring_leaf * shard / nic
    t_cross = ring_cross * (shard / n_leaf) * fab.cross / nic
    return arr(t_in + t_leaf + t_cross)
