"""The compute-power-cost roll-up, vectorized: one call for one plan or a million sweep scenarios.

`plan.estimate()` calls it with scalars and a sweep chunk calls it with arrays, so the two give
the same numbers by construction. It composes compute.py (time, cards, card-hours), power.py and
cost.py; the network and storage counts come in already sized (network.fabric_counts /
design_fabric, storage.design_storage). Units: FLOP, FLOP/s, s, W, Wh, USD inside, `currency`
out.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from estimator.cluster.power import ItLoad, Power
from estimator.cluster.power import power as power_of
from estimator.cluster.scaleup import racks as racks_of
from estimator.cluster.scaleup import supernodes_for
from estimator.model.compute import SECONDS_PER_DAY, accelerator_hours, training_time_s
from estimator.money.cost import CapexBill, Cost, RunningPrices
from estimator.money.cost import cost as cost_of

ArrayLike = Any

SUMMARY_FIELDS: tuple[str, ...] = (
    "compute.training_flop",
    "compute.cards",
    "compute.nodes",
    "compute.mfu",
    "compute.wall_clock_days",
    "compute.accelerator_hours",
    "compute.tokens_per_s",
    "power.it_w",
    "power.facility_w",
    "power.energy_wh",
    "cost.capex.compute",
    "cost.capex.network",
    "cost.capex.storage",
    "cost.capex.scaleup",
    "cost.capex.total",
    "cost.run.owned",
    "cost.run.cloud",
    "cost.run.cloud_reserved",
    "cost.owned_per_card_hour",
    "cost.cloud_break_even_months",
)


@dataclass(frozen=True)
class Sizing:
    """A cluster of `cards` running `training_flop` at `mfu` (the card count is decided upstream:
    given, or sized for a deadline by plan.choose_cluster / compute.cards_for_deadline)."""

    training_flop: ArrayLike  # FLOP
    tokens: ArrayLike
    peak_flops: ArrayLike  # FLOP/s per card
    mfu: ArrayLike  # fraction
    cards_per_node: ArrayLike
    cards: ArrayLike
    # wall-clock time the cluster is held per second of computing (plan.goodput.held_ratio: 1 / ETTR
    # with failures counted, 1 without): the run's energy and cost are paid for the held time
    held: ArrayLike = 1.0


def cards_and_time(s: Sizing) -> dict[str, np.ndarray]:
    """Cards, nodes and wall-clock seconds: Time = C / (cards · peak · MFU) (docs/architecture.md#formulas)."""
    cards = np.asarray(s.cards, dtype=np.int64)
    nodes = -(-cards // np.asarray(s.cards_per_node, dtype=np.int64))
    seconds = training_time_s(s.training_flop, cards, s.peak_flops, s.mfu)
    return {"cards": cards, "nodes": nodes, "seconds": seconds}


@dataclass(frozen=True)
class Equipment:
    """Unit prices (USD) and powers (W) of what the bill counts beyond the cards, with where each
    came from (money.pricing.equipment fills it from the catalog and the scenario); broadcastable."""

    server_price_usd: ArrayLike  # per node, cards included
    switch_price_usd: ArrayLike
    switch_power_w: ArrayLike
    transceiver_price_usd: ArrayLike
    transceiver_power_w: ArrayLike
    dac_cable_price_usd: ArrayLike
    fiber_cable_price_usd: ArrayLike  # optical cables (fibre trunks, AOC)
    nvme_price_usd: ArrayLike  # hot-tier drive
    hdd_price_usd: ArrayLike  # warm-tier drive
    hot_node_price_usd: ArrayLike  # storage server without drives
    warm_node_price_usd: ArrayLike
    storage_node_power_w: ArrayLike
    sources: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Facility:
    """Per-unit power and prices (USD) of everything the bill counts; all broadcastable."""

    card_tdp_w: ArrayLike
    host_power_w: ArrayLike  # per node, without the accelerators
    equipment: Equipment  # unit prices and powers of nodes, network and storage
    pue: ArrayLike
    running: RunningPrices  # electricity, cloud prices, depreciation, utilization, currency
    # the unit cards are bought in (scaleup.py, supernode.facility_fields): a supernode, or 0 = none;
    # its scale-up plane's power (W) and price (USD), and racks per unit
    unit_cards: ArrayLike = 0
    unit_power_w: ArrayLike = 0.0
    unit_price_usd: ArrayLike = 0.0
    unit_compute_racks: ArrayLike = 0.0
    unit_network_racks: ArrayLike = 0.0
    scaleout_switches_per_rack: ArrayLike = 16
    # hot standby nodes (reliability.spare_nodes, plan.goodput): bought with their cards, not training
    spare_nodes: ArrayLike = 0


@dataclass(frozen=True)
class Counts:
    """Network and storage equipment counts sized for each scenario."""

    switches: ArrayLike
    transceivers: ArrayLike
    dac_cables: ArrayLike
    optical_cables: ArrayLike
    hot_drives: ArrayLike
    warm_drives: ArrayLike
    hot_nodes: ArrayLike
    warm_nodes: ArrayLike


def _mean_price(n1: ArrayLike, p1: ArrayLike, n2: ArrayLike, p2: ArrayLike) -> np.ndarray:
    """Count-weighted unit price of two kinds, so cost() can take one count and one price."""
    n1, n2 = np.asarray(n1, dtype=np.float64), np.asarray(n2, dtype=np.float64)
    total = n1 + n2
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(
            total > 0,
            (n1 * np.asarray(p1, dtype=np.float64) + n2 * np.asarray(p2, dtype=np.float64)) / total,
            0.0,
        )


def _power(cards: Any, nodes: Any, hours: Any, counts: Counts, scaleup_w: Any, f: Facility) -> Power:
    eq = f.equipment
    storage_nodes = np.asarray(counts.hot_nodes) + np.asarray(counts.warm_nodes)
    load = ItLoad(
        cards=cards,
        card_tdp_w=f.card_tdp_w,
        nodes=nodes,
        host_power_w=f.host_power_w,
        switches=counts.switches,
        switch_power_w=eq.switch_power_w,
        transceivers=counts.transceivers,
        transceiver_power_w=eq.transceiver_power_w,
        storage_nodes=storage_nodes,
        storage_node_power_w=eq.storage_node_power_w,
        scaleup_w=scaleup_w,
    )
    return power_of(load, pue=f.pue, hours=hours)


def _bill(cards: Any, nodes_bought: Any, counts: Counts, scaleup_usd: Any, eq: Equipment) -> CapexBill:
    """What is bought at what unit price; cables, drives and storage nodes of two kinds each at their
    count-weighted mean price."""
    c = counts
    return CapexBill(
        cards=cards,
        nodes=nodes_bought,
        server_price_usd=eq.server_price_usd,
        switches=c.switches,
        switch_price_usd=eq.switch_price_usd,
        transceivers=c.transceivers,
        transceiver_price_usd=eq.transceiver_price_usd,
        cables=np.asarray(c.dac_cables) + np.asarray(c.optical_cables),
        cable_price_usd=_mean_price(
            c.dac_cables, eq.dac_cable_price_usd, c.optical_cables, eq.fiber_cable_price_usd
        ),
        drives=np.asarray(c.hot_drives) + np.asarray(c.warm_drives),
        drive_price_usd=_mean_price(c.hot_drives, eq.nvme_price_usd, c.warm_drives, eq.hdd_price_usd),
        storage_nodes=np.asarray(c.hot_nodes) + np.asarray(c.warm_nodes),
        storage_node_price_usd=_mean_price(
            c.hot_nodes, eq.hot_node_price_usd, c.warm_nodes, eq.warm_node_price_usd
        ),
        scaleup_usd=scaleup_usd,
    )


def _summary(
    sizing: Sizing, ct: dict[str, np.ndarray], tokens_per_s: Any, pw: Power, money: Cost
) -> dict[str, np.ndarray]:
    """SUMMARY_FIELDS from the sized cluster, its power and its cost (money in the cost's currency)."""
    cards, nodes, seconds = ct["cards"], ct["nodes"], ct["seconds"]
    fx = money.exchange_rate

    def cur(x: Any) -> np.ndarray:
        return np.asarray(x, dtype=np.float64) * fx

    return {
        "compute.training_flop": np.asarray(sizing.training_flop, dtype=np.float64),
        "compute.cards": cards,
        "compute.nodes": nodes,
        "compute.mfu": np.asarray(sizing.mfu, dtype=np.float64),
        "compute.wall_clock_days": seconds / SECONDS_PER_DAY,
        "compute.accelerator_hours": accelerator_hours(cards, seconds),
        "compute.tokens_per_s": tokens_per_s,
        "power.it_w": np.asarray(pw.it_w, dtype=np.float64),
        "power.facility_w": np.asarray(pw.facility_w, dtype=np.float64),
        "power.energy_wh": np.asarray(pw.energy_wh, dtype=np.float64),
        "cost.capex.compute": cur(money.capex_compute_usd),
        "cost.capex.network": cur(money.capex_network_usd),
        "cost.capex.storage": cur(money.capex_storage_usd),
        "cost.capex.scaleup": cur(money.capex_scaleup_usd),
        "cost.capex.total": cur(money.capex_total_usd),
        "cost.run.owned": cur(money.run_owned_usd),
        "cost.run.cloud": cur(money.run_cloud_usd),
        "cost.run.cloud_reserved": cur(money.run_cloud_reserved_usd),
        "cost.owned_per_card_hour": cur(money.owned_usd_per_card_hour),
        "cost.cloud_break_even_months": np.asarray(money.cloud_break_even_months, dtype=np.float64),
    }


def rollup(sizing: Sizing, counts_for: Any, facility: Facility) -> dict[str, Any]:
    """Everything in SUMMARY_FIELDS for the scenarios described by the (broadcast) inputs.

    `counts_for(cards, nodes, tokens_per_s) -> Counts` sizes network and storage for the derived
    cluster (a closure, so the sweep can vectorize it and the plan can use the detailed designs).
    Returns a dict of numpy arrays keyed by SUMMARY_FIELDS; money in `facility.running.currency`; and the
    Power, the Cost, the scale-up plane and Sizing.held under "_power", "_cost", "_scaleup", "_held".
    The time fields (compute.*) are the computing time; energy and the run's cost are paid for the
    held time (hours x Sizing.held).
    """
    ct = cards_and_time(sizing)
    cards, nodes, seconds = ct["cards"], ct["nodes"], ct["seconds"]
    hours = seconds / 3600.0
    tokens_per_s = np.asarray(sizing.tokens, dtype=np.float64) / seconds
    counts: Counts = counts_for(cards, nodes, tokens_per_s)
    f = facility
    units = supernodes_for(cards, f.unit_cards)
    scaleup_w = units * np.asarray(f.unit_power_w, dtype=float)
    scaleup_usd = units * np.asarray(f.unit_price_usd, dtype=float)
    # a supernode is bought whole: its idle nodes are paid for (not powered: they can be switched off)
    unit_nodes = np.asarray(f.unit_cards, dtype=np.int64) // np.asarray(sizing.cards_per_node, dtype=np.int64)
    nodes_bought = np.maximum(nodes, units * unit_nodes) + np.asarray(f.spare_nodes, dtype=np.int64)
    # the cluster is paid and powered while it is held: computing, and with failures counted the
    # checkpoint stalls, re-done work, restarts and planned stops too (energy at the training draw
    # throughout: an upper bound, the restarts idle the cards)
    held_hours = hours * np.asarray(sizing.held, dtype=np.float64)
    pw = _power(cards, nodes, held_hours, counts, scaleup_w, f)
    bill = _bill(cards, nodes_bought, counts, scaleup_usd, f.equipment)
    money = cost_of(bill, held_hours, pw.it_w, pw.facility_w, f.running)
    out: dict[str, Any] = dict(_summary(sizing, ct, tokens_per_s, pw, money))
    out["_power"] = pw
    out["_cost"] = money
    out["_held"] = np.asarray(sizing.held, dtype=np.float64)  # Sizing.held, for the Monte Carlo's costs
    out["_scaleup"] = {
        "supernodes": units,
        "power_w": scaleup_w,
        "capex_usd": scaleup_usd,
        "racks": racks_of(
            units, f.unit_compute_racks, f.unit_network_racks, counts.switches, f.scaleout_switches_per_rack
        ),
    }
    return out
