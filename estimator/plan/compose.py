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
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from estimator import ENGINE_VERSION, catalog
from estimator.cluster.network import Fabric, Frontend, design_fabric
from estimator.cluster.storage import Storage, design_storage
from estimator.cluster.supernode import cards_quantum
from estimator.contract.price_book import PriceBook
from estimator.contract.resolve import Resolved, normalized, resolve
from estimator.contract.scenario import Cluster, validate_shape
from estimator.errors import ScenarioError
from estimator.jsonio import to_jsonable
from estimator.layout.batch_search import any_fits, best_layouts
from estimator.layout.memory import Buffers
from estimator.layout.search import LayoutEval, LayoutProblem, LayoutSearch, search
from estimator.layout.stacks import StackProfile, resolve_stack
from estimator.layout.steptime import LINK_EFFICIENCY
from estimator.limits import MAX_CARDS
from estimator.model.compute import MFU_PLAUSIBLE_MAX as MAX_PLAUSIBLE_MFU
from estimator.model.compute import MFU_PLAUSIBLE_MIN as MIN_PLAUSIBLE_MFU
from estimator.model.compute import SECONDS_PER_DAY
from estimator.money.budget import cards_for_budget
from estimator.money.pricing import equipment, facility, model_flops, prices, storage_inputs
from estimator.money.rollup import Counts, Sizing, rollup
from estimator.plan import goodput
from estimator.plan.goodput import cards_for_deadline_with_failures
from estimator.plan.pilot import calibrated, fit_pilot, section
from estimator.plan.refusal import refusal
from estimator.plan.sections import assemble

MAX_SIZING_EVALS = 40  # layout searches a deadline sizing may run


@dataclass(frozen=True)
class ClusterChoice:
    cards: int
    mfu: float
    mfu_source: str  # "given" or "predicted"
    fabric: Fabric
    layouts: LayoutSearch


