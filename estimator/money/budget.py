"""Budget sizing and budget status: what a capital budget buys, and how a plan stands against it.

The budget is a capital budget: it buys the cluster (servers with their cards, the network and the
storage; `cost.capex.total`, docs/architecture.md#formulas). Money is in the scenario's currency
(`cost.currency`); card counts are whole cards.

- `largest_within(sizes, capex, budget)`: the largest candidate cluster whose capex fits the budget.
  Capex is (weakly) increasing in the card count: more servers, and a fabric and storage that
  never shrink as nodes are added (network.fabric_counts, storage.storage_counts).
- `capex_by_size(r, sizes, mfu)`: capex of every candidate size in one vectorized roll-up (the
  sweep path's counts, estimator.plan.batch), so sizing by budget prices exactly like a plan.
- `cards_for_budget(r, mfu)`: the sizing rule behind `cluster.budget`.
- `status(capex, budget)`: the report's budget block (within / over by how much); what the budget
  buys is the budget-sized plan itself (estimator.plan.sizing.budget_affords).
- `deadline_miss_probability(days, target_days, mfu_low, mfu_likely, mfu_high)`: exact probability
  that the run is late when MFU is triangular (the Monte Carlo's distribution, estimator.plan.uncertainty).
- `deadline_miss_probability_with_failures(...)`: the same with the interruption count's spread too
  (estimator.cluster.reliability.count_exceedance), averaged over the MFU triangle.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from estimator.cluster import reliability as rel
from estimator.cluster.network import fabric_counts
from estimator.errors import FieldError, ScenarioError
from estimator.limits import MAX_CARDS
from estimator.money.pricing import equipment, facility, model_flops, prices, vectorized_counts
from estimator.money.rollup import Sizing, rollup
from estimator.words import counted

# MFU used to size the storage tiers' write bandwidth while the layout is not yet known: the top of
# published large-scale records (MegaScale 55 %), so the storage is never under-priced.
STORAGE_SIZING_MFU = 0.55
# equal-probability strata of the MFU triangle in the deadline risk with failures: the midpoint rule
# errs by at most 1 / (2 K) = 6.1e-5 even in the worst case, a step (a failure spread far narrower
# than the MFU's), and by < 1e-6 on the plans' smooth integrands (tests/estimator/test_budget.py)
MFU_STRATA = 8192


def largest_within(sizes: np.ndarray, capex: np.ndarray, budget: float) -> int | None:  # noqa: ARG001 - the (sizes, capex) pair of its callers
    """Index of the largest size whose capex (same currency as `budget`) is <= the budget, or None.

    `sizes` ascending; `capex[i]` the cluster price at `sizes[i]`. Works on the whole array at
    once (no monotonicity needed: the largest affordable size wins even past a dip)."""
    ok = np.asarray(capex, dtype=float) <= float(budget) * (1 + 1e-12)
    if not ok.any():
        return None
    return int(np.flatnonzero(ok)[-1])


def capex_by_size(r: Any, sizes: np.ndarray, mfu: float | None) -> np.ndarray:
    """Capex (in the scenario's currency) of the cluster at each card count in `sizes`.

    One call of the vectorized roll-up (estimator.money.rollup) with the batch path's network and
    storage counts; storage bandwidth assumes `mfu` (STORAGE_SIZING_MFU when None). Sizes whose
    fabric cannot be built (too many nodes for the switch radix) cost +inf."""

    s = r.scenario
    cards = np.asarray(sizes, dtype=np.int64)
    net = s.network
    nodes = -(-cards // r.cards_per_node)
    fab = fabric_counts(
        nodes * r.nics_per_node, net.switch_ports, net.oversubscription, r.nics_per_node, net.rail_optimized
    )
    out = np.full(cards.shape, np.inf)
    feasible = np.asarray(fab["feasible"], dtype=bool)
    if not feasible.any():
        return out
    cards = cards[feasible]
    flops = model_flops(r)
    state: dict[str, Any] = {}
    sizing = Sizing(
        training_flop=flops["training_flop"],
        tokens=s.training.tokens,
        peak_flops=r.accelerator.peak_flops(s.training.precision),
        mfu=STORAGE_SIZING_MFU if mfu is None else mfu,
        cards_per_node=r.cards_per_node,
        cards=cards,
    )
    values = rollup(
        sizing,
        vectorized_counts(r, s.training.tokens, state),
        facility(r, equipment(r), prices(r)),
    )
    out[feasible] = np.asarray(values["cost.capex.total"], dtype=float)
    return out


def budget_sizes(r: Any, multiple: int, budget: float) -> np.ndarray:
    """Every card count in whole `multiple`s (nodes and fixed-layout replicas) whose servers alone
    cost no more than the budget, plus one step beyond (servers are the bulk of capex, so nothing
    larger can fit). Server price per node in the scenario's currency."""
    per_node = equipment(r).server_price_usd * r.usd_to_currency
    nodes_max = budget / per_node if per_node > 0 else MAX_CARDS
    steps = int(min(MAX_CARDS // multiple, max(1, nodes_max * r.cards_per_node // multiple + 1)))
    return multiple * np.arange(1, steps + 1, dtype=np.int64)


def cards_for_budget(r: Any, multiple: int, mfu: float | None) -> int:
    """`cluster.budget` sizing: the largest cluster in whole nodes (and whole replicas of a fixed
    layout: `multiple` cards) whose capex fits the budget. Raises ScenarioError on cluster.budget
    when not even the smallest size fits."""
    budget = float(r.scenario.cluster.budget)
    sizes = budget_sizes(r, multiple, budget)
    capex = capex_by_size(r, sizes, mfu)
    i = largest_within(sizes, capex, budget)
    if i is None:
        currency = r.scenario.cost.currency
        raise ScenarioError(
            [
                FieldError(
                    "cluster.budget",
                    f"The budget of {budget:,.0f} {currency} does not buy the smallest cluster: "
                    f"{counted(int(sizes[0]), 'card')} for {float(capex[0]):,.0f} {currency}.",
                    "budget-buys-no-cluster",
                    {
                        "budget": budget,
                        "currency": currency,
                        "cards": int(sizes[0]),
                        "capex": float(capex[0]),
                    },
                )
            ]
        )
    return int(sizes[i])


def status(capex: float, budget: float) -> dict[str, Any]:
    """Within the budget or over it: {budget, capex, within, over_by, headroom, share} (money in
    the plan's currency; share = capex / budget)."""
    return {
        "budget": budget,
        "capex": capex,
        "within": capex <= budget * (1 + 1e-12),
        "over_by": max(0.0, capex - budget),
        "headroom": max(0.0, budget - capex),
        "share": capex / budget if budget > 0 else None,
    }


def triangular_cdf(x: Any, low: Any, likely: Any, high: Any) -> np.ndarray:
    """P(X <= x) for X triangular on [low, high] with mode `likely` (vectorized in x and, broadcast
    with it, in the three parameters: one triangle per plan)."""
    x = np.asarray(x, dtype=float)
    low, likely, high = (np.asarray(v, dtype=float) for v in (low, likely, high))
    span = high - low
    with np.errstate(divide="ignore", invalid="ignore"):  # a point mass (span 0) is the step below
        left = np.where(likely > low, (x - low) ** 2 / (span * np.maximum(likely - low, 1e-300)), 1.0)
        right = np.where(
            high > likely, 1.0 - (high - x) ** 2 / (span * np.maximum(high - likely, 1e-300)), 1.0
        )
    out = np.where(x <= likely, left, right)
    out = np.clip(np.where(x <= low, 0.0, np.where(x >= high, 1.0, out)), 0.0, 1.0)
    return np.asarray(np.where(high <= low, (x >= low).astype(float), out))


def deadline_miss_probability(
    days: float, target_days: float, mfu_low: float, mfu_likely: float, mfu_high: float
) -> float:
    """P(run takes longer than `target_days`) when MFU ~ Triangular(low, likely, high).

    Run time is inversely proportional to MFU (days = C / (cards x peak x MFU) / 86,400 s), and
    `days` is the time at the likely MFU, so the run is late exactly when
    MFU < likely x days / target_days: the triangular CDF at that point (deadline_miss_probabilities
    of one plan)."""
    return float(deadline_miss_probabilities(days, target_days, (mfu_low, mfu_likely, mfu_high))[0])


def deadline_miss_probabilities(days: Any, target_days: Any, mfu: tuple[Any, Any, Any]) -> np.ndarray:
    """deadline_miss_probability of many plans at once (days, target days and the triangle's
    (low, likely, high) one entry per plan, broadcast): the triangular CDF at likely x days / target."""
    low, likely, high = (np.atleast_1d(np.asarray(v, dtype=float)) for v in mfu)
    threshold = likely * np.asarray(days, dtype=float) / np.asarray(target_days, dtype=float)
    return np.asarray(triangular_cdf(threshold, low, likely, high), dtype=float).ravel()


def triangular_ppf(u: Any, low: float, likely: float, high: float) -> np.ndarray:
    """The x with P(X <= x) = u for X triangular on [low, high] with mode `likely` (the inverse of
    triangular_cdf, vectorized in u in [0, 1]): low + sqrt(u (high - low)(likely - low)) below the
    mode's share (likely - low) / (high - low), high - sqrt((1 - u)(high - low)(high - likely)) above."""
    u = np.asarray(u, dtype=float)
    span = high - low
    if span <= 0:
        return np.full(u.shape, float(low))
    split = (likely - low) / span
    left = low + np.sqrt(u * span * (likely - low))
    right = high - np.sqrt((1.0 - u) * span * (high - likely))
    return np.asarray(np.where(u < split, left, right))


def deadline_miss_probability_with_failures(
    target_days: float,
    base_days: float,
    unexpected_count: float,
    per_interruption_days: float,
    rate_shape: float,
    mfu: tuple[float, float, float],
    strata: int = MFU_STRATA,
) -> float:
    """P(wall-clock days with failures > `target_days`) with both uncertainties: MFU ~
    Triangular(low, likely, high) = `mfu` and, at each MFU, the interruption count N of
    reliability.count_quantiles (negative binomial ~ Gamma, Wilson & Hilferty 1931;
    docs/sources.md#wilson-hilferty-1931) whose P10 / P50 / P90 the goodput section shows.

    At the likely MFU the wall days are base + N x per (plan.goodput._wall_quantiles): `base_days`
    the computing, checkpoint stalls and planned stops, `unexpected_count` the mean of N, and
    `per_interruption_days` the rework + restart each costs. The wall time is
    T_s (1 + delta/tau) / (1 - lambda L - lambda_p R_p) (reliability.wall_time) and, for a given
    cluster, neither the interval tau (Daly's, from the stall and the MTBI), the stall, the rates nor
    the losses depend on the solve time T_s (ETTR does not), so at MFU m, with s = likely / m, the
    solve time, the base and the mean count are s times their values at the likely MFU while `per`
    and the rate's Gamma shape are unchanged: P(late | m) = P(N_m > (T - s base) / per) with
    N_m of mean s x unexpected_count (reliability.count_exceedance). The MFU is integrated by the
    midpoint rule over `strata` equal-probability strata through triangular_ppf (MFU_STRATA).
    One plan of deadline_miss_probabilities_with_failures."""
    plan = (target_days, base_days, unexpected_count, per_interruption_days, rate_shape)
    return float(deadline_miss_probabilities_with_failures(*plan, mfu, strata)[0])


# MFU ratios (likely / MFU at each stratum) kept by deadline_miss_probabilities_with_failures for the
# plans that share a triangle (a sweep's rows at one MFU given): at most this many, 64 kB each
RATIO_CACHE = 64


def deadline_miss_probabilities_with_failures(
    target_days: Any,
    base_days: Any,
    unexpected_count: Any,
    per_interruption_days: Any,
    rate_shape: Any,
    mfu: tuple[Any, Any, Any],
    strata: int = MFU_STRATA,
) -> np.ndarray:
    """deadline_miss_probability_with_failures of many plans (each argument one entry per plan,
    broadcast; `mfu` the triangles' (low, likely, high)): the same midpoint rule over the same strata,
    plan by plan, the MFU ratios of a triangle computed once for the plans that share it. One plan at
    a time on purpose: the work is the strata's count_exceedance, element by element, and a plans x
    strata matrix is slower than the loop (64 plans at a time: 0.75 ms a plan against 0.24, the
    arrays out of cache; measured on this project's 2-core machine)."""
    columns = np.broadcast_arrays(
        *(
            np.atleast_1d(np.asarray(v, dtype=float)).ravel()
            for v in (target_days, base_days, unexpected_count)
        ),
        *(
            np.atleast_1d(np.asarray(v, dtype=float)).ravel()
            for v in (per_interruption_days, rate_shape, *mfu)
        ),
    )
    u = (np.arange(strata, dtype=float) + 0.5) / strata
    out = np.empty(columns[0].shape[0])
    ratios: dict[tuple[float, float, float], np.ndarray] = {}
    for i in range(out.shape[0]):
        t, base, mean, per, shape, low, likely, high = (float(c[i]) for c in columns)
        s = ratios.get((low, likely, high))
        if s is None:
            if len(ratios) >= RATIO_CACHE:
                ratios.clear()
            s = ratios[(low, likely, high)] = likely / triangular_ppf(u, low, likely, high)
        if per <= 0:  # an interruption costs nothing: late exactly when the base is
            out[i] = np.mean(s * base > t)
        else:  # room: the interruptions the deadline allows
            out[i] = np.mean(rel.count_exceedance((t - s * base) / per, s * mean, shape))
    return out
