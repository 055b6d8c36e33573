"""POST/GET /api/v1/estimates and GET/DELETE /api/v1/estimates/{id}: contract fields, ownership."""

import pytest

from reports.models import Estimate

pytestmark = pytest.mark.django_db

URL = "/api/v1/estimates"
RESULT_SECTIONS = ["compute", "parallelism", "memory", "network", "storage", "power", "cost", "warnings"]
CONTRACT = {
    "compute": [
        "flop_per_token",
        "training_flop",
        "cards",
        "nodes",
        "mfu",
        "wall_clock_days",
        "accelerator_hours",
        "tokens_per_s",
    ],
    "network": [
        "tiers",
        "endpoints",
        "leaf_switches",
        "spine_switches",
        "core_switches",
        "total_switches",
        "oversubscription",
        "server_links",
        "switch_links",
        "transceivers",
        "bisection_bandwidth_bps",
    ],
    "storage": ["checkpoint_bytes", "dataset_bytes", "hot", "warm", "cache"],
    "power": ["it_w", "facility_w", "energy_wh"],
    "cost": ["currency", "capex", "run", "cloud_break_even_months"],
}


def test_anonymous_post_returns_the_contract(api_client, scenario):
    response = api_client.post(URL, scenario, format="json")
    assert response.status_code == 201, response.content
    body = response.json()
    for key in ["id", "share_url", "scenario", "result", "engine_version", "catalog_version", "created_at"]:
        assert key in body
    assert body["engine_version"] and body["catalog_version"]
    for section in RESULT_SECTIONS:
        assert section in body["result"], section
    for section, fields in CONTRACT.items():
        for field in fields:
            assert field in body["result"][section], f"{section}.{field}"
    # the normalized scenario shows the defaults the core filled in
    assert (
        body["scenario"]["training"]["global_batch_tokens"]
        and body["scenario"]["training"]["precision"] == "bf16"
    )
    assert body["result"]["compute"]["cards"] == 64
    assert body["share_url"].startswith("http://testserver/r/")
    assert response["Location"].endswith(f"/api/v1/reports/{Estimate.objects.get().share_token}")
    assert Estimate.objects.get().owner is None


def test_share_token_is_unguessable(api_client, scenario):
    body = api_client.post(URL, scenario, format="json").json()
    token = Estimate.objects.get(pk=body["id"]).share_token
    assert len(token) >= 22  # >= 128 bits in URL-safe base64
    assert token in body["share_url"]


def test_token_post_belongs_to_the_user(user_client, user, scenario):
    response = user_client.post(URL, scenario, format="json")
    assert response.status_code == 201
    assert Estimate.objects.get(pk=response.json()["id"]).owner == user


def test_list_needs_authentication(api_client):
    response = api_client.get(URL)
    assert response.status_code == 401
    assert response.json() == {"errors": [{"field": "", "message": response.json()["errors"][0]["message"]}]}
    assert response["WWW-Authenticate"].startswith("Token")


def test_list_shows_only_own_estimates(user_client, user, other_user, make_estimate):
    mine = make_estimate(owner=user)
    make_estimate(owner=other_user)
    make_estimate()  # anonymous
    body = user_client.get(URL).json()
    assert body["count"] == 1
    item = body["results"][0]
    assert item["id"] == mine.pk
    assert item["headline"]["cards"] == mine.result["compute"]["cards"]
    assert "result" not in item  # the list stays light; the detail has everything


def test_detail_for_the_owner(user_client, user, make_estimate):
    est = make_estimate(owner=user)
    response = user_client.get(f"{URL}/{est.pk}")
    assert response.status_code == 200
    assert response.json()["result"] == est.result


def test_detail_anonymous_is_401(api_client, user, make_estimate):
    est = make_estimate(owner=user)
    assert api_client.get(f"{URL}/{est.pk}").status_code == 401
    assert api_client.delete(f"{URL}/{est.pk}").status_code == 401
    assert Estimate.objects.filter(pk=est.pk).exists()


def test_someone_elses_estimate_is_404(other_client, user, make_estimate):
    """Another user's (or an anonymous) estimate does not exist for you: 404, not 403, so ids disclose nothing."""
    theirs = make_estimate(owner=user)
    anonymous = make_estimate()
    for est in (theirs, anonymous):
        assert other_client.get(f"{URL}/{est.pk}").status_code == 404
        response = other_client.delete(f"{URL}/{est.pk}")
        assert response.status_code == 404
        assert response.json()["errors"][0]["field"] == ""
    assert Estimate.objects.count() == 2


def test_missing_estimate_is_404(user_client):
    assert user_client.get(f"{URL}/999999").status_code == 404
    assert user_client.get(f"{URL}/{10**30}").status_code == 404  # beyond bigint: still a 404, not a 500
    assert user_client.delete(f"{URL}/{10**30}").status_code == 404


def test_owner_deletes(user_client, user, make_estimate):
    est = make_estimate(owner=user)
    assert user_client.delete(f"{URL}/{est.pk}").status_code == 204
    assert not Estimate.objects.filter(pk=est.pk).exists()
    assert user_client.get(f"{URL}/{est.pk}").status_code == 404


def test_session_without_csrf_is_403(user, make_estimate):
    """A browser session cannot be ridden by another site: unsafe methods need the CSRF token."""
    from rest_framework.test import APIClient

    est = make_estimate(owner=user)
    client = APIClient(enforce_csrf_checks=True)
    client.force_login(user)
    assert client.get(f"{URL}/{est.pk}").status_code == 200
    response = client.delete(f"{URL}/{est.pk}")
    assert response.status_code == 403
    assert "CSRF" in response.json()["errors"][0]["message"]
    assert Estimate.objects.filter(pk=est.pk).exists()


def test_put_and_patch_are_not_allowed(user_client, user, make_estimate):
    est = make_estimate(owner=user)
    assert user_client.put(f"{URL}/{est.pk}", {}, format="json").status_code == 405
    assert user_client.patch(f"{URL}/{est.pk}", {}, format="json").status_code == 405


def test_deadline_plan_sizes_the_cluster(api_client, deadline_scenario):
    body = api_client.post(URL, deadline_scenario, format="json").json()
    compute = body["result"]["compute"]
    assert compute["cards"] % 8 == 0 and compute["nodes"] == compute["cards"] // 8
    assert compute["wall_clock_days"] <= 30.0 + 1e-6
    assert compute["training_flop"] == pytest.approx(6 * 70e9 * 5e11, rel=0.25)
