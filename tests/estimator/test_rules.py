"""Each rule of the core lives in one place: one test per rule that fails when a copy drifts.

Rules: MLP gating (estimator.model.transformer.is_gated_mlp), plausible-MFU bounds (estimator.model.compute),
per-stage parameters (estimator.model.transformer.stage_param_counts), "a fixed layout must divide the card
count" (estimator.contract.scenario.Parallelism.fits_cards), the storage network's fabric
(estimator.cluster.network.STORAGE_*), dotted paths (estimator.dotted).
"""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pytest

from estimator.cluster.network import Frontend, design_fabric, storage_fabric_counts
from estimator.contract.scenario import Parallelism
from estimator.dotted import get_path, pop_path, set_path
from estimator.layout.search import LayoutProblem, evaluate_layout
from estimator.model import compute
from estimator.model.transformer import (
    HF_ACTIVATIONS,
    Architecture,
    is_gated_mlp,
    mlp_matrices,
    param_counts,
    stage_param_counts,
)
from estimator.plan import advice
from estimator.plan import compose as plan
from tests.estimator.test_layout import ACC

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("estimator", "api", "reports", "sweeps", "config")

# transformers/activations.py ACT2CLS (v4.57): the 24 names, typed out here by hand.
HF_NAMES = [
    "gelu",
    "gelu_10",
    "gelu_fast",
    "gelu_new",
    "gelu_python",
    "gelu_pytorch_tanh",
    "gelu_python_tanh",
    "gelu_accurate",
    "hardswish",
    "laplace",
    "leaky_relu",
    "linear",
    "mish",
    "quick_gelu",
    "relu",
    "relu2",
    "relu6",
    "sigmoid",
    "silu",
    "sqrtsoftplus",
    "swish",
    "tanh",
    "prelu",
    "xielu",
]
GATED = {"silu", "swish", "swiglu"}  # SwiGLU (Shazeer 2020): gate, up, down


def _module_defs() -> dict[str, set[str]]:
    """Top-level and nested function / assignment names per project module (path -> names)."""
    out: dict[str, set[str]] = {}
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            if "migrations" in path.parts:
                continue
            names: set[str] = set()
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                    names.add(node.name)
                elif isinstance(node, ast.Assign):
                    names.update(t.id for t in node.targets if isinstance(t, ast.Name))
            out[path.relative_to(ROOT).as_posix()] = names
    return out


def _defined_in(name: str) -> list[str]:
    return sorted(path for path, names in _module_defs().items() if name in names)


# ---- MLP gating -------------------------------------------------------------------------------


def test_activation_table_is_hugging_face_s():
    assert len(HF_NAMES) == 24
    assert set(HF_NAMES) == HF_ACTIVATIONS


@pytest.mark.parametrize("act", [*HF_NAMES, "swiglu", "SiLU", "GELU_NEW"])
def test_gating_and_matrix_count(act):
    gated = act.lower() in GATED
    assert is_gated_mlp(act) is gated
    assert mlp_matrices(act) == (3 if gated else 2)


def test_unknown_activation_is_rejected():
    with pytest.raises(ValueError, match="hidden_act"):
        is_gated_mlp("not_an_activation")


def _arch(act: str) -> Architecture:
    h = 256
    return Architecture(
        num_hidden_layers=2,
        hidden_size=h,
        num_attention_heads=4,
        num_key_value_heads=4,
        head_dim=h // 4,
        intermediate_size=4 * h,
        vocab_size=512,
        tie_word_embeddings=True,
        hidden_act=act,
    )


def _evaluate(act: str):
    arch = _arch(act)
    problem = LayoutProblem(
        arch=arch,
        counts=param_counts(arch),
        seq_len=256,
        global_batch_tokens=1024,
        cards=2,
        accelerator=ACC,
    )
    return evaluate_layout(problem, tp=2, pp=1, micro_batch_size=1, recompute="none")


