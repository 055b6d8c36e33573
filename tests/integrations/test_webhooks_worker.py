"""The webhook end to end with a real Celery worker subprocess on Redis (as tests/sweeps does): the
worker computes the sweep, fires its callback and delivers the notification to a receiver on
127.0.0.1 in this test, exactly once, signed with the owner's secret."""

import json

import pytest
from django.contrib.auth import get_user_model
from rest_framework.test import APIClient
from standardwebhooks import Webhook

from integrations.models import Callback
from tests.sweeps.conftest import wait_for

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]

AXES = {"efficiency.mfu": [0.35, 0.45], "cluster.cards": [512, 1024]}


def test_a_worker_delivers_one_signed_notification(workers, receiver, loopback_targets, scenario):
    client = APIClient()
    client.force_authenticate(get_user_model().objects.create_user("ops", password="pw-12345678"))
    secret = client.get("/api/v1/webhooks/secret").json()["secret"]
    workers("hooks", WEBHOOK_ALLOW_PRIVATE_TARGETS="1", WEBHOOK_ALLOW_HTTP="1")
    with receiver([200]) as r:
        r_sweep = client.post(
            "/api/v1/sweeps", {"base": scenario, "axes": AXES, "callback": {"url": r.url}}, format="json"
        )
        assert r_sweep.status_code == 202, r_sweep.content
        wait_for(lambda: r.received, timeout=90, what="the notification")
        wait_for(
            lambda: Callback.objects.filter(status="delivered").exists(),
            timeout=30,
            what="the delivery record",
        )
    assert len(r.received) == 1
    got = r.received[0]
    event = Webhook(secret).verify(got["body"], {k.lower(): v for k, v in got["headers"].items()})
    assert event["type"] == "sweep.done" and event["data"]["id"] == r_sweep.json()["id"]
    assert json.loads(got["body"])["data"]["progress"] == {"done": 4, "total": 4}
    hook = client.get("/api/v1/webhooks/deliveries").json()["results"][0]
    assert [(a["attempt"], a["status_code"]) for a in hook["attempts"]] == [(1, 200)]
