"""The compute-power-cost roll-up, vectorized: one call for one plan or a million sweep scenarios.

`plan.estimate()` calls it with scalars and a sweep chunk calls it with arrays, so the two give
the same numbers by construction. It composes compute.py (time, cards, card-hours), power.py and
cost.py; the network and storage counts come in already sized (network.fabric_counts /
design_fabric, storage.design_storage). Units: FLOP, FLOP/s, s, W, Wh, USD inside, `currency`
out.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from estimator.cluster.power import power as power_of
from estimator.cluster.scaleup import racks as racks_of
from estimator.cluster.scaleup import supernodes_for
from estimator.model.compute import SECONDS_PER_DAY, accelerator_hours, training_time_s
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


def cards_and_time(s: Sizing) -> dict[str, np.ndarray]:
    """Cards, nodes and wall-clock seconds: Time = C / (cards · peak · MFU) (docs/architecture.md#formulas)."""
    cards = np.asarray(s.cards, dtype=np.int64)
    nodes = -(-cards // np.asarray(s.cards_per_node, dtype=np.int64))
    seconds = training_time_s(s.training_flop, cards, s.peak_flops, s.mfu)
    return {"cards": cards, "nodes": nodes, "seconds": seconds}


@dataclass(frozen=True)
class Facility:
    """Per-unit power and prices (USD) of everything the bill counts; all broadcastable."""

    card_tdp_w: ArrayLike
    host_power_w: ArrayLike  # per node, without the accelerators
    server_price_usd: ArrayLike  # per node, cards included
    switch_power_w: ArrayLike
    switch_price_usd: ArrayLike
    transceiver_power_w: ArrayLike
    transceiver_price_usd: ArrayLike
    dac_cable_price_usd: ArrayLike
    fiber_cable_price_usd: ArrayLike  # optical cables (fibre trunks, AOC)
    nvme_price_usd: ArrayLike  # hot-tier drive
    hdd_price_usd: ArrayLike  # warm-tier drive
    hot_node_price_usd: ArrayLike  # storage server without drives
    warm_node_price_usd: ArrayLike
    storage_node_power_w: ArrayLike
    pue: ArrayLike
    electricity_usd_per_kwh: ArrayLike
    cloud_usd_per_card_hour: ArrayLike
    cloud_reserved_usd_per_card_hour: ArrayLike
    depreciation_years: ArrayLike
    utilization: ArrayLike
    currency: str = "USD"
    usd_to_cny: float | None = None
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


def rollup(sizing: Sizing, counts_for: Any, facility: Facility) -> dict[str, np.ndarray]:
    """Everything in SUMMARY_FIELDS for the scenarios described by the (broadcast) inputs.

    `counts_for(cards, nodes, tokens_per_s) -> Counts` sizes network and storage for the derived
    cluster (a closure, so the sweep can vectorize it and the plan can use the detailed designs).
    Returns a dict of numpy arrays keyed by SUMMARY_FIELDS; money in `facility.currency`.
    """
    ct = cards_and_time(sizing)
    cards, nodes, seconds = ct["cards"], ct["nodes"], ct["seconds"]
    hours = seconds / 3600.0
    tokens_per_s = np.asarray(sizing.tokens, dtype=np.float64) / seconds
    counts: Counts = counts_for(cards, nodes, tokens_per_s)
    f = facility
    cables = np.asarray(counts.dac_cables) + np.asarray(counts.optical_cables)
    drives = np.asarray(counts.hot_drives) + np.asarray(counts.warm_drives)
    storage_nodes = np.asarray(counts.hot_nodes) + np.asarray(counts.warm_nodes)
    units = supernodes_for(cards, f.unit_cards)
    scaleup_w = units * np.asarray(f.unit_power_w, dtype=float)
    scaleup_usd = units * np.asarray(f.unit_price_usd, dtype=float)
    # a supernode is bought whole: its idle nodes are paid for (not powered: they can be switched off)
    unit_nodes = np.asarray(f.unit_cards, dtype=np.int64) // np.asarray(sizing.cards_per_node, dtype=np.int64)
    nodes_bought = np.maximum(nodes, units * unit_nodes) + np.asarray(f.spare_nodes, dtype=np.int64)
    pw = power_of(
        cards=cards,
        card_tdp_w=facility.card_tdp_w,
        nodes=nodes,
        host_power_w=facility.host_power_w,
        switches=counts.switches,
        switch_power_w=facility.switch_power_w,
        transceivers=counts.transceivers,
        transceiver_power_w=facility.transceiver_power_w,
        storage_nodes=storage_nodes,
        storage_node_power_w=facility.storage_node_power_w,
        scaleup_w=scaleup_w,
        pue=facility.pue,
        hours=hours,
    )
    money = cost_of(
        cards=cards,
        nodes=nodes_bought,
        hours=hours,
        it_w=pw.it_w,
        facility_w=pw.facility_w,
        server_price_usd=facility.server_price_usd,
        switches=counts.switches,
        switch_price_usd=facility.switch_price_usd,
        transceivers=counts.transceivers,
        transceiver_price_usd=facility.transceiver_price_usd,
        cables=cables,
        cable_price_usd=_mean_price(
            counts.dac_cables, f.dac_cable_price_usd, counts.optical_cables, f.fiber_cable_price_usd
        ),
        drives=drives,
        drive_price_usd=_mean_price(counts.hot_drives, f.nvme_price_usd, counts.warm_drives, f.hdd_price_usd),
        storage_nodes=storage_nodes,
        storage_node_price_usd=_mean_price(
            counts.hot_nodes, f.hot_node_price_usd, counts.warm_nodes, f.warm_node_price_usd
        ),
        scaleup_usd=scaleup_usd,
        electricity_usd_per_kwh=facility.electricity_usd_per_kwh,
        cloud_usd_per_card_hour=facility.cloud_usd_per_card_hour,
        cloud_reserved_usd_per_card_hour=facility.cloud_reserved_usd_per_card_hour,
        depreciation_years=facility.depreciation_years,
        utilization=facility.utilization,
        currency=facility.currency,
        usd_to_cny=facility.usd_to_cny,
    )
    fx = money.exchange_rate
    out = {
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
        "cost.capex.compute": np.asarray(money.capex_compute_usd, dtype=np.float64) * fx,
        "cost.capex.network": np.asarray(money.capex_network_usd, dtype=np.float64) * fx,
        "cost.capex.storage": np.asarray(money.capex_storage_usd, dtype=np.float64) * fx,
        "cost.capex.scaleup": np.asarray(money.capex_scaleup_usd, dtype=np.float64) * fx,
        "cost.capex.total": np.asarray(money.capex_total_usd, dtype=np.float64) * fx,
        "cost.run.owned": np.asarray(money.run_owned_usd, dtype=np.float64) * fx,
        "cost.run.cloud": np.asarray(money.run_cloud_usd, dtype=np.float64) * fx,
        "cost.run.cloud_reserved": np.asarray(money.run_cloud_reserved_usd, dtype=np.float64) * fx,
        "cost.owned_per_card_hour": np.asarray(money.owned_usd_per_card_hour, dtype=np.float64) * fx,
        "cost.cloud_break_even_months": np.asarray(money.cloud_break_even_months, dtype=np.float64),
    }
    out["_power"] = pw
    out["_cost"] = money
    out["_scaleup"] = {
        "supernodes": units,
        "power_w": scaleup_w,
        "capex_usd": scaleup_usd,
        "racks": racks_of(
            units, f.unit_compute_racks, f.unit_network_racks, counts.switches, f.scaleout_switches_per_rack
        ),
    }
    return out
