"""One delivery attempt (integrations.delivery): a total deadline however slowly the receiver
answers, the attempt's record written before the request (so a crash mid-attempt is visible and
sent again on schedule), DNS failures retried, and a short sanitised excerpt of the answer."""

import socket
import threading
import time
from datetime import timedelta

import pytest
from django.utils import timezone

from integrations import delivery, signing
from integrations.models import Callback, DeliveryAttempt

pytestmark = pytest.mark.django_db


class RawReceiver:
    """A TCP server on 127.0.0.1 that reads the request and answers `answer`, `chunk` bytes at a
    time every `every` seconds (a trickling receiver when chunk is 1)."""

    def __init__(self, answer: bytes, chunk: int = 1 << 20, every: float = 0.0):
        self.answer, self.chunk, self.every = answer, chunk, every
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}/hook"
        self.requests = 0
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self):
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._answer, args=(conn,), daemon=True).start()

    def _answer(self, conn):
        with conn:
            try:
                conn.recv(65536)
                self.requests += 1
                for i in range(0, len(self.answer), self.chunk):
                    conn.sendall(self.answer[i : i + self.chunk])
                    time.sleep(self.every)
            except OSError:
                return

    def close(self):
        self.sock.close()


@pytest.fixture
def pending(user, loopback_targets):
    """A fired callback (attempts 0, pending) of `user`, to the URL set by the test."""
    signing.secret_of(user)

    def make(url: str) -> Callback:
        return Callback.objects.create(
            owner=user,
            url=url,
            base_url="http://testserver/",
            status=Callback.Status.PENDING,
            event_id="msg_test",
            event_type="batch.done",
            payload='{"type":"batch.done"}',
            fired_at=timezone.now(),
            next_attempt_at=timezone.now(),
        )

    return make


def test_a_receiver_trickling_one_byte_at_a_time_is_cut_at_the_deadline(pending, settings):
    """The answer's 39 bytes at one per 0.2 s would take 7.8 s; every single read is well within
    the 5 s read timeout, but the attempt as a whole gets WEBHOOK_DEADLINE_S = 1 s."""
    settings.WEBHOOK_DEADLINE_S, settings.WEBHOOK_READ_TIMEOUT_S = 1.0, 5.0
    slow = RawReceiver(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", chunk=1, every=0.2)
    try:
        callback = pending(slow.url)
        t0 = time.monotonic()
        outcome, _delay = delivery.attempt(callback.pk, 1)
        elapsed = time.monotonic() - t0
    finally:
        slow.close()
    assert outcome == "retry"
    assert 1.0 <= elapsed < 2.0
    record = DeliveryAttempt.objects.get()
    assert record.error.startswith("DeadlineError") and "deadline of 1 s" in record.error
    assert record.finished_at is not None and record.status_code is None


def test_a_tls_handshake_that_stalls_is_cut_at_the_deadline_too(pending, settings):
    """https: the receiver sends the first byte of a TLS record and then nothing for 5 s; the
    attempt still ends at WEBHOOK_DEADLINE_S = 1 s (connect, TLS and answer together)."""
    settings.WEBHOOK_DEADLINE_S, settings.WEBHOOK_READ_TIMEOUT_S = 1.0, 5.0
    stalled = RawReceiver(b"\x16\x03", chunk=1, every=5.0)
    try:
        callback = pending(stalled.url.replace("http://", "https://"))
        t0 = time.monotonic()
        assert delivery.attempt(callback.pk, 1)[0] == "retry"
        elapsed = time.monotonic() - t0
    finally:
        stalled.close()
    assert 1.0 <= elapsed < 2.0
    assert DeliveryAttempt.objects.get().error.startswith("DeadlineError")


def test_a_prompt_receiver_is_delivered_with_its_answer_sanitised(pending, settings):
    body = b"\x1b[31mOK\x00 " + b"x" * 300 + b"\r\n\t<script>"
    head = b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % len(body)
    fast = RawReceiver(head + body)
    try:
        assert delivery.attempt(pending(fast.url).pk, 1)[0] == "delivered"
    finally:
        fast.close()
    record = DeliveryAttempt.objects.get()
    assert record.status_code == 200
    excerpt = record.response_excerpt
    assert len(excerpt) == delivery.EXCERPT_CHARS and excerpt.isprintable()
    assert excerpt.startswith("[31mOK ") and "\x1b" not in excerpt and "\x00" not in excerpt


def test_the_record_is_written_before_the_request_and_a_crash_is_sent_again(pending, monkeypatch, settings):
    """The worker dies inside the request (a BaseException no handler catches, as SIGKILL would
    leave it): attempt 1's record is open; once its due time (deadline + backoff) is past, the
    recovery step sends attempt 2, which closes attempt 1 as lost."""
    settings.WEBHOOK_DEADLINE_S, settings.WEBHOOK_BACKOFF_S = 1.0, 1.0
    callback = pending("http://127.0.0.1:9/hook")
    seen = []

    class Killed(BaseException):
        pass

    def dies(cb):
        seen.append(list(DeliveryAttempt.objects.values_list("attempt", "finished_at")))
        raise Killed

    monkeypatch.setattr(delivery, "_post", dies)
    with pytest.raises(Killed):
        delivery.attempt(callback.pk, 1)
    assert seen == [[(1, None)]]  # the record existed, open, when the request started
    assert delivery.overdue() == []  # not due yet: 1 s deadline + 1 s backoff
    Callback.objects.filter(pk=callback.pk).update(next_attempt_at=timezone.now() - timedelta(seconds=3))
    assert delivery.overdue() == [(callback.pk, 2)]
    monkeypatch.setattr(delivery, "_post", lambda cb: (204, b""))
    assert delivery.attempt(callback.pk, 2)[0] == "delivered"
    lost, sent = DeliveryAttempt.objects.order_by("attempt")
    assert lost.error == delivery.LOST and lost.finished_at is not None
    assert (sent.attempt, sent.status_code) == (2, 204)


def test_a_dns_failure_is_retried_not_final(pending, monkeypatch):
    def no_dns(host, port, type=0):
        raise socket.gaierror(socket.EAI_AGAIN, "Temporary failure in name resolution")

    monkeypatch.setattr(socket, "getaddrinfo", no_dns)
    callback = pending("http://quotes.example.com/hook")
    assert delivery.attempt(callback.pk, 1)[0] == "retry"
    assert DeliveryAttempt.objects.get().error.startswith("DNS: the host quotes.example.com does not resolve")
    assert Callback.objects.get().status == "pending"


def test_the_last_attempt_lost_fails_the_delivery(pending, settings):
    settings.WEBHOOK_MAX_ATTEMPTS = 2
    callback = pending("http://127.0.0.1:9/hook")
    Callback.objects.filter(pk=callback.pk).update(
        attempts=2, next_attempt_at=timezone.now() - timedelta(seconds=5)
    )
    DeliveryAttempt.objects.create(callback=callback, attempt=2, started_at=timezone.now())
    assert delivery.overdue() == []
    assert Callback.objects.get().status == "failed"
    assert DeliveryAttempt.objects.get().error == delivery.LOST
