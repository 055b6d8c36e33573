"""plan(scenario) -> the contract's result: composes model, compute, layout, network, storage,
power, cost, uncertainty, serving and advice (docs/architecture.md#data-flow).

The order matters: the cluster size decides the fabric, the fabric's cross-leaf bandwidth feeds
the layout's data-parallel time, the layout predicts the MFU when the user gave none, and the MFU
(given or predicted) decides time, and from it power and cost. When only a deadline is given and
no MFU, cards and predicted MFU are iterated to a fixed point.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from . import ENGINE_VERSION, catalog
from .compute import MFU_PLAUSIBLE_MAX as MAX_PLAUSIBLE_MFU
from .compute import MFU_PLAUSIBLE_MIN as MIN_PLAUSIBLE_MFU
from .compute import SECONDS_PER_DAY, cards_for_deadline
from .errors import ScenarioError
from .jsonio import to_jsonable
from .layout import LayoutEval, LayoutProblem, LayoutSearch, search
from .layout_batch import best_layouts
from .limits import MAX_CARDS
from .memory import Buffers
from .models import flops_per_token_terms
from .network import Fabric, design_fabric
from .resolve import Resolved, normalized, resolve
from .rollup import Counts, Facility, Sizing, rollup
from .scenario import validate_shape
from .sections import assemble
from .stacks import StackProfile, resolve_stack
from .storage import Storage, design_storage
from .supernode import cards_quantum, facility_fields

HOT_DRIVE = "nvme-15.36tb"  # catalog drives used for the hot (PFS) and warm (HDD) tiers
WARM_DRIVE = "hdd-24tb"
FALLBACK_MFU = 0.35  # used only when no layout fits and the user gave no MFU; flagged in warnings
MAX_SIZING_EVALS = 40  # layout searches a deadline sizing may run


@dataclass(frozen=True)
class ClusterChoice:
    cards: int
    mfu: float
    mfu_source: str  # "given", "predicted" or "fallback"
    fabric: Fabric
    layouts: LayoutSearch


def model_flops(r: Resolved) -> dict[str, float]:
    """FLOPs per token: 6·N_active (Kaplan 2020) + PaLM's 12·L·s·d_attn when the architecture is known."""
    dense, attention = flops_per_token_terms(r.arch, r.seq_len, r.counts)
    use_attention = r.scenario.training.attention_flops and r.exact_architecture
    per_token = dense + (attention if use_attention else 0.0)
    return {
        "flop_per_token": float(per_token),
        "flop_per_token_6n": float(dense),
        "flop_per_token_attention": float(attention) if use_attention else 0.0,
        "training_flop": float(per_token * r.scenario.training.tokens),
    }


