"""A MoE plan lists the load imbalance its expert GEMMs and all-to-all assume (training.moe_imbalance,
default 1.1) among its assumptions: a default that moves the days by about 5 % per 0.1 (DeepSeek-V3
on 3,840 Ascend 910C: 50.1 days at 1.0, 53.1 at 1.1, 62.9 at 1.5) must be visible. Every plan lists
the global batch it was asked for (training.global_batch_tokens, default 4M tokens): DeepSeek-V3 at
32K on 2,048 Ascend 910B2 takes 34.5 days at the default, 29.4 at 16M tokens."""

from estimator.plan.compose import estimate


def _rows(model, **training):
    result = estimate(
        {
            "model": {"preset": model},
            "training": {"tokens": 1e11, **training},
            "hardware": {"accelerator": "h100-sxm"},
            "cluster": {"cards": 64},
        },
        {},
    )["result"]
    return {a["code"]: a for a in result["assumptions"]}


def test_moe_plan_shows_the_default_imbalance():
    row = _rows("qwen3-30b-a3b")["assumption.moe-imbalance"]
    assert row["value"] == 1.1
    assert row["source_code"] == "source.moe-imbalance-default"


def test_moe_plan_shows_the_imbalance_given():
    row = _rows("qwen3-30b-a3b", moe_imbalance=1.4)["assumption.moe-imbalance"]
    assert row["value"] == 1.4
    assert row["source"] == "scenario input"


def test_dense_plan_has_no_imbalance_row():
    assert "assumption.moe-imbalance" not in _rows("llama-3.1-8b")


def test_every_plan_shows_the_global_batch_asked_and_whence():
    # the default is Llama 2's 4M tokens a step: 1,024 sequences of 4,096 = 4,194,304 tokens; at 32K
    # it is 128 sequences, and the DP sizes and micro-batches a layout may take follow from it
    row = _rows("llama-3.1-8b")["assumption.global-batch"]
    assert (row["value"], row["unit"]) == (1024 * 4096, "tokens")
    assert row["source_code"] == "source.global-batch-default"
    given = _rows("qwen3-30b-a3b", seq_len=32768, global_batch_tokens=16 * 2**20)["assumption.global-batch"]
    assert given["value"] == 16_777_216
    assert given["source"] == "scenario input"


def test_every_plan_shows_the_sequence_length_and_whence():
    # Llama 3.1 8B's preset trains at 8,192 tokens (Llama 3 paper, sec. 3.4.1), Qwen3's at 4,096; a
    # length given is the scenario's; a model given by its size takes the default's
    row = _rows("llama-3.1-8b")["assumption.seq-len"]
    assert (row["value"], row["unit"]) == (8192, "tokens")
    assert row["source"].startswith("Llama 3 paper sec. 3.4.1")
    assert _rows("qwen3-30b-a3b")["assumption.seq-len"]["value"] == 4096
    given = _rows("llama-3.1-8b", seq_len=32768)["assumption.seq-len"]
    assert (given["value"], given["source"]) == (32768, "scenario input")


def test_a_model_given_by_its_size_shows_the_default_length():
    result = estimate(
        {
            "model": {"params": 7e9},
            "training": {"tokens": 1e11},
            "hardware": {"accelerator": "h100-sxm"},
            "cluster": {"cards": 64},
        },
        {},
    )["result"]
    (row,) = [a for a in result["assumptions"] if a["code"] == "assumption.seq-len"]
    assert row["source_code"] == "source.seq-len-default"
