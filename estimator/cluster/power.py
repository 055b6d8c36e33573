"""Cluster power and energy: IT load, facility load (x PUE) and the energy of a run.

Model (docs/architecture.md#formulas, "Power and cost"; docs/sources.md#prices, docs/sources.md#pue)::

    IT power (W)       = cards x card TDP
                       + nodes x host overhead (CPUs, DRAM, NICs, fans: everything but the cards)
                       + switches x switch power + transceivers x optic power
                       + storage nodes x storage-node power
                       + scale-up plane (supernodes x its switches and optics, scaleup.py)
    facility power (W) = IT power x PUE
    energy (Wh)        = facility power x run hours

All powers are in watts at full training load (nameplate TDP), which is the figure a power plan is
sized on: NVIDIA's DGX H100 data notes that a DGX H100 budgets ~6.2 kW IT "typical" but 10.2 kW nameplate,
and recommends sizing on the nameplate. Real average draw during training is usually lower, so the
energy figure is an upper bound.

PUE default: 1.3 (docs/sources.md#pue). Published anchors: Uptime Institute industry
average 1.58 (2023/2024) [B]; hyperscale 1.1-1.2; liquid-cooled AI halls 1.05-1.15; SemiAnalysis
models use 1.15 [C]. The catalog's `defaults()` may override it; pass `pue` explicitly.

Every function broadcasts over numpy arrays (cards, hours, prices ...) so a sweep evaluates a whole
grid in one call; scalars in give numpy 0-d results, which `to_dict()` turns back into floats.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from estimator.errors import ScenarioError

DEFAULT_PUE = 1.3  # docs/sources.md#pue; see module docstring for the published range


def plain(x: Any) -> Any:
    """numpy scalar/0-d -> float, array -> nested list; leaves None alone (for JSON output)."""
    if x is None:
        return None
    arr = np.asarray(x, dtype=np.float64)
    return float(arr) if arr.ndim == 0 else arr.tolist()


def breakdown_w(
    cards: ArrayLike,
    card_tdp_w: ArrayLike,
    nodes: ArrayLike = 0,
    host_power_w: ArrayLike = 0.0,
    switches: ArrayLike = 0,
    switch_power_w: ArrayLike = 0.0,
    transceivers: ArrayLike = 0,
    transceiver_power_w: ArrayLike = 0.0,
    storage_nodes: ArrayLike = 0,
    storage_node_power_w: ArrayLike = 0.0,
) -> dict[str, np.ndarray]:
    """IT power by part, in W: {accelerators, hosts, network, storage}.

    `host_power_w` is per compute node without its cards (catalog `Server.host_power_w`);
    `switch_power_w` is per switch without optics; `transceiver_power_w` per module (e.g. ~9 W for a
    400G OSFP, NVIDIA MMS4X00-NS400 [A]); `storage_node_power_w` per storage server, drives included.
    """
    f = np.asarray
    return {
        "accelerators": f(cards, dtype=np.float64) * f(card_tdp_w, dtype=np.float64),
        "hosts": f(nodes, dtype=np.float64) * f(host_power_w, dtype=np.float64),
        "network": f(switches, dtype=np.float64) * f(switch_power_w, dtype=np.float64)
        + f(transceivers, dtype=np.float64) * f(transceiver_power_w, dtype=np.float64),
        "storage": f(storage_nodes, dtype=np.float64) * f(storage_node_power_w, dtype=np.float64),
    }


def facility_power_w(it_w: ArrayLike, pue: ArrayLike = DEFAULT_PUE) -> np.ndarray:
    """Facility power in W = IT power (W) x PUE (dimensionless, >= 1)."""
    return np.asarray(it_w, dtype=np.float64) * np.asarray(pue, dtype=np.float64)


def energy_wh(facility_w: ArrayLike, hours: ArrayLike) -> np.ndarray:
    """Energy in Wh = facility power (W) x duration (h)."""
    return np.asarray(facility_w, dtype=np.float64) * np.asarray(hours, dtype=np.float64)


@dataclass(frozen=True)
class Power:
    """Power and energy of a cluster for one run. Fields are floats or numpy arrays (sweeps).

    Units: watts (`*_w`), watt-hours (`energy_wh`), hours (`hours`); `pue` is dimensionless.
    """

    it_w: Any
    facility_w: Any
    energy_wh: Any
    accelerators_w: Any
    hosts_w: Any
    network_w: Any
    storage_w: Any
    pue: Any
    hours: Any
    scaleup_w: Any = 0.0  # scale-up plane outside the nodes (supernodes' switches and optics)

    def to_dict(self) -> dict[str, Any]:
        """The contract's `power` section {it_w, facility_w, energy_wh} plus breakdown and inputs."""
        return {
            "it_w": plain(self.it_w),
            "facility_w": plain(self.facility_w),
            "energy_wh": plain(self.energy_wh),
            "pue": plain(self.pue),
            "hours": plain(self.hours),
            "breakdown_w": {
                "accelerators": plain(self.accelerators_w),
                "hosts": plain(self.hosts_w),
                "network": plain(self.network_w),
                "storage": plain(self.storage_w),
                "scaleup": plain(self.scaleup_w),
            },
        }


