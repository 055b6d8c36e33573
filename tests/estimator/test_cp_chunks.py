"""Context parallelism splits the sequence into 2·cp equal chunks where the stack balances the
causal work (MindSpeed's megatron_cp_algo asserts seq_length % (2·cp) == 0; Megatron-LM's
get_batch_on_this_cp_rank views the sequence as 2·cp chunks): layout.enumeration.cp_not_dividing_sequence,
one rule for the search and the batched search."""

import numpy as np
import pytest

from estimator.errors import ScenarioError
from estimator.layout.enumeration import cp_not_dividing_sequence
from estimator.plan.compose import estimate


def test_the_sequence_splits_into_two_chunks_per_cp_rank():
    cp = np.array([1, 2, 4, 8, 16, 32])
    # 100,000 = 2^5 · 5^5: 2·cp = 64 does not divide it (100,000 / 64 = 1,562.5), 2·cp = 32 does
    # (3,125); without the load balance cp = 32 divides it (3,125)
    assert cp_not_dividing_sequence(100_000, cp, True).tolist() == [False] * 5 + [True]
    assert cp_not_dividing_sequence(100_000, cp, False).tolist() == [False] * 6
    # 131,000 = 2^3 · 16,375: cp 4 gives 8 chunks of 16,375; cp 8 would need 16 (8,187.5 tokens)
    assert cp_not_dividing_sequence(131_000, cp, True).tolist() == [False, False, False, True, True, True]
    # an odd sequence splits for cp = 1 only
    assert cp_not_dividing_sequence(4095, cp, True).tolist() == [False] + [True] * 5


DOC = {
    "model": {"preset": "deepseek-v3"},
    "training": {"tokens": 1e12, "seq_len": 131_000},
    "hardware": {"accelerator": "ascend-910c"},
    "cluster": {"cards": 768},
}


def test_a_plan_at_131000_tokens_takes_a_cp_whose_chunks_are_whole():
    # before engine 2.64.0 it planned CP 8 here (131,000 / 16 = 8,187.5 tokens a chunk: MindSpeed refuses it)
    layout = estimate(DOC)["result"]["parallelism"]
    assert 131_000 % (2 * layout["cp"]) == 0
    assert layout["cp"] <= 4


def test_a_fixed_cp_whose_chunks_are_not_whole_is_refused_with_the_rule():
    with pytest.raises(ScenarioError) as info:
        estimate({**DOC, "parallelism": {"cp": 8}})
    (err,) = info.value.errors
    assert err.field == "parallelism.cp"
    assert err.code == "no-possible-layout"
    assert "cp-not-dividing-sequence" in err.params["reasons"]
    assert "2 x CP equal chunks" in err.message


def test_the_batched_search_keeps_an_enumeration_per_cp_load_balance():
    """batch_enumeration reads the stack's cp_load_balance, so its kept enumerations are keyed by it:
    at 65,552 = 16·4,097 tokens CP 16 (at most 65,552 / 4,096 = 16.004) is a layout only without
    the balance (16 chunks of 4,097 tokens; 2·16 = 32 chunks would be 2,048.5)."""
    import dataclasses

    from estimator.layout import batch_enumeration
    from tests.estimator.test_layout_batch import _problems

    doc = {
        "model": {"preset": "llama-3.1-8b"},
        "training": {"tokens": 1e12, "seq_len": 65_552},
        "hardware": {"accelerator": "h100-sxm"},
        "cluster": {"cards": 64},
    }
    balanced = _problems(doc, [256])
    unbalanced = [
        dataclasses.replace(p, stack=dataclasses.replace(p.stack, cp_load_balance=False)) for p in balanced
    ]
    assert batch_enumeration.enumeration_key(balanced) != batch_enumeration.enumeration_key(unbalanced)
    batch_enumeration.clear()
    try:
        assert max(batch_enumeration.shared_layouts(balanced)[0]["cp"].tolist()) == 8
        assert max(batch_enumeration.shared_layouts(unbalanced)[0]["cp"].tolist()) == 16
    finally:
        batch_enumeration.clear()


def test_a_refusal_names_the_rules_that_refuse_the_fixed_fields_not_every_rule_some_layout_failed():
    """CP 3 at 131,072 = 2^17 tokens: 2·3 = 6 chunks do not split it. TP 8 x CP 3 x DP 32 (768 cards,
    EP 16 x expert TP 8 folding into the 768 ranks, one sequence per DP rank of the 32) fails that
    rule alone, so it is the one named; before, every rule some free axis failed first was listed
    too ('TP must divide the attention heads', for the free TP of 256; 'sequence parallelism needs
    TP > 1')."""
    doc = {**DOC, "training": {"tokens": 1e12, "seq_len": 131_072}, "parallelism": {"cp": 3}}
    with pytest.raises(ScenarioError) as info:
        estimate(doc)
    (err,) = info.value.errors
    assert (err.field, err.code) == ("parallelism.cp", "no-possible-layout")
    assert err.params["reasons"] == ["cp-not-dividing-sequence"]
    assert "attention heads" not in err.message


def test_sequence_parallelism_splits_the_tokens_of_a_cp_rank():
    from estimator.layout.enumeration import sp_splits_sequence

    # 100,000 = 2^5 · 5^5: CP 8 leaves 12,500 tokens a rank, which TP 8 splits into 1,562.5 (Megatron's
    # sequence-parallel scatter refuses it) and TP 4 into 3,125; CP 4 leaves 25,000, TP 8: 3,125
    splits = sp_splits_sequence(100_000, np.array([4, 8, 8]), np.array([8, 8, 4]))
    assert splits.tolist() == [True, False, True]


def test_a_100k_plan_keeps_sequence_parallel_splits_whole_and_searches_tp_without_it_where_not():
    doc = {**DOC, "training": {"tokens": 1e12, "seq_len": 100_000}}
    p = estimate(doc)["result"]["parallelism"]
    # before: TP 8 x CP 8 with sequence parallelism, 1,562.5 tokens a rank
    assert not p["sequence_parallel"] or 100_000 % (p["cp"] * p["tp"]) == 0
    with pytest.raises(ScenarioError) as info:
        estimate({**doc, "parallelism": {"tp": 8, "cp": 8, "sequence_parallel": True}})
    assert info.value.errors[0].params["reasons"] == ["sequence-parallel-not-dividing-sequence"]
    # the off twin is searched: on a dense model (Llama 3.1 70B) TP 8 x CP 8 is planned without it;
    # DeepSeek-V3 (MoE) has none under MindSpeed since 2.74.0 (test_moe_tp_sp)
    dense = {**doc, "model": {"preset": "llama-3.1-70b"}, "parallelism": {"tp": 8, "cp": 8}}
    fixed = estimate(dense)["result"]["parallelism"]
    assert (fixed["tp"], fixed["cp"], fixed["sequence_parallel"]) == (8, 8, False)
