"""Anonymous and per-user throttles answer 429 in the error shape, with Retry-After."""

import pytest
from django.test import override_settings

pytestmark = pytest.mark.django_db


def _rates(anon, user):
    from django.conf import settings

    return {**settings.REST_FRAMEWORK, "DEFAULT_THROTTLE_RATES": {"anon": anon, "user": user}}


def test_anonymous_posts_are_throttled(api_client, scenario):
    with override_settings(REST_FRAMEWORK=_rates("3/minute", "100/minute")):
        codes = [api_client.post("/api/v1/estimates", scenario, format="json").status_code for _ in range(4)]
        assert codes == [201, 201, 201, 429]
        response = api_client.get("/api/v1/catalog")
        assert response.status_code == 429
        assert int(response["Retry-After"]) > 0
        assert response.json()["errors"][0]["field"] == ""
        assert "try again" in response.json()["errors"][0]["message"]


def test_users_have_their_own_budget(api_client, user_client):
    with override_settings(REST_FRAMEWORK=_rates("2/minute", "4/minute")):
        for _ in range(2):
            assert api_client.get("/api/v1/catalog").status_code == 200
        assert api_client.get("/api/v1/catalog").status_code == 429
        codes = [user_client.get("/api/v1/estimates").status_code for _ in range(5)]
        assert codes == [200, 200, 200, 200, 429]
