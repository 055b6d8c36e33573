"""Typed catalog entries. Units are SI base units: FLOP/s, bytes, bytes/s, watts, USD.

Every numeric figure in the data files carries its own `source` and `as_of`; the loader keeps
them in `sources` (field -> Source) so a report can cite each number.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, get_args


@dataclass(frozen=True)
class Source:
    """Where a catalog figure comes from and when it was read (`range` where sources disagree)."""

    source: str  # document, data sheet, paper (with grade [A]/[B]/[C]/[U] where known)
    as_of: str  # "YYYY-MM" or "YYYY-MM-DD"
    range: tuple[float, float] | None = None  # where sources disagree: (low, high)
    note: str = ""  # which value is used and why


# Chip generations an attention-kernel efficiency is known for (estimator.layout.steptime.attention):
# NVIDIA Ampere (A100), Hopper (H100/H800/H200), Blackwell (B200/GB200), AMD CDNA3 (MI300X), and the
# Huawei Ascend generations (910B = Ascend A2, 910C = A3, 310P inference), whose fused attention
# runs on the GEMM cube units. Catalog data on every accelerator; required for an inline one.
ChipFamily = Literal["ampere", "hopper", "blackwell", "cdna3", "ascend-910b", "ascend-910c", "ascend-310p"]
CHIP_FAMILIES: tuple[str, ...] = get_args(ChipFamily)
ASCEND_FAMILIES = frozenset({"ascend-910b", "ascend-910c", "ascend-310p"})


@dataclass(frozen=True)
class Accelerator:
    """One accelerator (GPU/NPU) of accelerators.toml: peak FLOP/s, HBM, scale-up link, power, prices."""

    id: str
    name: str
    vendor: str
    peak_flops_bf16: float  # dense BF16/FP16 FLOP/s
    peak_flops_fp8: float | None  # dense FP8 FLOP/s, None where the chip has none
    peak_flops_fp32: float | None
    hbm_bytes: float
    hbm_bandwidth_bytes_per_s: float
    scaleup_link: str  # "HCCS", "NVLink4", "Infinity Fabric", "PCIe"
    scaleup_bandwidth_bytes_per_s: float  # per card, per direction
    scaleup_domain_cards: int  # cards in one HCCS/NVLink domain (8 for a node, 384 for CloudMatrix)
    tdp_w: float
    price_usd: float  # purchase price per card
    cloud_price_usd_per_card_hour: float  # on-demand
    cloud_reserved_usd_per_card_hour: float
    matmul_efficiency: float  # achievable fraction of peak on large BF16 GEMMs (physical parameter)
    default_server: str
    chip_family: str  # one of CHIP_FAMILIES: the generation that sets attention-kernel efficiency
    sources: dict[str, Source] = field(default_factory=dict, compare=False, repr=False)

    def peak_flops(self, precision: str) -> float:
        """Dense peak FLOP/s for a training precision ("bf16", "fp16", "fp8", "fp32")."""
        if precision == "fp8" and self.peak_flops_fp8:
            return self.peak_flops_fp8
        if precision == "fp32" and self.peak_flops_fp32:
            return self.peak_flops_fp32
        return self.peak_flops_bf16


@dataclass(frozen=True)
class Server:
    """One server (node) of servers.toml: its accelerator, cards and NICs per node, host power, price."""

    id: str
    name: str
    accelerator: str  # default accelerator id
    cards_per_node: int
    nics_per_node: int  # scale-out (compute fabric) NIC ports
    nic_gbps: float  # per NIC port
    host_power_w: float  # everything but the accelerators: CPUs, DRAM, NICs, fans (at load)
    price_usd: float  # complete server including its accelerators
    local_nvme_bytes: float  # local data/cache NVMe
    scaleup_domain_cards: int  # HCCS/NVLink domain seen from this server (8, 72, 384)
    sources: dict[str, Source] = field(default_factory=dict, compare=False, repr=False)
    # server without its accelerators (CPUs, DRAM, NICs, chassis); with a non-default accelerator
    # a node costs chassis_price_usd + cards_per_node * accelerator.price_usd
    chassis_price_usd: float = 0.0
    supernode: str = ""  # id in supernodes.toml of the unit this node is built into ("" = none)
    # link layer of the compute-fabric NICs: "infiniband" or "ethernet" (RoCE); "" = either (a
    # generic server); the default scale-out switch is one of it (money.pricing.default_switch)
    scaleout_fabric: str = ""


@dataclass(frozen=True)
class Switch:
    """One fabric switch of switches.toml: ports at port_gbps, power without optics, price."""

    id: str
    name: str
    vendor: str
    fabric: str  # link layer: "infiniband" or "ethernet"
    ports: int  # at port_gbps
    port_gbps: float
    power_w: float  # typical, without optics
    price_usd: float
    sources: dict[str, Source] = field(default_factory=dict, compare=False, repr=False)


@dataclass(frozen=True)
class Transceiver:
    """One optical transceiver of transceivers.toml: Gb/s, power, price."""

    id: str
    name: str
    gbps: float
    power_w: float
    price_usd: float
    sources: dict[str, Source] = field(default_factory=dict, compare=False, repr=False)


@dataclass(frozen=True)
class Drive:
    """One storage drive of drives.toml: kind, capacity, sequential read/write bytes/s, power, price."""

    id: str
    name: str
    kind: str  # "nvme" or "hdd"
    capacity_bytes: float
    read_bytes_per_s: float  # sequential
    write_bytes_per_s: float  # sequential
    power_w: float
    price_usd: float
    sources: dict[str, Source] = field(default_factory=dict, compare=False, repr=False)


@dataclass(frozen=True)
class Supernode:
    """A scale-up unit bought whole: its nodes, its scale-up (HCCS/UB/NVLink) plane and its racks.

    The classic 8-card server is the degenerate case: one node, its switches (if any) on the
    baseboard, nothing outside the node. Counts are per supernode; ports in Gbit/s per direction;
    power in W (nameplate); prices in USD. Node-side switch chips (`node_switch_chips_per_node`) are
    inside the server's price and host power; `rack_switches` are separate switch units (CloudMatrix's
    L2 UB switches, NVL72's NVLink switch trays) priced and powered here.
    """

    id: str
    name: str
    vendor: str
    accelerator: str  # accelerator id
    server: str  # node (tray) id
    scaleup_link: str  # "UB", "NVLink5", "NVLink4", "HCCS"
    scaleup_medium: str  # "optics" (2 pluggable modules a link), "copper" (cables) or "board" (traces)
    cooling: str  # "liquid", "hybrid" (liquid cold plates + air) or "air"
    cards: int  # accelerators per supernode
    nodes: int  # nodes (servers, compute trays) per supernode
    cpus: int  # host CPUs per supernode
    compute_racks: float  # racks holding the nodes; < 1 when several nodes share a rack
    network_racks: int  # racks holding only scale-up switches (CloudMatrix's 4 bus racks)
    node_switch_chips_per_node: int  # tier-1 scale-up switch chips inside each node (L1 UB, NVSwitch)
    rack_switches: int  # scale-up switch units outside the nodes (L2 UB switches, NVLink switch trays)
    switch_chips_per_rack_switch: int
    rack_switch_power_w: float
    rack_switch_price_usd: float
    scaleup_ports_per_node: int  # scale-up ports leaving each node (0 for a baseboard-only domain)
    scaleup_port_gbps: float  # per port, per direction
    cables_per_link: int  # copper: cables (twinax bundles) per port; optics: fibres per port
    scaleup_cable_price_usd: float  # per cable
    transceiver_power_w: float  # per scale-up pluggable module (optics only)
    transceiver_price_usd: float
    frontend_ports_per_node: int  # separate VPC / storage plane ports per node (0 = none of its own)
    frontend_port_gbps: float
    system_power_w: float | None  # published power of one supernode (None: not published)
    price_usd: float  # one supernode, all in (nodes + scale-up plane), as published or estimated
    sources: dict[str, Source] = field(default_factory=dict, compare=False, repr=False)
