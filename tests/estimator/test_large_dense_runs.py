"""The famous large dense runs held out in estimator/reference_data/throughput_runs.toml (issue 21):
each row's tokens/s per GPU is its source's iteration time converted by hand, no row is fitted, and
the sources' TFLOP/s figures follow the recompute-counting formula they state
(docs/sources.md#bloom-176b, #mt-nlg-throughput, #nemotron-4-340b)."""

import pytest

from estimator.validation.published_runs import published_runs

_, RUNS = published_runs()
BY_ID = {r["id"]: r for r in RUNS}

# id -> (seconds per iteration, global batch in sequences, sequence length, GPUs), as published
ITERATION_TIMES = {
    "bloom-176b-384xa100-tp4-pp12": (104.70, 2048, 2048, 384),  # tr11 README, iteration 85376
    "mt-nlg-530b-2240xa100-tp8-pp35": (60.1, 1920, 2048, 2240),  # MT-NLG section 2.4
    "mt-nlg-530b-2800xa100-tp8-pp35": (50.2, 1920, 2048, 2800),
    "mt-nlg-530b-3360xa100-tp8-pp35": (44.4, 1920, 2048, 3360),
    "nemotron-4-340b-6144xh100-tp8-pp12": (8.0, 2304, 4096, 6144),  # report Table 2, last stage
    "nemotron-4-340b-128xh100-dgxc-bf16": (4.61, 32, 4096, 128),  # dgxc-benchmarking README_340b
    "nemotron-4-340b-2048xh100-dgxc-bf16": (4.84, 512, 4096, 2048),
    "nemotron-4-340b-128xh100-dgxc-fp8": (3.16, 32, 4096, 128),
    "nemotron-4-340b-2048xh100-dgxc-fp8": (3.49, 512, 4096, 2048),
}


@pytest.mark.parametrize("run_id", sorted(ITERATION_TIMES))
def test_row_is_the_published_iteration_time_converted(run_id):
    seconds, batch, seq, gpus = ITERATION_TIMES[run_id]
    run = BY_ID[run_id]
    assert (run["gpus"], run["global_batch_seqs"], run["seq_len"]) == (gpus, batch, seq)
    assert run["tokens_per_s_per_gpu"] == pytest.approx(batch * seq / seconds / gpus, rel=2e-3)
    assert "fit" not in run  # held out: nothing is calibrated on these rows


@pytest.mark.parametrize(
    ("run_id", "table_tokens_per_s"),
    [
        ("nemotron-4-340b-128xh100-dgxc-bf16", 28432),  # README_340b "Throughput in tokens per second"
        ("nemotron-4-340b-2048xh100-dgxc-bf16", 433296),
        ("nemotron-4-340b-128xh100-dgxc-fp8", 41478),
        ("nemotron-4-340b-2048xh100-dgxc-fp8", 600903),
    ],
)
def test_dgxc_rows_are_the_tables_tokens_per_second_per_gpu(run_id, table_tokens_per_s):
    run = BY_ID[run_id]
    assert run["tokens_per_s_per_gpu"] * run["gpus"] == pytest.approx(table_tokens_per_s, rel=1e-3)


@pytest.mark.parametrize(
    ("batch", "layers", "hidden", "vocab", "seconds", "gpus", "tflops"),
    [
        (1920, 105, 20480, 50272, 60.1, 2240, 126),  # MT-NLG 530B, 280 DGX A100
        (1920, 105, 20480, 50272, 50.2, 2800, 121),
        (1920, 105, 20480, 50272, 44.4, 3360, 113),
        (2048, 70, 14336, 250880, 104.70, 384, 149.77),  # BLOOM 176B, iteration 85376
    ],
)
def test_published_tflops_count_the_recompute(batch, layers, hidden, vocab, seconds, gpus, tflops):
    """Narayanan et al. 2021 eq. 3: 96 B s l h^2 (1 + s/6h + V/16lh) FLOPs per iteration with full
    recompute (4 passes); BLOOM's README states the same "4*2 coefficient". At s = 2048 the quoted
    times give the quoted TFLOP/s per GPU."""
    s = 2048
    flop = 96 * batch * s * layers * hidden**2 * (1 + s / (6 * hidden) + vocab / (16 * layers * hidden))
    assert flop / seconds / gpus / 1e12 == pytest.approx(tflops, rel=0.006)
