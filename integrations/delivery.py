"""One delivery attempt of a notification, and the schedule of the next.

The attempt is claimed first (attempts N-1 -> N on a pending callback, one conditional UPDATE), and
its DeliveryAttempt row is written in the same transaction, before anything is sent: a worker that
dies mid-attempt leaves an open row (no finished_at) that the owner sees, and the claim's
`next_attempt_at` (the attempt's deadline plus the backoff a failure would get) is when the
workers' recovery loop (integrations.recovery) sends it again, closing the open row as lost. A task
message delivered twice (a broker redelivery, a re-send) sends nothing twice: the claim decides.

The request: a POST of the stored body, signed (integrations.signing), to the address the target
check resolved (integrations.targets), no redirects followed (a 3xx is a failed attempt), at most
MAX_RESPONSE_BYTES of the answer read, and the whole exchange (connect, TLS, request and answer)
within WEBHOOK_DEADLINE_S: a receiver trickling bytes is cut off then. A name that does not
resolve and a connection that fails are retried with backoff; a refused target is final. The row
keeps the status code, the error and at most EXCERPT_CHARS of the answer, sanitised."""

from __future__ import annotations

import contextlib
import http.client
import random
import socket
import ssl
import threading
import time
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from . import signing, targets
from .models import Callback, DeliveryAttempt

MAX_RESPONSE_BYTES = 4096  # of the receiver's answer, read at most
EXCERPT_CHARS = 120  # of it, stored (printable characters only)
USER_AGENT = "ClusterPlan-Webhooks/1"
RESEND_GRACE_S = 2.0  # a pending attempt overdue by this much had its message lost: sent again
LOST = "the attempt did not finish (its worker was lost); sent again on schedule"


class DeadlineError(TimeoutError):
    """The exchange as a whole took longer than WEBHOOK_DEADLINE_S."""


def backoff_s(attempt: int) -> float:
    """Seconds before attempt `attempt + 1`: WEBHOOK_BACKOFF_S doubled each time, capped, with
    up to 10 % jitter so that many receivers coming back do not all get hit in the same second."""
    base = float(settings.WEBHOOK_BACKOFF_S) * 2 ** (attempt - 1)
    delay = min(base, float(settings.WEBHOOK_BACKOFF_MAX_S))
    return delay * (1 + random.random() / 10)


def sanitised(raw: bytes | str, limit: int = EXCERPT_CHARS) -> str:
    """At most `limit` printable characters, whitespace collapsed: what the log may keep of text a
    receiver (or an error) chose."""
    text = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else raw
    text = "".join(c if c.isprintable() else " " for c in text[: limit * 4])
    return " ".join(text.split())[:limit]


class _Pinned(http.client.HTTPConnection):
    """http.client on a socket already connected (to the checked address, TLS done)."""

    def __init__(self, sock: socket.socket, timeout: float):
        super().__init__("pinned.invalid", timeout=timeout)
        self.sock = sock


def _connect(
    target: targets.Target, address: str, deadline: float, holder: list[socket.socket]
) -> socket.socket:
    """Connect to the checked address (TLS for https); the socket goes into `holder` before any
    handshake, so the deadline's cut reaches a handshake that trickles too."""
    remaining = deadline - time.monotonic()
    connect_s = min(float(settings.WEBHOOK_CONNECT_TIMEOUT_S), remaining)
    sock = socket.create_connection((address, target.port), timeout=max(connect_s, 0.001))
    if target.scheme != "https":
        holder.append(sock)
        return sock
    sock.settimeout(max(deadline - time.monotonic(), 0.001))
    context = ssl.create_default_context()  # the certificate must name the host of the URL
    tls = context.wrap_socket(sock, server_hostname=target.host, do_handshake_on_connect=False)
    holder.append(tls)
    tls.do_handshake()
    return tls


def _cut(holder: list[socket.socket]) -> None:
    """At the deadline: shut the socket down under whatever read or handshake is blocked on it
    (the base class's shutdown, on the descriptor, also for a TLS socket)."""
    for sock in holder:
        with contextlib.suppress(OSError):
            socket.socket.shutdown(sock, socket.SHUT_RDWR)


