"""Fixtures of the sweep tests: a base scenario, a real Celery worker subprocess on real Redis,
and the test database handed to that worker.

Integration tests run their brokers on redis-servers of their own on free ports (scripts.own_redis):
one for the session (`redis_broker`, `workers`; emptied before each test) and one per test for
tests that stop or restart Redis (`own_redis`, `own_workers`). The shared Redis at REDIS_URL is
never written to, flushed or stopped. Under CI=true a missing redis-server fails instead of
skipping.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import quote

import pytest

ROOT = Path(__file__).resolve().parents[2]
BASE = {
    "name": "sweep test base",
    "model": {"preset": "llama-3.1-70b"},
    "training": {"tokens": 1e12, "seq_len": 4096},
    "hardware": {"accelerator": "ascend-910b2"},
    "cluster": {"cards": 1024},
    "efficiency": {"mfu": 0.45},
}


@pytest.fixture(autouse=True)
def _plain_http(settings):
    """The test client speaks http: no HTTPS redirect (production settings default to it)."""
    settings.SECURE_SSL_REDIRECT = False


@pytest.fixture
def base() -> dict:
    import copy

    return copy.deepcopy(BASE)


def redis_client(url: str):
    import redis

    return redis.Redis.from_url(url, socket_connect_timeout=1, socket_timeout=2)


def _private_redis():
    """A started redis-server of this test run's own (scripts.own_redis), or a skip (a fail under CI)
    where redis-server is not installed."""
    import shutil

    from scripts.own_redis import OwnRedis

    if shutil.which("redis-server") is None:
        if os.environ.get("CI"):
            pytest.fail("redis-server is not installed (CI must provide it)")
        pytest.skip("redis-server is not installed")
    return OwnRedis().start()


@pytest.fixture(scope="session")
def session_redis():
    """One private redis-server for the session's worker tests: starting one costs ~0.1 s, and a
    test empties it before use (redis_broker), so the tests stay independent."""
    server = _private_redis()
    yield server
    server.close()


@pytest.fixture
def redis_broker(settings, session_redis):
    """The in-process Celery app publishes to the session's own Redis, emptied first."""
    url = session_redis.url
    redis_client(url).flushdb()
    with _broker_at(url):
        yield url


@pytest.fixture
def own_redis():
    """A redis-server of this test's own on a free port (scripts.own_redis), for tests that stop
    or restart Redis."""
    server = _private_redis()
    yield server
    server.close()


@pytest.fixture
def own_broker(own_redis):
    """The in-process Celery app publishes to `own_redis`."""
    with _broker_at(own_redis.url):
        yield own_redis


@contextlib.contextmanager
def _broker_at(url: str):
    from config.celery import app

    old = (app.conf.broker_url, app.conf.broker_transport_options)
    _reset_producer_pool(app)
    app.conf.broker_url = url
    app.conf.broker_transport_options = {"visibility_timeout": 3600, "socket_connect_timeout": 1}
    try:
        yield
    finally:
        _reset_producer_pool(app)
        app.conf.broker_url, app.conf.broker_transport_options = old


def _reset_producer_pool(app) -> None:
    """Forget pooled broker connections (kombu's global pools too) so the next publish connects
    to the configured URL."""
    from kombu import pools

    pools.reset()
    app.amqp._producer_pool = None
    app._pool = None


@pytest.fixture
def fast_watchdog(settings):
    """Seconds, not minutes: re-queue lost chunks after 3 s without progress, fail after 25 s."""
    settings.SWEEP_STALL_S = 3
    settings.SWEEP_FAIL_AFTER_S = 25
    settings.SWEEP_CHUNK_SIZE = 2_000
    settings.SWEEP_MAX_ACTIVE_PER_USER = 10
    return settings


