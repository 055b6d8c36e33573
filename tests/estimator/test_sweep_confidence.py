"""Sweeps sized for a chance of meeting the deadline (cluster.deadline_confidence, in the base or on
an axis): every row is what estimate() plans for that row's scenario (plan.batch_confidence), its
chance of missing included, and the searches a sweep may ask are capped
(limits.MAX_SWEEP_CONFIDENT_SIZINGS)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from estimator.contract import sweep as estimator_sweep
from estimator.dotted import get_path
from estimator.errors import ScenarioError
from estimator.limits import MAX_SWEEP_CONFIDENT_SIZINGS
from estimator.model.compute import SECONDS_PER_DAY
from estimator.plan.batch import (
    CONFIDENCE_FIELDS,
    GOODPUT_FIELDS,
    SUMMARY_FIELDS,
    evaluate_columns,
)
from estimator.plan.batch_reasons import TOO_LARGE
from estimator.plan.compose import estimate
from tests.estimator.test_deadline_confidence import GIVEN, GIVEN_405B, H100_BF16_PEAK, SEARCHED, _with

MISS = "compute.deadline_miss_probability"


def _rows(base: dict, axes: dict) -> tuple[list[dict], dict]:
    """Each row's scenario (estimator.contract.sweep.scenario_at, what "Full estimate" plans) and the
    sweep path's columns for all of them."""
    _, doc, parsed = estimator_sweep.validate_sweep({"name": "q", "base": base, "axes": axes})
    total = estimator_sweep.scenario_count(parsed)
    scenarios = [estimator_sweep.scenario_at(doc, parsed, i) for i in range(total)]
    return scenarios, evaluate_columns(doc, estimator_sweep.decode(parsed, 0, total))


def _assert_rows_are_estimates(base: dict, axes: dict) -> tuple[list[str | None], dict]:
    """Every row equals estimate() of its scenario: the summary, goodput and confidence figures; a
    row estimate() refuses has no figures and the reason of that refusal. Returns each row's
    refusal code (None where it plans) and the columns."""
    scenarios, out = _rows(base, axes)
    codes: list[str | None] = []
    for i, scenario in enumerate(scenarios):
        try:
            result = estimate(scenario)["result"]
        except ScenarioError as exc:
            code = exc.errors[0].code
            codes.append(code)
            assert not out["ok"][i], i
            assert code == out["reason_code"][i] == TOO_LARGE, i
            assert all(np.isnan(out[f][i]) for f in CONFIDENCE_FIELDS), i
            continue
        codes.append(None)
        assert out["ok"][i], (i, out["error"][i])
        for f in (*SUMMARY_FIELDS, *GOODPUT_FIELDS, *CONFIDENCE_FIELDS):
            expected = get_path(result, f)  # no chance asked: no compute.deadline_confidence, NaN
            if expected is None:
                assert np.isnan(out[f][i]), (i, f)
            else:
                assert out[f][i] == pytest.approx(expected, rel=1e-9), (i, f)
    return codes, out


def test_a_given_mfu_without_failures_is_sized_as_computed_by_hand():
    # tests/estimator/test_deadline_confidence: at MFU 0.4 +-25 % (Triangular(0.3, 0.4, 0.5)) a 90 %
    # chance needs P(MFU < x) = 0.1, x = 0.3 + sqrt(0.002) = 0.344721, so the days at 0.4 may be
    # 30 x x / 0.4 = 25.854: 827.6 cards for 1.5T tokens -> 832 (104 nodes of 8), twice the tokens
    # 1,655.2 -> 1,656 (207 nodes). The chance of missing is P(MFU < 0.4 x days / 30), below the
    # mode (late - 0.3)^2 / ((0.5 - 0.3)(0.4 - 0.3)).
    base = _with(GIVEN, deadline_confidence=0.9)
    _, out = _rows(base, {"training.tokens": [1.5e12, 3e12]})
    assert out["ok"].all()
    x = 0.3 + math.sqrt(0.1 * 0.2 * 0.1)
    need = out["compute.training_flop"] / (30 * x / 0.4 * SECONDS_PER_DAY * H100_BF16_PEAK * 0.4)
    assert need == pytest.approx([827.6, 1655.2], abs=0.1)
    assert out["compute.cards"].tolist() == [832, 1656] == [8 * math.ceil(c / 8) for c in need]
    assert out["compute.deadline_confidence"].tolist() == [0.9, 0.9]
    late = 0.4 * out["compute.wall_clock_days"] / 30
    assert out[MISS] == pytest.approx((late - 0.3) ** 2 / (0.2 * 0.1), rel=1e-9)
    assert (out[MISS] <= 0.1).all()


