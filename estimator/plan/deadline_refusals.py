"""The refusals of a deadline no cluster this scenario can build meets (too_many_cards: too many
cards even without interruptions) or holds the model (no_cluster_holds), raised on the field the
user asked it with, `cluster.target_days`; the sweep path gives its rows the same reasons
(plan.batch). Units: cards, seconds, MFU (a share of peak)."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from estimator.contract.resolve import Resolved
from estimator.errors import FieldError, ScenarioError
from estimator.limits import MAX_CARDS
from estimator.model.compute import SECONDS_PER_DAY, cards_for_deadline
from estimator.money.pricing import model_flops
from estimator.plan.problem import cards_multiple
from estimator.words import counted


def too_many_cards(r: Resolved, mfu: float, largest: int) -> ScenarioError:
    """The deadline cannot be met on any cluster this scenario can build (its network, or
    limits.MAX_CARDS; `largest` cards) even at `mfu` (a record one, or the one given) and without
    interruptions: Time = C / (cards · peak · MFU) needs more cards than that (code
    deadline-needs-too-many-cards). A deadline out of reach only because of the interruptions is
    planned instead, on the fastest cluster the network builds (plan.deadline.within_limit,
    plan.goodput.cards_for_deadline_with_failures), and the plan says it misses."""
    s = r.scenario
    days = float(s.cluster.target_days or 0.0)
    bare = int(need_without_failures(r, mfu))
    params = {
        "target_days": days,
        "tokens": s.training.tokens,
        "cards": bare,
        "mfu": mfu,
        "max_cards": largest,
    }
    message = (
        f"Training {s.training.tokens:.3g} tokens in {counted(days, 'day')} needs at least "
        f"{counted(bare, 'card')} even at an MFU of {mfu:.0%}, more than the {counted(largest, 'card')} "
        f"of the largest cluster this network can build (at most {MAX_CARDS:,} in any case). Allow more "
        "days, train fewer tokens or use switches with more ports (network.switch_ports)."
    )
    return ScenarioError(
        [FieldError("cluster.target_days", message, "deadline-needs-too-many-cards", params)]
    )


def need_without_failures(r: Resolved, mfu: float) -> int:
    """Cards the scenario's deadline (cluster.target_days) needs at `mfu` if nothing failed
    (cards_without_failures of its training FLOP)."""
    seconds = float(r.scenario.cluster.target_days or 0.0) * SECONDS_PER_DAY
    return int(cards_without_failures(r, model_flops(r)["training_flop"], seconds, mfu))


def cards_without_failures(
    r: Resolved, training_flop: npt.ArrayLike, seconds: npt.ArrayLike, mfu: npt.ArrayLike
) -> npt.NDArray[np.int64]:
    """Cards a deadline of `seconds` needs at `mfu` if nothing failed: Time = C / (cards · peak ·
    MFU) (compute.cards_for_deadline), in whole replicas of nodes (cards_multiple). Vectorized."""
    peak = r.accelerator.peak_flops(r.scenario.training.precision)
    return np.asarray(cards_for_deadline(training_flop, seconds, peak, mfu, cards_multiple(r)))


def no_cluster_holds(largest: int) -> ScenarioError:
    """No cluster the network can build, up to `largest` cards, holds the model in memory."""
    message = (
        f"No cluster this network can build (up to {counted(largest, 'card')}) holds the model in HBM: "
        "use an accelerator with more memory, a shorter sequence or switches with more ports "
        "(network.switch_ports)."
    )
    params = {"max_cards": largest}
    return ScenarioError([FieldError("cluster.target_days", message, "no-cluster-holds-the-model", params)])
