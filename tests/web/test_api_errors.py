"""Bad bodies: 400 with {"errors": [{"field", "message"}]} naming the field; never a 500."""

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from estimator.dotted import pop_path, set_path

pytestmark = pytest.mark.django_db

URL = "/api/v1/estimates"


def post_raw(client, body: str | bytes, content_type="application/json"):
    return client.generic("POST", URL, body, content_type=content_type)


def errors_of(response) -> list[dict]:
    assert response.status_code == 400, (response.status_code, response.content)
    body = response.json()
    assert set(body) == {"errors"} and body["errors"]
    for err in body["errors"]:  # a refused plan adds its code and params (estimator.plan.refusal)
        assert set(err) in ({"field", "message"}, {"field", "message", "code", "params"}), err
        assert isinstance(err["message"], str) and err["message"]
    return body["errors"]


def fields(response) -> set[str]:
    return {e["field"] for e in errors_of(response)}


def with_(scenario, path, value):
    doc = json.loads(json.dumps(scenario))
    if value is ...:
        pop_path(doc, path)
    else:
        set_path(doc, path, value)
    return doc


@pytest.mark.parametrize(
    ("path", "value", "field"),
    [
        ("training", ..., "training"),  # missing section
        ("training.tokens", ..., "training.tokens"),  # missing field
        ("training.tokens", "many", "training.tokens"),  # wrong type
        ("training.tokens", True, "training.tokens"),  # a boolean is not a number
        ("training.tokens", -5, "training.tokens"),  # negative
        ("training.tokens", 0, "training.tokens"),
        ("training.tokens", 1e300, "training.tokens"),  # absurdly large
        ("cluster.cards", 10**40, "cluster.cards"),
        ("cluster.target_days", -1, "cluster.target_days"),
        ("model.preset", "no-such-model", "model.preset"),  # unknown preset
        ("hardware.accelerator", "no-such-chip", "hardware.accelerator"),
        ("training.precision", "int3", "training.precision"),
        ("parallelism.zero_stage", 7, "parallelism.zero_stage"),
        ("efficiency.mfu", 1.5, "efficiency.mfu"),
        ("training.colour", "blue", "training.colour"),  # not a field of the contract
        # recompute modules: a list of Megatron-Core module names the model prices
        (
            "training.stack_overrides",
            {"selective_recompute": ["mla_up_proj"]},
            "training.stack_overrides.selective_recompute",
        ),
        (
            "training.stack_overrides",
            {"selective_recompute": []},
            "training.stack_overrides.selective_recompute",
        ),
        (
            "training.stack_overrides",
            {"overlap_p2p_comm": "yes"},
            "training.stack_overrides.overlap_p2p_comm",
        ),
        ("training.stack_overrides", {"fp8_weight_cache": 1}, "training.stack_overrides.fp8_weight_cache"),
    ],
)
def test_field_errors_name_the_path(api_client, scenario, path, value, field):
    response = api_client.post(URL, with_(scenario, path, value), format="json")
    assert field in fields(response)


@pytest.mark.parametrize(
    ("mechanism", "value"),
    [
        ("always_recompute", [1]),  # a list, but not of module names
        ("always_recompute", [["norms"]]),
        ("always_recompute", ["norms", "norms"]),  # a module twice, as selective_recompute refuses
        ("selective_recompute", [["core_attn"]]),
        ("fp8_recipe", {"name": "blockwise"}),
        ("moe_max_nodes", 1.5),
        ("low_precision_cache", "yes"),
        ("adam_moments", ["bf16"]),
        ("cp_comm_type", ["a2a"]),  # one fault, not also "the profile does not offer ['a2a']"
    ],
)
def test_a_bad_stack_override_is_one_error_at_its_mechanism(api_client, scenario, mechanism, value):
    """One sentence at training.stack_overrides.<mechanism>, not one per member of a type union at
    paths no scenario has (".bool", ".int", ".list[str].0")."""
    response = api_client.post(
        URL, with_(scenario, f"training.stack_overrides.{mechanism}", value), format="json"
    )
    errors = errors_of(response)
    assert [e["field"] for e in errors] == [f"training.stack_overrides.{mechanism}"], errors


def test_recompute_modules_are_accepted_and_reported(api_client, scenario):
    modules = ["core_attn", "layernorm", "moe_act"]
    doc = with_(scenario, "training.stack_overrides", {"selective_recompute": modules})
    response = api_client.post(URL, doc, format="json")
    assert response.status_code == 201, response.content
    stack = next(
        a for a in response.json()["result"]["assumptions"] if a["name"].startswith("software stack")
    )
    assert stack["detail"]["selective_recompute"] == modules


