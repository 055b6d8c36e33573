"""The supernode part of a plan: which unit the resolved scenario is built of, the card quantum
sizing rounds to, the roll-up's per-unit figures, the result's `scaleup` section (both planes) and
the comparison of the same cards as 8-card nodes.

Sources: catalog supernodes.toml (docs/supernodes.md); the bill of each unit is `scaleup.unit_bill`.
The comparison re-runs the layout search (layout.search) on the same problem with the scale-up
domain cut to one node: every other input (cards, fabric, batch, model) is the plan's, so the
step-time difference is the domain size alone. Units: s, W, USD, counts.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from estimator import catalog
from estimator.catalog.entries import Supernode
from estimator.cluster.network import Fabric
from estimator.cluster.planes import LayoutBrief, PlaneTotals, Racks, ScaleOut, ScaleupSection, VersusNodes
from estimator.cluster.scaleup import (
    UnitBill,
    plane_totals,
    rack_power_w,
    racks,
    server_unit,
    unit_bill,
    vpc_access,
)
from estimator.contract.book_pricing import priced
from estimator.contract.resolve import Resolved
from estimator.layout.search import LayoutEval, LayoutProblem, LayoutSearch, search

VPC_SWITCH = "huawei-ce9860-128x400ge"  # catalog switch of a VPC access leaf (128 x 400GE)
VPC_TRANSCEIVER = "osfp-400g"


def supernode_entry(r: Resolved) -> Supernode | None:
    """The catalog supernode the scenario's nodes are built into, when the scenario keeps that
    server's card count and its accelerator lives in the unit's domain; else None."""
    sid = r.server.supernode
    if not sid or r.cards_per_node != r.server.cards_per_node:
        return None
    sn = catalog.supernode(sid)
    if r.accelerator.scaleup_domain_cards < sn.cards and sn.nodes > 1:
        return None  # an override shrank the domain below the unit: nodes, not a supernode
    return sn


def unit(r: Resolved) -> UnitBill:
    """The bill of one unit (a supernode, or the degenerate single server) for this scenario."""
    sn = supernode_entry(r)
    if sn is None:
        return server_unit(r.cards_per_node, r.defaults["servers_per_rack"], r.server.name)
    vpc = None
    if sn.frontend_ports_per_node and not r.scenario.network.storage_network:
        vpc = vpc_access(
            sn.nodes,
            sn.frontend_ports_per_node,
            sn.frontend_port_gbps,
            priced(catalog.switch(VPC_SWITCH), "switches", r.price_book, r.book_usd_to_cny),
            priced(catalog.transceiver(VPC_TRANSCEIVER), "transceivers", r.price_book, r.book_usd_to_cny),
            r.defaults["fiber_cable_usd"],
        )
    return unit_bill(sn, vpc)


def cards_quantum(r: Resolved) -> int:
    """Cards are bought in whole units: a supernode's cards where the accelerator lives in one
    (384 for CloudMatrix 384, 72 for NVL72), else a node's."""
    sn = supernode_entry(r)
    return sn.cards if sn is not None and sn.nodes > 1 else r.cards_per_node


def facility_fields(r: Resolved) -> dict[str, float]:
    """Per-unit figures for rollup.Facility: cards, plane W and USD, racks per unit."""
    u = unit(r)
    return {
        "unit_cards": float(u.cards),
        "unit_power_w": u.power_w,
        "unit_price_usd": u.price_usd,
        "unit_compute_racks": u.compute_racks,
        "unit_network_racks": float(u.network_racks),
        "scaleout_switches_per_rack": r.defaults["scaleout_switches_per_rack"],
    }


def _layout_brief(best: LayoutEval | None, domain: int) -> LayoutBrief | None:
    if best is None:
        return None
    return LayoutBrief(
        domain_cards=domain,
        step_time_s=float(best.step_time_s),
        tp=best.tp,
        pp=best.pp,
        dp=best.dp,
        ep=best.ep,
        cp=best.cp,
        predicted_mfu=float(best.predicted_mfu),
        tokens_per_s=float(best.tokens_per_s),
        sequences_per_step=best.dp * best.micro_batch_size * best.micro_batches,
        tp_ep_inside_domain=best.tp * best.ep <= domain,
        breakdown_s={k: float(v) for k, v in best.breakdown_s.items()},
    )


