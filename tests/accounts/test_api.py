"""GET/DELETE /api/v1/tokens: a user lists and revokes only their own tokens; the OpenAPI document
describes the endpoints and both spellings of the Authorization header."""

import pytest
from rest_framework.test import APIClient

from accounts.models import ApiToken

pytestmark = pytest.mark.django_db
URL = "/api/v1/tokens"


def _bearer(secret: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {secret}")
    return client


def test_listing_needs_authentication(api_client):
    response = api_client.get(URL)
    assert response.status_code == 401
    assert response.json()["errors"][0]["field"] == ""


def test_a_user_lists_only_their_own_tokens_without_secrets(user, other_user, issue):
    mine, secret = issue(user, name="quoting")
    issue(other_user, name="bob's")
    body = _bearer(secret).get(URL).json()
    assert body["count"] == 1
    (item,) = body["results"]
    assert item["id"] == mine.pk and item["name"] == "quoting" and item["prefix"] == secret[:12]
    assert item["active"] is True and item["revoked_at"] is None and item["last_used_at"] is not None
    assert set(item) == {
        "id",
        "name",
        "prefix",
        "created_at",
        "last_used_at",
        "expires_at",
        "revoked_at",
        "active",
        "current",
    }
    assert item["current"] is True  # the token this request carries


def test_another_users_token_answers_404(user, other_user, issue):
    _, secret = issue(user)
    theirs, their_secret = issue(other_user)
    client = _bearer(secret)
    assert client.get(f"{URL}/{theirs.pk}").status_code == 404
    response = client.delete(f"{URL}/{theirs.pk}")
    assert response.status_code == 404
    assert response.json() == {"errors": [{"field": "", "message": "Not found."}]}
    assert client.delete(f"{URL}/9223372036854775808").status_code == 404  # past a bigint
    assert _bearer(their_secret).get(URL).status_code == 200  # still live


def test_revoking_by_api_stops_the_token_at_once(user, issue):
    _, secret = issue(user, name="main")
    spare, spare_secret = issue(user, name="spare")
    client = _bearer(secret)
    assert client.delete(f"{URL}/{spare.pk}").status_code == 204
    assert _bearer(spare_secret).get(URL).status_code == 401
    assert client.delete(f"{URL}/{spare.pk}").status_code == 204  # again: nothing changes
    spare_seen = client.get(f"{URL}/{spare.pk}").json()
    assert spare_seen["active"] is False and spare_seen["current"] is False
    assert ApiToken.objects.get(pk=spare.pk).revoked_at is not None


def test_a_token_can_revoke_itself(user, issue):
    token, secret = issue(user)
    client = _bearer(secret)
    assert client.delete(f"{URL}/{token.pk}").status_code == 204
    assert client.get(URL).status_code == 401


def test_creating_is_not_offered_by_the_api(user, issue):
    _, secret = issue(user)
    assert _bearer(secret).post(URL, {"name": "x"}, format="json").status_code == 405


def test_the_schema_documents_tokens_and_both_header_spellings(api_client):
    schema = api_client.get("/api/v1/schema", HTTP_ACCEPT="application/json").json()
    schemes = schema["components"]["securitySchemes"]
    assert schemes["bearerAuth"]["scheme"] == "bearer"
    token = schemes["tokenAuth"]
    assert (token["type"], token["in"], token["name"]) == ("apiKey", "header", "Authorization")
    assert "Token <token>" in token["description"]
    listing = schema["paths"]["/api/v1/tokens"]["get"]
    assert {"bearerAuth": []} in listing["security"] and {"tokenAuth": []} in listing["security"]
    assert set(schema["paths"]["/api/v1/tokens/{id}"]) >= {"get", "delete"}


def test_with_a_session_no_token_is_current(user, issue):
    issue(user)
    client = APIClient()
    client.force_login(user)
    (item,) = client.get(URL).json()["results"]
    assert item["current"] is False
