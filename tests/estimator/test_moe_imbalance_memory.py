"""The busiest expert-parallel rank stores its routed activations: training.moe_imbalance (max/mean
routed tokens per EP rank) times the balanced share, as its experts compute them in the step time
(layout.activations.layer_coefficients' `imbalance`; steptime.moe.tokens_per_local_expert)."""

import pytest

from estimator.contract.resolve import resolve
from estimator.contract.scenario import validate_shape
from estimator.layout.activations import layer_coefficients
from estimator.plan.compose import estimate

DOC = {
    "model": {"preset": "qwen3-30b-a3b"},
    "training": {"tokens": 1e11, "seq_len": 4096},
    "hardware": {"accelerator": "ascend-910c"},
    "cluster": {"cards": 8},
    "parallelism": {
        "tp": 1,
        "pp": 1,
        "cp": 1,
        "dp": 8,
        "ep": 8,
        "expert_tp": 1,
        "micro_batch_size": 1,
        "virtual_stages": 1,
        "zero_stage": 1,
        "recompute": "none",
    },
}

# Qwen3-30B-A3B: h = 2,048, f_e = 768, top-8, gated: per token and chosen expert the dispatched
# copy 2h, the combine's expert output 2h, the fc1 output 2·f_e wide at 2 bytes and the activation
# output at 2 bytes: 2·2,048 + 2·2,048 + (4 + 2)·768 = 12,800 bytes; 8 experts: 102,400 bytes a token
ROUTED_BYTES_PER_TOKEN = 8 * (2 * 2048 + 2 * 2048 + (4 + 2) * 768)


def test_the_routed_coefficient_scales_with_the_imbalance():
    arch = resolve(validate_shape(DOC), None).arch
    balanced = layer_coefficients(arch)[1].split
    assert layer_coefficients(arch, imbalance=1.1)[1].split - balanced == pytest.approx(
        0.1 * ROUTED_BYTES_PER_TOKEN
    )
    assert (
        layer_coefficients(arch)[0].split == layer_coefficients(arch, imbalance=1.1)[0].split
    )  # dense layers


def test_a_plan_holds_the_busiest_ranks_routed_activations():
    # one micro-batch of 4,096 tokens in flight (PP 1), TP 1, 48 MoE layers: at imbalance 1.5 the
    # busiest rank stores 0.5 x 102,400 x 4,096 x 48 = 10,066,329,600 bytes more than at 1.0
    def activations(imbalance):
        doc = {**DOC, "training": {**DOC["training"], "moe_imbalance": imbalance}}
        return estimate(doc)["result"]["memory"]["per_card_bytes"]["activations"]

    assert activations(1.5) - activations(1.0) == pytest.approx(0.5 * ROUTED_BYTES_PER_TOKEN * 4096 * 48)
