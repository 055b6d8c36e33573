"""cluster.deadline_confidence: a deadline plan sized for a chance of meeting its deadline.

The hand-computed case: failures off and an MFU of 0.4 given without a range, so the MFU is
Triangular(0.3, 0.4, 0.5) (plan.mfu_range: +-25 % assumed) and the run is late exactly when the
MFU falls below 0.4 x days(cards) / T. For a 90 % chance of meeting, P(MFU < x) = 0.1 below the
mode: (x - 0.3)^2 / ((0.5 - 0.3)(0.4 - 0.3)) = 0.1, x = 0.3 + sqrt(0.002) = 0.344721; the days at
0.4 may be at most T x / 0.4 = 25.854 of T = 30, so the cards are
C / (25.854 d x 86,400 s x 989.4 TFLOP/s x 0.4) = 827.6 -> 104 nodes of 8 = 832 cards (720 without
the confidence: 713.2 at 30 days, 90 nodes). The searched cases are checked against the chance of
missing of the same scenario planned on each round size (cluster.cards, its own fabric, storage,
layout and MFU band), computed from that plan's sections with money.budget's formula."""

import math

import numpy as np
import pytest

from estimator.contract.resolve import resolve
from estimator.contract.scenario import validate_shape
from estimator.errors import ScenarioError
from estimator.model.compute import SECONDS_PER_DAY
from estimator.money import budget, pricing
from estimator.plan import compose as plan
from estimator.plan.deadline_risk import ConfidenceRule
from estimator.plan.goodput import at_cards_of
from estimator.plan.goodput_section import count_shape

GIVEN = {
    "model": {"preset": "llama-3.1-70b"},
    "training": {"tokens": 1.5e12},
    "hardware": {"accelerator": "h100-sxm"},
    "efficiency": {"mfu": 0.4},
    "reliability": {"failures": False},
    "cluster": {"target_days": 30},
}
H100_BF16_PEAK = 989.4e12  # FLOP/s, the catalog's dense BF16 peak of the H100 SXM5


def _with(doc: dict, **cluster) -> dict:
    return {**doc, "cluster": {**doc["cluster"], **cluster}}


def _compute(doc: dict) -> dict:
    return plan.estimate(doc)["result"]["compute"]


def test_a_given_mfu_is_sized_for_its_confidence_as_computed_by_hand():
    c = _compute(_with(GIVEN, deadline_confidence=0.9))
    x = 0.3 + math.sqrt(0.1 * 0.2 * 0.1)
    assert x == pytest.approx(0.344721, abs=1e-6)
    days_allowed = 30 * x / 0.4
    need = c["training_flop"] / (days_allowed * SECONDS_PER_DAY * H100_BF16_PEAK * 0.4)
    assert need == pytest.approx(827.6, abs=0.1)
    assert c["cards"] == 832 == 8 * math.ceil(need / 8)
    assert c["deadline_confidence"] == 0.9
    assert c["meets_target"] is True
    late_mfu = 0.4 * c["wall_clock_days"] / 30  # below it the run is late
    assert c["deadline_miss_probability"] == pytest.approx((late_mfu - 0.3) ** 2 / (0.2 * 0.1), rel=1e-9)
    assert c["deadline_miss_probability"] <= 0.1


def test_without_a_confidence_the_given_mfu_plan_is_sized_at_the_mfu():
    c = _compute(GIVEN)
    assert c["cards"] == 720  # 713.2 cards at 30 days, 90 nodes
    assert "deadline_confidence" not in c
    assert c["deadline_miss_probability"] > 0.4  # the mode is the MFU: about half the draws are late


def test_more_confidence_never_buys_fewer_cards():
    cards = [_compute(_with(GIVEN, deadline_confidence=q))["cards"] for q in (0.5, 0.7, 0.9, 0.99)]
    assert cards == sorted(cards)
    assert cards[0] < cards[-1]


