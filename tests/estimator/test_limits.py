"""The work budget (estimator.limits) and hostile text, enforced at validation with the field path
(issue 12). Limits are read from estimator.limits so the test states the rule, not a copy of it."""

import copy

import pytest

from estimator import limits
from estimator.contract.scenario import scenario_json_schema, validate_shape
from estimator.errors import ScenarioError
from estimator.jsonio import loads_strict
from estimator.plan.work_budget import check_work_budget

BASE = {
    "model": {"preset": "llama-3.1-8b"},
    "training": {"tokens": 2e11},
    "hardware": {"accelerator": "ascend-910b2"},
    "cluster": {"cards": 64},
}


def with_(**parts) -> dict:
    doc = copy.deepcopy(BASE)
    for section, values in parts.items():
        if isinstance(values, dict):
            doc.setdefault(section, {}).update(values)
        else:
            doc[section] = values
    return doc


def fields_of(exc: pytest.ExceptionInfo) -> list[str]:
    return [e.field for e in exc.value.errors]


@pytest.mark.parametrize(
    ("model", "field"),
    [
        ({"num_hidden_layers": limits.MAX_LAYERS + 1}, "model.num_hidden_layers"),
        ({"n_layer": limits.MAX_LAYERS + 1}, "model.n_layer"),  # a config.json alias: same cap
        ({"num_layers": 10_000}, "model.num_layers"),
        ({"num_experts": limits.MAX_EXPERTS + 1, "num_experts_per_tok": 2}, "model.num_experts"),
        ({"num_local_experts": 100_000, "num_experts_per_tok": 2}, "model.num_local_experts"),
        ({"first_k_dense_replace": limits.MAX_LAYERS + 1}, "model.first_k_dense_replace"),
    ],
)
def test_model_size_caps_name_the_field(model, field):
    with pytest.raises(ScenarioError) as exc:
        validate_shape(with_(model=model))
    assert field in fields_of(exc)


def test_caps_allow_the_largest_published_models():
    # DeepSeek-V3 (61 layers, 256 routed experts) and Kimi K2 (384 experts) sit well inside.
    validate_shape(with_(model={"num_hidden_layers": 61, "n_routed_experts": 384, "num_experts_per_tok": 8}))


@pytest.mark.parametrize(
    ("parts", "field"),
    [
        ({"cluster": {"cards": limits.MAX_CARDS + 1}}, "cluster.cards"),
        ({"parallelism": {"dp": limits.MAX_CARDS + 1}}, "parallelism.dp"),
        ({"uncertainty": {"samples": limits.MAX_MC_SAMPLES + 1}}, "uncertainty.samples"),
        ({"uncertainty": {"samples": 1_000_000}}, "uncertainty.samples"),
        ({"training": {"tokens": 5e-324}}, "training.tokens"),  # saved, then its report failed
        ({"training": {"tokens": 0.5}}, "training.tokens"),
    ],
)
def test_numbers_the_core_cannot_use_are_refused(parts, field):
    with pytest.raises(ScenarioError) as exc:
        validate_shape(with_(**parts))
    assert fields_of(exc) == [field]


def test_one_token_is_enough():
    assert validate_shape(with_(training={"tokens": 1})).training.tokens == 1


def test_too_many_layout_candidates_are_refused_before_the_search():
    # 720,720 = 2^4·3^2·5·7·11·13 has 126 divisors below 1,000 layers: with 1,024 experts and a
    # 1 M-token sequence the search would enumerate 126·9·3·4·4·3 = 163,296 layouts per (tp, ep,
    # expert-TP, sequence-parallel): tp 1 with its 11 ep values (expert-TP 1) and sp off and on (on
    # fails there, counted), tp 2, 4, 8 each with ep 1 (expert-TP = tp) and 10 ep values at
    # expert-TP 1 or tp, sp on only (sp_off_not_searched): 11·2 + 3·21 = 85, so 85·163,296 =
    # 13,880,160 layouts.
    worst = {
        "model": {
            "num_hidden_layers": 1000,
            "hidden_size": 16384,
            "num_attention_heads": 128,
            "vocab_size": 262144,
            "intermediate_size": 53248,
            "num_experts": 1024,
            "num_experts_per_tok": 8,
            "moe_intermediate_size": 4096,
        },
        "training": {"tokens": 1e17, "seq_len": 1_048_576},
        "hardware": {"accelerator": "h100-sxm"},
        "cluster": {"cards": 720_720},
        "network": {"switch_ports": 4096},
    }
    with pytest.raises(ScenarioError) as exc:
        check_work_budget(worst)
    assert fields_of(exc) == ["cluster.cards"]
    assert "13,880,160" in exc.value.errors[0].message


LONG_MOE_ON_CLOUDMATRIX = {
    "model": {"preset": "deepseek-v3"},
    "training": {"tokens": 1e12, "seq_len": 131_072},
    "hardware": {"accelerator": "ascend-910c"},
}


