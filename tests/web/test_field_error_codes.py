"""The core's field errors carry a code and params (estimator.contract.fields._code,
estimator.jsonio); the API keeps the English sentence beside them and the form says them in the
reader's language. Limits from estimator.contract.run: training.seq_len >= 16, target_days > 0."""

import json
import re

import pytest

from estimator.contract.fields import _SENTENCE_CODES
from estimator.contract.scenario import validate_shape
from estimator.errors import FieldError, ScenarioError
from estimator.jsonio import loads_strict
from reports import field_messages, messages
from tests.web.test_api_errors import URL, errors_of, with_
from tests.web.test_pages import FORM, _field_errors


def _error(doc: dict):
    with pytest.raises(ScenarioError) as info:
        validate_shape(doc)
    return info.value.errors


def test_a_pydantic_range_error_has_its_code_and_limit():
    doc = {"model": {"preset": "llama-3.1-8b"}, "hardware": {"accelerator": "ascend-910b2"}}
    doc["training"] = {"tokens": 1e11, "seq_len": 8}
    (err,) = [e for e in _error(doc) if e.field == "training.seq_len"]
    assert (err.code, err.params) == ("must-be-at-least", {"limit": 16})
    assert err.message == "input should be greater than or equal to 16"  # the English default


@pytest.mark.parametrize(
    ("text", "field", "code", "params"),
    [
        ("{x", "", "invalid-json", {"line": 1, "column": 2}),
        ('{"a": 1,\n "a": 2}', "a", "duplicate-key", {}),
        ("[NaN]", "0", "json-not-a-number", {"text": "NaN"}),
        ('{"a": {"b": [1, 1e400]}}', "a.b.1", "json-number-too-large", {"text": "1e400"}),
        ("-Infinity", "", "json-not-a-number", {"text": "-Infinity"}),
    ],
)
def test_strict_json_faults_have_codes(text, field, code, params):
    with pytest.raises(ScenarioError) as info:
        loads_strict(text)
    (err,) = info.value.errors
    assert (err.field, err.code) == (field, code)
    assert params.items() <= err.params.items()


def test_every_field_code_is_catalogued():
    for code in {*_SENTENCE_CODES.values(), "must-be-greater-than", "must-be-at-most", "duplicate-key"}:
        assert code in messages.MESSAGES and code in field_messages.FIELD_MESSAGES, code


@pytest.mark.django_db
def test_the_api_keeps_the_english_sentence_beside_the_code(api_client, scenario):
    response = api_client.post(URL, with_(scenario, "cluster.target_days", -1), format="json")
    (err,) = [e for e in errors_of(response) if e["field"] == "cluster.target_days"]
    assert err["message"] == "input should be greater than 0"
    assert err["code"] == "must-be-greater-than" and err["params"] == {"limit": 0}


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("extra", "zh", "en"),
    [
        (
            "{not json",
            "JSON 无效：第 1 行第 2 列：此处应为用双引号括起的键名",
            "invalid JSON at line 1, column 2",
        ),
        ('{"a": 1, "a": 2}', "a: 在同一个对象中出现了两次", "a: is given twice"),
        ('{"cluster": {"target_days": -1}}', "cluster.target_days: 必须大于 0", "must be greater than 0"),
        ('{"training": {"seq_len": 8}}', "training.seq_len: 不能小于 16", "must be at least 16"),
        ('{"training": {"seq_len": "x"}}', "必须是 JSON 数字", "must be a JSON number"),
    ],
)
def test_the_json_box_errors_in_the_readers_language(client, extra, zh, en):
    """In the JSON box, at its path: not blamed on "the default equipment" (the user typed it)."""
    for prefix, expected in (("/zh-hans", zh), ("", en)):
        response = client.post(f"{prefix}/", {**FORM, "extra": extra})
        assert response.status_code == 400
        block = re.sub(r"\s+", " ", _field_errors(response.content.decode(), "extra"))
        assert expected in block, block
        assert "input should" not in block.lower() and "默认设备" not in block


def test_json_details_are_python_decoder_messages():
    for text in ("{x", "[1,", "[1 2]", '{"a" 1}', '"abc', "1 2"):
        with pytest.raises(json.JSONDecodeError) as info:
            json.loads(text)
        assert info.value.msg in field_messages.JSON_DETAILS, info.value.msg


@pytest.mark.django_db
@pytest.mark.parametrize("body", [[], [1, 2], "a string", 7])
def test_a_body_that_is_not_an_object_is_refused_with_its_code(api_client, body):
    response = api_client.post(URL, json.dumps(body), content_type="application/json")
    assert response.status_code == 400
    (err,) = errors_of(response)
    assert (err["field"], err["code"]) == ("", "must-be-json-object")
    assert err["message"] == "the scenario must be a JSON object"


def test_every_document_root_says_not_an_object_with_one_code():
    from estimator.contract.price_book import parse_book, parse_prices
    from estimator.contract.sweep import validate_sweep
    from estimator.plan.diagnose import diagnose

    for call in (validate_shape, diagnose, parse_book, parse_prices, validate_sweep):
        with pytest.raises(ScenarioError) as info:
            call([])
        (err,) = info.value.errors
        assert err.code == "must-be-json-object", call
    with pytest.raises(ScenarioError) as info:
        parse_prices([])
    assert info.value.errors[0].field == "prices"


def test_the_zh_text_of_not_an_object():
    from django.utils import translation

    with translation.override("zh-hans"):
        err = FieldError("", "the scenario must be a JSON object", code="must-be-json-object")
        assert messages.scenario_error(err) == "必须是 JSON 对象"
