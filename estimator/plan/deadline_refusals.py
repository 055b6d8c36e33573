"""The refusals of a deadline no cluster this scenario can build meets (too_many_cards: too many
cards even without interruptions, or out of reach only because of them) or holds the model
(no_cluster_holds), raised on the field the user asked it with, `cluster.target_days`; the sweep
path gives its rows the same reasons (plan.batch). Units: cards, seconds, MFU (a share of peak)."""

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
    limits.MAX_CARDS; `largest` cards) even at `mfu` (a record one, or the one given). The need
    with interruptions counted grows without bound where more cards fail too often, so the
    refusal states the need without them (Time = C / (cards · peak · MFU)), and says so when
    only the interruptions put it past the largest cluster (code deadline-unmet-with-failures)."""
    s = r.scenario
    days = float(s.cluster.target_days or 0.0)
    bare = int(cards_without_failures(r, model_flops(r)["training_flop"], days * SECONDS_PER_DAY, mfu))
    params = {
        "target_days": days,
        "tokens": s.training.tokens,
        "cards": bare,
        "mfu": mfu,
        "max_cards": largest,
    }
    asked = f"Training {s.training.tokens:.3g} tokens in {counted(days, 'day')}"
    if only_interruptions(bare, largest):
        code = "deadline-unmet-with-failures"
        message = (
            f"{asked} needs {counted(bare, 'card')} at an MFU of {mfu:.0%} without interruptions, but "
            f"counting them no cluster up to the {counted(largest, 'card')} this network can build "
            "finishes in time: more cards are interrupted more often. Allow more days, train fewer "
            "tokens or restart faster (reliability.detection_s, rescheduling_s)."
        )
    else:
        code = "deadline-needs-too-many-cards"
        message = (
            f"{asked} needs at least {counted(bare, 'card')} even at an MFU of {mfu:.0%}, more than the "
            f"{counted(largest, 'card')} of the largest cluster this network can build (at most "
            f"{MAX_CARDS:,} in any case). Allow more days, train fewer tokens or use switches with more "
            "ports (network.switch_ports)."
        )
    return ScenarioError([FieldError("cluster.target_days", message, code, params)])


def cards_without_failures(
    r: Resolved, training_flop: npt.ArrayLike, seconds: npt.ArrayLike, mfu: npt.ArrayLike
) -> npt.NDArray[np.int64]:
    """Cards a deadline of `seconds` needs at `mfu` if nothing failed: Time = C / (cards · peak ·
    MFU) (compute.cards_for_deadline), in whole replicas of nodes (cards_multiple). Vectorized."""
    peak = r.accelerator.peak_flops(r.scenario.training.precision)
    return np.asarray(cards_for_deadline(training_flop, seconds, peak, mfu, cards_multiple(r)))


def only_interruptions(bare: npt.ArrayLike, largest: int) -> npt.NDArray[np.bool_]:
    """Whether a deadline no cluster up to `largest` cards meets is out of reach only because of
    its interruptions: its need without them (`bare` cards, cards_without_failures) is within
    `largest` (refusal code deadline-unmet-with-failures, else deadline-needs-too-many-cards).
    Used by too_many_cards and by a sweep row's reason (plan.batch)."""
    return np.asarray(bare) <= largest


def no_cluster_holds(largest: int) -> ScenarioError:
    """No cluster the network can build, up to `largest` cards, holds the model in memory."""
    message = (
        f"No cluster this network can build (up to {counted(largest, 'card')}) holds the model in HBM: "
        "use an accelerator with more memory, a shorter sequence or switches with more ports "
        "(network.switch_ports)."
    )
    params = {"max_cards": largest}
    return ScenarioError([FieldError("cluster.target_days", message, "no-cluster-holds-the-model", params)])
