"""API authentication by named token: both header spellings, 401 in the one error shape for
anything but a live token, revocation at once, the secret never stored, last use recorded sparingly."""

import datetime as dt
import hashlib

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from accounts.models import ApiToken

pytestmark = pytest.mark.django_db
URL = "/api/v1/estimates"


def _client(header: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=header)
    return client


def _refused(response, message: str) -> None:
    assert response.status_code == 401
    assert response.json() == {"errors": [{"field": "", "message": message}]}


@pytest.mark.parametrize("scheme", ["Bearer", "Token", "bearer"])
def test_either_scheme_authenticates(user, issue, scheme):
    _, secret = issue(user)
    response = _client(f"{scheme} {secret}").get(URL)
    assert response.status_code == 200
    assert response.json()["count"] == 0


def test_the_estimate_belongs_to_the_token_owner(user, issue, scenario):
    _, secret = issue(user)
    response = _client(f"Bearer {secret}").post(URL, scenario, format="json")
    assert response.status_code == 201
    from reports.models import Estimate

    assert Estimate.objects.get(pk=response.json()["id"]).owner == user


def test_the_secret_is_not_stored(user, issue):
    token, secret = issue(user)
    row = ApiToken.objects.filter(pk=token.pk).values().get()
    assert row["key_hash"] == hashlib.sha256(secret.encode()).hexdigest()
    assert row["prefix"] == secret[:12]
    hidden = secret[12:]  # the part of the secret that is never shown again
    assert all(hidden not in str(value) for value in row.values())


def test_revoked_token_stops_at_once(user, issue):
    from accounts.services import revoke_token

    token, secret = issue(user)
    client = _client(f"Bearer {secret}")
    assert client.get(URL).status_code == 200
    revoke_token(token=token)
    _refused(client.get(URL), "This token has been revoked.")


def test_expired_token_is_refused(user, issue):
    _, secret = issue(user, expires_at=timezone.now() - dt.timedelta(seconds=1))
    _refused(_client(f"Bearer {secret}").get(URL), "This token has expired.")


def test_a_token_that_expires_later_works(user, issue):
    _, secret = issue(user, expires_at=timezone.now() + dt.timedelta(days=1))
    assert _client(f"Bearer {secret}").get(URL).status_code == 200


def test_token_of_a_disabled_account_is_refused(user, issue):
    _, secret = issue(user)
    user.is_active = False
    user.save()
    _refused(_client(f"Bearer {secret}").get(URL), "The account of this token is disabled.")


@pytest.mark.parametrize(
    "header",
    [
        "Bearer cpt_not-a-token",
        "Token 0123456789abcdef0123456789abcdef01234567",
        "Bearer " + "x" * 5000,  # too long to be a token: refused before any hashing or query
        "Bearer",
        "Bearer a b",
    ],
)
def test_anything_but_a_live_token_answers_401_in_the_error_shape(db, header):
    response = _client(header).get(URL)
    assert response.status_code == 401
    (error,) = response.json()["errors"]
    assert error["field"] == ""
    assert response["WWW-Authenticate"] == 'Token realm="api", Bearer realm="api"'


def test_a_non_ascii_token_answers_401(db):
    client = APIClient()
    response = client.get(URL, HTTP_AUTHORIZATION="Bearer caf\u00e9".encode().decode("latin-1"))
    _refused(response, "Invalid token.")


def test_another_scheme_is_left_to_the_session(db, scenario):
    # Basic is not ours: the request stays anonymous, and anonymous POSTs are allowed
    response = _client("Basic YWxpY2U6eA==").post(URL, scenario, format="json")
    assert response.status_code == 201


def test_last_use_is_written_at_most_once_a_minute(user, issue):
    token, secret = issue(user)
    client = _client(f"Bearer {secret}")
    assert token.last_used_at is None
    client.get(URL)
    first = ApiToken.objects.get(pk=token.pk).last_used_at
    assert first is not None
    recent = timezone.now() - dt.timedelta(seconds=30)
    ApiToken.objects.filter(pk=token.pk).update(last_used_at=recent)
    client.get(URL)
    assert ApiToken.objects.get(pk=token.pk).last_used_at == recent  # within the minute: no write
    stale = timezone.now() - dt.timedelta(seconds=61)
    ApiToken.objects.filter(pk=token.pk).update(last_used_at=stale)
    client.get(URL)
    assert ApiToken.objects.get(pk=token.pk).last_used_at > stale


def test_a_used_request_costs_no_write_within_the_minute(user, issue, django_assert_num_queries):
    from accounts.services import check_token

    _, secret = issue(user)
    check_token(secret=secret)  # first use: one read, one write
    with django_assert_num_queries(1):  # the read only
        check_token(secret=secret)
