"""The days with failures are the median of the interruptions' draws (goodput.wall_clock_days_p50,
engine 2.41.0), shown with its P10-P90 from the same count distribution; the mean (wall_s, which a
right-skewed count can put above the P90) is a working row named for what counts it. A result
stored before the median existed still shows its mean, with the note when it lies above the P90."""

from django.utils import translation

from reports import goodput


def _result(mean: float, p10: float, p90: float, p50: float | None = None) -> dict:
    out = {
        "goodput": {
            "failures_counted": True,
            "expected_interruptions": 12,
            "compute_days": 30.0,
            "lost_days": {"checkpoints": 1.0, "rework": mean - 33.0, "restarts": 1.0, "planned": 1.0},
            "mean_time_between_interruptions_h": 60.0,
            "checkpoint_interval_s": 1800.0,
            "checkpoint_mode": "async",
            "restart_s": 600.0,
            "effective_training_time_ratio": 30.0 / mean,
            "wall_clock_days": mean,
            "wall_clock_days_p10": p10,
            "wall_clock_days_p90": p90,
        }
    }
    if p50 is not None:
        out["goodput"]["wall_clock_days_p50"] = p50
    return out


def test_the_headline_says_the_median_with_its_band_and_no_second_figure():
    skewed = _result(40.0, 31.0, 38.0, p50=33.0)
    with translation.override("en"):
        text = goodput.why(skewed)
        assert goodput.days_with_failures(skewed) == 33.0
    # the band is the failure spread at the planned MFU (the deadline risk adds the MFU range)
    assert "Median 33 days; 80% likely between 31 days and 38 days at the planned MFU." in text, text
    assert "40 days" not in text and "Mean" not in text  # one number per question
    with translation.override("zh-hans"):
        zh = goodput.why(skewed)
    assert "中位数 33 天" in zh and "按计划 MFU" in zh and "均值" not in zh, zh


def test_an_older_result_without_the_median_names_its_mean_above_its_p90():
    skewed = _result(40.0, 31.0, 38.0)  # 40 > 38: a few runs with many failures
    with translation.override("en"):
        text = goodput.why(skewed)
    assert "Mean 40 days; 80% likely between 31 days and 38 days." in text, text
    assert "The mean lies above the 80% range" in text and "sooner than 40 days" in text
    with translation.override("zh-hans"):
        zh = goodput.why(skewed)
    assert "均值" in zh and "均值高于 80% 区间" in zh, zh


def test_a_mean_inside_its_band_is_named_without_the_skew_note():
    with translation.override("en"):
        text = goodput.why(_result(35.0, 31.0, 38.0))
    assert "Mean 35 days;" in text and "lies above" not in text


def test_the_working_table_labels_the_median_and_the_mean():
    paths = ("goodput.wall_clock_days_p50", "goodput.wall_clock_days")
    with translation.override("en"):
        labels = [str(label) for label, path, _kind in goodput.TABLE if path in paths]
    assert labels == [
        "Wall-clock time with failures (median)",
        "Wall-clock time with failures (mean, counted by the deadline sizing and the levers)",
    ]
    with translation.override("zh-hans"):
        zh = [str(label) for label, path, _kind in goodput.TABLE if path in paths]
    assert zh == [
        "含故障的墙钟时间（中位数）",
        "含故障的墙钟时间（均值，按期限确定规模与各项改进措施按它计算）",
    ]