def _fabric(r: Resolved, cards: int) -> Fabric:
    net = r.scenario.network
    nodes = -(-cards // r.cards_per_node)
    return design_fabric(
        endpoints=nodes * r.nics_per_node,
        switch_ports=net.switch_ports,
        oversubscription=net.oversubscription,
        rail_optimized=net.rail_optimized,
        nics_per_node=r.nics_per_node,
        port_gbps=net.port_gbps or r.nic_gbps,
        frontend=net.storage_network,
    )


def layout_problem(r: Resolved, cards: int, fabric: Fabric) -> LayoutProblem:
    """The layout search's input for this scenario at `cards` on `fabric`."""
    t, net = r.scenario.training, r.scenario.network
    nic_bytes_per_s_per_card = r.nics_per_node * r.nic_gbps * 1e9 / 8 / r.cards_per_node
    buffers = Buffers()
    if net.hccl_buffsize_mb is not None:
        buffers = dataclasses.replace(buffers, comm_buffer_bytes=net.hccl_buffsize_mb * 1024 * 1024)
    return LayoutProblem(
        arch=r.arch,
        counts=r.counts,
        seq_len=r.seq_len,
        global_batch_tokens=t.global_batch_tokens,
        precision=t.precision,
        cards=cards,
        accelerator=r.accelerator,
        cards_per_node=r.cards_per_node,
        scaleup_domain_cards=scaleup_domain(r),
        nic_bytes_per_s_per_card=nic_bytes_per_s_per_card,
        cross_leaf_bandwidth_factor=fabric.cross_leaf_bandwidth_factor,
        nodes_per_leaf_group=fabric.nodes_per_leaf_group,
        grad_dtype=t.grad_dtype,
        stack=resolved_stack(r),
        moe_imbalance=t.moe_imbalance,
        buffers=buffers,
        fixed=r.scenario.parallelism.fixed(),
        model_flop_per_token=model_flops(r)["flop_per_token"],
    )


def resolved_stack(r: Resolved) -> StackProfile:
    """The scenario's software stack with its overrides (training.flash_attention false = unfused)."""
    t = r.scenario.training
    overrides = dict(t.stack_overrides)
    if t.flash_attention is False:
        overrides.setdefault("attention_kernel", "unfused")
    return resolve_stack(t.stack, r.accelerator.vendor, overrides)


def scaleup_domain(r: Resolved) -> int:
    """Cards on one HCCS/NVLink domain: the server's (8 for a node, 384 for a CloudMatrix
    supernode), never more than the accelerator supports."""
    return r.scaleup_domain_cards


def _layouts(r: Resolved, cards: int, fabric: Fabric) -> LayoutSearch:
    return search(layout_problem(r, cards, fabric))


def _evaluate(r: Resolved, cards: int) -> tuple[Fabric, LayoutSearch]:
    fabric = _fabric(r, cards)
    return fabric, _layouts(r, cards, fabric)


def cards_multiple(r: Resolved) -> int:
    """Cards come in whole units (nodes, or supernodes where the accelerator lives in one) and whole
    model replicas: lcm(cards per unit, fixed tp·pp·cp)."""
    replica = r.scenario.parallelism.replica_cards
    return math.lcm(cards_quantum(r), replica)


def choose_cluster(r: Resolved, training_flop: float, peak: float) -> ClusterChoice:
    """Cards, MFU and layout: the given cards; or, for a deadline with an MFU given, the fewest whole
    nodes (and whole replicas of a fixed layout) that meet it; without an MFU, the smallest round
    cluster size (see candidate_sizes) whose best layout's predicted MFU meets it."""
    s = r.scenario
    given_mfu = s.efficiency.mfu
    if s.cluster.cards is not None:
        cards = s.cluster.cards
        fabric, found = _evaluate(r, cards)
        return _choice(cards, fabric, found, given_mfu)
    if s.cluster.budget is not None:  # --- budget sizing hook: the rule is in estimator/budget.py ---
        from .budget import cards_for_budget

        cards = cards_for_budget(r, cards_multiple(r), given_mfu)
        return _choice(cards, *_evaluate(r, cards), given_mfu)
    seconds = s.cluster.target_days * SECONDS_PER_DAY
    multiple = cards_multiple(r)

    def need(mfu: float) -> int:
        return int(cards_for_deadline(training_flop, seconds, peak, mfu, multiple))

    if given_mfu is not None:
        cards = need(given_mfu)
        return _choice(cards, *_evaluate(r, cards), given_mfu)

    sizes = candidate_sizes(r, multiple)
    cards, fabric, _ = size_for_deadline(r, sizes, need, SizeMemo(r))
    return _choice(cards, fabric, _layouts(r, cards, fabric), None)


class SizeMemo:
    """Best layouts of one resolved scenario at many cluster sizes, computed in batches
    (layout_batch.best_layouts: one vectorized search for all of them) and remembered, so deadline
    sizing costs about one search and a sweep's rows share what they ask for."""

    def __init__(self, r: Resolved, reuse: bool = False):
        self.r = r
        self.reuse = reuse  # layout_batch.best_layouts' reuse (sweeps)
        self._fabrics: dict[int, Fabric | None] = {}  # None: the fabric cannot be built
        self._problems: dict[int, LayoutProblem] = {}
        self._best: dict[int, LayoutEval | None] = {}

    def fabric(self, cards: int) -> Fabric | None:
        """The fabric of `cards`, or None where design_fabric (or the layout problem) refuses it."""
        if cards not in self._fabrics:
            try:
                fabric = _fabric(self.r, cards)
                self._problems[cards] = self._problem(cards, fabric)
            except ScenarioError:
                fabric = None
            self._fabrics[cards] = fabric
        return self._fabrics[cards]

    def built(self, cards: int) -> Fabric:
        """The fabric `fabric(cards)` built (KeyError if it could not be)."""
        fabric = self._fabrics[cards]
        if fabric is None:
            raise KeyError(cards)
        return fabric

    def _problem(self, cards: int, fabric: Fabric) -> LayoutProblem:
        """layout_problem(r, cards, fabric): the first built in full, the others by replacing what
        the size decides (the rest resolves the stack and the model's FLOPs again otherwise)."""
        if not self._problems:
            return layout_problem(self.r, cards, fabric)
        return dataclasses.replace(
            next(iter(self._problems.values())),
            cards=cards,
            cross_leaf_bandwidth_factor=fabric.cross_leaf_bandwidth_factor,
            nodes_per_leaf_group=fabric.nodes_per_leaf_group,
        )

    def best(self, cards_list: list[int]) -> list[LayoutEval | None]:
        """Best layouts at these sizes (each with a fabric), one batch for all not yet known."""
        todo = [c for c in dict.fromkeys(cards_list) if c not in self._best]
        for c, best in zip(todo, best_layouts([self._problems[c] for c in todo], self.reuse), strict=True):
            self._best[c] = best
        return [self._best[c] for c in cards_list]


SIZING_BLOCK = 8  # sizes evaluated together while scanning for a deadline


def size_for_deadline(
    r: Resolved, sizes: npt.NDArray[np.int64], need: Callable[[float], int], memo: SizeMemo
) -> tuple[int, Fabric, LayoutEval | None]:
    """The smallest round cluster size whose best layout's predicted MFU meets the deadline:
    (cards, fabric, best layout). need(mfu) -> cards the deadline needs at that MFU.

    Scan the round sizes upward from what a record MFU would need and keep the first whose best
    layout meets the deadline. MFU is jagged in the card count (its factors decide which tp·pp·dp
    splits exist), so a bisection can stop at a lucky neighbour. Past the global batch's critical
    size more cards lower the MFU (fewer micro-batches per DP rank, a larger bubble): the scan ends
    at a typical-worst MFU (or after MAX_SIZING_EVALS sizes, or where the fabric cannot grow) and
    keeps the size of highest throughput (the deadline is then missed). The sizes are searched
    SIZING_BLOCK at a time in one vectorized pass (layout_batch.best_layouts)."""
    first = min(int(np.searchsorted(sizes, need(MAX_PLAUSIBLE_MFU))), len(sizes) - 1)
    last = need(MIN_PLAUSIBLE_MFU)
    scan: list[int] = []  # the sizes the scan visits, in order, with a fabric
    for i in range(first, len(sizes)):
        cards = int(sizes[i])
        if (cards > last and scan) or len(scan) >= MAX_SIZING_EVALS:
            break
        if memo.fabric(cards) is None:
            if scan:
                break  # the fabric cannot grow that far
            continue
        scan.append(cards)
    tried: dict[int, LayoutEval | None] = {}
    for start in range(0, len(scan), SIZING_BLOCK):
        block = scan[start : start + SIZING_BLOCK]
        for cards, best in zip(block, memo.best(block), strict=True):
            tried[cards] = best
            if best is not None and need(float(best.predicted_mfu)) <= cards:
                return cards, memo.built(cards), best
    if not tried:
        cards = int(sizes[first])
        fabric, found = _evaluate(r, cards)  # raises the fabric's own error
        return cards, fabric, found.best

    def throughput(cards: int) -> float:
        best = tried[cards]
        return cards * best.predicted_mfu if best is not None else 0.0

    cards = max(tried, key=throughput)
    return cards, memo.built(cards), tried[cards]


def candidate_sizes(r: Resolved, multiple: int) -> np.ndarray:
    """Card counts the deadline sizing considers: whole replicas of nodes, with node counts of the
    form 2^a·3^b·5^c (consecutive ones at most ~8% apart above 100 nodes). Counts with a large prime
    factor admit no efficient tp·pp·dp split of the batch, so real clusters are not sized that way."""
    per_node = r.cards_per_node
    nodes = _SMOOTH[_SMOOTH * per_node <= MAX_CARDS]
    cards = nodes * per_node
    return np.unique(-(-cards // multiple) * multiple)


def _smooth_numbers(limit: int) -> np.ndarray:
    out = []
    a = 1
    while a <= limit:
        b = a
        while b <= limit:
            c = b
            while c <= limit:
                out.append(c)
                c *= 5
            b *= 3
        a *= 2
    return np.array(sorted(out), dtype=np.int64)


_SMOOTH = _smooth_numbers(MAX_CARDS)


def _choice(cards: int, fabric: Fabric, found: LayoutSearch, given_mfu: float | None) -> ClusterChoice:
    if given_mfu is not None:
        return ClusterChoice(cards, given_mfu, "given", fabric, found)
    if found.best is not None:
        return ClusterChoice(cards, float(found.best.predicted_mfu), "predicted", fabric, found)
    return ClusterChoice(cards, FALLBACK_MFU, "fallback", fabric, found)


def _storage(r: Resolved, nodes: int, tokens_per_s: float) -> Storage:
    st, d = r.scenario.storage, r.defaults
    nvme, hdd = catalog.drive(HOT_DRIVE), catalog.drive(WARM_DRIVE)
    return design_storage(
        params_total=r.counts.total,
        tokens=r.scenario.training.tokens,
        vocab_size=r.arch.vocab_size,
        tokens_per_s=tokens_per_s,
        nodes=nodes,
        checkpoint_interval_s=st.checkpoint_interval_s,
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
        local_nvme_bytes=r.server.local_nvme_bytes,
    )


def _pick_by_speed(entries: dict[str, Any], gbps: float, attr: str) -> Any:
    """The catalog entry whose speed equals `gbps`, else the slowest one that is faster, else the fastest."""
    ranked = sorted(entries.values(), key=lambda e: getattr(e, attr))
    for e in ranked:
        if getattr(e, attr) >= gbps:
            return e
    return ranked[-1]


@dataclass(frozen=True)
class Equipment:
    """Unit prices (USD) and powers (W) of what the bill counts, with where each came from."""

    server_price_usd: float
    switch_price_usd: float
    switch_power_w: float
    transceiver_price_usd: float
    transceiver_power_w: float
    dac_cable_price_usd: float
    fiber_cable_price_usd: float
    nvme_price_usd: float
    hdd_price_usd: float
    hot_node_price_usd: float
    warm_node_price_usd: float
    storage_node_power_w: float
    sources: dict[str, str]


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
        matching = {k: v for k, v in catalog.switches().items() if v.port_gbps == port_gbps}
        sw = _pick_by_speed(matching or catalog.switches(), port_gbps, "port_gbps")
        if matching:
            same_radix = [v for v in matching.values() if v.ports == s.network.switch_ports]
            sw = same_radix[0] if same_radix else sw
    # A switch of another radix or speed is priced by its capacity (ports x Gb/s), an assumption.
    capacity_ratio = (s.network.switch_ports * port_gbps) / (sw.ports * sw.port_gbps)
    xcvr = _pick_by_speed(catalog.transceivers(), port_gbps, "gbps")
    nvme, hdd = catalog.drive(HOT_DRIVE), catalog.drive(WARM_DRIVE)
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
            if s.cost.server_price is None
            else "scenario cost.server_price",
            "switch": sw.name
            + ("" if capacity_ratio == 1 else f", priced x{capacity_ratio:.2f} by capacity"),
            "transceiver": xcvr.name,
            "hot drive": nvme.name,
            "warm drive": hdd.name,
        },
    )


def prices(r: Resolved) -> dict[str, float]:
    """Running-cost inputs in USD: electricity, PUE, cloud prices, depreciation, utilization."""
    c, d, acc = r.scenario.cost, r.defaults, r.accelerator
    to_usd = 1.0 / r.usd_to_currency
    return {
        "electricity_usd_per_kwh": c.electricity_per_kwh * to_usd
        if c.electricity_per_kwh is not None
        else d["electricity_usd_per_kwh"],
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


def _counts_from_designs(fabric: Fabric, storage: Storage) -> Counts:
    parts = [fabric] + ([fabric.frontend] if fabric.frontend else [])
    return Counts(
        switches=sum(f.total_switches for f in parts),
        transceivers=sum(f.transceivers for f in parts),
        dac_cables=sum(f.dac_cables for f in parts),
        optical_cables=sum(f.fiber_cables + f.aoc_cables for f in parts),
        hot_drives=storage.hot.drives,
        warm_drives=storage.warm.drives,
        hot_nodes=storage.hot.nodes,
        warm_nodes=storage.warm.nodes,
    )


def facility(r: Resolved, eq: Equipment, pr: dict[str, float]) -> Facility:
    """Unit powers and prices (USD) for the roll-up."""
    return Facility(
        card_tdp_w=r.accelerator.tdp_w,
        host_power_w=r.server.host_power_w,
        server_price_usd=eq.server_price_usd,
        switch_power_w=eq.switch_power_w,
        switch_price_usd=eq.switch_price_usd,
        transceiver_power_w=eq.transceiver_power_w,
        transceiver_price_usd=eq.transceiver_price_usd,
        dac_cable_price_usd=eq.dac_cable_price_usd,
        fiber_cable_price_usd=eq.fiber_cable_price_usd,
        nvme_price_usd=eq.nvme_price_usd,
        hdd_price_usd=eq.hdd_price_usd,
        hot_node_price_usd=eq.hot_node_price_usd,
        warm_node_price_usd=eq.warm_node_price_usd,
        storage_node_power_w=eq.storage_node_power_w,
        pue=pr["pue"],
        electricity_usd_per_kwh=pr["electricity_usd_per_kwh"],
        cloud_usd_per_card_hour=pr["cloud_usd_per_card_hour"],
        cloud_reserved_usd_per_card_hour=pr["cloud_reserved_usd_per_card_hour"],
        depreciation_years=pr["depreciation_years"],
        utilization=pr["utilization"],
        currency=r.scenario.cost.currency,
        usd_to_cny=r.usd_to_currency if r.scenario.cost.currency == "CNY" else None,
        **facility_fields(r),
    )


def estimate(data: Any) -> dict[str, Any]:
    """Validate a scenario dict and plan it: {scenario (normalized), result, engine_version, catalog_version}.

    Raises ScenarioError (field path + sentence) for anything wrong with the input.
    """
    scenario = validate_shape(data)
    resolved = resolve(scenario)
    result = build_result(resolved)
    return {
        "scenario": normalized(resolved),
        "result": to_jsonable(result),
        "engine_version": ENGINE_VERSION,
        "catalog_version": catalog.CATALOG_VERSION,
    }


def build_result(r: Resolved) -> dict[str, Any]:
    """The result sections of the contract (docs/architecture.md#scenario-contract) for a resolved scenario."""
    s = r.scenario
    flops = model_flops(r)
    peak = r.accelerator.peak_flops(s.training.precision)
    choice = choose_cluster(r, flops["training_flop"], peak)
    nodes = -(-choice.cards // r.cards_per_node)
    tokens_per_s = choice.cards * peak * choice.mfu / flops["flop_per_token"]
    storage = _storage(r, nodes, tokens_per_s)
    eq, pr = equipment(r), prices(r)
    counts = _counts_from_designs(choice.fabric, storage)
    roll = rollup(
        Sizing(
            training_flop=flops["training_flop"],
            tokens=s.training.tokens,
            peak_flops=peak,
            mfu=choice.mfu,
            cards_per_node=r.cards_per_node,
            cards=choice.cards,
        ),
        lambda cards, nodes_, tps: counts,
        facility(r, eq, pr),
    )
    problem = layout_problem(r, choice.cards, choice.fabric)
    return assemble(r, flops, peak, choice, storage, eq, pr, roll, problem, cards_multiple(r))
