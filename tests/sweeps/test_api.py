"""The sweep API without workers: 202 and its body, 400 with field paths, limits, ownership."""

import pytest
from django.contrib.auth import get_user_model
from rest_framework.test import APIClient

from sweeps.models import Sweep

pytestmark = pytest.mark.django_db

URL = "/api/v1/sweeps"


@pytest.fixture
def user():
    return get_user_model().objects.create_user("ana", password="pw-12345678")


@pytest.fixture
def api(user):
    client = APIClient()
    client.force_authenticate(user)
    return client


def post(client, body):
    return client.post(URL, body, format="json")


def error_fields(response) -> list[str]:
    return [e["field"] for e in response.json()["errors"]]


def test_post_answers_202_with_status_and_share_urls(api, base, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks() as callbacks:
        r = post(
            api,
            {
                "name": "cards x chips",
                "base": base,
                "axes": {
                    "cluster.cards": {"start": 512, "stop": 4096, "step": 512},
                    "hardware.accelerator": ["h100-sxm", "ascend-910b2"],
                },
            },
        )
    assert r.status_code == 202, r.content
    body = r.json()
    assert body["status"] == "queued"
    assert body["progress"] == {"done": 0, "total": 16, "chunks_done": 0, "chunks_total": 1}
    assert body["status_url"].endswith(f"/api/v1/sweeps/{body['id']}")
    assert "/sweeps/" in body["share_url"] and r["Location"] == body["status_url"]
    assert len(callbacks) == 1  # chunks are queued only after the commit
    assert body["axes"][0] == {
        "field": "cluster.cards",
        "count": 8,
        "first": 512,
        "last": 4096,
        "values": [512, 1024, 1536, 2048, 2560, 3072, 3584, 4096],
    }
    assert api.get(f"{URL}/{body['id']}").json()["progress"]["total"] == 16


@pytest.mark.parametrize(
    ("axes", "field"),
    [
        ({"cluster.cardz": [512, 1024]}, "axes.cluster.cardz"),  # unknown field
        ({"no.such": [1]}, "axes.no.such"),
        ({"cluster.cards": []}, "axes.cluster.cards"),  # empty axis
        ({}, "axes"),
        ({"cluster.cards": ["512"]}, "axes.cluster.cards"),  # wrong types
        ({"cluster.cards": [512, "many"]}, "axes.cluster.cards"),
        ({"cluster.cards": 512}, "axes.cluster.cards"),
        ({"cluster.cards": {"start": 1, "stop": 8, "step": -1}}, "axes.cluster.cards.step"),
        ({"efficiency.mfu": [0.4, 7]}, "axes.efficiency.mfu"),
        ({"hardware.accelerator": ["h100-sxm", "tpu-v9"]}, "axes.hardware.accelerator"),
        # too many scenarios: 20,000 x 200 = 4,000,000 > 2,000,000
        (
            {
                "cluster.cards": {"start": 8, "stop": 160000, "step": 8},
                "efficiency.mfu": {"start": 0.005, "stop": 1, "step": 0.005},
            },
            "axes",
        ),
    ],
)
def test_bad_sweeps_get_400_with_the_field_path(api, base, axes, field):
    r = post(api, {"base": base, "axes": axes})
    assert r.status_code == 400, r.content
    assert field in error_fields(r), r.json()
    assert all(e["message"] for e in r.json()["errors"])
    assert not Sweep.objects.exists()


@pytest.mark.parametrize(
    ("make", "field"),
    [
        (lambda base: {"axes": {"cluster.cards": [8]}}, "base"),
        (lambda base: {"base": "llama", "axes": {"cluster.cards": [8]}}, "base"),
        (
            lambda base: {"base": {"model": {"preset": "llama-3.1-70b"}}, "axes": {"cluster.cards": [8]}},
            "base.training",
        ),
        (lambda base: {"name": 7, "base": base, "axes": {"cluster.cards": [8]}}, "name"),
        (lambda base: {"bases": base, "base": base, "axes": {"cluster.cards": [8]}}, "bases"),
        (
            lambda base: {"base": {**base, "training": {"tokens": -5}}, "axes": {"cluster.cards": [8]}},
            "base.training.tokens",
        ),
    ],
)
def test_bad_base_or_body(api, base, make, field):
    r = post(api, make(base))
    assert r.status_code == 400, r.content
    assert field in error_fields(r), r.json()


def test_nan_is_refused_by_the_strict_parser(api):
    r = api.post(URL, '{"base": {}, "axes": {"efficiency.mfu": [NaN]}}', content_type="application/json")
    assert r.status_code == 400


def test_active_sweeps_per_user_are_limited(api, base, settings):
    settings.SWEEP_MAX_ACTIVE_PER_USER = 1
    assert post(api, {"base": base, "axes": {"cluster.cards": [512]}}).status_code == 202
    r = post(api, {"base": base, "axes": {"cluster.cards": [1024]}})
    assert r.status_code == 400 and error_fields(r) == ["axes"]
    assert "running" in r.json()["errors"][0]["message"]


def test_anonymous_sweeps_are_smaller_and_reached_by_share_link(base, settings):
    settings.SWEEP_ANON_MAX_SCENARIOS = 100
    anon = APIClient()
    r = post(anon, {"base": base, "axes": {"cluster.cards": {"start": 8, "stop": 8000, "step": 8}}})
    assert r.status_code == 400 and error_fields(r) == ["axes"]
    r = post(anon, {"base": base, "axes": {"cluster.cards": [512, 1024]}})
    assert r.status_code == 202
    body = r.json()
    assert "/api/v1/sweeps/shared/" in body["status_url"]
    assert anon.get(f"{URL}/{body['id']}").status_code in (401, 403)
    assert anon.get(body["status_url"]).json()["progress"]["total"] == 2


def test_someone_elses_sweep_is_404_but_the_share_link_works(api, base):
    body = post(api, {"base": base, "axes": {"cluster.cards": [512, 1024]}}).json()
    other = APIClient()
    other.force_authenticate(get_user_model().objects.create_user("bo", password="pw-12345678"))
    assert other.get(f"{URL}/{body['id']}").status_code == 404
    assert other.post(f"{URL}/{body['id']}/cancel").status_code == 404
    assert other.get(f"{URL}/{body['id']}/results").status_code == 404
    token = Sweep.objects.get().share_token
    shared = APIClient().get(f"{URL}/shared/{token}")
    assert shared.status_code == 200 and shared.json()["id"] == body["id"]
    assert APIClient().post(f"{URL}/shared/{token}").status_code == 405
    assert APIClient().get(f"{URL}/shared/not-a-token").status_code == 404


def test_cancel(api, base):
    body = post(api, {"base": base, "axes": {"cluster.cards": [512, 1024]}}).json()
    r = api.post(f"{URL}/{body['id']}/cancel")
    assert r.status_code == 200 and r.json()["status"] == "cancelled"
    assert api.get(f"{URL}/{body['id']}").json()["status"] == "cancelled"


def test_list_is_mine_only(api, base):
    post(api, {"base": base, "axes": {"cluster.cards": [512]}})
    assert [s["progress"]["total"] for s in api.get(URL).json()] == [1]
    assert APIClient().get(URL).status_code in (401, 403)


def test_results_page_parameters_are_checked(api, base):
    body = post(api, {"base": base, "axes": {"cluster.cards": [512]}}).json()
    assert api.get(f"{URL}/{body['id']}/results?page=0").status_code == 400
    assert api.get(f"{URL}/{body['id']}/results?page_size=100000").status_code == 400
    assert api.get(f"{URL}/{body['id']}/results?page=x").status_code == 400


def test_a_sweep_sized_for_a_chance_is_accepted_within_its_searches(api, base):
    """cluster.deadline_confidence in the base (it was refused before 2.59.0) and on an axis; past
    limits.MAX_SWEEP_CONFIDENT_SIZINGS (10,000) searches, 400 on `axes` in the one error shape:
    101 token counts x 100 deadlines are 10,100."""
    confident = {**base, "cluster": {"target_days": 30, "deadline_confidence": 0.9}}
    r = post(api, {"base": confident, "axes": {"training.tokens": [5e11, 1e12]}})
    assert r.status_code == 202, r.content
    r = post(
        api,
        {
            "base": {**base, "cluster": {"target_days": 30}},
            "axes": {"cluster.deadline_confidence": [0.8, 0.9]},
        },
    )
    assert r.status_code == 202, r.content
    axes = {
        "training.tokens": {"start": 1e11, "stop": 2e11, "step": 1e9},
        "cluster.target_days": {"start": 1, "stop": 100, "step": 1},
    }
    r = post(api, {"base": confident, "axes": axes})
    assert r.status_code == 400, r.content
    (error,) = r.json()["errors"]
    assert error["field"] == "axes" and error["code"] == "too-many-confident-sizings"
    assert error["params"] == {"sizings": 10_100, "max_sizings": 10_000}


def test_a_sweep_sized_by_budget_is_accepted_within_its_searches(api, base):
    """cluster.budget in the base and on an axis (refused before 2.72.0, budget-not-in-sweeps); past
    limits.MAX_SWEEP_BUDGET_SIZINGS (10,000) searches, 400 on `axes` in the one error shape: 101
    token counts x 100 budgets are 10,100, an electricity price axis adds none."""
    budgeted = {**base, "cluster": {"budget": 5e7}}
    r = post(api, {"base": budgeted, "axes": {"training.tokens": [5e11, 1e12]}})
    assert r.status_code == 202, r.content
    r = post(api, {"base": base, "axes": {"cluster.budget": [5e7, 1e8], "cost.server_price": [1e6, 2e6]}})
    assert r.status_code == 202, r.content
    axes = {
        "training.tokens": {"start": 1e11, "stop": 2e11, "step": 1e9},
        "cluster.budget": {"start": 1e7, "stop": 1e9, "step": 1e7},
        "cost.electricity_per_kwh": [0.1, 0.2],
    }
    r = post(api, {"base": budgeted, "axes": axes})
    assert r.status_code == 400, r.content
    (error,) = r.json()["errors"]
    assert error["field"] == "axes" and error["code"] == "too-many-budget-sizings"
    assert error["params"] == {"sizings": 10_100, "max_sizings": 10_000}
