"""The tokens page in headless Chromium with JavaScript off: sign in with a password, follow the
menu to "API tokens", create one, use it, revoke it."""

import urllib.error
import urllib.request

import pytest

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def _api_status(base: str, secret: str) -> int:
    request = urllib.request.Request(
        f"{base}/api/v1/estimates", headers={"Authorization": f"Bearer {secret}"}
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status
    except urllib.error.HTTPError as exc:
        return exc.code


def test_create_use_and_revoke_a_token_without_javascript(chromium, live_server, django_user_model):
    django_user_model.objects.create_user("carol", password="carol-password-1")
    context = chromium.new_context(locale="en-US", java_script_enabled=False)
    page = context.new_page()
    page.goto(f"{live_server.url}/accounts/login/")
    page.fill("input[name=username]", "carol")
    page.fill("input[name=password]", "carol-password-1")
    page.click("form.estimate-form button[type=submit]")
    page.wait_for_url("**/estimates/")

    page.click("header.site nav >> text=API tokens")
    page.wait_for_url("**/accounts/tokens/")
    page.fill("input[name=name]", "quoting system")
    page.select_option("select[name=expires]", "30")
    page.click("text=Create token")
    secret = page.inner_text("[data-testid=token-secret]")
    assert secret.startswith("cpt_")
    assert _api_status(live_server.url, secret) == 200

    page.goto(f"{live_server.url}/accounts/tokens/")
    assert secret not in page.content()
    page.click("button[aria-label='Revoke quoting system']")
    page.wait_for_url("**/accounts/tokens/")
    assert "revoked; it no longer works" in page.inner_text("main")
    assert _api_status(live_server.url, secret) == 401
    context.close()
