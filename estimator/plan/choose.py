"""Choosing the plan's cluster: the given cards, the fastest cluster a budget buys (plan.budget_choice) or the cards
a deadline needs (with failures counted, plan.goodput; without a given MFU by the scan of
plan.deadline), and the refusal when no layout plans on it (plan.refusal)."""

from __future__ import annotations

import dataclasses
import functools

from estimator.cluster.network import Fabric
from estimator.contract.resolve import Resolved
from estimator.layout.search import LayoutSearch
from estimator.model.compute import SECONDS_PER_DAY
from estimator.money.budget import cards_for_budget
from estimator.plan import goodput
from estimator.plan.budget_choice import fastest_affordable
from estimator.plan.chosen import ClusterChoice
from estimator.plan.deadline import (
    SizeMemo,
    candidate_sizes,
    cards_for_given_mfu,
    largest_cluster,
    size_for_deadline,
)
from estimator.plan.deadline_risk import ConfidenceRule, confident_cards, deadline_rule
from estimator.plan.goodput import cards_for_deadline_with_failures
from estimator.plan.problem import cards_multiple, evaluate_at, layout_problem, layouts_at
from estimator.plan.refusal import refusal


def choose_cluster(r: Resolved, training_flop: float, peak: float) -> ClusterChoice:
    """Cards, MFU and layout: the given cards; or, for a deadline with an MFU given, the fewest whole
    nodes (and whole replicas of a fixed layout) that meet it; without an MFU, the smallest round
    cluster size (see candidate_sizes) whose best layout's predicted MFU meets it."""
    s = r.scenario
    given_mfu = s.efficiency.mfu
    if s.cluster.cards is not None:
        cards = s.cluster.cards
        fabric, found = evaluate_at(r, cards)
        return _choice(r, cards, fabric, found, given_mfu)
    if s.cluster.budget is not None:  # the most it buys (money.budget), then the fastest it buys
        most = cards_for_budget(r, cards_multiple(r), given_mfu)
        cards = fastest_affordable(r, most, SizeMemo(r), given_mfu)
        more = most if most > cards else None  # the plan takes fewer: they train faster
        return dataclasses.replace(
            _choice(r, cards, *evaluate_at(r, cards), given_mfu), budget_most_cards=more
        )
    assert s.cluster.target_days is not None  # the scenario requires one way of sizing
    seconds = s.cluster.target_days * SECONDS_PER_DAY
    multiple = cards_multiple(r)

    if given_mfu is not None:  # grown to the smallest round size that fits where need's does not
        memo = SizeMemo(r)
        largest = functools.partial(largest_cluster, r, memo)  # asked where a count may pass it
        if s.cluster.deadline_confidence is not None:  # the chance of missing at most 1 - q
            rule = ConfidenceRule(r, seconds, float(s.cluster.deadline_confidence))
            need = confident_cards(rule, training_flop, peak, given_mfu, multiple, largest)
        else:  # none meets up to what the network builds: its fastest (the plan then says it misses)
            need = int(
                cards_for_deadline_with_failures(
                    r, training_flop, seconds, peak, given_mfu, multiple, largest=largest
                )
            )
        cards = cards_for_given_mfu(r, need, given_mfu, memo)
        return _choice(r, cards, *evaluate_at(r, cards), given_mfu)

    sizes = candidate_sizes(r, multiple)
    met = deadline_rule(r, seconds)  # at the planned MFU, or with cluster.deadline_confidence
    cards, fabric, _ = size_for_deadline(r, sizes, SizeMemo(r), met, goodput.ettr_at(r))
    return _choice(r, cards, fabric, layouts_at(r, cards, fabric), None)


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
