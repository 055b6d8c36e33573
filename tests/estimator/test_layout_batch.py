"""estimator.layout.batch_search: the batched search picks, for every size, the layout the one-at-a-time
search picks (layout.search), on a few hundred random scenarios, dense and MoE; its enumeration is
the search's; the dominance rules it prunes with hold in the step-time and memory models."""

import dataclasses
import random

import numpy as np
import pytest

from estimator.contract.resolve import resolve
from estimator.contract.scenario import validate_shape
from estimator.errors import ScenarioError
from estimator.layout import batch_enumeration
from estimator.layout import batch_search as layout_batch
from estimator.layout.batch_enumeration import enumerate_layouts, enumerate_valid
from estimator.layout.batch_search import best_layouts
from estimator.layout.enumeration import enumerate_candidates, structural_failures
from estimator.layout.evaluation import card_memory, evaluate_time
from estimator.layout.search import search
from estimator.layout.stacks import STACKS
from estimator.plan import compose as plan

DENSE = ["llama-3.1-8b", "llama-3.1-70b", "qwen3-8b", "megatron-gpt-7.5b", "gpt3-175b"]
MOE = ["qwen3-30b-a3b", "deepseek-v3"]
ACCELERATORS = ["h100-sxm", "h800-sxm", "ascend-910b2", "a100-sxm-40gb", "mi300x"]


def _scenario(rng: random.Random, preset: str) -> dict:
    training = {
        "tokens": 1e12,
        "seq_len": rng.choice([2048, 4096, 8192, 16384]),
        "global_batch_tokens": rng.choice([1, 4, 16]) * 2**20,
        "stack": rng.choice(list(STACKS)),
    }
    if rng.random() < 0.2:
        training["flash_attention"] = False  # unfused: selective recompute is searched too
    if rng.random() < 0.25:
        training["precision"] = "fp8"  # FP8 GEMMs and FP8-saved activations where the card has them
    doc = {
        "model": {"preset": preset},
        "training": training,
        "hardware": {"accelerator": rng.choice(ACCELERATORS)},
        "cluster": {"cards": 64},
    }
    fixed = rng.random()
    if fixed < 0.1:
        doc["parallelism"] = {"recompute": rng.choice(["full", "partial", "none"])}
    elif fixed < 0.2:
        doc["parallelism"] = {"zero_stage": rng.choice([0, 1, 3])}
    elif fixed < 0.25:
        doc["parallelism"] = {"tp": 2}
    elif fixed < 0.3:
        doc["parallelism"] = {"sequence_parallel": False}
    elif fixed < 0.4:
        doc["parallelism"] = rng.choice(
            [
                {"pp": 2},
                {"micro_batch_size": 2},
                {"pp": 4, "virtual_stages": 2},
                {"distributed_optimizer": False},
            ]
        )
    return doc


def _problems(doc: dict, sizes: list[int]):
    r = resolve(validate_shape(doc))
    out = []
    for cards in sizes:
        try:
            out.append(plan.layout_problem(r, cards, plan.fabric_for(r, cards)))
        except ScenarioError:
            continue
    return out


def _random_cases(seed: int, n: int, presets: list[str], max_nodes: int):
    rng = random.Random(seed)
    cases: list[tuple[dict, list]] = []
    while len(cases) < n:
        doc = _scenario(rng, rng.choice(presets))
        sizes = sorted({8 * rng.randint(1, max_nodes) for _ in range(8)})
        try:
            problems = _problems(doc, sizes)
        except ScenarioError:
            continue
        cases.append((doc, problems))
    return cases


def _same(batched, single, where):
    assert (batched is None) == (single is None), where
    if single is not None:
        assert batched == single, where  # every field: layout, times, memory, MFU