def fabric_for(r: Resolved, cards: int) -> Fabric:
    """The network fabric `design_fabric` builds for `cards` of this scenario."""
    net = r.scenario.network
    nodes = -(-cards // r.cards_per_node)
    return design_fabric(
        endpoints=nodes * r.nics_per_node,
        switch_ports=net.switch_ports,
        oversubscription=net.oversubscription,
        rail_optimized=net.rail_optimized,
        nics_per_node=r.nics_per_node,
        port_gbps=net.port_gbps or r.nic_gbps,
        frontend=Frontend() if net.storage_network else None,
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
        compute_factor=r.compute_factor,
        link_efficiency=LINK_EFFICIENCY * r.comm_factor,
    )


def resolved_stack(r: Resolved) -> StackProfile:
    """The scenario's software stack with its overrides (training.flash_attention false = unfused)."""
    t = r.scenario.training
    overrides = dict(t.stack_overrides)
    if t.flash_attention is False:
        overrides.setdefault("attention_kernel", "unfused")
    fp8_hardware = bool(r.accelerator.peak_flops_fp8)
    return resolve_stack(t.stack, r.accelerator.vendor, overrides, r.arch.is_moe, fp8_hardware)


def scaleup_domain(r: Resolved) -> int:
    """Cards on one HCCS/NVLink domain: the server's (8 for a node, 384 for a CloudMatrix
    supernode), never more than the accelerator supports."""
    return r.scaleup_domain_cards


def _layouts(r: Resolved, cards: int, fabric: Fabric) -> LayoutSearch:
    return search(layout_problem(r, cards, fabric))


def _evaluate(r: Resolved, cards: int) -> tuple[Fabric, LayoutSearch]:
    fabric = fabric_for(r, cards)
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
        return _choice(r, cards, fabric, found, given_mfu)
    if s.cluster.budget is not None:  # --- budget sizing hook: the rule is in estimator/money/budget.py ---
        cards = cards_for_budget(r, cards_multiple(r), given_mfu)
        return _choice(r, cards, *_evaluate(r, cards), given_mfu)
    assert s.cluster.target_days is not None  # the scenario requires one way of sizing
    seconds = s.cluster.target_days * SECONDS_PER_DAY
    multiple = cards_multiple(r)

    def need(mfu: npt.ArrayLike) -> npt.NDArray[np.int64]:  # with failures (plan.goodput)
        return cards_for_deadline_with_failures(r, training_flop, seconds, peak, mfu, multiple)

    if given_mfu is not None:
        cards = int(need(given_mfu))
        return _choice(r, cards, *_evaluate(r, cards), given_mfu)

    sizes = candidate_sizes(r, multiple)
    cards, fabric, _ = size_for_deadline(r, sizes, need, SizeMemo(r), goodput.ettr_at(r))
    return _choice(r, cards, fabric, _layouts(r, cards, fabric), None)


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
                fabric = fabric_for(self.r, cards)
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

    def fits(self, cards_list: list[int]) -> list[bool]:
        """Whether any layout fits at these sizes (each with a fabric): best(...) is not None,
        from memory alone (layout_batch.any_fits)."""
        known = {c: self._best[c] is not None for c in cards_list if c in self._best}
        todo = [c for c in dict.fromkeys(cards_list) if c not in known]
        known.update(zip(todo, any_fits([self._problems[c] for c in todo], self.reuse), strict=True))
        return [known[c] for c in cards_list]


SIZING_BLOCK = 8  # sizes evaluated together first while scanning for a deadline (then 16, 32, ...)


def size_for_deadline(
    r: Resolved,
    sizes: npt.NDArray[np.int64],
    need: Callable[[npt.NDArray[np.float64]], npt.NDArray[np.int64]],
    memo: SizeMemo,
    ettr: Callable[[npt.NDArray[np.int64], npt.NDArray[np.float64]], npt.NDArray[np.float64]] | None = None,
) -> tuple[int, Fabric, LayoutEval | None]:
    """The smallest round cluster size whose best layout's predicted MFU meets the deadline:
    (cards, fabric, best layout). need(mfus) -> cards the deadline needs at each MFU (an array in,
    an array out: one vectorized fixed point per block of sizes, not one per size).

    Scan the round sizes upward from what a record MFU would need and keep the first whose best
    layout meets the deadline. MFU is jagged in the card count (its factors decide which tp·pp·dp
    splits exist), so a bisection can stop at a lucky neighbour. Past the global batch's critical
    size more cards lower the MFU (fewer micro-batches per DP rank, a larger bubble): the scan ends
    at a typical-worst MFU (or after MAX_SIZING_EVALS sizes, or where the fabric cannot grow) and
    keeps the size of highest throughput, failures counted when `ettr(cards, mfu)` (arrays) gives the
    share of wall time that trains (plan.goodput.ettr_at; the deadline is then missed). The sizes are searched
    in blocks, SIZING_BLOCK first and each next block twice as wide (one vectorized pass each,
    layout_batch.best_layouts: a pass's fixed cost is most of a small block's), so a long scan
    costs few passes and a short one little more than its sizes; the first size that meets wins
    whatever the blocks."""
    bounds = need(np.array([MAX_PLAUSIBLE_MFU, MIN_PLAUSIBLE_MFU]))
    first = min(int(np.searchsorted(sizes, int(bounds[0]))), len(sizes) - 1)
    last = int(bounds[1])
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
    start, width = 0, SIZING_BLOCK
    while start < len(scan):
        block = scan[start : start + width]
        start, width = start + width, 2 * width  # a long scan: fewer, larger vectorized passes
        bests = memo.best(block)
        meets = _meets(block, bests, need)
        for cards, best, ok in zip(block, bests, meets, strict=True):
            tried[cards] = best
            if ok:
                return cards, memo.built(cards), best
    if not tried:
        cards = int(sizes[first])
        fabric, found = _evaluate(r, cards)  # raises the fabric's own error
        return cards, fabric, found.best

    sized = np.array(list(tried), dtype=np.int64)
    mfus = np.array([0.0 if b is None else float(b.predicted_mfu) for b in tried.values()])
    share = ettr(sized, np.where(mfus > 0, mfus, 1.0)) if ettr is not None else np.ones(len(sized))
    cards = int(sized[int(np.argmax(sized * mfus * share))])  # the first of equals, as max() kept
    return cards, memo.built(cards), tried[cards]


def _meets(
    block: list[int],
    found: list[LayoutEval | None],
    need: Callable[[npt.NDArray[np.float64]], npt.NDArray[np.int64]],
) -> list[bool]:
    """Per size of the block: its best layout meets the deadline (need(its MFU) <= its cards), the
    needs of the whole block computed in one call."""
    has = [i for i, b in enumerate(found) if b is not None]
    ok = [False] * len(block)
    if has:
        mfus = np.array([float(found[i].predicted_mfu) for i in has])  # type: ignore[union-attr]
        for i, n in zip(has, np.asarray(need(mfus)).reshape(-1).tolist(), strict=True):
            ok[i] = n <= block[i]
    return ok


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


def _choice(
    r: Resolved, cards: int, fabric: Fabric, found: LayoutSearch, given_mfu: float | None
) -> ClusterChoice:
    """The plan's cluster; refused (plan.refusal: ScenarioError with the rules and the nearest
    accepted layouts) when no layout passes the rules and fits, whether or not an MFU was given:
    no figure without a plan."""
    if found.best is None:
        raise refusal(r, cards, found, layout_problem(r, cards, fabric))
    if given_mfu is not None:
        return ClusterChoice(cards, given_mfu, "given", fabric, found)
    return ClusterChoice(cards, float(found.best.predicted_mfu), "predicted", fabric, found)


def _storage(r: Resolved, nodes: int, tokens_per_s: float) -> Storage:
    return design_storage(
        r.counts.total, r.scenario.training.tokens, r.arch.vocab_size, tokens_per_s, nodes, storage_inputs(r)
    )


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


def estimate(data: Any, books: Mapping[str, PriceBook] | None = None) -> dict[str, Any]:
    """Validate a scenario dict and plan it: {scenario (normalized), result, engine_version, catalog_version}.
    `books`: price books by reference, for a scenario whose `cost.price_book` names one.

    Raises ScenarioError (field path + sentence) for anything wrong with the input.
    """
    scenario = validate_shape(data)
    resolved = resolve(scenario, books)
    result = build_result(resolved)
    return {
        "scenario": normalized(resolved),
        "result": to_jsonable(result),
        "engine_version": ENGINE_VERSION,
        "catalog_version": catalog.CATALOG_VERSION,
    }


@dataclass(frozen=True)
class Sized:
    """A plan's cluster and its roll-up of time, power and cost (before the result sections)."""

    flops: dict[str, float]
    peak: float
    choice: ClusterChoice
    storage: Storage
    equipment: Any
    prices: dict[str, float]
    roll: dict[str, Any]


def size_plan(r: Resolved) -> Sized:
    """Choose the cluster (choose_cluster: cards, deadline or budget) and roll up its time, power
    and cost; raises the refusal when no layout passes the rules and fits (plan.refusal)."""
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
    return Sized(flops, peak, choice, storage, eq, pr, roll)


def budget_affords(r: Resolved, own: Sized | None = None) -> dict[str, Any] | None:
    """What the budget buys: the budget-sized plan of the same scenario, with the same search
    (size_plan with cluster.budget, as a scenario sized by budget plans), so every report that says
    what a budget buys gives the same cards, capex and days (CHANGELOG 2.15.0). `own`: the plan's
    own sizing when the scenario is itself sized by its budget. None when the budget buys no
    cluster or no layout plans on the cluster it buys."""
    s = r.scenario
    budget = s.cost.budget if s.cost.budget is not None else s.cluster.budget
    if budget is None:
        return None
    if own is None or s.cluster.budget is None:
        by_budget = s.model_copy(update={"cluster": Cluster(budget=budget)})
        try:
            own = size_plan(dataclasses.replace(r, scenario=by_budget))
        except ScenarioError:
            return None
    roll = own.roll
    out = {
        "cards": int(roll["compute.cards"]),
        "nodes": int(roll["compute.nodes"]),
        "capex": float(roll["cost.capex.total"]),
        "days": float(roll["compute.wall_clock_days"]),
        "mfu": own.choice.mfu,
        "mfu_source": own.choice.mfu_source,
    }
    if s.reliability.failures:  # the days it needs with interruptions, checkpoints and restarts
        try:
            out["days"], out["compute_days"] = _goodput(r, own)["wall_clock_days"], out["days"]
        except ScenarioError:  # that cluster never finishes between its interruptions
            out["days"], out["compute_days"] = float("inf"), out["days"]
    return out


def build_result(r: Resolved) -> dict[str, Any]:
    """The result sections of the contract (docs/architecture.md#scenario-contract) for a resolved scenario.

    With calibration.pilot (estimator.plan.pilot) the plan uses the pilot's fitted factors and keeps
    the cluster it would have chosen before, for the report's before/after."""
    fit = fit_pilot(r, problem_at) if r.scenario.calibration is not None else None
    before = None
    if fit is not None:
        flops = model_flops(r)
        before = choose_cluster(
            r, flops["training_flop"], r.accelerator.peak_flops(r.scenario.training.precision)
        )
        r = calibrated(r, fit)
    z = size_plan(r)
    problem = layout_problem(r, z.choice.cards, z.choice.fabric)
    good = _goodput(r, z)
    result = assemble(r, z.flops, z.peak, z.choice, z.storage, z.equipment, z.prices, z.roll, problem, good)
    if "budget" in result:
        result["budget"]["affords"] = budget_affords(r, z)
    shown = z.choice.layouts.best or z.choice.layouts.closest  # the layout the result's parallelism shows
    if fit is not None and before is not None and shown is not None:
        first = before.layouts.best or before.layouts.closest
        result["calibration"] = section(fit, r, (first, before.cards), (shown, z.choice.cards))
    return result


def problem_at(r: Resolved, cards: int) -> LayoutProblem:
    """The layout problem of `r` at `cards` on its own fabric (the pilot's, estimator.plan.pilot)."""
    return layout_problem(r, cards, fabric_for(r, cards))


def _goodput(r: Resolved, z: Sized) -> dict[str, Any]:
    """result.goodput of a sized plan; a run that never finishes is refused with its reason."""
    cards = z.choice.cards
    out = goodput.section(
        r,
        cards=cards,
        nodes=-(-cards // r.cards_per_node),
        switches=z.choice.fabric.total_switches,
        solve_s=float(z.roll["compute.wall_clock_days"]) * SECONDS_PER_DAY,
        storage=z.storage,
        cost_per_day=float(z.roll["cost.owned_per_card_hour"]) * cards * 24.0,
    )
    if not math.isfinite(out["wall_clock_days"]):
        field = "cluster.cards" if r.scenario.cluster.cards is not None else "reliability"
        raise ScenarioError(
            f"the run never finishes: {cards:,} cards are interrupted every "
            f"{out['mean_time_between_interruptions_h'] * 60:.0f} minutes and each interruption costs "
            f"{(out['restart_s'] + out['rework_per_interruption_s']) / 60:.0f} minutes; use fewer cards, "
            "faster restarts (reliability.detection_s, rescheduling_s) or asynchronous checkpoints",
            field,
        )
    return out