def versus_nodes(
    problem: LayoutProblem,
    found: LayoutSearch,
    bill: UnitBill,
    capex_usd: float,
    it_w: float,
    usd_to_currency: float = 1.0,
) -> VersusNodes | None:
    """The same cards as `problem.cards_per_node`-card nodes (domain = one node) against the plan.

    speedup = tokens/s on supernodes / tokens/s as nodes (> 1: the supernode is faster; tokens/s,
    not step time, because each layout rounds the global batch to its own DP);
    capex_ratio = plan capex / (plan capex - the scale-up plane), power_ratio likewise with IT W.
    The supernode pays when speedup >= capex_ratio (more tokens per capex dollar) — the energy per
    token ratio is power_ratio / speedup. None for a degenerate unit (nothing to compare).
    """
    if bill.degenerate:
        return None
    domain = problem.domain_cards
    node = problem.cards_per_node
    alt = search(dataclasses.replace(problem, scaleup_domain_cards=node))
    sn_best, nd_best = found.best, alt.best
    n = -(-problem.cards // bill.cards)
    plane_usd, plane_w = n * bill.price_usd, n * bill.power_w
    capex_ratio = capex_usd / max(capex_usd - plane_usd, 1e-9)
    power_ratio = it_w / max(it_w - plane_w, 1e-9)
    speedup: float | None = None
    pays: bool | None = None
    if sn_best is not None and nd_best is not None:
        speedup = float(sn_best.tokens_per_s) / float(nd_best.tokens_per_s)
        pays = speedup >= capex_ratio
    elif sn_best is not None:
        pays = True  # only the supernode's domain admits a layout that fits
    return VersusNodes(
        supernode=_layout_brief(sn_best, domain),
        nodes=_layout_brief(nd_best, node),
        plane_capex_in_currency=plane_usd * usd_to_currency,
        plane_power_w=plane_w,
        capex_factor=capex_ratio,
        power_factor=power_ratio,
        speedup_factor=speedup,
        energy_per_token_factor=None if speedup is None else power_ratio / speedup,
        pays=pays,
    )


def planes_section(
    r: Resolved,
    fabric: Fabric,
    found: LayoutSearch,
    roll: Mapping[str, Any],  # money.rollup.rollup's flat result (plan.chosen.Roll)
    problem: LayoutProblem,
) -> ScaleupSection:
    """The result's `scaleup` section: the unit, its plane's whole-cluster totals, racks, the
    scale-out plane it hangs off, and the comparison against 8-card nodes (money in the report's
    currency, the unit's own bill in USD)."""
    bill = unit(r)
    scale = roll.get("_scaleup", {})
    cards = int(roll["compute.cards"])
    n = int(scale.get("supernodes", -(-cards // bill.cards)))
    t = {k: float(v) for k, v in plane_totals(n, bill).items()}
    rk = {
        k: float(v)
        for k, v in racks(
            n,
            bill.compute_racks,
            bill.network_racks,
            fabric.total_switches + (fabric.frontend.total_switches if fabric.frontend else 0),
            r.defaults["scaleout_switches_per_rack"],
        ).items()
    }
    capex_usd, it_w = float(roll["_cost"].capex_total_usd), float(roll["power.it_w"])
    return ScaleupSection(
        unit=bill,
        supernodes=n,
        idle_cards=n * bill.cards - cards,
        totals=PlaneTotals(
            supernodes_count=t["supernodes"],
            node_switch_chips_count=t["node_switch_chips"],
            rack_switches_count=t["rack_switches"],
            rack_switch_chips_count=t["rack_switch_chips"],
            links_count=t["links"],
            cables_count=t["cables"],
            transceivers_count=t["transceivers"],
            vpc_leaves_count=t["vpc_leaves"],
            vpc_transceivers_count=t["vpc_transceivers"],
            power_w=t["power_w"],
            price_in_currency=t["price_usd"] * r.usd_to_currency,
        ),
        racks=Racks(
            compute_count=rk["compute"],
            scaleup_count=rk["scaleup"],
            scaleout_count=rk["scaleout"],
            total_count=rk["total"],
        ),
        power_per_rack_w=rack_power_w(bill, r.accelerator.tdp_w, r.server.host_power_w),
        scaleout=ScaleOut(
            nodes=fabric.nodes,
            nodes_per_supernode=bill.nodes,
            endpoints=fabric.endpoints,
            port_gbps=fabric.port_gbps,
            tiers=fabric.tiers,
            leaf_switches=fabric.leaf_switches,
            spine_switches=fabric.spine_switches,
            core_switches=fabric.core_switches,
            transceivers=fabric.transceivers,
            oversubscription_factor=fabric.effective_oversubscription,
            rail_optimized=fabric.rail_optimized,
        ),
        versus_nodes=versus_nodes(problem, found, bill, capex_usd, it_w, r.usd_to_currency),
    )
