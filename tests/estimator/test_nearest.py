"""The nearest accepted layouts of a refused fixed layout (estimator.layout.nearest): useful, and found
with bounded work (counted in layouts, not seconds)."""

from __future__ import annotations

import math

import pytest

from estimator import limits
from estimator.contract.resolve import resolve
from estimator.contract.scenario import validate_shape
from estimator.errors import ScenarioError
from estimator.layout import nearest
from estimator.layout.search import LayoutProblem
from estimator.plan.compose import estimate
from estimator.plan.problem import fabric_for, layout_problem

# DeepSeek-V3 at 128K tokens on 768 Ascend 910C with CP 3: 131,072 does not split into 2 x 3 chunks.
DEEPSEEK_CP3 = {
    "model": {"preset": "deepseek-v3"},
    "training": {"tokens": 1e12, "seq_len": 131072},
    "hardware": {"accelerator": "ascend-910c"},
    "cluster": {"cards": 768},
    "parallelism": {"cp": 3},
}
# The layouts of that scenario with nothing fixed (estimator.limits' comment: 2,927,232), over the
# six CP sizes the search takes at 128K (powers of two up to 131,072 / 4,096 = 32: 1, 2, 4, 8, 16, 32).
ALL_LAYOUTS = 2_927_232
PER_CP = ALL_LAYOUTS // 6  # 487,872: no rule the count reads depends on CP at a power-of-two sequence


def _problem(doc: dict) -> LayoutProblem:
    r = resolve(validate_shape(doc), None)
    cards = doc["cluster"]["cards"]
    return layout_problem(r, cards, fabric_for(r, cards))


def test_refused_cp_suggests_the_nearest_cps_each_a_layout_that_plans():
    """CP 4, 2 and 8 in that order: |log2(4/3)| = 0.415 < |log2(2/3)| = 0.585 < |log2(8/3)| = 1.415
    steps. Hand check of the first: TP 16 x CP 4 x DP 12 = 768 cards, 131,072 % (2 x 4) = 0, EP 16
    x expert TP 16 = 256 divides TP x CP x DP = 768. Each one, fixed, is planned (passes the rules
    and fits in HBM) at the MFU the suggestion gave."""
    with pytest.raises(ScenarioError) as info:
        estimate(DEEPSEEK_CP3)
    (err,) = info.value.errors
    assert (err.field, err.code) == ("parallelism.cp", "no-possible-layout")
    suggestions = err.params["suggestions"]
    assert [s["cp"] for s in suggestions] == [4, 2, 8]
    first = suggestions[0]
    assert first["tp"] * first["pp"] * first["cp"] * first["dp"] == 768
    for s in suggestions:
        fixed = {k: v for k, v in s.items() if k != "predicted_mfu"}
        planned = estimate({**DEEPSEEK_CP3, "parallelism": fixed})["result"]
        assert planned["compute"]["mfu"] == pytest.approx(s["predicted_mfu"], rel=1e-9)


def test_the_nearest_search_counts_one_cp_per_probe_and_stops_at_the_layout_budget(monkeypatch):
    """Three probes (CP 4, 2, 8), each a search over one CP size's layouts: 3 x 487,872 = 1,463,616
    layouts, half the 2,927,232 the whole grid had (what this search enumerated before it was
    bounded). With a budget of 1,000,000 the third probe (1,463,616 in all) is not run: two
    suggestions from 2 x 487,872 = 975,744 layouts."""
    problem = _problem(DEEPSEEK_CP3)
    found = nearest.nearest_search(problem)
    assert (found.probes, found.evaluated, len(found.layouts)) == (3, 3 * PER_CP, 3)
    assert found.evaluated < ALL_LAYOUTS
    monkeypatch.setattr(limits, "MAX_LAYOUT_CANDIDATES", 1_000_000)
    capped = nearest.nearest_search(problem)
    assert (capped.probes, capped.evaluated) == (2, 975_744)
    assert [e.cp for e in capped.layouts] == [4, 2]


def test_nothing_fitting_stops_after_the_probe_cap():
    """Llama 3.1 405B on 8 H100: 405e9 x 16 B of model states = 6.5 TB, more than 8 x 80 GB, so no
    value of the fixed fields fits; the search stops after NEAREST_PROBES searches with none."""
    doc = {
        "model": {"preset": "llama-3.1-405b"},
        "training": {"tokens": 1e12},
        "hardware": {"accelerator": "h100-sxm"},
        "cluster": {"cards": 8},
        "parallelism": {"tp": 8, "pp": 1, "zero_stage": 0, "recompute": "none", "micro_batch_size": 1},
    }
    found = nearest.nearest_search(_problem(doc))
    assert found.layouts == [] and found.probes == nearest.NEAREST_PROBES
    assert found.evaluated <= limits.MAX_LAYOUT_CANDIDATES


def test_probes_skip_values_that_cannot_split_the_cards():
    """TP 8 x PP 2 x DP 64 on 1,024 cards: a probe of TP 4, PP 2, DP 64 (512, dividing 1,024, CP
    2 free) is searched; TP 8, PP 2, DP 128 (2,048 cards, DP 128 itself dividing 1,024) is not."""
    relaxed = _problem(
        {
            "model": {"preset": "llama-3.1-70b"},
            "training": {"tokens": 1e12},
            "hardware": {"accelerator": "h100-sxm"},
            "cluster": {"cards": 1024},
        }
    )
    fixed = {"tp": 8, "pp": 2, "dp": 64}
    probes = nearest.probe_order(relaxed, fixed)
    assert {"tp": 4, "pp": 2, "dp": 64} in probes
    assert {"tp": 8, "pp": 2, "dp": 128} not in probes
    assert all(1024 % (p["tp"] * p["pp"] * p["dp"]) == 0 for p in probes)
    steps = [sum(abs(math.log2(p[k] / v)) for k, v in fixed.items()) for p in probes]
    assert steps == sorted(steps) and steps[0] == 1
