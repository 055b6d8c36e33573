"""Budget mode over every catalog preset x every catalog accelerator: each either plans (a layout
the model predicts, finite figures) or is refused with a reason at the budget's field path, in the
one error shape (errors: [{field, message, code?, params?}]); never a crash, never a figure
without a plan (no fallback MFU presented as a prediction)."""

import json
import math

import pytest

from estimator import catalog
from estimator.errors import ScenarioError
from estimator.plan.compose import estimate

LISTING = catalog.catalog_listing()
PRESETS = sorted(LISTING["presets"])
ACCELERATORS = sorted(LISTING["accelerators"])
# USD 600k buys one or two servers of most accelerators and none of the dearest, so the grid meets
# all three outcomes (planned, refused: too small a budget, refused: the model does not fit) and
# each plan searches few cards (the grid stays cheap)
BUDGET = 6e5
OUTCOMES: set[str] = set()


def _plan(doc: dict) -> tuple[dict, ScenarioError | None]:
    try:
        return estimate(doc)["result"], None
    except ScenarioError as exc:
        return {}, exc


@pytest.mark.parametrize("accelerator", ACCELERATORS)
@pytest.mark.parametrize("preset", PRESETS)
def test_every_preset_on_every_accelerator_plans_or_is_refused(preset, accelerator):
    doc = {
        "model": {"preset": preset},
        "training": {"tokens": 1e11},
        "hardware": {"accelerator": accelerator},
        "cluster": {"budget": BUDGET},
    }
    result, exc = _plan(doc)
    if exc is not None:
        shape = json.loads(json.dumps(exc.to_dict(), allow_nan=False))  # what the API answers with
        assert [set(e) >= {"field", "message"} for e in shape["errors"]] == [True] * len(exc.errors)
        assert all(e["field"] == "cluster.budget" and e["message"].strip() for e in shape["errors"]), shape
        assert exc.errors[0].code in ("budget-cards-hold-no-layout", "budget-buys-no-cluster"), exc
        OUTCOMES.add(exc.errors[0].code)
        return
    compute, layout = result["compute"], result["parallelism"]
    assert compute["mfu_source"] == "predicted"
    assert compute["mfu"] == layout["predicted_mfu"] and 0 < compute["mfu"] < 1
    assert compute["cards"] == layout["tp"] * layout["pp"] * layout["cp"] * layout["dp"]
    assert result["cost"]["capex"]["total"] <= BUDGET
    for value in (compute["wall_clock_days"], result["power"]["it_w"], result["cost"]["capex"]["total"]):
        assert math.isfinite(value) and value > 0
    OUTCOMES.add("planned")


@pytest.mark.parametrize(
    ("preset", "accelerator", "outcome"),
    [
        ("llama-3.1-8b", "ascend-910b2", "planned"),
        # 405e9 x 16 bytes of Adam state = 6.5 TB, more than the 16 x 64 GB a 600k budget buys
        ("llama-3.1-405b", "ascend-910b2", "budget-cards-hold-no-layout"),
        ("llama-3.1-8b", "gb200", "budget-buys-no-cluster"),  # a 72-card NVL72 rack costs millions
    ],
)
def test_the_budget_meets_every_outcome(preset, accelerator, outcome):
    """The grid's budget is neither so large nor so small that an outcome goes untested."""
    OUTCOMES.clear()
    test_every_preset_on_every_accelerator_plans_or_is_refused(preset, accelerator)
    assert outcome in OUTCOMES
