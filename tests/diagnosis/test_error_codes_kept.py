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
# the pilot runs on 8 cards (the target on 64): tp 4 x pp 1 x dp 4 = 16 cards, pp 16 does not divide 8
PILOT_16 = {**SCENARIO["calibration"]["pilot"], "parallelism": {"tp": 4, "pp": 1, "dp": 4}}
PILOT_PP16 = {**SCENARIO["calibration"]["pilot"], "parallelism": {"pp": 16}}


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


def test_a_pilot_layout_against_its_cards_names_the_pilots_cards(api_client):
    """Not the target's cluster.cards (64): the pilot's calibration.pilot.cards (8)."""
    for pilot, code, text in (
        (PILOT_16, "pilot-dp-cards", "tp·pp·dp = 16 must equal calibration.pilot.cards = 8"),
        (PILOT_PP16, "pilot-layout-cards", "pp = 16 must divide calibration.pilot.cards = 8"),
    ):
        body = {**SCENARIO, "calibration": {"pilot": pilot}}
        response = api_client.post("/api/v1/estimates", body, format="json")
        assert response.status_code == 400
        (error,) = response.json()["errors"]
        assert (error["field"], error["code"], error["message"]) == ("calibration.pilot.cards", code, text)
        assert error["params"]["cards"] == 8


def test_a_pilot_layout_against_its_cards_is_said_in_chinese_on_the_form(client):
    import json

    extra = json.dumps({"calibration": {"pilot": PILOT_16}})
    page = client.post("/zh-hans/", {**ESTIMATE_FORM, "extra": extra})
    assert page.status_code == 400
    html = page.content.decode()
    assert "calibration.pilot.cards: tp·pp·dp = 16 必须等于 calibration.pilot.cards = 8" in html
    assert "cluster.cards" not in html.split("calibration.pilot.cards:")[1][:80]


def test_the_cli_names_the_pilots_cards(tmp_path, capsys):
    import json

    from estimator.__main__ import main

    path = tmp_path / "s.json"
    path.write_text(json.dumps({**SCENARIO, "calibration": {"pilot": PILOT_16}}))
    assert main(["plan", str(path)]) == 2
    err = capsys.readouterr().err.strip()
    assert err == "error: calibration.pilot.cards: tp·pp·dp = 16 must equal calibration.pilot.cards = 8"


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


def _pilot_error(api_client, body: dict, field: str) -> dict:
    response = api_client.post("/api/v1/estimates", body, format="json")
    assert response.status_code == 400
    return {e["field"]: e for e in response.json()["errors"]}[field]


def test_a_pilot_beside_a_given_mfu_is_refused_with_its_code(api_client):
    err = _pilot_error(api_client, {**SCENARIO, "efficiency": {"mfu": 0.4}}, "calibration")
    assert err["code"] == "pilot-with-given-mfu"


def test_a_moe_pilot_for_a_dense_target_is_refused_with_its_code_and_said_in_chinese(api_client, client):
    import json

    pilot = {**SCENARIO["calibration"]["pilot"], "model": {"preset": "qwen3-30b-a3b"}}
    body = {**SCENARIO, "calibration": {"pilot": pilot}}
    err = _pilot_error(api_client, body, "calibration.pilot.model")
    assert err["code"] == "pilot-moe-target-dense"
    assert err["message"].startswith("the pilot is a mixture-of-experts model and the target a dense one")
    page = client.post("/zh-hans/", {**ESTIMATE_FORM, "extra": json.dumps({"calibration": {"pilot": pilot}})})
    html = page.content.decode()
    assert "试运行是混合专家模型，目标却是稠密模型" in html and "mixture-of-experts" not in html


def test_a_wait_share_the_layout_cannot_show_is_refused_with_its_code_and_bounds(api_client):
    pilot = {**SCENARIO["calibration"]["pilot"], "measured_comm_wait_share": 0.99}
    body = {**SCENARIO, "calibration": {"pilot": pilot}}
    err = _pilot_error(api_client, body, "calibration.pilot.measured_comm_wait_share")
    # 8 A100s on one NVLink node: even at 5% of the model's link bandwidth the wait stays far below 99%
    assert err["code"] == "pilot-comm-share-outside"
    p = err["params"]
    assert p["share"] == 0.99 and p["links"] == 0.05 and 0.0 <= p["lowest_share"] <= p["highest_share"] < 0.5


def test_the_wait_share_refusal_in_chinese_formats_its_shares():
    from django.utils import translation

    from reports import messages

    params = {"share": 0.3, "lowest_share": 0.012, "highest_share": 0.25, "links": 0.25}
    with translation.override("zh-hans"):
        text = messages.render("pilot-comm-share-outside", params)
    assert (
        text
        == "通信等待 30% 超出了该布局可能出现的范围（链路按额定带宽时为 1.2%，按模型带宽的 25% 时为 25%）；请检查性能分析工具给出的数字"
    )