def test_rows_with_an_mfu_given_and_failures_counted_are_estimates():
    # Llama 3.1 405B, 15T tokens at MFU 0.4 on H100, interruptions at 1.5x: two days is past the
    # largest cluster (refused), 30 days reaches neither chance (the count of lowest chance, its
    # chance of missing above 1 - q), 100 and 200 days reach both
    codes, out = _assert_rows_are_estimates(
        _with(GIVEN_405B, deadline_confidence=0.9),
        {"cluster.target_days": [2, 30, 100, 200], "cluster.deadline_confidence": [0.8, 0.9]},
    )
    assert codes == ["deadline-needs-too-many-cards"] * 2 + [None] * 6
    q = out["compute.deadline_confidence"]
    assert (out[MISS][2:4] > 1 - q[2:4]).all()
    assert (out[MISS][4:] <= 1 - q[4:] + 1e-9).all()


def test_rows_of_a_predicted_mfu_are_estimates_with_the_confidence_an_axis():
    base = SEARCHED[0]  # Llama 3.1 70B on Ascend 910B2, failures counted, the evidence band
    axes = {"training.tokens": [1e12, 2e12], "cluster.deadline_confidence": [0.8, 0.95]}
    codes, out = _assert_rows_are_estimates(base, axes)
    assert codes == [None] * 4
    # more confidence never buys fewer cards, and each row's chance of missing is at most 1 - q
    assert out["compute.cards"][1] > out["compute.cards"][0]
    assert (out[MISS] <= 1 - out["compute.deadline_confidence"] + 1e-9).all()


def test_a_predicted_row_past_every_cluster_is_refused_as_estimate_refuses_it():
    codes, _ = _assert_rows_are_estimates(SEARCHED[0], {"cluster.target_days": [0.5, 30]})
    assert codes == ["deadline-needs-too-many-cards", None]


def test_without_a_confidence_deadline_rows_carry_their_chance_of_missing_as_computed_by_hand():
    # 70B, 1.5T tokens at MFU 0.4 +-25 % (Triangular(0.3, 0.4, 0.5)), failures off, 30 days: the fewest
    # whole nodes that meet it at 0.4, 720 cards (CHANGELOG 2.60.0); the run is late when the MFU is
    # below x = 0.4 x days / 30 (< 0.4, the mode), with chance (x - 0.3)^2 / ((0.5 - 0.3)(0.4 - 0.3)),
    # what estimate() states for every deadline plan (sections.compute.with_deadline_risk)
    out = evaluate_columns(GIVEN, {"training.tokens": np.array([1.5e12, 3e12])})
    assert out["ok"].all()
    assert out["compute.cards"][0] == 720
    x = 0.4 * out["compute.wall_clock_days"] / 30
    assert (x < 0.4).all()
    assert out[MISS] == pytest.approx((x - 0.3) ** 2 / (0.2 * 0.1), rel=1e-12)
    assert np.isnan(out["compute.deadline_confidence"]).all()  # no chance asked
    for tokens, miss in zip((1.5e12, 3e12), out[MISS], strict=True):
        compute = estimate({**GIVEN, "training": {"tokens": tokens}})["result"]["compute"]
        assert miss == pytest.approx(compute["deadline_miss_probability"], rel=1e-12)
    # rows sized by their cards state no deadline, so no chance of missing it
    by_cards = evaluate_columns({**GIVEN, "cluster": {"cards": 720}}, {"training.tokens": np.array([1.5e12])})
    assert by_cards["ok"].all() and all(np.isnan(by_cards[f]).all() for f in CONFIDENCE_FIELDS)


def test_without_a_confidence_rows_with_failures_counted_carry_estimates_chance_of_missing():
    # Llama 3.1 405B, 15T tokens at MFU 0.4 on H100, interruptions at 1.5x: the chance with the
    # interruption count's spread (money.budget.deadline_miss_probability_with_failures), the MFU
    # predicted for 70B on Ascend 910B2 with the evidence band: every planned row as estimate() states it
    plain_405b = {**GIVEN_405B, "cluster": {"target_days": 100}}
    codes, out = _assert_rows_are_estimates(plain_405b, {"cluster.target_days": [2, 60, 100, 200]})
    assert codes == ["deadline-needs-too-many-cards", None, None, None]
    assert np.isfinite(out[MISS][1:]).all() and np.isnan(out["compute.deadline_confidence"]).all()
    plain_70b = {**SEARCHED[0], "cluster": {"target_days": 30}}
    codes, out = _assert_rows_are_estimates(plain_70b, {"training.tokens": [1e12, 2e12]})
    assert codes == [None, None] and np.isfinite(out[MISS]).all()