def test_both_cards_and_deadline(api_client, scenario):
    response = api_client.post(URL, with_(scenario, "cluster.target_days", 30), format="json")
    assert any(f.startswith("cluster") for f in fields(response))


def test_several_errors_at_once(api_client, scenario):
    doc = with_(with_(scenario, "training.tokens", -1), "cluster.cards", "x")
    assert {"training.tokens", "cluster.cards"} <= fields(api_client.post(URL, doc, format="json"))


@pytest.mark.parametrize("literal", ["NaN", "Infinity", "-Infinity", "1e999", "-1e999"])
def test_non_finite_numbers_are_refused(api_client, scenario, literal):
    body = json.dumps(scenario).replace('"tokens": 200000000000.0', f'"tokens": {literal}')
    assert literal in body
    (error,) = errors_of(post_raw(api_client, body))
    assert error["field"] == "training.tokens"  # where the literal stood, not the whole body
    assert literal in error["message"] and error["params"] == {"text": literal}


@pytest.mark.parametrize(
    ("body", "field"),
    [
        (
            '{"model": {"preset": "llama-3.1-8b"}, "axes": {"mfu": [0.4, NaN]}}',
            "axes.mfu.1",
        ),  # list in object
        ('{"model": {"preset": "llama-3.1-8b"}, "tokens": Infinity}', "tokens"),  # a top-level key
        ("NaN", ""),  # the whole body: no field below it
    ],
)
def test_a_non_finite_number_is_refused_at_its_path(api_client, body, field):
    (error,) = errors_of(post_raw(api_client, body))
    assert error["field"] == field and error["code"] in ("json-not-a-number", "json-number-too-large")


@pytest.mark.parametrize(
    "body",
    [
        "",  # empty
        "{",  # truncated
        "not json",
        "[1, 2, 3]",  # not an object
        '"a string"',
        "null",
        "42",
        '{"model": ' * 5000 + "1" + "}" * 5000,  # nested too deeply
        '{"training": {"tokens": ' + "9" * 5000 + "}}",  # an integer with 5000 digits
        b"\xff\xfe\x00 not utf-8",
    ],
)
def test_malformed_bodies(api_client, body):
    errors_of(post_raw(api_client, body))


def test_body_too_large(api_client, settings):
    settings.API_MAX_BODY_BYTES = 1000
    errors_of(post_raw(api_client, json.dumps({"name": "x" * 2000})))


def test_form_encoded_body_is_415(api_client):
    response = api_client.post(URL, {"name": "x"})  # multipart
    assert response.status_code == 415
    assert response.json()["errors"][0]["field"] == ""


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=12,
)
sections = st.fixed_dictionaries(
    {},
    optional={
        "model": st.dictionaries(
            st.sampled_from(["preset", "params", "hidden_size", "num_hidden_layers"]), json_values, max_size=3
        ),
        "training": st.dictionaries(
            st.sampled_from(["tokens", "seq_len", "precision", "global_batch_tokens"]),
            json_values,
            max_size=3,
        ),
        "cluster": st.dictionaries(st.sampled_from(["cards", "target_days"]), json_values, max_size=2),
        "parallelism": st.dictionaries(
            st.sampled_from(["tp", "pp", "dp", "zero_stage", "recompute"]), json_values, max_size=3
        ),
        "hardware": json_values,
    },
)


