"""The exact pruning of layout.prune: the best layouts with pruning at its harshest (every batch
pruned, one probe per size; before memory too) and with its defaults (the predicted-MFU sweep's
models and accelerators) are those without pruning, field for field. The floor it prunes with
(steptime.bounds) is tested in test_layout_bounds.py."""

import random

import numpy as np
import pytest

from estimator.layout import batch_enumeration, prune
from estimator.layout import batch_search as layout_batch
from estimator.layout.batch_enumeration import enumerate_valid
from estimator.layout.batch_search import best_layouts
from tests.estimator.test_layout_batch import DENSE, MOE, _random_cases


@pytest.mark.parametrize(("seed", "presets"), [(13, DENSE), (14, MOE)], ids=["dense", "moe"])
def test_pruning_never_changes_the_best_layout(seed, presets, monkeypatch):
    for doc, problems in _random_cases(seed, 6, presets, 1024):
        layout_batch.clear_caches()
        monkeypatch.setattr(prune, "PRUNE_MIN", 10**12)
        monkeypatch.setattr(layout_batch, "PREMEMORY_MIN", 10**12)
        unpruned = best_layouts(problems)
        layout_batch.clear_caches()
        monkeypatch.setattr(prune, "PRUNE_MIN", 1)
        monkeypatch.setattr(prune, "PRUNE_PROBE", 1)
        pruned = best_layouts(problems)
        assert pruned == unpruned, doc
        for probe in (1, 8):  # bounded before memory too, with a bar from 1 or 8 layouts per size
            layout_batch.clear_caches()
            monkeypatch.setattr(layout_batch, "PREMEMORY_MIN", 1)
            monkeypatch.setattr(layout_batch, "PREMEMORY_PROBE", probe)
            assert best_layouts(problems) == unpruned, (doc, probe)
            layout_batch.clear_caches()
            assert best_layouts(problems, reuse=True) == unpruned, (doc, probe)  # a sweep's family
    layout_batch.clear_caches()


def test_pruning_drops_most_candidates_of_a_large_model():
    """Llama 3.1 405B-like dense scenarios: the bound is tight enough to matter (the top bin is a
    small share of what fits), else the pruning would only cost."""
    rng = random.Random(5)
    kept = total = 0
    for _, problems in _random_cases(rng.randint(0, 999), 4, ["gpt3-175b"], 1024):
        c = enumerate_valid(problems)
        rf = (c["rc"] == 2).astype(float)
        base = problems[0]
        c = dict(c)
        c["stem"] = np.arange(c["size"].size)
        c["row"] = np.arange(c["size"].size)
        keep = prune.can_win(problems, base, c, rf)
        kept += int(keep.sum())
        total += keep.size
    assert total > 0 and kept < 0.5 * total


def test_top_per_size_keeps_the_best_scores_of_each_size():
    """Sizes 0, 1, 2 with scores (1, 5, 3), (2, 2), (9, 1, 8, 7): the two best of each are entries
    1, 2 | 3, 4 | 5, 7, grouped by size or not."""
    size = np.array([0, 0, 0, 1, 1, 2, 2, 2, 2])
    score = np.array([1.0, 5, 3, 2, 2, 9, 1, 8, 7])
    assert prune.top_per_size(size, score, 2).tolist() == [1, 2, 3, 4, 5, 7]
    assert prune.top_per_size(size[::-1].copy(), score[::-1].copy(), 2).tolist() == [1, 3, 4, 5, 6, 7]
    assert prune.top_per_size(size, score, 5).tolist() == list(range(9))


