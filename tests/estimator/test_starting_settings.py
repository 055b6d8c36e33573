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


def _moe_pipeline_settings() -> set[str]:
    """A MoE plan with EP folded over TP x DP and 94 layers on 32 virtual stages (first and last
    device 11 layers, the others 12): the expert-parallel and pipeline-split rows."""
    result = estimate(
        {
            "model": {"preset": "qwen3-235b-a22b"},
            "training": {"tokens": 1e12, "global_batch_tokens": 8192 * 4096, "precision": "fp8"},
            "hardware": {"accelerator": "h100-sxm"},
            "cluster": {"cards": 256},
            "parallelism": {"tp": 2, "pp": 8, "virtual_stages": 4, "ep": 32, "micro_batch_size": 1},
        }
    )["result"]
    return {row["setting"] for row in result["starting_configuration"]}


def test_rows_name_only_registered_settings_and_every_one_is_reached():
    seen = _settings("ascend-910b2", "bf16") | _settings("h100-sxm", "fp8") | _moe_pipeline_settings()
    assert seen <= set(SETTINGS)
    assert seen == set(TRAINING_SETTINGS) | set(ENVIRONMENT_SETTINGS)


def test_the_micro_batch_row_states_the_chosen_layouts_own_bubble():
    # 70B on 576 Ascend 910B2 for 30 days: TP 8 x PP 2 with 8 virtual stages and 14 micro-batches.
    # (P-1)/(M+P-1) = 1/15 = 6.7% is plain 1F1B's bubble; interleaving 8 stages cuts it about 8 times
    # ((P-1)/(v*M+P-1) = 1/113 = 0.9%): the row must say the layout's bubble, not 7%
    result = estimate(
        {
            "model": {"preset": "llama-3.1-70b"},
            "training": {"tokens": 5e11},
            "hardware": {"accelerator": "ascend-910b2"},
            "cluster": {"target_days": 30},
        }
    )["result"]
    par = result["parallelism"]
    assert (par["pp"], par["virtual_stages"], par["micro_batches"]) == (2, 8, 14)
    (row,) = [r for r in result["starting_configuration"] if r["setting"] == "micro_batches"]
    assert row["params"]["layout_bubble"] == par["bubble_fraction"]
    assert 0.008 < row["params"]["layout_bubble"] < 1 / 113 + 1e-4
    assert row["reason"].endswith("The chosen layout runs 14 (bubble 0.9%).")
