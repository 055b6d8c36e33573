"""A chosen cluster rolled up (size_plan: storage, counts, time, power, cost), its goodput section
(goodput_of: refused when the run never finishes) and what the budget buys (budget_affords: the
budget-sized plan of the same scenario). Units: days, seconds, FLOP, money in the report's currency."""

from __future__ import annotations

import dataclasses
import math

from estimator.cluster.network import Fabric
from estimator.cluster.storage import Storage, design_storage
from estimator.contract.resolve import Resolved
from estimator.contract.scenario import Cluster
from estimator.errors import FieldError, ScenarioError
from estimator.model.compute import SECONDS_PER_DAY
from estimator.money.pricing import equipment, facility, model_flops, prices, storage_inputs
from estimator.money.rollup import Counts, Sizing, rollup
from estimator.plan import goodput_section
from estimator.plan.choose import choose_cluster
from estimator.plan.chosen import Sized
from estimator.plan.goodput import held_ratio
from estimator.plan.result import Affords
from estimator.plan.result_goodput import GoodputSection
from estimator.words import counted


def _storage(r: Resolved, nodes: int, tokens_per_s: float, write_s: float | None = None) -> Storage:
    """The storage design of the cluster (cluster.storage.design_storage); `write_s` (s) designs
    the hot tier for that checkpoint write instead of the scenario's storage.checkpoint_write_s."""
    inputs = storage_inputs(r)
    if write_s is not None:
        inputs = dataclasses.replace(inputs, checkpoint_write_s=write_s)
    return design_storage(
        r.counts.total, r.scenario.training.tokens, r.arch.vocab_size, tokens_per_s, nodes, inputs
    )


def _tokens_per_s(z: Sized) -> float:
    """Tokens/s of the sized cluster: cards x peak (FLOP/s) x MFU / FLOPs per token."""
    return z.choice.cards * z.peak * z.choice.mfu / z.flops["flop_per_token"]


def _twice_as_fast(r: Resolved, z: Sized) -> Storage:
    """The storage design whose hot tier writes a checkpoint in half the time the plan's delivers
    (checkpoint bytes / delivered write bandwidth / 2, s): the faster-hot-tier lever is this
    design, drives and storage nodes as a re-plan with storage.checkpoint_write_s set to it would
    buy them, so its days and its cost are the re-plan's (docs/goodput.md, "The answer")."""
    hot = z.storage.hot
    write_s = z.storage.checkpoint_bytes / hot.write_capability_bytes_per_s / 2.0
    return _storage(r, -(-z.choice.cards // r.cards_per_node), _tokens_per_s(z), write_s)


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


def size_plan(r: Resolved) -> Sized:
    """Choose the cluster (choose_cluster: cards, deadline or budget) and roll up its time, power
    and cost; raises the refusal when no layout passes the rules and fits (plan.refusal)."""
    s = r.scenario
    flops = model_flops(r)
    peak = r.accelerator.peak_flops(s.training.precision)
    choice = choose_cluster(r, flops["training_flop"], peak)
    nodes = -(-choice.cards // r.cards_per_node)
    storage = _storage(r, nodes, choice.cards * peak * choice.mfu / flops["flop_per_token"])
    eq, pr = equipment(r), prices(r)
    counts = _counts_from_designs(choice.fabric, storage)
    sizing = Sizing(
        training_flop=flops["training_flop"],
        tokens=s.training.tokens,
        peak_flops=peak,
        mfu=choice.mfu,
        cards_per_node=r.cards_per_node,
        cards=choice.cards,
    )
    fac = facility(r, eq, pr)
    roll = rollup(sizing, lambda cards, nodes_, tps: counts, fac)
    good = _goodput(r, Sized(flops, peak, choice, storage, eq, pr, roll))
    # the cluster is paid for while it is held: with failures counted, the energy and cost of the
    # run are those of the wall clock with them (goodput.held_ratio; capex does not move)
    held = float(held_ratio(good.wall_clock_days, good.compute_days))
    if held != 1.0:
        roll = rollup(dataclasses.replace(sizing, held=held), lambda cards, nodes_, tps: counts, fac)
    return Sized(flops, peak, choice, storage, eq, pr, roll, good)


def budget_affords(r: Resolved, own: Sized | None = None) -> Affords | None:
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
    days = float(roll["compute.wall_clock_days"])
    compute_days = median_days = None
    if s.reliability.failures:  # the days it needs with interruptions, checkpoints and restarts
        try:
            g = goodput_of(r, own)
            days, compute_days, median_days = g.wall_clock_days, days, g.wall_clock_p50_days
        except ScenarioError:  # that cluster never finishes between its interruptions
            days, compute_days = float("inf"), days
    return Affords(
        cards=int(roll["compute.cards"]),
        nodes=int(roll["compute.nodes"]),
        capex_in_currency=float(roll["cost.capex.total"]),
        wall_clock_days=days,
        mfu=own.choice.mfu,
        mfu_source=own.choice.mfu_source,
        compute_days=compute_days,
        median_days=median_days,
        most_cards=own.choice.budget_most_cards,
    )


def _goodput(r: Resolved, z: Sized) -> GoodputSection:
    """result.goodput of the cluster z (size_plan keeps it; its wall may be infinite)."""
    cards = z.choice.cards
    return goodput_section.section(
        r,
        cards=cards,
        nodes=-(-cards // r.cards_per_node),
        switches=z.choice.fabric.total_switches,
        solve_s=float(z.roll["compute.wall_clock_days"]) * SECONDS_PER_DAY,
        storage=z.storage,
        faster=_twice_as_fast(r, z),
        cost_per_day=float(z.roll["cost.owned_per_card_hour"]) * cards * 24.0,
    )


def goodput_of(r: Resolved, z: Sized) -> GoodputSection:
    """result.goodput of a sized plan; a run that never finishes is refused with its reason."""
    cards = z.choice.cards
    out = z.goodput if z.goodput is not None else _goodput(r, z)
    if not math.isfinite(out.wall_clock_days):
        field = "cluster.cards" if r.scenario.cluster.cards is not None else "reliability"
        every_s, cost_s = (
            out.mean_time_between_interruptions_h * 3600.0,
            out.restart_s + out.rework_s_per_interruption,
        )
        message = (
            f"the run never finishes: {counted(cards, 'card')} meet an interruption every "
            f"{every_s / 60:.0f} minutes and each interruption costs {cost_s / 60:.0f} minutes; use fewer "
            "cards, faster restarts (reliability.detection_s, rescheduling_s) or asynchronous checkpoints"
        )
        params = {"cards": cards, "every_s": every_s, "cost_s": cost_s}  # the web layer words it
        raise ScenarioError(FieldError(field, message, "run-never-finishes", params))
    return out
