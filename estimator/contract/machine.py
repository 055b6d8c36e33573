"""The scenario's machine sections (docs/architecture.md#scenario-contract): the hardware (a
catalog accelerator or an inline one), how the cluster is sized, the parallel layout, the network
and the storage. Units as in the names: bytes, Gb/s (`gbps`), seconds, counts.
"""

from __future__ import annotations

from typing import Any, Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray
from pydantic import Field, model_validator

from estimator import limits
from estimator.catalog.entries import CHIP_FAMILIES, ChipFamily
from estimator.contract.fields import Int, Num, _pos, _Section


class InlineAccelerator(_Section):
    """A chip the catalog lacks. Units as in the catalog: FLOP/s, bytes, bytes/s, W, USD."""

    id: str = Field("custom", max_length=60)
    name: str = Field("Custom accelerator", max_length=120)
    vendor: str = Field("custom", max_length=60)
    peak_flops_bf16: Num = _pos(1e18)
    peak_flops_fp8: Num | None = Field(None, gt=0, le=1e18)
    peak_flops_fp32: Num | None = Field(None, gt=0, le=1e18)
    hbm_bytes: Num = _pos(1e14)
    hbm_bandwidth_bytes_per_s: Num = _pos(1e15)
    scaleup_link: str = Field("custom", max_length=60)
    scaleup_bandwidth_bytes_per_s: Num = Field(100e9, gt=0, le=1e15)
    scaleup_domain_cards: Int = Field(8, ge=1, le=limits.MAX_SCALEUP_DOMAIN)
    tdp_w: Num = Field(700, gt=0, le=100_000)
    price_usd: Num = Field(25_000, ge=0, le=1e9)
    cloud_price_usd_per_card_hour: Num = Field(2.5, ge=0, le=1e5)
    cloud_reserved_usd_per_card_hour: Num = Field(1.6, ge=0, le=1e5)
    matmul_efficiency: Num = Field(0.75, gt=0, le=1)
    default_server: str = Field("generic-8card", max_length=60)
    chip_family: ChipFamily = Field(
        description="The chip generation that sets attention-kernel efficiency (catalog.entries.CHIP_FAMILIES): "
        + ", ".join(CHIP_FAMILIES)
    )


class Hardware(_Section):
    accelerator: str | InlineAccelerator = "ascend-910b2"
    server: str | None = Field(None, max_length=60, description="Default: the accelerator's server")
    cards_per_node: Int | None = Field(
        None,
        ge=1,
        le=limits.MAX_SCALEUP_DOMAIN,
        description=(
            "Cards per node, overriding the server's: the node keeps the server's NICs per card and, "
            "unless the server is a supernode, its scale-up domain is the node's cards"
        ),
    )
    overrides: dict[str, Num] = Field(
        default_factory=dict, description="Single catalog fields of the accelerator"
    )


class Cluster(_Section):
    """How the cluster is sized: exactly one of a card count, a deadline, or a capital budget."""

    cards: Int | None = Field(None, ge=1, le=limits.MAX_CARDS)
    target_days: Num | None = Field(None, gt=0, le=3650)
    deadline_confidence: Num | None = Field(
        None,
        ge=0.5,
        le=0.99,
        description="With target_days: size the smallest round cluster whose chance of finishing in time, "
        "counting the MFU range (result.uncertainty.mfu_band) and, with failures on, the spread of the "
        "interruption count, is at least this (e.g. 0.9). Default: sized at the planned MFU",
    )
    # --- budget sizing (estimator/money/budget.py) ---
    budget: Num | None = Field(
        None,
        gt=0,
        le=1e14,
        description=(
            "Capital budget in cost.currency: the fastest of the clusters whose capex fits (the most it buys, "
            "estimator.money.budget, or a round size below that trains faster: estimator.plan.budget_choice)"
        ),
    )

    @model_validator(mode="after")
    def _exactly_one(self) -> Cluster:
        if sum(v is not None for v in (self.cards, self.target_days, self.budget)) != 1:
            raise ValueError(
                "give exactly one of cluster.cards (how long?), cluster.target_days (how many cards?) "
                "or cluster.budget (what does it buy?)"
            )
        return self