def test_every_hf_activation_gives_one_answer_in_params_memory_and_step_time():
    """Params, memory and step time of a model depend on hidden_act only through the gating."""
    reference = {True: _evaluate("silu"), False: _evaluate("gelu")}
    h = 256
    drift = []
    for act in [*HF_NAMES, "swiglu"]:
        gated = act in GATED
        counts = param_counts(_arch(act))
        assert counts.dense_mlp_per_layer == (3 if gated else 2) * h * 4 * h
        e, ref = _evaluate(act), reference[gated]
        if e.per_card_bytes != ref.per_card_bytes or e.step_time_s != ref.step_time_s:
            drift.append(act)
    assert drift == []


# ---- plausible MFU ----------------------------------------------------------------------------


def test_one_plausible_mfu_bound():
    assert plan.MAX_PLAUSIBLE_MFU == compute.MFU_PLAUSIBLE_MAX == 0.65
    assert plan.MIN_PLAUSIBLE_MFU == compute.MFU_PLAUSIBLE_MIN == 0.15
    assert _defined_in("MFU_PLAUSIBLE_MAX") == ["estimator/model/compute.py"]


@pytest.mark.parametrize(("mfu", "flagged"), [(0.64, False), (0.65, False), (0.66, True)])
def test_advice_flags_mfu_above_the_bound(mfu, flagged):
    codes = [a.code for a in advice.advise({"efficiency": {"mfu": mfu}}, {})]
    assert ("mfu-optimistic" in codes) is flagged


@pytest.mark.parametrize(("mfu", "flagged"), [(0.7, False), (1.0, False), (1.1, True)])
def test_advice_judges_a_long_sequence_mfu_on_what_causal_kernels_compute(mfu, flagged):
    # 6·N = 0.42 T and PaLM's whole-matrix attention 1.03 T per token (Llama 3.1 70B at 128K):
    # causal kernels compute 0.42 + 0.515 = 0.935 of the 1.45 T counted, a share of 0.645
    result = {"compute": {"flop_per_token_6n": 0.42e12, "flop_per_token_attention": 1.03e12}}
    codes = [a.code for a in advice.advise({"efficiency": {"mfu": mfu}}, result)]
    assert ("mfu-optimistic" in codes) is flagged


# ---- per-stage parameters ---------------------------------------------------------------------


def test_stage_param_counts_by_hand():
    # h = 256, 4 heads (MHA), f = 1024 (plain MLP), V = 512, tied: attention 4h² = 262,144,
    # MLP 2·h·f = 524,288, norms 2h = 512, embedding V·h = 131,072, final norm 256.
    counts = param_counts(_arch("gelu"))
    first_of_two, _ = stage_param_counts(counts, 1, 1, 1, 0, tp=2)
    assert first_of_two == (262_144 + 524_288 + 131_072) / 2 + 512
    last_of_two, _ = stage_param_counts(counts, 1, 1, 0, 1, tp=2)  # tied: the head is a copy
    assert last_of_two == (262_144 + 524_288 + 131_072 + 256) / 2 + 512
    single, expert = stage_param_counts(counts, 2, 2, 1, 0, tp=1)
    assert single == 2 * (262_144 + 524_288 + 512) + 131_072 and expert == 0


def test_stage_param_counts_moe_experts_split_over_ep_and_tp():
    arch = Architecture(
        num_hidden_layers=2,
        hidden_size=64,
        num_attention_heads=4,
        num_key_value_heads=4,
        head_dim=16,
        intermediate_size=128,
        vocab_size=100,
        num_experts=8,
        num_experts_per_tok=2,
        moe_intermediate_size=32,
    )
    counts = param_counts(arch)
    # routed: 8 experts x 3 x 64 x 32 = 49,152 per layer; 2 MoE layers over ep 4 x tp 2
    _, expert = stage_param_counts(counts, np.array([2]), np.array([0]), 1, 1, tp=2, ep=4)
    assert expert.tolist() == [2 * 49_152 / 8]


