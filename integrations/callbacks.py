"""Callbacks: a sweep or a batch names `callback: {"url": ...}`; when it ends, one signed JSON
notification is delivered there (integrations.delivery, by the Celery task integrations.deliver).

`parse` validates the request's callback (field paths `callback`, `callback.url`); `attach` stores
it with its sweep or batch; `fire` fixes the event (id, type and body) once, whoever calls it how
often, and queues the first attempt when the transaction commits."""

from __future__ import annotations

import json
import logging
import uuid
from datetime import timedelta
from typing import Any

from celery import current_app
from django.conf import settings
from django.db import transaction
from django.utils import timezone

from api.timestamps import rfc3339
from estimator.errors import ScenarioError

from . import targets
from .models import Batch, Callback

FIELD = "callback"
DELIVER_TASK = "integrations.deliver"  # registered by integrations.tasks (by name: no import cycle)

log = logging.getLogger(__name__)


def parse(value: Any, owner) -> str | None:
    """The callback URL of a request, validated; None when the request names none."""
    if value is None:
        return None
    if not isinstance(value, dict):
        raise ScenarioError('must be an object {"url": "https://..."}', FIELD)
    unknown = sorted(set(value) - {"url"})
    if unknown:
        raise ScenarioError("unknown key; a callback has url", f"{FIELD}.{unknown[0]}")
    if owner is None or not owner.is_authenticated:
        raise ScenarioError(
            "a callback needs an account: notifications are signed with your signing secret "
            "(GET /api/v1/webhooks/secret)",
            FIELD,
        )
    url = value.get("url")
    try:
        targets.check_url(url)
    except targets.TargetError as exc:
        raise ScenarioError(str(exc), f"{FIELD}.url") from None
    return str(url)


def attach(
    url: str | None, owner, base_url: str, *, sweep=None, batch: Batch | None = None
) -> Callback | None:
    if url is None:
        return None
    return Callback.objects.create(owner=owner, url=url, base_url=base_url[:500], sweep=sweep, batch=batch)


def fire(callback: Callback, event_type: str, data: dict[str, Any]) -> bool:
    """Fix the notification and queue its delivery, once: a second call (the same end reported
    twice) changes nothing. Returns whether this call fired it."""
    now = timezone.now()
    # the first attempt's message is due by then; past it, the recovery loop sends it again
    due = now + timedelta(seconds=float(settings.WEBHOOK_DEADLINE_S))
    event_id = f"msg_{uuid.uuid4().hex}"
    body = json.dumps(
        {"type": event_type, "timestamp": rfc3339(now), "data": data},
        ensure_ascii=False,
        separators=(",", ":"),
    )
    fired = Callback.objects.filter(pk=callback.pk, status=Callback.Status.WAITING).update(
        status=Callback.Status.PENDING,
        event_id=event_id,
        event_type=event_type,
        payload=body,
        fired_at=now,
        next_attempt_at=due,
    )
    if fired:
        callback_id = callback.pk
        transaction.on_commit(lambda: queue_attempt(callback_id, 1))
    return bool(fired)


def queue_attempt(callback_id: int, number: int, countdown: float = 0.0) -> None:
    """Publish attempt `number` to the webhooks queue. A broker that cannot be reached loses
    nothing: the callback stays pending with its due time, and the recovery loop sends it again."""
    try:
        current_app.tasks[DELIVER_TASK].apply_async(
            (callback_id, number),
            countdown=countdown or None,
            retry=True,
            retry_policy={"max_retries": 1, "interval_start": 0.2, "interval_step": 0.5},
        )
    except Exception as exc:  # kombu raises OperationalError and friends when the broker is down
        log.warning("callback %s: queuing attempt %s failed: %s", callback_id, number, exc)
