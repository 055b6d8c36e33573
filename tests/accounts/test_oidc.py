"""OIDC sign-in: off unless configured (no app, backend, URL or button); when on, the button, the
code flow against a mocked provider (no network), and which account a person gets."""

import json
import os
import subprocess
import sys
from urllib.parse import parse_qs, urlsplit

import jwt
import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.exceptions import ImproperlyConfigured, SuspiciousOperation
from django.test import Client, override_settings
from django.urls import NoReverseMatch, reverse

from accounts.oidc import OIDCBackend, username_for
from config.oidc import BACKEND, oidc_settings
from tests.web.test_deploy import ROOT, check_deploy, compose_env

SECRET = "a-client-secret-of-at-least-32-bytes!"
ENV = {
    "OIDC_RP_CLIENT_ID": "clusterplan",
    "OIDC_RP_CLIENT_SECRET": SECRET,
    "OIDC_OP_AUTHORIZATION_ENDPOINT": "https://sso.example.com/authorize",
    "OIDC_OP_TOKEN_ENDPOINT": "https://sso.example.com/token",
    "OIDC_OP_USER_ENDPOINT": "https://sso.example.com/userinfo",
    "OIDC_OP_JWKS_ENDPOINT": "https://sso.example.com/jwks",
    "OIDC_PROVIDER_NAME": "Example SSO",
}


def _on(**env):
    """Settings as config/settings.py makes them with OIDC configured (HS256 here, so the mocked
    provider signs its ID token with the client secret and no key set is fetched)."""
    return override_settings(
        **oidc_settings({**ENV, "OIDC_RP_SIGN_ALGO": "HS256", **env}),
        OIDC_ENABLED=True,
        AUTHENTICATION_BACKENDS=[*settings.AUTHENTICATION_BACKENDS, BACKEND],
        ROOT_URLCONF="tests.accounts.oidc_urls",
    )


# ---- configuration ---------------------------------------------------------------------------


def test_not_configured_is_off():
    assert oidc_settings({"PATH": "/bin"}) == {}
    assert oidc_settings({"OIDC_PROVIDER_NAME": "SSO"}) == {}  # a name alone turns nothing on


def test_half_configured_refuses_to_start():
    with pytest.raises(ImproperlyConfigured, match="set OIDC_OP_TOKEN_ENDPOINT, OIDC_OP_USER_ENDPOINT"):
        oidc_settings(
            {k: v for k, v in ENV.items() if k not in ("OIDC_OP_TOKEN_ENDPOINT", "OIDC_OP_USER_ENDPOINT")}
        )
    with pytest.raises(ImproperlyConfigured, match="needs OIDC_RP_CLIENT_ID too"):
        oidc_settings({k: v for k, v in ENV.items() if k != "OIDC_RP_CLIENT_ID"})
    with pytest.raises(ImproperlyConfigured, match="set OIDC_OP_JWKS_ENDPOINT"):  # RS256, the default
        oidc_settings({k: v for k, v in ENV.items() if k != "OIDC_OP_JWKS_ENDPOINT"})


def test_configured_settings():
    on = oidc_settings(ENV)
    assert on["OIDC_RP_SIGN_ALGO"] == "RS256" and on["OIDC_USE_PKCE"] is True
    assert on["OIDC_CREATE_USER"] is True and on["OIDC_REQUIRE_VERIFIED_EMAIL"] is True
    assert on["OIDC_TIMEOUT"] == 10.0
    assert oidc_settings({**ENV, "OIDC_CREATE_USERS": "false"})["OIDC_CREATE_USER"] is False
    assert "OIDC_OP_JWKS_ENDPOINT" not in oidc_settings({**ENV, "OIDC_RP_SIGN_ALGO": "HS256"})


@pytest.mark.django_db
def test_off_in_this_process_means_no_backend_url_or_button(client):
    assert settings.OIDC_ENABLED is False
    assert BACKEND not in settings.AUTHENTICATION_BACKENDS
    assert "mozilla_django_oidc" not in settings.INSTALLED_APPS
    with pytest.raises(NoReverseMatch):
        reverse("oidc_authentication_init")
    assert client.get("/oidc/authenticate/").status_code == 404
    assert "Sign in with" not in client.get("/accounts/login/").content.decode()