def test_stage_params_defined_once():
    assert _defined_in("stage_params") == []
    for module in ("estimator/layout/memory.py", "estimator/layout/steptime/step.py"):
        assert "stage_param_counts(" in (ROOT / module).read_text(encoding="utf-8"), module


# ---- a fixed layout must divide the cards ------------------------------------------------------


@pytest.mark.parametrize(
    ("fixed", "cards", "fits"),
    [
        ({"tp": 8, "pp": 4}, 64, True),  # 32 | 64
        ({"tp": 8, "pp": 4}, 48, False),  # 32 does not divide 48
        ({"tp": 8, "pp": 4}, 16, False),  # fewer cards than one replica
        ({"tp": 8, "pp": 4, "dp": 2}, 64, True),  # all fixed: 64 == 64
        ({"tp": 8, "pp": 4, "dp": 2}, 128, False),  # all fixed: must equal, not divide
        ({"tp": 2, "cp": 2, "dp": 3}, 24, True),  # 12 | 24 (pp free)
        ({}, 7, True),
    ],
)
def test_fixed_layout_fits_cards(fixed, cards, fits):
    p = Parallelism(**fixed)
    assert bool(p.fits_cards(cards)) is fits
    assert p.fits_cards(np.array([cards, cards])).tolist() == [fits, fits]


def test_replica_cards():
    assert Parallelism(tp=8, pp=4, cp=2, dp=3).replica_cards == 64
    assert Parallelism(tp=8, pp=4, cp=2, dp=3).layout_cards == 192


def test_fixed_layout_rule_defined_once():
    assert _defined_in("_replica_ok") == []


# ---- the storage network's fabric -------------------------------------------------------------


@pytest.mark.parametrize("nodes", [1, 16, 40, 300])
def test_storage_fabric_scalar_and_vector_agree(nodes):
    fe = design_fabric(nodes * 8, 64, 1.0, True, 8, 400, frontend=Frontend()).frontend
    assert fe is not None and fe.endpoints == 2 * nodes and not fe.rail_optimized
    assert fe.dac_cables == 2 * nodes  # copper to the server
    vec = storage_fabric_counts(np.array([nodes]), 64)
    assert vec["switches"].tolist() == [fe.total_switches]
    assert vec["links"].tolist() == [fe.server_links + fe.switch_links]
    assert vec["transceivers"].tolist() == [fe.transceivers]


# ---- dotted paths -----------------------------------------------------------------------------


def test_dotted_paths():
    doc: dict = {"a": {"b": 1}, "x": 3}
    assert get_path(doc, "a.b") == 1
    assert get_path(doc, "a.c") is None and get_path(doc, "x.y", "d") == "d"
    set_path(doc, "a.c.d", 2)
    set_path(doc, "x.y", 4)  # a non-dict step is replaced
    assert doc == {"a": {"b": 1, "c": {"d": 2}}, "x": {"y": 4}}
    assert pop_path(doc, "a.c.d") == 2 and doc["a"]["c"] == {}
    assert pop_path(doc, "nope.z") is None


@pytest.mark.parametrize("name", ["get_path", "set_path", "pop_path"])
def test_dotted_path_helpers_defined_once(name):
    assert _defined_in(name) == ["estimator/dotted.py"] or _defined_in(name) == [
        "estimator/dotted.py",
        "estimator/contract/sweep.py",
    ]


def test_dotted_path_copies_gone_from_lead_files():
    assert _defined_in("del_path") == [] and "_set" not in _module_defs()["estimator/plan/batch.py"]


def test_storage_fabric_rule_used_by_the_batch_path():
    """The batch path's vectorized counts (estimator.money.pricing.vectorized_counts) size the storage
    network with network.storage_fabric_counts, not a copy of its rule."""
    source = (ROOT / "estimator" / "money" / "pricing.py").read_text(encoding="utf-8")
    assert "storage_fabric_counts" in source and "server_cable=" not in source
