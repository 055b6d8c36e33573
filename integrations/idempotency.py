"""Idempotency-Key: a POST (or PUT) repeated with the same key within settings.IDEMPOTENCY_TTL_S (24 h)
gets the first response again (status, body, Location), instead of doing the work twice; the same
key with a different request answers 409. Keys are scoped to the caller: the user, or the client
address (api.throttling.client_ip) of anonymous requests.

Race-safe by the unique (scope, key) of IdempotencyRecord: the first request inserts the record
"in progress" before it runs; a concurrent repeat finds it and answers 409 (retry later) rather
than running a second time. While it runs, the record holds a lease (IDEMPOTENCY_LEASE_S) that a
heartbeat thread renews every third of it; a record whose lease ran out belongs to a request
whose process died (kill -9, an OOM kill, a replaced worker), so a repeat takes it over and runs
within seconds, not minutes. The middleware (integrations.middleware) is the one place that applies this to every
POST under /api/, present and future.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.db import IntegrityError, connection, transaction
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.utils import timezone

from .models import IdempotencyRecord

HEADER = "Idempotency-Key"
KEY = re.compile(r"[A-Za-z0-9_.:~+/=-]{16,255}")  # a UUID, a ULID, base64url of 12+ random bytes
KEY_RULE = "16 to 255 characters: letters, digits and _ . : ~ + / = -"
# Responses worth repeating: not a server error, and not one that depends on the moment
# (authentication, throttling, a concurrent request) rather than on the request itself.
NOT_STORED = frozenset({401, 403, 408, 409, 423, 425, 429})

log = logging.getLogger(__name__)


def lease() -> timedelta:
    return timedelta(seconds=float(settings.IDEMPOTENCY_LEASE_S))


def parse_key(raw: str) -> str | None:
    """The key of the header (an RFC 8941 string, so its quotes are allowed), or None if invalid."""
    key = raw.strip()
    if len(key) >= 2 and key[0] == key[-1] == '"':
        key = key[1:-1]
    return key if KEY.fullmatch(key) else None


def canonical_body(request: HttpRequest) -> bytes:
    """The body as far as a repeat must match: a JSON body by what it says (parsed, then written
    with sorted keys and no spaces, so the same document re-serialised is the same request), any
    other body by its bytes."""
    raw = request.body
    if request.content_type == "application/json":
        try:
            parsed = json.loads(raw)
        except (ValueError, UnicodeDecodeError):
            return raw  # the view answers 400 for it; the bytes are what was sent
        return json.dumps(parsed, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()
    return raw


def fingerprint(request: HttpRequest) -> str:
    """The request as far as a repeat must match: method, path and query, and the body."""
    digest = hashlib.sha256()
    for part in (request.method or "", request.get_full_path()):
        digest.update(part.encode("utf-8", "surrogateescape") + b"\0")
    digest.update(canonical_body(request))
    return digest.hexdigest()


def error(status: int, message: str, field: str = "") -> JsonResponse:
    """The API's one error shape (api.exceptions), from outside DRF."""
    return JsonResponse({"errors": [{"field": field, "message": message}]}, status=status)


def ttl() -> timedelta:
    return timedelta(seconds=int(settings.IDEMPOTENCY_TTL_S))


@dataclass
class Claim:
    """What to do with a request: `record` to run it and store the answer, or `response` to give."""

    record: IdempotencyRecord | None = None
    response: HttpResponse | None = None


def claim(scope: str, key: str, digest: str, path: str) -> Claim:
    now = timezone.now()
    for _ in range(3):  # an expired or abandoned record is replaced, then the insert is tried again
        try:
            with transaction.atomic():
                record = IdempotencyRecord.objects.create(
                    scope=scope,
                    key=key,
                    fingerprint=digest,
                    path=path[:500],
                    created_at=now,
                    lease_expires_at=now + lease(),
                )
            return Claim(record=record)
        except IntegrityError:
            pass
        found = IdempotencyRecord.objects.filter(scope=scope, key=key).first()
        if found is None:
            continue  # deleted in between (purged): insert again
        if found.created_at <= now - ttl():
            IdempotencyRecord.objects.filter(pk=found.pk, created_at=found.created_at).delete()
            continue
        if found.fingerprint != digest:
            return Claim(
                response=error(
                    409,
                    f"this {HEADER} was used for a different request in the last "
                    f"{int(settings.IDEMPOTENCY_TTL_S) // 3600} hours; use a new key for a new request",
                    HEADER,
                )
            )
        if found.status_code is not None:
            return Claim(response=replay(found))
        expires = found.lease_expires_at or found.created_at + lease()
        if expires > now:  # its request is alive (its heartbeat renews the lease)
            response = error(409, f"a request with this {HEADER} is still being processed; retry shortly")
            response["Retry-After"] = "1"
            return Claim(response=response)
        taken = IdempotencyRecord.objects.filter(
            pk=found.pk, status_code=None, lease_expires_at=found.lease_expires_at
        ).update(created_at=now, lease_expires_at=now + lease())
        if taken:  # abandoned by a process that died: this request runs it again
            found.created_at, found.lease_expires_at = now, now + lease()
            return Claim(record=found)
    return Claim(response=error(409, f"this {HEADER} is contended; retry shortly"))


def replay(record: IdempotencyRecord) -> HttpResponse:
    response = HttpResponse(
        bytes(record.body), status=record.status_code or 200, content_type=record.content_type or None
    )
    if record.location:
        response["Location"] = record.location
    response["Idempotent-Replayed"] = "true"
    return response


def finish(record: IdempotencyRecord, response: HttpResponse) -> None:
    """Store the first response, or forget the key when the answer is not worth repeating (a
    server error, throttling, ...) so that a retry runs again."""
    status = response.status_code
    if status >= 500 or status in NOT_STORED or response.streaming:
        IdempotencyRecord.objects.filter(pk=record.pk, status_code=None).delete()
        return
    IdempotencyRecord.objects.filter(pk=record.pk).update(
        lease_expires_at=None,
        status_code=status,
        body=response.content,
        content_type=response.get("Content-Type", "")[:200],
        location=response.get("Location", "")[:2000],
    )


def run(
    record: IdempotencyRecord, request: HttpRequest, get_response: Callable[[HttpRequest], HttpResponse]
) -> HttpResponse:
    """Run the first request of a key, its lease renewed meanwhile, and remember its answer."""
    stop = threading.Event()
    beat = threading.Thread(
        target=_heartbeat, args=(record.pk, stop), name="idempotency-heartbeat", daemon=True
    )
    beat.start()
    try:
        response = get_response(request)
    except BaseException:
        IdempotencyRecord.objects.filter(pk=record.pk, status_code=None).delete()
        raise
    finally:
        stop.set()
        beat.join(timeout=5)
    finish(record, response)
    return response


def _heartbeat(pk: int, stop: threading.Event) -> None:
    """Renew the lease every third of it until the request ends (its own database connection)."""
    every = float(settings.IDEMPOTENCY_LEASE_S) / 3
    try:
        while not stop.wait(every):
            IdempotencyRecord.objects.filter(pk=pk, status_code=None).update(
                lease_expires_at=timezone.now() + lease()
            )
    except Exception:  # a missed beat only shortens the lease; the request itself goes on
        log.warning("idempotency heartbeat of record %s failed", pk, exc_info=True)
    finally:
        connection.close()


def purge() -> int:
    """Delete records older than the TTL (the periodic housekeeping task); returns how many."""
    deleted, _ = IdempotencyRecord.objects.filter(created_at__lte=timezone.now() - ttl()).delete()
    return deleted
