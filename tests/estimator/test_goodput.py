"""result.goodput in a plan: Llama 3 405B against its published interruptions and ETTR, deadline
sizing with failures, the refusal of a run that never finishes, and the sweep path's columns."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from estimator.errors import ScenarioError
from estimator.plan.batch import GOODPUT_FIELDS, evaluate_columns
from estimator.plan.compose import estimate
from estimator.plan.goodput import held_ratio
from estimator.plan.goodput_section import HELD_TIME_CODE, held_days

LLAMA3 = {
    "model": {"preset": "llama-3.1-405b"},
    "training": {"tokens": 15.6e12, "seq_len": 8192, "global_batch_tokens": 16_777_216},
    "hardware": {"accelerator": "h100-sxm", "server": "dgx-h100"},
    "cluster": {"cards": 16384},
    "parallelism": {"tp": 8, "pp": 16},
}
# Meta's measures (section 3.3.4: reduced job start-up and checkpoint times, automated restart):
# asynchronous checkpoints, a minute to detect, five to restart
FAST = {
    "training": {**LLAMA3["training"], "stack_overrides": {"checkpoint_mode": "async"}},
    "reliability": {"detection_s": 60, "rescheduling_s": 300},
}


def plan(doc: dict[str, Any]) -> dict[str, Any]:
    return estimate(doc)["result"]


def test_llama3_interruptions_against_table5() -> None:
    g = plan(LLAMA3)["goodput"]
    # the rates are Table 5's causes per card-, node- and switch-hour, so the mean time between
    # unexpected interruptions of this cluster is the paper's 54 x 24 h / 419 = 3.09 h by construction
    assert g["mean_time_between_interruptions_h"] == pytest.approx(1296 / 419, rel=1e-6)
    per_54_days = 1296 / g["mean_time_between_interruptions_h"]
    assert per_54_days == pytest.approx(419, rel=1e-6)
    assert sum(g["interruptions_by_cause"].values()) == pytest.approx(g["expected_unexpected_interruptions"])


def test_llama3_effective_training_time_over_90_percent_with_metas_measures() -> None:
    slow, fast = plan(LLAMA3)["goodput"], plan({**LLAMA3, **FAST})["goodput"]
    assert fast["effective_training_time_ratio"] > 0.90  # published: "higher than 90%"
    # synchronous checkpoints and a 20-minute restart fall well short of it
    assert slow["effective_training_time_ratio"] < 0.85
    assert fast["wall_clock_days"] < slow["wall_clock_days"]
    assert fast["wall_clock_days_p10"] < fast["wall_clock_days"] < fast["wall_clock_days_p90"]


def test_the_median_days_come_from_the_same_count_distribution_as_the_band() -> None:
    """wall(z) = base + count(z) x per, base = computing + checkpoints + planned stops, per = rework +
    restart per interruption; Wilson-Hilferty counts are a theta (1 - 1/(9a) + z/(3 sqrt a))^3, so
    their cube roots are linear in z: cbrt(n10) + cbrt(n90) = 2 cbrt(n50) (z = -1.28, 0, +1.28),
    and a right-skewed Gamma count has its median below its mean."""
    g = plan(LLAMA3)["goodput"]
    lost = g["lost_days"]
    base = g["compute_days"] + lost["checkpoints"] + lost["planned"]
    per = (g["rework_per_interruption_s"] + g["restart_s"]) / 86400.0
    n10, n50, n90 = ((g[f"wall_clock_days_{q}"] - base) / per for q in ("p10", "p50", "p90"))
    assert n10 ** (1 / 3) + n90 ** (1 / 3) == pytest.approx(2 * n50 ** (1 / 3), rel=1e-6)
    # the mean count is the expected unexpected interruptions
    assert (g["wall_clock_days"] - base) / per == pytest.approx(
        g["expected_unexpected_interruptions"], rel=1e-9
    )
    assert (
        g["wall_clock_days_p10"] < g["wall_clock_days_p50"] < g["wall_clock_days"] < g["wall_clock_days_p90"]
    )


def test_where_the_time_goes_adds_up() -> None:
    result = plan(LLAMA3)
    g = result["goodput"]
    assert g["compute_days"] == pytest.approx(result["compute"]["wall_clock_days"])
    assert g["compute_days"] + sum(g["lost_days"].values()) == pytest.approx(g["wall_clock_days"], rel=1e-9)
    assert g["effective_training_time_ratio"] == pytest.approx(g["compute_days"] / g["wall_clock_days"])


def test_failures_off_gives_the_compute_days() -> None:
    g = plan({**LLAMA3, "reliability": {"failures": False}})["goodput"]
    assert g["wall_clock_days"] == pytest.approx(g["compute_days"])
    assert g["effective_training_time_ratio"] == pytest.approx(1.0)


def test_deadline_buys_the_cards_that_finish_with_failures() -> None:
    doc = {**LLAMA3, "cluster": {"target_days": 60}, "efficiency": {"mfu": 0.4}}
    with_failures, without = plan(doc), plan({**doc, "reliability": {"failures": False}})
    c1, c0 = with_failures["compute"]["cards"], without["compute"]["cards"]
    assert c1 > c0
    assert with_failures["goodput"]["wall_clock_days"] <= 60
    assert with_failures["compute"]["meets_target"] is True
    # one step fewer (cards come in whole replicas of tp x pp = 128) misses it once failures are counted
    fewer = plan({**LLAMA3, "cluster": {"cards": c1 - 128}, "efficiency": {"mfu": 0.4}})
    assert fewer["goodput"]["wall_clock_days"] > 60


def test_run_that_never_finishes_is_refused_with_its_reason() -> None:
    with pytest.raises(ScenarioError) as err:
        estimate({**LLAMA3, "reliability": {"rate_scale": 40}})
    assert "never finishes" in str(err.value)


def test_spares_shorten_restarts_and_cost_servers() -> None:
    base, spared = plan(LLAMA3)["goodput"], plan({**LLAMA3, "reliability": {"spare_nodes": 32}})["goodput"]
    assert spared["restart_s"] < base["restart_s"]
    assert spared["spares"]["coverage"] > 0.99
    assert spared["spares"]["capex"] > 0


def test_sweep_columns_equal_the_plan() -> None:
    base = {k: v for k, v in LLAMA3.items() if k != "cluster"} | {"cluster": {"cards": 8192}}
    cols = {"cluster.cards": np.array([8192, 16384])}
    out = evaluate_columns(base, cols)
    for i, cards in enumerate((8192, 16384)):
        g = plan({**LLAMA3, "cluster": {"cards": cards}})["goodput"]
        for field in GOODPUT_FIELDS:
            assert out[field][i] == pytest.approx(g[field.split(".", 1)[1]], rel=1e-9), field


def test_spares_are_bought_with_the_cluster() -> None:
    base, spared = plan(LLAMA3), plan({**LLAMA3, "reliability": {"spare_nodes": 4}})
    extra = spared["cost"]["capex"]["total"] - base["cost"]["capex"]["total"]
    # four more servers (cards included) and nothing else; the same figure the goodput section names
    assert extra == pytest.approx(spared["goodput"]["spares"]["capex"], rel=1e-9)
    assert spared["goodput"]["spares"]["capex"] == pytest.approx(4 * base["cost"]["capex"]["compute"] / 2048)


def test_advice_names_the_lever_that_saves_most_and_pays() -> None:
    result = plan(LLAMA3)
    g = result["goodput"]
    (item,) = [a for a in result["advice"] if a["code"].startswith("goodput-")]
    # restarts and re-done work are the larger loss: (rework + restarts) / wall > 3 %
    assert item["code"] == "goodput-restarts"
    share = (g["lost_days"]["rework"] + g["lost_days"]["restarts"]) / g["wall_clock_days"]
    assert item["params"]["share"] == pytest.approx(share) and share > 0.03
    best = max((lv for lv in g["levers"] if lv["pays"]), key=lambda lv: lv["days_saved"])
    assert item["params"]["lever"] == best["lever"]
    assert item["params"]["days_saved"] == pytest.approx(best["days_saved"])


def test_a_free_lever_is_advised_below_the_threshold() -> None:
    article = {
        "model": {"preset": "llama-3.1-70b"},
        "training": {"tokens": 5e11},
        "hardware": {"accelerator": "ascend-910b2"},
        "cluster": {"target_days": 30},
    }
    result = plan(article)
    (item,) = [a for a in result["advice"] if a["code"].startswith("goodput-")]
    assert item["message_code"].endswith(".free") and item["params"]["cost"] is None
    assert item["params"]["days_saved"] > 0.01 * result["goodput"]["wall_clock_days"]


def test_assumptions_name_the_rates_and_restart_figures() -> None:
    rows = {a["code"]: a for a in plan(LLAMA3)["assumptions"]}
    # accelerator 196 + HBM 72 + software 63 per 16,384 cards over 1,296 h
    assert rows["assumption.failure-rate-card"]["value"] == pytest.approx(331 / (16384 * 1296))
    assert rows["assumption.failure-rate-node"]["value"] == pytest.approx(53 / (2048 * 1296))
    assert rows["assumption.failure-rate-switch"]["value"] == pytest.approx(35 / (1280 * 1296))
    assert rows["assumption.detection"]["value"] == 300
    given = plan({**LLAMA3, "reliability": {"rescheduling_s": 60}})["assumptions"]
    assert {a["code"]: a for a in given}["assumption.rescheduling"][
        "source"
    ] == "scenario reliability.rescheduling_s"


def test_a_missed_deadline_keeps_the_size_that_finishes_first_with_failures() -> None:
    # 15T tokens of 405B in 60 days at a 4M-token batch: no size meets it, so the plan keeps the size
    # of highest throughput; with failures counted that is fewer cards than without (they fail less)
    doc = {
        "model": {"preset": "llama-3.1-405b"},
        "training": {"tokens": 15e12},
        "hardware": {"accelerator": "h100-sxm"},
        "cluster": {"target_days": 60},
    }
    chosen, without = plan(doc), plan({**doc, "reliability": {"failures": False}})
    assert chosen["compute"]["meets_target"] is False
    assert chosen["compute"]["cards"] < without["compute"]["cards"]
    other = plan({**doc, "cluster": {"cards": without["compute"]["cards"]}})
    assert chosen["goodput"]["wall_clock_days"] < other["goodput"]["wall_clock_days"]


def test_a_sweep_row_that_never_finishes_says_so() -> None:
    from estimator.plan.batch_reasons import NEVER_FINISHES, REASONS

    base = {**LLAMA3, "reliability": {"rate_scale": 40}, "efficiency": {"mfu": 0.4}}
    base = {k: v for k, v in base.items() if k != "parallelism"}
    out = evaluate_columns(base, {"cluster.cards": np.array([128, 16384])})
    # 128 cards at 40x the rates still progress; 16,384 are interrupted faster than they recover
    assert list(out["ok"]) == [True, False]
    assert out["reason_code"][1] == NEVER_FINISHES == "run-never-finishes"  # as estimate() refuses it
    assert out["error"][1] == REASONS[NEVER_FINISHES] and out["reason_cards"][1] == 16384
    assert np.isfinite(out["goodput.wall_clock_days"][0])


def test_suggested_spares_cover_95_percent_of_node_failures():
    """The smallest s with P(Poisson(m) < s) >= 0.95, by hand: m = 0.5 has P(N <= 1) = 1.5 e^-0.5 =
    0.910 and P(N <= 2) = 1.625 e^-0.5 = 0.986, so 3; m = 1: P(N <= 2) = 2.5/e = 0.920,
    P(N <= 3) = (8/3)/e = 0.981, so 4; m = 0: nothing is ever down, 1; m = 4: P(N <= 7) = 0.949,
    P(N <= 8) = 0.979, so 9. The same s as asking rel.spare_coverage for each s."""
    from estimator.cluster import reliability as rel
    from estimator.plan.goodput_section import suggested_spares

    assert [suggested_spares(m) for m in (0.5, 1.0, 0.0, 4.0)] == [3, 4, 1, 9]
    for m in (0.01, 0.3, 2.7, 12.5, 60.0):
        expected = next(s for s in range(1, 4097) if float(rel.spare_coverage(s, m)) >= 0.95)
        assert suggested_spares(m) == expected


def test_held_ratio_is_wall_over_computing_and_one_where_there_is_no_finite_run():
    # 60 days of wall clock for 50 of computing: the cluster is held 1.2 x its computing time
    assert held_ratio(60.0, 50.0) == pytest.approx(1.2)
    got = held_ratio(np.array([60.0, np.inf, np.nan, 50.0]), np.array([50.0, 50.0, 50.0, 50.0]))
    assert got.tolist() == [pytest.approx(1.2), 1.0, 1.0, 1.0]


def test_deadline_risk_reads_the_spread_the_section_shows() -> None:
    """The inputs of compute.deadline_miss_probability: the mean wall is base + mean count x per (the
    computing, checkpoints and planned stops plus rework + restart per unexpected interruption), and
    the rate shape recovered from the counts by cause (goodput_section.count_shape) gives back the
    section's P10 and P90 through the Wilson-Hilferty quantiles."""
    from estimator.cluster import reliability as rel
    from estimator.contract.resolve import parse_scenario, resolve
    from estimator.plan.goodput_section import count_shape

    doc = {**LLAMA3, "cluster": {"target_days": 60}}
    out = plan(doc)
    g = out["goodput"]
    lost = g["lost_days"]
    base = g["compute_days"] + lost["checkpoints"] + lost["planned"]
    per = (g["rework_per_interruption_s"] + g["restart_s"]) / 86400
    mean = g["expected_unexpected_interruptions"]
    assert base + mean * per == pytest.approx(g["wall_clock_days"], rel=1e-12)
    shape = count_shape(resolve(parse_scenario(doc)), g["interruptions_by_cause"])
    p10, _p50, p90 = rel.count_quantiles(mean, shape)
    assert base + per * float(p10) == pytest.approx(g["wall_clock_days_p10"], rel=1e-12)
    assert base + per * float(p90) == pytest.approx(g["wall_clock_days_p90"], rel=1e-12)
    assert 0.0 < out["compute"]["deadline_miss_probability"] < 1.0