@pytest.mark.parametrize(
    ("seed", "count", "presets", "max_nodes"),
    [(1, 20, DENSE, 1024), (2, 12, ["qwen3-30b-a3b"], 1024), (3, 4, ["deepseek-v3"], 128)],
    ids=["dense", "moe", "deepseek-v3"],
)
def test_batched_search_picks_the_one_at_a_time_layout(seed, count, presets, max_nodes):
    """Eight random sizes per random scenario: best_layouts(sizes)[i] == search(size i).best."""
    checked = 0
    for doc, problems in _random_cases(seed, count, presets, max_nodes):
        for p, got in zip(problems, best_layouts(problems), strict=True):
            _same(got, search(p).best, (doc, p.cards))
            checked += 1
    assert checked >= 6 * count


def test_any_fits_says_whether_the_search_finds_a_layout():
    """any_fits (memory only, no step time) is search(p).best is not None, with and without reuse,
    on sizes from one node (where a 175B model or DeepSeek-V3 cannot fit) to 1,024 nodes."""
    layout_batch.clear_caches()
    seen = set()
    rng = random.Random(7)
    for doc, problems in _random_cases(7, 10, ["gpt3-175b", "llama-3.1-70b", "deepseek-v3"], 64):
        extra = _problems(doc, [8, 16, 8 * rng.randint(65, 1024)])
        problems = problems + [p for p in extra if p.cards not in {q.cards for q in problems}]
        expected = [search(p).best is not None for p in problems]
        assert layout_batch.any_fits(problems) == expected, doc
        assert layout_batch.any_fits(problems, reuse=True) == expected, doc
        seen.update(expected)
    assert seen == {True, False}  # both answers were checked


def test_reuse_across_accelerators_gives_the_same_layouts():
    """The enumeration and memory kept for the next group and the remembered answers (reuse=True)
    change nothing."""
    layout_batch.clear_caches()
    sizes = [64, 128, 384, 1024, 4096]
    for accelerator, precision in (
        ("h100-sxm", "fp8"),
        ("ascend-910b2", "fp8"),
        ("h800-sxm", "bf16"),
        ("h100-sxm", "bf16"),
    ):
        doc = {
            "model": {"preset": "qwen3-30b-a3b"},
            "training": {"tokens": 1e12, "precision": precision},
            "hardware": {"accelerator": accelerator},
            "cluster": {"cards": 64},
        }
        problems = _problems(doc, sizes)
        for p, got in zip(problems, best_layouts(problems, reuse=True), strict=True):
            _same(got, search(p).best, (accelerator, p.cards))
    # the remembered answers: a problem asked again (here with other sizes around it) is the same
    again = _problems(doc, [64, 4096, 96])
    for p, got in zip(again, best_layouts(again, reuse=True), strict=True):
        _same(got, search(p).best, ("again", p.cards))


def test_problems_must_differ_only_in_size():
    doc = {"model": {"preset": "llama-3.1-8b"}, "training": {"tokens": 1e12}, "cluster": {"cards": 64}}
    a, b = _problems(doc, [64, 128])
    with pytest.raises(ValueError, match="seq_len"):
        best_layouts([a, dataclasses.replace(b, seq_len=2048)])


@pytest.mark.parametrize("seed", range(6))
def test_enumeration_is_the_search_s(seed):
    """Without pruning, the level-by-level enumeration yields exactly the candidates that pass
    layout_enum.structural_failures, in enumerate_candidates' order."""
    rng = random.Random(seed)
    doc = _scenario(rng, rng.choice(DENSE + MOE))
    problems = _problems(doc, sorted({8 * rng.randint(1, 512) for _ in range(3)}))
    got = enumerate_valid(problems)
    for i, p in enumerate(problems):
        c = enumerate_candidates(p)
        bad = np.zeros(c["tp"].size, dtype=bool)
        for _, failing in structural_failures(p, c):
            bad |= np.asarray(failing, dtype=bool)
        mine = got["size"] == i
        for key in ("tp", "pp", "cp", "ep", "mbs", "v", "sp", "zero", "rc", "dp", "m"):
            np.testing.assert_array_equal(got[key][mine], c[key][~bad], err_msg=f"{doc} {p.cards} {key}")