SEARCHED = [
    {
        "model": {"preset": "llama-3.1-70b"},
        "training": {"tokens": 2e12},
        "hardware": {"accelerator": "ascend-910b2"},
        "cluster": {"target_days": 30, "deadline_confidence": 0.9},
    },
    {
        "model": {"preset": "qwen3-30b-a3b"},
        "training": {"tokens": 5e12},
        "hardware": {"accelerator": "h800-sxm"},
        "cluster": {"target_days": 14, "deadline_confidence": 0.8},
    },
    {  # CloudMatrix 384 supernodes: whole supernodes of 384 cards
        "model": {"preset": "deepseek-v3"},
        "training": {"tokens": 14.8e12},
        "hardware": {"accelerator": "ascend-910c"},
        "cluster": {"target_days": 90, "deadline_confidence": 0.9},
    },
    {  # 128K tokens on CP layouts; failures off: the triangular CDF alone
        "model": {"preset": "llama-3.1-8b"},
        "training": {"tokens": 2e11, "seq_len": 131072, "global_batch_tokens": 16 * 2**20},
        "hardware": {"accelerator": "h100-sxm"},
        "reliability": {"failures": False},
        "cluster": {"target_days": 7, "deadline_confidence": 0.75},
    },
]
SEARCHED_IDS = ["70b-910b2", "qwen3-moe-h800", "deepseek-v3-910c", "8b-128k-h100"]
NO_LAYOUT_REACHES = 2.0  # an MFU no layout reaches (tests/estimator/test_sizing.py)


def _miss_on(doc: dict, cards: int) -> float | None:
    """The chance of missing doc's deadline of the same scenario planned on `cards` cards (None where
    no layout plans there), from that plan's sections: money.budget's formulas on its goodput, its
    interruption rates' Gamma shape and its MFU triangle (result.uncertainty.inputs.mfu)."""
    target = doc["cluster"]["target_days"]
    given = {**doc, "cluster": {"cards": cards}}
    try:
        res = plan.estimate(given)["result"]
    except ScenarioError:
        return None
    tri = tuple(res["uncertainty"]["inputs"]["mfu"])
    g = res["goodput"]
    if not g["failures_counted"]:
        return budget.deadline_miss_probability(g["wall_clock_days"], target, *tri)
    lost = g["lost_days"]
    shape = count_shape(resolve(validate_shape(given)), g["interruptions_by_cause"])
    return budget.deadline_miss_probability_with_failures(
        target,
        g["compute_days"] + lost["checkpoints"] + lost["planned"],
        g["expected_unexpected_interruptions"],
        (g["rework_per_interruption_s"] + g["restart_s"]) / SECONDS_PER_DAY,
        shape,
        tri,
    )


@pytest.mark.parametrize("doc", SEARCHED, ids=SEARCHED_IDS)
def test_a_searched_plan_takes_the_first_round_size_that_reaches_its_confidence(doc):
    r = resolve(validate_shape(doc))
    allowed = 1 - doc["cluster"]["deadline_confidence"]
    c = _compute(doc)
    assert c["meets_target"] is True
    assert c["deadline_miss_probability"] <= allowed
    assert _miss_on(doc, c["cards"]) == pytest.approx(c["deadline_miss_probability"], rel=1e-6, abs=1e-9)
    # every round size below, from what no layout's MFU could do without failures, misses more often
    flop = pricing.model_flops(r)["training_flop"]
    peak = r.accelerator.peak_flops(r.scenario.training.precision)
    sizes = plan.candidate_sizes(r, plan.cards_multiple(r))
    floor = flop / (doc["cluster"]["target_days"] * SECONDS_PER_DAY * peak * NO_LAYOUT_REACHES)
    below = [int(s) for s in sizes[(sizes >= floor) & (sizes < c["cards"])]]
    assert below, "the case should have round sizes below its plan"
    for cards in below:
        miss = _miss_on(doc, cards)
        assert miss is None or miss > allowed, cards


@pytest.mark.parametrize("doc", SEARCHED[:2], ids=SEARCHED_IDS[:2])
def test_asking_for_confidence_buys_more_cards_than_the_planned_mfu(doc):
    point = dict(doc, cluster={"target_days": doc["cluster"]["target_days"]})
    assert _compute(doc)["cards"] > _compute(point)["cards"]
    assert _compute(point)["deadline_miss_probability"] > 1 - doc["cluster"]["deadline_confidence"]


SLOW_405B = {  # 1.5x the vendor's interruption rate: no cluster finishes 15T tokens in 90 days
    "model": {"preset": "llama-3.1-405b"},
    "training": {"tokens": 15e12},
    "hardware": {"accelerator": "h100-sxm"},
    "reliability": {"rate_scale": 1.5},
    "cluster": {"target_days": 90},
}


def _wall_days_on(doc: dict, cards: int) -> float:
    """Mean wall-clock days with failures of doc planned on `cards` cards."""
    return plan.estimate({**doc, "cluster": {"cards": cards}})["result"]["goodput"]["wall_clock_days"]


