"""POST /api/v1/diagnose and the /diagnose/ page: the core's diagnosis through the web, in English and
Chinese, errors in the one shape with their field path."""

import pytest

from tests.estimator.test_diagnose import RUN as DIAGNOSED

pytestmark = pytest.mark.django_db

URL = "/api/v1/diagnose"
RUN = {
    **DIAGNOSED,
    "measured": {"step_time_s": 60.0, "compute_s": 31.0, "communication_s": 27.0, "data_loading_s": 1.2},
}
FORM = {
    "preset": "llama-3.1-70b",
    "accelerator": "ascend-910b2",
    "precision": "bf16",
    "seq_len": "8192",
    "global_batch_tokens": "4194304",
    "cards": "256",
    "tp": "8",
    "pp": "4",
    "step_time_s": "60",
    "compute_s": "31",
    "communication_s": "27",
    "data_loading_s": "1.2",
}


def test_api_diagnoses_45_percent_wait_as_the_network(api_client):
    response = api_client.post(URL, RUN, format="json")
    assert response.status_code == 200
    body = response.json()
    first = body["findings"][0]
    assert first["code"] == "diagnose.network"
    assert first["params"]["share"] == pytest.approx(0.45)
    assert [t["term"] for t in body["terms"]] == ["compute", "communication", "data_loading", "other"]


def test_api_refuses_bad_measurements_in_the_one_error_shape(api_client):
    response = api_client.post(URL, {**RUN, "measured": {"step_time_s": "fast"}}, format="json")
    assert response.status_code == 400
    assert response.json()["errors"][0]["field"] == "measured.step_time_s"
    response = api_client.post(URL, {**RUN, "cluster": {"cards": 0}}, format="json")
    assert response.status_code == 400 and response.json()["errors"][0]["field"] == "cluster.cards"


def test_the_page_shows_the_network_finding_in_english_and_chinese(client):
    assert client.get("/diagnose/").status_code == 200
    english = client.post("/diagnose/", FORM).content.decode()
    assert "suspect the network first" in english and "45%" in english
    chinese = client.post("/zh-hans/diagnose/", FORM).content.decode()
    assert "网络" in chinese and "45%" in chinese and "suspect the network" not in chinese


def test_the_page_puts_an_error_next_to_its_field(client):
    response = client.post("/diagnose/", {**FORM, "compute_s": "50", "communication_s": "27"})
    assert response.status_code == 400
    assert "add up to more than the step time" in response.content.decode()