def _exchange(
    target: targets.Target, address: str, body: bytes, headers: dict[str, str]
) -> tuple[int, bytes]:
    """POST within the deadline; the status code and the start of the answer."""
    deadline_s = float(settings.WEBHOOK_DEADLINE_S)
    deadline = time.monotonic() + deadline_s
    holder: list[socket.socket] = []
    guard = threading.Timer(deadline_s, _cut, args=(holder,))
    guard.daemon = True
    guard.start()
    try:
        sock = _connect(target, address, deadline, holder)
        if time.monotonic() >= deadline:
            _cut(holder)
        read_s = min(float(settings.WEBHOOK_READ_TIMEOUT_S), max(deadline - time.monotonic(), 0.001))
        sock.settimeout(read_s)
        conn = _Pinned(sock, read_s)
        try:
            conn.request("POST", target.path, body=body, headers=headers)
            response = conn.getresponse()
            head = response.read(MAX_RESPONSE_BYTES)
            status = response.status
        finally:
            conn.close()
    except (OSError, http.client.HTTPException):
        if time.monotonic() >= deadline:
            raise DeadlineError(f"no complete answer within the deadline of {deadline_s:g} s") from None
        raise
    finally:
        guard.cancel()
    if time.monotonic() >= deadline:  # the cut ended the read early: the answer is not complete
        raise DeadlineError(f"no complete answer within the deadline of {deadline_s:g} s")
    return status, head


def _post(callback: Callback) -> tuple[int, bytes]:
    """POST the notification; returns the status code and the start of the answer."""
    target = targets.check_url(callback.url)
    address = targets.resolve(target)
    headers = {
        **signing.headers(
            signing.signing_keys(callback.owner), callback.event_id, timezone.now(), callback.payload
        ),
        "Content-Type": "application/json",
        "User-Agent": USER_AGENT,
        "Host": target.host_header,
        "Connection": "close",
    }
    return _exchange(target, address, callback.payload.encode("utf-8"), headers)


def _claim(callback_id: int, number: int) -> DeliveryAttempt | None:
    """Attempt `number` is ours: the claim and its open record in one transaction (None: not ours)."""
    now = timezone.now()
    due = now + timedelta(seconds=float(settings.WEBHOOK_DEADLINE_S) + backoff_s(number))
    with transaction.atomic():
        claimed = Callback.objects.filter(
            pk=callback_id, status=Callback.Status.PENDING, attempts=number - 1
        ).update(attempts=number, next_attempt_at=due)
        if not claimed:
            return None
        close_lost(callback_id, number - 1)
        return DeliveryAttempt.objects.create(callback_id=callback_id, attempt=number, started_at=now)


def close_lost(callback_id: int, number: int) -> None:
    """An attempt still open when the next is claimed never finished: say so on its record."""
    DeliveryAttempt.objects.filter(callback_id=callback_id, attempt=number, finished_at=None).update(
        finished_at=timezone.now(), error=LOST
    )


def attempt(callback_id: int, number: int) -> tuple[str, float]:
    """Attempt `number` of a callback's delivery. Returns ("delivered" | "failed" (no more
    attempts) | "skipped" (not ours to make) | "retry", the seconds until the next attempt)."""
    record = _claim(callback_id, number)
    if record is None:
        return "skipped", 0.0
    callback = Callback.objects.select_related("owner").get(pk=callback_id)
    t0 = time.perf_counter()
    status_code: int | None = None
    error, head, final = "", b"", False
    try:
        status_code, head = _post(callback)
        if not 200 <= status_code < 300:
            error = f"answered {status_code}" + (
                " (redirects are not followed)" if 300 <= status_code < 400 else ""
            )
    except targets.UnresolvedTargetError as exc:
        error = f"DNS: {exc}"  # a resolver hiccup: the next attempt may resolve
    except targets.TargetError as exc:
        error, final = f"refused target: {exc}", True  # not a network hiccup: retrying will not help
    except (OSError, http.client.HTTPException) as exc:
        error = f"{type(exc).__name__}: {exc}"
    DeliveryAttempt.objects.filter(pk=record.pk).update(
        finished_at=timezone.now(),
        duration_ms=round((time.perf_counter() - t0) * 1000),
        status_code=status_code,
        error=sanitised(error, 500),
        response_excerpt=sanitised(head),
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
    """(callback id, next attempt number) of pending deliveries whose message was lost or whose
    last attempt never finished; one that used every attempt is failed here instead."""
    cutoff = timezone.now() - timedelta(seconds=RESEND_GRACE_S)
    rows = Callback.objects.filter(status=Callback.Status.PENDING, next_attempt_at__lt=cutoff)
    out = []
    for pk, attempts in rows.values_list("pk", "attempts"):
        if attempts >= int(settings.WEBHOOK_MAX_ATTEMPTS):
            failed = Callback.objects.filter(pk=pk, status=Callback.Status.PENDING, attempts=attempts).update(
                status=Callback.Status.FAILED, next_attempt_at=None
            )
            if failed:
                close_lost(pk, attempts)
            continue
        out.append((pk, attempts + 1))
    return out