def test_no_size_reaching_the_confidence_keeps_the_fastest_and_says_so():
    res = plan.estimate(_with(SLOW_405B, deadline_confidence=0.99))["result"]
    assert res["compute"]["meets_target"] is False
    assert res["compute"]["deadline_miss_probability"] > 0.01
    codes = [w["code"] for w in res["warnings"]]
    assert "deadline-confidence-missed" in codes
    assert "deadline-missed" not in codes


SHORT_405B = {**SLOW_405B, "reliability": {}, "cluster": {"target_days": 32}}  # default rates


@pytest.mark.parametrize(
    ("doc", "offered"),
    [(SLOW_405B, 16384), (SHORT_405B, 20480)],
    ids=["90d-1.5x-interruptions", "32d"],
)
def test_where_no_size_meets_the_plan_is_the_fastest_round_size_even_below_the_scans_start(doc, offered):
    res = plan.estimate(doc)["result"]
    assert res["compute"]["meets_target"] is False
    r = resolve(validate_shape(doc))
    sizes = [int(s) for s in plan.candidate_sizes(r, plan.cards_multiple(r)) if 4096 <= s <= 24576]
    walls = {c: _wall_days_on(doc, c) for c in sizes}
    fastest = min(walls, key=walls.get)
    assert res["compute"]["cards"] == fastest == 10240
    assert res["goodput"]["wall_clock_days"] == pytest.approx(walls[fastest], rel=1e-9)
    assert walls[offered] > 1.4 * walls[fastest]  # the size the sizes above the scan's start offered


def test_a_confidence_without_a_deadline_is_refused_on_its_field():
    with pytest.raises(ScenarioError) as err:
        resolve(
            validate_shape(
                {
                    "model": {"preset": "llama-3.1-8b"},
                    "training": {"tokens": 1e12},
                    "cluster": {"cards": 64, "deadline_confidence": 0.9},
                }
            )
        )
    assert err.value.errors[0].field == "cluster.deadline_confidence"
    assert err.value.errors[0].code == "confidence-needs-deadline"


@pytest.mark.parametrize("q", [0.4, 1.0, 0.995])
def test_a_confidence_outside_half_to_99_percent_is_refused(q):
    with pytest.raises(ScenarioError) as err:
        validate_shape(
            {
                "model": {"preset": "llama-3.1-8b"},
                "training": {"tokens": 1e12},
                "cluster": {"target_days": 30, "deadline_confidence": q},
            }
        )
    assert err.value.errors[0].field == "cluster.deadline_confidence"


GIVEN_405B = {  # an MFU given, interruptions at 1.5x: at 100 days 90% and 99% are reachable, at 88 days 90% is not
    "model": {"preset": "llama-3.1-405b"},
    "training": {"tokens": 15e12},
    "hardware": {"accelerator": "h100-sxm"},
    "efficiency": {"mfu": 0.4},
    "reliability": {"rate_scale": 1.5},
    "cluster": {"target_days": 100},
}


def _mean_wall_days(doc: dict, cards: int, mfu: float) -> float:
    """The mean wall clock with failures of doc's scenario on `cards` at `mfu` (plan.goodput.at_cards_of,
    what the goodput section reports), at any count, a layout or not."""
    r = resolve(validate_shape(doc))
    return (
        float(at_cards_of(r, spread=False)(np.array([cards]), np.array([mfu]))["wall_s"][0]) / SECONDS_PER_DAY
    )


