"""A chosen layout that trains with another global batch than training.global_batch_tokens says so
(warning global-batch-rounded): the batch is rounded to whole micro-batches per DP rank
(layout.enumeration, within 25 %), and a change past BATCH_NOTE_SHARE (10 %) moves the run's
optimisation, not only its speed. Expected batches worked by hand from the fixed layout."""

import pytest

from estimator.plan.compose import estimate


def _plan(global_batch_tokens):
    return estimate(
        {
            "model": {"preset": "qwen3-8b"},
            "training": {"tokens": 1e10, "seq_len": 4096, "global_batch_tokens": global_batch_tokens},
            "hardware": {"accelerator": "h100-sxm"},
            "cluster": {"cards": 96},
            "parallelism": {"tp": 8, "pp": 1, "cp": 1, "micro_batch_size": 1},
        },
        {},
    )["result"]


def test_a_batch_rounded_up_by_an_eighth_is_a_warning():
    """96 cards / TP 8 = DP 12. 131,072 tokens = 32 sequences of 4,096; 32 / 12 = 2.67 micro-batches
    per rank, rounded to 3: 36 sequences = 147,456 tokens, 12.5 % more than asked."""
    r = _plan(131_072)
    assert r["parallelism"]["global_batch_tokens"] == 36 * 4096
    found = [w for w in r["warnings"] if w["code"] == "global-batch-rounded"]
    assert len(found) == 1
    w = found[0]
    assert w["severity"] == "warning"
    assert (w["params"]["sequences"], w["params"]["asked_sequences"]) == (36, 32)
    assert (w["params"]["tokens"], w["params"]["asked_tokens"]) == (147_456, 131_072)
    assert w["params"]["batch_ratio"] == pytest.approx(36 / 32)
    assert (w["params"]["dp"], w["params"]["micro_batches"], w["params"]["micro_batch_size"]) == (12, 3, 1)
    assert "36 sequences" in w["message"] and "32 asked" in w["message"]


def test_a_batch_rounded_by_less_than_a_tenth_is_quiet():
    """4,194,304 tokens = 1,024 sequences; 1,024 / 12 = 85.3, rounded to 85: 1,020 sequences, 0.4 %
    fewer."""
    r = _plan(4_194_304)
    assert r["parallelism"]["global_batch_tokens"] == 1020 * 4096
    assert "global-batch-rounded" not in [w["code"] for w in r["warnings"]]
