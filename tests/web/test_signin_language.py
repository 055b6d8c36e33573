"""Issue 24 item 6 (the part of this branch): signing in from a Chinese page stays in Chinese."""

import pytest
from django.contrib.auth import get_user_model

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _no_lockout(settings):
    settings.AXES_ENABLED = False


def test_a_page_that_needs_a_sign_in_sends_a_chinese_reader_to_the_chinese_sign_in(client):
    response = client.get("/zh-hans/accounts/tokens/")
    assert response.status_code == 302
    assert response["Location"] == "/zh-hans/accounts/login/?next=/zh-hans/accounts/tokens/"
    page = client.get(response["Location"]).content.decode()
    assert "登录" in page and 'lang="zh-hans"' in page


def test_the_menu_link_keeps_the_language_and_the_page(client, make_estimate):
    est = make_estimate()
    html = client.get(f"/zh-hans/r/{est.share_token}/").content.decode()
    assert f'href="/zh-hans/accounts/login/?next=/zh-hans/r/{est.share_token}/"' in html


def test_after_signing_in_the_reader_is_back_on_the_chinese_page(client):
    get_user_model().objects.create_user("lin", password="pw-12345678")
    response = client.post(
        "/zh-hans/accounts/login/",
        {"username": "lin", "password": "pw-12345678", "next": "/zh-hans/estimates/"},
    )
    assert response.status_code == 302 and response["Location"] == "/zh-hans/estimates/"
    client.post("/zh-hans/accounts/logout/")
    response = client.post("/zh-hans/accounts/login/", {"username": "lin", "password": "pw-12345678"})
    assert response["Location"] == "/zh-hans/estimates/"  # no next: "my estimates", in Chinese
