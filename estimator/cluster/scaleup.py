"""The scale-up plane's bill of materials: what one supernode adds beyond its nodes, and the racks.

A supernode (catalog `supernodes.toml`, see docs/supernodes.md) is bought whole: `nodes` servers,
the scale-up switches outside them, the links between the two (optics or copper) and its racks.
The classic 8-card server is the degenerate case: one node, a domain on its baseboard, nothing
outside it, so every count here is zero and only its share of a rack remains.

Rules (counts per supernode; ports in Gbit/s; power in W, nameplate; money in USD):

    links          = nodes x scale-up ports per node            (node-side scale-up ports)
    cables         = links x cables per link                    (copper twinax, or one fibre a link)
    transceivers   = 2 x links on optics, 0 on copper/board     (one pluggable module at each end)
    switch chips   = nodes x chips per node (tier 1, inside the nodes: price and power in the server)
                   + rack switches x chips per rack switch      (tier 2, priced and powered here)
    plane power    = rack switches x switch W + transceivers x module W
    plane capex    = rack switches x switch USD + transceivers x module USD + cables x cable USD

CloudMatrix 384 (arXiv 2506.12708; SemiAnalysis 2025-04): 48 nodes x 56 x 400G UB ports = 2,688
links, 5,376 LPO modules, 336 L1 + 112 L2 UB switch chips. GB200 NVL72 (NVIDIA DGX GB200 user
guide): 18 trays x 72 NVLink5 ports = 1,296 links on 5,184 copper cables, 9 switch trays of 2 chips.

A separate VPC / storage plane of `frontend_ports_per_node` ports (CloudMatrix's Qingtian DPU) is
sized here as its access layer, per supernode: leaves of k ports at 1:1 (k/2 down), every node port
a fibre link with two modules, every leaf uplink one module at the leaf end (the spine it reaches is
the data centre's VPC network, not the cluster's).

Racks (floor space), vectorized over the number of supernodes n and scale-out switches s:

    racks = ceil(n x compute racks) + n x network racks + ceil(s / scale-out switches per rack)

Compute racks may be fractional per unit (0.25 = four 8-card servers share a rack).

Power per rack (W, nameplate; what the hall's power and cooling are sized on), per supernode:

    compute rack = (cards x card W + nodes x host W + node-side modules x module W
                    [+ rack switches x switch W when they sit in the compute racks]) / compute racks
    switch rack  = (rack switches x switch W + switch-side modules x module W) / switch racks

On optics half the modules sit at each end of a link.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from estimator.catalog.entries import Supernode, Switch, Transceiver


@dataclass(frozen=True)
class VpcAccess:
    """Access layer of a supernode's own VPC / storage plane (counts per supernode)."""

    ports: int  # node ports on the plane
    ports_per_node: int
    port_gbps: float
    leaves: int  # access switches
    switch_ports: int  # radix of the access switch
    links: int  # node-to-leaf fibre links
    uplinks: int  # leaf-to-VPC-spine links (1:1)
    transceivers: int  # 2 per node link + 1 per uplink (the leaf end)
    power_w: float
    price_usd: float


