"""Webhook signatures: the Standard Webhooks scheme (standardwebhooks, the specification's own
library): headers webhook-id, webhook-timestamp and webhook-signature = "v1," + base64 of
HMAC-SHA256(secret, "<id>.<timestamp>.<body>"). Each user has a signing secret, shown to them and
rotated through the API; for WEBHOOK_SECRET_GRACE_S after a rotation the previous secret signs
too (two space-separated signatures), so a receiver can switch without missing a notification.
How to verify: docs/procurement.md#verify."""

from __future__ import annotations

import base64
import secrets
from datetime import datetime, timedelta

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone
from standardwebhooks import Webhook

from .models import SigningSecret

PREFIX = "whsec_"
SECRET_BYTES = 32


def new_secret() -> str:
    return PREFIX + base64.b64encode(secrets.token_bytes(SECRET_BYTES)).decode("ascii")


def secret_of(user) -> SigningSecret:
    """The user's signing secret, made on first use."""
    found = SigningSecret.objects.filter(user=user).first()
    if found is not None:
        return found
    try:
        with transaction.atomic():
            return SigningSecret.objects.create(user=user, secret=new_secret(), created_at=timezone.now())
    except IntegrityError:  # made concurrently
        return SigningSecret.objects.get(user=user)


def previous_valid_until(record: SigningSecret) -> datetime | None:
    if not record.previous:
        return None
    until = record.created_at + timedelta(seconds=int(settings.WEBHOOK_SECRET_GRACE_S))
    return until if until > timezone.now() else None


@transaction.atomic
def rotate(user) -> SigningSecret:
    record = secret_of(user)
    record = SigningSecret.objects.select_for_update().get(pk=record.pk)
    record.previous, record.secret, record.created_at = record.secret, new_secret(), timezone.now()
    record.save()
    return record


def signing_keys(user) -> list[str]:
    record = secret_of(user)
    return [record.secret] + ([record.previous] if previous_valid_until(record) else [])


def headers(keys: list[str], msg_id: str, timestamp: datetime, body: str) -> dict[str, str]:
    return {
        "webhook-id": msg_id,
        "webhook-timestamp": str(int(timestamp.timestamp())),
        "webhook-signature": " ".join(Webhook(key).sign(msg_id, timestamp, body) for key in keys),
    }