@pytest.mark.parametrize("seed", range(4))
def test_one_size_sliced_from_a_scan(seed):
    """A size's enumeration taken from a kept several-size scan (batch_enumeration.scanned_layouts,
    deadline sizing's) is its own: the same columns, the size index 0, the stems the same runs; a
    stack with other enumeration rules (the other attention kernel) gets none from it."""
    rng = random.Random(seed)
    doc = _scenario(rng, rng.choice(DENSE + MOE))
    doc["training"].pop("flash_attention", None)
    problems = _problems(doc, sorted({8 * rng.randint(1, 512) for _ in range(3)}))
    if len(problems) < 2:
        pytest.skip("fewer than two sizes with a fabric")
    batch_enumeration.clear()
    try:
        batch_enumeration.scanned_layouts(problems)
        for p in problems:
            got, own = batch_enumeration.shared_layouts([p])[0], enumerate_layouts([p])
            assert got["size"].tolist() == [0] * own["size"].size
            for key in ("tp", "pp", "cp", "ep", "etp", "mbs", "v", "sp", "zero", "dp", "m"):
                np.testing.assert_array_equal(got[key], own[key], err_msg=f"{doc} {p.cards} {key}")
            np.testing.assert_array_equal(np.diff(got["stem"]) != 0, np.diff(own["stem"]) != 0)
        first = problems[0]
        kernel = "fa2" if not first.flash_attention else "unfused"  # the other attention rule
        other = dataclasses.replace(first, stack=dataclasses.replace(first.stack, attention_kernel=kernel))
        key = batch_enumeration.enumeration_key([other])
        assert batch_enumeration._sliced([other], key) is None
    finally:
        batch_enumeration.clear()


def _layouts_at(preset: str, accelerator: str, cards: int, stack: str | None = None):
    """The problem and every structurally valid layout (no pruning) of a preset at `cards`."""
    doc = {
        "model": {"preset": preset},
        "training": {"tokens": 1e12, **({"stack": stack} if stack else {})},
        "hardware": {"accelerator": accelerator},
    }
    problems = _problems({**doc, "cluster": {"cards": cards}}, [cards])
    return problems[0], enumerate_layouts(problems)


@pytest.mark.parametrize(
    ("preset", "accelerator"), [("llama-3.1-70b", "h100-sxm"), ("qwen3-30b-a3b", "ascend-910b2")]
)
def test_recompute_never_speeds_a_layout_up(preset, accelerator):
    """RECOMPUTE_DOMINATES: for one layout, throughput does not rise with the share of layers
    recomputed (recomputing adds a forward pass, never removes work), so when no recompute (or a
    partial one) fits, full recompute of that layout cannot win (ties go to less recomputation)."""
    p, lay = _layouts_at(preset, accelerator, 512)
    n = lay["size"].size
    speeds = []
    for rf in (0.0, 0.25, 0.5, 1.0):
        code = 0 if rf == 0 else (2 if rf == 1 else 3)
        c = {**lay, "rc": np.full(n, code)}
        speeds.append(evaluate_time(p, c, np.full(n, rf))["tokens_per_s"])
    for slower, faster in zip(speeds[1:], speeds[:-1], strict=True):
        assert np.all(slower <= faster * (1 + 1e-12))


