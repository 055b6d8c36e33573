"""Typed catalog entries. Units are SI base units: FLOP/s, bytes, bytes/s, watts, USD.

Every numeric figure in the data files carries its own `source` and `as_of`; the loader keeps
them in `sources` (field -> Source) so a report can cite each number.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Source:
    source: str  # document, data sheet, paper (with grade [A]/[B]/[C]/[U] where known)
    as_of: str  # "YYYY-MM" or "YYYY-MM-DD"
    range: tuple[float, float] | None = None  # where sources disagree: (low, high)
    note: str = ""  # which value is used and why


@dataclass(frozen=True)
class Accelerator:
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


@dataclass(frozen=True)
class Switch:
    id: str
    name: str
    ports: int  # at port_gbps
    port_gbps: float
    power_w: float  # typical, without optics
    price_usd: float
    sources: dict[str, Source] = field(default_factory=dict, compare=False, repr=False)


@dataclass(frozen=True)
class Transceiver:
    id: str
    name: str
    gbps: float
    power_w: float
    price_usd: float
    sources: dict[str, Source] = field(default_factory=dict, compare=False, repr=False)


@dataclass(frozen=True)
class Drive:
    id: str
    name: str
    kind: str  # "nvme" or "hdd"
    capacity_bytes: float
    read_bytes_per_s: float  # sequential
    write_bytes_per_s: float  # sequential
    power_w: float
    price_usd: float
    sources: dict[str, Source] = field(default_factory=dict, compare=False, repr=False)