class Parallelism(_Section):
    tp: Int | None = Field(None, ge=1, le=4096)
    pp: Int | None = Field(None, ge=1, le=4096)
    dp: Int | None = Field(None, ge=1, le=limits.MAX_CARDS)
    ep: Int | None = Field(None, ge=1, le=limits.MAX_EXPERTS)
    cp: Int | None = Field(None, ge=1, le=1024)
    micro_batch_size: Int | None = Field(None, ge=1, le=4096)
    virtual_stages: Int | None = Field(None, ge=1, le=128)
    sequence_parallel: bool | None = None
    zero_stage: Int | None = Field(None, ge=0, le=3)
    recompute: Literal["none", "selective", "full", "partial"] | None = Field(
        None, description="partial: Megatron block recompute of the fewest layers per stage that fit in HBM"
    )
    distributed_optimizer: bool | None = None
    expert_tp: Int | None = Field(
        None,
        ge=1,
        le=1024,
        description="Expert tensor parallel size (Megatron-Core --expert-tensor-parallel-size, MoE parallel "
        "folding: EP is formed over TP x CP x DP ranks); searched over 1 and tp when absent",
    )
    first_stage_layers: Int | None = Field(
        None,
        ge=0,
        le=limits.MAX_LAYERS,
        description="Layers on the first pipeline device (Megatron --decoder-first-pipeline-num-layers); "
        "the devices without a fixed count share the rest evenly",
    )
    last_stage_layers: Int | None = Field(
        None,
        ge=0,
        le=limits.MAX_LAYERS,
        description="Layers on the last pipeline device (Megatron --decoder-last-pipeline-num-layers)",
    )

    def fixed(self) -> dict[str, Any]:
        return {k: v for k, v in self.model_dump().items() if v is not None}

    @property
    def replica_cards(self) -> int:
        """Cards one model replica of the fixed layout spans: tp·pp·cp (an unset degree counts 1)."""
        return (self.tp or 1) * (self.pp or 1) * (self.cp or 1)

    @property
    def layout_cards(self) -> int:
        """Product of the fixed degrees tp·pp·cp·dp (an unset degree counts 1); a card count."""
        return self.replica_cards * (self.dp or 1)

    @property
    def dp_fixed(self) -> bool:
        """Whether tp, pp and dp are all fixed, so the layout must use exactly `layout_cards` cards."""
        return self.tp is not None and self.pp is not None and self.dp is not None

    def fits_cards(self, cards: ArrayLike) -> NDArray[np.bool_]:
        """The contract's one rule for a fixed layout on `cards` cards (vectorized over `cards`):
        with tp, pp and dp all fixed, tp·pp·cp·dp must equal the cards; otherwise the product of the
        fixed degrees must divide them (each of the cards / product replicas is a DP rank)."""
        c = np.asarray(cards, dtype=np.int64)
        prod = self.layout_cards
        if self.dp_fixed:
            return np.asarray(c == prod)
        return np.asarray((c >= prod) & (c % prod == 0))


class Network(_Section):
    switch: str | None = Field(None, max_length=60, description="Catalog switch id; default by port speed")
    switch_ports: Int = Field(64, ge=4, le=4096)
    port_gbps: Num | None = Field(None, gt=0, le=100_000, description="Default: the NIC speed")
    oversubscription: Num = Field(1.0, ge=1, le=64, description="Leaf down:up ratio")
    rail_optimized: bool = True
    nics_per_node: Int | None = Field(None, ge=1, le=64)
    nic_gbps: Num | None = Field(None, gt=0, le=100_000)
    storage_network: bool = False
    hccl_buffsize_mb: Int | None = Field(
        None, ge=1, le=65536, description="HCCL_BUFFSIZE / NCCL buffer per communicator (MB); default 256"
    )


class Storage(_Section):
    checkpoint_interval_s: Num | None = Field(
        None,
        gt=0,
        le=1e7,
        description=(
            "Compute seconds between checkpoints, as reliability.checkpoint_interval_s (give one of "
            "the two); default Daly's optimum, the warm tier then archiving one checkpoint an hour"
        ),
    )
    checkpoint_write_s: Num = Field(120, gt=0, le=1e6)
    checkpoints_kept: Int = Field(5, ge=1, le=10_000)
    checkpoint_bytes_per_param: Num = Field(12, gt=0, le=64, description="fp32 master + Adam m, v = 12")
    raw_bytes_per_token: Num = Field(4, gt=0, le=1000)
    warm_redundancy: Num = Field(
        1.25, ge=1, le=10, description="8+2 erasure coding = 1.25; 3x replication = 3"
    )
    archive_checkpoints: Int = Field(10, ge=0, le=100_000)