@settings(
    max_examples=60,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(body=st.one_of(json_values, sections))
def test_no_body_gives_a_500(api_client, caplog, body):
    response = api_client.post(URL, body, format="json")
    assert not [r for r in caplog.records if r.name == "reports.services"], (
        "the core failed on an input it accepted"
    )
    assert response.status_code in (201, 400), response.content
    if response.status_code == 400:
        errors_of(response)


FIELDS = [
    "training.tokens",
    "training.seq_len",
    "training.global_batch_tokens",
    "training.precision",
    "cluster.cards",
    "hardware.accelerator",
    "hardware.server",
    "hardware.cards_per_node",
    "hardware.overrides",
    "parallelism.tp",
    "parallelism.pp",
    "parallelism.ep",
    "parallelism.zero_stage",
    "parallelism.micro_batch_size",
    "efficiency.mfu",
    "network.switch_ports",
    "network.oversubscription",
    "storage.checkpoints_kept",
    "cost.pue",
    "serving",
    "model.hidden_size",
    "model.num_experts",
    "model",
]
numbers = st.one_of(
    st.integers(-(10**20), 10**20),
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from([0, 1, 3, 7, 64, 4096]),
)


@settings(
    max_examples=80,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(field=st.sampled_from(FIELDS), value=st.one_of(numbers, json_values))
def test_no_single_field_change_gives_a_500(api_client, caplog, scenario, field, value):
    """A valid scenario with one field replaced by anything: planned (201) or refused (400), never 500,
    and never by way of the service's safety net for exceptions the core should not raise."""
    response = api_client.post(URL, with_(scenario, field, value), format="json")
    assert not [r for r in caplog.records if r.name == "reports.services"], (field, value)
    assert response.status_code in (201, 400), (field, value, response.content[:500])
    if response.status_code == 400:
        errors_of(response)


def test_a_core_bug_is_a_400_not_a_500(api_client, scenario, monkeypatch, caplog):
    """The safety net: an unexpected exception in the core is logged and answered in the error shape."""
    import reports.services

    def broken(data, books=None):
        raise ZeroDivisionError("boom")

    monkeypatch.setattr(reports.services, "core_estimate", broken)
    errors = errors_of(api_client.post(URL, scenario, format="json"))
    assert "ZeroDivisionError" in errors[0]["message"]
    assert any(r.name == "reports.services" and r.levelname == "ERROR" for r in caplog.records)


def test_a_truly_impossible_layout_is_a_400_with_the_rules_and_suggestions(api_client):
    """Llama 3.1 70B on 64 cards with TP 8, PP 8 and ZeRO-3: DP = 64 / 64 = 1, and ZeRO-3 does not
    combine with PP on Megatron-Core; no figures, the rule in words and layouts that would pass."""
    body = {
        "model": {"preset": "llama-3.1-70b"},
        "training": {"tokens": 5e11},
        "hardware": {"accelerator": "h100-sxm"},
        "cluster": {"cards": 64},
        "parallelism": {"tp": 8, "pp": 8, "zero_stage": 3},
    }
    response = api_client.post(URL, body, format="json")
    (err,) = errors_of(response)
    assert err["field"] == "parallelism" and err["code"] == "no-possible-layout"
    assert "zero-stage-incompatible-with-pp" in err["params"]["reasons"]
    assert "ZeRO-2/3 does not combine with pipeline parallelism" in err["message"]
    suggestions = err["params"]["suggestions"]
    assert suggestions and all(s["tp"] * s["pp"] * s["dp"] * s["cp"] == 64 for s in suggestions)
    assert all(not (s["zero_stage"] >= 2 and s["pp"] > 1) for s in suggestions)
    assert "result" not in response.json()


@pytest.mark.parametrize(
    ("accelerator", "preset", "code"),
    [
        ("gb200", "llama-3.1-8b", "budget-buys-no-cluster"),
        ("ascend-910b2", "llama-3.1-405b", "budget-cards-hold-no-layout"),
    ],
)
def test_a_budget_that_plans_nothing_is_a_400_at_the_budget(api_client, accelerator, preset, code):
    """Budget mode: a budget below one NVL72 rack, or one whose cards cannot hold the model, is
    refused at cluster.budget in the one error shape, with a code the pages word in Chinese too."""
    body = {
        "model": {"preset": preset},
        "training": {"tokens": 1e11},
        "hardware": {"accelerator": accelerator},
        "cluster": {"budget": 6e5},
    }
    (err,) = errors_of(api_client.post(URL, body, format="json"))
    assert (err["field"], err["code"]) == ("cluster.budget", code)
    # the API speaks the core's English; its code + params word the page in the reader's language
    from django.utils import translation

    from reports import messages

    with translation.override("zh-hans"):
        text = messages.render(err["code"], err["params"], "")
    assert any("\u4e00" <= ch <= "\u9fff" for ch in text), text


def test_a_deadline_no_cluster_meets_is_a_400_at_the_deadline(api_client):
    body = {
        "model": {"preset": "llama-3.1-405b"},
        "training": {"tokens": 1e15},
        "hardware": {"accelerator": "h100-sxm"},
        "cluster": {"target_days": 1},
    }
    (err,) = errors_of(api_client.post(URL, body, format="json"))
    assert (err["field"], err["code"]) == ("cluster.target_days", "deadline-needs-too-many-cards")
    assert err["params"]["max_cards"] == 65_536  # 64-port switches, 3 tiers: 64^3 / 4