@pytest.mark.parametrize("cards", [384, 1536, 3072])
def test_a_long_context_moe_plan_on_cloudmatrix_is_within_the_budget(cards):
    # DeepSeek-V3 at 128K on 910C (384-card domain) was refused on cluster.cards at every card count
    # ("2,927,232 parallel layouts"), while the same scenario with a deadline planned 1,152 cards.
    # The count by hand: pp = divisors of the cards up to 61 layers (1 2 3 4 6 8 12 16 24 32 48:
    # 11, the same for 384, 1536 and 3072), cp 1..32 (131,072 / 4,096: 6), micro-batch 1..32 (the
    # 4,194,304-token batch is 32 sequences: 6), virtual stages 4, ZeRO 4, recompute 3 (selective
    # saves nothing with fused attention): 11·6·6·4·4·3 = 19,008 per (tp, ep, expert TP, sp).
    # tp 1..256 (9 powers of two in the domain), ep 1..256 (9): tp 1 with its 9 ep values, sp off
    # and on: 18; tp 2..256 (8) with ep 1 (expert TP = tp) and 8 ep values at expert TP 1 or tp,
    # sp on: 8·17 = 136; 154 in all, 19,008·154 = 2,927,232 layouts, under the cap.
    from estimator.plan.work_budget import layout_candidates

    doc = {**LONG_MOE_ON_CLOUDMATRIX, "cluster": {"cards": cards}}
    resolved = check_work_budget(doc)
    assert layout_candidates(resolved, cards) == 11 * 6 * 6 * 4 * 4 * 3 * (18 + 8 * 17) == 2_927_232


def test_the_search_holds_one_byte_per_layout_of_the_product():
    # The search holds a rule position per entry of the unexpanded product (here 9·11·6·9·9·
    # 6·4·2·4·3 = 27,713,664 entries for the 2,927,232 layouts it considers): as eight-byte codes
    # that was two arrays of 222 MB (tracemalloc peak 443 MB, 728 MB RSS); one byte each is 28 MB.
    import tracemalloc

    from estimator.contract.resolve import resolve
    from estimator.layout import search
    from estimator.plan.compose import layout_problem
    from estimator.plan.work_budget import _ANY_FABRIC

    resolved = resolve(validate_shape({**LONG_MOE_ON_CLOUDMATRIX, "cluster": {"cards": 3072}}), None)
    problem = layout_problem(resolved, 3072, _ANY_FABRIC)
    tracemalloc.start()
    try:
        _, _, considered = search._structurally_valid(problem)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    product = 9 * 11 * 6 * 9 * 9 * 6 * 4 * 2 * 4 * 3
    assert considered == 2_927_232
    assert product == 27_713_664
    assert peak < 4 * product  # a few one-byte arrays of the product, not eight-byte ones


def test_a_fixed_layout_shrinks_the_search_under_the_cap():
    doc = with_(cluster={"cards": 720_720}, network={"switch_ports": 4096})
    assert check_work_budget(doc).scenario.cluster.cards == 720_720  # an 8B model: few layouts


def test_unknown_model_keys_are_ignored_not_stored_and_config_aliases_are_read():
    """A whole config.json is accepted (issue 20): an unread key is listed, never kept."""
    s = validate_shape(with_(model={"preset": "llama-3.1-8b", "junk": "x" * 1000}))
    assert s.ignored_model_fields == ("junk",) and "junk" not in s.normalized()["model"]
    gpt2 = {"n_layer": 12, "n_embd": 768, "n_head": 12, "vocab_size": 50257, "model_type": "gpt2"}
    doc = with_(model=gpt2)
    doc["model"].pop("preset")
    validate_shape(doc)


@pytest.mark.parametrize(
    ("parts", "field"),
    [
        ({"name": "plan\x00"}, "name"),
        ({"name": "plan \ud800"}, "name"),
        ({"model": {"preset": "llama\x00"}}, "model.preset"),
        (
            {"hardware": {"accelerator": {"name": "x\udfff", "peak_flops_bf16": 1e15}}},
            "hardware.accelerator.name",
        ),
    ],
)
def test_nul_and_lone_surrogates_are_refused_with_the_path(parts, field):
    with pytest.raises(ScenarioError) as exc:
        validate_shape(with_(**parts))
    assert fields_of(exc) == [field]


def test_duplicate_keys_are_refused_with_the_path():
    text = '{"model": {"preset": "llama-3.1-8b", "preset": "llama-3.1-70b"}, "training": {"tokens": 1}}'
    with pytest.raises(ScenarioError) as exc:
        loads_strict(text)
    assert fields_of(exc) == ["model.preset"]


def test_nesting_is_capped_with_the_path():
    deep = "[" * (limits.MAX_JSON_DEPTH + 1) + "]" * (limits.MAX_JSON_DEPTH + 1)
    with pytest.raises(ScenarioError) as exc:
        loads_strict(f'{{"model": {deep}}}')
    assert exc.value.errors[0].field.startswith("model.0.0")
    assert "nested" in exc.value.errors[0].message
    # deeper than Python's own recursion limit: a clean refusal, not a RecursionError
    with pytest.raises(ScenarioError):
        loads_strict("[" * 100_000 + "]" * 100_000)


def test_the_schema_states_the_limits():
    props = scenario_json_schema()["$defs"]
    assert props["ModelSpec"]["properties"]["num_hidden_layers"]["anyOf"][0]["maximum"] == limits.MAX_LAYERS
    assert props["Uncertainty"]["properties"]["samples"]["maximum"] == limits.MAX_MC_SAMPLES
    assert props["Cluster"]["properties"]["cards"]["anyOf"][0]["maximum"] == limits.MAX_CARDS
    assert props["Training"]["properties"]["tokens"]["minimum"] == 1


def test_search_seconds_is_a_positive_budget():
    assert 0 < limits.SEARCH_SECONDS <= 10