def _wiring(env: dict[str, str]) -> dict:
    script = (
        "import django, json; django.setup(); from django.conf import settings; from django.urls import reverse;"
        "print(json.dumps({'backends': settings.AUTHENTICATION_BACKENDS, 'apps': settings.INSTALLED_APPS,"
        " 'callback': reverse('oidc_authentication_callback') if settings.OIDC_ENABLED else None}))"
    )
    clean = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG")}
    clean.update(
        env,
        DJANGO_SETTINGS_MODULE="config.settings",
        SECRET_KEY="x" * 50,
        CLUSTERPLAN_VAR_DIR=str(ROOT / "var"),
    )
    out = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, env=clean, capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def test_the_environment_turns_it_on_and_off():
    off = _wiring({})
    assert BACKEND not in off["backends"] and "mozilla_django_oidc" not in off["apps"]
    on = _wiring(ENV)
    assert on["backends"][-1] == BACKEND and "mozilla_django_oidc" in on["apps"]
    assert on["callback"] == "/oidc/callback/"  # one address, outside the language prefixes


def test_check_deploy_stays_clean_with_oidc_on():
    out = check_deploy({**compose_env(), **ENV})
    assert out.returncode == 0, out.stdout + out.stderr
    assert "no issues" in out.stdout


# ---- the browser flow ----------------------------------------------------------------------------


@pytest.mark.django_db
def test_the_login_page_offers_the_provider():
    with _on():
        html = Client().get("/accounts/login/?next=/estimates/").content.decode()
        assert (
            '<a class="button" href="/oidc/authenticate/?next=/estimates/">Sign in with Example SSO</a>'
            in html
        )
        assert 'name="password"' in html  # administrator-made accounts still sign in with a password
        zh = Client().get("/zh-hans/accounts/login/").content.decode()
        assert "通过 Example SSO 登录" in zh
        failed = Client().get("/accounts/login/?oidc=failed").content.decode()
        assert "Signing in with Example SSO did not succeed." in failed


def _provider(monkeypatch, claims: dict, audience: str = "clusterplan"):
    """The provider's token and userinfo endpoints, answered without the network: the ID token is
    signed with the client secret and carries the nonce the authorization request sent."""
    seen: dict = {}

    def get_token(self, payload):
        seen["token_request"] = payload
        nonce = seen["nonce"]
        id_token = jwt.encode({"sub": "42", "aud": audience, "nonce": nonce}, SECRET, algorithm="HS256")
        return {"id_token": id_token, "access_token": "access-1"}

    def get_userinfo(self, access_token, id_token, payload):
        assert access_token == "access-1"
        return claims

    monkeypatch.setattr(OIDCBackend, "get_token", get_token)
    monkeypatch.setattr(OIDCBackend, "get_userinfo", get_userinfo)
    return seen


def _sign_in(client: Client, seen: dict):
    start = client.get("/oidc/authenticate/?next=/accounts/tokens/")
    assert start.status_code == 302
    where = urlsplit(start["Location"])
    query = parse_qs(where.query)
    assert f"{where.scheme}://{where.netloc}{where.path}" == ENV["OIDC_OP_AUTHORIZATION_ENDPOINT"]
    assert query["client_id"] == ["clusterplan"] and query["code_challenge_method"] == ["S256"]
    seen["nonce"] = query["nonce"][0]
    return client.get(f"/oidc/callback/?code=the-code&state={query['state'][0]}")


VERIFIED = {"email": "ada@example.com", "email_verified": True, "preferred_username": "ada"}


