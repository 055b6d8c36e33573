"""Pilot-calibration and diagnose refusals keep their code + params when their field path is put
under calibration.pilot / measured, so the pages say them in the reader's language and the API
error keeps its one shape (field, English message, code, params). Llama 3.1 8B has 32 attention
heads (its config.json), so a pilot TP of 3 is refused as not dividing them."""

import pytest

from tests.diagnosis.test_calibration_report import SCENARIO
from tests.diagnosis.test_diagnose_web import FORM, RUN
from tests.diagnosis.test_diagnose_web import URL as DIAGNOSE
from tests.web.test_pages import FORM as ESTIMATE_FORM

pytestmark = pytest.mark.django_db

PILOT_TP3 = {**SCENARIO["calibration"]["pilot"], "parallelism": {"tp": 3}}


def test_a_refused_pilot_layout_keeps_its_code_in_the_api(api_client):
    body = {**SCENARIO, "calibration": {"pilot": PILOT_TP3}}
    response = api_client.post("/api/v1/estimates", body, format="json")
    assert response.status_code == 400
    errors = {e["field"]: e for e in response.json()["errors"]}
    tp = errors["calibration.pilot.parallelism.tp"]
    assert (tp["code"], tp["params"]) == ("fixed-tp-heads", {"heads": 32})
    assert tp["message"] == "must divide the 32 attention heads"


def test_a_refused_pilot_layout_is_said_in_chinese_on_the_form(client):
    import json

    extra = json.dumps({"calibration": {"pilot": PILOT_TP3}})
    page = client.post("/zh-hans/", {**ESTIMATE_FORM, "extra": extra})
    assert page.status_code == 400
    html = page.content.decode()
    assert "calibration.pilot.parallelism.tp: 必须整除 32 个注意力头" in html
    assert "must divide the 32 attention heads" not in html


def test_diagnose_measurement_errors_have_codes(api_client):
    response = api_client.post(DIAGNOSE, {**RUN, "measured": {"step_time_s": "fast"}}, format="json")
    (err,) = response.json()["errors"]
    assert (err["field"], err["code"]) == ("measured.step_time_s", "must-be-json-number")
    response = api_client.post(DIAGNOSE, {**RUN, "measured": {"step_time_s": 0}}, format="json")
    (err,) = response.json()["errors"]
    assert (err["code"], err["params"]) == ("must-be-greater-than", {"limit": 0})
    response = api_client.post(DIAGNOSE, {**RUN, "measured": {"step_time_s": 1, "gpu_s": 1}}, format="json")
    (err,) = response.json()["errors"]
    assert (err["field"], err["code"]) == ("measured.gpu_s", "not-a-measurement-field")


def test_the_diagnose_page_says_parts_over_the_step_in_chinese(client):
    page = client.post("/zh-hans/diagnose/", {**FORM, "compute_s": "50", "communication_s": "27"})
    assert page.status_code == 400
    html = page.content.decode()
    assert "计算、通信与数据加载之和超过了单步时间" in html and "add up to more" not in html


def test_a_step_faster_than_the_chips_peak_is_refused(api_client, client):
    """Llama 3.1 8B (8.03e9 parameters, at least 6 N = 4.8e10 FLOP per token) with its default
    4,194,304-token batch on 8 Ascend 910B2 needs at least 4.8e10 x 4,194,304 / (8 x 376e12 FLOP/s,
    above the chip's catalog peak) = 67 s per step even at peak: a measured millisecond is a unit
    mistake, not a run to diagnose."""
    from estimator import catalog

    peak = catalog.accelerator("ascend-910b2").peak_flops("bf16")
    assert peak < 376e12
    run = {"model": {"preset": "llama-3.1-8b"}, "cluster": {"cards": 8}, "measured": {"step_time_s": 1e-3}}
    response = api_client.post(DIAGNOSE, run, format="json")
    assert response.status_code == 400
    (err,) = response.json()["errors"]
    assert (err["field"], err["code"]) == ("measured.step_time_s", "measured-step-above-peak")
    assert err["params"]["model_s"] > 6 * 8.03e9 * 4194304 / (8 * 376e12)
    ok = api_client.post(DIAGNOSE, {**run, "measured": {"step_time_s": 200.0}}, format="json")
    assert ok.status_code == 200
    page = client.post(
        "/zh-hans/diagnose/",
        {**FORM, "step_time_s": "0.001", "compute_s": "", "communication_s": "", "data_loading_s": ""},
    )
    assert "芯片超过峰值运行" in page.content.decode()