def test_an_unreachable_confidence_with_a_given_mfu_takes_the_fastest_count():
    reached = _compute(_with(GIVEN_405B, deadline_confidence=0.9))
    # 99% at 100 days: 31,112 cards miss with a chance of 0.998% and one node fewer with 1.0005%
    # (the rule's own chances); no layout plans on 31,112 cards, so the plan takes the next round
    # size that fits, 32,000 (plan.sizing.cards_for_given_mfu), and states its 0.79%. Before 2.59.0
    # the doubling search stepped over them and called 99% out of reach
    surely_doc = _with(GIVEN_405B, deadline_confidence=0.99)
    surely = _compute(surely_doc)
    assert surely["meets_target"] is True and surely["deadline_miss_probability"] <= 0.01
    rule = ConfidenceRule(resolve(validate_shape(surely_doc)), 100 * SECONDS_PER_DAY, 0.99)
    first = np.array([31112, 31104])
    assert rule.chances(first, np.full(2, 0.4), [None, None]).tolist() == [
        pytest.approx(0.009978, abs=1e-6),
        pytest.approx(0.010005, abs=1e-6),
    ]
    assert surely["cards"] == 32000 and _miss_on(surely_doc, 31112) is None  # no layout there
    assert reached["meets_target"] is True and reached["deadline_miss_probability"] <= 0.1
    # 88 days: no count reaches 90% (the fastest, 32,768 cards, misses with 13.2%; 90 days became
    # reachable at 9.99% with 2.82.0's faster reload); the plan keeps the fastest count, as a
    # deadline no count meets does (before 2.60.0 the count of lowest chance, noise where the
    # chance is flat)
    doc = _with({**GIVEN_405B, "cluster": {"target_days": 88}}, deadline_confidence=0.9)
    res = plan.estimate(doc)["result"]
    missed, wall = res["compute"], res["goodput"]["wall_clock_days"]
    assert missed["meets_target"] is False and missed["deadline_miss_probability"] > 0.1
    assert "deadline-confidence-missed" in [w["code"] for w in res["warnings"]]
    assert missed["deadline_miss_probability"] == pytest.approx(_miss_on(doc, missed["cards"]), rel=1e-6)
    assert _mean_wall_days(doc, missed["cards"], 0.4) == pytest.approx(wall, rel=1e-9)
    for other in (missed["cards"] - 8, missed["cards"] + 8, missed["cards"] // 2, 2 * missed["cards"]):
        assert _mean_wall_days(doc, other, 0.4) >= wall * (1 - 1e-12), other
    no_confidence = {**doc, "cluster": {"target_days": 30}}  # 30 days: no count meets, the fastest
    assert plan.estimate(no_confidence)["result"]["compute"]["cards"] == missed["cards"]


def test_a_plan_sized_at_its_mfu_that_likely_misses_says_how_to_size_for_the_chance():
    doc = SEARCHED[2]  # DeepSeek-V3 on 910C: the band leans below the prediction
    point = _compute({**doc, "cluster": {"target_days": 90}})
    res = plan.estimate({**doc, "cluster": {"target_days": 90}})["result"]
    assert point["meets_target"] is True and point["deadline_miss_probability"] > 0.5
    likely = [w for w in res["warnings"] if w["code"] == "deadline-likely-missed"]
    assert len(likely) == 1 and likely[0]["params"]["probability"] == point["deadline_miss_probability"]
    sized = plan.estimate(doc)["result"]["warnings"]  # asked for 90 %: nothing to say
    assert "deadline-likely-missed" not in [w["code"] for w in sized]
    given = plan.estimate(GIVEN)["result"]  # a given MFU's symmetric range: about half the draws late
    assert given["compute"]["deadline_miss_probability"] <= 0.5
    assert "deadline-likely-missed" not in [w["code"] for w in given["warnings"]]


def test_a_predicted_mfu_with_a_range_given_is_sized_on_that_range():
    doc = _with(SEARCHED[1], deadline_confidence=0.8)
    doc = {**doc, "efficiency": {"mfu_range": [0.05, 0.5]}}  # wide: more cards than the evidence band
    c = _compute(doc)
    res = plan.estimate(doc)["result"]
    assert res["uncertainty"]["mfu_band"]["source"] == "given-range"
    assert c["deadline_miss_probability"] == pytest.approx(_miss_on(doc, c["cards"]), rel=1e-6)
    assert c["meets_target"] is True and c["deadline_miss_probability"] <= 0.2
    assert c["cards"] > _compute(_with(SEARCHED[1], deadline_confidence=0.8))["cards"]  # the evidence band's


PILOTED = {  # Llama 3.1 8B calibrated on an 8-card pilot that measured 8,000 tokens/s per card
    "model": {"preset": "llama-3.1-8b"},
    "training": {"tokens": 1e12, "seq_len": 8192, "global_batch_tokens": 512 * 8192},
    "hardware": {"accelerator": "h100-sxm", "server": "dgx-h100"},
    "calibration": {
        "pilot": {
            "cards": 8,
            "seq_len": 8192,
            "global_batch_tokens": 64 * 8192,
            "measured_tokens_per_s_per_card": 8000,
        }
    },
    "cluster": {"target_days": 10},
}


def test_a_calibrated_plan_draws_its_mfu_from_the_pilots_band():
    res = plan.estimate(PILOTED)["result"]
    width = res["calibration"]["band"]["relative_half_width"]
    assert res["uncertainty"]["mfu_band"] == {"source": "calibration", "relative_half_width": width}
    low, mode, high = res["uncertainty"]["inputs"]["mfu"]
    assert mode == res["compute"]["mfu"]
    # the band's ends are the triangle's P10 and P90 (the 80 % band): its CDF on either side of the mode
    p10, p90 = mode * (1 - width), mode * (1 + width)
    assert (p10 - low) ** 2 / ((high - low) * (mode - low)) == pytest.approx(0.1, rel=1e-6)
    assert 1 - (high - p90) ** 2 / ((high - low) * (high - mode)) == pytest.approx(0.9, rel=1e-6)


def test_a_calibrated_plan_is_sized_for_its_confidence_on_the_pilots_band():
    doc = _with(PILOTED, deadline_confidence=0.9)
    c = _compute(doc)
    assert c["meets_target"] is True and c["deadline_miss_probability"] <= 0.1
    assert _miss_on(doc, c["cards"]) == pytest.approx(c["deadline_miss_probability"], rel=1e-6)
    r = resolve(validate_shape(doc))
    sizes = plan.candidate_sizes(r, plan.cards_multiple(r))
    point = _compute(PILOTED)["cards"]
    below = [int(s) for s in sizes[(sizes >= point) & (sizes < c["cards"])]]
    assert below
    for cards in below:  # the pilot's band at each size: every smaller size misses more often
        assert _miss_on(doc, cards) > 0.1, cards


class _NarrowDip:
    """A rule whose chance of missing (per 8-card unit k) is 0.05 + |k - 300| / 400: at most 0.1
    only for k in [280, 320], which no doubling from 100 units (100, 200, 400, ...) lands in (the
    search before 2.59.0 doubled)."""

    target_days = 1.0
    allowed = 0.1

    def chances(self, cards, mfu, bests):
        return 0.05 + np.abs(np.asarray(cards) / 8 - 300) / 400


def test_counts_that_meet_between_two_doublings_give_the_first_of_them():
    # by hand: the range's highest MFU 0.5 on 1 PFLOP/s cards needs 800 cards (100 units) in one day
    # for flop = 800 x 86,400 x 1e15 x 0.5, where the search starts; the lowest chance lies at 300
    # units and the first count that meets is 280 units (2,240 cards), not 300
    from estimator.plan.deadline_risk import confident_cards

    doc = {
        "model": {"preset": "llama-3.1-8b"},
        "training": {"tokens": 1e12},
        "hardware": {"accelerator": "h100-sxm"},
        "efficiency": {"mfu": 0.4, "mfu_range": [0.3, 0.5]},
        "cluster": {"target_days": 1},
    }
    rule = _NarrowDip()
    rule.r = resolve(validate_shape(doc))
    flop = 800 * SECONDS_PER_DAY * 1e15 * 0.5
    assert confident_cards(rule, flop, 1e15, 0.4, 8, largest=lambda: 65_536) == 2_240
    # past the largest cluster even without failures (1,000 cards at the MFU of 0.4): that need, refused
    assert confident_cards(rule, flop, 1e15, 0.4, 8, largest=lambda: 512) == 1_000


def test_a_confidence_every_count_misses_for_certain_takes_the_fastest_count():
    # Llama 3.1 405B, 15T tokens at a given 40% in 30 days: the fastest count takes about 51.4 days
    # (tests/estimator/test_given_mfu_deadline.py), so every count misses for certain. Before 2.59.0
    # the plan took the first count tried, 15,432 cards that take 99 days.
    doc = {**GIVEN_405B, "reliability": {}, "cluster": {"target_days": 30, "deadline_confidence": 0.9}}
    res = plan.estimate(doc)["result"]
    fastest = plan.estimate({**doc, "cluster": {"target_days": 45}})["result"]  # no confidence asked
    assert res["compute"]["deadline_miss_probability"] == 1.0 and res["compute"]["meets_target"] is False
    assert res["compute"]["cards"] == fastest["compute"]["cards"]
    assert fastest["compute"]["meets_target"] is False
    assert res["goodput"]["wall_clock_days"] == pytest.approx(
        fastest["goodput"]["wall_clock_days"], rel=1e-12
    )
    assert 51.0 < res["goodput"]["wall_clock_days"] < 52.0
