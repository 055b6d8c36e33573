"""One delivery attempt of a notification, and the schedule of the next.

The attempt is claimed first (attempts N-1 -> N on a pending callback, one conditional UPDATE), so
a task message delivered twice (a broker redelivery, a housekeeping re-send) sends nothing twice.
The request: a POST of the stored body, signed (integrations.signing), to the address the target
check resolved (integrations.targets), bounded connect and read timeouts, no redirects followed
(a 3xx is a failed attempt), at most MAX_RESPONSE_BYTES of the answer read. Every attempt is
stored (time, duration, status code or error, the start of the answer)."""

from __future__ import annotations

import random
import time
from datetime import timedelta

import urllib3
from django.conf import settings
from django.utils import timezone

from . import signing, targets
from .models import Callback, DeliveryAttempt

MAX_RESPONSE_BYTES = 4096  # of the receiver's answer; the first 500 characters are stored
USER_AGENT = "ClusterPlan-Webhooks/1"
RESEND_AFTER_S = 600  # housekeeping re-sends a pending attempt overdue by this much (a lost message)


def backoff_s(attempt: int) -> float:
    """Seconds before attempt `attempt + 1`: WEBHOOK_BACKOFF_S doubled each time, capped, with
    up to 10 % jitter so that many receivers coming back do not all get hit in the same second."""
    base = float(settings.WEBHOOK_BACKOFF_S) * 2 ** (attempt - 1)
    delay = min(base, float(settings.WEBHOOK_BACKOFF_MAX_S))
    return delay * (1 + random.random() / 10)


def _post(callback: Callback) -> tuple[int, str]:
    """POST the notification; returns the status code and the start of the answer."""
    target = targets.check_url(callback.url)
    address = targets.resolve(target)
    body = callback.payload.encode("utf-8")
    headers = {
        **signing.headers(
            signing.signing_keys(callback.owner), callback.event_id, timezone.now(), callback.payload
        ),
        "Content-Type": "application/json",
        "User-Agent": USER_AGENT,
        "Host": target.host_header,
    }
    timeout = urllib3.Timeout(
        connect=float(settings.WEBHOOK_CONNECT_TIMEOUT_S), read=float(settings.WEBHOOK_READ_TIMEOUT_S)
    )
    pool: urllib3.HTTPConnectionPool
    if target.scheme == "https":  # connect to the checked address; the certificate must name the host
        pool = urllib3.HTTPSConnectionPool(
            address,
            target.port,
            timeout=timeout,
            retries=False,
            maxsize=1,
            server_hostname=target.host,
            assert_hostname=target.host,
        )
    else:
        pool = urllib3.HTTPConnectionPool(address, target.port, timeout=timeout, retries=False, maxsize=1)
    try:
        response = pool.urlopen(
            "POST",
            target.path,
            body=body,
            headers=headers,
            redirect=False,
            retries=False,
            preload_content=False,
            assert_same_host=False,
        )
        try:
            head = response.read(MAX_RESPONSE_BYTES, decode_content=False)
        finally:
            response.release_conn()
        return response.status, head.decode("utf-8", "replace").replace("\x00", "")[:500]
    finally:
        pool.close()


def attempt(callback_id: int, number: int) -> tuple[str, float]:
    """Attempt `number` of a callback's delivery. Returns ("delivered" | "failed" (no more
    attempts) | "skipped" (not ours to make) | "retry", the seconds until the next attempt)."""
    now = timezone.now()
    hard_limit = int(settings.CELERY_TASK_TIME_LIMIT)
    claimed = Callback.objects.filter(
        pk=callback_id, status=Callback.Status.PENDING, attempts=number - 1
    ).update(attempts=number, next_attempt_at=now + timedelta(seconds=hard_limit))
    if not claimed:
        return "skipped", 0.0
    callback = Callback.objects.select_related("owner").get(pk=callback_id)
    started, t0 = timezone.now(), time.perf_counter()
    status_code: int | None = None
    error = excerpt = ""
    final = False
    try:
        status_code, excerpt = _post(callback)
        if not 200 <= status_code < 300:
            error = f"answered {status_code}" + (
                " (redirects are not followed)" if 300 <= status_code < 400 else ""
            )
    except targets.TargetError as exc:
        error, final = f"refused target: {exc}", True  # not a network hiccup: retrying will not help
    except (urllib3.exceptions.HTTPError, OSError) as exc:
        error = f"{type(exc).__name__}: {exc}"
    DeliveryAttempt.objects.create(
        callback_id=callback_id,
        attempt=number,
        started_at=started,
        duration_ms=round((time.perf_counter() - t0) * 1000),
        status_code=status_code,
        error=error[:500],
        response_excerpt=excerpt,
    )
    delay = 0.0
    if not error:
        outcome, status, next_at = "delivered", Callback.Status.DELIVERED, None
    elif final or number >= int(settings.WEBHOOK_MAX_ATTEMPTS):
        outcome, status, next_at = "failed", Callback.Status.FAILED, None
    else:
        delay = backoff_s(number)
        outcome, status, next_at = "retry", Callback.Status.PENDING, timezone.now() + timedelta(seconds=delay)
    Callback.objects.filter(pk=callback_id, attempts=number).update(status=status, next_attempt_at=next_at)
    return outcome, delay


def overdue() -> list[tuple[int, int]]:
    """(callback id, next attempt number) of pending deliveries whose message was lost."""
    cutoff = timezone.now() - timedelta(seconds=RESEND_AFTER_S)
    rows = Callback.objects.filter(status=Callback.Status.PENDING, next_attempt_at__lt=cutoff)
    return [(pk, attempts + 1) for pk, attempts in rows.values_list("pk", "attempts")]
