"""Multi-token prediction (DeepSeek-V3 report section 2.2) and DualPipe's two-chunk placement:
the MTP module's parameters against the released weights' documentation, its step-time terms on
the last stage by hand, and the pairing of the first and last stages on one DualPipe rank."""

from types import SimpleNamespace
from typing import cast

import numpy as np
import pytest

from estimator.catalog import preset
from estimator.layout.steptime.candidates import Candidates
from estimator.layout.steptime.dualpipe import dualpipe_ranks
from estimator.layout.steptime.mtp import mtp_hidden, with_mtp
from estimator.model.config_json import architecture_from_config
from estimator.model.mtp import mtp_params
from estimator.model.transformer import Architecture, param_counts
from estimator.validation.published_runs import (
    predicted_tokens_per_s_per_gpu,
    published_runs,
    run_scenario,
)

TOY = Architecture(
    num_hidden_layers=2,
    hidden_size=1000,
    num_attention_heads=8,
    num_key_value_heads=8,
    head_dim=125,
    intermediate_size=4000,
    vocab_size=32000,
    num_nextn_predict_layers=1,
)


def _arch(name: str) -> Architecture:
    return preset(name).architecture


def test_deepseek_v3_mtp_module_matches_the_released_weights():
    arch = _arch("deepseek-v3")
    assert arch.num_nextn_predict_layers == 1  # config.json
    m = mtp_params(arch, param_counts(arch))
    assert m.projection == 2 * 7168 * 7168  # eh_proj: 2h -> h
    assert m.head == 129280 * 7168  # the shared output head, "0.9B"
    # README_WEIGHTS.md: 11.5B unique parameters (without the shared embedding and head) ...
    assert m.unique == pytest.approx(11.5e9, rel=0.015)
    # ... and 1.5B activated per token including the 0.9B head (the main model's 37B count is
    # +1.5% in this convention too; here +7.6%, within 8%)
    assert m.active == pytest.approx(1.5e9, rel=0.08)


def test_config_json_reads_the_mtp_depth_and_megatrons_name():
    base = {
        "num_hidden_layers": 2,
        "hidden_size": 64,
        "num_attention_heads": 4,
        "vocab_size": 100,
        "intermediate_size": 256,
    }
    assert architecture_from_config(base).num_nextn_predict_layers == 0
    assert architecture_from_config({**base, "num_nextn_predict_layers": 2}).num_nextn_predict_layers == 2
    assert architecture_from_config({**base, "mtp_num_layers": 1}).num_nextn_predict_layers == 1


def _cands(tp: int = 1) -> Candidates:
    """with_mtp reads the micro-batch, TP and CP of the candidates only."""
    return cast(Candidates, SimpleNamespace(tp=float(tp), cp=1.0, mbs=2.0))


def test_mtp_terms_by_hand():
    head = {"gemm": 0.010, "elementwise": 0.002}
    layer = {"gemm": 0.004, "attention": 0.003, "ep_comm": 0.001}
    rate = 1e14
    out = with_mtp(TOY, 1024, _cands(tp=2), rate, head, layer)
    # projection: 1024 tokens x micro-batch 2 / TP 2 = 1024 tokens, 2 FLOP x 2h^2 = 2e6 params, x 3
    projection = 1024 * 2 * 2e6 * 3 / rate
    assert float(out["gemm"]) == pytest.approx(2 * 0.010 + 0.004 + projection)
    assert float(out["elementwise"]) == pytest.approx(2 * 0.002)  # its own cross-entropy
    assert float(out["attention"]) == pytest.approx(0.003)
    assert float(out["ep_comm"]) == pytest.approx(0.001)
    assert float(mtp_hidden(TOY, {"ep_comm": 0.005})["ep_comm"]) == pytest.approx(0.005)


def test_without_mtp_the_head_is_unchanged():
    arch = _arch("qwen3-8b")
    head = {"gemm": 0.01}
    assert with_mtp(arch, 4096, _cands(), 1e15, head, {"gemm": 1.0}) is head


def test_dualpipe_rank_holds_the_first_and_the_last_stage():
    first = {"gemm": np.array([1.0, 5.0])}
    middle = {"gemm": np.array([2.0, 2.0])}
    last = {"gemm": np.array([3.0, 7.0])}
    single = np.array([False, True])
    ends, mid, ends2 = dualpipe_ranks([first, middle, last], single, True)
    assert list(ends["gemm"]) == [2.0, 5.0]  # mean of the pair; pp == 1 keeps its one stage
    assert ends2 is ends and mid is middle
    assert dualpipe_ranks([first, middle, last], single, False) == [first, middle, last]


def test_mtp_slows_the_deepseek_v3_row_by_less_than_its_share_on_one_rank():
    models, runs = published_runs()
    run = next(r for r in runs if r["id"] == "deepseek-v3-2048xh800-dualpipe-fp8")
    with_module = predicted_tokens_per_s_per_gpu(run_scenario(run, models))
    models_off = {**models, "deepseek-v3": {**models["deepseek-v3"], "num_nextn_predict_layers": 0}}
    without = predicted_tokens_per_s_per_gpu(run_scenario(run, models_off))
    # the module is ~4% of the model's work per token (1.5B of 37B active) but all of it lands on the
    # rank of the first and last stages (3 + 3 layers, the head, the MTP block and its head per two
    # micro-batches against 4 + 4 layers on a middle rank): slower, by less than 1.3x
    assert without > with_module > without / 1.3


def test_dualpipe_pairs_stacked_terms_as_it_pairs_them_by_name():
    """The step model composes its stages as stacked (term, candidate) arrays: paired the same."""
    first = {"gemm": np.array([1.0, 5.0]), "tp_comm": np.array([0.5, 0.25])}
    middle = {"gemm": np.array([2.0, 2.0]), "tp_comm": np.array([0.0, 1.0])}
    last = {"gemm": np.array([3.0, 7.0]), "tp_comm": np.array([1.5, 0.75])}
    single = np.array([False, True])
    by_name = dualpipe_ranks([first, middle, last], single, True)
    stacked = dualpipe_ranks([np.stack(list(d.values())) for d in (first, middle, last)], single, True)
    for named, rows in zip(by_name, stacked, strict=True):
        assert np.array_equal(np.stack(list(named.values())), rows)
    assert list(stacked[0][0]) == [2.0, 5.0] and list(stacked[0][1]) == [1.0, 0.25]
