"""Goodput of a plan: its interruptions, checkpoints and restarts, and the wall-clock days with them.

The physics is estimator.cluster.reliability; this module feeds it from a resolved scenario (the
vendor's failure rates, the recovery figures, the stack's checkpoint mode, the spares) and the
cluster's designs (cards, nodes, the training fabric's switches, the hot tier's delivered write and
read bandwidth). Vectorized: one plan passes scalars, a sweep group passes arrays (estimator.plan.batch),
and the deadline sizing asks `deadline_met`, the one rule of a deadline with failures counted (a
cluster's wall clock fits it), which `cards_for_deadline_with_failures` solves for the cards at a
given MFU. Units: seconds, days, bytes/s, counts; money
in the scenario's currency.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
from numpy.typing import ArrayLike

from estimator.catalog.failures import failures
from estimator.cluster import reliability as rel
from estimator.contract.resolve import Resolved, checkpoint_interval
from estimator.layout.stacks import resolve_stack
from estimator.limits import MAX_CARDS
from estimator.model.compute import cards_for_deadline
from estimator.money.pricing import model_flops, vectorized_counts
from estimator.plan.count_search import lowest, smallest_at_most

NODE_CAUSES = ("accelerator", "hbm", "host", "host_maintenance")  # a node is swapped out
ADVICE_SHARE = 0.03  # checkpoints or restarts costing more than this share of the wall time get advice
LEVER_NAMES = {  # English defaults; reports.goodput.LEVERS renders them in the reader's language
    "faster-hot-tier": "a hot storage tier twice as fast",
    "async-checkpoints": "asynchronous checkpoints",
    "in-memory-checkpoints": "in-memory checkpoints replicated to peer nodes",
    "spare-nodes": "hot standby nodes",
}
FREE_LEVER_SHARE = 0.01  # a setting (no hardware) that saves more than this share is advised anyway
SIZING_ROUNDS = 12  # fixed-point rounds of the deadline sizing with failures (converges in 2-4)


@dataclass(frozen=True)
class Settings:
    """What the goodput of one scenario depends on besides the cluster's size."""

    on: bool
    mode: str
    rates: dict[str, float]  # per unit-hour, by cause
    per: dict[str, str]
    counts: dict[str, float]
    scale: float
    scale_rel_sd: float
    planned_per_s: float
    detection_s: float
    rescheduling_s: float
    standby_swap_s: float
    host_copy_bytes_per_s: float
    peer_bytes_per_s_per_node: float
    repair_s: float
    spare_nodes: int
    interval_s: float | None
    fleet: str
    source: str


def settings(r: Resolved, mode: str | None = None) -> Settings:
    """The scenario's reliability settings: catalog rates for its vendor, recovery figures with the
    scenario's overrides, the stack's checkpoint mode (or `mode`)."""
    rs, cat = r.scenario.reliability, failures()
    vendor = cat.for_vendor(r.accelerator.vendor)
    fleet, rec = vendor.fleet, cat.recovery
    rng = vendor.source.range
    t = r.scenario.training
    stack_mode = resolve_stack(t.stack, r.accelerator.vendor, t.stack_overrides).checkpoint_mode
    return Settings(
        on=rs.failures,
        mode=mode or stack_mode,
        rates={c: fleet.rate_per_unit_hour(c) for c in fleet.counts},
        per=dict(fleet.per),
        counts=dict(fleet.counts),
        scale=vendor.scale if rs.rate_scale is None else float(rs.rate_scale),
        scale_rel_sd=math.log(rng[1] / rng[0]) / (2 * rel.Z_P90) if rng else 0.0,
        planned_per_s=fleet.planned_per_hour / rel.SECONDS_PER_HOUR,
        detection_s=rec["detection_s"] if rs.detection_s is None else float(rs.detection_s),
        rescheduling_s=rec["rescheduling_s"] if rs.rescheduling_s is None else float(rs.rescheduling_s),
        standby_swap_s=rec["standby_swap_s"],
        host_copy_bytes_per_s=rec["host_copy_bytes_per_s"],
        peer_bytes_per_s_per_node=r.nics_per_node * r.nic_gbps * 1e9 / 8 * rec["peer_link_efficiency"],
        repair_s=rec["repair_h"] * rel.SECONDS_PER_HOUR,
        spare_nodes=rs.spare_nodes,
        interval_s=checkpoint_interval(r.scenario),  # None: Daly's optimum
        fleet=fleet.name,
        source=fleet.source,
    )