def test_a_stack_that_always_recomputes_keeps_its_best_layouts(monkeypatch):
    """DeepSeek-V3 on its own stack (always_recompute: norms, MLA up-projections, SwiGLU) is bounded
    before memory like any other (its step time never falls as more is recomputed:
    test_layout_bounds.py); with the pruning at its harshest the best layouts are search()'s."""
    from estimator.layout.search import search
    from tests.estimator.test_layout_batch import _problems

    doc = {
        "model": {"preset": "deepseek-v3"},
        "training": {"tokens": 1e12, "seq_len": 4096, "stack": "deepseek-dualpipe"},
        "hardware": {"accelerator": "h800-sxm"},
        "cluster": {"cards": 64},
    }
    problems = _problems(doc, [512, 1024, 2048])
    assert problems[0].stack.always_recompute
    monkeypatch.setattr(layout_batch, "PREMEMORY_MIN", 1)
    monkeypatch.setattr(prune, "PRUNE_MIN", 1)
    monkeypatch.setattr(prune, "PRUNE_PROBE", 1)
    layout_batch.clear_caches()
    expected = [search(p).best for p in problems]
    assert any(b is not None for b in expected)
    assert best_layouts(problems) == expected
    layout_batch.clear_caches()


@pytest.mark.parametrize(
    ("preset", "accelerator"),
    [(m, a) for m in ("llama-3.1-70b", "qwen3-30b-a3b") for a in ("h100-sxm", "ascend-910b2", "h800-sxm")],
)
def test_the_sweep_s_scenarios_keep_their_best_layouts(preset, accelerator, monkeypatch):
    """bench/plan_speed.py's predicted-MFU sweep (its two models on its three accelerators) at
    sizes 64 to 12,800 cards: the default pruning (before memory too) finds the unpruned answers."""
    from tests.estimator.test_layout_batch import _problems

    doc = {
        "model": {"preset": preset},
        "training": {"tokens": 1e12},
        "hardware": {"accelerator": accelerator},
        "cluster": {"cards": 64},
    }
    problems = _problems(doc, [64, 448, 1024, 3072, 6400, 12800])
    layout_batch.clear_caches()
    pruned = best_layouts(problems, reuse=True)
    layout_batch.clear_caches()
    monkeypatch.setattr(prune, "PRUNE_MIN", 10**12)
    monkeypatch.setattr(layout_batch, "PREMEMORY_MIN", 10**12)
    assert any(b is not None for b in pruned)
    assert pruned == best_layouts(problems)
    layout_batch.clear_caches()


@pytest.mark.parametrize("preset", ["llama-3.1-8b", "qwen3-30b-a3b", "deepseek-v3"])
def test_stacks_share_an_enumeration_only_where_it_is_theirs(preset):
    """batch_enumeration.shared_layouts keeps the enumeration for the next family that differs in its memory
    only: taken one stack after another (each finding the previous ones' enumerations kept), every
    stack's layouts are the ones it enumerates on its own."""
    from estimator.layout.stacks import STACKS
    from tests.estimator.test_layout_batch import _problems

    layout_batch.clear_caches()
    for stack in STACKS:
        for fa in (True, False):
            doc = {
                "model": {"preset": preset},
                "training": {"tokens": 1e12, "stack": stack, "flash_attention": fa},
                "hardware": {"accelerator": "h100-sxm"},
                "cluster": {"cards": 64},
            }
            problems = _problems(doc, [128, 512, 1536])
            got = batch_enumeration.shared_layouts(problems)[0]
            own = batch_enumeration.enumerate_layouts(problems)
            assert got.keys() == own.keys()
            for k in own:
                np.testing.assert_array_equal(got[k], own[k], err_msg=f"{stack} {fa} {k}")
    layout_batch.clear_caches()


@pytest.mark.parametrize("seed", range(4))
def test_top_per_size_picks_the_best_scores_however_it_sorts(seed):
    """Grouped by size (one table) or not (one sort of all), random counts per size and ties: the
    scores picked per size are the k highest (a size with at most k entries keeps them all)."""
    rng = np.random.default_rng(seed)
    counts = rng.integers(1, 40, size=12)
    size = np.repeat(np.arange(counts.size), counts)
    score = rng.integers(0, 15, size=size.size).astype(float)
    score[rng.random(size.size) < 0.1] = np.inf
    for k in (1, 3, 8):
        for order in (np.arange(size.size), rng.permutation(size.size)):
            picked = prune.top_per_size(size[order], score[order], k)
            for s in range(counts.size):
                mine = np.sort(score[order][picked][size[order][picked] == s])[::-1]
                best = np.sort(score[size == s])[::-1][:k]
                np.testing.assert_array_equal(mine, best)
