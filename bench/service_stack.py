"""The stack bench/service_faults.py loads and breaks, on its own: SQLite in a temporary directory,
its OWN redis-server on a free port (scripts/own_redis.py; the shared Redis is never touched),
gunicorn with config/gunicorn.py and the three embedded workers of scripts/run_embedded.py, kept
running as their supervisor would (a worker that exits is started again); plus the JSON client of
its web tier (Http) and webhook receivers on loopback (Receiver)."""

from __future__ import annotations

import http.client
import json
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from scripts.own_redis import OwnRedis, free_port  # noqa: E402
from scripts.run_embedded import WORKERS, restart_dead, server_command, start_worker  # noqa: E402


class Http:
    """JSON over one-shot HTTP connections to the stack's web tier."""

    def __init__(self, port: int):
        self.port = port

    def call(self, method: str, path: str, token: str = "", body=None, key: str = "", timeout=60):
        headers = {"Accept": "application/json"}
        if token:
            headers["Authorization"] = f"Token {token}"
        if key:
            headers["Idempotency-Key"] = key
        data = None
        if body is not None:
            data, headers["Content-Type"] = json.dumps(body).encode(), "application/json"
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        t0 = time.perf_counter()
        try:
            conn.request(method, path, data, headers)
            response = conn.getresponse()
            raw = response.read()
            try:
                payload = json.loads(raw) if raw else None
            except ValueError:
                payload = None
            return response.status, payload, time.perf_counter() - t0, response.getheader("Retry-After")
        except OSError:
            return 0, None, time.perf_counter() - t0, None
        finally:
            conn.close()


class Receiver:
    """Webhook receivers on 127.0.0.1: `fast` answers 204 at once and records every webhook-id;
    `slow` answers one byte every `every` seconds."""

    def __init__(self, every: float = 0.0):
        self.ids: list[str] = []
        self.connections = 0
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                outer.connections += 1
                if every:
                    try:
                        for byte in b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok":
                            self.wfile.write(bytes([byte]))
                            self.wfile.flush()
                            time.sleep(every)
                    except OSError:
                        pass
                    return
                outer.ids.append(self.headers["webhook-id"])
                self.send_response(204)
                self.end_headers()

            def log_message(self, *args):
                return

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


class Stack:
    def __init__(self, tmp: Path):
        self.tmp = tmp
        self.redis = OwnRedis().start()
        self.port = free_port()
        self.db = tmp / "db.sqlite3"
        self.env = dict(os.environ)
        self.env.update(
            CLUSTERPLAN_VAR_DIR=str(tmp),
            DATABASE_URL=f"sqlite:///{self.db}",
            REDIS_URL=self.redis.url,
            CACHE_URL="",  # throttle counters in the database: a Redis fault is the broker's only
            SECURE_HTTPS="0",
            DJANGO_DEBUG="0",
            ALLOWED_HOSTS="127.0.0.1",
            WEB_WORKERS="2",
            GUNICORN_ACCESS_LOG="",
            LOG_LEVEL="ERROR",
            PYTHONUNBUFFERED="1",
            WEBHOOK_ALLOW_PRIVATE_TARGETS="1",  # the receivers are on loopback
            WEBHOOK_ALLOW_HTTP="1",
            WEBHOOK_BACKOFF_S="1",
            SWEEP_CHUNK_SIZE="1000",
            SWEEP_MAX_ACTIVE_PER_USER="5",
        )
        self.http = Http(self.port)
        self.web: subprocess.Popen | None = None
        self.workers: dict[str, subprocess.Popen] = {}
        self.logs = (tmp / "stack.log").open("ab")
        self.lock = threading.Lock()
        self.stopping = threading.Event()
        self.restarts: list[str] = []
        threading.Thread(target=self.supervise, daemon=True).start()

    def migrate_and_users(self, n: int) -> list[str]:
        py = sys.executable
        subprocess.run([py, "manage.py", "migrate", "-v", "0"], cwd=ROOT, env=self.env, check=True)
        code = (
            "import json; from django.contrib.auth import get_user_model; "
            "from accounts.services import issue_token; U = get_user_model(); "
            f"print(json.dumps([issue_token(user=U.objects.create_user(f'u{{i}}'), name='bench')[1] for i in range({n})]))"
        )
        out = subprocess.run(
            [py, "manage.py", "shell", "-c", code],
            cwd=ROOT,
            env=self.env,
            check=True,
            capture_output=True,
            text=True,
        )
        return json.loads(out.stdout.strip().splitlines()[-1])

    def start_web(self) -> None:
        command = server_command(sys.executable, "127.0.0.1", self.port, gunicorn=True)
        self.web = subprocess.Popen(
            command, cwd=ROOT, env=self.env, stdout=self.logs, stderr=self.logs, start_new_session=True
        )
        deadline = time.monotonic() + 60
        while self.http.call("GET", "/api/v1/catalog")[0] != 200:
            if time.monotonic() > deadline or self.web.poll() is not None:
                raise RuntimeError("the web tier did not start; see " + str(self.tmp / "stack.log"))
            time.sleep(0.3)

    def kill_web(self) -> None:
        """kill -9 of gunicorn's master and workers (its own process group only)."""
        if self.web is not None:
            os.killpg(self.web.pid, signal.SIGKILL)
            self.web.wait(10)

    def start_workers(self) -> None:
        with self.lock:
            for name, *how in WORKERS:
                self.workers[name] = start_worker(sys.executable, self.env, name, *how, log=self.logs)
        time.sleep(6)  # ready: connected to the broker, recovery loop started

    def kill_workers(self) -> None:
        with self.lock:
            for proc in self.workers.values():
                if proc.poll() is None:
                    os.killpg(proc.pid, signal.SIGKILL)
                    proc.wait(10)
            self.workers.clear()

    def supervise(self) -> None:
        """As run_embedded.py and compose's restart policy do: a worker that exits is started again."""
        while not self.stopping.wait(1.0):
            with self.lock:
                for name in restart_dead(sys.executable, self.env, self.workers, log=self.logs):
                    self.restarts.append(name)

    def query(self, sql: str, *args):
        with sqlite3.connect(self.db, timeout=30) as conn:
            return conn.execute(sql, args).fetchall()

    def close(self) -> None:
        self.stopping.set()
        for proc in [*self.workers.values(), self.web]:
            if proc is not None and proc.poll() is None:
                os.killpg(proc.pid, signal.SIGTERM)
                try:
                    proc.wait(15)
                except subprocess.TimeoutExpired:
                    os.killpg(proc.pid, signal.SIGKILL)
        self.redis.close()
        self.logs.close()
