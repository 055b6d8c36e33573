"""A sweep row refused for its deadline gives the reason estimate() gives for the same scenario:
past the largest cluster even without interruptions (deadline-needs-too-many-cards), or within it
without them but not counting them (deadline-unmet-with-failures: more cards fail more often, so
allowing more days or restarting faster helps and switches with more ports do not). Before, every
such row read "needs more cards than the largest cluster", the advice of the other refusal.

The reference is estimate() of each row's scenario, its code mapped onto the row's sentence."""

from __future__ import annotations

import copy

import numpy as np
import pytest

from estimator.errors import ScenarioError
from estimator.plan.batch import TOO_LARGE, UNMET_WITH_FAILURES, evaluate_columns
from estimator.plan.compose import estimate
from tests.estimator.test_given_mfu_deadline import BASE as GIVEN_MFU_BASE

SENTENCE = {
    "deadline-needs-too-many-cards": TOO_LARGE,
    "deadline-unmet-with-failures": UNMET_WITH_FAILURES,
}
# Llama 3.1 405B on H100s in one day, MFU from the layout model: 1e11 tokens plan; 1e12 need ~43,700
# cards without interruptions (inside the 65,536 a 64-port fabric holds) but none meets it counting
# them (tests/estimator/test_deadline_limits.py); 1e16 need ~4e8 cards in any case.
PREDICTED = {
    "model": {"preset": "llama-3.1-405b"},
    "training": {"tokens": 1e11, "seq_len": 4096},
    "hardware": {"accelerator": "h100-sxm"},
    "cluster": {"target_days": 1},
}
# The same model, 15T tokens at a given MFU of 40% (tests/estimator/test_given_mfu_deadline.py): 60
# days plan; 45 days only the interruptions make impossible; half a day needs ~5 million cards.
GIVEN = GIVEN_MFU_BASE
CASES = [
    (PREDICTED, "training.tokens", [1e11, 1e12, 1e16]),
    # the group validates with its first row: 1e12 tokens in a millisecond's worth of days
    ({**PREDICTED, "training": {"tokens": 1e12, "seq_len": 4096}}, "cluster.target_days", [0.001, 1.0, 3.0]),
    (GIVEN, "cluster.target_days", [60.0, 45.0, 0.5]),
    (GIVEN, "training.tokens", [1e16, 15e12, 20e12]),
]


def _expected(base: dict, field: str, value: float) -> str | None:
    doc = copy.deepcopy(base)
    section, key = field.split(".")
    doc[section][key] = value
    try:
        estimate(doc)
    except ScenarioError as exc:
        return SENTENCE[exc.errors[0].code]
    return None


@pytest.mark.parametrize(("base", "field", "values"), CASES)
def test_a_refused_deadline_row_reads_as_estimate_refuses_it(base, field, values):
    out = evaluate_columns(base, {field: np.array(values)})
    expected = [_expected(base, field, v) for v in values]
    assert UNMET_WITH_FAILURES in expected and TOO_LARGE in expected  # both refusals in each case
    assert list(out["error"]) == expected
    assert out["ok"].tolist() == [e is None for e in expected]


def test_without_failures_the_same_deadline_plans_or_is_too_large():
    base = {**GIVEN, "reliability": {"failures": False}}
    out = evaluate_columns(base, {"cluster.target_days": np.array([45.0, 0.5])})
    assert out["ok"].tolist() == [True, False]
    assert out["error"][1] == TOO_LARGE
