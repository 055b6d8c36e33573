"""What a plan costs and draws: unit prices and powers of the bill (`equipment`, `prices`,
`facility`), the training FLOPs (`model_flops`) and the bill's counts as arrays over card counts
(`vectorized_counts`). Below `plan`, `batch` and `budget`, which all price with it, so that none of
them imports another (docs/architecture.md#layers).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

import numpy as np

from estimator import catalog
from estimator.catalog.entries import Drive, Switch
from estimator.cluster.network import fabric_counts, storage_fabric_counts
from estimator.cluster.storage import ARCHIVE_INTERVAL_S, StorageInputs, storage_counts, volumes
from estimator.cluster.supernode import facility_fields
from estimator.contract.book_pricing import book_note, priced
from estimator.contract.resolve import Resolved, checkpoint_interval, electricity_usd_per_kwh
from estimator.errors import ScenarioError
from estimator.model.transformer import flops_per_token_terms
from estimator.money.cost import RunningPrices
from estimator.money.rollup import Counts, Equipment, Facility

HOT_DRIVE = "nvme-15.36tb"  # catalog drives used for the hot (PFS) and warm (HDD) tiers
WARM_DRIVE = "hdd-24tb"


def model_flops(r: Resolved) -> dict[str, float]:
    """FLOPs per token: 6·N_active (Kaplan 2020) + PaLM's 12·L·s·d_attn (unless training.attention_flops
    is false), for a preset, a config and a model known by size alike (its assumed shape's layers,
    heads and sequence length: estimator.contract.assumed_shape)."""
    dense, attention = flops_per_token_terms(r.arch, r.seq_len, r.counts)
    use_attention = r.scenario.training.attention_flops
    per_token = dense + (attention if use_attention else 0.0)
    return {
        "flop_per_token": float(per_token),
        "flop_per_token_6n": float(dense),
        "flop_per_token_attention": float(attention) if use_attention else 0.0,
        "training_flop": float(per_token * r.scenario.training.tokens),
    }


def causal_share(dense: float, attention: float) -> float:
    """The share of the FLOPs per token model_flops counts that causal kernels compute: the 6·N term
    and half of PaLM's whole-matrix attention term (a causal layer attends to half the matrix's keys,
    a sliding-window layer too: model.transformer.attended_keys); 1 where attention is not counted.
    An MFU times it is the MFU on what the kernels run. Dimensionless."""
    return (dense + 0.5 * attention) / (dense + attention) if attention > 0 else 1.0


def _pick_by_speed(entries: dict[str, Any], gbps: float, attr: str) -> Any:
    """The catalog entry whose speed equals `gbps`, else the slowest one that is faster, else the fastest."""
    ranked = sorted(entries.values(), key=lambda e: getattr(e, attr))
    for e in ranked:
        if getattr(e, attr) >= gbps:
            return e
    return ranked[-1]


def default_switch(r: Resolved, port_gbps: float) -> Switch:
    """The scale-out switch priced when the scenario names none: of the server's compute-fabric link
    layer (catalog Server.scaleout_fabric: InfiniBand or Ethernet/RoCE; any where the server names
    none or no switch carries it), at `port_gbps` (Gbit/s) where one is, the accelerator vendor's
    first (Huawei CloudEngine for Ascend's RoCE plane, NVIDIA Quantum for DGX InfiniBand), then the
    scenario's radix (network.switch_ports); else the slowest faster one. equipment prices another
    radix or speed by capacity."""
    every = catalog.switches()
    fabric = r.server.scaleout_fabric
    pool = {k: v for k, v in every.items() if v.fabric == fabric} or every
    matching = [v for v in pool.values() if v.port_gbps == port_gbps]
    if not matching:
        return cast(Switch, _pick_by_speed(pool, port_gbps, "port_gbps"))
    vendor, ports = r.accelerator.vendor, r.scenario.network.switch_ports
    return min(matching, key=lambda v: (v.vendor != vendor, v.ports != ports))  # stable: catalog order


def equipment(r: Resolved) -> Equipment:
    """Unit prices and powers from the catalog, with the scenario's overrides (in its currency)."""
    s, d, acc, server = r.scenario, r.defaults, r.accelerator, r.server
    to_usd = 1.0 / r.usd_to_currency
    port_gbps = s.network.port_gbps or r.nic_gbps
    if s.network.switch:
        try:
            sw = catalog.switch(s.network.switch)
        except KeyError:
            known = ", ".join(sorted(catalog.switches()))
            raise ScenarioError(
                f"unknown switch '{s.network.switch}'; known: {known}", "network.switch"
            ) from None
    else:
        sw = default_switch(r, port_gbps)
    # A switch of another radix or speed is priced by its capacity (ports x Gb/s), an assumption.
    capacity_ratio = (s.network.switch_ports * port_gbps) / (sw.ports * sw.port_gbps)
    book, fx = r.price_book, r.book_usd_to_cny
    sw = priced(sw, "switches", book, fx)
    xcvr = priced(_pick_by_speed(catalog.transceivers(), port_gbps, "gbps"), "transceivers", book, fx)
    nvme, hdd = drives(r)
    chassis = getattr(server, "chassis_price_usd", None) or 0.0
    server_price = (
        s.cost.server_price * to_usd
        if s.cost.server_price is not None
        else chassis + r.cards_per_node * acc.price_usd
    )
    return Equipment(
        server_price_usd=server_price,
        switch_price_usd=(s.cost.switch_price * to_usd)
        if s.cost.switch_price is not None
        else sw.price_usd * capacity_ratio,
        switch_power_w=sw.power_w * capacity_ratio,
        transceiver_price_usd=(s.cost.transceiver_price * to_usd)
        if s.cost.transceiver_price is not None
        else xcvr.price_usd,
        transceiver_power_w=xcvr.power_w,
        dac_cable_price_usd=d["dac_cable_usd"],
        fiber_cable_price_usd=d["fiber_cable_usd"],
        nvme_price_usd=nvme.price_usd,
        hdd_price_usd=hdd.price_usd,
        hot_node_price_usd=d["storage_node_nvme_usd"],
        warm_node_price_usd=d["storage_node_hdd_usd"],
        storage_node_power_w=d["storage_node_power_w"],
        sources={
            "server": f"{server.name}: chassis + {r.cards_per_node} x {acc.name}"
            + (book_note(server, "chassis_price_usd") or book_note(acc))
            if s.cost.server_price is None
            else "scenario cost.server_price",
            "switch": sw.name
            + ("" if capacity_ratio == 1 else f", priced x{capacity_ratio:.2f} by capacity")
            + book_note(sw),
            "transceiver": xcvr.name + book_note(xcvr),
            "hot drive": nvme.name + book_note(nvme),
            "warm drive": hdd.name + book_note(hdd),
        },
    )


def drives(r: Resolved) -> tuple[Drive, Drive]:
    """The hot (NVMe) and warm (HDD) tier drives, priced by the scenario's price book if any."""
    book, fx = r.price_book, r.book_usd_to_cny
    return (
        priced(catalog.drive(HOT_DRIVE), "drives", book, fx),
        priced(catalog.drive(WARM_DRIVE), "drives", book, fx),
    )


def storage_inputs(r: Resolved) -> StorageInputs:
    """The storage tiers' inputs of a scenario: its `storage` section, the catalog's hot and warm
    drives, the storage nodes' bays and bandwidth and the training server's local NVMe; the
    remaining fields keep StorageInputs' defaults. The one builder for the plan's design
    (plan.sizing._storage) and the vectorized counts (vectorized_counts), so they cannot drift."""
    st, d = r.scenario.storage, r.defaults
    nvme, hdd = drives(r)
    return StorageInputs(
        checkpoint_interval_s=checkpoint_interval(r.scenario) or ARCHIVE_INTERVAL_S,
        checkpoint_write_s=st.checkpoint_write_s,
        checkpoints_kept=st.checkpoints_kept,
        checkpoints_archived=st.archive_checkpoints,
        bytes_per_param_checkpoint=st.checkpoint_bytes_per_param,
        raw_bytes_per_token=st.raw_bytes_per_token,
        nvme_capacity_bytes=nvme.capacity_bytes,
        nvme_read_bytes_per_s=nvme.read_bytes_per_s,
        nvme_write_bytes_per_s=nvme.write_bytes_per_s,
        hdd_capacity_bytes=hdd.capacity_bytes,
        hdd_read_bytes_per_s=hdd.read_bytes_per_s,
        hdd_write_bytes_per_s=hdd.write_bytes_per_s,
        warm_overhead=st.warm_redundancy,
        hot_drives_per_node=int(d["storage_node_nvme_bays"]),
        warm_drives_per_node=int(d["storage_node_hdd_bays"]),
        hot_node_bytes_per_s=d["storage_node_nvme_write_bytes_per_s"],
        hot_node_read_bytes_per_s=d["storage_node_nvme_read_bytes_per_s"],
        local_nvme_bytes=r.server.local_nvme_bytes,
    )


def prices(r: Resolved) -> dict[str, float]:
    """Running-cost inputs in USD: electricity, PUE, cloud prices, depreciation, utilization."""
    c, d, acc = r.scenario.cost, r.defaults, r.accelerator
    to_usd = 1.0 / r.usd_to_currency
    return {
        "electricity_usd_per_kwh": c.electricity_per_kwh * to_usd
        if c.electricity_per_kwh is not None
        else electricity_usd_per_kwh(r),
        "pue": c.pue if c.pue is not None else d["pue"],
        "cloud_usd_per_card_hour": c.cloud_price_per_card_hour * to_usd
        if c.cloud_price_per_card_hour is not None
        else acc.cloud_price_usd_per_card_hour,
        "cloud_reserved_usd_per_card_hour": c.cloud_reserved_price_per_card_hour * to_usd
        if c.cloud_reserved_price_per_card_hour is not None
        else acc.cloud_reserved_usd_per_card_hour,
        "depreciation_years": c.depreciation_years
        if c.depreciation_years is not None
        else d["depreciation_years"],
        "utilization": c.utilization if c.utilization is not None else d["utilization"],
    }


def facility(r: Resolved, eq: Equipment, pr: dict[str, float]) -> Facility:
    """Unit powers and prices (USD) for the roll-up."""
    return Facility(
        card_tdp_w=r.accelerator.tdp_w,
        host_power_w=r.server.host_power_w,
        equipment=eq,
        pue=pr["pue"],
        running=RunningPrices(
            electricity_usd_per_kwh=pr["electricity_usd_per_kwh"],
            cloud_usd_per_card_hour=pr["cloud_usd_per_card_hour"],
            cloud_reserved_usd_per_card_hour=pr["cloud_reserved_usd_per_card_hour"],
            depreciation_years=pr["depreciation_years"],
            utilization=pr["utilization"],
            currency=r.scenario.cost.currency,
            usd_to_cny=r.usd_to_currency if r.scenario.cost.currency == "CNY" else None,
        ),
        spare_nodes=r.scenario.reliability.spare_nodes,
        **facility_fields(r),
    )


def vectorized_counts(
    r: Resolved, tokens: Any, state: dict[str, Any]
) -> Callable[[np.ndarray, np.ndarray, np.ndarray], Counts]:
    """Network and storage counts as arrays over card counts: the vectorized twins of plan._fabric and
    plan._storage (the batch path and budget sizing use them)."""
    s = r.scenario
    inputs = storage_inputs(r)
    vol = volumes(r.counts.total, tokens, r.arch.vocab_size, inputs)

    def counts_for(_cards: np.ndarray, nodes: np.ndarray, tokens_per_s: np.ndarray) -> Counts:
        net = s.network
        fab = fabric_counts(
            nodes * r.nics_per_node,
            net.switch_ports,
            net.oversubscription,
            r.nics_per_node,
            net.rail_optimized,
        )
        state["feasible"] = fab["feasible"]
        state["fabric_switches"] = fab["switches"]  # the training fabric's (plan.goodput's network failures)
        switches, xcvrs, links = fab["switches"], fab["transceivers"], fab["links"]
        fiber = fab["fiber_links"]
        if net.storage_network:
            fe = storage_fabric_counts(nodes, net.switch_ports)
            switches, xcvrs, links, fiber = (
                switches + fe["switches"],
                xcvrs + fe["transceivers"],
                links + fe["links"],
                fiber + fe["fiber_links"],
            )
        # a row without a time (no MFU, no layout) has no read demand: sized without it, as the
        # row carries no figures (NaN would reach an integer cast in drives_needed)
        tps = np.where(np.isfinite(tokens_per_s), tokens_per_s, 0.0)
        sc = storage_counts(vol, tps, inputs)
        state["hot_write_bytes_per_s"], state["hot_read_bytes_per_s"] = sc["write_cap"], sc["read_cap"]
        return Counts(
            switches=switches,
            transceivers=xcvrs,
            dac_cables=links - fiber,
            optical_cables=fiber,
            hot_drives=sc["hot_drives"],
            warm_drives=sc["warm_drives"],
            hot_nodes=sc["hot_nodes"],
            warm_nodes=sc["warm_nodes"],
        )

    return counts_for