def evaluate(
    r: Resolved,
    *,
    cards: ArrayLike,
    nodes: ArrayLike,
    switches: ArrayLike,
    solve_s: ArrayLike,
    write_bytes_per_s: ArrayLike,
    read_bytes_per_s: ArrayLike,
    st: Settings | None = None,
    spread: bool = True,
) -> dict[str, Any]:
    """Goodput arrays of the scenario at these cluster sizes (broadcast): interruptions, interval,
    checkpoint and restart seconds, the lost time by kind, wall seconds (the mean) with its P10, P50
    (median) and P90 from the same interruption-count distribution (reliability.count_quantiles).
    spread False leaves out the quantiles (wall_p10_s, wall_p50_s, wall_p90_s): what the deadline's
    fixed point, which reads only ETTR, does not need."""
    st = st or settings(r)
    rates = rel.interruption_rate_per_s(
        {"card": cards, "node": nodes, "switch": switches}, st.rates, st.per, st.scale
    )
    lam = np.asarray(sum(rates.values()))
    mtbi = 1.0 / lam
    ckpt_bytes = r.counts.total * r.scenario.storage.checkpoint_bytes_per_param
    t = rel.checkpoint_times(
        st.mode,
        ckpt_bytes,
        cards,
        nodes,
        write_bytes_per_s,
        read_bytes_per_s,
        st.host_copy_bytes_per_s,
        st.peer_bytes_per_s_per_node,
    )
    if st.interval_s is not None:
        tau = np.maximum(np.asarray(float(st.interval_s)), t["lag"])
    else:
        tau = np.maximum(rel.daly_interval(t["stall"], mtbi), t["lag"])
    rework = rel.rework_s(st.mode, tau, t["stall"], t["lag"])
    node_rate = np.asarray(sum(rates[c] for c in NODE_CAUSES))
    coverage = rel.spare_coverage(st.spare_nodes, node_rate * st.repair_s)
    node_share = node_rate / lam
    resched = st.rescheduling_s + node_share * coverage * (st.standby_swap_s - st.rescheduling_s)
    restart = st.detection_s + resched + t["reload"]
    planned_restart = (
        t["write"] + st.rescheduling_s + t["reload"]
    )  # a planned stop saves first, loses nothing
    solve = np.asarray(solve_s, dtype=float)
    on = 1.0 if st.on else 0.0  # reliability.failures false: no interruptions and no checkpoint stalls
    lam_used, planned_used = lam * on + 0.0 * solve, st.planned_per_s * on + 0.0 * solve
    w = rel.wall_time(solve, tau, t["stall"] * on, lam_used, rework + restart, planned_used, planned_restart)
    n_unexpected, n_planned = lam_used * w["wall"], planned_used * w["wall"]
    out = {
        "rates": rates,
        "mtbi_s": mtbi,
        "interval_s": tau,
        "write_s": t["write"],
        "stall_s": t["stall"],
        "lag_s": t["lag"],
        "reload_s": t["reload"],
        "restart_s": restart,
        "rework_s": rework,
        "planned_restart_s": planned_restart,
        "unexpected": n_unexpected,
        "planned": n_planned,
        "wall_s": w["wall"],
        "checkpoints_s": w["checkpoints"],
        "rework_total_s": n_unexpected * rework,
        "restarts_total_s": n_unexpected * restart,
        "planned_total_s": w["planned"],
        "progress": w["progress"],
        "ettr": np.where(np.isfinite(w["wall"]), solve / w["wall"], 0.0),
        "spare_coverage": coverage,
        "nodes_down": node_rate * st.repair_s,
    }
    if spread:
        out.update(_wall_quantiles(out, solve, rel.rate_shape(rates, st.counts, st.scale_rel_sd)))
    return out