@pytest.mark.parametrize(
    ("preset", "accelerator"), [("llama-3.1-70b", "h100-sxm"), ("qwen3-30b-a3b", "h800-sxm")]
)
def test_sequence_parallel_is_searched_on_only_where_tp_is_above_one(preset, accelerator):
    """SEQUENCE_PARALLEL_WITH_TP (enumeration.sp_off_not_searched): with tp > 1 a free switch is
    searched on only. Without the backward re-gather (the DTensor stack, sp_regather "none")
    sequence parallelism moves the same bytes (all-gather + reduce-scatter = all-reduce) and
    divides the replicated activations and their element-wise kernels by tp: never slower,
    strictly less memory (Korthikanti et al. 2022): the off twins the search leaves out, built
    here by hand, never win there."""
    p, lay = _layouts_at(preset, accelerator, 512, stack="pytorch-fsdp2")
    assert p.sequence_parallel_with_tp
    assert not np.any(~lay["sp"] & (lay["tp"] > 1))  # the search does not offer the off twin
    tp2 = lay["tp"] > 1
    lay = {k: v[tp2] for k, v in lay.items()}
    n = lay["size"].size
    assert n > 100
    for code, rf in ((0, 0.0), (2, 1.0)):
        on = {**lay, "sp": np.ones(n, dtype=bool), "rc": np.full(n, code)}
        off = {**lay, "sp": np.zeros(n, dtype=bool), "rc": np.full(n, code)}
        # (1 - 1e-12): where both are host-bound MoE layers (layer_comm.host_floor) they last the same
        # issue time, summed in a different order
        assert np.all(
            evaluate_time(p, on, np.full(n, rf))["tokens_per_s"]
            >= evaluate_time(p, off, np.full(n, rf))["tokens_per_s"] * (1 - 1e-12)
        )
        assert np.all(card_memory(p, on, on["rc"]).total < card_memory(p, off, off["rc"]).total)


def test_many_sizes_are_searched_a_block_at_a_time(monkeypatch):
    """Past SIZES_PER_BLOCK sizes the search runs block by block (bounded memory), same answers."""
    monkeypatch.setattr(layout_batch, "SIZES_PER_BLOCK", 2)
    doc = {"model": {"preset": "llama-3.1-8b"}, "training": {"tokens": 1e12}, "cluster": {"cards": 64}}
    problems = _problems(doc, [8, 24, 64, 96, 512])
    for p, got in zip(problems, best_layouts(problems), strict=True):
        _same(got, search(p).best, p.cards)


@pytest.mark.parametrize(
    "fixed",
    [
        {"zero_stage": 3},
        {"zero_stage": 0},
        {"micro_batch_size": 2},
        {"pp": 4, "virtual_stages": 2},
        {"distributed_optimizer": False},
        {"recompute": "selective"},
        {"ep": 8},
    ],
    ids=lambda f: ",".join(f"{k}={v}" for k, v in f.items()),
)
def test_fixed_fields_are_honoured_like_the_search(fixed):
    """Every kind of fixed field, on a dense and an MoE model (unfused attention for selective)."""
    for preset in ("llama-3.1-8b", "qwen3-30b-a3b"):
        if "ep" in fixed and preset == "llama-3.1-8b":
            continue
        training = {"tokens": 1e12, "flash_attention": False} if "recompute" in fixed else {"tokens": 1e12}
        doc = {
            "model": {"preset": preset},
            "training": training,
            "parallelism": fixed,
            "cluster": {"cards": 64},
        }
        if fixed.get("zero_stage", 0) >= 2:  # the default 910B2's MindSpeed runs ZeRO-1 at most
            doc["hardware"] = {"accelerator": "h100-sxm"}
        problems = _problems(doc, [64, 128, 256, 512, 1024])
        found = [search(p).best for p in problems]
        assert any(b is not None for b in found), (preset, fixed)
        for p, got, single in zip(problems, best_layouts(problems), found, strict=True):
            _same(got, single, (preset, fixed, p.cards))


def test_a_zero_stage_the_stack_does_not_run_is_refused_by_both_searches():
    """ZeRO-3 fixed under MindSpeed (the 910B2 default; StackProfile.max_zero_stage 1): neither the
    single nor the batched search finds a layout at any size."""
    doc = {
        "model": {"preset": "qwen3-30b-a3b"},
        "training": {"tokens": 1e12},
        "parallelism": {"zero_stage": 3},
        "cluster": {"cards": 64},
    }
    problems = _problems(doc, [64, 128, 256, 512, 1024])
    assert problems and all(p.stack.id == "mindspeed-2025" for p in problems)
    assert [search(p).best for p in problems] == [None] * len(problems)
    assert best_layouts(problems) == [None] * len(problems)
