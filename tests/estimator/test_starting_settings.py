"""The starting configuration names only the settings of its registry (starting_config.SETTINGS),
which the web layer labels (tests/web/test_labels.py)."""

from estimator.plan.compose import estimate
from estimator.plan.starting_config import ENVIRONMENT_SETTINGS, SETTINGS, TRAINING_SETTINGS


def _settings(accelerator: str, precision: str) -> set[str]:
    result = estimate(
        {
            "model": {"preset": "llama-3.1-8b"},
            "training": {"tokens": 1e11, "precision": precision},
            "hardware": {"accelerator": accelerator},
            "cluster": {"cards": 64},
        }
    )["result"]
    return {row["setting"] for row in result["starting_configuration"]}


def test_rows_name_only_registered_settings_and_every_one_is_reached():
    seen = _settings("ascend-910b2", "bf16") | _settings("h100-sxm", "fp8")
    assert seen <= set(SETTINGS)
    assert seen == set(TRAINING_SETTINGS) | set(ENVIRONMENT_SETTINGS)
