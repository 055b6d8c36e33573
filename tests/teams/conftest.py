"""Two teams: acme (alice the owner, bob a member, dora an admin) and rival (carol). Plus the
scenario and a price book of acme. Each test gets fresh users, teams and throttle counters."""

from __future__ import annotations

import datetime

import pytest

from tests.fresh_cache import fresh_cache  # noqa: F401 - autouse: an empty cache around each test

# 64 H100 on DGX H100 (8 per node: 8 nodes), MFU fixed: the layout search cannot move the time.
SCENARIO = {
    "name": "8B on 64 H100",
    "model": {"preset": "llama-3.1-8b"},
    "training": {"tokens": 1e11},
    "hardware": {"accelerator": "h100-sxm", "server": "dgx-h100"},
    "cluster": {"cards": 64},
    "efficiency": {"mfu": 0.4},
}


@pytest.fixture(autouse=True)
def _plain_http(settings):
    settings.SECURE_SSL_REDIRECT = False


@pytest.fixture
def scenario():
    import copy

    return copy.deepcopy(SCENARIO)


@pytest.fixture
def people(django_user_model):
    from teams.models import Membership, Team

    # no password: no hashing per test (the clients authenticate with tokens or force_login)
    users = {n: django_user_model.objects.create_user(n) for n in ("alice", "bob", "dora", "carol")}
    acme = Team.objects.create(name="Acme", slug="acme")
    rival = Team.objects.create(name="Rival", slug="rival")
    Membership.objects.create(user=users["alice"], team=acme)
    Membership.objects.create(user=users["bob"], team=acme)
    Membership.objects.create(user=users["dora"], team=acme, role=Membership.Role.ADMIN)
    Membership.objects.create(user=users["carol"], team=rival)
    return {**users, "acme": acme, "rival": rival}


def token_client(user):
    from rest_framework.test import APIClient

    from accounts.services import issue_token

    client = APIClient()
    if user is not None:
        _, secret = issue_token(user=user, name="test client")
        client.credentials(HTTP_AUTHORIZATION=f"Token {secret}")
    return client


@pytest.fixture
def clients(people):
    return {n: token_client(people[n]) for n in ("alice", "bob", "dora", "carol")} | {
        "anon": token_client(None)
    }


@pytest.fixture
def acme_book(people):
    """acme/negotiated v1: DGX H100 chassis 80,000 USD (catalog 70,000), electricity 0.11 (catalog 0.08)."""
    from pricebooks.services import create_book

    return create_book(
        user=people["alice"],
        team=people["acme"],
        name="Negotiated",
        slug="negotiated",
        currency="USD",
        price_date=datetime.date(2026, 11, 1),
        prices={"servers": {"dgx-h100": 80_000}, "electricity_per_kwh": 0.11},
    )
