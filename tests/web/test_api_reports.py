"""GET /api/v1/reports/{token}: public, read-only, shows what was stored."""

import pytest

from reports.models import Estimate

pytestmark = pytest.mark.django_db


def test_shared_report_without_auth(api_client, user, make_estimate):
    est = make_estimate(owner=user)
    response = api_client.get(f"/api/v1/reports/{est.share_token}")
    assert response.status_code == 200
    body = response.json()
    assert body["result"] == est.result and body["scenario"] == est.scenario
    assert body["engine_version"] == est.engine_version and body["catalog_version"] == est.catalog_version
    assert "id" not in body and "owner" not in body
    assert est.share_token in body["share_url"]


@pytest.mark.parametrize("method", ["post", "put", "patch", "delete"])
def test_shared_report_is_read_only(api_client, user_client, user, make_estimate, method):
    est = make_estimate(owner=user)
    for client in (api_client, user_client):  # not even the owner writes through a share link
        response = getattr(client, method)(
            f"/api/v1/reports/{est.share_token}", {"name": "changed"}, format="json"
        )
        assert response.status_code == 405
        assert response.json()["errors"][0]["field"] == ""
    est.refresh_from_db()
    assert est.name == "8B test plan"


def test_shared_report_shows_stored_numbers_even_if_changed_later(api_client, make_estimate):
    """A link opened next year shows the stored result, not a recomputation."""
    est = make_estimate()
    Estimate.objects.filter(pk=est.pk).update(
        result={**est.result, "compute": {**est.result["compute"], "cards": 12345}},
        engine_version="0.0.1-old",
    )
    body = api_client.get(f"/api/v1/reports/{est.share_token}").json()
    assert body["result"]["compute"]["cards"] == 12345 and body["engine_version"] == "0.0.1-old"


def test_unknown_token_is_404(api_client):
    response = api_client.get("/api/v1/reports/not-a-real-token")
    assert response.status_code == 404
    assert response.json() == {"errors": [{"field": "", "message": response.json()["errors"][0]["message"]}]}


def test_recompute_reports_changes_and_stores_nothing(api_client, make_estimate):
    est = make_estimate()
    Estimate.objects.filter(pk=est.pk).update(
        result={**est.result, "compute": {**est.result["compute"], "cards": 32}}, catalog_version="old"
    )
    response = api_client.get(f"/api/v1/reports/{est.share_token}/recompute")
    assert response.status_code == 200
    body = response.json()
    assert body["stored"]["catalog_version"] == "old" and body["today"]["catalog_version"] != "old"
    cards = next(r for r in body["changes"] if r["key"] == "cards")
    assert cards["change"] == pytest.approx(1.0)  # 32 stored -> 64 today
    assert Estimate.objects.count() == 1
    est.refresh_from_db()
    assert est.result["compute"]["cards"] == 32