@dataclass(frozen=True)
class ItLoad:
    """What draws power: whole-item counts and their unit powers (W per item; breakdown_w), and the
    scale-up plane outside the nodes as one figure in W (scaleup.plane_totals); all broadcastable."""

    cards: ArrayLike
    card_tdp_w: ArrayLike
    nodes: ArrayLike = 0
    host_power_w: ArrayLike = 0.0
    switches: ArrayLike = 0
    switch_power_w: ArrayLike = 0.0
    transceivers: ArrayLike = 0
    transceiver_power_w: ArrayLike = 0.0
    storage_nodes: ArrayLike = 0
    storage_node_power_w: ArrayLike = 0.0
    scaleup_w: ArrayLike = 0.0


def power(load: ItLoad, pue: ArrayLike = DEFAULT_PUE, hours: ArrayLike = 0.0) -> Power:
    """Power (W) and energy (Wh) of the cluster over a run of `hours`; broadcasts over arrays.

    `load.scaleup_w` is the whole scale-up plane outside the nodes in W (scaleup.plane_totals), added
    to the IT load as its own part of the breakdown.

    Raises ScenarioError (field `cost.pue`) when PUE < 1, and (field `power`) for negative inputs.
    """
    pue_arr = np.asarray(pue, dtype=np.float64)
    if np.any(pue_arr < 1.0):
        raise ScenarioError("PUE must be at least 1 (facility power includes the IT load).", "cost.pue")
    x = load
    parts = breakdown_w(
        x.cards,
        x.card_tdp_w,
        x.nodes,
        x.host_power_w,
        x.switches,
        x.switch_power_w,
        x.transceivers,
        x.transceiver_power_w,
        x.storage_nodes,
        x.storage_node_power_w,
    )
    parts["scaleup"] = np.asarray(x.scaleup_w, dtype=np.float64)
    if any(np.any(v < 0) for v in parts.values()) or np.any(np.asarray(hours, dtype=np.float64) < 0):
        raise ScenarioError("Counts, powers and hours must not be negative.", "power")
    it = parts["accelerators"] + parts["hosts"] + parts["network"] + parts["storage"] + parts["scaleup"]
    fac = facility_power_w(it, pue_arr)
    return Power(
        it_w=it,
        facility_w=fac,
        energy_wh=energy_wh(fac, hours),
        accelerators_w=parts["accelerators"],
        hosts_w=parts["hosts"],
        network_w=parts["network"],
        storage_w=parts["storage"],
        pue=pue_arr,
        hours=np.asarray(hours, dtype=np.float64),
        scaleup_w=parts["scaleup"],
    )
