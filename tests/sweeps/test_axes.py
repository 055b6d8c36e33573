"""estimator.contract.sweep: axis parsing, the product as a mixed radix, chunking, Pareto front (no Django)."""

import itertools

import numpy as np
import pytest

from estimator.contract import sweep as estimator_sweep
from estimator.errors import ScenarioError


def fields(exc: ScenarioError) -> list[str]:
    return [e.field for e in exc.errors]


def test_range_is_inclusive_and_integer_when_integral():
    (axis,) = estimator_sweep.parse_axes({"cluster.cards": {"start": 256, "stop": 1024, "step": 256}})
    assert axis.values == (256, 512, 768, 1024)
    assert axis.array().dtype == np.int64


def test_float_range_has_no_binary_noise():
    (axis,) = estimator_sweep.parse_axes({"efficiency.mfu": {"start": 0.3, "stop": 0.6, "step": 0.1}})
    assert axis.values == (0.3, 0.4, 0.5, 0.6)


def test_decode_matches_itertools_product_in_any_window():
    axes = estimator_sweep.parse_axes({"a.x": [1, 2, 3], "b.y": ["p", "q"], "c.z": [0.5, 1.5, 2.5, 3.5]})
    product = list(itertools.product(*(a.values for a in axes)))
    assert estimator_sweep.scenario_count(axes) == len(product) == 24
    for start, stop in [(0, 24), (5, 17), (23, 24)]:
        cols = estimator_sweep.decode(axes, start, stop)
        got = list(zip(*(cols[a.field].tolist() for a in axes), strict=True))
        assert got == product[start:stop]
    assert [estimator_sweep.digits(axes, i) for i in (0, 23)] == [[0, 0, 0], [2, 1, 3]]


def test_chunks_cover_every_scenario_once():
    ranges = estimator_sweep.chunk_ranges(100_001, 25_000)
    assert ranges[0] == (0, 25_000) and ranges[-1] == (100_000, 100_001)
    covered = np.concatenate([np.arange(a, b) for a, b in ranges])
    assert np.array_equal(covered, np.arange(100_001))


def test_scenario_at_substitutes_axis_values_and_drops_the_excluded_field():
    base = {"cluster": {"target_days": 30}, "hardware": {"accelerator": "h100-sxm"}}
    axes = estimator_sweep.parse_axes({"cluster.cards": [8, 16], "hardware.accelerator": ["a", "b"]})
    doc = estimator_sweep.scenario_at(base, axes, 3)
    assert doc["cluster"] == {"cards": 16} and doc["hardware"]["accelerator"] == "b"
    assert base["cluster"] == {"target_days": 30}  # the base is not modified


@pytest.mark.parametrize(
    ("axes", "field"),
    [
        ({}, "axes"),
        ([["cluster.cards", 1]], "axes"),
        ({"cluster.cards": []}, "axes.cluster.cards"),
        ({"cluster.cards": 5}, "axes.cluster.cards"),
        ({"cluster.cards": [1, "two"]}, "axes.cluster.cards"),
        ({"cluster.cards": [None]}, "axes.cluster.cards"),
        ({"cluster.cards": [{"x": 1}]}, "axes.cluster.cards"),
        ({"cluster.cards": [1, 1]}, "axes.cluster.cards"),
        ({"cluster.cards": {"start": 1, "stop": 10}}, "axes.cluster.cards.step"),
        ({"cluster.cards": {"start": 1, "stop": 10, "step": 0}}, "axes.cluster.cards.step"),
        ({"cluster.cards": {"start": 10, "stop": 1, "step": 1}}, "axes.cluster.cards.stop"),
        ({"cluster.cards": {"start": "1", "stop": 10, "step": 1}}, "axes.cluster.cards.start"),
        ({"cluster": [1]}, "axes.cluster"),
        ({"cluster.cards": [1], "cluster.target_days": [30]}, "axes.cluster.cards"),
    ],
)
def test_bad_axes_name_the_field(axes, field):
    with pytest.raises(ScenarioError) as info:
        estimator_sweep.parse_axes(axes)
    assert field in fields(info.value)


def test_too_many_scenarios_is_refused_before_anything_runs():
    axes = {
        "cluster.cards": {"start": 1, "stop": 2000, "step": 1},
        "efficiency.mfu": {"start": 0.001, "stop": 1, "step": 0.001},
    }
    with pytest.raises(ScenarioError) as info:
        estimator_sweep.parse_axes(axes, max_scenarios=1_000_000)
    assert fields(info.value) == ["axes"]
    assert "2,000,000" in info.value.errors[0].message


def test_pareto_front_equals_brute_force():
    rng = np.random.default_rng(7)
    x, y = rng.random(3000), rng.random(3000)
    x[::50] = np.nan
    front = set(estimator_sweep.pareto_front(x, y).tolist())
    ok = np.isfinite(x)
    brute = {
        i
        for i in np.flatnonzero(ok)
        if not np.any(ok & (x <= x[i]) & (y <= y[i]) & ((x < x[i]) | (y < y[i])))
    }
    assert front == brute


class TestValidateAgainstTheScenarioContract:
    """validate_sweep parses the base with axis values substituted, so errors name the axis."""

    def run(self, base, axes):
        return estimator_sweep.validate_sweep({"name": "t", "base": base, "axes": axes})

    def test_a_good_request(self, base):
        name, _doc, axes = self.run(
            base, {"hardware.accelerator": ["h100-sxm", "ascend-910b2"], "cluster.cards": [512, 1024]}
        )
        assert name == "t" and estimator_sweep.scenario_count(axes) == 4

    def test_target_days_base_can_sweep_cards(self, base):
        base["cluster"] = {"target_days": 30}
        _, doc, _ = self.run(base, {"cluster.cards": [512, 1024]})
        assert "target_days" not in doc["cluster"]

    @pytest.mark.parametrize(
        ("axes", "field"),
        [
            ({"cluster.cardz": [1, 2]}, "axes.cluster.cardz"),
            ({"nosuch.field": [1]}, "axes.nosuch.field"),
            ({"hardware.accelerator": ["h100-sxm", "no-such-chip"]}, "axes.hardware.accelerator"),
            ({"cluster.cards": [512, -8]}, "axes.cluster.cards"),
            ({"cluster.cards": [512.5]}, "axes.cluster.cards"),
            ({"efficiency.mfu": ["high"]}, "axes.efficiency.mfu"),
            ({"efficiency.mfu": [0.5, 1.5]}, "axes.efficiency.mfu"),
        ],
    )
    def test_values_the_scenario_rejects(self, base, axes, field):
        with pytest.raises(ScenarioError) as info:
            self.run(base, axes)
        assert field in fields(info.value), info.value.to_dict()

    def test_a_bad_base_names_base(self, base):
        base["training"]["tokens"] = -1
        with pytest.raises(ScenarioError) as info:
            self.run(base, {"cluster.cards": [512]})
        assert fields(info.value) == ["base.training.tokens"]


def test_a_base_fault_no_axis_fixes_is_refused(base):
    base["model"] = {"preset": "no-such-model"}
    with pytest.raises(ScenarioError) as info:
        estimator_sweep.validate_sweep({"base": base, "axes": {"cluster.cards": [512, 1024]}})
    assert fields(info.value) == ["base.model.preset"]


def test_cross_field_conflicts_of_some_rows_are_left_to_those_rows(base):
    base["parallelism"] = {"tp": 8, "pp": 4, "dp": 8}  # 256 cards exactly
    _, _, axes = estimator_sweep.validate_sweep({"base": base, "axes": {"cluster.cards": [256, 512]}})
    assert estimator_sweep.scenario_count(axes) == 2
