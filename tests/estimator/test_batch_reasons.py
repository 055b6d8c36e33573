"""A sweep row whose deadline no cluster meets reads as estimate() answers the same scenario: past
the largest cluster even without interruptions, refused (deadline-needs-too-many-cards, the row's
its reason code); within it without them but not counting them (more cards fail more often), planned on
the fastest cluster, which misses (estimate()'s deadline-missed; refused as
deadline-unmet-with-failures before 2.59.0, a plan with the MFU predicted and a refusal with it
given).

The reference is estimate() of each row's scenario: its refusal's code (the row's reason code is the
same, plan.batch_reasons), or its plan's cards and verdict."""

from __future__ import annotations

import copy

import numpy as np
import pytest

from estimator.errors import ScenarioError
from estimator.plan.batch import evaluate_columns
from estimator.plan.batch_reasons import TOO_LARGE
from estimator.plan.compose import estimate
from tests.estimator.test_given_mfu_deadline import BASE as GIVEN_MFU_BASE

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


def _expected(base: dict, field: str, value: float) -> tuple[str | None, int | None, bool | None]:
    """(the row's reason, its cards, whether it meets) as estimate() answers the row's scenario."""
    doc = copy.deepcopy(base)
    section, key = field.split(".")
    doc[section][key] = value
    try:
        compute = estimate(doc)["result"]["compute"]
    except ScenarioError as exc:
        code = exc.errors[0].code
    else:
        return None, int(compute["cards"]), bool(compute["meets_target"])
    return code, None, None  # the row carries the code estimate() refuses it with


@pytest.mark.parametrize(("base", "field", "values"), CASES)
def test_a_deadline_row_no_cluster_meets_reads_as_estimate_answers_it(base, field, values):
    out = evaluate_columns(base, {field: np.array(values)})
    expected = [_expected(base, field, v) for v in values]
    assert TOO_LARGE in [e[0] for e in expected] and False in [e[2] for e in expected]  # both in each case
    assert [c or None for c in out["reason_code"].tolist()] == [e[0] for e in expected]
    assert out["ok"].tolist() == [e[0] is None for e in expected]
    for i, (_, cards, _) in enumerate(expected):
        if cards is not None:
            assert int(out["compute.cards"][i]) == cards


def test_without_failures_the_same_deadline_plans_or_is_too_large():
    base = {**GIVEN, "reliability": {"failures": False}}
    out = evaluate_columns(base, {"cluster.target_days": np.array([45.0, 0.5])})
    assert out["ok"].tolist() == [True, False]
    assert out["reason_code"][1] == TOO_LARGE
