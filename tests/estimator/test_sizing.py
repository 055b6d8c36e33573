"""Deadline sizing on the batched layout search (plan.size_for_deadline) chooses what scanning the
round sizes one full search at a time chooses: the first size whose best layout meets the deadline."""

import random

import numpy as np
import pytest

from estimator.contract.resolve import resolve
from estimator.contract.scenario import validate_shape
from estimator.errors import ScenarioError
from estimator.layout.search import search
from estimator.model.compute import SECONDS_PER_DAY
from estimator.money import pricing
from estimator.plan import compose as plan
from estimator.plan.goodput import cards_for_deadline_with_failures, deadline_met

CASES = [
    {
        "model": {"preset": "llama-3.1-405b"},
        "training": {"tokens": 15e12, "seq_len": 8192, "global_batch_tokens": 16 * 2**20},
        "hardware": {"accelerator": "h100-sxm", "server": "dgx-h100"},
        "cluster": {"target_days": 60},
    },
    {
        "model": {"preset": "llama-3.1-70b"},
        "training": {"tokens": 2e12},
        "hardware": {"accelerator": "ascend-910b2"},
        "cluster": {"target_days": 30},
    },
    {
        "model": {"preset": "qwen3-30b-a3b"},
        "training": {"tokens": 5e12},
        "hardware": {"accelerator": "h800-sxm"},
        "cluster": {"target_days": 14},
    },
    {  # 128K tokens: PaLM's count of the whole attention matrix puts the MFU above the 65% record
        "model": {"preset": "llama-3.1-70b"},
        "training": {"tokens": 1e11, "seq_len": 131072, "global_batch_tokens": 16 * 2**20},
        "hardware": {"accelerator": "h100-sxm"},
        "cluster": {"target_days": 3},
    },
    {  # the first size that meets needs 13% MFU, past what the typical-worst 15% needs
        "model": {"preset": "deepseek-v3"},
        "training": {"tokens": 14.8e12},
        "hardware": {"accelerator": "h800-sxm"},
        "cluster": {"target_days": 60},
    },
]
IDS = ["405b-h100", "70b-910b2", "qwen3-moe-h800", "70b-128k-h100", "deepseek-v3-h800"]
# an MFU none of the cases reaches: the convention's FLOPs over what the kernels run (<= 1.6 at
# 128K, the causal half of the matrix skipped) times the rates' share of peak (< 1)
NO_LAYOUT_REACHES = 2.0


def _deadline_inputs(doc):
    """(resolved, training FLOP, peak FLOP/s, cards multiple, deadline s) of a deadline scenario."""
    r = resolve(validate_shape(doc))
    flop = pricing.model_flops(r)["training_flop"]
    peak = r.accelerator.peak_flops(r.scenario.training.precision)
    return r, flop, peak, plan.cards_multiple(r), r.scenario.cluster.target_days * SECONDS_PER_DAY


def _one_search_per_size(r, training_flop, peak):
    """The reference: every round size upward from what an MFU of NO_LAYOUT_REACHES would need,
    one full search per size, until one meets the deadline (no cap on the sizes scanned)."""
    multiple = plan.cards_multiple(r)
    seconds = r.scenario.cluster.target_days * SECONDS_PER_DAY

    def need(mfu):  # the deadline rule counts failures, checkpoints and restarts (plan.goodput)
        return int(cards_for_deadline_with_failures(r, training_flop, seconds, peak, mfu, multiple))

    sizes = plan.candidate_sizes(r, multiple)
    first = int(np.searchsorted(sizes, need(NO_LAYOUT_REACHES)))
    for cards in sizes[first:]:
        cards = int(cards)
        try:
            fabric = plan.fabric_for(r, cards)
        except ScenarioError:
            break  # the network cannot grow that far
        best = search(plan.layout_problem(r, cards, fabric)).best
        if best is not None and need(best.predicted_mfu) <= cards:
            return cards, best
    return None, None  # no size the network builds meets the deadline


