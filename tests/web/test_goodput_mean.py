"""The days with failures are a mean over the interruptions' draws (plan.goodput: wall_s), the band
their P10-P90 (count quantiles): a right-skewed count can put the mean above the P90, and the page
says which figure is which and why, rather than showing a headline above its own 80% range."""

from django.utils import translation

from reports import goodput


def _result(mean: float, p10: float, p90: float) -> dict:
    return {
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


def test_a_mean_above_its_p90_is_named_and_explained():
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


def test_the_working_table_labels_the_mean():
    with translation.override("en"):
        labels = [str(label) for label, path, _kind in goodput.TABLE if path == "goodput.wall_clock_days"]
    assert labels == ["Wall-clock time with failures (mean)"]
    with translation.override("zh-hans"):
        zh = [str(label) for label, path, _kind in goodput.TABLE if path == "goodput.wall_clock_days"]
    assert zh == ["含故障的墙钟时间（均值）"]