def test_held_days_reads_the_assumption_row_not_the_failure_switch():
    goodput = {"failures_counted": True, "wall_clock_days": 59.5}
    assert held_days({"goodput": goodput, "assumptions": [{"code": HELD_TIME_CODE}]}) == 59.5
    # failures counted but no row: a result stored before 2.45.0, its cost covered the computing
    assert held_days({"goodput": goodput, "assumptions": [{"code": "assumption.pue"}]}) is None
    assert held_days({"assumptions": [{"code": HELD_TIME_CODE}]}) is None


LLAMA405_16K = {
    "model": {"preset": "llama-3.1-405b"},
    "training": {"tokens": 15e12, "seq_len": 8192},
    "hardware": {"accelerator": "h100-sxm"},
    "cluster": {"cards": 16384},
}


def test_the_faster_hot_tier_lever_is_the_replan_with_half_the_write() -> None:
    """The lever "a hot storage tier twice as fast" says what a re-plan with the hot tier writing a
    checkpoint in half the time would give: its days and the drives and nodes it buys.

    By hand (catalog: NVMe 4 GB/s write x 0.5 derating / 1.25 protection = 1.6 GB/s a drive, 2,300
    USD; storage nodes of 24 bays, 40 GB/s, 25,000 USD): the 4.87 TB checkpoint in 120 s needs
    40.6 GB/s -> 26 drives (41.6 GB/s), nodes max(26/24, 40.6/40) -> 2. Twice as fast is 83.2 GB/s ->
    52 drives, nodes max(52/24, 83.2/40) -> 3: 26 drives and 1 node more, 26 x 2,300 + 25,000 =
    84,800 USD (before the fix: the whole tier again, 26 drives and 2 nodes, 109,800 USD, and both
    bandwidths doubled whatever the 3 nodes deliver)."""
    base = plan(LLAMA405_16K)
    g = base["goodput"]
    lever = next(lv for lv in g["levers"] if lv["lever"] == "faster-hot-tier")
    assert lever["cost"] == pytest.approx(26 * 2300 + 25000)
    half = g["checkpoint_write_s"] / 2
    replan = plan({**LLAMA405_16K, "storage": {"checkpoint_write_s": half}})
    assert replan["storage"]["hot"]["drives"] == 52 and replan["storage"]["hot"]["nodes"] == 3
    assert replan["goodput"]["checkpoint_write_s"] == pytest.approx(half, rel=1e-9)
    assert lever["wall_clock_days"] == pytest.approx(replan["goodput"]["wall_clock_days"], rel=1e-9)
    assert replan["cost"]["capex"]["storage"] - base["cost"]["capex"]["storage"] == pytest.approx(84800)