@pytest.mark.parametrize("doc", CASES, ids=IDS)
def test_deadline_sizing_matches_one_search_per_size(doc):
    r = resolve(validate_shape(doc))
    flop = pricing.model_flops(r)["training_flop"]
    peak = r.accelerator.peak_flops(r.scenario.training.precision)
    choice = plan.choose_cluster(r, flop, peak)
    cards, best = _one_search_per_size(r, flop, peak)
    assert cards is not None
    assert choice.cards == cards
    assert choice.mfu_source == "predicted"
    assert choice.layouts.best == best
    assert choice.mfu == best.predicted_mfu


def _random_deadline(seed: int) -> dict:
    rng = random.Random(seed)
    return {
        "model": {
            "preset": rng.choice(
                ["llama-3.1-8b", "llama-3.1-70b", "qwen3-30b-a3b", "deepseek-v3", "gpt3-175b"]
            )
        },
        "training": {
            "tokens": rng.choice([2e11, 1e12, 5e12, 15e12]),
            "seq_len": rng.choice([4096, 8192, 32768, 131072]),
        },
        "hardware": {"accelerator": rng.choice(["h100-sxm", "h800-sxm", "ascend-910b2", "mi300x", "b200"])},
        "cluster": {"target_days": rng.choice([3, 14, 30, 90])},
    }


@pytest.mark.parametrize("seed", range(12))
def test_a_random_deadline_is_sized_as_one_search_per_size_sizes_it(seed):
    """The first round size that meets the deadline, whatever the MFU it needs (past the typical-worst
    one, above the 65% record); where no size the network builds meets it, the plan says it misses."""
    r = resolve(validate_shape(_random_deadline(seed)))
    flop = pricing.model_flops(r)["training_flop"]
    peak = r.accelerator.peak_flops(r.scenario.training.precision)
    try:
        choice = plan.choose_cluster(r, flop, peak)
    except ScenarioError:  # refused: no cluster the network builds holds it or can meet it
        assert _one_search_per_size(r, flop, peak)[0] is None
        return
    cards, _ = _one_search_per_size(r, flop, peak)
    if cards is None:
        doc = _random_deadline(seed)
        assert plan.estimate(doc)["result"]["compute"]["meets_target"] is False
    else:
        assert choice.cards == cards


@pytest.mark.parametrize("doc", CASES, ids=IDS)
def test_the_first_pass_ends_at_the_first_size_a_typical_worst_mfu_would_meet_with(doc):
    """deadline._visited: from the first size, each with a fabric, at most MAX_SIZING_EVALS, up to
    and including the first one (after the first) that the deadline's own rule (the plan with the
    typical-worst MFU given at that size: its mean wall clock with failures) says meets it."""
    from estimator.plan import deadline

    r, *_, seconds = _deadline_inputs(doc)
    sizes = plan.candidate_sizes(r, plan.cards_multiple(r))
    memo = deadline.SizeMemo(r)
    met = deadline_met(r, seconds)
    first = deadline._first_met(sizes, deadline.highest_mfu(sizes, memo), met)
    expected: list[int] = []
    for cards in sizes[first:].tolist():
        if len(expected) >= plan.MAX_SIZING_EVALS or (memo.fabric(cards) is None and expected):
            break
        if memo.fabric(cards) is None:
            continue
        expected.append(cards)
        given = {**doc, "cluster": {"cards": cards}, "efficiency": {"mfu": deadline.MIN_PLAUSIBLE_MFU}}
        days = plan.estimate(given)["result"]["goodput"]["wall_clock_days"]
        if len(expected) > 1 and days <= doc["cluster"]["target_days"]:
            break
    assert deadline._visited(sizes, first, met, memo) == expected


@pytest.mark.parametrize("doc", CASES, ids=IDS)
def test_a_size_meets_the_deadline_as_its_goodput_judges_it(doc):
    """goodput.deadline_met, what the scan decides each size with, at the plan's own cards and MFU
    agrees with result.compute.meets_target (the mean wall clock with failures of result.goodput
    against the deadline)."""
    r, *_, seconds = _deadline_inputs(doc)
    result = plan.estimate(doc)["result"]
    c = result["compute"]
    met = deadline_met(r, seconds)
    assert bool(met(np.array([c["cards"]]), np.array([c["mfu"]]))[0]) is c["meets_target"]
    days = result["goodput"]["wall_clock_days"]
    assert c["meets_target"] is (days <= c["target_days"])
