"""result.scaleup typed (cluster.supernode.planes_section builds it): the scale-up unit, its plane's
whole-cluster totals, racks, the scale-out plane it hangs off and the comparison against 8-card
nodes. Field names carry their unit as in estimator.plan.result (`_count` for a count held as a
float, `_factor` for a ratio of like quantities, `_in_currency` for money in the report's
currency); the contract's JSON keys, where they differ, are in the fields' metadata (json_key).
The field order is the JSON order."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from estimator.cluster.scaleup import UnitBill
from estimator.result_fields import json_key


@dataclass(frozen=True, slots=True, kw_only=True)
class PlaneTotals:
    """result.scaleup.totals: the scale-up plane's counts for the whole cluster (scaleup.plane_totals)."""

    supernodes_count: float = json_key("supernodes")
    node_switch_chips_count: float = json_key("node_switch_chips")
    rack_switches_count: float = json_key("rack_switches")
    rack_switch_chips_count: float = json_key("rack_switch_chips")
    links_count: float = json_key("links")
    cables_count: float = json_key("cables")
    transceivers_count: float = json_key("transceivers")
    vpc_leaves_count: float = json_key("vpc_leaves")
    vpc_transceivers_count: float = json_key("vpc_transceivers")
    power_w: float
    price_in_currency: float = json_key("price")


@dataclass(frozen=True, slots=True, kw_only=True)
class Racks:
    """result.scaleup.racks: floor positions by kind (scaleup.racks; storage racks not counted)."""

    compute_count: float = json_key("compute")
    scaleup_count: float = json_key("scaleup")
    scaleout_count: float = json_key("scaleout")
    total_count: float = json_key("total")


@dataclass(frozen=True, slots=True, kw_only=True)
class ScaleOut:
    """result.scaleup.scaleout: the scale-out fabric the units hang off (cluster.network.Fabric)."""

    nodes: int
    nodes_per_supernode: int
    endpoints: int
    port_gbps: float
    tiers: int
    leaf_switches: int
    spine_switches: int
    core_switches: int
    transceivers: int
    oversubscription_factor: float = json_key("oversubscription")  # down:up as built
    rail_optimized: bool


@dataclass(frozen=True, slots=True, kw_only=True)
class LayoutBrief:
    """The best layout of one scale-up domain size (cards on NVLink/HCCS) in result.scaleup.versus_nodes."""

    domain_cards: int
    step_time_s: float
    tp: int
    pp: int
    dp: int
    ep: int
    cp: int
    predicted_mfu: float
    tokens_per_s: float
    # the global batch the layout trains, dp x micro-batch x micro-batches: each domain size's
    # layout rounds the asked batch to its own DP, so two step times compare only with these
    sequences_per_step: int
    tp_ep_inside_domain: bool
    breakdown_s: Mapping[str, float]  # step-time term -> seconds


@dataclass(frozen=True, slots=True, kw_only=True)
class VersusNodes:
    """result.scaleup.versus_nodes: the same cards as 8-card nodes against the supernodes
    (cluster.supernode.versus_nodes: speedup, capex and power ratios, whether the supernode pays)."""

    supernode: LayoutBrief | None
    nodes: LayoutBrief | None
    plane_capex_in_currency: float = json_key("plane_capex")
    plane_power_w: float
    capex_factor: float = json_key("capex_ratio")  # plan capex / capex without the plane
    power_factor: float = json_key("power_ratio")  # IT W / IT W without the plane
    speedup_factor: float | None = json_key("speedup")  # tokens/s on supernodes / as nodes
    energy_per_token_factor: float | None = json_key("energy_per_token_ratio")
    pays: bool | None


@dataclass(frozen=True, slots=True, kw_only=True)
class ScaleupSection:
    """result.scaleup: both planes, the scale-up plane of each supernode and the scale-out fabric."""

    unit: UnitBill  # written by UnitBill.to_dict (money in USD, as the catalog's)
    supernodes: int
    idle_cards: int
    totals: PlaneTotals
    racks: Racks
    power_per_rack_w: Mapping[str, float | None]  # compute / switch rack -> W (None: no switch racks)
    scaleout: ScaleOut
    versus_nodes: VersusNodes | None
