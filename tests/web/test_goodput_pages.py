"""result.goodput on the web: the API's named fields, the report's headline, table, chart and
levers in English and Chinese, the advice codes, compare and the .xlsx."""

from __future__ import annotations

import io
import json

import pytest
from django.utils import translation

from reports import compare, messages

GOODPUT_FIELDS = (
    "expected_interruptions",
    "mean_time_between_interruptions_h",
    "checkpoint_interval_s",
    "checkpoint_write_s",
    "effective_training_time_ratio",
    "wall_clock_days",
)


@pytest.mark.django_db
def test_api_answers_goodput_with_named_fields(client, deadline_scenario):
    response = client.post(
        "/api/v1/estimates", json.dumps(deadline_scenario), content_type="application/json"
    )
    assert response.status_code == 201, response.content
    result = response.json()["result"]
    g = result["goodput"]
    for field in GOODPUT_FIELDS:
        assert isinstance(g[field], float), field
    # the deadline is judged with failures: 30 days buys the cards that finish in 30 days with them
    assert g["wall_clock_days"] <= 30 and result["compute"]["meets_target"] is True
    assert g["wall_clock_days"] > result["compute"]["wall_clock_days"]


@pytest.mark.django_db
def test_a_run_that_never_finishes_is_a_400_on_its_field(client, scenario):
    body = {**scenario, "cluster": {"cards": 65536}, "reliability": {"rate_scale": 100}}
    response = client.post("/api/v1/estimates", json.dumps(body), content_type="application/json")
    assert response.status_code == 400
    (error,) = response.json()["errors"]
    assert error["field"] == "cluster.cards" and "never finishes" in error["message"]


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("prefix", "needles"),
    [
        (
            "",
            (
                "Days with failures",
                "Failures, checkpoints and restarts",
                "chart-goodput",
                "what each lever saves",
            ),
        ),
        ("/zh-hans", ("含故障天数", "故障、检查点与重启", "chart-goodput", "各项措施可节省多少")),
    ],
)
def test_report_shows_days_with_failures_table_chart_and_levers(
    client, make_estimate, deadline_scenario, prefix, needles
):
    est = make_estimate(data=deadline_scenario)
    page = client.get(f"{prefix}/r/{est.share_token}/").content.decode()
    for needle in needles:
        assert needle in page, needle
    assert 'id="headline-days_with_failures"' in page


def test_goodput_advice_renders_in_both_languages():
    item = {
        "code": "goodput-restarts",
        "severity": "info",
        "message": "…",
        "params": {
            "share": 0.12,
            "days": 31.0,
            "lever": "spare-nodes",
            "days_saved": 1.5,
            "cost": 2e6,
            "currency": "USD",
        },
    }
    with translation.override("en"):
        out = messages.advice(item, "USD")
        assert out["message"].startswith(
            "Restarts and re-done work take 12% of the 31 days on average; hot standby nodes"
        )
        assert out["suggestion"] == "Switch on hot standby nodes."
    with translation.override("zh-hans"):
        out = messages.advice(item, "CNY")
        assert "热备节点" in out["message"] and "12%" in out["message"] and "平均 31 天" in out["message"]


@pytest.mark.django_db
def test_compare_and_xlsx_carry_the_days_with_failures(client, make_estimate, deadline_scenario):
    from openpyxl import load_workbook

    est = make_estimate(data=deadline_scenario)
    rows = {r["key"]: r for r in compare.rows([{"scenario": est.scenario, "result": est.result}])}
    # the median, as on the report's headline (the mean is a working row)
    assert rows["days_with_failures"]["raw"] == [est.result["goodput"]["wall_clock_days_p50"]]
    assert rows["ettr"]["raw"] == [est.result["goodput"]["effective_training_time_ratio"]]
    wb = load_workbook(io.BytesIO(client.get(f"/r/{est.share_token}/report.xlsx").content))
    summary = {row[0]: row[1] for row in wb["Summary"].iter_rows(min_row=2, values_only=True)}
    assert summary["Days with failures"] == pytest.approx(est.result["goodput"]["wall_clock_days_p50"])


def test_a_free_lever_reads_without_a_cost_in_chinese():
    item = {
        "code": "goodput-restarts",
        "message_code": "goodput-restarts.free",
        "severity": "info",
        "message": "…",
        "params": {
            "share": 0.02,
            "days": 29.3,
            "lever": "in-memory-checkpoints",
            "days_saved": 0.7,
            "cost": None,
        },
    }
    with translation.override("zh-hans"):
        out = messages.advice(item, "CNY")
        assert "无需新增硬件" in out["message"] and "复制到对等节点内存的检查点" in out["message"]


@pytest.mark.django_db
def test_openapi_documents_result_goodput_and_a_result_conforms(client, deadline_scenario):
    from jsonschema import Draft202012Validator

    doc = client.get("/api/v1/schema", HTTP_ACCEPT="application/json").json()
    schemas = doc["components"]["schemas"]
    goodput = schemas["ResultGoodput"]
    assert set(GOODPUT_FIELDS) <= set(goodput["required"])
    assert schemas["Result"]["properties"]["goodput"] == {"$ref": "#/components/schemas/ResultGoodput"}
    from estimator.plan.compose import estimate

    result = estimate(deadline_scenario)["result"]
    # drf-spectacular's own dependency; the section's $refs resolve inside the document's components
    validator = Draft202012Validator({**goodput, "components": doc["components"]})
    assert [e.message for e in validator.iter_errors(result["goodput"])] == []


@pytest.mark.django_db
def test_the_form_sets_the_checkpoint_mode_and_spares_and_a_copy_keeps_them(client):
    from reports.models import Estimate

    form = {
        "model_source": "preset",
        "preset": "llama-3.1-8b",
        "accelerator": "ascend-910b2",
        "tokens": "200B",
        "sizing": "cards",
        "cards": "64",
        "currency": "USD",
        "checkpoint_mode": "async",
        "spare_nodes": "1",
    }
    assert client.post("/", form).status_code == 302
    est = Estimate.objects.get()
    assert est.input["training"]["stack_overrides"] == {"checkpoint_mode": "async"}
    assert est.input["reliability"] == {"spare_nodes": 1}
    assert est.result["goodput"]["checkpoint_mode"] == "async"
    assert est.result["goodput"]["spares"]["nodes"] == 1
    html = client.get(f"/?copy={est.share_token}").content.decode()
    assert '<option value="async" selected>' in html and 'name="spare_nodes" value="1"' in html


@pytest.mark.django_db
def test_the_forms_checkpoint_interval_is_the_one_the_days_count(client):
    """The form's "Checkpoint interval (s)" (storage.checkpoint_interval_s): before 2.55.0 it sized
    only the warm tier, the days taking Daly's optimum whatever the reader entered."""
    from reports.models import Estimate
    from tests.web.test_pages import FORM

    assert client.post("/", {**FORM, "checkpoint_interval_s": "1800"}).status_code == 302
    est = Estimate.objects.get()
    assert est.result["goodput"]["checkpoint_interval_s"] == 1800.0
    assert est.result["goodput"]["checkpoint_interval_rule"] == "given"