def held_ratio(wall: ArrayLike, solve: ArrayLike) -> npt.NDArray[np.float64]:
    """Wall-clock time the cluster is held per unit of computing time: wall / solve = 1 / ETTR
    (reliability.wall_time; exactly 1 with failures not counted, where the wall is the solve time),
    what the run's energy and cost are paid for (money.rollup.Sizing.held). 1 where the run never
    finishes (an infinite wall: the plan is refused, plan.sizing.goodput_of and the sweep's
    NEVER_FINISHES) or has no plan (NaN). Dimensionless: wall and solve in the same unit."""
    w, t = np.asarray(wall, dtype=np.float64), np.asarray(solve, dtype=np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        ratio = w / t
    return np.asarray(np.where(np.isfinite(ratio) & (ratio > 0), ratio, 1.0))


def _wall_quantiles(g: dict[str, Any], solve: npt.NDArray[np.float64], shape: Any) -> dict[str, Any]:
    """wall_p10_s, wall_p50_s (median), wall_p90_s: seconds of computing, checkpoint stalls and planned
    stops plus the P10 / P50 / P90 count of unexpected interruptions (reliability.count_quantiles)
    times the rework + restart each costs; the mean wall is the same sum at the mean count."""
    counts = rel.count_quantiles(g["unexpected"], shape)
    base = solve + g["checkpoints_s"] + g["planned_total_s"]
    per = g["rework_s"] + g["restart_s"]
    return {
        key: base + n * per for key, n in zip(("wall_p10_s", "wall_p50_s", "wall_p90_s"), counts, strict=True)
    }


def at_cards(
    r: Resolved, cards: ArrayLike, mfu: ArrayLike, tokens: ArrayLike | None = None, st: Settings | None = None
) -> dict[str, Any]:
    """evaluate() at card counts whose fabric and storage are not designed yet: the switches and the
    hot tier's bandwidth from the vectorized twins of the designs (money.pricing.vectorized_counts)."""
    return at_cards_of(r, tokens, st)(cards, mfu)


def at_cards_of(
    r: Resolved, tokens: ArrayLike | None = None, st: Settings | None = None, spread: bool = True
) -> Callable[[ArrayLike, ArrayLike], dict[str, Any]]:
    """at_cards(r, cards, mfu, tokens, st) as a function of (cards, mfu), what does not depend on
    them (FLOPs, peak, the storage volumes) computed once: the deadline's fixed point calls it
    every round. spread: as evaluate's."""
    s = r.scenario
    tokens = s.training.tokens if tokens is None else tokens
    peak = r.accelerator.peak_flops(s.training.precision)
    flop = model_flops(r)["flop_per_token"]
    state: dict[str, Any] = {}
    counts_for = vectorized_counts(r, tokens, state)

    def at(cards: ArrayLike, mfu: ArrayLike) -> dict[str, Any]:
        c = np.asarray(cards, dtype=np.int64)
        nodes = -(-c // r.cards_per_node)
        solve = np.asarray(tokens, dtype=float) * flop / (c * peak * np.asarray(mfu, dtype=float))
        counts_for(c, nodes, np.asarray(tokens, dtype=float) / solve)
        out = evaluate(
            r,
            cards=c,
            nodes=nodes,
            switches=state["fabric_switches"],
            solve_s=solve,
            write_bytes_per_s=state["hot_write_bytes_per_s"],
            read_bytes_per_s=state["hot_read_bytes_per_s"],
            st=st,
            spread=spread,
        )
        out["solve_s"] = solve  # the computing seconds the wall is built on
        return out

    return at


def ettr_at(
    r: Resolved, tokens: float | None = None
) -> Callable[[npt.NDArray[np.int64], npt.NDArray[np.float64]], npt.NDArray[np.float64]] | None:
    """ETTR(cards, mfu) (arrays) of this scenario at sizes not designed yet (at_cards), for the
    deadline sizing's fallback to the size of highest throughput; None when failures are not counted."""
    if not r.scenario.reliability.failures:
        return None
    at = at_cards_of(r, tokens, settings(r), spread=False)

    def ettr(cards: npt.NDArray[np.int64], mfu: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
        return np.asarray(at(cards, mfu)["ettr"], dtype=np.float64)

    return ettr


class DeadlineMet:
    """met(cards, mfu) (arrays): whether the wall clock at these sizes and MFUs, interruptions,
    checkpoints and restarts counted where reliability.failures is on (at_cards: the same evaluate()
    as result.goodput, whose mean judges compute.meets_target), fits `seconds` (s). One evaluation,
    no fixed point: what the deadline scan asks of each size it searched (plan.deadline._meets; the
    sizes' best layouts, `bests`, do not change it). chunk 0: the scan judges a pass's sizes at once."""

    chunk = 0

    def __init__(self, r: Resolved, seconds: float, tokens: float | None = None):
        self.at, self.seconds = at_cards_of(r, tokens, settings(r), spread=False), seconds

    def __call__(self, cards: ArrayLike, mfu: ArrayLike, bests: object = None) -> npt.NDArray[np.bool_]:
        return np.asarray(np.asarray(self.at(cards, mfu)["wall_s"], dtype=float) <= self.seconds)


def deadline_met(r: Resolved, seconds: float, tokens: float | None = None) -> DeadlineMet:
    """The deadline's rule at the planned MFU (DeadlineMet)."""
    return DeadlineMet(r, seconds, tokens)


def cards_for_deadline_with_failures(
    r: Resolved,
    training_flop: ArrayLike,
    seconds: ArrayLike,
    peak: float,
    mfu: ArrayLike,
    multiple: int,
    tokens: ArrayLike | None = None,
    largest: Callable[[], int] | None = None,
) -> np.ndarray:
    """The deadline rule with failures: the fewest cards (whole `multiple`s) whose wall time WITH
    interruptions, checkpoints and restarts fits `seconds`. Compute time must fit seconds x ETTR, and
    ETTR falls as cards grow (more cards fail more often), so c <- cards_for_deadline(seconds x
    ETTR(c)) from the failure-free count upward: it never passes the fewest that meet, and where it
    stops (c meets) it is that count. A count that keeps growing after SIZING_ROUNDS rounds (the
    interruptions nearly or wholly outrun the cards), or that grows past the largest cluster the
    network builds (`largest()`, cards; limits.MAX_CARDS without), is settled by _fewest_meeting: the
    fewest that meet up to there or, where none does, the count of the shortest wall time (fastest_cards) (the plan
    keeps the fastest and says it misses: sections.warnings, deadline-missed), as the deadline
    sizing without an MFU does. Where even the failure-free count is past the largest it is
    returned as it is (past every cluster: the plan refuses, plan.deadline_refusals.too_many_cards)."""
    bare = np.asarray(cards_for_deadline(training_flop, seconds, peak, mfu, multiple), dtype=np.int64)
    if not r.scenario.reliability.failures:
        return bare
    at = at_cards_of(r, tokens, settings(r), spread=False)  # the rounds read ETTR only
    cards, grew = bare, np.ones(bare.shape, dtype=bool)
    for _ in range(SIZING_ROUNDS):
        ettr = np.maximum(np.asarray(at(cards, mfu)["ettr"], dtype=float), 1e-3)
        grown = np.maximum(
            cards, cards_for_deadline(training_flop, np.asarray(seconds) * ettr, peak, mfu, multiple)
        )
        grown = np.minimum(grown, MAX_CARDS + multiple)  # past every cluster, and no overflow
        grew = grown != cards
        if not grew.any():
            break
        cards = grown
    top = MAX_CARDS if largest is None else min(MAX_CARDS, int(largest()))
    settle = (grew | (cards > top)) & (bare <= top)
    if not settle.any():
        return cards
    cards, met = np.array(cards, copy=True), np.zeros(cards.shape, dtype=bool)
    search = settle & (cards <= top)  # past top the fixed point passed no count that meets: none does
    if search.any():
        found, ok = _fewest_meeting(
            _Walls(r, cards.shape, mfu, multiple, tokens, search), cards, seconds, top
        )
        cards[search], met[search] = found, ok
    slow = settle & ~met
    if slow.any():
        cards[slow] = fastest_cards(r, mfu, multiple, tokens, slow, top)
    return cards


class _Walls:
    """The mean wall clock with failures (at_cards, as DeadlineMet judges; seconds) of the rows
    `rows` of arrays of `shape` at counts of whole `multiple`s: a plan.count_search Quantity."""

    def __init__(
        self,
        r: Resolved,
        shape: tuple[int, ...],
        mfu: ArrayLike,
        multiple: int,
        tokens: ArrayLike | None,
        rows: npt.NDArray[np.bool_],
    ):
        self.r, self.shape, self.multiple, self.st = r, shape, multiple, settings(r)
        self.at = np.flatnonzero(np.broadcast_to(rows, shape))
        self.mfu = self.of(mfu)
        self.tokens = self.of(r.scenario.training.tokens if tokens is None else tokens)

    def of(self, values: ArrayLike) -> npt.NDArray[np.float64]:
        """The rows' entries of `values` (a scalar or an array of the shape)."""
        return np.broadcast_to(np.asarray(values, dtype=float), self.shape).ravel()[self.at]

    def __call__(self, i: npt.NDArray[np.int64], k: npt.NDArray[np.int64]) -> npt.NDArray[np.float64]:
        evaluated = at_cards_of(self.r, self.tokens[i], self.st, spread=False)(k * self.multiple, self.mfu[i])
        return np.asarray(evaluated["wall_s"], dtype=float)


def _fewest_meeting(
    walls: _Walls, cards: np.ndarray, seconds: ArrayLike, top: int
) -> tuple[np.ndarray, npt.NDArray[np.bool_]]:
    """Per row of `walls`: (the fewest cards from the row's `cards`, which do not meet, up to `top`
    whose wall clock fits `seconds`, True), or (a count, False) where none does. The wall clock
    falls, then rises as interruptions outgrow the cards (plan.count_search)."""
    lo = np.asarray(cards, dtype=np.int64).ravel()[walls.at] // walls.multiple
    hi = np.maximum(lo, top // walls.multiple)
    found, met = smallest_at_most(walls, lo, hi, walls.of(seconds))
    return found * walls.multiple, met


def fastest_cards(
    r: Resolved,
    mfu: ArrayLike,
    multiple: int,
    tokens: ArrayLike | None,
    rows: npt.NDArray[np.bool_],
    top: int,
) -> np.ndarray:
    """Per row of `rows`: the count (whole `multiple`s, up to `top` cards) of the shortest mean wall
    clock with failures at `mfu` (plan.count_search.lowest from one unit: the same count whatever
    the deadline), what a deadline no count meets plans on."""
    walls = _Walls(r, np.shape(rows), mfu, multiple, tokens, rows)
    one = np.ones(walls.at.size, dtype=np.int64)
    return lowest(walls, one, np.maximum(one, top // multiple)) * multiple
