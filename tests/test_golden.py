"""Golden results (tests/golden): results move only with an ENGINE_VERSION bump and a CHANGELOG entry.

When a test here fails after an intended change of results: bump ENGINE_VERSION in
estimator/__init__.py, add a `## x.y.z` entry to CHANGELOG.md saying what moved and why, then run
`python -m tests.golden --update` (it refuses to record new figures under an old version).
"""

from __future__ import annotations

import json

import pytest

from estimator import ENGINE_VERSION
from tests import golden

SCENARIOS = json.loads(golden.SCENARIOS.read_text(encoding="utf-8"))
STORED = golden.load(golden.RESULTS)
VERSIONS = golden.load(golden.VERSIONS)


def test_the_fixed_scenarios_cover_the_engine_s_paths():
    kinds = json.dumps(SCENARIOS)
    for needle in ('"cards"', '"target_days"', '"mfu"', "deepseek-v3", "ascend-", '"parallelism"', "serving"):
        assert needle in kinds
    assert 8 <= len(SCENARIOS) <= 12 and set(STORED) == set(SCENARIOS)


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_results_have_not_moved(name):
    from estimator.plan.compose import estimate

    now = golden.flatten(estimate(SCENARIOS[name])["result"])
    stored = STORED[name]
    moved = {
        k: (stored.get(k), now.get(k)) for k in sorted(set(now) | set(stored)) if stored.get(k) != now.get(k)
    }
    assert moved == {}, (
        f"results moved for {name!r} ({len(moved)} figures); if intended: bump ENGINE_VERSION, add a "
        "CHANGELOG.md entry and run `python -m tests.golden --update`"
    )


def test_stored_results_are_recorded_under_the_engine_version():
    assert VERSIONS.get(ENGINE_VERSION) == golden.digest(STORED), (
        "tests/golden/results.json changed without a new ENGINE_VERSION (or was edited by hand): "
        "regenerate with `python -m tests.golden --update`"
    )


def test_changelog_has_an_entry_for_every_recorded_version():
    documented = golden.changelog_versions()
    assert documented[0] == ENGINE_VERSION
    assert set(VERSIONS) <= set(documented)


def test_flatten_rounds_and_drops_wording():
    flat = golden.flatten({"a": {"b": 1.23456789, "message": "x"}, "w": [{"code": "c", "message": "m"}]})
    assert flat == {"a.b": 1.23457, "w.0.code": "c"}
