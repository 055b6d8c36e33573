"""Scale-out (compute) fabric sizing: Clos / fat-tree tiers, oversubscription, rail-optimized layouts,
cables and optics.

Notation (docs/sources.md#clos; docs/sources.md#nvidia-superpod-ra): k = switch radix
(ports at `port_gbps`), r = oversubscription down:up at the leaf, E = endpoints (NIC ports, usually
one per accelerator), d / u = leaf down / up ports.

Rules, all counts in switches, links (cables) or pluggable modules:
- 1 tier: one switch while E <= k (the source article, §3.2: "one flat switch up to ~10 servers").
- 2 tiers (leaf-spine): d = floor(k·r/(1+r)), u = k - d; leaves = ceil(E/d) (rail-optimized: whole
  scalable units, see below); every leaf reaches every spine. Holds up to d·k endpoints (k²/2 at 1:1).
- 3 tiers (k-ary fat-tree, Al-Fares et al. SIGCOMM 2008): pods of k/2 leaves and u aggregation
  ("spine") switches, each aggregation switch k/2 down and k/2 up, cores in u groups. Holds
  d·k²/2 endpoints (k³/4 at 1:1) with (k/2)² cores at 1:1. Above the leaf the tree is non-blocking.
- Spine count, rule "even" (default): each leaf spreads its u uplinks evenly over the spines (equal-cost
  paths for ECMP / adaptive routing), so the spine count S is the smallest divisor of u with S·k >=
  leaves·u. This is what reproduces NVIDIA's DGX SuperPOD H100 table (RA-11333-001, Table 4): 3 SU =
  24 leaves x 32 uplinks = 768 links need >= 12 spines, but 12 does not divide 32; the smallest divisor
  of 32 that is >= 12 is 16 (2 links from every leaf to every spine, 48 of 64 spine ports used), which
  is also the full 4-SU spine layer. The plain ceil(leaves·u/k) (rule "min") gives 12.
- Rail-optimized (NVIDIA SuperPOD, Alibaba HPN): NIC i of every node goes to the rail-i leaf; a scalable
  unit (SU) is d nodes on `nics_per_node` leaves, so leaves = rails·ceil(E/(d·rails)).
- Cables: server->leaf is copper DAC when not rail-optimized (leaf = top-of-rack switch in the same
  rack, as Meta's RTSW), optical fibre when rail-optimized (rail leaves sit in network racks, as in the
  SuperPOD); switch<->switch links are fibre. Each fibre link takes two pluggable transceivers (one per
  end); an AOC has its optics built in and counts as a cable, not as transceivers. NVIDIA's switch-side
  twin-port 2x400G OSFP would halve the switch-side module count (not modelled).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields
from typing import Any, overload

import numpy as np
from numpy.typing import ArrayLike, NDArray

from estimator.errors import FieldError, ScenarioError

# The storage network's fabric (scenario `network.storage_network`), the one rule for the scalar
# (design_fabric(frontend=Frontend())) and the vectorized (storage_fabric_counts) paths: a separate
# converged N/S fabric of 2 ports per node (NVIDIA DGX SuperPOD / Enterprise RA: 2x200GbE per node,
# docs/sources.md#nvidia-superpod-ra), top-of-rack (not rail-optimized), 1:1, copper DAC to the server.
STORAGE_PORTS_PER_NODE = 2
STORAGE_OVERSUBSCRIPTION = 1.0
STORAGE_RAIL_OPTIMIZED = False
STORAGE_SERVER_CABLE = "dac"

CABLE_KINDS = ("dac", "aoc", "fiber")
SPINE_RULES = ("even", "min")


def leaf_ports(switch_ports: int, oversubscription: float) -> tuple[int, int]:
    """Leaf (down, up) ports for radix k and oversubscription r = down:up (docs/sources.md#clos).

    d = floor(k·r/(1+r)), u = k - d, both in ports. Rounding d down keeps the built ratio d/u at or
    below r (k=64, r=2 -> 42/22 = 1.91:1; r=1.5 -> 38/26), as in the published k=64 examples (docs/sources.md#clos).
    """
    k, r = int(switch_ports), float(oversubscription)
    down = math.floor(k * r / (1.0 + r) + 1e-9)
    return down, k - down


def _divisors(m: int) -> NDArray[np.int64]:
    return np.array([i for i in range(1, m + 1) if m % i == 0], dtype=np.int64)


@overload
def _ceil_div(a: int, b: int) -> int: ...
@overload
def _ceil_div(a: NDArray[np.int64], b: int | NDArray[np.int64]) -> NDArray[np.int64]: ...
def _ceil_div(a: int | NDArray[np.int64], b: int | NDArray[np.int64]) -> int | NDArray[np.int64]:
    """ceil(a / b) for non-negative integers (or int64 arrays), without floating point."""
    return -(-a // b)


def _spread(links: int, per_switch_uplinks: int, k: int, rule: str) -> int:
    """Upper-tier switches of k ports for `links` links arriving from switches with `per_switch_uplinks`
    uplinks each (count). Rule "even": smallest divisor S of per_switch_uplinks with S·k >= links, so
    every lower switch sends the same number of links to each upper one; rule "min": ceil(links/k)."""
    need = _ceil_div(links, k)
    if rule == "min":
        return int(need)
    for s in _divisors(per_switch_uplinks):
        if s >= need:
            return int(s)
    return int(per_switch_uplinks)


@dataclass(frozen=True)
class Fabric:
    """One fabric. Counts are switches / links / modules; bandwidth in bit/s; ratios dimensionless."""

    tiers: int
    endpoints: int  # accelerator NIC ports
    nodes: int
    nics_per_node: int
    port_gbps: float
    switch_ports: int
    rail_optimized: bool
    oversubscription: float  # requested down:up at the leaf
    effective_oversubscription: float  # d/u as built (integer ports)
    leaf_down_ports: int
    leaf_up_ports: int
    leaf_switches: int
    spine_switches: int  # aggregation layer in a 3-tier tree
    core_switches: int
    total_switches: int
    pods: int  # 3-tier pods (1 for 1-2 tiers)
    server_links: int  # endpoint + management ports cabled to leaves
    switch_links: int  # leaf-spine + spine-core links
    dac_cables: int
    aoc_cables: int
    fiber_cables: int
    transceivers: int  # pluggable modules: 2 per fibre link
    bisection_bandwidth_bps: float
    max_endpoints: int  # largest E at this radix, ratio, layout and tier count
    nodes_per_leaf_group: int  # nodes one leaf hop apart (rail-optimized: the scalable unit)
    cross_leaf_bandwidth_factor: float  # >= 1: NIC bandwidth / this for traffic crossing leaves
    management_ports: int = 0
    frontend: Fabric | None = None  # optional converged N/S (storage + in-band) fabric

    def to_dict(self) -> dict[str, Any]:
        """The contract's `network` section (docs/architecture.md#scenario-contract) plus the extra fields above."""
        skip = {"frontend", "dac_cables", "aoc_cables", "fiber_cables"}
        out = {f.name: getattr(self, f.name) for f in fields(self) if f.name not in skip}
        out["cables"] = {"dac": self.dac_cables, "aoc": self.aoc_cables, "fiber": self.fiber_cables}
        out["frontend"] = self.frontend.to_dict() if self.frontend is not None else None
        return out


def _check(
    endpoints: int,
    switch_ports: int,
    oversubscription: float,
    nics_per_node: int,
    port_gbps: float,
    management_ports: int,
    server_cable: str | None,
    spine_rule: str,
) -> None:
    errs: list[FieldError] = []
    if int(endpoints) < 1:
        errs.append(FieldError("network.endpoints", "Endpoints must be at least 1."))
    if int(switch_ports) < 2:
        errs.append(FieldError("network.switch_ports", "A switch needs at least 2 ports."))
    if not oversubscription > 0:
        errs.append(FieldError("network.oversubscription", "Oversubscription (down:up) must be > 0."))
    elif switch_ports >= 2 and min(leaf_ports(switch_ports, oversubscription)) < 1:
        errs.append(
            FieldError(
                "network.oversubscription",
                f"Ratio {oversubscription} leaves a {switch_ports}-port leaf no up or down port.",
            )
        )
    if int(nics_per_node) < 1:
        errs.append(FieldError("network.nics_per_node", "Each node needs at least one NIC port."))
    if not port_gbps > 0:
        errs.append(FieldError("network.port_gbps", "Port speed must be > 0 Gbit/s."))
    if int(management_ports) < 0:
        errs.append(FieldError("network.management_ports", "Management ports cannot be negative."))
    if server_cable is not None and server_cable not in CABLE_KINDS:
        errs.append(
            FieldError("network.server_cable", f"Cable kind must be one of {', '.join(CABLE_KINDS)}.")
        )
    if spine_rule not in SPINE_RULES:
        errs.append(FieldError("network.spine_rule", f"Spine rule must be one of {', '.join(SPINE_RULES)}."))
    if errs:
        raise ScenarioError(errs)


def tier_limits(
    switch_ports: int, oversubscription: float = 1.0, nics_per_node: int = 8, rail_optimized: bool = True
) -> tuple[int, int, int]:
    """Largest endpoint count (ports) for 1, 2 and 3 tiers (docs/sources.md#al-fares-2008; docs/sources.md#clos).

    1 tier: k. 2 tiers: at most k leaves (one link from every leaf to each of u spines) -> d·k
    (k²/2 at 1:1). 3 tiers: k pods of k/2 leaves -> d·k²/2 (k³/4 at 1:1). Rail-optimized designs
    add leaves a whole scalable unit (rails leaves, d·rails endpoints) at a time, so the leaf limit
    is rounded down to a multiple of the rail count.
    """
    k = int(switch_ports)
    d, _ = leaf_ports(k, oversubscription)
    per_group, group_ports = (nics_per_node, d * nics_per_node) if rail_optimized else (1, d)
    return k, (k // per_group) * group_ports, (k * (k // 2) // per_group) * group_ports


@dataclass(frozen=True)
class Frontend:
    """A separate converged north-south (storage) fabric: `ports_per_node` ports per node (NVIDIA
    Enterprise RA: 2x200GbE), on switches of `switch_ports` ports (None: the compute fabric's) at
    `port_gbps` Gbit/s (None: the compute fabric's), ToR-style, 1:1."""

    ports_per_node: int = STORAGE_PORTS_PER_NODE
    switch_ports: int | None = None
    port_gbps: float | None = None


@dataclass(frozen=True)
class _Tiers:
    """The switch layers of a fat-tree: counts of switches and switch-to-switch links."""

    tiers: int
    leaves: int
    spines: int
    cores: int
    pods: int
    switch_links: int
    uplinks: int


def _tiers(
    ports: int, e: int, k: int, u: int, leaves: int, limits: tuple[int, int, int], spine_rule: str
) -> _Tiers:
    """1, 2 or 3 tiers for `ports` (docs/sources.md#clos): the fewest whose limit holds them."""
    lim1, lim2, _ = limits
    if ports <= lim1:
        return _Tiers(1, 1, 0, 0, 1, 0, e)
    if ports <= lim2:
        return _Tiers(2, leaves, _spread(leaves * u, u, k, spine_rule), 0, 1, leaves * u, leaves * u)
    pods = _ceil_div(leaves, k // 2)
    cores = u * _spread(leaves, k // 2, k, spine_rule)
    return _Tiers(3, leaves, pods * u, cores, pods, 2 * leaves * u, leaves * u)


def _frontend(nodes: int, k: int, port_gbps: float, fe: Frontend) -> Fabric:
    return design_fabric(
        nodes * fe.ports_per_node,
        fe.switch_ports or k,
        STORAGE_OVERSUBSCRIPTION,
        STORAGE_RAIL_OPTIMIZED,
        fe.ports_per_node,
        fe.port_gbps or port_gbps,
        server_cable=STORAGE_SERVER_CABLE,
    )


def design_fabric(
    endpoints: int,
    switch_ports: int,
    oversubscription: float = 1.0,
    rail_optimized: bool = True,
    nics_per_node: int = 8,
    port_gbps: float = 400.0,
    *,
    management_ports: int = 0,
    server_cable: str | None = None,
    spine_rule: str = "even",
    frontend: Frontend | None = None,
) -> Fabric:
    """Size the compute fabric for `endpoints` NIC ports on switches of `switch_ports` ports.

    Sources: docs/sources.md#clos (Clos formulas); docs/sources.md#al-fares-2008 (fat-tree); NVIDIA DGX SuperPOD H100
    RA Table 4 (rail-optimized SU, spine layer); the source article §3.2 (leaf example, 1:1 advice).
    `management_ports` adds fabric ports for appliances (the SuperPOD's UFM takes 4). `frontend`
    adds a separate converged N/S fabric (`Frontend`), returned in `Fabric.frontend`; its switches
    are not in the compute fabric's totals. Units: port_gbps in Gbit/s, bisection bandwidth in bit/s.
    """
    _check(
        endpoints,
        switch_ports,
        oversubscription,
        nics_per_node,
        port_gbps,
        management_ports,
        server_cable,
        spine_rule,
    )
    k, e, rails, mgmt = int(switch_ports), int(endpoints), int(nics_per_node), int(management_ports)
    ports = e + mgmt
    d, u = leaf_ports(k, oversubscription)
    limits = tier_limits(k, oversubscription, rails, rail_optimized)
    if ports > limits[2]:
        raise ScenarioError(
            f"{ports} ports exceed a 3-tier fat-tree of {k}-port switches at "
            f"{oversubscription}:1 (max {limits[2]}); use larger switches.",
            "network.switch_ports",
        )
    per_group, group_ports = (rails, d * rails) if rail_optimized else (1, d)
    t = _tiers(ports, e, k, u, per_group * _ceil_div(ports, group_ports), limits, spine_rule)
    kind = server_cable or ("fiber" if rail_optimized else "dac")
    cables = {"dac": 0, "aoc": 0, "fiber": t.switch_links}
    cables[kind] += ports
    nodes = _ceil_div(e, rails)
    group = nodes if t.tiers == 1 else min(nodes, d if rail_optimized else max(1, d // rails))
    return Fabric(
        tiers=t.tiers,
        endpoints=e,
        nodes=nodes,
        nics_per_node=rails,
        port_gbps=float(port_gbps),
        switch_ports=k,
        rail_optimized=bool(rail_optimized),
        oversubscription=float(oversubscription),
        effective_oversubscription=d / u,
        leaf_down_ports=d,
        leaf_up_ports=u,
        leaf_switches=t.leaves,
        spine_switches=t.spines,
        core_switches=t.cores,
        total_switches=t.leaves + t.spines + t.cores,
        pods=t.pods,
        server_links=ports,
        switch_links=t.switch_links,
        dac_cables=cables["dac"],
        aoc_cables=cables["aoc"],
        fiber_cables=cables["fiber"],
        transceivers=2 * cables["fiber"],
        bisection_bandwidth_bps=min(e, t.uplinks) * float(port_gbps) * 1e9 / 2.0,
        max_endpoints=limits[t.tiers - 1],
        nodes_per_leaf_group=group,
        cross_leaf_bandwidth_factor=1.0 if t.tiers == 1 else max(1.0, d / u),
        management_ports=mgmt,
        frontend=None if frontend is None else _frontend(nodes, k, port_gbps, frontend),
    )


def _spread_vec(links: NDArray[np.int64], per_switch_uplinks: int, k: int, rule: str) -> NDArray[np.int64]:
    """Vectorized `_spread` (same rule, same units)."""
    need = _ceil_div(links, k)
    if rule == "min":
        return need
    divs = _divisors(per_switch_uplinks)
    idx = np.minimum(np.searchsorted(divs, need, side="left"), len(divs) - 1)
    out: NDArray[np.int64] = divs[idx]
    return out


def fabric_counts(
    endpoints: ArrayLike,
    switch_ports: int,
    oversubscription: float = 1.0,
    nics_per_node: int = 8,
    rail_optimized: bool = True,
    *,
    management_ports: int = 0,
    server_cable: str | None = None,
    spine_rule: str = "even",
) -> dict[str, NDArray[Any]]:
    """Vectorized `design_fabric` counts for an array of endpoint counts (same rules and sources).

    Returns int64 arrays (switches, links, modules) keyed tiers, leaves, spines, cores, switches,
    server_links, switch_links, links, fiber_links, transceivers, and a bool array `feasible`; where
    an entry is beyond a 3-tier tree (or < 1) its counts are -1 and `feasible` is False, so a sweep
    over millions of sizes never raises halfway.
    """
    _check(1, switch_ports, oversubscription, nics_per_node, 1.0, management_ports, server_cable, spine_rule)
    k, rails = int(switch_ports), int(nics_per_node)
    e = np.asarray(endpoints, dtype=np.int64)
    ports = e + int(management_ports)
    d, u = leaf_ports(k, oversubscription)
    lim1, lim2, lim3 = tier_limits(k, oversubscription, rails, rail_optimized)
    per_group, group_ports = (rails, d * rails) if rail_optimized else (1, d)
    feasible = (e >= 1) & (ports <= lim3)
    tiers = np.where(ports <= lim1, 1, np.where(ports <= lim2, 2, 3))
    leaves = np.where(tiers == 1, 1, per_group * _ceil_div(ports, group_ports))
    spines2 = _spread_vec(leaves * u, u, k, spine_rule)
    pods = _ceil_div(leaves, k // 2) if k >= 2 else leaves
    # nested np.where, not np.select (the same integers; select costs several times more per call,
    # and the deadline's fixed point calls this every round)
    spines = np.where(tiers == 2, spines2, np.where(tiers == 3, pods * u, 0))
    cores = np.where(tiers == 3, u * _spread_vec(leaves, max(k // 2, 1), k, spine_rule), 0)
    switch_links = np.where(tiers == 2, leaves * u, np.where(tiers == 3, 2 * leaves * u, 0))
    kind = server_cable or ("fiber" if rail_optimized else "dac")
    fiber = switch_links + (ports if kind == "fiber" else 0)
    out = {
        "tiers": tiers,
        "leaves": leaves,
        "spines": spines,
        "cores": cores,
        "switches": leaves + spines + cores,
        "server_links": ports,
        "switch_links": switch_links,
        "links": ports + switch_links,
        "fiber_links": fiber,
        "transceivers": 2 * fiber,
    }
    out = {name: np.where(feasible, np.asarray(v, dtype=np.int64), -1) for name, v in out.items()}
    out["feasible"] = feasible
    return out


def storage_fabric_counts(nodes: ArrayLike, switch_ports: int) -> dict[str, NDArray[Any]]:
    """Vectorized counts (as `fabric_counts`) of the storage network for an array of node counts:
    the same rule as `design_fabric(..., frontend=Frontend())` with its default frontend arguments."""
    return fabric_counts(
        np.asarray(nodes, dtype=np.int64) * STORAGE_PORTS_PER_NODE,
        switch_ports,
        STORAGE_OVERSUBSCRIPTION,
        STORAGE_PORTS_PER_NODE,
        STORAGE_RAIL_OPTIMIZED,
        server_cable=STORAGE_SERVER_CABLE,
    )
