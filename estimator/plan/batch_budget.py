"""A sweep group's rows sized by their capital budget (cluster.budget of the group, one value per
group: a structural field of plan.batch), as plan.choose_cluster sizes one scenario: the most cards
the budget buys (money.budget.cards_for_budget: whole nodes whose capex fits), then the fastest of
that size and the round sizes below it (plan.budget_choice.fastest_affordable). What a budget buys
depends on the row's tokens and MFU (the storage it sizes) and its server price (a price axis in the
scenario's currency changes how many servers a budget buys); the running prices (electricity, PUE,
cloud rates, depreciation, utilization) and the budget flag cost.budget change no capex. So one
search per distinct (tokens, MFU, server price) of the group, the rows sharing the group's memo of
searched sizes (the layouts do not depend on them). A row whose budget buys no cluster has no
figures (estimate()'s refusal budget-buys-no-cluster). Units: cards, money in the scenario's
currency."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from estimator.contract.resolve import Resolved
from estimator.errors import ScenarioError
from estimator.money.budget import cards_for_budget
from estimator.plan.budget_choice import fastest_affordable
from estimator.plan.deadline import SizeMemo
from estimator.plan.problem import cards_multiple

# result.budget.affords.most_cards of a budget-sized plan (the JSON name): the most cards the budget
# buys where the plan takes fewer that train faster (NaN otherwise, and on rows not planned)
MOST_CARDS_FIELD = "budget.affords.most_cards"
BUDGET_FIELDS = (MOST_CARDS_FIELD,)
# the price axis that changes capex (money.budget.capex_by_size prices the servers with it)
SERVER_PRICE_FIELD = "cost.server_price"

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True)
class BudgetSizes:
    """The rows' cards (the smallest size where the budget buys nothing), the most the budget buys
    where that is more than `cards` (NaN otherwise) and the rows whose budget buys no cluster."""

    cards: IntArray
    most: FloatArray
    buys_nothing: npt.NDArray[np.bool_]


def row_scenario(r: Resolved, tokens: float, mfu: float, server_price: float) -> Resolved:
    """The group's resolved scenario with one row's tokens, MFU (NaN: predicted) and server price
    (NaN: the catalog's), as estimate() resolves that row's scenario (these fields are read from
    the scenario when the plan is sized: money.pricing.equipment, money.budget, plan.goodput)."""
    s = r.scenario
    update = {
        "training": s.training.model_copy(update={"tokens": tokens}),
        "efficiency": s.efficiency.model_copy(update={"mfu": None if np.isnan(mfu) else mfu}),
        "cost": s.cost.model_copy(update={"server_price": None if np.isnan(server_price) else server_price}),
    }
    return dataclasses.replace(r, scenario=s.model_copy(update=update))


def size_by_budget(r: Resolved, tokens: FloatArray, mfu: FloatArray, server_price: FloatArray) -> BudgetSizes:
    """Cards of each row of a budget-sized group (`tokens`, `mfu` NaN where predicted, `server_price`
    NaN where the catalog's), once per distinct (tokens, MFU, server price)."""
    memo = SizeMemo(r, reuse=True)
    keys = list(zip(tokens.tolist(), mfu.tolist(), server_price.tolist(), strict=True))
    found: dict[tuple[float, float, float], tuple[int, float, bool]] = {}
    for key in dict.fromkeys(keys):
        row = row_scenario(r, *key)
        given = row.scenario.efficiency.mfu
        try:
            most = cards_for_budget(row, cards_multiple(row), given)
        except ScenarioError as exc:
            if exc.errors[0].code != "budget-buys-no-cluster":
                raise
            found[key] = (cards_multiple(row), np.nan, True)
            continue
        cards = fastest_affordable(row, most, memo, given)
        found[key] = (cards, float(most) if most > cards else np.nan, False)
    return BudgetSizes(
        cards=np.array([found[k][0] for k in keys], dtype=np.int64),
        most=np.array([found[k][1] for k in keys], dtype=float),
        buys_nothing=np.array([found[k][2] for k in keys], dtype=bool),
    )
