"""The "API tokens" page: only for a signed-in user, only their own tokens, the secret shown once,
revocation by POST with CSRF, English and Chinese, no JavaScript, covered by the page throttle."""

import re

import pytest
from django.test import Client, override_settings
from rest_framework.test import APIClient

from accounts.models import ApiToken

pytestmark = pytest.mark.django_db
PAGE = "/accounts/tokens/"


@pytest.fixture
def signed_in(user):
    client = Client()
    client.force_login(user)
    return client


def _secret(html: str) -> str:
    return re.search(r'data-testid="token-secret">([^<]+)<', html).group(1)


def _api_status(secret: str) -> int:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {secret}")
    return client.get("/api/v1/estimates").status_code


def test_anonymous_visitors_are_sent_to_sign_in(client):
    response = client.get(PAGE)
    assert response.status_code == 302
    assert response["Location"] == "/accounts/login/?next=/accounts/tokens/"


def test_the_navigation_links_the_page_for_a_signed_in_user_only(client, signed_in):
    assert f'href="{PAGE}"' not in client.get("/").content.decode()
    assert f'href="{PAGE}"' in signed_in.get("/").content.decode()


def test_a_user_sees_only_their_own_tokens(signed_in, user, other_user, issue):
    issue(user, name="quoting system")
    issue(other_user, name="bob's secret script")
    html = signed_in.get(PAGE).content.decode()
    assert "quoting system" in html
    assert "bob&#x27;s secret script" not in html and "bob's secret script" not in html


def test_creating_shows_the_secret_exactly_once(signed_in, user):
    response = signed_in.post(PAGE, {"name": "nightly quotes", "expires": "30"})
    assert response.status_code == 201
    assert response["Cache-Control"] == "no-store"
    html = response.content.decode()
    secret = _secret(html)
    assert "shown only this once" in html
    token = ApiToken.objects.get(user=user)
    assert token.name == "nightly quotes" and token.prefix == secret[:12]
    assert 29 < (token.expires_at - token.created_at).total_seconds() / 86400 <= 30
    assert _api_status(secret) == 200
    later = signed_in.get(PAGE).content.decode()
    assert secret not in later and secret[12:] not in later
    assert f"{secret[:12]}…" in later  # the prefix, to recognise it by


def test_never_expiring_token(signed_in, user):
    assert signed_in.post(PAGE, {"name": "forever", "expires": ""}).status_code == 201
    assert ApiToken.objects.get(user=user).expires_at is None


def test_a_name_is_required(signed_in):
    response = signed_in.post(PAGE, {"name": "  ", "expires": "90"})
    assert response.status_code == 400
    assert (
        'id="field-name"' in response.content.decode()
        and "This field is required." in response.content.decode()
    )
    assert not ApiToken.objects.exists()


@override_settings(API_TOKENS_MAX_PER_USER=1)
def test_the_cap_is_shown_on_the_form(signed_in, user, issue):
    issue(user, name="one")
    response = signed_in.post(PAGE, {"name": "two", "expires": "90"})
    assert response.status_code == 400
    assert "You already have the most active tokens allowed (1)." in response.content.decode()
    assert ApiToken.objects.count() == 1


def test_revoking_stops_the_token_at_once(signed_in, user, issue):
    token, secret = issue(user, name="old")
    assert _api_status(secret) == 200
    response = signed_in.post(f"{PAGE}{token.pk}/revoke/")
    assert response.status_code == 302 and response["Location"] == PAGE
    assert _api_status(secret) == 401
    html = signed_in.get(PAGE).content.decode()
    assert "Token “old” revoked; it no longer works." in html
    assert "revoked</span>" in html


def test_another_users_token_answers_404_and_stays_live(signed_in, other_user, issue):
    token, secret = issue(other_user, name="bob's")
    assert signed_in.post(f"{PAGE}{token.pk}/revoke/").status_code == 404
    assert signed_in.post(f"{PAGE}999999999/revoke/").status_code == 404
    assert ApiToken.objects.get(pk=token.pk).revoked_at is None
    assert _api_status(secret) == 200


def test_revoking_needs_a_post_with_csrf(user, issue):
    token, _ = issue(user)
    strict = Client(enforce_csrf_checks=True)
    strict.force_login(user)
    assert strict.get(f"{PAGE}{token.pk}/revoke/").status_code == 405
    assert strict.post(f"{PAGE}{token.pk}/revoke/").status_code == 403
    assert strict.post(PAGE, {"name": "x"}).status_code == 403
    assert ApiToken.objects.get(pk=token.pk).revoked_at is None
    # the page's own form carries the token, so a real signed_in's post goes through
    page = strict.get(PAGE).content.decode()
    csrf = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page).group(1)
    assert strict.post(f"{PAGE}{token.pk}/revoke/", {"csrfmiddlewaretoken": csrf}).status_code == 302


def test_the_page_in_chinese(signed_in, user, issue):
    issue(user, name="报价脚本")
    html = signed_in.get("/zh-hans/accounts/tokens/").content.decode()
    assert "<h1>API 令牌</h1>" in html
    assert "报价脚本" in html and "撤销" in html
    created = signed_in.post("/zh-hans/accounts/tokens/", {"name": "新的", "expires": "90"}).content.decode()
    assert "仅显示这一次" in created


def test_the_page_works_without_javascript(signed_in):
    html = signed_in.get(PAGE).content.decode()
    assert "<script" not in html
    assert f'<form method="post" class="estimate-form narrow" action="{PAGE}">' in html


def test_posts_spend_the_page_budget(signed_in):
    from django.conf import settings

    rates = {**settings.REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"], "pages": "2/minute"}
    with override_settings(REST_FRAMEWORK={**settings.REST_FRAMEWORK, "DEFAULT_THROTTLE_RATES": rates}):
        codes = [signed_in.post(PAGE, {"name": f"t{i}", "expires": "90"}).status_code for i in range(3)]
    assert codes == [201, 201, 429]
    assert ApiToken.objects.count() == 2