@dataclass(frozen=True)
class UnitBill:
    """What one supernode adds beyond its nodes: the scale-up plane, its VPC access layer, racks."""

    supernode_id: str
    name: str
    vendor: str
    scaleup_link: str
    scaleup_medium: str
    cooling: str
    cards: int
    nodes: int
    cpus: int
    compute_racks: float
    network_racks: int
    node_switch_chips: int  # tier 1, inside the nodes
    rack_switches: int  # tier 2 switch units
    rack_switch_chips: int
    ports_per_node: int  # scale-up ports leaving each node
    links: int
    port_gbps: float
    cables: int
    transceivers: int
    scaleup_power_w: float
    scaleup_price_usd: float
    rack_switch_power_w: float  # per rack switch unit
    vpc: VpcAccess | None
    power_w: float  # scale-up plane + VPC access layer
    price_usd: float
    system_power_w: float | None  # published figure, for comparison
    published_price_usd: float  # the catalog's all-in supernode price

    @property
    def degenerate(self) -> bool:
        """True for a single server that is its own scale-up domain (nothing outside the node)."""
        return self.nodes == 1 and self.rack_switches == 0 and self.links == 0

    def tiers(self) -> list[dict[str, Any]]:
        """Scale-up switches per tier: [{tier, where, units, chips}] (empty tiers left out)."""
        out = []
        if self.node_switch_chips:
            out.append({"tier": 1, "where": "node", "units": self.nodes, "chips": self.node_switch_chips})
        if self.rack_switches:
            tier = 2 if self.node_switch_chips else 1
            where = "switch rack" if self.network_racks else "compute rack"
            out.append(
                {"tier": tier, "where": where, "units": self.rack_switches, "chips": self.rack_switch_chips}
            )
        return out

    def to_dict(self) -> dict[str, Any]:
        out = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "vpc"}
        out["vpc"] = (
            None if self.vpc is None else {f.name: getattr(self.vpc, f.name) for f in fields(self.vpc)}
        )
        out["tiers"] = self.tiers()
        out["degenerate"] = self.degenerate
        return out


def vpc_access(
    nodes: int,
    ports_per_node: int,
    port_gbps: float,
    switch: Switch,
    transceiver: Transceiver,
    fiber_usd: float,
) -> VpcAccess | None:
    """The VPC-plane access layer of one supernode (module docstring); None without such ports."""
    ports = int(nodes) * int(ports_per_node)
    if ports <= 0:
        return None
    down = switch.ports // 2  # 1:1 leaf
    leaves = math.ceil(ports / down)
    xcvrs = 2 * ports + ports
    return VpcAccess(
        ports=ports,
        ports_per_node=int(ports_per_node),
        port_gbps=float(port_gbps),
        leaves=leaves,
        switch_ports=switch.ports,
        links=ports,
        uplinks=ports,
        transceivers=xcvrs,
        power_w=leaves * switch.power_w + xcvrs * transceiver.power_w,
        price_usd=leaves * switch.price_usd + xcvrs * transceiver.price_usd + ports * fiber_usd,
    )


def unit_bill(sn: Supernode, vpc: VpcAccess | None = None) -> UnitBill:
    """The scale-up plane of one supernode from its catalog entry (rules in the module docstring)."""
    links = sn.nodes * sn.scaleup_ports_per_node
    cables = links * sn.cables_per_link
    transceivers = 2 * links if sn.scaleup_medium == "optics" else 0
    power = sn.rack_switches * sn.rack_switch_power_w + transceivers * sn.transceiver_power_w
    price = (
        sn.rack_switches * sn.rack_switch_price_usd
        + transceivers * sn.transceiver_price_usd
        + cables * sn.scaleup_cable_price_usd
    )
    return UnitBill(
        supernode_id=sn.id,
        name=sn.name,
        vendor=sn.vendor,
        scaleup_link=sn.scaleup_link,
        scaleup_medium=sn.scaleup_medium,
        cooling=sn.cooling,
        cards=sn.cards,
        nodes=sn.nodes,
        cpus=sn.cpus,
        compute_racks=sn.compute_racks,
        network_racks=sn.network_racks,
        node_switch_chips=sn.nodes * sn.node_switch_chips_per_node,
        rack_switches=sn.rack_switches,
        rack_switch_chips=sn.rack_switches * sn.switch_chips_per_rack_switch,
        ports_per_node=sn.scaleup_ports_per_node,
        links=links,
        port_gbps=sn.scaleup_port_gbps,
        cables=cables,
        transceivers=transceivers,
        scaleup_power_w=power,
        scaleup_price_usd=price,
        rack_switch_power_w=sn.rack_switch_power_w,
        vpc=vpc,
        power_w=power + (vpc.power_w if vpc else 0.0),
        price_usd=price + (vpc.price_usd if vpc else 0.0),
        system_power_w=sn.system_power_w,
        published_price_usd=sn.price_usd,
    )