def database_url() -> str:
    """The URL of the database this test process uses now (the test database)."""
    from django.db import connection

    s = connection.settings_dict
    if s["ENGINE"].endswith("sqlite3"):
        return f"sqlite:///{s['NAME']}"
    if "postgresql" in s["ENGINE"]:
        auth = quote(s["USER"] or "")
        if s.get("PASSWORD"):
            auth += ":" + quote(s["PASSWORD"])
        host = f"{s['HOST'] or '127.0.0.1'}:{s['PORT'] or 5432}"
        return f"postgres://{auth}@{host}/{s['NAME']}"
    raise RuntimeError(f"unsupported test database engine {s['ENGINE']}")


class Worker:
    """One `celery -A config worker -P solo` subprocess with its own log file."""

    def __init__(self, name: str, env: dict, log_dir: Path):
        self.name = name
        self.env = env
        self.log_path = log_dir / f"worker-{name}.log"
        self.proc: subprocess.Popen | None = None

    def start(self, wait_ready: bool = True, timeout: float = 30) -> Worker:
        self.log = Path(self.log_path).open("ab")  # noqa: SIM115 - closed in stop()
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "celery",
                "-A",
                "config",
                "worker",
                "-P",
                "solo",
                "-l",
                "info",
                "--without-gossip",
                "--without-mingle",
                "--without-heartbeat",
                "-Q",
                self.env.get("WORKER_QUEUES", "celery,batches,webhooks"),  # all of them unless told
                "-n",
                f"{self.name}@%h",
            ],
            cwd=ROOT,
            env=self.env,
            stdout=self.log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        if wait_ready:
            deadline = time.monotonic() + timeout
            while time.monotonic() < deadline:
                if b" ready." in self.log_path.read_bytes():
                    return self
                if self.proc.poll() is not None:
                    raise RuntimeError(f"worker {self.name} exited:\n{self.tail()}")
                time.sleep(0.1)
            raise RuntimeError(f"worker {self.name} not ready in {timeout} s:\n{self.tail()}")
        return self

    def kill(self) -> None:
        """SIGKILL: no warm shutdown, no ack of the chunk in hand."""
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(10)

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        if getattr(self, "log", None):
            self.log.close()

    def tail(self, n: int = 40) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-n:])
        except OSError:
            return ""


@pytest.fixture
def worker_env(transactional_db, tmp_path) -> dict:
    env = dict(os.environ)
    env.update(
        {
            "DATABASE_URL": database_url(),
            "DJANGO_SETTINGS_MODULE": "config.settings",
            "PYTHONUNBUFFERED": "1",
            "DB_CONN_MAX_AGE": "0",
        }
    )
    env.pop("CELERY_TASK_ALWAYS_EAGER", None)
    return env


def _worker_factory(worker_env: dict, broker_url: str, tmp_path: Path):
    started: list[Worker] = []
    env = {
        **worker_env,
        "REDIS_URL": broker_url,
        "CELERY_VISIBILITY_TIMEOUT": "3600",
        "SWEEP_LEASE_S": "3",  # a dead worker's chunk is free again after 3 s
        "LOG_LEVEL": "INFO",  # the services log each chunk they compute or stop
    }

    def start(name: str = "w1", wait_ready: bool = True, **extra_env: str) -> Worker:
        w = Worker(f"{name}-{len(started)}", {**env, **extra_env}, tmp_path)
        started.append(w)
        return w.start(wait_ready=wait_ready)

    return start, started


@pytest.fixture
def workers(worker_env, redis_broker, tmp_path):
    """Factory of real worker subprocesses on the session's own Redis; all stopped at the end."""
    start, started = _worker_factory(worker_env, redis_broker, tmp_path)
    yield start
    for w in started:
        w.stop()


@pytest.fixture
def own_workers(worker_env, own_broker, tmp_path):
    """The same factory on the test's own redis-server (`own_redis`), which the test may stop."""
    start, started = _worker_factory(worker_env, own_broker.url, tmp_path)
    yield start
    for w in started:
        w.stop()


def wait_for(predicate, timeout: float, interval: float = 0.2, what: str = "condition"):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    raise AssertionError(f"timed out after {timeout} s waiting for {what}")
