"""The report of a scenario with calibration.pilot: the plan before and after, the factors, what the
extrapolation grows and the band, in English and Chinese; a refused pilot is a 400 with its path."""

import pytest

pytestmark = pytest.mark.django_db

SCENARIO = {
    "model": {"preset": "llama-3.1-8b"},
    "training": {"tokens": 1e12, "seq_len": 8192, "global_batch_tokens": 512 * 8192},
    "hardware": {"accelerator": "h100-sxm", "server": "dgx-h100"},
    "cluster": {"cards": 64},
    "calibration": {
        "pilot": {
            "cards": 8,
            "seq_len": 8192,
            "global_batch_tokens": 64 * 8192,
            "measured_tokens_per_s_per_card": 3000,
            "hardware": {"accelerator": "a100-sxm-80gb"},
        }
    },
}


def test_the_report_shows_the_calibration_in_both_languages(api_client, client):
    response = api_client.post("/api/v1/estimates", SCENARIO, format="json")
    assert response.status_code == 201
    body = response.json()
    cal = body["result"]["calibration"]
    assert cal["factors"][0]["name"] == "compute" and cal["carried_across_chips"]
    assert body["scenario"]["calibration"]["pilot"]["cards"] == 8
    english = client.get(body["share_url"]).content.decode()
    assert "Calibrated on your pilot run" in english and "Before calibration" in english
    assert "carried across chips" in english and 'id="calibration-band"' in english
    path = body["share_url"].split("://", 1)[-1].split("/", 1)[1]
    chinese = client.get(f"/zh-hans/{path}").content.decode()
    assert "已用你的试跑数据校准" in chinese and "跨芯片" in chinese


def test_an_implausible_pilot_is_a_400_with_its_path(api_client):
    pilot = {**SCENARIO["calibration"]["pilot"], "measured_tokens_per_s_per_card": 1e6}
    response = api_client.post(
        "/api/v1/estimates", {**SCENARIO, "calibration": {"pilot": pilot}}, format="json"
    )
    assert response.status_code == 400
    error = response.json()["errors"][0]
    assert error["field"] == "calibration.pilot.measured_tokens_per_s_per_card"
    assert "above peak" in error["message"]


def test_a_batch_takes_the_calibration_block_and_paths_a_bad_pilot(
    user_client, eager_celery, django_capture_on_commit_callbacks
):
    pilot = {**SCENARIO["calibration"]["pilot"], "measured_tokens_per_s_per_card": 1e6}
    bad = {**SCENARIO, "calibration": {"pilot": pilot}}
    with django_capture_on_commit_callbacks(execute=True):  # the batch task runs when the POST commits
        r = user_client.post("/api/v1/estimates/batch", {"scenarios": [SCENARIO, bad]}, format="json")
    assert r.status_code == 202, r.content
    good, refused = user_client.get(r.json()["url"]).json()["results"]
    assert good["status"] == 201 and good["estimate"]["result"]["calibration"]["carried_across_chips"]
    fields = [e["field"] for e in refused["error"]["errors"]]
    assert fields == ["scenarios.1.calibration.pilot.measured_tokens_per_s_per_card"]