def server_unit(cards_per_node: int, servers_per_rack: float, name: str = "server") -> UnitBill:
    """The degenerate unit of a server without a supernodes.toml entry: one node, nothing outside it,
    1/servers_per_rack of a rack (catalog default `servers_per_rack`)."""
    return UnitBill(
        supernode_id="",
        name=name,
        vendor="",
        scaleup_link="",
        scaleup_medium="board",
        cooling="air",
        cards=int(cards_per_node),
        nodes=1,
        cpus=0,
        compute_racks=1.0 / float(servers_per_rack),
        network_racks=0,
        node_switch_chips=0,
        rack_switches=0,
        rack_switch_chips=0,
        ports_per_node=0,
        links=0,
        port_gbps=0.0,
        cables=0,
        transceivers=0,
        scaleup_power_w=0.0,
        scaleup_price_usd=0.0,
        rack_switch_power_w=0.0,
        vpc=None,
        power_w=0.0,
        price_usd=0.0,
        system_power_w=None,
        published_price_usd=0.0,
    )


def rack_power_w(bill: UnitBill, card_tdp_w: float, host_power_w: float) -> dict[str, float | None]:
    """Nameplate power per compute rack and per scale-up switch rack, in W (module docstring);
    `switch` is None when the unit has no switch racks."""
    switches_w = bill.rack_switches * bill.rack_switch_power_w
    end_w = bill.scaleup_power_w - switches_w  # all modules, both ends
    compute = bill.cards * card_tdp_w + bill.nodes * host_power_w + end_w / 2
    if bill.network_racks:
        return {
            "compute": compute / bill.compute_racks,
            "switch": (switches_w + end_w / 2) / bill.network_racks,
        }
    return {"compute": (compute + switches_w + end_w / 2) / bill.compute_racks, "switch": None}


def supernodes_for(cards: ArrayLike, cards_per_unit: ArrayLike) -> np.ndarray:
    """Whole supernodes holding `cards` (count): ceil(cards / cards per supernode); 0 where the
    unit size is 0 (no supernode accounting)."""
    c = np.asarray(cards, dtype=np.int64)
    u = np.asarray(cards_per_unit, dtype=np.int64)
    return np.where(u > 0, -(-c // np.maximum(u, 1)), 0)


def racks(
    supernodes: ArrayLike,
    compute_racks_per_unit: ArrayLike,
    network_racks_per_unit: ArrayLike,
    scaleout_switches: ArrayLike = 0,
    scaleout_switches_per_rack: ArrayLike = 16,
) -> dict[str, np.ndarray]:
    """Racks (floor positions) by kind: {compute, scaleup, scaleout, total} (module docstring).
    Storage racks are not counted. Broadcasts over arrays."""
    n = np.asarray(supernodes, dtype=float)
    compute = np.ceil(n * np.asarray(compute_racks_per_unit, dtype=float) - 1e-9)
    scaleup = n * np.asarray(network_racks_per_unit, dtype=float)
    per_rack = np.maximum(np.asarray(scaleout_switches_per_rack, dtype=float), 1.0)
    scaleout = np.ceil(np.asarray(scaleout_switches, dtype=float) / per_rack)
    return {
        "compute": compute,
        "scaleup": scaleup,
        "scaleout": scaleout,
        "total": compute + scaleup + scaleout,
    }


def plane_totals(supernodes: ArrayLike, unit: UnitBill) -> dict[str, np.ndarray]:
    """Whole-cluster counts of the scale-up plane for `supernodes` units (broadcasts over arrays)."""
    n = np.asarray(supernodes, dtype=np.int64)
    vpc = unit.vpc
    return {
        "supernodes": n,
        "node_switch_chips": n * unit.node_switch_chips,
        "rack_switches": n * unit.rack_switches,
        "rack_switch_chips": n * unit.rack_switch_chips,
        "links": n * unit.links,
        "cables": n * unit.cables,
        "transceivers": n * unit.transceivers,
        "vpc_leaves": n * (vpc.leaves if vpc else 0),
        "vpc_transceivers": n * (vpc.transceivers if vpc else 0),
        "power_w": n * unit.power_w,
        "price_usd": n * unit.price_usd,
    }
