"""The sweep builder's refusals of its axes in the reader's language: repeated values, a range
ending below its start or too fine, two axes that cannot be swept together and too many scenarios
(codes of estimator.contract.sweep and sweeps.services, words in reports.field_messages)."""

from __future__ import annotations

import re

import pytest
from django.utils import translation

from estimator.contract import sweep as estimator_sweep
from estimator.errors import ScenarioError
from reports import messages
from tests.web.sweep_runs import BUILDER_BASE, zh_only

CARDS = {**BUILDER_BASE, "mode": "builder", "sizing": "cards", "cards": "1024", "mfu": "0.4"}


def _summary(client, change: dict, lang: str = "zh-hans") -> str:
    prefix = "/zh-hans" if lang == "zh-hans" else ""
    response = client.post(f"{prefix}/sweeps/", {**CARDS, **change}, HTTP_ACCEPT_LANGUAGE=lang)
    assert response.status_code == 400
    block = re.search(r'id="error-summary">(.*?)</div>', response.content.decode(), re.S).group(1)
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", block)).strip()


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("change", "zh"),
    [
        ({"axis1_field": "cluster.cards", "axis1_list": "512, 512"}, "有重复的取值"),
        (
            {"axis1_field": "cluster.cards", "axis1_start": "512", "axis1_stop": "256", "axis1_step": "64"},
            "范围的终点不能小于起点",
        ),
        (  # 1 to 1亿 by 1: 100,000,000 values, past limits.MAX_AXIS_VALUES (100,000)
            {"axis1_field": "cluster.cards", "axis1_start": "1", "axis1_stop": "1亿", "axis1_step": "1"},
            "该步长会产生超过 100,000 个取值；这是每个维度的上限",
        ),
        (
            {
                "axis1_field": "cluster.cards",
                "axis1_list": "512, 1024",
                "axis2_field": "cluster.target_days",
                "axis2_list": "10, 20",
            },
            "不能与“期限（天）”同时扫描",
        ),
    ],
)
def test_the_builder_refuses_an_axis_in_chinese(client, change, zh):
    text = _summary(client, change)
    assert zh in text, text
    zh_only(text)


@pytest.mark.django_db
def test_two_exclusive_axes_name_each_other_in_words_in_english(client):
    change = {"axis1_field": "cluster.cards", "axis1_list": "512", "axis2_field": "cluster.target_days"}
    text = _summary(client, {**change, "axis2_list": "10"}, lang="en")
    assert "cannot be swept together with Deadline (days)" in text and "cluster.target_days" not in text


def test_too_many_scenarios_keeps_its_figures_for_the_reader():
    # 1,000 x 1,000 = 1,000,000 scenarios past a limit of 10 (the cap passed in)
    axes = {"cluster.cards": list(range(1, 1001)), "training.tokens": list(range(1, 1001))}
    with pytest.raises(ScenarioError) as info:
        estimator_sweep.parse_axes(axes, max_scenarios=10)
    (err,) = info.value.errors
    assert (err.code, err.params) == ("too-many-scenarios", {"scenarios": 1_000_000, "max_scenarios": 10})
    with translation.override("zh-hans"):
        assert messages.scenario_error(err) == "各维度组合出 1,000,000 个场景；每次扫描最多 10 个"


def test_a_shape_error_an_axis_value_causes_keeps_its_code():
    # "5e11" as a string on the tokens axis: the scenario's own refusal (must-be-json-number), on the axis
    base = {
        "model": {"preset": "llama-3.1-70b"},
        "training": {"tokens": 5e11},
        "hardware": {"accelerator": "ascend-910b2"},
        "cluster": {"cards": 1024},
    }
    with pytest.raises(ScenarioError) as info:
        estimator_sweep.validate_sweep({"name": "q", "base": base, "axes": {"training.tokens": ["5e11"]}})
    (err,) = info.value.errors
    assert (err.field, err.code) == ("axes.training.tokens", "must-be-json-number")
    with translation.override("zh-hans"):
        assert messages.scenario_error(err) == "必须是 JSON 数字，不能是字符串或布尔值"


@pytest.mark.django_db
def test_a_negative_value_in_a_list_is_refused_as_below_zero(client):
    text = _summary(client, {"axis1_field": "cluster.cards", "axis1_list": "512, -5"})
    assert "“-5”小于零。" in text, text


@pytest.mark.django_db
def test_a_refused_deadline_has_one_error(client):
    from sweeps.builder import SweepBuilderForm

    data = {
        **CARDS,
        "sizing": "deadline",
        "target_days": "0",
        "axis1_field": "cluster.cards",
        "axis1_list": "512",
    }
    with translation.override("en"):
        form = SweepBuilderForm(data)
        assert not form.is_valid()
        (error,) = form.errors["target_days"]
    assert error != "Give a deadline in days."