def test_sweeping_the_cards_drops_the_chance_with_the_deadline():
    base = _with(GIVEN, deadline_confidence=0.9)
    _, doc, _ = estimator_sweep.validate_sweep({"name": "c", "base": base, "axes": {"cluster.cards": [512]}})
    assert doc["cluster"] == {}
    with pytest.raises(ScenarioError) as err:
        estimator_sweep.validate_sweep(
            {
                "name": "c",
                "base": base,
                "axes": {"cluster.cards": [512], "cluster.deadline_confidence": [0.9]},
            }
        )
    assert err.value.errors[0].field == "axes.cluster.cards"


def test_the_searches_a_sweep_asks_are_within_the_work_budget():
    # 101 x 100 = 10,100 sizings > 10,000; a price axis adds rows, not searches: 100 x 100 x 3 is 10,000
    base = _with(GIVEN, deadline_confidence=0.9)
    tokens = {"start": 1e12, "stop": 2e12, "step": 1e10}  # 101 values
    days = {"start": 1, "stop": 100, "step": 1}
    assert MAX_SWEEP_CONFIDENT_SIZINGS == 10_000
    with pytest.raises(ScenarioError) as err:
        estimator_sweep.validate_sweep(
            {"name": "q", "base": base, "axes": {"training.tokens": tokens, "cluster.target_days": days}}
        )
    (e,) = err.value.errors
    assert (e.field, e.code, e.params) == (
        "axes",
        "too-many-confident-sizings",
        {"sizings": 10_100, "max_sizings": 10_000},
    )
    fewer = {**tokens, "stop": 1.99e12}  # 100 values
    prices = {"cost.electricity_per_kwh": [0.05, 0.1, 0.2]}
    axes = {"training.tokens": fewer, "cluster.target_days": days, **prices}
    _, doc, parsed = estimator_sweep.validate_sweep({"name": "q", "base": base, "axes": axes})
    assert estimator_sweep.scenario_count(parsed) == 30_000
    assert estimator_sweep.confident_sizings(doc, parsed) == 10_000
    plain = {**base, "cluster": {"target_days": 30}}  # no confidence: no searches counted
    _, doc, parsed = estimator_sweep.validate_sweep(
        {"name": "q", "base": plain, "axes": {"training.tokens": tokens, "cluster.target_days": days}}
    )
    assert estimator_sweep.confident_sizings(doc, parsed) == 0


def test_a_row_no_count_meets_plans_on_the_fastest_count_for_its_own_tokens():
    """Found by tests/estimator/test_surfaces_agree.py. Qwen3-30B-A3B on A100 at an MFU of 0.25, 5e12
    tokens in half a day, a 50 % chance asked: no count meets it, so the plan takes the count of the
    shortest mean wall clock with failures (plan.goodput.fastest_cards). In a sweep whose group's
    first row has 2e10 tokens, that count was searched for the group scenario's tokens (2e10: the
    work of one row, the failures of another), 55,296 cards instead of the plan's 59,392; each row's
    fallback now takes its own tokens, as a one-row sweep and the plan do."""
    from estimator.contract.resolve import resolve
    from estimator.contract.scenario import validate_shape
    from estimator.plan.goodput import fastest_cards
    from estimator.plan.problem import cards_multiple

    base = {
        "model": {"preset": "qwen3-30b-a3b"},
        "training": {"tokens": 5e12},
        "hardware": {"accelerator": "a100-sxm-80gb"},
        "cluster": {"target_days": 0.5, "deadline_confidence": 0.5},
        "efficiency": {"mfu": 0.25},
    }
    plan = estimate(base)["result"]["compute"]
    assert plan["deadline_miss_probability"] > 0.5  # no count meets the chance asked
    out = evaluate_columns(base, {"training.tokens": np.array([2e10, 5e12])})
    assert out["compute.cards"][1] == plan["cards"]
    # the fastest count depends on the work: the first row's tokens give another one
    r = resolve(validate_shape(base))
    at = [
        fastest_cards(r, 0.25, cards_multiple(r), t, np.ones(1, dtype=bool), 65536)[0] for t in (2e10, 5e12)
    ]
    assert at[1] == plan["cards"] != at[0]


def test_a_chance_axis_without_a_deadline_keeps_the_refusals_code_and_the_value_it_failed_at():
    # sized by cards, a chance axis is refused at its first value (0.5) with resolve's code, so the
    # web layer can say it in the reader's language (and show 0.5 as the 50 % the builder asked)
    base = {**GIVEN, "cluster": {"cards": 1024}}
    with pytest.raises(ScenarioError) as err:
        estimator_sweep.validate_sweep(
            {"name": "q", "base": base, "axes": {"cluster.deadline_confidence": [0.5, 0.9]}}
        )
    (e,) = err.value.errors
    assert (e.field, e.code, e.params) == (
        "axes.cluster.deadline_confidence",
        "confidence-needs-deadline",
        {"axis_value": 0.5},
    )
    assert e.message == "0.5: needs cluster.target_days: it is the chance of finishing by a deadline"
