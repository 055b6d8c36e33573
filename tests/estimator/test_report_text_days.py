"""The CLI table shows every duration with its significant figures: a short run is never "0.0 days"."""

import pytest

from estimator.plan.compose import estimate
from estimator.report_text import days, format_plan


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (30.24, "30.2 days"),
        (1234.5, "1,234.5 days"),
        (4.7234, "4.72 days"),
        (1.0, "1 day"),
        (0.25, "0.25 days"),
        (0.0, "0 days"),
        (2.2 / 24, "2.2 h"),  # below a tenth of a day: hours, minutes, seconds
        (35.2 / 1440, "35.2 min"),
        (35.2 / 86400, "35.2 s"),
    ],
)
def test_days_keep_their_significant_figures(value, text):
    assert days(value) == text


def test_a_short_run_is_not_zero_days():
    # 1e6 tokens of Llama 3.1 70B: 6 x 70.6e9 x 1e6 = 4.2e17 FLOP, seconds on 24 H100s
    out = estimate(
        {
            "model": {"preset": "llama-3.1-70b"},
            "training": {"tokens": 1e6},
            "hardware": {"accelerator": "h100-sxm"},
            "cluster": {"target_days": 30},
        }
    )
    table = format_plan(out)
    assert "0.0 days" not in table and " s " in table.split("wall-clock", 1)[1].splitlines()[0]
