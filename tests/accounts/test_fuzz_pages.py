"""Hypothesis fuzz of the tokens page: any posted name and expiry gets 201 (made) or 400 (refused,
with the reason on the form), never a server error; the cap and the name rule hold throughout."""

import pytest
from django.test import Client
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from accounts.forms import EXPIRY_CHOICES
from accounts.models import ApiToken

pytestmark = [pytest.mark.fuzz, pytest.mark.django_db]

FUZZ = settings(max_examples=60, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=120)  # what a browser can post
EXPIRY = st.one_of(st.sampled_from([c[0] for c in EXPIRY_CHOICES]), TEXT)


@pytest.fixture
def signed_in(user, settings):
    rates = dict.fromkeys(settings.REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"], "100000/minute")
    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "DEFAULT_THROTTLE_RATES": rates}
    settings.API_TOKENS_MAX_PER_USER = 5
    client = Client()
    client.force_login(user)
    return client


@FUZZ
@given(name=TEXT, expires=EXPIRY)
def test_any_post_is_made_or_refused(signed_in, user, name, expires):
    response = signed_in.post("/accounts/tokens/", {"name": name, "expires": expires})
    assert response.status_code in {201, 400}
    live = ApiToken.objects.filter(user=user, revoked_at__isnull=True)
    assert live.count() <= 5
    assert live.values("name").distinct().count() == live.count()
