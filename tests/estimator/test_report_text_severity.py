"""The CLI table names each warnings item by its own severity (it once printed every item as
'warning', the informational ones included: a note on the input, HCCL_BUFFSIZE's starting value)."""

from estimator.plan.compose import estimate
from estimator.report_text import format_plan


def _plan(cards, tp=8, **training):
    return estimate(
        {
            "model": {"preset": "qwen3-8b"},
            "training": {"tokens": 1e11, **training},
            "hardware": {"accelerator": "ascend-910b2"},
            "cluster": {"cards": cards},
            "parallelism": {"tp": tp, "pp": 1, "cp": 1, "micro_batch_size": 1},
        },
        {},
    )


def test_info_items_are_printed_as_info():
    """60 cards are not a whole number of 8-card nodes: an info note (contract.resolve)."""
    out = _plan(60, tp=4)
    assert {w["code"]: w["severity"] for w in out["result"]["warnings"]}["input-note"] == "info"
    lines = format_plan(out).splitlines()
    assert any(line.startswith("info [input-note]: ") for line in lines)
    assert not any(line.startswith("warning [input-note]") for line in lines)


def test_warnings_are_printed_as_warnings():
    """96 cards / TP 8 = DP 12 train 36 sequences for the 32 asked: a warning."""
    out = _plan(96, global_batch_tokens=32 * 4096)
    assert {w["code"]: w["severity"] for w in out["result"]["warnings"]}["global-batch-rounded"] == "warning"
    assert any(line.startswith("warning [global-batch-rounded]: ") for line in format_plan(out).splitlines())
