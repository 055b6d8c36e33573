"""result.assumptions names the FLOP convention behind the MFU (plan.sections.assumptions._flop_row):
the FLOPs per token counted and, where PaLM's whole attention matrix is counted, the MFU on the
causal half the kernels compute, which at 128K tokens is far below the MFU shown."""

from estimator.plan.compose import estimate

LONG = {
    "model": {"preset": "llama-3.1-70b"},
    "training": {"tokens": 1e11, "seq_len": 131072, "global_batch_tokens": 16 * 2**20},
    "hardware": {"accelerator": "h100-sxm"},
    "cluster": {"cards": 1024},
}


def _row(result: dict, prefix: str) -> dict:
    (row,) = [a for a in result["assumptions"] if a["code"].startswith(prefix)]
    return row


def test_the_whole_attention_matrix_is_named_with_the_causal_mfu():
    result = estimate(LONG)["result"]
    row = _row(result, "assumption.flop-count")
    # Llama 3.1 70B: 80 layers, 64 heads x 128 = 8,192 attention width; PaLM's 12·L·s·d_attn
    attention = 12 * 80 * 131072 * 8192
    assert row["code"] == "assumption.flop-count"
    assert row["detail"]["attention"] == attention == 1_030_792_151_040
    assert row["value"] == row["detail"]["dense"] + attention
    mfu = result["compute"]["mfu"]
    causal = mfu * (row["detail"]["dense"] + attention / 2) / (row["detail"]["dense"] + attention)
    assert abs(row["params"]["causal_mfu"] - causal) < 1e-12
    assert causal < 0.7 * mfu  # attention is 71% of the FLOPs counted, half of it skipped by the mask


def test_six_n_alone_says_attention_is_not_counted():
    doc = {**LONG, "training": {**LONG["training"], "attention_flops": False}}
    row = _row(estimate(doc)["result"], "assumption.flop-count")
    assert row["code"] == "assumption.flop-count-6n"
    assert row["value"] == row["detail"]["dense"]
    assert "causal_mfu" not in row["params"]


def test_the_cli_table_says_both_mfus_where_attention_is_much_of_the_count():
    from estimator.report_text import format_plan

    out = estimate(LONG)
    c = out["result"]["compute"]
    # 6·N = 6 x 70.55 G = 0.42 T of the 1.45 T counted: a causal share of (0.42 + 1.03 / 2) / 1.45
    share = (c["flop_per_token_6n"] + 12 * 80 * 131072 * 8192 / 2) / c["flop_per_token"]
    line = format_plan(out).split("wall-clock", 1)[1].splitlines()[0]
    assert f"at MFU {c['mfu']:.1%} ({c['mfu'] * share:.1%} on what causal kernels compute)" in line
    short = estimate(
        {**LONG, "training": {**LONG["training"], "seq_len": 4096, "global_batch_tokens": 2**22}}
    )
    assert (
        "causal" not in format_plan(short).split("wall-clock", 1)[1].splitlines()[0]
    )  # attention 7% of the count
