"""Fixtures of the integrations tests: plain http, fresh throttle counters, small scenarios, Celery
run eagerly in-process, and a tiny HTTP receiver on 127.0.0.1 that records what it is sent."""

from __future__ import annotations

import copy
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from tests.fresh_cache import fresh_cache  # noqa: F401 - autouse: an empty cache around each test

# a real Celery worker on the test Redis, as the sweep tests start it
from tests.sweeps.conftest import (  # noqa: F401 - fixtures
    own_broker,
    own_redis,
    own_workers,
    redis_broker,
    session_redis,
    worker_env,
    workers,
)

SCENARIO = {
    "name": "8B test plan",
    "model": {"preset": "llama-3.1-8b"},
    "training": {"tokens": 2e11},
    "hardware": {"accelerator": "ascend-910b2"},
    "cluster": {"cards": 64},
}


@pytest.fixture(scope="session", autouse=True)
def _plain_http_session():
    """Session-wide, so that it is in force before live_server builds its middleware."""
    from django.test import override_settings

    with override_settings(SECURE_SSL_REDIRECT=False, SESSION_COOKIE_SECURE=False, CSRF_COOKIE_SECURE=False):
        yield


@pytest.fixture(autouse=True)
def _plain_http(settings):
    settings.SECURE_SSL_REDIRECT = False


@pytest.fixture
def scenario() -> dict:
    return copy.deepcopy(SCENARIO)


@pytest.fixture
def eager_celery():
    """Celery tasks run in-process when sent (the deliveries and their retries, one after another)."""
    from config.celery import app

    old = app.conf.task_always_eager
    app.conf.task_always_eager = True
    yield app
    app.conf.task_always_eager = old


@pytest.fixture
def loopback_targets(settings):
    """The test's receiver is on 127.0.0.1 over http: allowed here only (production denies both)."""
    settings.WEBHOOK_ALLOW_PRIVATE_TARGETS = True
    settings.WEBHOOK_ALLOW_HTTP = True
    settings.WEBHOOK_BACKOFF_S = 0.0
    return settings


class Receiver:
    """An HTTP server on 127.0.0.1 (a free port) recording each POST (path, headers, raw body) and
    answering with the next status of `statuses` (the last one repeats)."""

    def __init__(self, statuses: list[int]):
        self.statuses = list(statuses)
        self.received: list[dict] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                length = int(self.headers.get("Content-Length") or 0)
                outer.received.append(
                    {
                        "path": self.path,
                        "headers": dict(self.headers.items()),
                        "body": self.rfile.read(length),
                    }
                )
                status = outer.statuses.pop(0) if len(outer.statuses) > 1 else outer.statuses[0]
                self.send_response(status)
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"ok")

            def log_message(self, *args):
                return

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hooks/clusterplan?src=test"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def receiver():
    def make(statuses: list[int] | None = None) -> Receiver:
        return Receiver(statuses or [204])

    return make
