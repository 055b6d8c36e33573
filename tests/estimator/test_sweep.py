"""estimator.contract.sweep: what a sweep refuses before any row is computed."""

import pytest


def test_budget_sizing_is_refused_in_sweeps_with_the_field_path():
    from estimator.contract.sweep import validate_sweep
    from estimator.errors import ScenarioError

    base = {
        "model": {"preset": "llama-3.1-70b"},
        "training": {"tokens": 5e11},
        "hardware": {"accelerator": "h100-sxm"},
        "cluster": {"budget": 5e7},
    }
    axes = {"hardware.accelerator": ["h100-sxm", "ascend-910b2"]}
    with pytest.raises(ScenarioError) as err:
        validate_sweep({"name": "x", "base": base, "axes": axes})
    assert err.value.errors[0].field == "base.cluster.budget"
    axes = {"cluster.budget": [1e7, 2e7]}
    base = {**base, "cluster": {"cards": 64}}
    with pytest.raises(ScenarioError) as err:
        validate_sweep({"name": "x", "base": base, "axes": axes})
    assert err.value.errors[0].field == "axes.cluster.budget"