@pytest.mark.django_db
def test_a_new_person_gets_an_account_on_first_sign_in(monkeypatch):
    client = Client()
    with _on():
        seen = _provider(monkeypatch, VERIFIED)
        done = _sign_in(client, seen)
        assert done.status_code == 302 and done["Location"] == "/accounts/tokens/"
        assert seen["token_request"]["code"] == "the-code" and "code_verifier" in seen["token_request"]
        user = get_user_model().objects.get(email="ada@example.com")
        assert user.username == "ada" and not user.has_usable_password()
        assert client.get("/accounts/tokens/").status_code == 200  # signed in


@pytest.mark.django_db
def test_an_existing_account_is_matched_by_email(monkeypatch, django_user_model):
    existing = django_user_model.objects.create_user(
        "alovelace", email="Ada@Example.com", password="pw-123456789"
    )
    client = Client()
    with _on(OIDC_CREATE_USERS="false"):
        done = _sign_in(client, _provider(monkeypatch, VERIFIED))
        assert done["Location"] == "/accounts/tokens/"
    assert django_user_model.objects.count() == 1
    assert int(client.session["_auth_user_id"]) == existing.pk


@pytest.mark.django_db
def test_without_account_creation_a_stranger_is_turned_away(monkeypatch, django_user_model):
    client = Client()
    with _on(OIDC_CREATE_USERS="false"):
        done = _sign_in(client, _provider(monkeypatch, VERIFIED))
        assert done["Location"] == "/accounts/login/?oidc=failed"
    assert not django_user_model.objects.exists()
    assert "_auth_user_id" not in client.session


@pytest.mark.django_db
def test_an_unverified_email_matches_nobody(monkeypatch, django_user_model):
    django_user_model.objects.create_user("admin", email="ada@example.com", password="pw-123456789")
    client = Client()
    with _on():
        done = _sign_in(client, _provider(monkeypatch, {**VERIFIED, "email_verified": False}))
        assert done["Location"] == "/accounts/login/?oidc=failed"
    assert django_user_model.objects.count() == 1
    assert "_auth_user_id" not in client.session


@pytest.mark.django_db
def test_a_disabled_account_is_refused_not_replaced(monkeypatch, django_user_model):
    django_user_model.objects.create_user("ada", email="ada@example.com", is_active=False)
    client = Client()
    with _on():
        done = _sign_in(client, _provider(monkeypatch, VERIFIED))
        assert done["Location"] == "/accounts/login/?oidc=failed"
    assert django_user_model.objects.count() == 1


@pytest.mark.django_db
def test_an_id_token_for_another_client_is_refused(monkeypatch, django_user_model):
    client = Client(raise_request_exception=False)
    with _on():
        done = _sign_in(client, _provider(monkeypatch, VERIFIED, audience="another-app"))
        assert done.status_code == 400  # SuspiciousOperation
    assert not django_user_model.objects.exists()


@pytest.mark.django_db
def test_usernames_are_readable_and_free(django_user_model):
    assert username_for({"email": "grace.hopper@example.com"}) == "grace.hopper"
    django_user_model.objects.create_user("Ada")
    assert username_for({"preferred_username": "ada", "email": "x@example.com"}) == "ada-2"
    assert username_for({"preferred_username": "a d/a!", "email": "x@example.com"}) == "ada-2"
    assert username_for({"email": "%%%@example.com"}) == "user"


def test_verify_claims_requires_an_email():
    with _on():
        backend = OIDCBackend()
        assert not backend.verify_claims({"email_verified": True})
        assert backend.verify_claims({"email": "a@example.com", "email_verified": True})
    with _on(OIDC_REQUIRE_VERIFIED_EMAIL="false"):
        assert OIDCBackend().verify_claims({"email": "a@example.com"})


def test_verify_token_checks_the_audience():
    with _on():
        backend = OIDCBackend()
        mine = jwt.encode({"aud": ["other", "clusterplan"], "nonce": "n"}, SECRET, algorithm="HS256")
        assert backend.verify_token(mine, nonce="n")["aud"] == ["other", "clusterplan"]
        theirs = jwt.encode({"aud": "other", "nonce": "n"}, SECRET, algorithm="HS256")
        with pytest.raises(SuspiciousOperation):
            backend.verify_token(theirs, nonce="n")
