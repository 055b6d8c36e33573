"""With an MFU given, the layout story says the plan runs at that MFU (its step as the days count it),
not only the layout model's predicted step: one step time per plan (reports.working.story)."""

from __future__ import annotations

import pytest
from django.utils import translation

from estimator.plan.compose import estimate
from reports import working

GIVEN = {
    "model": {"preset": "llama-3.1-70b"},
    "training": {"tokens": 1e11, "seq_len": 131072},
    "hardware": {"accelerator": "ascend-910b2"},
    "cluster": {"cards": 1024},
    "efficiency": {"mfu": 0.4},
}


@pytest.fixture(scope="module")
def given():
    return estimate(GIVEN)["result"]


def test_a_given_mfu_says_the_step_the_plan_runs(given):
    compute, best = given["compute"], given["parallelism"]
    assert compute["mfu_source"] == "given" and best["predicted_mfu"] > 0.6  # the model predicts faster
    # the plan's step: the global batch at the plan's throughput, 4,194,304 tokens / (1e11 tokens
    # over 11.6 days) = 42 s, where the model's is 22 s
    step = best["global_batch_tokens"] / compute["tokens_per_s"]
    assert step == pytest.approx(4_194_304 / (1e11 / (compute["wall_clock_days"] * 86_400)))
    assert 41 < step < 43
    with translation.override("en"):
        first, second = working.story(given)[:2]
        assert "at 75.4% MFU" in first
        assert second == (
            "The plan runs at the 40.0% MFU you gave, a step of 42.1 s: the layout model's prediction "
            "only ranks the layouts."
        )
    with translation.override("zh-hans"):
        assert (
            working.story(given)[1]
            == "本方案按您给定的 40.0% MFU 计算，每步 42.1 秒；布局模型的预测只用于给布局排序。"
        )


def test_a_predicted_mfu_says_nothing_more():
    result = estimate({**GIVEN, "efficiency": {}})["result"]
    assert result["compute"]["mfu_source"] == "predicted"
    with translation.override("en"):
        assert not any("you gave" in line for line in working.story(result))


def test_the_runners_up_end_as_sentences_of_the_readers_language(given):
    with translation.override("zh-hans"):
        lines = working.story(given)[2:]
    assert lines and all(line.endswith("。") for line in lines), lines
    with translation.override("en"):
        assert all(line.endswith(".") for line in working.story(given)[2:])


def test_compare_gives_the_step_the_plan_runs(given):
    from reports import compare

    report = {"scenario": GIVEN, "result": given}
    with translation.override("en"):
        (row,) = [r for r in compare.rows([report]) if r["key"] == "step_time"]
    # the given MFU's step (42.1 s, the one the days count), not the layout model's 22.3 s
    assert row["raw"] == [
        pytest.approx(given["parallelism"]["global_batch_tokens"] / given["compute"]["tokens_per_s"])
    ]
    assert row["text"] == ["42.1 s"]


def test_the_chosen_layout_and_its_runners_up_have_names_that_tell_them_apart():
    # 70B on 576 Ascend 910B2 in 30 days: the chosen TP 8 x PP 2 x DP 36 runs 8 virtual stages, a
    # runner-up of the same degrees 4 (0.8% slower): without the stages both read "TP 8 × PP 2 × DP 36"
    result = estimate(
        {
            "model": {"preset": "llama-3.1-70b"},
            "training": {"tokens": 5e11},
            "hardware": {"accelerator": "ascend-910b2"},
            "cluster": {"target_days": 30},
        }
    )["result"]
    with translation.override("en"):
        names = [working.layout_name(result["parallelism"])]
        names += [working.layout_name(r) for r in result["layout"]["runners_up"][:3]]
    assert names[0] == "TP 8 × PP 2 × DP 36 (8 virtual stages, micro-batch 1, ZeRO 1, recompute none)"
    assert len(set(names)) == len(names), names
    with translation.override("zh-hans"):
        assert "8 个虚拟阶段" in working.layout_name(result["parallelism"])
